//! Count-based shards. Record `n` of a key (0-based, in ledger order) lives in shard `n / 64`,
//! stored at `<key dir>/<shard / 64>/<shard>.jsonl`, so a directory never holds more than 64
//! shards and a shard never more than 64 records. Finding the newest shard reads the key
//! directory, one bucket directory and one blob, which is why an append costs the same at the
//! millionth record as at the first. Shards are JSON lines, each ending in `\n`.

use std::borrow::Cow;

use crate::git::{EntryKind, ObjectId, Repo, TreeEntry};

use super::Error;

/// Records per shard file.
pub const RECORDS_PER_SHARD: u64 = 64;
/// Shard files per bucket directory.
pub const SHARDS_PER_BUCKET: u64 = 64;

/// The largest shard number read: past it a record's sequence number would not fit in a `u64`,
/// so such a shard is unreadable (a number only a hand edit can write).
pub(super) const MAX_SHARD: u64 = u64::MAX / RECORDS_PER_SHARD - 1;

/// The path of shard number `shard` of the key directory `dir`.
pub(super) fn shard_path(dir: &str, shard: u64) -> String {
    format!("{dir}/{}/{shard}.jsonl", shard / SHARDS_PER_BUCKET)
}

/// A shard as read from a tree.
#[derive(Debug, Clone)]
pub(super) struct Shard {
    /// Its number.
    pub number: u64,
    /// Its path on the branch.
    pub path: String,
    /// Its bytes.
    pub content: Vec<u8>,
    /// Why the shard is not where its number belongs (another bucket) or has a number past
    /// [`MAX_SHARD`]: its lines are unreadable, and it is never the base of an append.
    pub misplaced: Option<String>,
}

impl Shard {
    /// The non-empty lines, in order.
    pub(super) fn lines(&self) -> Vec<Cow<'_, str>> {
        content_lines(&self.content)
    }

    /// The sequence number of the shard's first record.
    pub(super) fn first_seq(&self) -> u64 {
        self.number.saturating_mul(RECORDS_PER_SHARD)
    }
}

/// Splits file content into its non-empty lines (a final line without `\n` counts; `\r\n` is
/// accepted). A line that is not valid UTF-8 comes back owned, with the invalid bytes replaced
/// (a valid one is borrowed): readers count it unreadable, so it never vanishes and is never
/// read as a record.
pub(super) fn content_lines(content: &[u8]) -> Vec<Cow<'_, str>> {
    content
        .split(|b| *b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .map(String::from_utf8_lossy)
        .collect()
}

/// The newest shard of key directory `dir` in root tree `root`, or `None` when the key has no
/// shard yet.
pub(super) fn newest(repo: &Repo, root: Option<ObjectId>, dir: &str) -> Result<Option<Shard>, Error> {
    let Some(root) = root else { return Ok(None) };
    let Some(dir_entry) = repo.tree_entry(root, dir)? else { return Ok(None) };
    if dir_entry.kind != EntryKind::Tree {
        return Err(Error::Layout { path: dir.to_owned(), reason: "is not a directory" });
    }
    let mut buckets = numbered(repo.tree_entries(dir_entry.id)?, EntryKind::Tree, "");
    buckets.sort_unstable_by_key(|(n, _)| std::cmp::Reverse(*n));
    for (bucket_number, bucket) in buckets {
        // Only a shard where its number belongs counts: a misplaced one never becomes the base of
        // an append (it would rewrite the real shard from a stray copy).
        let shards = numbered(repo.tree_entries(bucket.id)?, EntryKind::Blob, ".jsonl")
            .into_iter()
            .filter(|(n, _)| *n <= MAX_SHARD && n / SHARDS_PER_BUCKET == bucket_number);
        if let Some((number, entry)) = shards.max_by_key(|(n, _)| *n) {
            let content = repo.read_blob(entry.id)?;
            return Ok(Some(Shard { number, path: shard_path(dir, number), content, misplaced: None }));
        }
    }
    Ok(None)
}

/// Shard number `number` of key directory `dir`, if it exists.
pub(super) fn by_number(repo: &Repo, root: ObjectId, dir: &str, number: u64) -> Result<Option<Shard>, Error> {
    let path = shard_path(dir, number);
    match repo.tree_entry(root, &path)? {
        Some(entry) if entry.kind == EntryKind::Blob => {
            Ok(Some(Shard { number, path, content: repo.read_blob(entry.id)?, misplaced: None }))
        }
        _ => Ok(None),
    }
}

/// Every shard of key directory `dir`, oldest first; a shard outside the bucket its number
/// belongs in, or numbered past [`MAX_SHARD`], comes with the reason in
/// [`Shard::misplaced`] and its real path.
pub(super) fn all(repo: &Repo, root: Option<ObjectId>, dir: &str) -> Result<Vec<Shard>, Error> {
    let Some(root) = root else { return Ok(Vec::new()) };
    let Some(dir_entry) = repo.tree_entry(root, dir)? else { return Ok(Vec::new()) };
    if dir_entry.kind != EntryKind::Tree {
        return Err(Error::Layout { path: dir.to_owned(), reason: "is not a directory" });
    }
    let mut shards = Vec::new();
    for (bucket_number, bucket) in numbered(repo.tree_entries(dir_entry.id)?, EntryKind::Tree, "") {
        for (number, entry) in numbered(repo.tree_entries(bucket.id)?, EntryKind::Blob, ".jsonl") {
            let path = format!("{dir}/{}/{}", bucket.name, entry.name);
            let misplaced = misplacement(dir, bucket_number, number);
            shards.push(Shard { number, path, content: repo.read_blob(entry.id)?, misplaced });
        }
    }
    shards.sort_by(|a, b| a.number.cmp(&b.number).then(a.misplaced.is_some().cmp(&b.misplaced.is_some())));
    Ok(shards)
}

/// Why shard `number`, found in bucket `bucket`, is not where its number belongs.
pub(super) fn misplacement(dir: &str, bucket: u64, number: u64) -> Option<String> {
    if number > MAX_SHARD {
        Some(format!("shard number {number} is past the largest a ledger can hold ({MAX_SHARD})"))
    } else if number / SHARDS_PER_BUCKET != bucket {
        Some(format!("misplaced shard: shard {number} belongs at {}", shard_path(dir, number)))
    } else {
        None
    }
}

/// Calls `visit` with every shard of key directory `dir` numbered `from` or later, bucket by
/// bucket and oldest first within each, reading one shard at a time (memory does not grow with
/// the key's history). A misplaced shard comes in the bucket it was found in, marked as such.
/// `visit` returns `Break` to stop early.
pub(super) fn for_each(
    repo: &Repo,
    root: Option<ObjectId>,
    dir: &str,
    from: u64,
    visit: &mut dyn FnMut(Shard) -> Result<std::ops::ControlFlow<()>, Error>,
) -> Result<(), Error> {
    let Some(root) = root else { return Ok(()) };
    let Some(dir_entry) = repo.tree_entry(root, dir)? else { return Ok(()) };
    if dir_entry.kind != EntryKind::Tree {
        return Err(Error::Layout { path: dir.to_owned(), reason: "is not a directory" });
    }
    let mut buckets = numbered(repo.tree_entries(dir_entry.id)?, EntryKind::Tree, "");
    buckets.sort_unstable_by_key(|(n, _)| *n);
    for (bucket_number, bucket) in buckets {
        if bucket_number.saturating_add(1).saturating_mul(SHARDS_PER_BUCKET) <= from {
            continue;
        }
        let mut shards = numbered(repo.tree_entries(bucket.id)?, EntryKind::Blob, ".jsonl");
        shards.sort_unstable_by_key(|(n, _)| *n);
        for (number, entry) in shards.into_iter().filter(|(n, _)| *n >= from) {
            let path = format!("{dir}/{}/{}", bucket.name, entry.name);
            let misplaced = misplacement(dir, bucket_number, number);
            let shard = Shard { number, path, content: repo.read_blob(entry.id)?, misplaced };
            if visit(shard)?.is_break() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Calls `visit` with every shard of key directory `dir`, newest first: buckets from the highest
/// number down, and within each bucket its shards from the highest down, reading one shard at a
/// time, so a reader that wants only the newest records reads only the newest shards. A misplaced
/// shard comes in the bucket it was found in, marked as such. `visit` returns `Break` to stop.
pub(super) fn for_each_newest(
    repo: &Repo,
    root: Option<ObjectId>,
    dir: &str,
    visit: &mut dyn FnMut(Shard) -> Result<std::ops::ControlFlow<()>, Error>,
) -> Result<std::ops::ControlFlow<()>, Error> {
    use std::ops::ControlFlow;
    let Some(root) = root else { return Ok(ControlFlow::Continue(())) };
    let Some(dir_entry) = repo.tree_entry(root, dir)? else { return Ok(ControlFlow::Continue(())) };
    if dir_entry.kind != EntryKind::Tree {
        return Err(Error::Layout { path: dir.to_owned(), reason: "is not a directory" });
    }
    let mut buckets = numbered(repo.tree_entries(dir_entry.id)?, EntryKind::Tree, "");
    buckets.sort_unstable_by_key(|(n, _)| std::cmp::Reverse(*n));
    for (bucket_number, bucket) in buckets {
        let mut shards = numbered(repo.tree_entries(bucket.id)?, EntryKind::Blob, ".jsonl");
        shards.sort_unstable_by_key(|(n, _)| std::cmp::Reverse(*n));
        for (number, entry) in shards {
            let path = format!("{dir}/{}/{}", bucket.name, entry.name);
            let misplaced = misplacement(dir, bucket_number, number);
            let shard = Shard { number, path, content: repo.read_blob(entry.id)?, misplaced };
            if visit(shard)?.is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// Where the next record of a key goes, given its newest shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Slot {
    /// The shard number.
    pub shard: u64,
    /// The record's sequence number within the key.
    pub seq: u64,
    /// The shard's content before the record.
    pub before: Vec<u8>,
}

/// The slot after `newest`: its next line, or the first line of the next shard when it is full.
pub(super) fn next_slot(newest: Option<Shard>) -> Slot {
    match newest {
        None => Slot { shard: 0, seq: 0, before: Vec::new() },
        Some(shard) => {
            let count = shard.lines().len() as u64;
            if count >= RECORDS_PER_SHARD {
                let next = shard.number.saturating_add(1);
                Slot { shard: next, seq: next.saturating_mul(RECORDS_PER_SHARD), before: Vec::new() }
            } else {
                Slot { shard: shard.number, seq: shard.first_seq().saturating_add(count), before: shard.content }
            }
        }
    }
}

/// `before` with `line` appended as a full line.
pub(super) fn with_line(mut before: Vec<u8>, line: &str) -> Vec<u8> {
    if before.last().is_some_and(|b| *b != b'\n') {
        before.push(b'\n');
    }
    before.extend_from_slice(line.as_bytes());
    before.push(b'\n');
    before
}

pub(super) fn numbered(entries: Vec<TreeEntry>, kind: EntryKind, suffix: &str) -> Vec<(u64, TreeEntry)> {
    entries
        .into_iter()
        .filter(|entry| entry.kind == kind)
        .filter_map(|entry| {
            let digits = entry.name.strip_suffix(suffix)?;
            let canonical = !digits.is_empty() && (digits == "0" || !digits.starts_with('0'));
            let number = digits.parse::<u64>().ok().filter(|_| canonical)?;
            Some((number, entry))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fan_out_by_64() {
        assert_eq!(shard_path("s/op/converge", 0), "s/op/converge/0/0.jsonl");
        assert_eq!(shard_path("s/op/converge", 63), "s/op/converge/0/63.jsonl");
        assert_eq!(shard_path("s/op/converge", 64), "s/op/converge/1/64.jsonl");
        assert_eq!(shard_path("s/op/converge", 15_625), "s/op/converge/244/15625.jsonl");
    }

    #[test]
    fn lines_ignore_blank_and_accept_a_missing_final_newline() {
        assert_eq!(content_lines(b"{}\n\n{\"a\":1}\r\n{}"), vec!["{}", "{\"a\":1}", "{}"]);
        assert!(content_lines(b"").is_empty());
        assert_eq!(content_lines(b"\xff\xfe\n\xff"), vec!["\u{FFFD}\u{FFFD}", "\u{FFFD}"]);
    }

    #[test]
    fn slots_fill_a_shard_then_open_the_next() {
        assert_eq!(next_slot(None), Slot { shard: 0, seq: 0, before: Vec::new() });
        let partial = Shard { number: 2, path: String::new(), content: b"{}\n{}\n".to_vec(), misplaced: None };
        assert_eq!(next_slot(Some(partial)).seq, 130);
        let full = Shard { number: 2, path: String::new(), content: "{}\n".repeat(64).into_bytes(), misplaced: None };
        assert_eq!(next_slot(Some(full)), Slot { shard: 3, seq: 192, before: Vec::new() });
    }

    #[test]
    fn appended_lines_always_end_in_newline() {
        assert_eq!(with_line(Vec::new(), "{}"), b"{}\n");
        assert_eq!(with_line(b"{}".to_vec(), "{}"), b"{}\n{}\n");
        assert_eq!(with_line(b"{}\n".to_vec(), "{}"), b"{}\n{}\n");
    }
}
