//! Typed records: what a line on the ledger is to the code that writes and reads it.
//!
//! A record type says once where it goes and how it is written: [`Record::KIND`] and
//! [`Record::shard_key`] name its key, [`Record::ENCODING`] its bytes (canonical JSON, keys in
//! byte order, unless the type's lines were always written in declared field order).
//! [`encode`] is the one place a record becomes a line. Reading decodes every line of a key
//! into the type; a line that is JSON but not a record of that type is counted as unreadable
//! (reason `not a <name> record: ...`), like a line that is not JSON at all, and never dropped
//! silently. The stored JSON is kept beside the typed value for the views that show a record as
//! it was written (`operator log`).

use std::ops::ControlFlow;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::git::ObjectId;

use super::key::{RecordKind, ShardKey};
use super::read::{Mismatch, Unreadable, Visit};
use super::{Error, Ledger};

/// How a record type's lines are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Canonical JSON ([`crate::canonical`]): keys in byte order, no whitespace.
    Canonical,
    /// Compact JSON in the type's declared field order, for record types whose lines were
    /// always written that way (the lexicons' apply records), so their bytes stay as they were.
    Declared,
}

/// A kind of record the ledger holds.
pub trait Record: Serialize + DeserializeOwned {
    /// The kind of key it is appended under.
    const KIND: RecordKind;
    /// Its name in messages (`tick`, `run`, `gate fact`, `apply`).
    const NAME: &'static str;
    /// How its lines are encoded.
    const ENCODING: Encoding = Encoding::Canonical;
    /// The keys a stored line must carry as non-blank strings to be a record of this type; a
    /// line without them (`{}`) is unreadable, never a record of defaults.
    const REQUIRED: &'static [&'static str] = &[];

    /// Returns the key this record is appended under, in workspace member `member`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidName`] when a name in the record cannot be part of a ledger path.
    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, Error>;
}

/// Encodes `record` as the one line it is stored as.
///
/// # Errors
///
/// [`Error::Encode`] when the record cannot be represented as JSON.
pub fn encode<R: Record>(record: &R) -> Result<String, Error> {
    match R::ENCODING {
        Encoding::Canonical => Ok(crate::canonical::to_string(record)?),
        Encoding::Declared => serde_json::to_string(record).map_err(|e| Error::Encode(e.into())),
    }
}

/// One record as read: the typed value and where it was stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<R> {
    /// The record.
    pub record: R,
    /// The record as stored, a JSON object (a view that shows records as written uses this).
    pub value: serde_json::Value,
    /// The file it was read from.
    pub path: String,
    /// Its 1-based line number in that file.
    pub line: usize,
    /// Its sequence number within the key (`None` for the original's single files).
    pub seq: Option<u64>,
}

/// Every record of a key, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed<R> {
    /// The records, oldest first.
    pub records: Vec<Stored<R>>,
    /// Every line that is not a record of this type, in the order met.
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

/// The newest record of a key, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedLatest<R> {
    /// The newest line that is a record of this type, if any.
    pub record: Option<Stored<R>>,
    /// The lines newer than it that are not.
    pub unreadable: Vec<Unreadable>,
    /// The branch commit read, `None` when the branch does not exist.
    pub tip: Option<ObjectId>,
}

/// Decodes one stored JSON object as `R`.
pub(super) fn decode<R: Record>(value: &serde_json::Value) -> Result<R, Mismatch> {
    for key in R::REQUIRED {
        if value.get(key).and_then(serde_json::Value::as_str).is_none_or(|s| s.trim().is_empty()) {
            let source = <serde_json::Error as serde::de::Error>::custom(format!("no `{key}`"));
            return Err(Mismatch { record: R::NAME, source });
        }
    }
    R::deserialize(value).map_err(|source| Mismatch { record: R::NAME, source })
}

impl Ledger {
    /// Appends `record` under its own key in workspace member `member`, encoded as its type
    /// says, and pushes when a remote is configured (see [`Ledger::append`]).
    ///
    /// # Errors
    ///
    /// As [`Ledger::append`], and [`Error::Encode`] / [`Error::InvalidName`] for the record.
    pub fn append_record<R: Record>(&self, member: Option<&str>, record: &R) -> Result<super::AppendReceipt, Error> {
        let key = record.shard_key(member)?;
        self.append(&key, &encode(record)?)
    }

    /// Appends `record` as [`Ledger::append_record`] does, keeping it for the next write that
    /// succeeds when the ledger cannot be written now (see [`Ledger::append_or_keep`]): for the
    /// records of what already happened (a tick that dispatched, a run, an apply).
    ///
    /// # Errors
    ///
    /// As [`Ledger::append_or_keep`].
    pub fn append_record_or_keep<R: Record>(
        &self,
        member: Option<&str>,
        record: &R,
    ) -> Result<super::AppendReceipt, Error> {
        let key = record.shard_key(member)?;
        self.append_or_keep(&key, &encode(record)?)
    }

    /// Every record of `key`, oldest first, decoded as `R`.
    ///
    /// # Errors
    ///
    /// Storage errors, and [`Error::WrongKind`] when `key` holds another kind of record.
    pub fn read_typed<R: Record>(&self, key: &ShardKey) -> Result<Typed<R>, Error> {
        check_kind::<R>(key)?;
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        super::read::all(&repo, tip, root, key, &decode::<R>)
    }

    /// The newest record of `key` that decodes as `R`.
    ///
    /// # Errors
    ///
    /// As [`Ledger::read_typed`].
    pub fn latest_typed<R: Record>(&self, key: &ShardKey) -> Result<TypedLatest<R>, Error> {
        check_kind::<R>(key)?;
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        super::read::latest(&repo, tip, root, key, &decode::<R>)
    }
}

impl Ledger {
    /// Streams the records of `key` decoded as `R`, oldest first, one shard at a time, so memory
    /// does not grow with history: with `from` `None` every record (the original's file first),
    /// else those with sequence number `from` or later. Unreadable lines are handed over too.
    /// `visit` returns `Break` to stop early. Returns the branch commit read.
    ///
    /// # Errors
    ///
    /// As [`Ledger::read_typed`].
    pub fn stream_typed<R: Record>(
        &self,
        key: &ShardKey,
        from: Option<u64>,
        mut visit: impl FnMut(Visit<R>) -> ControlFlow<()>,
    ) -> Result<Option<ObjectId>, Error> {
        check_kind::<R>(key)?;
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        super::read::stream(&repo, root, key, from, &decode::<R>, &mut visit)?;
        Ok(tip)
    }

    /// Streams the records of `key` decoded as `R`, newest first (the newest shard from its last
    /// line up, then older shards, the original's file last), one shard at a time: a reader that
    /// wants the newest few records reads only the shards that hold them. Unreadable lines are
    /// handed over too. `visit` returns `Break` to stop; nothing older is read then. Returns the
    /// branch commit read.
    ///
    /// # Errors
    ///
    /// As [`Ledger::read_typed`].
    pub fn stream_newest_typed<R: Record>(
        &self,
        key: &ShardKey,
        mut visit: impl FnMut(Visit<R>) -> ControlFlow<()>,
    ) -> Result<Option<ObjectId>, Error> {
        check_kind::<R>(key)?;
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        super::read::stream_newest(&repo, root, key, &decode::<R>, &mut visit)?;
        Ok(tip)
    }

    /// Returns how many lines chant's own shards of `key` hold (the original's file not
    /// counted): the sequence number of the key's next record. Reads one shard.
    ///
    /// # Errors
    ///
    /// Storage errors.
    pub fn sharded_len(&self, key: &ShardKey) -> Result<u64, Error> {
        let repo = self.repo.local();
        let (_, root) = self.snapshot(&repo)?;
        super::read::sharded_len(&repo, root, key)
    }
}

fn check_kind<R: Record>(key: &ShardKey) -> Result<(), Error> {
    if key.kind() == R::KIND { Ok(()) } else { Err(Error::WrongKind { key: key.label(), record: R::NAME }) }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Note {
        zeta: u32,
        alpha: String,
    }

    impl Record for Note {
        const KIND: RecordKind = RecordKind::Run;
        const NAME: &'static str = "note";
        fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, Error> {
            ShardKey::run(member, Some("staging"), &self.alpha)
        }
    }

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Declared {
        zeta: u32,
        alpha: String,
    }

    impl Record for Declared {
        const KIND: RecordKind = RecordKind::Apply;
        const NAME: &'static str = "declared";
        const ENCODING: Encoding = Encoding::Declared;
        fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, Error> {
            ShardKey::apply(member, "staging", "files")
        }
    }

    #[test]
    fn canonical_records_sort_their_keys_and_declared_ones_keep_their_order() {
        assert_eq!(encode(&Note { zeta: 1, alpha: "op".into() }).unwrap(), r#"{"alpha":"op","zeta":1}"#);
        assert_eq!(encode(&Declared { zeta: 1, alpha: "op".into() }).unwrap(), r#"{"zeta":1,"alpha":"op"}"#);
        let key = Note { zeta: 1, alpha: "op".into() }.shard_key(Some("web")).unwrap();
        assert_eq!(key.dir(), "_members/web/staging/op/runs");
    }

    #[test]
    fn a_json_object_of_another_shape_is_an_unreadable_line_naming_the_type() {
        let ok: Note = decode(&serde_json::json!({"zeta": 2, "alpha": "a"})).unwrap();
        assert_eq!(ok, Note { zeta: 2, alpha: "a".into() });
        let reason = decode::<Note>(&serde_json::json!({"zeta": "two"})).unwrap_err().to_string();
        assert!(reason.starts_with("not a note record: "), "{reason}");
    }
}
