//! Replay: re-deciding recorded ticks with a rule table, to see what it would have done over
//! history before it is enabled. Pure: no I/O, no clock, nothing dispatched.
//!
//! A [`Replayer`] takes the tick records of one ConvergeOp oldest first. For each record that
//! carries the symptom it planned from, it plans again with the table through the same
//! [`super::plan()`] a tick uses, simulating the flap runs and the budget in order: the flap
//! runs are its own (the table's), carried from tick to tick; each dispatch the replayed tick
//! makes is folded in with the result the recorded tick got for the same rule, resource and op
//! (ran, gated, failed, fenced), or as a success when the recorded tick did not make it (the one
//! thing history cannot say). It then compares, per rule (and resource), the decision with the
//! recorded one: whether the rule fired, its action and the op it dispatched, where a recorded
//! `gated`, failed or fenced dispatch counts as a dispatch.
//!
//! A record without a symptom (older than symptoms on records, or of the other mode than the
//! table) is counted as not replayable, never guessed; the simulation then starts again from the
//! flap runs the next replayable tick's predecessor recorded. A tick that failed before planning
//! is counted as failed and, as in a real tick, neither counts nor resets a flap run.

use serde::Serialize;

use chant_lexicon::model::{ClassKind, DialKind, Rule};

use super::plan::{
    Controls, DispatchResult, FlapKey, PlanInput, cooled, next_flap, plan_controlled, record_dispatch, stamp_damped,
};
use super::record::{Action, FlapEntry, Outcome, TickRecord};

/// The table a replay decides with.
#[derive(Clone, Copy)]
pub struct Table<'a> {
    /// The rules, in authored order.
    pub rules: &'a [Rule],
    /// The dial.
    pub dial: DialKind,
    /// The budget.
    pub budget: u64,
    /// True when the table reads one symptom per resource (it has `observe:`).
    pub resource_mode: bool,
    /// The verb class of a `run()` target, `None` when no such op is known.
    pub class_of: &'a dyn Fn(&str) -> Option<ClassKind>,
}

/// One decision on one rule (and resource): its action, and the op it dispatched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// `ran` (dispatched, whatever the dispatch did), `reported`, `skipped-budget`, `skipped-flap`.
    pub action: Action,
    /// The op the rule targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Why, as recorded or planned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Decision {
    /// Returns true when the decision dispatched an op.
    pub fn dispatched(&self) -> bool {
        self.action == Action::Ran
    }

    /// What the comparison looks at: the action, and the op when it was dispatched.
    fn compared(&self) -> (Action, Option<&str>) {
        (self.action, self.op.as_deref().filter(|_| self.dispatched()))
    }
}

/// A rule (and resource) whose decision differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// What the tick recorded; `None`: the rule did not fire.
    pub recorded: Option<Decision>,
    /// What the table decides; `None`: the rule does not fire (or is not in the table).
    pub replayed: Option<Decision>,
}

/// A recorded tick whose decisions differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TickDiff {
    /// The tick's id.
    pub id: String,
    /// When it started.
    pub started_at: String,
    /// When it was recorded.
    pub timestamp: String,
    /// Every rule (and resource) that differs, replayed order first.
    pub differences: Vec<Difference>,
    /// Dispatches the table makes that the tick did not.
    pub dispatches_added: u64,
    /// Dispatches the tick made that the table does not.
    pub dispatches_removed: u64,
}

/// What became of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Replayed: the same decisions.
    Same,
    /// Replayed: some decisions differ.
    Differs(TickDiff),
    /// No symptom of the table's mode on the record: not replayed.
    NotReplayable,
    /// The tick failed before planning: nothing to re-decide.
    Failed,
}

/// The counts of a replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Records taken (replayed, not replayable or failed).
    pub ticks: u64,
    /// Records replayed.
    pub replayed: u64,
    /// Replayed records whose decisions differ.
    pub differ: u64,
    /// Records without a symptom of the table's mode.
    pub not_replayable: u64,
    /// Records of ticks that failed before planning.
    pub failed: u64,
    /// Dispatches the table adds, over every replayed tick.
    pub dispatches_added: u64,
    /// Dispatches the table removes, over every replayed tick.
    pub dispatches_removed: u64,
}

impl Totals {
    /// The summary line: `replay(<op>): ticks=N replayed=N differ=N not-replayable=N failed=N
    /// dispatches-added=N dispatches-removed=N`.
    pub fn line(&self, op: &str) -> String {
        format!(
            "replay({op}): ticks={} replayed={} differ={} not-replayable={} failed={} dispatches-added={} dispatches-removed={}",
            self.ticks,
            self.replayed,
            self.differ,
            self.not_replayable,
            self.failed,
            self.dispatches_added,
            self.dispatches_removed
        )
    }
}

/// Re-decides tick records oldest first; holds only the simulated flap runs between records.
pub struct Replayer<'a> {
    table: Table<'a>,
    simulated: Option<Vec<FlapEntry>>,
    recorded_before: Vec<FlapEntry>,
    totals: Totals,
}

impl<'a> Replayer<'a> {
    /// Creates a replayer of `table` that starts from no flap runs (the start of history).
    pub fn new(table: Table<'a>) -> Self {
        Replayer { table, simulated: None, recorded_before: Vec::new(), totals: Totals::default() }
    }

    /// Takes a record from before the replayed window: the simulation starts from its recorded
    /// flap runs.
    pub fn anchor(&mut self, record: &TickRecord) {
        self.simulated = None;
        self.recorded_before = record.flap.clone();
    }

    /// Takes a line that could not be read as a record: what it decided is unknown, so the
    /// simulation starts again from the runs the last readable record carried.
    pub fn gap(&mut self) {
        self.simulated = None;
    }

    /// Returns the counts so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Re-decides one record (the next one, oldest first).
    pub fn replay(&mut self, record: &TickRecord) -> Verdict {
        self.totals.ticks += 1;
        let symptom = record.symptom.as_ref().filter(|s| s.is_resources() == self.table.resource_mode);
        let Some(symptom) = symptom else {
            let verdict = if record.symptom.is_none() && record.error.is_some() {
                self.totals.failed += 1;
                Verdict::Failed
            } else {
                self.totals.not_replayable += 1;
                self.simulated = None;
                Verdict::NotReplayable
            };
            self.recorded_before = record.flap.clone();
            return verdict;
        };
        self.totals.replayed += 1;
        let previous = self.simulated.take().unwrap_or_else(|| self.recorded_before.clone());
        // The cool-off as the tick applied it, at the recorded tick's start.
        let at = chant_store::clock::parse(&record.started_at).or_else(|| chant_store::clock::parse(&record.timestamp));
        let previous_planned = at.map_or_else(|| previous.clone(), |at| cooled(&previous, self.table.rules, at));
        let input = PlanInput {
            rules: self.table.rules,
            dial: self.table.dial,
            budget: self.table.budget,
            subject: symptom.subject(),
            previous_flap: &previous_planned,
        };
        // The tick's sync-window hold is a fact of its time, kept on its record; restart limits
        // are not counted again (a recorded `given-up` shows as a difference).
        let controls = Controls { held: record.held.as_ref(), ..Controls::default() };
        let planned = plan_controlled(&input, &controls, self.table.class_of);
        let recorded: Vec<(FlapKey, Decision)> =
            record.outcomes.iter().map(|o| (key(o), recorded(record, o))).collect();
        let replayed: Vec<(FlapKey, Decision)> = planned
            .outcomes
            .iter()
            .map(|o| (key(o), Decision { action: o.action, op: o.op.clone(), reason: o.reason.clone() }))
            .collect();
        let mut outcomes = planned.outcomes.clone();
        for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
            let result = result_of(record, o);
            record_dispatch(o, result);
        }
        let mut next = next_flap(&planned, &outcomes, self.table.rules);
        if let Some(at) = at {
            stamp_damped(&mut next, &previous, &outcomes, at);
        }
        self.simulated = Some(next);
        self.recorded_before = record.flap.clone();
        let diff = compare(record, &recorded, &replayed);
        self.totals.dispatches_added += diff.dispatches_added;
        self.totals.dispatches_removed += diff.dispatches_removed;
        if diff.differences.is_empty() {
            Verdict::Same
        } else {
            self.totals.differ += 1;
            Verdict::Differs(diff)
        }
    }
}

fn key(o: &Outcome) -> FlapKey {
    (o.rule_id.clone(), o.resource.clone())
}

/// The end of the reason of a dispatch a fenced tick did not make.
const FENCED_REASON: &str = "a fenced tick dispatches nothing more";

/// True when a recorded outcome is a dispatch the tick decided on: it ran, stopped at a gate,
/// failed, or was stopped by the fence.
fn was_dispatch(record: &TickRecord, o: &Outcome) -> bool {
    match o.action {
        Action::Ran | Action::Ineffective | Action::Unverified | Action::Gated => true,
        Action::Reported => {
            o.dispatch_failed == Some(true)
                || (record.fenced == Some(true) && o.reason.as_deref().is_some_and(|r| r.ends_with(FENCED_REASON)))
        }
        // A proposal is decided as `proposed`, as the replayed plan decides it.
        Action::SkippedBudget | Action::SkippedFlap | Action::SkippedWindow | Action::GivenUp | Action::Proposed => {
            false
        }
    }
}

/// A recorded outcome as a decision: every dispatch the tick decided on is `ran`.
fn recorded(record: &TickRecord, o: &Outcome) -> Decision {
    let action = if was_dispatch(record, o) { Action::Ran } else { o.action };
    Decision { action, op: o.op.clone(), reason: o.reason.clone() }
}

/// What the recorded tick's dispatch of the same rule, resource and op came to; a success when
/// it made none.
fn result_of(record: &TickRecord, planned: &Outcome) -> DispatchResult {
    let found = record.outcomes.iter().find(|o| {
        o.rule_id == planned.rule_id && o.resource == planned.resource && o.op == planned.op && was_dispatch(record, o)
    });
    match found {
        None => DispatchResult::Ok,
        Some(o) => match o.action {
            Action::Gated => DispatchResult::Gated {
                gate: o.gate_name.clone().unwrap_or_default(),
                url: o.url.clone(),
                owner: o.gate_owner.clone(),
            },
            Action::Reported if o.dispatch_failed == Some(true) => {
                DispatchResult::Failed { error: o.reason.clone().unwrap_or_default() }
            }
            Action::Reported => DispatchResult::Fenced { why: o.reason.clone().unwrap_or_default() },
            _ => DispatchResult::Ok,
        },
    }
}

fn compare(record: &TickRecord, recorded: &[(FlapKey, Decision)], replayed: &[(FlapKey, Decision)]) -> TickDiff {
    let mut diff = TickDiff {
        id: record.id.clone(),
        started_at: record.started_at.clone(),
        timestamp: record.timestamp.clone(),
        differences: Vec::new(),
        dispatches_added: 0,
        dispatches_removed: 0,
    };
    let find = |list: &[(FlapKey, Decision)], k: &FlapKey| list.iter().find(|(kk, _)| kk == k).map(|(_, d)| d.clone());
    let mut keys: Vec<&FlapKey> = replayed.iter().map(|(k, _)| k).collect();
    keys.extend(recorded.iter().map(|(k, _)| k).filter(|k| !replayed.iter().any(|(r, _)| r == *k)));
    for k in keys {
        let (was, now) = (find(recorded, k), find(replayed, k));
        if was.as_ref().map(Decision::compared) == now.as_ref().map(Decision::compared) {
            continue;
        }
        let dispatch = |d: &Option<Decision>| d.as_ref().filter(|d| d.dispatched()).and_then(|d| d.op.clone());
        let (was_op, now_op) = (dispatch(&was), dispatch(&now));
        if was_op != now_op {
            diff.dispatches_removed += u64::from(was_op.is_some());
            diff.dispatches_added += u64::from(now_op.is_some());
        }
        diff.differences.push(Difference { rule_id: k.0.clone(), resource: k.1.clone(), recorded: was, replayed: now });
    }
    diff
}

#[cfg(test)]
mod tests;
