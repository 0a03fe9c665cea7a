//! The tick record: one JSON line per tick on the ledger, and the outcome of each fired rule.
//!
//! A [`TickRecord`] is a [`Record`] of kind converge, keyed by its env and op, written as
//! canonical JSON (keys in byte order). It reads records the original wrote too: every field
//! the original's lines lack has a default, and status rows of another shape than chant's read
//! as absent (the stored line keeps them for the views that show it).
//!
//! Every tick that planned carries the symptom it planned from ([`PlannedSymptom`]: the
//! env's, or each resource's in resource mode), so history can be re-decided by `replay` with
//! another rule table; a record without it (older ones, ticks that failed before planning) is
//! counted as not replayable, never guessed.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use chant_lexicon::model::{ComponentRow, ConvergeSymptom, ResourceSymptom, Source};
use chant_store::lease::LeaseRecord;
use chant_store::ledger::{self, Record, RecordKind, ShardKey};

use super::plan::Subject;

/// What happened to one fired rule (and resource).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Dispatched, the dispatch succeeded, and the observation after it found the symptom the
    /// rule answered gone (records older than verification: the dispatch succeeded).
    Ran,
    /// Dispatched and succeeded, but the observation after it found the symptom still there.
    Ineffective,
    /// Dispatched and succeeded, but the observation after it could not tell (it failed, or read
    /// the env or the resource `unknown`): never counted as a repair.
    Unverified,
    /// Logged and recorded only (a report rule, a refused or unknown dispatch, a failed dispatch).
    Reported,
    /// Matched past the per-tick budget: not queued.
    SkippedBudget,
    /// Damped: it dispatched `flap_threshold` ticks in a row without its predicate clearing.
    SkippedFlap,
    /// The dispatched op stopped at a gate (exit 3): a pending fact, not an error.
    Gated,
    /// A `propose()` rule wrote what its op would change on a proposal branch: nothing in the
    /// estate changed, and the proposal waits for review like a gate (not retried, not damped).
    Proposed,
    /// Not dispatched: the op's sync windows hold it, and the target is not read-only.
    SkippedWindow,
    /// Not dispatched: the rule reached its restart limit for this resource and gave up.
    GivenUp,
}

impl Action {
    /// Returns the action as written in records (`skipped-budget`).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Ran => "ran",
            Action::Ineffective => "ineffective",
            Action::Unverified => "unverified",
            Action::Reported => "reported",
            Action::SkippedBudget => "skipped-budget",
            Action::SkippedFlap => "skipped-flap",
            Action::Gated => "gated",
            Action::Proposed => "proposed",
            Action::SkippedWindow => "skipped-window",
            Action::GivenUp => "given-up",
        }
    }
}

/// The outcome of one fired rule (for one resource in resource mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The rule.
    pub rule_id: String,
    /// What happened.
    pub action: Action,
    /// Where the rule was written.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<Source>,
    /// The op a `run()` rule targets.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub op: Option<String>,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
    /// The gate the dispatched op stopped at.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gate_name: Option<String>,
    /// The component whose gate that is (approved by the component's name, `chant approve
    /// <component> <gate>`); absent for a gate of the op itself.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gate_owner: Option<String>,
    /// Why (a report's reason, a refusal, a damping, a failure).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// Where a gate can be approved, when known; for a proposal, its compare URL when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// The branch a `proposed` outcome wrote (`chant/proposals/<env>/<rule>`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub branch: Option<String>,
    /// Set on a `reported` outcome whose dispatch failed (it counts toward flap damping).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dispatch_failed: Option<bool>,
    /// The entities the outcome is about, `<component>/<name>`: for a rule that reads the adopt
    /// signal, the unowned entities it reported (at most [`ENTITIES`]). Absent when empty, so
    /// records without it keep their bytes; older chant ignores it.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub entities: Vec<String>,
}

impl Outcome {
    /// Returns the command that approves the gate this outcome stopped at, when it is `gated`
    /// (what a notification and the dashboard print beside it).
    pub fn approve_command(&self) -> Option<String> {
        if self.action != Action::Gated {
            return None;
        }
        let (op, gate) = (self.op.as_deref()?, self.gate_name.as_deref()?);
        let op = self.gate_owner.as_deref().unwrap_or(op);
        let resource = self.resource.as_deref().map(|r| format!(" --resource {r}")).unwrap_or_default();
        Some(format!("chant approve {op} {gate}{resource}"))
    }
}

/// How many entity names an outcome keeps.
pub const ENTITIES: usize = 100;

impl Outcome {
    /// Returns true when this outcome counts toward a flap run: a dispatch that ran (whatever its
    /// verification found), or one that failed.
    pub fn counts_for_flap(&self) -> bool {
        self.is_dispatch() || (self.action == Action::Reported && self.dispatch_failed == Some(true))
    }

    /// Returns true when the op was dispatched and succeeded: `ran`, `ineffective` or
    /// `unverified`.
    pub fn is_dispatch(&self) -> bool {
        matches!(self.action, Action::Ran | Action::Ineffective | Action::Unverified)
    }
}

/// A rule (and resource) whose predicate held this tick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fired {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
}

/// The current flap run length of one (rule, resource): consecutive dispatching ticks with the
/// predicate holding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlapEntry {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
    /// The run length.
    pub run: u64,
    /// When the rule was first stopped by damping in this run (the tick's time): after the
    /// cool-off ([`super::FLAP_COOL_OFF`]) the rule dispatches once more. Absent while it is not
    /// damped, and on records older than the cool-off.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub damped_at: Option<String>,
}

/// The per-tick counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Env mode: create + update + delete entries; resource mode: resources `drifted`.
    pub drifted: u64,
    /// Outcomes `ran`: dispatches the observation after them backs as repairs.
    pub remediated: u64,
    /// Outcomes `ineffective`: dispatches after which the symptom was still there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ineffective: u64,
    /// Outcomes `unverified`: dispatches the observation after them could not judge.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unverified: u64,
    /// Outcomes `reported`.
    pub reported: u64,
    /// Outcomes `skipped-budget`.
    pub skipped_budget: u64,
    /// Outcomes `skipped-flap`.
    pub skipped_flap: u64,
    /// Outcomes `gated`.
    #[serde(default)]
    pub gated: u64,
    /// Outcomes `skipped-window`: dispatches the op's sync windows held.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_window: u64,
    /// Outcomes `given-up`: dispatches a restart limit stopped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub given_up: u64,
    /// Env mode: unobserved entries; resource mode: resources `unknown`.
    pub unobserved: u64,
    /// Env mode: adopt entries; resource mode: 0.
    pub adopted: u64,
    /// Env mode: deep paths that differ from the declaration and the env's baseline accepted
    /// (not counted in `drifted`, never hidden either); resource mode: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub baselined: u64,
    /// Outcomes `proposed`: proposal branches written (or found standing) this tick.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub proposed: u64,
}

#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if passes a reference")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Summary {
    /// Renders the summary line:
    /// `converge(<env>): drifted=N remediated=N reported=N skipped-budget=N skipped-flap=N gated=N unobserved=N adopted=N`,
    /// with ` ineffective=N` and ` unverified=N` after `remediated`, ` skipped-window=N` and
    /// ` given-up=N` after `skipped-flap`, and ` baselined=N` and ` proposed=N` at the end, when
    /// there are any.
    pub fn line(&self, env: &str) -> String {
        let mut checked = String::new();
        if self.ineffective > 0 {
            checked.push_str(&format!(" ineffective={}", self.ineffective));
        }
        if self.unverified > 0 {
            checked.push_str(&format!(" unverified={}", self.unverified));
        }
        let mut stopped = String::new();
        if self.skipped_window > 0 {
            stopped.push_str(&format!(" skipped-window={}", self.skipped_window));
        }
        if self.given_up > 0 {
            stopped.push_str(&format!(" given-up={}", self.given_up));
        }
        format!(
            "converge({env}): drifted={} remediated={}{checked} reported={} skipped-budget={} skipped-flap={}{stopped} gated={} unobserved={} adopted={}",
            self.drifted,
            self.remediated,
            self.reported,
            self.skipped_budget,
            self.skipped_flap,
            self.gated,
            self.unobserved,
            self.adopted
        ) + &if self.baselined > 0 { format!(" baselined={}", self.baselined) } else { String::new() }
            + &if self.proposed > 0 { format!(" proposed={}", self.proposed) } else { String::new() }
    }

    /// Adds the outcome counts of `outcomes` to the summary.
    pub fn count_outcomes(&mut self, outcomes: &[Outcome]) {
        for o in outcomes {
            match o.action {
                Action::Ran => self.remediated += 1,
                Action::Ineffective => self.ineffective += 1,
                Action::Unverified => self.unverified += 1,
                Action::Reported => self.reported += 1,
                Action::SkippedBudget => self.skipped_budget += 1,
                Action::SkippedFlap => self.skipped_flap += 1,
                Action::Gated => self.gated += 1,
                Action::Proposed => self.proposed += 1,
                Action::SkippedWindow => self.skipped_window += 1,
                Action::GivenUp => self.given_up += 1,
            }
        }
    }
}

/// One observed resource in a resource-mode tick record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedResource {
    /// The resource's name.
    pub name: String,
    /// `in-sync`, `drifted` or `unknown`.
    pub status: chant_lexicon::model::ResourceStatus,
    /// The observer's detail line.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
}

/// The symptom a tick planned from: the env's in environment mode, one per observed resource (in
/// observer order) in resource mode. Written as a JSON object or an array respectively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PlannedSymptom {
    /// Environment mode.
    Env(ConvergeSymptom),
    /// Resource mode.
    Resources(Vec<ResourceSymptom>),
}

impl PlannedSymptom {
    /// Returns what the rules are evaluated against.
    pub fn subject(&self) -> Subject<'_> {
        match self {
            PlannedSymptom::Env(s) => Subject::Env(s),
            PlannedSymptom::Resources(rs) => Subject::Resources(rs),
        }
    }

    /// Returns true in resource mode.
    pub fn is_resources(&self) -> bool {
        matches!(self, PlannedSymptom::Resources(_))
    }
}

/// The lease a tick ran under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseStamp {
    /// `<host>:<pid>:<random>`.
    pub holder: String,
    /// The fencing token.
    pub token: String,
}

impl From<&LeaseRecord> for LeaseStamp {
    fn from(record: &LeaseRecord) -> Self {
        LeaseStamp { holder: record.holder.clone(), token: record.token.clone() }
    }
}

/// How many drifted paths a tick record keeps.
pub const DRIFTED_PATHS: usize = 100;

/// One drifted path a tick planned from: `<component>/<entity> <path>: <declared> -> <live>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftedPath {
    /// The component (lexicon).
    pub component: String,
    /// The entity.
    pub entity: String,
    /// The property or deep path.
    pub path: String,
    /// The declared value.
    pub declared: String,
    /// The live value, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
}

impl DriftedPath {
    /// Returns every drifted path of an assessment's change sets, at most [`DRIFTED_PATHS`].
    pub fn of(change_sets: &[chant_lexicon::observe::ChangeSet]) -> Vec<DriftedPath> {
        change_sets
            .iter()
            .flat_map(|cs| {
                cs.entries.iter().filter(|e| e.action == chant_lexicon::observe::ChangeAction::Update).flat_map(
                    move |e| {
                        e.deltas.iter().map(move |d| DriftedPath {
                            component: cs.component.clone(),
                            entity: e.name.clone(),
                            path: d.property.clone(),
                            declared: d.declared.clone(),
                            live: d.live.clone(),
                        })
                    },
                )
            })
            .take(DRIFTED_PATHS)
            .collect()
    }

    /// Renders the path in one line, live then declared as every other view writes a change
    /// (`lifecycle diff`, the gate plan, the dashboard): `files/app.json document.port: 9090 ->
    /// 8080` (`(none)` for a live value not read).
    pub fn line(&self) -> String {
        format!(
            "{}/{} {}: {} -> {}",
            self.component,
            self.entity,
            self.path,
            self.live.as_deref().unwrap_or("(none)"),
            self.declared
        )
    }
}

/// One tick, as recorded on the ledger. Serialised with keys in byte order, on one line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TickRecord {
    /// Always 1.
    pub version: u32,
    /// The tick's id.
    pub id: String,
    /// The ConvergeOp.
    pub op: String,
    /// The env.
    pub env: String,
    /// When the tick started (RFC 3339 UTC, milliseconds).
    pub started_at: String,
    /// When it ended.
    pub timestamp: String,
    /// The distinct ids of the rules that fired.
    pub fired_rule_ids: Vec<String>,
    /// Every (rule, resource) that fired.
    pub fired: Vec<Fired>,
    /// One outcome per fired (rule, resource), in plan order.
    pub outcomes: Vec<Outcome>,
    /// The current flap run lengths.
    pub flap: Vec<FlapEntry>,
    /// The restart-limit counts of an op with a `restart_limit` ([`super::limit`]); absent when
    /// empty, so records of other ops keep their bytes.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub restarts: Vec<super::limit::RestartEntry>,
    /// Set when the op's sync windows held the tick ([`super::window`]): it observed and
    /// recorded, and dispatched nothing mutating. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "lenient")]
    pub held: Option<super::window::Held>,
    /// Env mode: the status rows.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "lenient")]
    pub components: Option<Vec<ComponentRow>>,
    /// Resource mode: the observation.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resources: Option<Vec<ObservedResource>>,
    /// The symptom the tick planned from; absent when it did not plan (it failed first) and in
    /// records written before symptoms were recorded.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "lenient")]
    pub symptom: Option<PlannedSymptom>,
    /// Env mode: the paths that drifted (each `update` entry's differing properties, deep
    /// paths included), at most [`DRIFTED_PATHS`]; absent when nothing drifted.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "lenient")]
    pub drifted_paths: Option<Vec<DriftedPath>>,
    /// Env mode: how the content of each updated entity whose lexicon keeps it differs, as text
    /// (a unified diff from live to declared, redacted; at most
    /// [`crate::textdiff::TICK_ENTITIES`] entities of [`crate::textdiff::TICK_LINES`] lines), so
    /// `operator log` shows a text change as text; absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "lenient")]
    pub text_changes: Option<Vec<crate::textdiff::TextChange>>,
    /// Whether the env was observed again after the tick's dispatches, so each dispatch's action
    /// (`ran`, `ineffective`, `unverified`) is that observation's verdict; absent (false) on ticks
    /// that dispatched nothing and on records older than verification, whose `ran` only says the
    /// dispatch succeeded.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub verified: bool,
    /// The counts.
    pub summary: Summary,
    /// The summary line.
    pub log: String,
    /// The lease the tick ran under (absent with `--no-lease`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lease: Option<LeaseStamp>,
    /// The commit the project was at, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub git_sha: Option<String>,
    /// A digest of the op.json the tick ran.
    pub op_digest: String,
    /// Why the tick failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Set when the tick found its lease lost (another holder took it mid-tick): it dispatched
    /// nothing from then on. Absent when the lease held throughout.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fenced: Option<bool>,
}

impl TickRecord {
    /// Serialises the record as the one line the ledger stores (and `tick --json` prints).
    ///
    /// # Errors
    ///
    /// [`ledger::Error::Encode`], which the types here make impossible in practice.
    pub fn to_line(&self) -> Result<String, ledger::Error> {
        ledger::encode(self)
    }
}

impl Record for TickRecord {
    const KIND: RecordKind = RecordKind::Converge;
    const NAME: &'static str = "tick";
    // A tick names its op and env and when it ended; the original's lines do too.
    const REQUIRED: &'static [&'static str] = &["op", "env", "timestamp"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        ShardKey::converge(member, &self.env, &self.op)
    }
}

/// Reads a field that is kept only when it has chant's own shape: anything else reads as absent.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(deserializer: D) -> Result<Option<T>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_originals_records_and_writes_fenced_only_when_set() {
        // The original's line: no startedAt, fired, flap, opDigest or lease; status rows of its
        // own shape (no env, recorded), which read as absent rather than failing the record.
        let line = r#"{"components":[{"component":"files","detail":"","reconciliation":"drifted","unobserved":{"reason":"read-failed"}}],"env":"staging","firedRuleIds":["a"],"log":"converge(staging): ...","op":"staging-converge","outcomes":[{"action":"ran","op":"staging-apply","ruleId":"a"}],"summary":{"adopted":0,"drifted":1,"remediated":1,"reported":0,"skippedBudget":0,"skippedFlap":0,"unobserved":0},"timestamp":"2025-01-01T00:00:00.000Z","version":1}"#;
        let record: TickRecord = serde_json::from_str(line).unwrap();
        assert_eq!((record.op.as_str(), record.started_at.as_str(), record.components), ("staging-converge", "", None));
        assert_eq!(record.outcomes[0].action, Action::Ran);
        assert_eq!(record.summary.gated, 0);

        let mut record = TickRecord { version: 1, op: "o".into(), env: "e".into(), ..TickRecord::default() };
        assert!(!record.to_line().unwrap().contains("fenced"), "absent while the lease holds");
        record.fenced = Some(true);
        let line = record.to_line().unwrap();
        assert!(line.contains(r#""fenced":true"#), "{line}");
        assert_eq!(record.shard_key(Some("web")).unwrap().dir(), "_members/web/e/o/converge");
    }

    #[test]
    fn an_outcomes_entities_are_written_only_when_there_are_some_and_old_lines_read_without_them() {
        let line = r#"{"action":"reported","reason":"unowned resources present","ruleId":"adopt-report"}"#;
        let mut o: Outcome = serde_json::from_str(line).unwrap();
        assert!(o.entities.is_empty());
        assert_eq!(chant_store::canonical::to_string(&o).unwrap(), line, "an outcome without names keeps its bytes");
        o.entities = vec!["files/stray.conf".into()];
        let named = chant_store::canonical::to_string(&o).unwrap();
        assert_eq!(
            named,
            r#"{"action":"reported","entities":["files/stray.conf"],"reason":"unowned resources present","ruleId":"adopt-report"}"#
        );
        // What an older chant reads: the same outcome, the names ignored as an unknown key.
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Older {
            rule_id: String,
            action: Action,
        }
        let older: Older = serde_json::from_str(&named).unwrap();
        assert_eq!((older.rule_id.as_str(), older.action), ("adopt-report", Action::Reported));
        assert_eq!(serde_json::from_str::<Outcome>(&named).unwrap(), o);
    }

    #[test]
    fn the_planned_symptom_is_an_object_or_an_array_and_a_malformed_one_reads_as_absent() {
        let resources = PlannedSymptom::Resources(vec![ResourceSymptom {
            env: "box".into(),
            resource: "app".into(),
            status: chant_lexicon::model::ResourceStatus::Drifted,
            detail: String::new(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        }]);
        let record = TickRecord { version: 1, symptom: Some(resources.clone()), ..TickRecord::default() };
        let line = record.to_line().unwrap();
        assert!(
            line.contains(r#""symptom":[{"detail":"","env":"box","resource":"app","status":"drifted"}]"#),
            "{line}"
        );
        let back: TickRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back.symptom, Some(resources));
        assert!(back.symptom.as_ref().unwrap().is_resources());
        let env = r#"{"symptom":{"env":"site","status":"drifted","components":[],"createCount":0,"updateCount":1,
            "deleteCount":0,"adoptCount":0,"runtimeCount":0,"unobservedCount":0,"unobservedReasons":[],"totalCount":3}}"#;
        let back: TickRecord = serde_json::from_str(env).unwrap();
        assert!(matches!(back.symptom, Some(PlannedSymptom::Env(ref s)) if s.update_count == 1));
        let bad: TickRecord = serde_json::from_str(r#"{"symptom":{"status":"sideways"},"op":"o"}"#).unwrap();
        assert_eq!((bad.symptom, bad.op.as_str()), (None, "o"), "the record stays readable, not replayable");
        assert!(!TickRecord::default().to_line().unwrap().contains("symptom"));
    }
}
