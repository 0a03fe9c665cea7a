//! One operator round: for each ConvergeOp, lease, due check, tick, fence, and one report line.
//!
//! The per-op lines follow the original's formats:
//! `operator: <op>@<env> ticked=1 status=ok`, `skipped=1(lease-held:<holder>)`,
//! `skipped=1(not-due:<cron>)`, `failed=1 error="..."`, `fenced=1(...)`,
//! `error=1(lease acquire failed — ...)`, and `interrupted=1(...)` for a tick a stop cut short.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;

use crate::lease::{self, Acquisition, Held, LeaseKey, LeaseStore, Renewer};
use crate::ledger::{self, ShardKey};
use crate::model::OpDocument;
use crate::project::Project;
use crate::schedule::{self, Decision, LastTick, NotDueReason, Schedule};
use crate::tick::{self, Dispatcher, LeaseStamp, TickOptions, TickRecord};

use super::chain;

/// One ConvergeOp the operator ticks.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its op.json.
    pub doc: OpDocument,
    /// Its env.
    pub env: String,
    /// Its schedule, validated (`None`: unscheduled).
    pub schedule: Option<Schedule>,
    /// Where its ticks are recorded.
    pub key: ShardKey,
    /// Its lease.
    pub lease: LeaseKey,
}

impl Target {
    /// Builds the target of a ConvergeOp.
    ///
    /// # Errors
    ///
    /// One line naming the op: a schedule or name the runtime cannot use.
    pub fn new(doc: &OpDocument) -> Result<Target, String> {
        let env = doc.env.clone().unwrap_or_default();
        let member = doc.member.as_deref();
        let schedule = doc.schedule.as_ref().map(Schedule::new).transpose().map_err(|e| e.to_string())?;
        let key = ShardKey::converge(member, &env, &doc.name).map_err(|e| chain(&e))?;
        let lease = LeaseKey::new(member, &doc.name).map_err(|e| chain(&e))?;
        Ok(Target { doc: doc.clone(), env, schedule, key, lease })
    }

    /// Returns the op's name.
    pub fn op(&self) -> &str {
        &self.doc.name
    }
}

/// What happened to one op in a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpEvent {
    /// The tick ran and was recorded without error.
    Ticked {
        /// The first gate a dispatch stopped at, if any.
        gate: Option<String>,
    },
    /// The tick failed: it could not run or be recorded, or it was recorded with an error.
    Failed {
        /// Why, in one line.
        error: String,
    },
    /// The tick ran, but the lease was lost meanwhile; its record is still written.
    Fenced,
    /// Another holder's lease is live (or another writer won the race for it).
    LeaseHeld {
        /// The holder, when known.
        holder: Option<String>,
    },
    /// The op is not due.
    NotDue {
        /// Why.
        reason: NotDueReason,
    },
    /// The lease could not be acquired for a reason other than another holder: a stale lock, a
    /// locked or unreachable remote, a storage failure.
    LeaseError {
        /// Why, naming the path or the remote.
        error: String,
    },
    /// A stop cut the tick short; an interrupted tick was recorded.
    Interrupted {
        /// The grace period the tick was given.
        grace: Duration,
    },
}

impl OpEvent {
    /// Returns true for the events that make `--once` exit 1.
    pub fn is_failure(&self) -> bool {
        matches!(self, OpEvent::Failed { .. } | OpEvent::Interrupted { .. })
    }
}

/// One op's line of a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpReport {
    /// The op.
    pub op: String,
    /// Its env.
    pub env: String,
    /// What happened.
    pub event: OpEvent,
    /// The tick record, when one was written.
    pub record: Option<TickRecord>,
    /// Anything else a human should know (a push that did not land).
    pub warnings: Vec<String>,
}

impl fmt::Display for OpReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "operator: {}@{} ", self.op, self.env)?;
        match &self.event {
            OpEvent::Ticked { gate: None } => f.write_str("ticked=1 status=ok"),
            OpEvent::Ticked { gate: Some(g) } => write!(f, "ticked=1 status=ok gate=\"{g}\""),
            OpEvent::Failed { error } => write!(f, "failed=1 error=\"{}\"", error.replace('"', "'")),
            OpEvent::Fenced => f.write_str("fenced=1(lease lost mid-tick — ledger record still written)"),
            OpEvent::LeaseHeld { holder: Some(h) } => write!(f, "skipped=1(lease-held:{h})"),
            OpEvent::LeaseHeld { holder: None } => f.write_str("skipped=1(lease-held)"),
            OpEvent::NotDue { reason } => write!(f, "skipped=1(not-due:{reason})"),
            OpEvent::LeaseError { error } => write!(f, "error=1(lease acquire failed — {error})"),
            OpEvent::Interrupted { grace } => write!(
                f,
                "interrupted=1(the operator stopped during the tick and it did not finish within {}; an interrupted tick is recorded)",
                crate::duration::format(*grace)
            ),
        }
    }
}

/// The tick a round is running right now, so a stop can record it as interrupted.
#[derive(Debug, Clone)]
pub struct InFlight {
    /// The op.
    pub target: Target,
    /// The lease it runs under.
    pub stamp: LeaseStamp,
    /// When it started.
    pub started_at: Timestamp,
}

/// A lease the operator holds, and whether it may be released (with a remote: only once the
/// tick record it covers reached the remote).
#[derive(Debug, Clone)]
pub struct HeldLease {
    /// The lease.
    pub held: Held,
    /// False while a tick record under it is not on the remote.
    pub releasable: bool,
}

/// Everything a round needs, shared between the daemon and its round thread.
#[derive(Clone)]
pub struct RoundContext {
    /// The project.
    pub project: Arc<Project>,
    /// The leases of the project's repository.
    pub leases: LeaseStore,
    /// This operator's holder id, for the life of the process.
    pub holder: String,
    /// The lease TTL.
    pub ttl: Duration,
    /// How dispatched runs start.
    pub dispatcher: Dispatcher,
    /// Set when a stop arrived: no new tick starts.
    pub stopping: Arc<AtomicBool>,
    /// The leases held, by op.
    pub held: Arc<Mutex<BTreeMap<String, HeldLease>>>,
    /// The tick running now.
    pub in_flight: Arc<Mutex<Option<InFlight>>>,
}

impl RoundContext {
    /// Creates the context of an operator over `project`.
    pub fn new(project: Arc<Project>, holder: String, ttl: Duration, dispatcher: Dispatcher) -> Self {
        let leases = LeaseStore::new(&project.ledger);
        RoundContext {
            project,
            leases,
            holder,
            ttl,
            dispatcher,
            stopping: Arc::default(),
            held: Arc::default(),
            in_flight: Arc::default(),
        }
    }

    fn held_map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, HeldLease>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_in_flight(&self, value: Option<InFlight>) {
        *self.in_flight.lock().unwrap_or_else(PoisonError::into_inner) = value;
    }

    /// Runs one round over `targets`, calling `report` after each op. Ops are visited in order;
    /// once `stopping` is set, no new tick starts.
    pub fn run(&self, targets: &[Target], report: &mut dyn FnMut(OpReport)) {
        let round_start = match crate::clock::now() {
            Ok(now) => now,
            Err(e) => {
                for t in targets {
                    report(OpReport::new(t, OpEvent::Failed { error: e.to_string() }));
                }
                return;
            }
        };
        for target in targets {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            report(self.op(target, round_start));
        }
    }

    fn op(&self, target: &Target, round_start: Timestamp) -> OpReport {
        let failed = |error: String| OpReport::new(target, OpEvent::Failed { error });
        let now = match crate::clock::now() {
            Ok(now) => now,
            Err(e) => return failed(e.to_string()),
        };
        let held = match self.leases.acquire(&target.lease, &self.holder, self.ttl, now) {
            Err(e) => return OpReport::new(target, OpEvent::LeaseError { error: chain(&e) }),
            Ok(Acquisition::Refused { held_by, .. }) => {
                self.held_map().remove(target.op());
                return OpReport::new(target, OpEvent::LeaseHeld { holder: held_by.map(|r| r.holder) });
            }
            Ok(Acquisition::Acquired { held, .. }) => held,
        };
        let releasable = self.held_map().get(target.op()).is_none_or(|h| h.releasable);
        self.held_map().insert(target.op().to_owned(), HeldLease { held: held.clone(), releasable });

        let mut warnings = Vec::new();
        let ledger = &self.project.ledger;
        if ledger.config().remote.is_some()
            && let Err(reason) = sync_before_due_check(ledger)
        {
            // Deciding due-ness from a ledger that may lack another clone's tick could tick twice.
            return failed(format!(
                "the ledger could not be fetched before the due check, so the op did not tick: {reason}"
            ));
        }
        if let Err(e) = lease::check_stale_lock(&ledger.repo().local(), ledger::BRANCH) {
            return failed(chain(&e));
        }
        let last = match ledger.latest(&target.key) {
            Ok(latest) => latest.record.and_then(|r| LastTick::from_record(&r.value)),
            Err(e) => return failed(chain(&e)),
        };
        if let Decision::NotDue(reason) = schedule::decide(target.schedule.as_ref(), last, round_start, now) {
            return OpReport { warnings, ..OpReport::new(target, OpEvent::NotDue { reason }) };
        }

        let stamp = held.record.stamp();
        self.set_in_flight(Some(InFlight { target: target.clone(), stamp: stamp.clone(), started_at: now }));
        let renewer = Renewer::start(self.leases.clone(), held.clone(), self.ttl);
        let options = TickOptions { dispatcher: self.dispatcher.clone(), lease: Some(stamp) };
        let outcome = tick::execute(&self.project, &target.doc, &options);
        let (held, _renewal_ended) = renewer.stop(held);
        self.set_in_flight(None);

        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(e) => {
                self.held_map().insert(target.op().to_owned(), HeldLease { held, releasable: true });
                return OpReport { warnings, ..failed(chain(&e)) };
            }
        };
        warnings.extend(outcome.receipt.warnings.iter().cloned());
        let pushed = ledger.config().remote.is_none() || outcome.receipt.pushed();
        self.held_map().insert(target.op().to_owned(), HeldLease { held: held.clone(), releasable: pushed });
        let fenced = match self.leases.still_holds(&held) {
            Ok(holds) => !holds,
            Err(e) => {
                warnings.push(format!("the fence check could not read the lease: {}", chain(&e)));
                true
            }
        };
        let record = outcome.record;
        let event = if fenced {
            self.held_map().remove(target.op());
            OpEvent::Fenced
        } else if let Some(error) = &record.error {
            OpEvent::Failed { error: error.clone() }
        } else {
            let gate = record.outcomes.iter().find_map(|o| o.gate_name.clone());
            OpEvent::Ticked { gate }
        };
        OpReport { op: target.op().to_owned(), env: target.env.clone(), event, record: Some(record), warnings }
    }

    /// Releases every lease held whose tick record is on the remote; returns warnings for those
    /// kept (they expire on their own) and those that could not be released.
    pub fn release_all(&self) -> (usize, Vec<String>) {
        let held: Vec<(String, HeldLease)> = std::mem::take(&mut *self.held_map()).into_iter().collect();
        let mut released = 0;
        let mut warnings = Vec::new();
        for (op, lease) in held {
            if !lease.releasable {
                warnings.push(format!(
                    "kept the lease of {op}: its tick record has not reached the remote, so the lease lapses on its own \
                     at {}",
                    lease.held.record.expires_at
                ));
                continue;
            }
            match self.leases.release(&lease.held) {
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) => warnings.push(format!("could not release the lease of {op}: {}", chain(&e))),
            }
        }
        (released, warnings)
    }

    /// Records the tick `in_flight` as interrupted: a tick record with `error`, no outcomes, and
    /// the flap runs of the op's newest record carried forward unchanged.
    ///
    /// # Errors
    ///
    /// One line saying why it could not be recorded.
    pub fn record_interrupted(&self, in_flight: &InFlight, why: &str) -> Result<TickRecord, String> {
        let project = &self.project;
        let target = &in_flight.target;
        let flap = project
            .ledger
            .latest(&target.key)
            .map_err(|e| chain(&e))?
            .record
            .and_then(|r| r.value.get("flap").cloned())
            .and_then(|f| serde_json::from_value(f).ok())
            .unwrap_or_default();
        let summary = tick::record::Summary::default();
        let record = TickRecord {
            version: 1,
            id: crate::id::uuid(),
            op: target.op().to_owned(),
            env: target.env.clone(),
            started_at: crate::clock::format(in_flight.started_at),
            timestamp: crate::clock::format(crate::clock::now().map_err(|e| e.to_string())?),
            fired_rule_ids: Vec::new(),
            fired: Vec::new(),
            outcomes: Vec::new(),
            flap,
            components: None,
            resources: None,
            summary,
            log: summary.line(&target.env),
            lease: Some(in_flight.stamp.clone()),
            git_sha: project.git_sha(),
            op_digest: tick::execute::op_digest(&target.doc),
            error: Some(project.redactor.record(why)),
        };
        let line = record.to_line().map_err(|e| e.to_string())?;
        project.ledger.append(&target.key, &line).map_err(|e| chain(&e))?;
        Ok(record)
    }
}

/// How often the ledger is synchronised before a due check gives up.
const SYNC_TRIES: u32 = 5;

/// Fetches (and integrates) the remote ledger, retrying a sync that did not complete: another
/// process of the same clone may hold the tracking ref's lock for a moment.
fn sync_before_due_check(ledger: &crate::ledger::Ledger) -> Result<(), String> {
    let mut reason = String::new();
    for attempt in 1..=SYNC_TRIES {
        match ledger.sync() {
            Ok(report) => match report.push {
                ledger::PushStatus::NotPushed { reason: why, .. } => reason = why,
                _ => return Ok(()),
            },
            Err(e) => reason = chain(&e),
        }
        std::thread::sleep(Duration::from_millis(25 * u64::from(attempt)));
    }
    Err(reason)
}

impl OpReport {
    fn new(target: &Target, event: OpEvent) -> OpReport {
        OpReport { op: target.op().to_owned(), env: target.env.clone(), event, record: None, warnings: Vec::new() }
    }
}

/// Returns the targets of `project`'s ConvergeOps, sorted by name, filtered by `env`; an op
/// whose target cannot be built is returned as an error line for its report.
pub fn targets(project: &Project, env: Option<&str>) -> Vec<Result<Target, (String, String, String)>> {
    project
        .catalog
        .converge_ops()
        .filter(|d| env.is_none_or(|e| d.env.as_deref() == Some(e)))
        .map(|d| Target::new(d).map_err(|e| (d.name.clone(), d.env.clone().unwrap_or_default(), e)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: OpEvent) -> String {
        OpReport { op: "staging-converge".into(), env: "staging".into(), event, record: None, warnings: Vec::new() }
            .to_string()
    }

    #[test]
    fn lines_follow_the_original_formats() {
        let p = "operator: staging-converge@staging ";
        assert_eq!(line(OpEvent::Ticked { gate: None }), format!("{p}ticked=1 status=ok"));
        assert_eq!(line(OpEvent::Ticked { gate: Some("g".into()) }), format!("{p}ticked=1 status=ok gate=\"g\""));
        assert_eq!(
            line(OpEvent::LeaseHeld { holder: Some("h:1:x".into()) }),
            format!("{p}skipped=1(lease-held:h:1:x)")
        );
        assert_eq!(line(OpEvent::LeaseHeld { holder: None }), format!("{p}skipped=1(lease-held)"));
        let reason = NotDueReason::NoFire { cron: "*/10 * * * *".into(), next: None };
        assert_eq!(line(OpEvent::NotDue { reason }), format!("{p}skipped=1(not-due:*/10 * * * *)"));
        assert_eq!(line(OpEvent::Failed { error: "say \"x\"".into() }), format!("{p}failed=1 error=\"say 'x'\""));
        assert_eq!(line(OpEvent::Fenced), format!("{p}fenced=1(lease lost mid-tick — ledger record still written)"));
        assert_eq!(line(OpEvent::LeaseError { error: "e".into() }), format!("{p}error=1(lease acquire failed — e)"));
        assert!(
            line(OpEvent::Interrupted { grace: Duration::from_secs(10) }).starts_with(&format!("{p}interrupted=1("))
        );
    }

    #[test]
    fn only_failed_and_interrupted_ticks_fail_once() {
        assert!(OpEvent::Failed { error: String::new() }.is_failure());
        assert!(OpEvent::Interrupted { grace: Duration::ZERO }.is_failure());
        for ok in [
            OpEvent::Ticked { gate: None },
            OpEvent::Fenced,
            OpEvent::LeaseHeld { holder: None },
            OpEvent::LeaseError { error: String::new() },
        ] {
            assert!(!ok.is_failure(), "{ok:?}");
        }
    }
}
