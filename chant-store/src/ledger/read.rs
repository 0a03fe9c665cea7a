//! Reading records back. All records of a key come in ledger order, oldest first: the
//! original's single file first (read as history), then every shard in sequence. Because every
//! append is one commit on the tip of the branch and lands on the newest shard of its key, this
//! order is the commit order on the branch, which is what gate resolution relies on. A line that
//! is not a JSON object, or not a record of the type asked for, is returned as [`Unreadable`],
//! never dropped.

use std::borrow::Cow;
use std::ops::ControlFlow;

use crate::git::{EntryKind, ObjectId, Repo};

use super::key::{RecordKind, ShardKey};
use super::record::{Stored, Typed, TypedLatest};
use super::{Error, shard};

/// Longest excerpt of an unreadable line kept in [`Unreadable::text`], in characters.
const EXCERPT_CHARS: usize = 300;

/// One readable record, as stored: a JSON object of any shape.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRecord {
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

/// All records of a key, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    /// The readable records, oldest first.
    pub records: Vec<RawRecord>,
    /// Every unreadable line, in the order met.
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

/// The newest record of a key, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latest {
    /// The newest readable record, if any.
    pub record: Option<RawRecord>,
    /// Unreadable lines met while looking for it (those newer than it).
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

impl From<Typed<()>> for Records {
    fn from(typed: Typed<()>) -> Self {
        Records { records: typed.records.into_iter().map(raw).collect(), unreadable: typed.unreadable, tip: typed.tip }
    }
}

impl From<TypedLatest<()>> for Latest {
    fn from(typed: TypedLatest<()>) -> Self {
        Latest { record: typed.record.map(raw), unreadable: typed.unreadable, tip: typed.tip }
    }
}

fn raw(stored: Stored<()>) -> RawRecord {
    RawRecord { value: stored.value, path: stored.path, line: stored.line, seq: stored.seq }
}

/// Decodes a stored JSON object into a reader's type.
pub(super) type Decode<'a, T> = &'a dyn Fn(&serde_json::Value) -> Result<T, Mismatch>;

/// A JSON object that is not a record of the type a reader asked for; its text is the
/// unreadable line's reason.
#[derive(Debug, thiserror::Error)]
#[error("not a {record} record: {source}")]
pub(super) struct Mismatch {
    /// The record type's name.
    pub(super) record: &'static str,
    /// What serde found.
    pub(super) source: serde_json::Error,
}

/// Keeps every JSON object as it is (the untyped reads).
pub(super) fn any(_: &serde_json::Value) -> Result<(), Mismatch> {
    Ok(())
}

pub(super) enum Line<T> {
    Record(T, serde_json::Value),
    Unreadable(String),
    OtherOp,
}

/// Reads every record of `key` at root tree `root`.
pub(super) fn all<T>(
    repo: &Repo,
    tip: Option<ObjectId>,
    root: Option<ObjectId>,
    key: &ShardKey,
    decode: Decode<'_, T>,
) -> Result<Typed<T>, Error> {
    let mut out = Typed { records: Vec::new(), unreadable: Vec::new(), tip };
    if let (Some(root), Some(path)) = (root, key.legacy_path())
        && let Some(content) = legacy_content(repo, root, &path)?
    {
        for (index, text) in shard::content_lines(&content).into_iter().enumerate() {
            push(&mut out, classify(key, &text, true, decode), &path, index, &text, None);
        }
    }
    for shard in shard::all(repo, root, &key.dir())? {
        for (index, text) in shard.lines().into_iter().enumerate() {
            if let Some(reason) = &shard.misplaced {
                out.unreadable.push(unreadable(&shard.path, index, &text, reason.clone()));
                continue;
            }
            let seq = shard.first_seq().saturating_add(index as u64);
            push(&mut out, classify(key, &text, false, decode), &shard.path, index, &text, Some(seq));
        }
    }
    Ok(out)
}

pub(super) fn push<T>(out: &mut Typed<T>, line: Line<T>, path: &str, index: usize, text: &str, seq: Option<u64>) {
    match line {
        Line::Record(record, value) => {
            out.records.push(Stored { record, value, path: path.to_owned(), line: index + 1, seq });
        }
        Line::Unreadable(reason) => out.unreadable.push(unreadable(path, index, text, reason)),
        Line::OtherOp => {}
    }
}

/// One line of a streaming read: a record of the type asked for, or an unreadable line.
#[derive(Debug, Clone, PartialEq)]
pub enum Visit<T> {
    /// A record.
    Record(Stored<T>),
    /// A line that is not one.
    Unreadable(Unreadable),
}

/// Streams the records of `key` at root tree `root`, oldest first, one shard at a time: the
/// original's file first when `from` is `None`, else only records with sequence number `from`
/// or later. `visit` returns `Break` to stop.
pub(super) fn stream<T>(
    repo: &Repo,
    root: Option<ObjectId>,
    key: &ShardKey,
    from: Option<u64>,
    decode: Decode<'_, T>,
    visit: &mut dyn FnMut(Visit<T>) -> ControlFlow<()>,
) -> Result<(), Error> {
    let one = |line: Line<T>, path: &str, index: usize, text: &str, seq: Option<u64>| match line {
        Line::Record(record, value) => {
            Some(Visit::Record(Stored { record, value, path: path.to_owned(), line: index + 1, seq }))
        }
        Line::Unreadable(reason) => Some(Visit::Unreadable(unreadable(path, index, text, reason))),
        Line::OtherOp => None,
    };
    if from.is_none()
        && let (Some(root), Some(path)) = (root, key.legacy_path())
        && let Some(content) = legacy_content(repo, root, &path)?
    {
        for (index, text) in shard::content_lines(&content).into_iter().enumerate() {
            if let Some(item) = one(classify(key, &text, true, decode), &path, index, &text, None)
                && visit(item).is_break()
            {
                return Ok(());
            }
        }
    }
    let from = from.unwrap_or(0);
    shard::for_each(repo, root, &key.dir(), from / shard::RECORDS_PER_SHARD, &mut |shard| {
        for (index, text) in shard.lines().into_iter().enumerate() {
            if let Some(reason) = &shard.misplaced {
                if visit(Visit::Unreadable(unreadable(&shard.path, index, &text, reason.clone()))).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
                continue;
            }
            let seq = shard.first_seq().saturating_add(index as u64);
            if seq < from {
                continue;
            }
            if let Some(item) = one(classify(key, &text, false, decode), &shard.path, index, &text, Some(seq))
                && visit(item).is_break()
            {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })
}

/// Streams the records of `key` at root tree `root`, newest first: the newest shard's lines
/// from the last up, then the shard before it, and so on, and the original's file (from its
/// last line up) after every shard. `visit` returns `Break` to stop; nothing older is read then.
pub(super) fn stream_newest<T>(
    repo: &Repo,
    root: Option<ObjectId>,
    key: &ShardKey,
    decode: Decode<'_, T>,
    visit: &mut dyn FnMut(Visit<T>) -> ControlFlow<()>,
) -> Result<(), Error> {
    let one = |line: Line<T>, path: &str, index: usize, text: &str, seq: Option<u64>| match line {
        Line::Record(record, value) => {
            Some(Visit::Record(Stored { record, value, path: path.to_owned(), line: index + 1, seq }))
        }
        Line::Unreadable(reason) => Some(Visit::Unreadable(unreadable(path, index, text, reason))),
        Line::OtherOp => None,
    };
    let flow = shard::for_each_newest(repo, root, &key.dir(), &mut |shard| {
        for (index, text) in shard.lines().iter().enumerate().rev() {
            let item = match &shard.misplaced {
                Some(reason) => Some(Visit::Unreadable(unreadable(&shard.path, index, text, reason.clone()))),
                None => {
                    let seq = shard.first_seq().saturating_add(index as u64);
                    one(classify(key, text, false, decode), &shard.path, index, text, Some(seq))
                }
            };
            if let Some(item) = item
                && visit(item).is_break()
            {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if flow.is_break() {
        return Ok(());
    }
    if let (Some(root), Some(path)) = (root, key.legacy_path())
        && let Some(content) = legacy_content(repo, root, &path)?
    {
        for (index, text) in shard::content_lines(&content).iter().enumerate().rev() {
            if let Some(item) = one(classify(key, text, true, decode), &path, index, text, None)
                && visit(item).is_break()
            {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Returns how many lines the shards of `key` hold: the sequence number its next record gets.
pub(super) fn sharded_len(repo: &Repo, root: Option<ObjectId>, key: &ShardKey) -> Result<u64, Error> {
    Ok(shard::next_slot(shard::newest(repo, root, &key.dir())?).seq)
}

/// Reads the newest record of `key`: normally one shard; older shards and the original's file
/// only while everything newer is unreadable.
pub(super) fn latest<T>(
    repo: &Repo,
    tip: Option<ObjectId>,
    root: Option<ObjectId>,
    key: &ShardKey,
    decode: Decode<'_, T>,
) -> Result<TypedLatest<T>, Error> {
    let mut out = TypedLatest { record: None, unreadable: Vec::new(), tip };
    let dir = key.dir();
    let mut current = shard::newest(repo, root, &dir)?;
    while let Some(shard) = current {
        let lines = shard.lines();
        for (index, text) in lines.iter().enumerate().rev() {
            match classify(key, text, false, decode) {
                Line::Record(record, value) => {
                    let seq = Some(shard.first_seq().saturating_add(index as u64));
                    out.record = Some(Stored { record, value, path: shard.path.clone(), line: index + 1, seq });
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
            match classify(key, text, true, decode) {
                Line::Record(record, value) => {
                    out.record = Some(Stored { record, value, path, line: index + 1, seq: None });
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
#[expect(clippy::ptr_arg, reason = "the Cow's variant says whether the line was decoded lossily")]
pub(super) fn classify<T>(key: &ShardKey, text: &Cow<'_, str>, legacy: bool, decode: Decode<'_, T>) -> Line<T> {
    // `content_lines` borrows a valid line and owns only a lossily decoded one.
    if let Cow::Owned(_) = text {
        return Line::Unreadable("not valid UTF-8 (shown with the invalid bytes replaced)".to_owned());
    }
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
    match decode(&value) {
        Ok(record) => Line::Record(record, value),
        Err(mismatch) => Line::Unreadable(mismatch.to_string()),
    }
}

fn unreadable(path: &str, index: usize, text: &str, reason: String) -> Unreadable {
    let text: Cow<'_, str> = if text.chars().count() > EXCERPT_CHARS {
        Cow::Owned(text.chars().take(EXCERPT_CHARS).collect::<String>() + "…")
    } else {
        Cow::Borrowed(text)
    };
    Unreadable { path: path.to_owned(), line: index + 1, text: text.into_owned(), reason }
}
