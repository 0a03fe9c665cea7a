//! The daemon: rounds on a timer, woken early by change signals, stopped cleanly by SIGINT or
//! SIGTERM (or the end of `--once`).
//!
//! The timer is real time: the next round starts an interval after the last one ended. On a
//! clock a test moves ([`chant_store::clock::Clock::is_manual`]) it is that clock's time instead: the
//! next round starts once the clock reads an interval past the start of the last round, so a
//! test advances the clock instead of waiting, and the daemon never sleeps towards an instant of
//! that clock (it reads the clock again every [`MANUAL_POLL`]). Signals and the grace period stay
//! in real time.
//!
//! The round runs on its own thread; this thread only waits on one channel for the round's
//! lines, stops, change signals and lost subscriptions, and prints. A stop sets the round's
//! `stopping` flag (no new tick starts), waits up to the grace period for the running tick, then
//! records an interrupted tick if it did not finish, and releases the leases held. The grace is
//! enforced: a second SIGINT or SIGTERM ends it at once, and when it ends with a tick still
//! running, every child process the tick waits on (a dispatched run, an observer, git) is sent
//! SIGTERM as the daemon returns ([`chant_store::process::terminate_all`]; a dispatched run stops
//! its own step's group on it), so none outlives the operator. Stop signals
//! are caught by `signal-hook`'s handler, which only writes to a pipe, and read by one thread
//! that turns each into a stop. They are not blocked: a blocked mask is what a child inherits
//! (`std::process::Command` keeps the spawning thread's mask), and a thread lifting it to spawn
//! one ([`chant_store::process::signals`]) would die of a SIGTERM that arrived meanwhile.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::project::Project;
use crate::tick::Dispatcher;
use chant_lexicon::observe::ChangeSink;
use chant_store::clock::MANUAL_POLL;

use super::quiet::{Line, LineKind, Quiet};
use super::round::{self, OpEvent, OpReport, RoundContext, Target};
use super::signal::{Gate, Subscriptions, Wake, Woken};
use super::{Ending, Error, OperatorConfig};

/// What the daemon's thread waits for.
#[derive(Debug)]
enum Event {
    /// One op's line of the running round.
    Op(Box<OpReport>),
    /// The round finished.
    RoundDone,
    /// Stop, and why (`SIGTERM received`).
    Stop(String),
    /// A change signal from the subscription of this label (a signal carries no data).
    Changed(String),
    /// A subscription was lost: its label and why.
    Lost(String, String),
}

/// A handle that stops a running [`Daemon`] cleanly, from any thread.
#[derive(Debug, Clone)]
pub struct Stopper {
    tx: Sender<Event>,
}

impl Stopper {
    /// Asks the daemon to stop; `why` is printed (`SIGTERM received`).
    pub fn stop(&self, why: impl Into<String>) {
        // The daemon may already be gone; then there is nothing left to stop.
        let _ = self.tx.send(Event::Stop(why.into()));
    }
}

/// SIGINT and SIGTERM, caught from the moment [`catch_stop_signals`] returns; a signal that
/// arrives before [`forward_stop_signals`] runs is kept for it.
pub struct StopSignals(Signals);

/// Installs the SIGINT and SIGTERM handlers. Call it first thing, so a stop signal never meets
/// the default action, then hand the result to [`forward_stop_signals`].
///
/// # Errors
///
/// [`Error::Signals`] when a handler cannot be installed.
pub fn catch_stop_signals() -> Result<StopSignals, Error> {
    Signals::new([SIGINT, SIGTERM]).map(StopSignals).map_err(Error::Signals)
}

/// Starts the thread that reads the caught signals and turns each into a stop.
pub fn forward_stop_signals(signals: StopSignals, stopper: Stopper) {
    let StopSignals(mut signals) = signals;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
            stopper.stop(format!("{name} received"));
        }
    });
}

/// One round for the round thread: the targets, and the ops due by signal.
type RoundJob = (Vec<Target>, BTreeSet<String>);

/// The operator daemon over one project.
pub struct Daemon {
    ctx: RoundContext,
    config: OperatorConfig,
    tx: Sender<Event>,
    rx: Receiver<Event>,
    /// The round thread's queue, once the first round started it.
    rounds: std::cell::RefCell<Option<Sender<RoundJob>>>,
}

impl Daemon {
    /// Creates a daemon over `project` with a fresh holder id for the life of the process.
    ///
    /// # Errors
    ///
    /// [`Error::Lease`] when no holder id can be minted.
    pub fn new(project: Arc<Project>, config: OperatorConfig, dispatcher: Dispatcher) -> Result<Daemon, Error> {
        let ctx = RoundContext::new(project, chant_store::lease::holder_id()?, config.lease_ttl, dispatcher);
        let (tx, rx) = mpsc::channel();
        Ok(Daemon { ctx, config, tx, rx, rounds: std::cell::RefCell::new(None) })
    }

    /// Tells `hooks` what every round does (metrics, notifications).
    pub fn with_hooks(mut self, hooks: Arc<dyn super::hooks::Hooks>) -> Daemon {
        self.ctx.hooks = hooks;
        self
    }

    /// Returns a handle that stops this daemon.
    pub fn stopper(&self) -> Stopper {
        Stopper { tx: self.tx.clone() }
    }

    /// Returns this daemon's holder id.
    pub fn holder(&self) -> &str {
        &self.ctx.holder
    }

    /// Runs rounds until stopped (or one round with `once`), passing every line to be printed to
    /// `out`: the op lines of the rounds where something happened and the heartbeats (every op
    /// line when verbose or `once`), and the notes ([`super::quiet`]).
    pub fn run(self, out: &mut dyn FnMut(Line)) -> Ending {
        let project = Arc::clone(&self.ctx.project);
        let mut failed = false;
        let mut targets: Vec<Target> = Vec::new();
        let wanted = |built: &Result<Target, (String, String, String)>| {
            let op = match built {
                Ok(t) => t.op(),
                Err((op, _, _)) => op.as_str(),
            };
            self.config.ops.is_empty() || self.config.ops.iter().any(|o| o == op)
        };
        for built in round::targets(&project, self.config.env.as_deref()).into_iter().filter(wanted) {
            match built {
                Ok(t) => targets.push(t),
                Err((op, env, error)) => {
                    failed = true;
                    out(Line {
                        kind: LineKind::Report,
                        text: format!("operator: {op}@{env} failed=1 error=\"{error}\""),
                    });
                }
            }
        }
        if targets.is_empty() {
            match &self.config.env {
                Some(env) => out(Line::note(format!("operator: no ConvergeOp found for env \"{env}\""))),
                None => out(Line::note("operator: no ConvergeOp found in this binary")),
            }
            return if failed { Ending::TickFailed } else { Ending::Clean };
        }
        if project.ledger.config().remote.is_none() {
            out(Line::note(
                "operator: no [ledger] remote is configured, so the ledger and the leases are local to this repository; \
                 operators on other machines are not coordinated",
            ));
        }
        if !self.config.once {
            out(Line::note(format!(
                "chant operator: watching {} ConvergeOp(s) every {} (Ctrl-C to stop)",
                targets.len(),
                chant_lexicon::duration::format(self.config.interval)
            )));
        }
        let mut subscriptions = Subscriptions::new();
        let mut woken = Woken::default();
        let mut gate = Gate::new(self.config.signal_floor, Instant::now());
        let mut quiet = Quiet::new(self.config.verbose || self.config.once, self.config.heartbeat, Instant::now());
        // A clock a test moves runs the timer: the next round is due when that clock has moved
        // an interval past the start of the last one (read again every `MANUAL_POLL`).
        let clock = project.ledger.clock();
        loop {
            let start = Instant::now();
            let timer_due = clock.is_manual().then(|| chant_store::clock::after(clock.now(), self.config.interval));
            let echo = gate.round_started(start);
            let due = woken.take(start, self.config.signal_floor, echo);
            self.spawn_round(&targets, due);
            let mut stop = None;
            // Whether a tick of this round dispatched: the signals meanwhile may be its echo.
            let mut dispatched = false;
            while let Ok(event) = self.rx.recv() {
                match event {
                    Event::Op(report) => {
                        dispatched |= report
                            .record
                            .as_ref()
                            .is_some_and(|r| r.outcomes.iter().any(crate::tick::Outcome::counts_for_flap));
                        failed |= print(out, &mut quiet, &report);
                    }
                    Event::RoundDone => {
                        gate.round_ended(dispatched);
                        for line in self.ctx.hooks.lines() {
                            out(Line::note(line));
                        }
                        if let Some(line) = quiet.round_done(Instant::now()) {
                            out(line);
                        }
                        break;
                    }
                    Event::Stop(why) => {
                        stop = Some(why);
                        break;
                    }
                    Event::Changed(label) => {
                        self.ctx.hooks.signal();
                        gate.signal(Instant::now(), subscriptions.settle(&label));
                        woken.signal(&label);
                    }
                    Event::Lost(label, why) => {
                        if let Some(line) = subscriptions.lost(&label, &why) {
                            out(Line::note(line));
                        }
                    }
                }
            }
            if let Some(line) = remote_line(&project) {
                out(Line::note(line));
            }
            if let Some(why) = stop {
                let (interrupted, forced) = self.stop_mid_round(out, &mut quiet, &why);
                failed |= interrupted;
                let ending = self.finish(out, &mut subscriptions, failed, true);
                if forced {
                    // Last, so the tick's thread has no time to act on its children's ends.
                    let stopped = chant_store::process::terminate_all();
                    if stopped > 0 {
                        out(Line::note(format!(
                            "operator: sent SIGTERM to {stopped} child process group(s) the interrupted tick was waiting on"
                        )));
                    }
                }
                return ending;
            }
            if self.config.once {
                return self.finish(out, &mut subscriptions, failed, false);
            }
            self.subscribe(&targets, &mut subscriptions, &mut woken, out);
            let round_end = Instant::now();
            let wake = loop {
                let (at, why) = gate.next_wake(round_end, self.config.interval);
                let now = Instant::now();
                let wait = match timer_due {
                    None if at <= now => break why,
                    None => at - now,
                    Some(due) if clock.now() >= due => break Wake::Timer,
                    Some(_) if why == Wake::Signal && at <= now => break Wake::Signal,
                    Some(_) if why == Wake::Signal => (at - now).min(MANUAL_POLL),
                    Some(_) => MANUAL_POLL,
                };
                match self.rx.recv_timeout(wait) {
                    Err(RecvTimeoutError::Timeout) if timer_due.is_some() => {}
                    Err(RecvTimeoutError::Timeout) => break why,
                    Err(RecvTimeoutError::Disconnected) => break Wake::Timer,
                    Ok(Event::Stop(why)) => {
                        out(Line::note(format!("operator: {why} — stopping")));
                        return self.finish(out, &mut subscriptions, failed, true);
                    }
                    Ok(Event::Changed(label)) => {
                        self.ctx.hooks.signal();
                        gate.signal(Instant::now(), subscriptions.settle(&label));
                        woken.signal(&label);
                    }
                    Ok(Event::Lost(label, why)) => {
                        if let Some(line) = subscriptions.lost(&label, &why) {
                            out(Line::note(line));
                        }
                    }
                    Ok(Event::Op(_) | Event::RoundDone) => {}
                }
            };
            if wake == Wake::Signal && quiet.verbose() {
                self.ctx.hooks.woken();
                out(Line::note(format!(
                    "operator: woken by a change signal after {}ms, running an ordinary round",
                    gate.round_start().elapsed().as_millis()
                )));
            }
        }
    }

    /// Starts a round over `targets` on the round thread; the ops in `woken` are due by signal.
    /// The round thread is started with the first round and kept for the next ones (a round
    /// starts only once the previous one is done), so a daemon ticking every second does not
    /// create and tear down a thread (its stack mapped and unmapped) every second. A round
    /// thread that is gone (it panicked) is replaced.
    fn spawn_round(&self, targets: &[Target], woken: BTreeSet<String>) {
        let mut job = (targets.to_vec(), woken);
        let mut worker = self.rounds.borrow_mut();
        for _ in 0..2 {
            let jobs = worker.get_or_insert_with(|| self.round_thread());
            match jobs.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(back)) => {
                    job = back;
                    *worker = None;
                }
            }
        }
    }

    /// Starts the round thread: it runs each round sent to it and reports its lines.
    fn round_thread(&self) -> Sender<RoundJob> {
        let ctx = self.ctx.clone();
        let tx = self.tx.clone();
        let (jobs, rounds) = mpsc::channel::<RoundJob>();
        std::thread::spawn(move || {
            for (targets, woken) in rounds {
                ctx.run(&targets, &woken, &mut |report| {
                    let _ = tx.send(Event::Op(Box::new(report)));
                });
                let _ = tx.send(Event::RoundDone);
            }
        });
        jobs
    }

    /// Handles a stop that arrived while a round runs: no new tick starts; the running one gets
    /// the grace period, which a second stop ends at once; if it does not finish, an interrupted
    /// tick is recorded. Returns whether a tick failed or was interrupted, and whether the round
    /// was still running when the grace ended (its children are then to be stopped).
    fn stop_mid_round(&self, out: &mut dyn FnMut(Line), quiet: &mut Quiet, why: &str) -> (bool, bool) {
        self.ctx.stopping.store(true, Ordering::SeqCst);
        out(Line::note(format!(
            "operator: {why} — stopping: no new tick starts; a running tick gets {} to finish",
            chant_lexicon::duration::format(self.config.grace)
        )));
        let deadline = Instant::now() + self.config.grace;
        let mut failed = false;
        let mut cut = None;
        loop {
            let now = Instant::now();
            let wait = deadline.saturating_duration_since(now);
            match self.rx.recv_timeout(wait) {
                Ok(Event::Op(report)) => failed |= print(out, quiet, &report),
                Ok(Event::RoundDone) => return (failed, false),
                Ok(Event::Stop(again)) => {
                    out(Line::note(format!("operator: {again} again — not waiting for the running tick any longer")));
                    cut = Some(again);
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let in_flight = self.ctx.in_flight.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(in_flight) = in_flight {
            let grace = self.config.grace;
            let text = match &cut {
                Some(again) => format!(
                    "interrupted: the operator was stopped ({why}) while this tick ran, and stopped again ({again}) \
                     before it finished"
                ),
                None => format!(
                    "interrupted: the operator was stopped ({why}) while this tick ran, and it did not finish within {}",
                    chant_lexicon::duration::format(grace)
                ),
            };
            let report = match self.ctx.record_interrupted(&in_flight, &text) {
                Ok(record) => OpReport {
                    op: in_flight.target.op().to_owned(),
                    env: in_flight.target.env.clone(),
                    event: OpEvent::Interrupted { grace },
                    record: Some(record),
                    warnings: Vec::new(),
                    timings: super::round::OpTimings::default(),
                },
                Err(e) => OpReport {
                    op: in_flight.target.op().to_owned(),
                    env: in_flight.target.env.clone(),
                    event: OpEvent::Failed {
                        error: format!(
                            "interrupted, and the interrupted tick could not be recorded: {}",
                            super::chain(&e)
                        ),
                    },
                    record: None,
                    warnings: Vec::new(),
                    timings: super::round::OpTimings::default(),
                },
            };
            print(out, quiet, &report);
            failed = true;
        }
        (failed, true)
    }

    /// Subscribes to the change stream of every lexicon the targets read, and records in `woken`
    /// which ops each stream serves.
    fn subscribe(
        &self,
        targets: &[Target],
        subscriptions: &mut Subscriptions,
        woken: &mut Woken,
        out: &mut dyn FnMut(Line),
    ) {
        let mut envs: Vec<(Option<String>, String)> =
            targets.iter().map(|t| (t.doc.member.clone(), t.env.clone())).collect();
        envs.sort();
        envs.dedup();
        for (member, env) in envs {
            let lexicons = match self.ctx.project.lexicons(member.as_deref(), &env) {
                Ok(lexicons) => lexicons,
                Err(e) => {
                    out(Line::note(format!(
                        "operator: {env} change signals unavailable, polling on the timer ({})",
                        e.chain()
                    )));
                    continue;
                }
            };
            for lexicon in &lexicons {
                let label = match &member {
                    Some(m) => format!("{}({m}/{env})", lexicon.name()),
                    None => format!("{}({env})", lexicon.name()),
                };
                for t in targets.iter().filter(|t| t.doc.member == member && t.env == env) {
                    woken.serve(&label, t.op());
                }
                let sink = self.sink(&label);
                if let Some(line) = subscriptions.ensure(&label, lexicon.lexicon(), sink) {
                    out(Line::note(line));
                }
            }
        }
        // Observer steps a lexicon registered with a change stream (a box's supervisor): one
        // subscription per stream and member, waking the ConvergeOps that observe through it.
        let mut streams: Vec<(Option<String>, &'static chant_lexicon::steps::StepKind)> =
            targets.iter().filter_map(|t| observer_stream(t).map(|k| (t.doc.member.clone(), k))).collect();
        streams.sort_by(|a, b| (&a.0, a.1.kind).cmp(&(&b.0, b.1.kind)));
        streams.dedup_by(|a, b| a.0 == b.0 && a.1.kind == b.1.kind);
        let from_env = |k: &str| std::env::var(k).ok();
        for (member, kind) in streams {
            let Some(changes) = kind.changes else { continue };
            let label = match &member {
                Some(m) => format!("{}({m})", changes.label),
                None => changes.label.to_owned(),
            };
            for t in targets
                .iter()
                .filter(|t| t.doc.member == member && observer_stream(t).is_some_and(|k| k.kind == kind.kind))
            {
                woken.serve(&label, t.op());
            }
            let sink = self.sink(&label);
            let root = &self.ctx.project.root;
            let subscribed =
                subscriptions.ensure_with(&label, || (changes.subscribe)(root, member.as_deref(), &from_env, sink));
            if let Some(line) = subscribed {
                out(Line::note(line));
            }
        }
    }

    /// A sink that wakes this daemon on a change and reports a lost stream under `label`.
    fn sink(&self, label: &str) -> ChangeSink {
        let changed = self.tx.clone();
        let lost = self.tx.clone();
        let (changed_label, lost_label) = (label.to_owned(), label.to_owned());
        ChangeSink::new(
            move || {
                let _ = changed.send(Event::Changed(changed_label.clone()));
            },
            move |why| {
                let _ = lost.send(Event::Lost(lost_label.clone(), why));
            },
        )
    }

    fn finish(
        &self,
        out: &mut dyn FnMut(Line),
        subscriptions: &mut Subscriptions,
        failed: bool,
        stopped: bool,
    ) -> Ending {
        self.ctx.stopping.store(true, Ordering::SeqCst);
        subscriptions.close();
        self.ctx.hooks.flush();
        for line in self.ctx.hooks.lines() {
            out(Line::note(line));
        }
        let (released, warnings) = self.ctx.release_all();
        for w in warnings {
            out(Line::note(format!("operator: warning: {w}")));
        }
        if stopped {
            out(Line::note(format!("operator: stopped; released {released} lease(s)")));
        }
        if failed { Ending::TickFailed } else { Ending::Clean }
    }
}

/// The registered step kind `target`'s resource-mode observer runs, when the lexicon that
/// registered it offers a change stream that can wake a round (a box's supervisor).
fn observer_stream(target: &Target) -> Option<&'static chant_lexicon::steps::StepKind> {
    let observer = target.doc.converge.as_ref()?.observe.as_ref()?;
    chant_lexicon::steps::find(observer.kind()).filter(|k| k.changes.is_some())
}

/// The line a round prints once when the configured remote did not answer.
fn remote_line(project: &Project) -> Option<String> {
    let down = project.ledger.remote_unreachable()?;
    Some(format!("operator: remote {}: unreachable since {} ({})", down.remote, down.since, down.error))
}

/// Prints a report and its warnings; returns true when it is a failure.
fn print(out: &mut dyn FnMut(Line), quiet: &mut Quiet, report: &OpReport) -> bool {
    if let Some(line) = quiet.report(report, Instant::now()) {
        out(line);
    }
    for w in &report.warnings {
        out(Line::note(format!("operator: {}@{} warning: {w}", report.op, report.env)));
    }
    report.event.is_failure()
}
