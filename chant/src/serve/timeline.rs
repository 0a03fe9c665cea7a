//! One ConvergeOp's page: its `operator status` row and its ticks as a timeline, newest first,
//! each with its summary line and outcomes; each outcome with its rule, the rule's `why` (from
//! the op.json this binary carries; the stock binary carries none), its source line, and the run
//! it dispatched.
//!
//! The ticks and runs come from [`crate::operator::log::timeline`], the same reader as
//! `operator log --json`. A run belongs to an outcome when it ran the outcome's target op and
//! started within the tick (between the tick's `startedAt` and its `timestamp`); several
//! outcomes of one target (resource mode) take those runs in order.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::model::{OpDocument, Source};
use crate::operator::log::{Read, Timeline};
use crate::operator::status::{Malformed, OpStatus};
use crate::runner::record::RunRecord;
use crate::tick::{Action, ObservedResource, Outcome, TickRecord};

use super::view::OpRow;

/// The default number of ticks an op page shows.
pub const DEFAULT_TICKS: usize = 50;

/// The op page's document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpView {
    /// The shape's version, 1.
    pub version: u32,
    /// When the view was read.
    pub generated_at: String,
    /// The op's estate row: health, age and its `operator status` row.
    pub row: OpRow,
    /// How many ticks are recorded.
    pub total_ticks: usize,
    /// The newest ticks, newest first (at most the `limit` asked for).
    pub ticks: Vec<TickView>,
    /// Unreadable ledger lines met (the status's and the timeline's together).
    pub malformed: Malformed,
    /// The charted figures of the ticks shown, oldest first ([`super::history`]).
    pub history: Vec<super::history::Point>,
}

/// One tick on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TickView {
    /// The tick's id.
    pub id: String,
    /// When it started.
    pub started_at: Option<String>,
    /// When it was recorded.
    pub timestamp: String,
    /// Its summary line.
    pub log: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Resource mode: what the observer reported, in its order (empty in env mode).
    pub resources: Vec<ObservedResource>,
    /// Its outcomes, in plan order.
    pub outcomes: Vec<OutcomeView>,
}

/// One outcome, with its rule's `why` and the run it dispatched.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeView {
    /// The outcome as recorded.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The rule's `why`, `null` when this binary does not carry the op.
    pub why: Option<String>,
    /// The command that approves the gate a `gated` outcome stopped at.
    pub approve: Option<String>,
    /// The run this outcome dispatched, when one is recorded.
    pub run: Option<RunRef>,
}

/// A run record, as far as the timeline shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRef {
    /// The run's id.
    pub id: String,
    /// `ok`, `failed` or `gated`.
    pub status: String,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
}

/// The `why` of every rule of the ConvergeOps this binary carries, by (op, rule id).
#[derive(Debug, Clone, Default)]
pub struct Whys(BTreeMap<(String, String), (String, Option<Source>)>);

impl Whys {
    /// Collects the rules of `docs`.
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a OpDocument>) -> Whys {
        let mut map = BTreeMap::new();
        for doc in docs {
            for rule in doc.converge.iter().flat_map(|c| c.rules.iter()) {
                map.insert((doc.name.to_string(), rule.id.to_string()), (rule.why.clone(), rule.source.clone()));
            }
        }
        Whys(map)
    }

    /// Returns the `why` of `rule` of `op`.
    pub fn get(&self, op: &str, rule: &str) -> Option<&str> {
        self.0.get(&(op.to_owned(), rule.to_owned())).map(|(why, _)| why.as_str())
    }
}

/// Builds the op page of `status` at `now` from its `timeline` (ticks and the runs they
/// dispatched), keeping the newest `limit` ticks.
pub fn op_view(status: OpStatus, timeline: Timeline, whys: &Whys, limit: usize, now: Timestamp) -> OpView {
    let op = status.op.clone();
    let (mut ticks, mut runs): (Vec<&TickRecord>, Vec<&RunRecord>) = (Vec::new(), Vec::new());
    for entry in &timeline.entries {
        match &entry.read {
            Read::Tick(t) if entry.op == op => ticks.push(t),
            Read::Run(r) => runs.push(r),
            _ => {}
        }
    }
    let total_ticks = ticks.len();
    let shown: Vec<TickView> = ticks.iter().rev().take(limit).map(|t| tick_view(&op, t, &runs, whys)).collect();
    let history = super::history::points(ticks.iter().rev().take(limit).copied());
    let malformed = timeline.malformed;
    OpView {
        version: 1,
        generated_at: crate::clock::format(now),
        row: OpRow::new(status, now),
        total_ticks,
        ticks: shown,
        malformed,
        history,
    }
}

fn tick_view(op: &str, tick: &TickRecord, runs: &[&RunRecord], whys: &Whys) -> TickView {
    let window = (crate::clock::parse(&tick.started_at), crate::clock::parse(&tick.timestamp));
    let mut taken: BTreeMap<(String, Option<String>), usize> = BTreeMap::new();
    let mut outcomes = Vec::new();
    for outcome in &tick.outcomes {
        // Only dispatches that ran (or stopped at a gate, or failed) have a run.
        let dispatched =
            outcome.is_dispatch() || outcome.action == Action::Gated || outcome.dispatch_failed == Some(true);
        let run = outcome.op.as_deref().filter(|_| dispatched).and_then(|target| {
            let skip = taken.entry((target.to_owned(), outcome.resource.clone())).or_default();
            let found = runs
                .iter()
                .filter(|r| r.op == target && r.resource == outcome.resource && within(r, window))
                .nth(*skip)?;
            *skip += 1;
            Some(RunRef {
                id: found.id.clone(),
                status: found.status.as_str().to_owned(),
                started_at: found.started_at.clone(),
                ended_at: found.ended_at.clone(),
            })
        });
        outcomes.push(OutcomeView {
            why: whys.get(op, &outcome.rule_id).map(str::to_owned),
            approve: outcome.approve_command(),
            run,
            outcome: outcome.clone(),
        });
    }
    TickView {
        id: tick.id.clone(),
        resources: tick.resources.clone().unwrap_or_default(),
        started_at: Some(tick.started_at.clone()).filter(|s| !s.is_empty()),
        timestamp: tick.timestamp.clone(),
        log: Some(tick.log.clone()).filter(|s| !s.is_empty()),
        error: tick.error.clone(),
        outcomes,
    }
}

fn within(run: &RunRecord, (start, end): (Option<Timestamp>, Option<Timestamp>)) -> bool {
    let Some(started) = crate::clock::parse(&run.started_at) else { return false };
    start.is_none_or(|s| started >= s) && end.is_none_or(|e| started <= e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::log::{Entry, EntryKind};
    use serde_json::json;

    fn tick(id: &str, start: &str, end: &str, outcomes: Vec<Outcome>) -> Entry {
        let record = TickRecord {
            version: 1,
            id: id.into(),
            op: "c".into(),
            env: "e".into(),
            started_at: start.into(),
            timestamp: end.into(),
            outcomes,
            log: "converge(e): gated=1".into(),
            ..TickRecord::default()
        };
        let value = serde_json::to_value(&record).unwrap();
        Entry {
            kind: EntryKind::Tick,
            timestamp: end.into(),
            op: "c".into(),
            env: "e".into(),
            member: None,
            record: value,
            read: Read::Tick(Box::new(record)),
        }
    }

    fn run(id: &str, resource: &str, start: &str, end: &str) -> Entry {
        let value = json!({"version": 1, "id": id, "op": "held", "env": "e", "resource": resource, "startedAt": start,
                           "endedAt": end, "status": "gated", "outcomes": [], "phases": [], "opDigest": "x"});
        let record: RunRecord = serde_json::from_value(value.clone()).unwrap();
        Entry {
            kind: EntryKind::Run,
            timestamp: end.into(),
            op: "held".into(),
            env: "e".into(),
            member: None,
            record: value,
            read: Read::Run(Box::new(record)),
        }
    }

    fn status() -> OpStatus {
        OpStatus {
            op: "c".into(),
            env: "e".into(),
            member: None,
            health: crate::tick::health::Health::of_tick(None),
            last_tick: None,
            lease: None,
            pending_gates: vec![],
            suspended: None,
        }
    }

    #[test]
    fn outcomes_get_their_run_their_why_and_the_approve_command() {
        let gated: Outcome = serde_json::from_value(
            json!({"ruleId": "guard", "action": "gated", "op": "held", "gateName": "hold", "resource": "r1"}),
        )
        .unwrap();
        let reported: Outcome =
            serde_json::from_value(json!({"ruleId": "note", "action": "reported", "op": "held", "reason": "unknown"}))
                .unwrap();
        let both = || vec![gated.clone(), reported.clone()];
        let timeline = Timeline {
            version: 1,
            entries: vec![
                tick("t1", "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:05.000Z", both()),
                run("r-other", "r2", "2026-03-01T10:00:01.000Z", "2026-03-01T10:00:02.000Z"),
                run("r-early", "r1", "2026-03-01T10:00:01.000Z", "2026-03-01T10:00:02.000Z"),
                tick("t2", "2026-03-01T11:00:00.000Z", "2026-03-01T11:00:05.000Z", both()),
                run("r-late", "r1", "2026-03-01T11:00:01.000Z", "2026-03-01T11:00:02.000Z"),
            ],
            malformed: Malformed::default(),
        };
        let doc: OpDocument = serde_json::from_value(json!({
            "version": 1, "name": "c", "overview": "o", "labels": {}, "class": "read-only", "phases": [],
            "converge": {"dial": "observe", "budget": 1, "rules": [
                {"id": "guard", "when": {"kind": "field-truthiness", "field": "status", "op": "truthy"},
                 "then": {"kind": "report", "reason": "x"}, "why": "<b>Hold</b> for a human."}]}
        }))
        .unwrap();
        let now: Timestamp = "2026-03-01T12:00:00Z".parse().unwrap();
        let view = op_view(status(), timeline, &Whys::new([&doc]), 10, now);
        assert_eq!(view.total_ticks, 2);
        assert_eq!(view.ticks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t2", "t1"], "newest first");
        let newest = &view.ticks[0];
        let guard = &newest.outcomes[0];
        assert_eq!(guard.why.as_deref(), Some("<b>Hold</b> for a human."));
        assert_eq!(guard.approve.as_deref(), Some("chant approve held hold --resource r1"));
        assert_eq!(guard.run.as_ref().map(|r| r.id.as_str()), Some("r-late"), "the run within the tick");
        assert_eq!(
            view.ticks[1].outcomes[0].run.as_ref().map(|r| r.id.as_str()),
            Some("r-early"),
            "the run of the outcome's resource"
        );
        let note = &newest.outcomes[1];
        assert_eq!((note.why.as_deref(), note.approve.as_deref(), note.run.as_ref()), (None, None, None));

        let empty = Timeline { version: 1, entries: vec![], malformed: Malformed::default() };
        let one = op_view(status(), empty, &Whys::default(), 1, now);
        assert_eq!((one.total_ticks, one.ticks.len()), (0, 0));
    }
}
