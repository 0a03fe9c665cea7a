//! Stack status: one deploy unit, by its deployed name — present (and whether healthy), absent,
//! or unknown.
//!
//! `{ "present": false }` is a genuinely absent unit; `null` (unknown) is a read that failed for
//! any other reason. The distinction matters for the same reason the observation tri-state does:
//! "I could not look" and "it is not there" support different conclusions. A lexicon names its
//! units with [`Lexicon::stack_units`] (a PostgreSQL schema, a box service) and answers each
//! with [`Lexicon::describe_stack_status`]; [`stack_status`] turns a failed read into unknown.

use serde::{Serialize, Serializer};

use crate::observe::Lexicon;

/// The status of one deploy unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackStatus {
    /// The unit is there.
    Present {
        /// Whether it is healthy (every declared part present; the service running and its
        /// health answering).
        healthy: bool,
        /// What was seen, in one line.
        detail: Option<String>,
    },
    /// The unit is genuinely not there.
    Absent,
    /// Its status could not be determined.
    Unknown {
        /// Why, in one line.
        detail: String,
    },
}

impl StackStatus {
    /// Returns the status in one word: `healthy`, `unhealthy`, `absent`, `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            StackStatus::Present { healthy: true, .. } => "healthy",
            StackStatus::Present { healthy: false, .. } => "unhealthy",
            StackStatus::Absent => "absent",
            StackStatus::Unknown { .. } => "unknown",
        }
    }

    /// Returns the one-line detail, if any.
    pub fn detail(&self) -> Option<&str> {
        match self {
            StackStatus::Present { detail, .. } => detail.as_deref(),
            StackStatus::Absent => None,
            StackStatus::Unknown { detail } => Some(detail),
        }
    }
}

/// `{"present": true, "healthy": ..}`, `{"present": false}`, or `null` for unknown.
impl Serialize for StackStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            StackStatus::Present { healthy, .. } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("present", &true)?;
                map.serialize_entry("healthy", healthy)?;
                map.end()
            }
            StackStatus::Absent => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("present", &false)?;
                map.end()
            }
            StackStatus::Unknown { .. } => serializer.serialize_none(),
        }
    }
}

/// One unit's status, as `lifecycle status --live` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitStatus {
    /// The lexicon answering.
    pub lexicon: String,
    /// The unit's deployed name.
    pub unit: String,
    /// Its status (`null` when unknown).
    pub status: StackStatus,
    /// What was seen, or why it is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Asks `lexicon` for the status of `unit`; a failed read (or a lexicon without the hook) is
/// unknown, with the reason as the detail.
pub fn stack_status(lexicon: &dyn Lexicon, unit: &str) -> UnitStatus {
    let status = match lexicon.describe_stack_status(unit) {
        Ok(status) => status,
        Err(e) => StackStatus::Unknown { detail: e.chain() },
    };
    UnitStatus {
        lexicon: lexicon.name().to_owned(),
        unit: unit.to_owned(),
        detail: status.detail().map(str::to_owned),
        status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{DeclaredEntity, LexiconError, Observation};

    struct Plain;

    impl Lexicon for Plain {
        fn name(&self) -> &str {
            "plain"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            Ok(Observation::new())
        }
    }

    #[test]
    fn the_three_states_serialise_as_the_seed_says() {
        let present = StackStatus::Present { healthy: true, detail: None };
        assert_eq!(serde_json::to_string(&present).unwrap(), r#"{"present":true,"healthy":true}"#);
        assert_eq!(serde_json::to_string(&StackStatus::Absent).unwrap(), r#"{"present":false}"#);
        let unknown = StackStatus::Unknown { detail: "denied".into() };
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "null");
        assert_eq!(unknown.word(), "unknown");
    }

    #[test]
    fn a_lexicon_without_the_hook_is_unknown_never_absent() {
        let status = stack_status(&Plain, "app");
        assert!(matches!(status.status, StackStatus::Unknown { .. }));
        assert_eq!(status.detail.as_deref(), Some("lexicon plain does not implement describeStackStatus"));
        assert!(Plain.stack_units().is_empty());
    }
}
