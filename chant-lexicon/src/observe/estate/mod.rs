//! Beyond the declared estate: the optional readers that answer what `describe_resources`
//! structurally cannot, because each resolves outward from what was declared.
//!
//! Each reader is a hook of [`Lexicon`](super::Lexicon) with a default that answers
//! [`EstateError::NotImplemented`], so a lexicon implementing none behaves exactly as before.
//! Every one keeps the tri-state honesty of the observation contract: "I could not look" is
//! never "it is not there".
//!
//! - [`dependency`]: what the estate references and does not declare, each resource carrying the
//!   declared nodes that pulled it in (`referencedBy`; a dependency with no referrer is refused
//!   by [`check_dependencies`]); an unreadable one is a hole with a reason.
//! - [`ambient`]: resources of the kinds the project declares that nothing declares and nothing
//!   references (`ambient: true`), with the kinds answered without a scan.
//! - [`teardown`]: the would-delete set, read-only, and its holes; a lexicon without the hook is
//!   planned from `describe_resources` filtered on its ownership marker ([`teardown_plan`]).
//! - [`stack`]: one deploy unit by its deployed name: present (and healthy), absent, or unknown.
//! - [`artifact`]: runtime state no declaration anchors, diffed two-way against the last
//!   snapshot (added, removed, changed, unchanged), never a create or a delete.

pub mod ambient;
pub mod artifact;
pub mod dependency;
pub mod stack;
pub mod teardown;

use std::fmt;

pub use ambient::{Ambient, AmbientResource, ambient_of};
pub use artifact::{Artifact, ArtifactDiff, ArtifactListing, diff_artifacts};
pub use dependency::{Dependencies, Dependency, DependencyHole, check_dependencies, dependencies_of};
pub use stack::{StackStatus, UnitStatus, stack_status};
pub use teardown::{PlanSource, TeardownCandidate, TeardownHole, TeardownPlan, teardown_plan};

/// A reader past describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EstateHook {
    /// [`Lexicon::observe_dependencies`](super::Lexicon::observe_dependencies).
    Dependencies,
    /// [`Lexicon::observe_ambient`](super::Lexicon::observe_ambient).
    Ambient,
    /// [`Lexicon::teardown_owned`](super::Lexicon::teardown_owned).
    TeardownOwned,
    /// [`Lexicon::describe_stack_status`](super::Lexicon::describe_stack_status).
    StackStatus,
    /// [`Lexicon::list_artifacts`](super::Lexicon::list_artifacts).
    Artifacts,
}

impl EstateHook {
    /// Returns the hook's name as the seed spells it (`observeDependencies`).
    pub fn as_str(self) -> &'static str {
        match self {
            EstateHook::Dependencies => "observeDependencies",
            EstateHook::Ambient => "observeAmbient",
            EstateHook::TeardownOwned => "teardownOwned",
            EstateHook::StackStatus => "describeStackStatus",
            EstateHook::Artifacts => "listArtifacts",
        }
    }
}

impl EstateHook {
    /// What the reader reads, in a user's words (`its dependencies`), for messages.
    pub fn what(self) -> &'static str {
        match self {
            EstateHook::Dependencies => "its dependencies",
            EstateHook::Ambient => "its ambient resources",
            EstateHook::TeardownOwned => "what it owns",
            EstateHook::StackStatus => "its stack status",
            EstateHook::Artifacts => "its artifacts",
        }
    }
}

impl fmt::Display for EstateHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of a reader past describe. Returned by the estate hooks of
/// [`Lexicon`](super::Lexicon) and by [`check_dependencies`].
#[derive(Debug, thiserror::Error)]
pub enum EstateError {
    /// The lexicon does not implement the reader (the default of every estate hook).
    #[error("lexicon {lexicon} does not implement {hook}")]
    NotImplemented {
        /// The lexicon's name.
        lexicon: String,
        /// The reader.
        hook: EstateHook,
    },
    /// The reader ran and failed as a whole (nothing it was asked could be read).
    #[error("{lexicon} could not read {}", hook.what())]
    Failed {
        /// The lexicon's name.
        lexicon: String,
        /// The reader.
        hook: EstateHook,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A dependency names no declared node that pulled it in: unbounded discovery, refused.
    #[error(
        "lexicon {lexicon} returned dependency {resource} with no referrer among the declared entities{}",
        if named.is_empty() { String::new() } else { format!(" (it names {})", named.join(", ")) }
    )]
    NoReferrer {
        /// The lexicon's name.
        lexicon: String,
        /// The dependency.
        resource: String,
        /// The referrers it named that are not declared.
        named: Vec<String>,
    },
}

impl EstateError {
    /// Creates the answer of a reader the lexicon does not implement.
    pub fn not_implemented(lexicon: impl Into<String>, hook: EstateHook) -> Self {
        EstateError::NotImplemented { lexicon: lexicon.into(), hook }
    }

    /// Creates the error of a reader that ran and failed.
    pub fn failed(
        lexicon: impl Into<String>,
        hook: EstateHook,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        EstateError::Failed { lexicon: lexicon.into(), hook, source: source.into() }
    }

    /// Returns true for [`EstateError::NotImplemented`].
    pub fn is_not_implemented(&self) -> bool {
        matches!(self, EstateError::NotImplemented { .. })
    }

    /// Returns the message with every cause appended, as one line (`a: b: c`).
    pub fn chain(&self) -> String {
        chant_store::error::chain(self)
    }
}

/// What one reader answered, as the core reports it: not implemented, read (already checked), or
/// failed with the reason in one line. Serialises as `null`, the reading, or `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading<T> {
    /// The lexicon does not implement the reader.
    NotImplemented,
    /// The reader answered.
    Read(T),
    /// The reader failed; nothing may be concluded from it.
    Failed(String),
}

impl<T> Reading<T> {
    /// Turns a hook's answer into a reading.
    pub fn from_result(result: Result<T, EstateError>) -> Self {
        match result {
            Ok(t) => Reading::Read(t),
            Err(e) if e.is_not_implemented() => Reading::NotImplemented,
            Err(e) => Reading::Failed(e.chain()),
        }
    }

    /// Returns the reading, if the reader answered.
    pub fn read(&self) -> Option<&T> {
        match self {
            Reading::Read(t) => Some(t),
            _ => None,
        }
    }
}

impl<T: serde::Serialize> serde::Serialize for Reading<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Reading::NotImplemented => serializer.serialize_none(),
            Reading::Read(t) => t.serialize(serializer),
            Reading::Failed(error) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("error", error)?;
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_serialise_as_null_the_value_or_an_error() {
        let not: Reading<u8> = Reading::from_result(Err(EstateError::not_implemented("x", EstateHook::Ambient)));
        assert_eq!(serde_json::to_string(&not).unwrap(), "null");
        let read: Reading<u8> = Reading::from_result(Ok(3));
        assert_eq!(serde_json::to_string(&read).unwrap(), "3");
        assert_eq!(read.read(), Some(&3));
        let failed: Reading<u8> = Reading::from_result(Err(EstateError::failed(
            "pg",
            EstateHook::Dependencies,
            std::io::Error::other("connection refused"),
        )));
        assert_eq!(
            serde_json::to_string(&failed).unwrap(),
            r#"{"error":"pg could not read its dependencies: connection refused"}"#
        );
        assert_eq!(failed.read(), None);
    }
}
