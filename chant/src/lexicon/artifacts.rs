//! Artifact snapshots on the ledger: what an env's lexicon listed as artifacts when
//! `lifecycle diff <env> --live --snapshot-artifacts` last took one, the "before" of the next
//! two-way diff.
//!
//! A snapshot is a typed record of its own ([`ArtifactSnapshot`]) under the env's apply
//! directory of a component named `<lexicon>-artifacts` (`<env>/_apply/files-artifacts/`), so
//! older chant, which reads apply records per component by name, never meets it; the newest
//! record is the snapshot. A newest line that does not parse is reported with its path and line
//! ([`SnapshotError::Unreadable`]), never read as "no snapshot".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ledger::{self, Ledger, Record, RecordKind, ShardKey};
use crate::observe::estate::{Artifact, ArtifactListing};

/// The version of the snapshot record written.
pub const SNAPSHOT_VERSION: u32 = 1;

/// One artifact snapshot of one lexicon in one env.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactSnapshot {
    /// The record's version.
    pub version: u32,
    /// The kind of record (`artifact-snapshot`), which tells it from any other line.
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

/// The record's `kind` value.
const KIND: &str = "artifact-snapshot";

impl Record for ArtifactSnapshot {
    const KIND: RecordKind = RecordKind::Apply;
    const NAME: &'static str = "artifact snapshot";
    const REQUIRED: &'static [&'static str] = &["kind", "env", "lexicon"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        snapshot_key(member, &self.env, &self.lexicon)
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
}

/// Returns the key of `lexicon`'s artifact snapshots in `env`.
///
/// # Errors
///
/// [`ledger::Error::InvalidName`] when a name cannot be part of a ledger path.
pub fn snapshot_key(member: Option<&str>, env: &str, lexicon: &str) -> Result<ShardKey, ledger::Error> {
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
    /// The newest snapshot line does not parse: it is reported, never read as empty.
    #[error(
        "the artifact snapshot at {path}:{line} on the ledger does not parse ({reason}); take a new one with `lifecycle diff <env> --live --snapshot-artifacts`"
    )]
    Unreadable {
        /// The file on the ledger branch.
        path: String,
        /// Its 1-based line.
        line: usize,
        /// Why it does not parse.
        reason: String,
    },
}

/// Reads the newest artifact snapshot of `lexicon` in `env`; `None` when none was ever taken.
///
/// # Errors
///
/// [`SnapshotError::Unreadable`] when a line newer than the newest readable snapshot does not
/// parse; [`SnapshotError::Ledger`] when the ledger cannot be read.
pub fn last_snapshot(
    ledger: &Ledger,
    member: Option<&str>,
    env: &str,
    lexicon: &str,
) -> Result<Option<ArtifactSnapshot>, SnapshotError> {
    let wrap = |source| SnapshotError::Ledger { env: env.to_owned(), lexicon: lexicon.to_owned(), source };
    let key = snapshot_key(member, env, lexicon).map_err(wrap)?;
    let latest = ledger.latest_typed::<ArtifactSnapshot>(&key).map_err(wrap)?;
    if let Some(bad) = latest.unreadable.into_iter().next() {
        return Err(SnapshotError::Unreadable { path: bad.path, line: bad.line, reason: bad.reason });
    }
    Ok(latest.record.map(|stored| stored.record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_goes_under_its_own_component_and_round_trips() {
        let mut listing = ArtifactListing::default();
        listing.artifacts.insert("build/app.tar".into(), Artifact { digest: "sha1:ab".into(), size: 3 });
        let snapshot = ArtifactSnapshot::new("staging", "files", "2026-01-01T00:00:00.000Z".into(), listing.clone());
        assert_eq!(snapshot.shard_key(None).unwrap().dir(), "staging/_apply/files-artifacts");
        let line = ledger::encode(&snapshot).unwrap();
        let back: ArtifactSnapshot = serde_json::from_str(&line).unwrap();
        assert_eq!(back.listing(), listing);
    }
}
