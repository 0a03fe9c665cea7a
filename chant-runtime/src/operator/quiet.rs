//! What the operator prints: its **lines** ([`Line`]), each of a [`LineKind`] that says where it
//! goes (a report or a heartbeat on stdout, a note on stderr), and the **quiet filter**
//! ([`Quiet`]) that keeps a daemon left running silent while nothing happens.
//!
//! An op's line is printed when something happened to it: its tick found drift, dispatched,
//! reported or stopped at a gate; it failed, was fenced or interrupted; its lease changed hands
//! (another holder took it, or this operator took it back); or its health changed (`in-sync` to
//! `unknown` and back). Ops seen `in-sync` or not due, round after round, print nothing. When
//! no line was printed for the heartbeat period, one heartbeat line says the operator is alive
//! and what it watches. Verbose (`-v`, and always with `--once`, whose one round is its result)
//! prints every op's line and the per-round notes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::tick::health::{Health, HealthState};
use crate::tick::record::Action;

use super::round::{OpEvent, OpReport};

/// The default time without a line after which the daemon prints a heartbeat.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(600);

/// Where a line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// An op's line: the operator's primary output (stdout).
    Report,
    /// A heartbeat: the operator is alive and nothing happened (stdout).
    Heartbeat,
    /// A diagnostic: start-up, warnings, change signals, the remote, the stop (stderr).
    Note,
}

/// One line the operator prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Where it goes.
    pub kind: LineKind,
    /// The text, without a newline.
    pub text: String,
}

impl Line {
    /// A diagnostic line.
    pub fn note(text: impl Into<String>) -> Line {
        Line { kind: LineKind::Note, text: text.into() }
    }

    /// Returns true for the lines of the operator's primary output (stdout).
    pub fn is_primary(&self) -> bool {
        matches!(self.kind, LineKind::Report | LineKind::Heartbeat)
    }
}

/// Who holds an op's lease, as the last round saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LeaseSeen {
    /// This operator.
    Ours,
    /// Another holder (when known).
    Theirs(Option<String>),
}

/// What the filter remembers of one op.
#[derive(Debug, Clone, Default)]
struct Seen {
    health: Option<HealthState>,
    lease: Option<LeaseSeen>,
    /// When the suspension last seen was recorded (its `since`).
    suspended: Option<String>,
}

/// The quiet filter of a daemon's lines.
#[derive(Debug)]
pub struct Quiet {
    verbose: bool,
    heartbeat: Duration,
    last_line: Instant,
    rounds: u64,
    ops: BTreeMap<(String, String), Seen>,
}

impl Quiet {
    /// A filter that prints every line when `verbose`, and a heartbeat after `heartbeat` without
    /// a line; `now` starts the first heartbeat period.
    pub fn new(verbose: bool, heartbeat: Duration, now: Instant) -> Quiet {
        Quiet { verbose, heartbeat, last_line: now, rounds: 0, ops: BTreeMap::new() }
    }

    /// Returns true when every line is printed.
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// Takes one op's report of a round; returns its line when it is to be printed.
    pub fn report(&mut self, report: &OpReport, now: Instant) -> Option<Line> {
        let seen = self.ops.entry((report.op.clone(), report.env.clone())).or_default();
        let eventful = eventful(seen, report);
        if eventful || self.verbose {
            self.last_line = now;
            Some(Line { kind: LineKind::Report, text: format!("{report}{}", reported(report)) })
        } else {
            None
        }
    }

    /// Marks the end of a round; returns a heartbeat when no line was printed for the heartbeat
    /// period (never when verbose: every round prints then).
    pub fn round_done(&mut self, now: Instant) -> Option<Line> {
        self.rounds += 1;
        if self.verbose || now.duration_since(self.last_line) < self.heartbeat {
            return None;
        }
        let quiet_for = now.duration_since(self.last_line);
        let mut words: BTreeMap<&'static str, usize> = BTreeMap::new();
        for seen in self.ops.values() {
            let word = match (&seen.lease, seen.health) {
                (Some(LeaseSeen::Theirs(_)), _) => "lease-held",
                (_, Some(h)) => h.as_str(),
                (_, None) => "not-due",
            };
            *words.entry(word).or_default() += 1;
        }
        let counts: Vec<String> = words.iter().map(|(w, n)| format!("{w}={n}")).collect();
        let text = format!(
            "operator: heartbeat: {} round(s) in {} with nothing to report; {} op(s): {}",
            self.rounds,
            chant_lexicon::duration::format(Duration::from_secs(quiet_for.as_secs().max(1))),
            self.ops.len(),
            counts.join(" ")
        );
        self.last_line = now;
        self.rounds = 0;
        Some(Line { kind: LineKind::Heartbeat, text })
    }
}

/// How many entity names an operator line shows of one outcome before it counts the rest.
const NAMES_SHOWN: usize = 5;

/// What the tick reported, for the end of its line: `; reported adopt-report [files/stray.conf]`,
/// one entry per `reported` outcome (a dispatch that failed is named by the health word already,
/// as a `ran` is), naming the resource or the entities it is about. Empty when nothing was.
fn reported(report: &OpReport) -> String {
    let Some(record) = report.record.as_ref().filter(|_| matches!(report.event, OpEvent::Ticked { .. })) else {
        return String::new();
    };
    let said: Vec<String> = record
        .outcomes
        .iter()
        .filter(|o| o.action == Action::Reported && o.dispatch_failed != Some(true))
        .map(|o| {
            let p = |n: &String| crate::terminal::printable(n).to_string();
            let mut names: Vec<String> = o.resource.iter().map(p).collect();
            names.extend(o.entities.iter().take(NAMES_SHOWN).map(p));
            let more = o.entities.len().saturating_sub(NAMES_SHOWN);
            let more = if more > 0 { format!(", +{more} more") } else { String::new() };
            let names = if names.is_empty() { String::new() } else { format!(" [{}{more}]", names.join(", ")) };
            format!("reported {}{names}", crate::terminal::printable(&o.rule_id))
        })
        .collect();
    if said.is_empty() { String::new() } else { format!("; {}", said.join(", ")) }
}

/// Updates what is remembered of an op from its report; returns true when something happened.
fn eventful(seen: &mut Seen, report: &OpReport) -> bool {
    let lease = match &report.event {
        OpEvent::LeaseHeld { holder } => Some(LeaseSeen::Theirs(holder.clone())),
        // Released for the peer to take: the peer's from now on.
        OpEvent::GivenBack { to } => Some(LeaseSeen::Theirs(Some(to.clone()))),
        OpEvent::LeaseError { .. } => None,
        _ => Some(LeaseSeen::Ours),
    };
    // A lease that changed hands; the first sight of this operator holding it is not a change.
    let lease_changed = match (&seen.lease, &lease) {
        (_, None) => false,
        (None, Some(LeaseSeen::Ours)) => false,
        (before, now) => before != now,
    };
    if lease.is_some() {
        seen.lease = lease;
    }
    let happened = match &report.event {
        OpEvent::Failed { .. } | OpEvent::LeaseError { .. } | OpEvent::Interrupted { .. } | OpEvent::Fenced => true,
        OpEvent::LeaseHeld { .. } | OpEvent::GivenBack { .. } | OpEvent::NotDue { .. } => false,
        // Said once, when the suspension is first seen (and again after a resume and a new one).
        OpEvent::Suspended { suspension } => {
            let first = seen.suspended.as_ref() != Some(&suspension.since);
            seen.suspended = Some(suspension.since.clone());
            first
        }
        OpEvent::Ticked { gate } => {
            let health = Health::of_tick(report.record.as_ref()).state;
            let acted = report.record.iter().flat_map(|r| &r.outcomes).any(|o| {
                o.is_dispatch()
                    || matches!(o.action, Action::Reported | Action::Gated | Action::Proposed)
                    || o.dispatch_failed == Some(true)
            });
            // First sight: only a word other than in-sync is news.
            let changed = match seen.health {
                None => health != HealthState::InSync,
                Some(before) => before != health,
            };
            seen.health = Some(health);
            gate.is_some() || acted || health == HealthState::Drifted || changed
        }
    };
    happened || lease_changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tick::TickRecord;

    fn report(event: OpEvent, record: Option<serde_json::Value>) -> OpReport {
        OpReport {
            op: "site-converge".into(),
            env: "site".into(),
            event,
            record: record.map(|r| serde_json::from_value::<TickRecord>(r).unwrap()),
            warnings: Vec::new(),
            timings: Default::default(),
        }
    }

    fn symptom(status: &str) -> serde_json::Value {
        serde_json::json!({"symptom": {"env": "site", "status": status, "components": [], "createCount": 0,
            "updateCount": 0, "deleteCount": 0, "adoptCount": 0, "runtimeCount": 0,
            "unobservedCount": u64::from(status == "unknown"), "unobservedReasons": [], "totalCount": 1}})
    }

    fn ticked(status: &str) -> OpReport {
        report(OpEvent::Ticked { gate: None }, Some(symptom(status)))
    }

    #[test]
    fn an_in_sync_op_round_after_round_prints_nothing_but_a_change_of_health_does() {
        let t0 = Instant::now();
        let mut q = Quiet::new(false, Duration::from_secs(600), t0);
        assert_eq!(q.report(&ticked("reconciled"), t0), None);
        assert_eq!(q.report(&ticked("reconciled"), t0), None);
        let unknown = q.report(&ticked("unknown"), t0).unwrap();
        assert_eq!(unknown.kind, LineKind::Report);
        assert!(unknown.text.contains("status=unknown"), "{}", unknown.text);
        assert_eq!(q.report(&ticked("unknown"), t0), None, "an unchanged unknown is said once");
        assert!(q.report(&ticked("reconciled"), t0).is_some(), "the recovery is said");
        assert!(q.report(&ticked("drifted"), t0).is_some(), "drift is always said");
        assert!(q.report(&ticked("drifted"), t0).is_some());
    }

    #[test]
    fn a_dispatch_a_failure_and_a_lease_changing_hands_are_said() {
        let t0 = Instant::now();
        let mut q = Quiet::new(false, Duration::from_secs(600), t0);
        let mut ran = symptom("reconciled");
        ran["outcomes"] = serde_json::json!([{"ruleId": "r", "action": "reported", "op": "x"}]);
        assert!(q.report(&report(OpEvent::Ticked { gate: None }, Some(ran)), t0).is_some());
        let not_due = || {
            report(
                OpEvent::NotDue {
                    reason: crate::schedule::NotDueReason::TickedThisRound { at: jiff::Timestamp::UNIX_EPOCH },
                },
                None,
            )
        };
        assert_eq!(q.report(&not_due(), t0), None);
        let held = || report(OpEvent::LeaseHeld { holder: Some("other:1".into()) }, None);
        assert!(q.report(&held(), t0).is_some(), "another holder took the lease");
        assert_eq!(q.report(&held(), t0), None, "still theirs: nothing new");
        assert!(q.report(&not_due(), t0).is_some(), "taken back");
        assert!(q.report(&report(OpEvent::Failed { error: "boom".into() }, None), t0).is_some());
    }

    #[test]
    fn the_line_names_the_reported_rules_and_the_adopted_entities_they_are_about() {
        let t0 = Instant::now();
        let mut q = Quiet::new(false, Duration::from_secs(600), t0);
        let mut adopt = symptom("reconciled");
        let strays: Vec<String> = (1..=7).map(|i| format!("files/stray-{i}.conf")).collect();
        adopt["outcomes"] = serde_json::json!([
            {"ruleId": "adopt-report", "action": "reported", "reason": "unowned", "entities": strays[..1]},
            {"ruleId": "drift-apply", "action": "reported", "op": "x", "dispatchFailed": true},
        ]);
        let line = q.report(&report(OpEvent::Ticked { gate: None }, Some(adopt.clone())), t0).unwrap();
        assert_eq!(
            line.text,
            "operator: site-converge@site ticked=1 status=failing(drift-apply -> x failed); reported adopt-report [files/stray-1.conf]"
        );
        adopt["outcomes"] = serde_json::json!([
            {"ruleId": "adopt-report", "action": "reported", "entities": strays},
            {"ruleId": "watch", "action": "reported", "resource": "app"},
            {"ruleId": "quiet", "action": "skipped-budget"},
        ]);
        let line = q.report(&report(OpEvent::Ticked { gate: None }, Some(adopt)), t0).unwrap();
        assert!(
            line.text.ends_with(
                "; reported adopt-report [files/stray-1.conf, files/stray-2.conf, files/stray-3.conf, files/stray-4.conf, files/stray-5.conf, +2 more], reported watch [app]"
            ),
            "{}",
            line.text
        );
        assert_eq!(q.report(&ticked("reconciled"), t0), None, "still in sync, nothing reported: nothing said");
    }

    #[test]
    fn a_heartbeat_comes_only_after_the_period_without_a_line_and_verbose_prints_all() {
        let t0 = Instant::now();
        let mut q = Quiet::new(false, Duration::from_secs(60), t0);
        assert_eq!(q.report(&ticked("reconciled"), t0), None);
        assert_eq!(q.round_done(t0 + Duration::from_secs(30)), None);
        let beat = q.round_done(t0 + Duration::from_secs(61)).unwrap();
        assert_eq!(beat.kind, LineKind::Heartbeat);
        assert_eq!(beat.text, "operator: heartbeat: 2 round(s) in 1m1s with nothing to report; 1 op(s): in-sync=1");
        assert_eq!(q.round_done(t0 + Duration::from_secs(62)), None, "the period starts again");
        let mut v = Quiet::new(true, Duration::from_secs(60), t0);
        assert!(v.report(&ticked("reconciled"), t0).is_some());
        assert_eq!(v.round_done(t0 + Duration::from_secs(3600)), None);
    }
}
