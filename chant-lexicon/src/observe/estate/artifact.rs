//! Artifacts: runtime state no declaration anchors (build outputs, uploads), listed by the
//! lexicon and diffed two-way against the last snapshot.
//!
//! There is no declared axis: [`diff_artifacts`] compares now with the last snapshot and sorts
//! every artifact into added, removed, changed or unchanged. The diff is its own section of
//! `lifecycle diff --live` and never becomes a create or a delete. With no snapshot yet, every
//! artifact is added.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One artifact, as listed: what identifies its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Artifact {
    /// The content's digest (`sha256:<hex>`).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

/// What [`Lexicon::list_artifacts`](crate::observe::Lexicon::list_artifacts) answers, and what a
/// snapshot keeps: every artifact by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactListing {
    /// The artifacts, by name.
    pub artifacts: BTreeMap<String, Artifact>,
}

/// Now against the last snapshot, by name in each category.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactDiff {
    /// Whether a snapshot existed to compare with.
    pub snapshot: bool,
    /// In the listing, not in the snapshot.
    pub added: Vec<String>,
    /// In the snapshot, not in the listing.
    pub removed: Vec<String>,
    /// In both, with another digest or size.
    pub changed: Vec<String>,
    /// In both, the same.
    pub unchanged: Vec<String>,
}

impl ArtifactDiff {
    /// Returns how many artifacts moved since the snapshot (`artifactChangedCount`: added,
    /// removed and changed).
    pub fn changed_count(&self) -> usize {
        self.added.len() + self.removed.len() + self.changed.len()
    }
}

/// Diffs the listing `now` against the last snapshot (`None`: there is none).
pub fn diff_artifacts(snapshot: Option<&ArtifactListing>, now: &ArtifactListing) -> ArtifactDiff {
    let empty = ArtifactListing::default();
    let before = snapshot.unwrap_or(&empty);
    let mut diff = ArtifactDiff { snapshot: snapshot.is_some(), ..ArtifactDiff::default() };
    for (name, artifact) in &now.artifacts {
        match before.artifacts.get(name) {
            None => diff.added.push(name.clone()),
            Some(old) if old == artifact => diff.unchanged.push(name.clone()),
            Some(_) => diff.changed.push(name.clone()),
        }
    }
    diff.removed = before.artifacts.keys().filter(|n| !now.artifacts.contains_key(*n)).cloned().collect();
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(items: &[(&str, &str)]) -> ArtifactListing {
        ArtifactListing {
            artifacts: items
                .iter()
                .map(|(n, d)| ((*n).to_owned(), Artifact { digest: (*d).to_owned(), size: 1 }))
                .collect(),
        }
    }

    #[test]
    fn four_categories_against_the_snapshot() {
        let before = listing(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let now = listing(&[("a", "1"), ("b", "9"), ("d", "4")]);
        let diff = diff_artifacts(Some(&before), &now);
        assert_eq!(diff.added, ["d"]);
        assert_eq!(diff.removed, ["c"]);
        assert_eq!(diff.changed, ["b"]);
        assert_eq!(diff.unchanged, ["a"]);
        assert_eq!(diff.changed_count(), 3);
        let first = diff_artifacts(None, &now);
        assert!(!first.snapshot);
        assert_eq!(first.added.len(), 3);
    }
}
