//! Which notification events a tick raises: pure, from the tick record, the length of the op's
//! run of `unknown` ticks, and whether the last notification recorded for the op was a problem.
//!
//! - `gated`: an outcome stopped at a gate (one event per such outcome);
//! - `failed-dispatch`: a dispatch failed (`reported` with `dispatchFailed`);
//! - `damped`: flap damping skipped a dispatch (`skipped-flap`);
//! - `ineffective`: a dispatch ran and the observation after it found its symptom still there;
//! - `unknown`: the tick could not observe everything, the run of such ticks in a row has
//!   reached `unknown_ticks`, and no `unknown` was sent for this run yet (a threshold crossed, not
//!   met exactly: a run already long when the operator starts, or whose Nth tick was a hand tick
//!   the operator does not notify, still notifies once);
//! - `proposed`: a `propose()` rule wrote a proposal branch, or a new text on it (a standing
//!   proposal found unchanged is not notified again); the reason names the branch and `url` is
//!   its compare URL when the tick knew one;
//! - `recovered`: the tick raised none of the above, observed everything and did not fail, and
//!   the last notification recorded for the op reported a problem.

use serde::Serialize;

pub use crate::notification::EventKind;
use crate::tick::{Action, TickRecord};

/// One notification: what a webhook receives as its JSON body and a command on stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The shape's version, 1.
    pub version: u32,
    /// What happened.
    pub event: EventKind,
    /// The ConvergeOp.
    pub op: String,
    /// Its env.
    pub env: String,
    /// The tick that raised it.
    pub tick_id: String,
    /// When that tick was recorded.
    pub timestamp: String,
    /// The outcome's action (`gated`, `reported`, `skipped-flap`), `null` for `unknown` and
    /// `recovered`.
    pub outcome: Option<String>,
    /// The rule whose outcome it is.
    pub rule: Option<String>,
    /// The rule's `why`.
    pub why: Option<String>,
    /// The resource, in resource mode.
    pub resource: Option<String>,
    /// The dispatched op.
    pub target: Option<String>,
    /// The gate a `gated` outcome stopped at.
    pub gate: Option<String>,
    /// The command that approves that gate.
    pub approve: Option<String>,
    /// Where it can be approved, when known.
    pub url: Option<String>,
    /// The outcome's reason, or the tick's summary line for `unknown` and `recovered`.
    pub reason: Option<String>,
}

impl Event {
    fn of_tick(kind: EventKind, record: &TickRecord) -> Event {
        Event {
            version: 1,
            event: kind,
            op: record.op.clone(),
            env: record.env.clone(),
            tick_id: record.id.clone(),
            timestamp: record.timestamp.clone(),
            outcome: None,
            rule: None,
            why: None,
            resource: None,
            target: None,
            gate: None,
            approve: None,
            url: None,
            reason: Some(record.log.clone()),
        }
    }

    /// Returns true for the events that report a problem (all but `recovered`).
    pub fn is_problem(&self) -> bool {
        self.event != EventKind::Recovered
    }
}

/// True when `o` is a `given-up` outcome of the tick that gave up (its restart entry was stamped
/// with this tick's start).
fn gave_up_now(record: &TickRecord, o: &crate::tick::Outcome) -> bool {
    record.restarts.iter().any(|e| {
        e.rule_id == o.rule_id && e.resource == o.resource && e.given_up_at.as_deref() == Some(&record.started_at)
    })
}

/// Returns true when `record` is an unknown tick: something was not observed.
pub fn is_unknown(record: &TickRecord) -> bool {
    record.summary.unobserved > 0
}

/// What [`events`] needs beyond the tick record.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The `why` of a rule of this op, by rule id.
    pub why: &'a dyn Fn(&str) -> Option<String>,
    /// How many unknown ticks in a row end with this one (1 for the first).
    pub unknown_run: u64,
    /// After how many unknown ticks in a row `unknown` is sent.
    pub unknown_ticks: u64,
    /// Whether the last notification recorded for this op reported a problem.
    pub problem_open: bool,
    /// Whether `unknown` was already sent since the last notification that reported no problem
    /// (for the run of unknown ticks this one continues).
    pub unknown_sent: bool,
}

/// Returns the events `record` raises, in outcome order, then `unknown` or `recovered`.
pub fn events(record: &TickRecord, cx: &Context<'_>) -> Vec<Event> {
    let mut out = Vec::new();
    for o in &record.outcomes {
        let kind = match o.action {
            Action::Gated => EventKind::Gated,
            Action::SkippedFlap => EventKind::Damped,
            // Sent once, by the tick that gave up; later ticks keep the state without a send.
            Action::GivenUp if gave_up_now(record, o) => EventKind::GivenUp,
            Action::Ineffective => EventKind::Ineffective,
            Action::Reported if o.dispatch_failed == Some(true) => EventKind::FailedDispatch,
            Action::Proposed if o.reason.as_deref().is_some_and(|r| r.starts_with(crate::tick::proposal::WRITTEN)) => {
                EventKind::Proposed
            }
            _ => continue,
        };
        let approve = o.approve_command();
        out.push(Event {
            outcome: Some(o.action.as_str().to_owned()),
            rule: Some(o.rule_id.clone()),
            why: (cx.why)(&o.rule_id),
            resource: o.resource.clone(),
            target: o.op.clone(),
            gate: o.gate_name.clone(),
            approve,
            url: o.url.clone(),
            reason: o.reason.clone(),
            ..Event::of_tick(kind, record)
        });
    }
    if is_unknown(record) && cx.unknown_run >= cx.unknown_ticks.max(1) && !cx.unknown_sent {
        out.push(Event::of_tick(EventKind::Unknown, record));
    }
    let given_up = record.restarts.iter().any(|e| e.given_up_at.is_some());
    if out.is_empty() && cx.problem_open && !is_unknown(record) && record.error.is_none() && !given_up {
        out.push(Event::of_tick(EventKind::Recovered, record));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tick::{Outcome, Summary};

    fn outcome(rule: &str, action: Action) -> Outcome {
        Outcome {
            rule_id: rule.into(),
            action,
            source: None,
            op: Some("ship".into()),
            resource: Some("web".into()),
            gate_name: (action == Action::Gated).then(|| "hold".into()),
            gate_owner: None,
            reason: None,
            url: None,
            branch: None,
            dispatch_failed: None,
            entities: Vec::new(),
        }
    }

    fn record(outcomes: Vec<Outcome>, unobserved: u64) -> TickRecord {
        TickRecord {
            version: 1,
            id: "t1".into(),
            op: "c".into(),
            env: "e".into(),
            started_at: String::new(),
            timestamp: "2026-03-01T10:00:00.000Z".into(),
            fired_rule_ids: vec![],
            fired: vec![],
            outcomes,
            flap: vec![],
            components: None,
            resources: None,
            summary: Summary { unobserved, ..Summary::default() },
            log: "converge(e): ...".into(),
            ..TickRecord::default()
        }
    }

    fn kinds(record: &TickRecord, unknown_run: u64, problem_open: bool) -> Vec<EventKind> {
        let why = |rule: &str| Some(format!("why of {rule}"));
        let cx = Context { why: &why, unknown_run, unknown_ticks: 3, problem_open, unknown_sent: problem_open };
        events(record, &cx).into_iter().map(|e| e.event).collect()
    }

    #[test]
    fn each_problem_outcome_raises_one_event_with_its_rule_why_and_approve_command() {
        let mut failed = outcome("probe", Action::Reported);
        failed.dispatch_failed = Some(true);
        let r = record(
            vec![
                outcome("guard", Action::Gated),
                failed,
                outcome("flap", Action::SkippedFlap),
                outcome("ok", Action::Ran),
            ],
            0,
        );
        assert_eq!(kinds(&r, 0, false), [EventKind::Gated, EventKind::FailedDispatch, EventKind::Damped]);
        let ineffective = record(vec![outcome("fix", Action::Ineffective), outcome("ok", Action::Ran)], 0);
        assert_eq!(kinds(&ineffective, 0, false), [EventKind::Ineffective]);
        let why = |rule: &str| Some(format!("why of {rule}"));
        let cx = Context { why: &why, unknown_run: 0, unknown_ticks: 3, problem_open: false, unknown_sent: false };
        let gated = &events(&r, &cx)[0];
        assert_eq!(gated.approve.as_deref(), Some("chant approve ship hold --resource web"));
        assert_eq!(gated.why.as_deref(), Some("why of guard"));
        assert_eq!((gated.tick_id.as_str(), gated.rule.as_deref()), ("t1", Some("guard")));
        assert_eq!(kinds(&record(vec![outcome("plain", Action::Reported)], 0), 0, false), []);
    }

    #[test]
    fn given_up_is_sent_by_the_tick_that_gave_up_and_no_recovery_while_it_stands() {
        let mut gave = record(vec![outcome("restart", Action::GivenUp)], 0);
        gave.started_at = "2026-03-02T10:02:00.000Z".into();
        gave.restarts = vec![crate::tick::limit::RestartEntry {
            rule_id: "restart".into(),
            resource: Some("web".into()),
            at: Vec::new(),
            given_up_at: Some(gave.started_at.clone()),
        }];
        assert_eq!(kinds(&gave, 0, false), [EventKind::GivenUp]);
        let mut later = gave.clone();
        later.started_at = "2026-03-02T10:03:00.000Z".into();
        assert_eq!(kinds(&later, 0, true), [], "sent once; and no recovery while it stands");
        later.outcomes.clear();
        assert_eq!(kinds(&later, 0, true), [], "a quiet tick of a given-up op is no recovery");
        later.restarts.clear();
        assert_eq!(kinds(&later, 0, true), [EventKind::Recovered]);
    }

    #[test]
    fn unknown_is_sent_once_when_the_run_reaches_the_threshold() {
        let r = record(vec![], 2);
        assert_eq!(kinds(&r, 2, false), []);
        assert_eq!(kinds(&r, 3, false), [EventKind::Unknown]);
        assert_eq!(kinds(&r, 4, true), [], "not again while the run lasts, and no recovery while unknown");
    }

    #[test]
    fn unknown_is_sent_for_a_run_past_the_threshold_that_was_never_notified() {
        let r = record(vec![], 2);
        let why = |_: &str| None;
        let at = |run, sent| {
            let cx = Context { why: &why, unknown_run: run, unknown_ticks: 3, problem_open: sent, unknown_sent: sent };
            events(&r, &cx).into_iter().map(|e| e.event).collect::<Vec<_>>()
        };
        // Already unknown for 7 ticks when the operator started, or the 3rd was a hand tick.
        assert_eq!(at(7, false), [EventKind::Unknown]);
        assert_eq!(at(8, true), [], "sent once for the run");
    }

    #[test]
    fn recovered_follows_a_problem_only_on_a_clean_tick() {
        let clean = record(vec![outcome("ok", Action::Ran)], 0);
        assert_eq!(kinds(&clean, 0, true), [EventKind::Recovered]);
        assert_eq!(kinds(&clean, 0, false), [], "nothing to recover from");
        let mut failed = clean.clone();
        failed.error = Some("observer failed".into());
        assert_eq!(kinds(&failed, 0, true), []);
    }
}
