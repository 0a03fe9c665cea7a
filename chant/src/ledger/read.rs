//! Reading records back. All records of a key come in ledger order, oldest first: the
//! original's single file first (read as history), then every shard in sequence. Because every
//! append is one commit on the tip of the branch and lands on the newest shard of its key, this
//! order is the commit order on the branch, which is what gate resolution relies on. A line that
//! is not a JSON object is returned as [`Unreadable`], never dropped.

use std::borrow::Cow;

use crate::git::{EntryKind, ObjectId, Repo};

use super::key::{RecordKind, ShardKey};
use super::{Error, shard};

/// Longest excerpt of an unreadable line kept in [`Unreadable::text`], in characters.
const EXCERPT_CHARS: usize = 300;

/// One readable record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The record, a JSON object.
    pub value: serde_json::Value,
    /// The file it was read from.
    pub path: String,
    /// Its 1-based line number in that file.
    pub line: usize,
    /// Its sequence number within the key (`None` for records of the original's single file,
    /// which all come before sequence number 0).
    pub seq: Option<u64>,
}

/// A line that could not be read as a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The file it was read from.
    pub path: String,
    /// Its 1-based line number in that file.
    pub line: usize,
    /// The line's start (at most 300 characters).
    pub text: String,
    /// Why it is unreadable.
    pub reason: String,
}

/// All records of a key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    /// The readable records, oldest first.
    pub records: Vec<Record>,
    /// Every unreadable line, in the order met.
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

/// The newest record of a key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latest {
    /// The newest readable record, if any.
    pub record: Option<Record>,
    /// Unreadable lines met while looking for it (those newer than it).
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

enum Line {
    Record(serde_json::Value),
    Unreadable(String),
    OtherOp,
}

/// Reads every record of `key` at root tree `root`.
pub(super) fn all(
    repo: &Repo,
    tip: Option<ObjectId>,
    root: Option<ObjectId>,
    key: &ShardKey,
) -> Result<Records, Error> {
    let mut out = Records { tip, ..Records::default() };
    if let (Some(root), Some(path)) = (root, key.legacy_path())
        && let Some(content) = legacy_content(repo, root, &path)?
    {
        for (index, text) in shard::content_lines(&content).into_iter().enumerate() {
            push(&mut out, classify(key, &text, true), &path, index, &text, None);
        }
    }
    for shard in shard::all(repo, root, &key.dir())? {
        for (index, text) in shard.lines().into_iter().enumerate() {
            let seq = shard.first_seq() + index as u64;
            push(&mut out, classify(key, &text, false), &shard.path, index, &text, Some(seq));
        }
    }
    Ok(out)
}

fn push(out: &mut Records, line: Line, path: &str, index: usize, text: &str, seq: Option<u64>) {
    match line {
        Line::Record(value) => out.records.push(Record { value, path: path.to_owned(), line: index + 1, seq }),
        Line::Unreadable(reason) => out.unreadable.push(unreadable(path, index, text, reason)),
        Line::OtherOp => {}
    }
}

/// Reads the newest record of `key`: normally one shard; older shards and the original's file
/// only while everything newer is unreadable.
pub(super) fn latest(
    repo: &Repo,
    tip: Option<ObjectId>,
    root: Option<ObjectId>,
    key: &ShardKey,
) -> Result<Latest, Error> {
    let mut out = Latest { tip, ..Latest::default() };
    let dir = key.dir();
    let mut current = shard::newest(repo, root, &dir)?;
    while let Some(shard) = current {
        let lines = shard.lines();
        for (index, text) in lines.iter().enumerate().rev() {
            match classify(key, text, false) {
                Line::Record(value) => {
                    let seq = Some(shard.first_seq() + index as u64);
                    out.record = Some(Record { value, path: shard.path.clone(), line: index + 1, seq });
                    return Ok(out);
                }
                Line::Unreadable(reason) => out.unreadable.push(unreadable(&shard.path, index, text, reason)),
                Line::OtherOp => {}
            }
        }
        current = match (shard.number.checked_sub(1), root) {
            (Some(previous), Some(root)) => shard::by_number(repo, root, &dir, previous)?,
            _ => None,
        };
    }
    if let (Some(root), Some(path)) = (root, key.legacy_path())
        && let Some(content) = legacy_content(repo, root, &path)?
    {
        for (index, text) in shard::content_lines(&content).iter().enumerate().rev() {
            match classify(key, text, true) {
                Line::Record(value) => {
                    out.record = Some(Record { value, path, line: index + 1, seq: None });
                    return Ok(out);
                }
                Line::Unreadable(reason) => out.unreadable.push(unreadable(&path, index, text, reason)),
                Line::OtherOp => {}
            }
        }
    }
    Ok(out)
}

fn legacy_content(repo: &Repo, root: ObjectId, path: &str) -> Result<Option<Vec<u8>>, Error> {
    match repo.tree_entry(root, path)? {
        Some(entry) if entry.kind == EntryKind::Blob => Ok(Some(repo.read_blob(entry.id)?)),
        _ => Ok(None),
    }
}

/// Reads one line. The original's converge file is shared by every op of its env, so there a
/// record of another op belongs to another key, and a record naming no op belongs to none.
fn classify(key: &ShardKey, text: &str, legacy: bool) -> Line {
    let value = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => value,
        Err(err) => return Line::Unreadable(format!("not JSON: {err}")),
    };
    if !value.is_object() {
        return Line::Unreadable("not a JSON object".to_owned());
    }
    if legacy && key.kind() == RecordKind::Converge {
        match value.get("op").and_then(serde_json::Value::as_str) {
            Some(op) if op == key.op() => {}
            Some(_) => return Line::OtherOp,
            None => return Line::Unreadable("no string `op` in a file shared by every op of the env".to_owned()),
        }
    }
    Line::Record(value)
}

fn unreadable(path: &str, index: usize, text: &str, reason: String) -> Unreadable {
    let text: Cow<'_, str> = if text.chars().count() > EXCERPT_CHARS {
        Cow::Owned(text.chars().take(EXCERPT_CHARS).collect::<String>() + "…")
    } else {
        Cow::Borrowed(text)
    };
    Unreadable { path: path.to_owned(), line: index + 1, text: text.into_owned(), reason }
}
