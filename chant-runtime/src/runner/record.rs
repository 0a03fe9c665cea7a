//! The run record: one JSON line per run of an op, printed with `--json` and appended to the
//! ledger. A [`RunRecord`] is a [`Record`] of kind run, written as canonical JSON; the same line
//! on a dispatched run's stdout is how the tick that dispatched it learns how it ended.

use serde::{Deserialize, Serialize};

use chant_store::ledger::{self, Record, RecordKind, ShardKey};

/// How a run, a phase or a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Done.
    Ok,
    /// Failed.
    Failed,
    /// Stopped at a gate with no resolution.
    Gated,
    /// Not run (after a failure or a gate).
    Skipped,
}

impl Status {
    /// Returns the status as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Gated => "gated",
            Status::Skipped => "skipped",
        }
    }
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepOutcome {
    /// The phase it belongs to.
    pub phase: String,
    /// The step kind (`apply`, `gate`, ...).
    pub step: String,
    /// The gate's or user step's name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// How it ended.
    pub status: Status,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// One line of detail (redacted and sanitised).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
    /// Who approved the gate it walked through.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub approved_by: Option<String>,
    /// What a user step returned.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<serde_json::Value>,
    /// Where the approval of a gate it walked through was carried from
    /// ([`crate::gate::carry`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub carried_from: Option<crate::gate::carry::CarriedFrom>,
}

/// One phase's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseOutcome {
    /// The phase's name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// Whether it is a failure phase.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub on_failure: bool,
}

/// The gate a gated run stopped at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateStop {
    /// The gate's name.
    pub name: String,
    /// When its standing pending fact was written.
    pub since: String,
    /// The gate's description.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// When the pending fact stops standing.
    #[serde(rename = "expiresAt", skip_serializing_if = "Option::is_none", default)]
    pub expires_at: Option<String>,
    /// The plan the gate guards, and its digest.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plan: Option<crate::gate::plan::GatePlan>,
    /// The plan's digest.
    #[serde(rename = "planDigest", skip_serializing_if = "Option::is_none", default)]
    pub plan_digest: Option<String>,
    /// Why an approval was refused (the plan changed since it was approved), or why no approval
    /// carried onto a gate that declares a carry.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refused: Option<String>,
    /// The component whose gate it is (approved as `chant approve <component> <gate>`); absent for
    /// a gate of the op itself.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub component: Option<String>,
}

impl GateStop {
    /// The command that approves this gate of `op`: `chant approve <component or op> <gate>`.
    pub fn approve_command(&self, op: &str) -> String {
        format!("chant approve {} {}", self.component.as_deref().unwrap_or(op), self.name)
    }
}

/// One run of an op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// Always 1.
    pub version: u32,
    /// The run's id.
    pub id: String,
    /// The op.
    pub op: String,
    /// The env it ran in (`_runs` when none).
    pub env: String,
    /// The resource of a resource-mode dispatch.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// How it ended.
    pub status: Status,
    /// Every step that ran or was skipped, in order.
    pub outcomes: Vec<StepOutcome>,
    /// Every phase, in order.
    pub phases: Vec<PhaseOutcome>,
    /// The gate a gated run stopped at (the first, when several components stopped).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gate: Option<GateStop>,
    /// The gates of other components the run stopped at, after the first.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub other_gates: Vec<GateStop>,
    /// The command that approves it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub approve: Option<String>,
    /// Where approval happens, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// Why it failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The commit the project was at, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub git_sha: Option<String>,
    /// A digest of the op.json that ran.
    pub op_digest: String,
    /// `run --components`: the components selected; absent when every phase was to run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub components: Option<Vec<String>>,
}

impl RunRecord {
    /// Serialises the record as the one line the ledger stores and `run --json` prints: the
    /// message a dispatching tick reads back.
    ///
    /// # Errors
    ///
    /// [`ledger::Error::Encode`], which the types here make impossible in practice.
    pub fn to_line(&self) -> Result<String, ledger::Error> {
        ledger::encode(self)
    }
}

impl Record for RunRecord {
    const KIND: RecordKind = RecordKind::Run;
    const NAME: &'static str = "run";

    /// `<env>/<op>/runs`, or `_runs/<op>/runs` for a run by hand outside any env.
    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        let env = (self.env != ledger::HAND_RUNS_DIR).then_some(self.env.as_str());
        ShardKey::run(member, env, &self.op)
    }
}
