//! One operator round: for each ConvergeOp, under its lease ([`tick::leased()`], the one leased
//! tick: acquire or renew, renew while running, fence before every side effect), a due check,
//! the tick, and one report line. The operator keeps the leases it holds from round to round
//! ([`Release::Keep`]) and releases them when it stops (with a remote, it also gives back an op
//! that hashes to a live peer: `operator::claim`).
//!
//! The per-op lines follow the original's formats:
//! `operator: <op>@<env> ticked=1 status=<health>[(<detail>)] [<drifted>]` (the words of
//! [`tick::health`], and the first few entities that drifted),
//! `skipped=1(lease-held:<holder>)`, `skipped=1(given-back:<peer>)`,
//! `skipped=1(not-due:<cron>)`, `skipped=1(suspended:<reason>[, until <t>] by <who>)`,
//! `failed=1 error="..."`, `fenced=1(...)`,
//! `error=1(lease acquire failed — ...)`, and `interrupted=1(...)` for a tick a stop cut short.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::project::Project;
use crate::schedule::{self, Decision, LastTick, NotDueReason, Schedule};
use crate::tick::{self, Claim, Dispatcher, Landing, LeaseStamp, Leased, Release, TickOptions, TickRecord};
use chant_lexicon::model::OpDocument;
use chant_store::backoff::{Backoff, Growth, Limit};
use chant_store::lease::{self, Held, LeaseKey, LeaseStore};
use chant_store::ledger::{self, ShardKey, TypedLatest};

use super::chain;
use super::hooks::{Hooks, NoHooks, TickStats};

/// Why a ConvergeOp cannot be a target, or its interrupted tick could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    /// Its schedule cannot be used.
    #[error(transparent)]
    Schedule(#[from] schedule::Error),
    /// Its name cannot be a ledger path.
    #[error(transparent)]
    Ledger(#[from] ledger::Error),
    /// Its name cannot be a lease ref.
    #[error(transparent)]
    Lease(#[from] lease::Error),
    /// The tick could not be recorded.
    #[error(transparent)]
    Tick(#[from] tick::execute::Error),
    /// The op's lease is not this operator's to record under.
    #[error("the lease of {op} is not held by this operator (held by {})", holder.as_deref().unwrap_or("nobody"))]
    NotHeld {
        /// The op.
        op: String,
        /// Who holds it, when known.
        holder: Option<String>,
    },
}

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
    /// [`RoundError`]: a schedule or name the runtime cannot use.
    pub fn new(doc: &OpDocument) -> Result<Target, RoundError> {
        let env = doc.env.as_deref().unwrap_or_default().to_owned();
        let member = doc.member.as_deref();
        let schedule = doc.schedule.as_ref().map(Schedule::new).transpose()?;
        let key = ShardKey::converge(member, &env, &doc.name)?;
        let lease = LeaseKey::new(member, &doc.name)?;
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
    /// This operator held the lease, but the op hashes to a live peer: the lease was released
    /// for the peer to claim, and this operator did not tick the op.
    GivenBack {
        /// The peer the op hashes to.
        to: String,
    },
    /// A person suspended the op (`operator suspend`); the round did not tick it.
    Suspended {
        /// The suspension.
        suspension: super::suspend::Suspension,
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
    /// Returns true for the events that make `--once` exit 1: every `failed=` and `error=` line
    /// (a tick that failed, a lease that could not be acquired: a stale lock, an unreachable or
    /// locked remote) and an interrupted tick. A held lease, a fence and a not-due op are not.
    pub fn is_failure(&self) -> bool {
        matches!(self, OpEvent::Failed { .. } | OpEvent::LeaseError { .. } | OpEvent::Interrupted { .. })
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
    /// Where the op's time went.
    pub timings: OpTimings,
}

/// Where one op's time in a round went (the operator benchmark prints the split). Each part is
/// zero when the op did not get that far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpTimings {
    /// Taking or renewing the lease (with a remote: its fetch and push), and starting its renewer.
    pub lease: Duration,
    /// The due check: the ledger sync (with a remote), the stale-lock check, reading the newest
    /// tick record, the schedule decision.
    pub due: Duration,
    /// The tick, its append included.
    pub tick: Duration,
    /// The tick's append (the last fence check and the commit), part of `tick`.
    pub append: Duration,
    /// After the work: stopping the renewer and keeping the lease's book.
    pub after: Duration,
}

impl fmt::Display for OpReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "operator: {}@{} ", self.op, self.env)?;
        match &self.event {
            OpEvent::Ticked { gate } => {
                // The op's health from the tick just recorded: never `ok` for an env that could
                // not be observed (tick::health).
                let health = tick::health::Health::of_tick(self.record.as_ref());
                write!(f, "ticked=1 status={}", health.state)?;
                if let Some(d) = &health.detail {
                    write!(f, "({d})")?;
                }
                // What drifted (the first few, then `+N more`); what a rule reported is named
                // after the rule, at the end of the line.
                let about = self.record.as_ref().map(tick::health::drifted_names).unwrap_or_default();
                if !about.is_empty() {
                    write!(f, " [{about}]")?;
                }
                match gate {
                    Some(g) => write!(f, " gate=\"{g}\""),
                    None => Ok(()),
                }
            }
            OpEvent::Failed { error } => write!(f, "failed=1 error=\"{}\"", error.replace('"', "'")),
            OpEvent::Fenced => f.write_str("fenced=1(lease lost mid-tick — ledger record still written)"),
            OpEvent::LeaseHeld { holder: Some(h) } => write!(f, "skipped=1(lease-held:{h})"),
            OpEvent::LeaseHeld { holder: None } => f.write_str("skipped=1(lease-held)"),
            OpEvent::GivenBack { to } => write!(f, "skipped=1(given-back:{to})"),
            OpEvent::NotDue { reason } => write!(f, "skipped=1(not-due:{reason})"),
            OpEvent::Suspended { suspension } => write!(
                f,
                "skipped=1(suspended:{} by {})",
                crate::terminal::printable(&suspension.describe()),
                crate::terminal::printable(&suspension.by)
            ),
            OpEvent::LeaseError { error } => write!(f, "error=1(lease acquire failed — {error})"),
            OpEvent::Interrupted { grace } => write!(
                f,
                "interrupted=1(the operator stopped during the tick and it did not finish within {}; an interrupted tick is recorded)",
                chant_lexicon::duration::format(*grace)
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
    /// This operator's presence lease, once it announced itself (`operator::claim`).
    pub presence: Arc<Mutex<Option<Held>>>,
    /// The ops this operator gave back, by op: the peer, and until when it waits for the peer to
    /// claim them instead of stealing them back (`operator::claim`).
    pub given: Arc<Mutex<BTreeMap<String, (String, Timestamp)>>>,
    /// The tick running now.
    pub in_flight: Arc<Mutex<Option<InFlight>>>,
    /// Who is told what the round does (metrics, notifications); nobody by default.
    pub hooks: Arc<dyn Hooks>,
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
            presence: Arc::default(),
            given: Arc::default(),
            in_flight: Arc::default(),
            hooks: Arc::new(NoHooks),
        }
    }

    pub(super) fn held_map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, HeldLease>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn set_in_flight(&self, value: Option<InFlight>) {
        *self.in_flight.lock().unwrap_or_else(PoisonError::into_inner) = value;
    }

    /// Runs one round over `targets`, calling `report` after each op. Ops are visited in order;
    /// once `stopping` is set, no new tick starts. The ops named in `woken` were signalled by
    /// their lexicons' change streams: each is due this round whatever its schedule.
    ///
    /// Without a remote the ops are visited in the order given (by name), each under its own
    /// lease ([`tick::leased()`]). With one, where other operators may run the same ops in other
    /// clones, the round claims its ops in batches (`operator::claim`): first the ops that hash
    /// to this operator among the live holders it sees, then what nobody claimed; each op still
    /// ticks once, under its lease.
    pub fn run(&self, targets: &[Target], woken: &BTreeSet<String>, report: &mut dyn FnMut(OpReport)) {
        let round_start = self.project.ledger.clock().now();
        if self.leases.remote().is_some() {
            self.run_claimed(targets, woken, round_start, report);
            self.hooks.round_done(self.project.ledger.clock().now());
            return;
        }
        for target in targets {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let line = self.op(target, round_start, woken.contains(target.op()));
            self.hooks.reported(target, &line);
            report(line);
        }
        self.hooks.round_done(self.project.ledger.clock().now());
    }

    fn op(&self, target: &Target, round_start: Timestamp, signalled: bool) -> OpReport {
        let claim =
            Claim::Take { key: target.lease.clone(), holder: self.holder.clone(), ttl: self.ttl, wait: Duration::ZERO };
        let previous = self.held_map().get(target.op()).map(|h| h.releasable);
        let started = Instant::now();
        let mut timings = OpTimings::default();
        let mut work_ended = None;
        let leased = tick::leased(&self.leases, claim, Release::Keep, |fence| {
            timings.lease = started.elapsed();
            if let Some(fence) = fence {
                let releasable = previous.unwrap_or(true);
                self.held_map().insert(target.op().to_owned(), HeldLease { held: fence.held().clone(), releasable });
            }
            let (work, landing, stats) =
                self.due_then_tick(&self.project, target, round_start, signalled, fence, &mut timings);
            if let Some(stats) = stats {
                self.hooks.ticked(target, &stats);
            }
            work_ended = Some(Instant::now());
            (work, landing)
        });
        let ran = match leased {
            Leased::Failed(e) => {
                let mut report = OpReport::new(target, OpEvent::LeaseError { error: chain(&e) });
                report.timings.lease = started.elapsed();
                return report;
            }
            Leased::Refused { holder } => {
                self.hooks.lease(target, false);
                self.held_map().remove(target.op());
                let mut report = OpReport::new(target, OpEvent::LeaseHeld { holder });
                report.timings.lease = started.elapsed();
                return report;
            }
            Leased::Ran(ran) => ran,
        };
        if let Some(held) = ran.held.clone() {
            self.hooks.lease(target, ran.lost.is_none());
            if ran.lost.is_some() {
                self.held_map().remove(target.op());
            } else {
                let releasable = match ran.landing {
                    Landing::Nothing => self.held_map().get(target.op()).is_none_or(|h| h.releasable),
                    Landing::Pushed => true,
                    Landing::NotPushed => false,
                };
                self.held_map().insert(target.op().to_owned(), HeldLease { held, releasable });
            }
        }
        let mut report = self.report_of(target, ran.value, ran.lost.as_ref(), timings);
        report.warnings.extend(ran.warnings);
        report.timings.after = work_ended.map(|t| t.elapsed()).unwrap_or_default();
        report
    }

    /// The report line of the work done under `target`'s lease (`lost`: what the lease's
    /// renewer or fence found lost, beside the tick's own fence).
    pub(super) fn report_of(
        &self,
        target: &Target,
        work: Work,
        lost: Option<&tick::Lost>,
        timings: OpTimings,
    ) -> OpReport {
        let (event, record, mut warnings) = match work {
            Work::Stopped(event) => (event, None, Vec::new()),
            Work::Ticked(ticked) => match *ticked {
                Err(e) => (OpEvent::Failed { error: chain(&e) }, None, Vec::new()),
                Ok(outcome) => {
                    let record = outcome.record;
                    let event = if outcome.lost.is_some() || lost.is_some() {
                        self.hooks.lease(target, false);
                        OpEvent::Fenced
                    } else if let Some(error) = &record.error {
                        OpEvent::Failed { error: error.clone() }
                    } else {
                        OpEvent::Ticked { gate: record.outcomes.iter().find_map(|o| o.gate_name.clone()) }
                    };
                    (event, Some(record), outcome.receipt.warnings)
                }
            },
        };
        if let Some(tick::Lost::Unreadable { error }) = lost {
            warnings.push(format!("the fence check could not read the lease: {error}"));
        }
        OpReport { op: target.op().to_owned(), env: target.env.clone(), event, record, warnings, timings }
    }

    /// Under the op's lease: decides whether the op is due (after fetching the ledger, with a
    /// remote; `signalled`: a change signal woke it), then ticks it with `fence`.
    pub(super) fn due_then_tick(
        &self,
        project: &Project,
        target: &Target,
        round_start: Timestamp,
        signalled: bool,
        fence: Option<&tick::Fence>,
        timings: &mut OpTimings,
    ) -> (Work, Landing, Option<TickStats>) {
        let checking = Instant::now();
        let stopped = |error: String| (Work::Stopped(OpEvent::Failed { error }), Landing::Nothing, None);
        let ledger = &project.ledger;
        if ledger.config().remote.is_some()
            && let Err(reason) = sync_before_due_check(ledger)
        {
            // Deciding due-ness from a ledger that may lack another clone's tick could tick twice.
            return stopped(format!(
                "the ledger could not be fetched before the due check, so the op did not tick: {}",
                chain(&reason)
            ));
        }
        if let Err(e) = lease::check_stale_lock(&ledger.repo().local(), ledger::BRANCH) {
            return stopped(chain(&e));
        }
        // Read once: the tick takes its flap runs from this very record (the lease is held, so no
        // other writer of this key can append in between).
        let newest = match ledger.latest_typed::<TickRecord>(&target.key) {
            Ok(latest) => latest,
            Err(e) => return stopped(chain(&e)),
        };
        let now = ledger.clock().now();
        // A suspension recorded by a person (on any clone that shares the remote: the ledger was
        // synchronised above) stops the round before it ticks.
        let control = ShardKey::control(target.doc.member.as_deref(), &target.env, target.op());
        match control.map(|key| super::suspend::suspension(ledger, &key, now)) {
            Ok(Ok(Some(suspension))) => {
                timings.due = checking.elapsed();
                return (Work::Stopped(OpEvent::Suspended { suspension }), Landing::Nothing, None);
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) | Err(e) => return stopped(chain(&e)),
        }
        let decision = due_decision(target, &newest, round_start, now, signalled);
        timings.due = checking.elapsed();
        if let Decision::NotDue(reason) = decision {
            return (Work::Stopped(OpEvent::NotDue { reason }), Landing::Nothing, None);
        }
        if let Some(fence) = fence {
            let flight = InFlight { target: target.clone(), stamp: fence.stamp(), started_at: now };
            self.set_in_flight(Some(flight));
        }
        let options = TickOptions { dispatcher: self.dispatcher.clone(), fence: fence.cloned() };
        let ticking = Instant::now();
        let outcome = tick::execute_after(project, &target.doc, &options, Some(newest));
        timings.tick = ticking.elapsed();
        timings.append = outcome.as_ref().map(|o| o.append_time).unwrap_or_default();
        let duration = timings.tick;
        self.set_in_flight(None);
        let stats = outcome.as_ref().ok().map(|o| TickStats {
            duration,
            append: Some(o.append_time),
            pushed: ledger.config().remote.is_some().then(|| o.receipt.pushed()),
            unobserved: o.unobserved.clone(),
        });
        let landing = outcome.as_ref().map_or(Landing::Nothing, |o| Landing::of(&o.receipt));
        (Work::Ticked(Box::new(outcome)), landing, stats)
    }

    /// Releases every lease held whose tick record is on the remote, and the presence lease;
    /// returns how many op leases were released, and warnings for those kept (they expire on
    /// their own) and those that could not be released.
    pub fn release_all(&self) -> (usize, Vec<String>) {
        let held: Vec<(String, HeldLease)> = std::mem::take(&mut *self.held_map()).into_iter().collect();
        let mut released = 0;
        let mut warnings = Vec::new();
        let mut releasing = Vec::new();
        for (op, lease) in held {
            if !lease.releasable {
                warnings.push(format!(
                    "kept the lease of {op}: its tick record has not reached the remote, so the lease lapses on its own \
                     at {}",
                    lease.held.record.expires_at
                ));
                continue;
            }
            releasing.push((op, lease.held));
        }
        // The presence lease goes in the same push; it covers no record.
        let presence = self.presence.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(presence) = presence {
            releasing.push((String::new(), presence));
        }
        // With a remote, one push releases them all (each ref under a lease on the blob this
        // operator wrote); only a refused one costs a fetch and a second push.
        let helds: Vec<lease::Held> = releasing.iter().map(|(_, h)| h.clone()).collect();
        let outcomes = match self.leases.release_every(&helds) {
            Ok(outcomes) => outcomes,
            Err(e) => {
                let why = chain(&e);
                releasing
                    .iter()
                    .map(|_| {
                        Err(lease::Error::Remote {
                            remote: self.leases.remote().unwrap_or_default().to_owned(),
                            reference: lease::REF_PREFIX.to_owned(),
                            detail: why.clone(),
                        })
                    })
                    .collect()
            }
        };
        for ((op, held), outcome) in releasing.iter().zip(outcomes) {
            match outcome {
                Ok(true) if held.key.is_presence() => {}
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) if held.key.is_presence() => warnings.push(format!(
                    "could not release this operator's presence lease ({}), so it lapses on its own at {}: {}",
                    held.key.ref_name(),
                    held.record.expires_at,
                    chain(&e)
                )),
                Err(e) => warnings.push(format!("could not release the lease of {op}: {}", chain(&e))),
            }
        }
        (released, warnings)
    }

    /// Records the tick `in_flight` as interrupted: a tick record with `error`, no outcomes, and
    /// the flap runs of the op's newest record carried forward unchanged, fenced by the lease the
    /// tick ran under (the lease stays held; [`RoundContext::release_all`] releases it).
    ///
    /// # Errors
    ///
    /// [`RoundError`] when it could not be recorded.
    pub fn record_interrupted(&self, in_flight: &InFlight, why: &str) -> Result<TickRecord, RoundError> {
        let target = &in_flight.target;
        let claim = match self.held_map().get(target.op()) {
            Some(held) => Claim::Held(held.held.clone()),
            None => return Err(RoundError::NotHeld { op: target.op().to_owned(), holder: None }),
        };
        let leased = tick::leased(&self.leases, claim, Release::Keep, |fence| {
            let recorded = tick::record_interrupted(&self.project, &target.doc, in_flight.started_at, why, fence);
            let landing = recorded.as_ref().map_or(Landing::Nothing, |(_, receipt)| Landing::of(receipt));
            (recorded, landing)
        });
        match leased {
            Leased::Ran(ran) => {
                if ran.landing == Landing::NotPushed
                    && let Some(held) = self.held_map().get_mut(target.op())
                {
                    held.releasable = false;
                }
                Ok(ran.value?.0)
            }
            Leased::Refused { holder } => Err(RoundError::NotHeld { op: target.op().to_owned(), holder }),
            Leased::Failed(e) => Err(e.into()),
        }
    }
}

/// The order an operator with holder id `holder` visits `targets` in when other operators may
/// share them: by a hash of the holder id and the op name (rendezvous hashing), so every operator
/// has a permutation of its own, stable for its life. N operators started together spread over
/// the ops; once one reaches an op another already took, the lease is held and the op is skipped
/// at the cost of one lease fetch.
pub fn visiting_order<'a>(targets: &'a [Target], holder: &str) -> Vec<&'a Target> {
    let mut ordered: Vec<(u64, &Target)> = targets.iter().map(|t| (rendezvous(holder, t.op()), t)).collect();
    ordered.sort_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.op().cmp(y.op())));
    ordered.into_iter().map(|(_, t)| t).collect()
}

/// The rendezvous score of `op` for `holder`: the op goes to the holder with the highest score
/// (and each holder visits the ops in the order of its scores).
pub(super) fn rendezvous(holder: &str, op: &str) -> u64 {
    let mut bytes = Vec::with_capacity(holder.len() + op.len() + 1);
    bytes.extend_from_slice(holder.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(op.as_bytes());
    // FNV-1a, then splitmix64's finaliser: names that differ in their last byte scatter.
    let mut z = chant_lexicon::model::contract::fnv1a64(&bytes);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What the work under an op's lease came to.
pub(super) enum Work {
    /// It stopped before ticking: not due, or the ledger could not be read.
    Stopped(OpEvent),
    /// It ticked (or the tick failed).
    Ticked(Box<Result<tick::TickOutcome, tick::execute::Error>>),
}

/// Whether `target` is due at `now` in the round started at `round_start`, from its newest tick
/// record (`signalled`: a change signal woke it): the due check under its lease, and the check
/// of a free op before it is claimed (`operator::claim`).
pub(super) fn due_decision(
    target: &Target,
    newest: &TypedLatest<TickRecord>,
    round_start: Timestamp,
    now: Timestamp,
    signalled: bool,
) -> Decision {
    let last = newest
        .record
        .as_ref()
        .and_then(|stored| LastTick::from_stamps(&stored.record.started_at, &stored.record.timestamp));
    schedule::decide_woken(target.schedule.as_ref(), last, round_start, now, signalled)
}

/// How the ledger is synchronised before a due check: five tries, waiting 25 ms more after each
/// (another process of the same clone may hold the tracking ref's lock for a moment).
const SYNC: Backoff = Backoff {
    first: Duration::from_millis(25),
    growth: Growth::Linear,
    max: Duration::from_millis(125),
    jitter: false,
    limit: Limit::Attempts(5),
};

/// Why the ledger could not be synchronised before a due check.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unsynced {
    /// The sync ran but did not reach the remote.
    #[error("{0}")]
    NotPushed(String),
    /// The sync failed.
    #[error(transparent)]
    Ledger(#[from] ledger::Error),
}

/// Fetches (and integrates) the remote ledger, retrying a sync that did not complete.
pub(super) fn sync_before_due_check(ledger: &chant_store::ledger::Ledger) -> Result<(), Unsynced> {
    SYNC.retry(|_| match ledger.sync() {
        Ok(report) => match report.push {
            ledger::PushStatus::NotPushed { reason, .. } => ControlFlow::Continue(Unsynced::NotPushed(reason)),
            _ => ControlFlow::Break(()),
        },
        Err(e) => ControlFlow::Continue(Unsynced::Ledger(e)),
    })
    .map_err(|gave_up| gave_up.last)
}

impl OpReport {
    pub(super) fn new(target: &Target, event: OpEvent) -> OpReport {
        OpReport {
            op: target.op().to_owned(),
            env: target.env.clone(),
            event,
            record: None,
            warnings: Vec::new(),
            timings: OpTimings::default(),
        }
    }
}

/// Returns the targets of `project`'s ConvergeOps, sorted by name, filtered by `env`; an op
/// whose target cannot be built is returned as an error line for its report.
pub fn targets(project: &Project, env: Option<&str>) -> Vec<Result<Target, (String, String, String)>> {
    project
        .catalog
        .converge_ops()
        .filter(|d| env.is_none_or(|e| d.env.as_deref() == Some(e)))
        .map(|d| {
            Target::new(d).map_err(|e| (d.name.to_string(), d.env.as_deref().unwrap_or_default().to_owned(), chain(&e)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: OpEvent) -> String {
        OpReport {
            op: "staging-converge".into(),
            env: "staging".into(),
            event,
            record: None,
            warnings: Vec::new(),
            timings: OpTimings::default(),
        }
        .to_string()
    }

    #[test]
    fn lines_follow_the_original_formats() {
        let p = "operator: staging-converge@staging ";
        let ticked = |record: serde_json::Value, gate: Option<&str>| {
            OpReport {
                op: "staging-converge".into(),
                env: "staging".into(),
                event: OpEvent::Ticked { gate: gate.map(str::to_owned) },
                record: Some(serde_json::from_value(record).unwrap()),
                warnings: Vec::new(),
                timings: OpTimings::default(),
            }
            .to_string()
        };
        assert_eq!(ticked(serde_json::json!({}), None), format!("{p}ticked=1 status=in-sync"));
        let unknown = serde_json::json!({"symptom": {"env": "staging", "status": "unknown", "components": [],
            "createCount": 0, "updateCount": 0, "deleteCount": 0, "adoptCount": 0, "runtimeCount": 0,
            "unobservedCount": 1, "unobservedReasons": ["no-binding"], "totalCount": 1}});
        assert_eq!(ticked(unknown, None), format!("{p}ticked=1 status=unknown(1 unobserved, first: no-binding)"));
        let gated = serde_json::json!({"outcomes": [{"ruleId": "r", "action": "gated", "op": "x", "gateName": "g"}]});
        assert_eq!(ticked(gated, Some("g")), format!("{p}ticked=1 status=gated(x waits at gate g) gate=\"g\""));
        let paths: Vec<serde_json::Value> = (1..=7)
            .map(|i| serde_json::json!({"component": "files", "entity": format!("f{i}"), "path": "content", "declared": "a"}))
            .collect();
        let drifted = serde_json::json!({"driftedPaths": paths,
            "symptom": {"env": "staging", "status": "drifted", "components": [],
            "createCount": 0, "updateCount": 7, "deleteCount": 0, "adoptCount": 1, "runtimeCount": 0,
            "unobservedCount": 0, "unobservedReasons": [], "totalCount": 8},
            "outcomes": [{"ruleId": "adopt", "action": "reported", "entities": ["files/stray"]}]});
        assert_eq!(
            ticked(drifted, None),
            format!("{p}ticked=1 status=drifted [files/f1, files/f2, files/f3, +4 more]"),
            "what drifted is named; what a rule reported is named after the rule (the quiet line adds it)"
        );
        assert_eq!(
            line(OpEvent::LeaseHeld { holder: Some("h:1:x".into()) }),
            format!("{p}skipped=1(lease-held:h:1:x)")
        );
        assert_eq!(line(OpEvent::LeaseHeld { holder: None }), format!("{p}skipped=1(lease-held)"));
        assert_eq!(line(OpEvent::GivenBack { to: "h:2:b".into() }), format!("{p}skipped=1(given-back:h:2:b)"));
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
    fn each_holder_visits_every_op_once_in_an_order_of_its_own() {
        let docs: Vec<OpDocument> = (0..40)
            .map(|i| {
                let json = format!(
                    r#"{{"version":1,"name":"op-{i:02}","overview":"o","env":"e","labels":{{}},"class":"read-only","phases":[]}}"#
                );
                serde_json::from_str(&json).unwrap()
            })
            .collect();
        let targets: Vec<Target> = docs.iter().map(|d| Target::new(d).unwrap()).collect();
        let names =
            |holder: &str| visiting_order(&targets, holder).iter().map(|t| t.op().to_owned()).collect::<Vec<_>>();
        let (a, b) = (names("host:1:aaaaaaaa"), names("host:2:bbbbbbbb"));
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let all: Vec<String> = targets.iter().map(|t| t.op().to_owned()).collect();
        assert_eq!((sorted(a.clone()), sorted(b.clone())), (all.clone(), all.clone()), "permutations");
        assert_eq!(a, names("host:1:aaaaaaaa"), "stable for a holder");
        assert_ne!(a, b);
        assert_ne!(a[..4], b[..4], "two operators start on different ops");
        assert_ne!(a, all, "not the name order");
    }

    #[test]
    fn failed_error_and_interrupted_lines_fail_once() {
        assert!(OpEvent::Failed { error: String::new() }.is_failure());
        assert!(OpEvent::Interrupted { grace: Duration::ZERO }.is_failure());
        assert!(OpEvent::LeaseError { error: String::new() }.is_failure(), "a stale lock or an unreachable remote");
        for ok in [
            OpEvent::Ticked { gate: None },
            OpEvent::Fenced,
            OpEvent::LeaseHeld { holder: None },
            OpEvent::GivenBack { to: "h:2:b".into() },
            OpEvent::NotDue { reason: NotDueReason::NoFire { cron: "* * * * *".into(), next: None } },
            OpEvent::Suspended {
                suspension: super::super::suspend::Suspension {
                    reason: "r".into(),
                    until: None,
                    by: "ana".into(),
                    since: String::new(),
                },
            },
        ] {
            assert!(!ok.is_failure(), "{ok:?}");
        }
    }
}
