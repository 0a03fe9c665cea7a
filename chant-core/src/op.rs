//! An Op as op.json describes it: a pipeline of phases of steps, or a ConvergeOp whose one job is
//! a tick over a rule table.
//!
//! [`OpDocument`] is the typed form of op.json. The macros serialise it at compile time and the
//! runtime deserialises it (with unknown fields denied) from the embedded copy; the field order
//! of the structs is the key order of the file, so the bytes are deterministic.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::contract::{ClassKind, DialKind};
use super::limit::RestartLimit;
use super::name::Name;
use super::rule::Rule;
pub use super::step::Step;
use super::window::SyncWindow;

/// The op.json format version this crate writes and reads.
pub const OP_JSON_VERSION: u32 = 1;

/// The verb class of an Op, folded from its steps.
pub type VerbClass = ClassKind;

/// The authority a ConvergeOp grants its dispatches.
pub type Dial = DialKind;

impl Serialize for ClassKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ClassKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ClassKind::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown verb class `{s}`; expected read-only, mutating or destructive"))
        })
    }
}

impl Serialize for DialKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DialKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DialKind::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown dial `{s}`; expected observe, reconcile or apply"))
        })
    }
}

/// A schedule: a 5-field cron, its time zone (UTC when absent) and the overlap policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The cron expression.
    pub cron: String,
    /// An IANA time zone; UTC when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tz: Option<String>,
    /// Always `skip`: a fire that arrives while a tick runs is dropped, never queued.
    pub overlap: Overlap,
}

/// The overlap policy of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// Drop the fire.
    Skip,
}

/// A named phase of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// The phase's name.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<Step>,
    /// The component the phase belongs to (`phase("Deploy api", [...], component = "api")`):
    /// `run <op> --components api` runs only the phases of the named components (and the phases
    /// of no component), and a gate in it is the component's (`chant approve api <gate>`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub component: Option<Name>,
}

/// The typed form of op.json, for an Op or a ConvergeOp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpDocument {
    /// The format version ([`OP_JSON_VERSION`]).
    pub version: u32,
    /// The Op's name.
    pub name: Name,
    /// One line saying what it does.
    pub overview: String,
    /// The `chant.workspace.json` member whose directory holds the crate, if there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub member: Option<String>,
    /// The env the Op runs in; absent means the dispatching tick's env, or `_runs` by hand.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub env: Option<Name>,
    /// Labels; a ConvergeOp has `Converge: "true"`, `Env` and `Dial`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub labels: BTreeMap<String, String>,
    /// The schedule, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub schedule: Option<Schedule>,
    /// The Op's verb class.
    pub class: VerbClass,
    /// The phases, in order (empty for a ConvergeOp).
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// The phases run after a failure.
    #[serde(rename = "onFailure", skip_serializing_if = "Vec::is_empty", default)]
    pub on_failure: Vec<Phase>,
    /// For a ConvergeOp, its tick's configuration.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub converge: Option<ConvergeSpec>,
}

/// The tick configuration of a ConvergeOp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvergeSpec {
    /// The dial.
    pub dial: Dial,
    /// Maximum `run()` dispatches per tick.
    pub budget: u64,
    /// The resource-mode observer step; absent in env mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub observe: Option<Step>,
    /// The rule table, in authored order.
    pub rules: Vec<Rule>,
    /// The sync windows ([`crate::window`]): when the op may act; absent (always) when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub windows: Vec<SyncWindow>,
    /// The restart limit ([`crate::limit`]); absent: no limit.
    #[serde(rename = "restartLimit", skip_serializing_if = "Option::is_none", default)]
    pub restart_limit: Option<RestartLimit>,
}

impl OpDocument {
    /// Returns true for a ConvergeOp.
    pub fn is_converge(&self) -> bool {
        self.converge.is_some()
    }

    /// Returns every step of the phases and the failure phases, in order.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.phases.iter().chain(self.on_failure.iter()).flat_map(|p| p.steps.iter())
    }

    /// Returns true when a gate step appears anywhere in the Op.
    pub fn is_gated(&self) -> bool {
        self.steps().any(|s| matches!(s, Step::Gate { .. }))
    }

    /// Folds the class of the Op from its steps: the most dangerous step wins; an Op with no
    /// steps is read-only.
    pub fn folded_class(&self) -> VerbClass {
        self.steps().map(Step::class).max().unwrap_or(ClassKind::ReadOnly)
    }
}
