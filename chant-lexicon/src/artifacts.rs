//! Artifact snapshots on the ledger: what an env's lexicon listed as artifacts when
//! `lifecycle diff <env> --live --snapshot-artifacts` last took one, the "before" of the next
//! two-way diff.
//!
//! A snapshot is one JSON document per env and lexicon, `<member prefix><env>/artifacts/<lexicon>.json`
//! on the ledger branch (DESIGN.md section 15), written as its own commit and replaced whole by
//! the next ([`write_snapshot`]), the discipline of the observation baseline. Older chant kept
//! snapshots as typed records under the env's apply directory of a component named
//! `<lexicon>-artifacts` (`<env>/_apply/files-artifacts/`); those are read as history when no
//! document exists yet ([`last_snapshot`]), never rewritten. A document (or a newest legacy line)
//! that does not parse is reported with its path ([`SnapshotError::Unreadable`]), never read as
//! "no snapshot".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::observe::estate::{Artifact, ArtifactListing};
use chant_store::ledger::{self, DocumentReceipt, Ledger, Record, RecordKind, ShardKey};

/// The version of the snapshot document (and legacy record) written.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The directory of the snapshot documents under the env's directory on the ledger branch.
pub const DIR: &str = "artifacts";

/// One artifact snapshot of one lexicon in one env: the document's content (and the legacy
/// record's line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactSnapshot {
    /// The document's version ([`SNAPSHOT_VERSION`]).
    pub version: u32,
    /// The kind of document (`artifact-snapshot`), which tells it from any other.
    pub kind: String,
    /// The env.
    pub env: String,
    /// The lexicon whose artifacts these are.
    pub lexicon: String,
    /// When it was taken (RFC 3339 UTC).
    pub taken_at: String,
    /// The artifacts, by name.
    pub artifacts: BTreeMap<String, Artifact>,
}

/// The document's `kind` value.
const KIND: &str = "artifact-snapshot";

/// The legacy record: read back from older ledgers, never written by this chant.
impl Record for ArtifactSnapshot {
    const KIND: RecordKind = RecordKind::Apply;
    const NAME: &'static str = "artifact snapshot";
    const REQUIRED: &'static [&'static str] = &["kind", "env", "lexicon"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        legacy_key(member, &self.env, &self.lexicon)
    }
}

impl ArtifactSnapshot {
    /// Creates the snapshot of `listing`, taken at `taken_at`.
    pub fn new(env: &str, lexicon: &str, taken_at: String, listing: ArtifactListing) -> Self {
        ArtifactSnapshot {
            version: SNAPSHOT_VERSION,
            kind: KIND.to_owned(),
            env: env.to_owned(),
            lexicon: lexicon.to_owned(),
            taken_at,
            artifacts: listing.artifacts,
        }
    }

    /// Returns the snapshot as a listing.
    pub fn listing(&self) -> ArtifactListing {
        ArtifactListing { artifacts: self.artifacts.clone() }
    }

    /// Returns the document as written: pretty JSON with a final newline.
    pub fn to_document(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses a snapshot document read from `path` (named in the error): it must be a snapshot
    /// of version [`SNAPSHOT_VERSION`] of this env and lexicon.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Unreadable`], naming `path`.
    pub fn parse(bytes: &[u8], path: &str, env: &str, lexicon: &str) -> Result<Self, SnapshotError> {
        let unreadable =
            |line: usize, reason: String| SnapshotError::Unreadable { path: path.to_owned(), line, reason };
        let snapshot: ArtifactSnapshot =
            serde_json::from_slice(bytes).map_err(|e| unreadable(e.line(), e.to_string()))?;
        if snapshot.kind != KIND || snapshot.version != SNAPSHOT_VERSION {
            return Err(unreadable(
                1,
                format!(
                    "kind {:?} version {}, and this chant reads kind {KIND:?} version {SNAPSHOT_VERSION}",
                    snapshot.kind, snapshot.version
                ),
            ));
        }
        if snapshot.env != env || snapshot.lexicon != lexicon {
            return Err(unreadable(
                1,
                format!(
                    "it is the snapshot of {} in env {}, not of {lexicon} in env {env}",
                    snapshot.lexicon, snapshot.env
                ),
            ));
        }
        Ok(snapshot)
    }
}

/// Returns the path of `lexicon`'s snapshot document in `env` on the ledger branch:
/// `<member prefix><env>/artifacts/<lexicon>.json`.
///
/// # Errors
///
/// [`ledger::Error::InvalidName`] when a name cannot be part of a ledger path.
pub fn snapshot_path(member: Option<&str>, env: &str, lexicon: &str) -> Result<String, ledger::Error> {
    // The lexicon's name is checked as every component name is.
    legacy_key(member, env, lexicon)?;
    ledger::env_document_path(member, env, &format!("{DIR}/{lexicon}.json"))
}

/// Returns the key of the legacy snapshot records of `lexicon` in `env`
/// (`<env>/_apply/<lexicon>-artifacts`), which older chant wrote.
///
/// # Errors
///
/// [`ledger::Error::InvalidName`] when a name cannot be part of a ledger path.
pub fn legacy_key(member: Option<&str>, env: &str, lexicon: &str) -> Result<ShardKey, ledger::Error> {
    ShardKey::apply(member, env, &format!("{lexicon}-artifacts"))
}

/// Why the last snapshot could not be read. Returned by [`last_snapshot`].
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The ledger could not be read.
    #[error("cannot read the artifact snapshot of {lexicon} in env {env}")]
    Ledger {
        /// The env.
        env: String,
        /// The lexicon.
        lexicon: String,
        /// Why.
        #[source]
        source: ledger::Error,
    },
    /// The snapshot does not parse: it is reported, never read as empty.
    #[error(
        "the artifact snapshot at {path}:{line} on the ledger does not parse ({reason}); take a new one with `lifecycle diff <env> --live --snapshot-artifacts`"
    )]
    Unreadable {
        /// The document (`chant/lifecycle:<env>/artifacts/<lexicon>.json`) or legacy file.
        path: String,
        /// Its 1-based line.
        line: usize,
        /// Why it does not parse.
        reason: String,
    },
}

/// Reads the last artifact snapshot of `lexicon` in `env`: the document, or, on a ledger that has
/// none yet, the newest legacy record; `None` when none was ever taken.
///
/// # Errors
///
/// [`SnapshotError::Unreadable`] when the document does not parse (or, with no document, a
/// legacy line newer than the newest readable one does not); [`SnapshotError::Ledger`] when
/// the ledger cannot be read.
pub fn last_snapshot(
    ledger: &Ledger,
    member: Option<&str>,
    env: &str,
    lexicon: &str,
) -> Result<Option<ArtifactSnapshot>, SnapshotError> {
    let wrap = |source| SnapshotError::Ledger { env: env.to_owned(), lexicon: lexicon.to_owned(), source };
    let path = snapshot_path(member, env, lexicon).map_err(wrap)?;
    if let Some(bytes) = ledger.read_document(&path).map_err(wrap)? {
        return ArtifactSnapshot::parse(&bytes, &format!("chant/lifecycle:{path}"), env, lexicon).map(Some);
    }
    let key = legacy_key(member, env, lexicon).map_err(wrap)?;
    let latest = ledger.latest_typed::<ArtifactSnapshot>(&key).map_err(wrap)?;
    if let Some(bad) = latest.unreadable.into_iter().next() {
        return Err(SnapshotError::Unreadable { path: bad.path, line: bad.line, reason: bad.reason });
    }
    Ok(latest.record.map(|stored| stored.record))
}

/// Writes `snapshot` as its lexicon's snapshot document in its env, as its own commit,
/// replacing the previous one (legacy records are left as they are).
///
/// # Errors
///
/// An env, member or lexicon name that cannot be part of a ledger path; ledger errors.
pub fn write_snapshot(
    ledger: &Ledger,
    member: Option<&str>,
    snapshot: &ArtifactSnapshot,
) -> Result<DocumentReceipt, ledger::Error> {
    let path = snapshot_path(member, &snapshot.env, &snapshot.lexicon)?;
    let label = format!("artifact snapshot {} {}", snapshot.env, snapshot.lexicon);
    ledger.write_document(&path, snapshot.to_document().as_bytes(), &label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> (ArtifactListing, ArtifactSnapshot) {
        let mut listing = ArtifactListing::default();
        listing.artifacts.insert("build/app.tar".into(), Artifact { digest: "sha1:ab".into(), size: 3 });
        let snapshot = ArtifactSnapshot::new("staging", "files", "2026-01-01T00:00:00.000Z".into(), listing.clone());
        (listing, snapshot)
    }

    #[test]
    fn a_snapshot_is_a_document_of_its_own_and_round_trips() {
        let (listing, snapshot) = snapshot();
        assert_eq!(snapshot_path(None, "staging", "files").unwrap(), "staging/artifacts/files.json");
        assert_eq!(
            snapshot_path(Some("web"), "staging", "files").unwrap(),
            "_members/web/staging/artifacts/files.json"
        );
        assert!(snapshot_path(None, "staging", "../x").is_err());
        let text = snapshot.to_document();
        assert!(text.ends_with("}\n") && text.contains("\n  \"takenAt\""), "{text}");
        let back = ArtifactSnapshot::parse(text.as_bytes(), "p", "staging", "files").unwrap();
        assert_eq!(back.listing(), listing);
        assert_eq!(legacy_key(None, "staging", "files").unwrap().dir(), "staging/_apply/files-artifacts");
    }

    #[test]
    fn a_document_that_is_not_this_snapshot_is_reported_with_its_path() {
        let (_, snapshot) = snapshot();
        let err = ArtifactSnapshot::parse(
            b"{\n  \"version\": 1,\n  oops",
            "chant/lifecycle:s/artifacts/files.json",
            "s",
            "files",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("the artifact snapshot at chant/lifecycle:s/artifacts/files.json:3 "), "{text}");
        let other = snapshot.to_document();
        let err = ArtifactSnapshot::parse(other.as_bytes(), "p", "staging", "postgres").unwrap_err();
        assert!(err.to_string().contains("not of postgres in env staging"), "{err}");
        let newer = other.replace("\"version\": 1", "\"version\": 2");
        let err = ArtifactSnapshot::parse(newer.as_bytes(), "p", "staging", "files").unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
    }
}
