//! The teardown plan: the would-delete set of one lexicon, read-only, and its holes.
//!
//! Every candidate must have been read carrying this project's and env's marker on the lexicon's
//! ownership channel. A kind the lexicon stamps but cannot read back (or an entity it could not
//! look at) is a [`TeardownHole`] with the total [`UnobservedReason`] vocabulary, because "absent
//! from the plan" reads as "safe" and an unreadable kind is unknown. A lexicon without the
//! [`Lexicon::teardown_owned`] hook still takes part: [`teardown_plan`] plans it from
//! `describe_resources`, keeping the resources whose marker was read and names them as owned.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::UnobservedReason;
use crate::observe::{DeclaredEntity, Lexicon, Marker, Ownership, observe_component};

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PlanSource {
    /// The lexicon's own [`Lexicon::teardown_owned`].
    TeardownOwned,
    /// The core's fallback: `describeResources` filtered on the ownership marker.
    DescribeResources,
}

/// One resource the teardown would remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeardownCandidate {
    /// Its kind, when the lexicon has more than one.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The marker it was read carrying (`None` only for a lexicon that owns by its last recorded
    /// apply, such as files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Marker>,
}

/// What the plan cannot see: a kind, or one resource, whose ownership could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeardownHole {
    /// The kind the hole is in (`table`), or `*` for everything the lexicon stamps.
    #[serde(rename = "type")]
    pub kind: String,
    /// The one resource, when the hole is not a whole kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Why it could not be read.
    pub reason: UnobservedReason,
    /// What went wrong, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TeardownHole {
    /// Renders the hole in words: `<name or kind> — <reason>[: <detail>]`.
    pub fn describe(&self) -> String {
        let mut out = match &self.name {
            Some(name) => format!("{name} ({})", self.kind),
            None => format!("every {}", self.kind),
        };
        out.push_str(" — ");
        out.push_str(self.reason.text());
        if let Some(detail) = &self.detail {
            out.push_str(": ");
            out.push_str(detail);
        }
        out
    }
}

/// One lexicon's teardown plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeardownPlan {
    /// Where the plan came from.
    pub source: PlanSource,
    /// The resources the teardown would remove, by name.
    pub candidates: BTreeMap<String, TeardownCandidate>,
    /// What the plan cannot see; a plan with holes is not safe to execute unattended.
    pub holes: Vec<TeardownHole>,
}

impl TeardownPlan {
    /// Creates an empty plan of the lexicon's own hook.
    pub fn new() -> Self {
        TeardownPlan { source: PlanSource::TeardownOwned, candidates: BTreeMap::new(), holes: Vec::new() }
    }

    /// Adds a candidate.
    pub fn candidate(&mut self, name: impl Into<String>, kind: Option<&str>, marker: Option<Marker>) {
        self.candidates.insert(name.into(), TeardownCandidate { kind: kind.map(str::to_owned), marker });
    }

    /// Adds a hole.
    pub fn hole(&mut self, kind: &str, name: Option<&str>, reason: UnobservedReason, detail: Option<String>) {
        self.holes.push(TeardownHole { kind: kind.to_owned(), name: name.map(str::to_owned), reason, detail });
    }

    /// Returns true when the plan has no hole.
    pub fn is_complete(&self) -> bool {
        self.holes.is_empty()
    }
}

impl Default for TeardownPlan {
    fn default() -> Self {
        TeardownPlan::new()
    }
}

/// Plans the teardown of one lexicon: its own [`Lexicon::teardown_owned`], or, without the hook,
/// `describe_resources` filtered on the marker. Never fails: a failed read is a hole over every
/// kind (`*`, `read-failed`), never an empty plan.
pub fn teardown_plan(lexicon: &dyn Lexicon, declared: &[DeclaredEntity]) -> TeardownPlan {
    match lexicon.teardown_owned(declared) {
        Ok(mut plan) => {
            plan.source = PlanSource::TeardownOwned;
            plan
        }
        Err(e) if e.is_not_implemented() => from_describe(lexicon, declared),
        Err(e) => {
            let mut plan = TeardownPlan::new();
            plan.hole("*", None, UnobservedReason::ReadFailed, Some(e.chain()));
            plan
        }
    }
}

/// The fallback: what `describe_resources` read carrying a marker and owned; every unobserved
/// entity is a hole, and a lexicon with no ownership channel cannot be planned at all.
fn from_describe(lexicon: &dyn Lexicon, declared: &[DeclaredEntity]) -> TeardownPlan {
    let mut plan = TeardownPlan { source: PlanSource::DescribeResources, ..TeardownPlan::new() };
    if lexicon.ownership_channel().is_none() {
        plan.hole(
            "*",
            None,
            UnobservedReason::UnsupportedKind,
            Some(format!("lexicon {} reads no ownership marker and plans no teardown of its own", lexicon.name())),
        );
        return plan;
    }
    let observation = observe_component(lexicon, declared);
    for (name, resource) in &observation.resources {
        if resource.ownership == Ownership::Owned
            && let Some(marker) = &resource.marker
        {
            plan.candidate(name, resource.kind.as_deref(), Some(marker.clone()));
        }
    }
    for (name, unobserved) in &observation.unobserved {
        plan.hole(unobserved.kind.as_deref().unwrap_or("*"), Some(name), unobserved.reason, unobserved.detail.clone());
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{
        ChannelKeys, LexiconError, Observation, OwnershipChannel, PresentResource, ReadPath, Unobserved,
    };

    struct Marked;

    impl Lexicon for Marked {
        fn name(&self) -> &str {
            "marked"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            let mut o = Observation::new();
            o.insert_present("mine", PresentResource::new(Ownership::Owned).kind("doc").marker(Marker::new("p", "e")));
            o.insert_present("recorded", PresentResource::new(Ownership::Owned).kind("doc"));
            o.insert_present(
                "theirs",
                PresentResource::new(Ownership::Foreign).kind("doc").marker(Marker::new("q", "e")),
            );
            o.insert_unobserved("locked", Unobserved::new(UnobservedReason::ReadFailed).kind("doc").detail("denied"));
            Ok(o)
        }

        fn ownership_channel(&self) -> Option<OwnershipChannel> {
            Some(OwnershipChannel {
                keys: ChannelKeys { managed_by: "m".into(), stack: "s".into(), env: "e".into() },
                reads: vec![ReadPath::DescribeResources],
            })
        }
    }

    #[test]
    fn the_fallback_keeps_marked_owned_resources_and_holes_every_unobserved_one() {
        let plan = teardown_plan(&Marked, &[]);
        assert_eq!(plan.source, PlanSource::DescribeResources);
        assert_eq!(plan.candidates.keys().collect::<Vec<_>>(), ["mine"]);
        assert_eq!(plan.holes.len(), 1);
        assert_eq!(plan.holes[0].describe(), "locked (doc) — read failed: denied");
        assert!(!plan.is_complete());
    }

    struct Unmarked;

    impl Lexicon for Unmarked {
        fn name(&self) -> &str {
            "unmarked"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            Err(LexiconError::ReadFailed { lexicon: "unmarked".into(), detail: "unreachable".into(), source: None })
        }
    }

    #[test]
    fn a_lexicon_with_no_marker_and_no_hook_is_one_hole_never_an_empty_plan() {
        let plan = teardown_plan(&Unmarked, &[]);
        assert!(plan.candidates.is_empty());
        assert_eq!(plan.holes[0].reason, UnobservedReason::UnsupportedKind);
        assert_eq!(plan.holes[0].describe().split(" — ").next(), Some("every *"));
        assert_eq!(serde_json::to_value(&plan).unwrap()["holes"][0]["reason"], serde_json::json!("unsupported-kind"));
    }
}
