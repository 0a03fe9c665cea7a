//! Notifications: the operator tells people when an op is gated, a dispatch failed, flap damping
//! stopped a dispatch, an env stayed unknown for N ticks, or an op recovered, through the sinks
//! `[notify]` in `chant.toml` configures (a webhook, a command).
//!
//! A [`Notifier`] is one of the operator's [`Hooks`]: after the round reports an op whose tick
//! was recorded, it hands the tick record to its own thread, which derives the events
//! ([`event::events`]), sends each to every sink with the configured timeout, and appends one
//! notification record to the ledger beside the op's ticks (`<env>/<op>/notify/`):
//! `{version: 1, kind: "notification", op, env, tickId, timestamp, problem, events: [{event,
//! ruleId?, resource?}], sinks: [{sink, event, ok, error?}]}`.
//!
//! # Guarantees
//!
//! - Sending never delays or changes a tick: it runs on the notifier's thread after the tick's
//!   record was appended, and each send is bounded by the timeout.
//! - The same tick is never notified twice: the ledger is the memory of what was sent; a tick
//!   whose id is already on the op's newest notification record is skipped.
//! - `recovered` follows only a recorded problem, so a restart neither repeats nor forgets one.
//! - A failing sink is reported once per round (one line per sink, with the count) and counted
//!   by the `on_failure` callback (the metrics' `chant_notify_failures_total`).
//!
//! # Caveats
//!
//! - Best effort: a sink that is down misses the event; it is recorded as not delivered and not
//!   retried.
//! - The `unknown` event reads the op's newest ticks to measure the run of unknown ticks (only
//!   when the tick at hand is unknown, newest first, stopping past the threshold).

pub mod event;
pub mod sink;

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::ledger::{Ledger, ShardKey, Visit};
use crate::operator::hooks::Hooks;
use crate::operator::round::{OpReport, Target};
use crate::project::Project;
use crate::tick::TickRecord;

pub use crate::notification::{Delivery, EventKind, Notified, NotifyRecord};
pub use event::Event;
pub use sink::{SendError, Sink};

/// The run of unknown ticks after which `unknown` is sent, when `[notify] unknown_ticks` is not
/// given.
pub const DEFAULT_UNKNOWN_TICKS: u64 = 3;

/// How the notifier runs, from `[notify]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The sinks.
    pub sinks: Vec<Sink>,
    /// How long one send may take.
    pub timeout: Duration,
    /// After how many unknown ticks in a row `unknown` is sent.
    pub unknown_ticks: u64,
}

/// A `[notify]` value `chant.toml` cannot be run with.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `timeout` does not parse.
    #[error("{path}: [notify] timeout = {value:?} is not a duration such as \"5s\"")]
    Timeout {
        /// The file.
        path: String,
        /// The value as written.
        value: String,
        /// Why it does not parse.
        #[source]
        source: crate::duration::ParseError,
    },
    /// `timeout` is zero.
    #[error("{path}: [notify] timeout must be longer than zero")]
    ZeroTimeout {
        /// The file.
        path: String,
    },
    /// `unknown_ticks` is 0.
    #[error("{path}: [notify] unknown_ticks must be at least 1")]
    UnknownTicks {
        /// The file.
        path: String,
    },
}

impl NotifyConfig {
    /// Reads `[notify]` of `config`; `None` when it configures no sink.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] for a malformed or zero `timeout` or an `unknown_ticks` of 0.
    pub fn from_config(config: &Config) -> Result<Option<NotifyConfig>, ConfigError> {
        let section = &config.notify;
        let path = || config.root.join(crate::config::FILE_NAME).display().to_string();
        let timeout = match &section.timeout {
            None => sink::DEFAULT_TIMEOUT,
            Some(t) => match crate::duration::parse(t) {
                Ok(d) if !d.is_zero() => d,
                Ok(_) => return Err(ConfigError::ZeroTimeout { path: path() }),
                Err(source) => return Err(ConfigError::Timeout { path: path(), value: t.clone(), source }),
            },
        };
        let unknown_ticks = section.unknown_ticks.unwrap_or(DEFAULT_UNKNOWN_TICKS);
        if unknown_ticks == 0 {
            return Err(ConfigError::UnknownTicks { path: path() });
        }
        let sinks = Sink::configured(section, &config.root);
        Ok((!sinks.is_empty()).then_some(NotifyConfig { sinks, timeout, unknown_ticks }))
    }
}

/// A failure callback: given the sink's kind (`webhook`, `command`).
pub type OnFailure = Arc<dyn Fn(&str) + Send + Sync>;

struct Job {
    member: Option<String>,
    record: TickRecord,
}

#[derive(Default)]
struct Shared {
    /// Jobs handed over and not finished.
    pending: Mutex<usize>,
    done: Condvar,
    /// Failures since the last report, by sink name: count and the last error.
    failures: Mutex<BTreeMap<String, (usize, String)>>,
}

/// The operator's notifier (see the module docs).
pub struct Notifier {
    tx: Mutex<Sender<Job>>,
    shared: Arc<Shared>,
    timeout: Duration,
}

impl Notifier {
    /// Starts the notifier's thread over `project` with `config`; `on_failure` is called for
    /// every delivery that failed.
    pub fn start(project: Arc<Project>, config: NotifyConfig, on_failure: Option<OnFailure>) -> Notifier {
        let (tx, rx) = mpsc::channel::<Job>();
        let shared = Arc::new(Shared::default());
        let worker = Arc::clone(&shared);
        let timeout = config.timeout;
        std::thread::spawn(move || {
            for job in rx {
                let failed = deliver(&project, &config, &job);
                if !failed.is_empty() {
                    let mut failures = worker.failures.lock().unwrap_or_else(PoisonError::into_inner);
                    for (sink, kind, error) in failed {
                        if let Some(callback) = on_failure.as_ref().filter(|_| kind != "ledger") {
                            callback(kind);
                        }
                        let entry = failures.entry(sink).or_insert((0, String::new()));
                        *entry = (entry.0 + 1, error);
                    }
                }
                let mut pending = worker.pending.lock().unwrap_or_else(PoisonError::into_inner);
                *pending = pending.saturating_sub(1);
                worker.done.notify_all();
            }
        });
        Notifier { tx: Mutex::new(tx), shared, timeout }
    }
}

impl Hooks for Notifier {
    fn reported(&self, target: &Target, report: &OpReport) {
        let Some(record) = &report.record else { return };
        let job = Job { member: target.doc.member.clone(), record: record.clone() };
        *self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        if self.tx.lock().unwrap_or_else(PoisonError::into_inner).send(job).is_err() {
            let mut pending = self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner);
            *pending = pending.saturating_sub(1);
        }
    }

    fn lines(&self) -> Vec<String> {
        let failures = std::mem::take(&mut *self.shared.failures.lock().unwrap_or_else(PoisonError::into_inner));
        failures
            .into_iter()
            .map(|(sink, (count, error))| format!("operator: notify: {sink} failed {count} time(s): {error}"))
            .collect()
    }

    fn flush(&self) {
        // Every send is bounded by the timeout; give the queue a bounded wait in all.
        let deadline = Instant::now() + self.timeout * 20 + Duration::from_secs(5);
        let mut pending = self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner);
        while *pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            pending = self.shared.done.wait_timeout(pending, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// Reads the newest notification record of `key`: its tick id and whether it was a problem.
fn last_sent(project: &Project, key: &ShardKey) -> (Option<String>, bool) {
    match project.ledger.latest_typed::<NotifyRecord>(key) {
        Ok(latest) => latest.record.map_or((None, false), |s| (Some(s.record.tick_id), s.record.problem)),
        Err(_) => (None, false),
    }
}

/// Whether `unknown` was sent since the newest notification that reported no problem: the op's
/// notifications read newest first, stopping at the first clean one (a recovery) or the first
/// `unknown`. An unreadable ledger reads as not sent: a duplicate beats a silence.
fn unknown_sent(ledger: &Ledger, key: &ShardKey) -> bool {
    let mut sent = false;
    let streamed = ledger.stream_newest_typed::<NotifyRecord>(key, |visit| match visit {
        Visit::Record(stored) if stored.record.events.iter().any(|e| e.event == event::EventKind::Unknown) => {
            sent = true;
            ControlFlow::Break(())
        }
        Visit::Record(stored) if !stored.record.problem => ControlFlow::Break(()),
        Visit::Record(_) | Visit::Unreadable(_) => ControlFlow::Continue(()),
    });
    streamed.is_ok() && sent
}

/// How many of the op's newest ticks in a row were unknown, counted up to `cap`: the event is
/// sent when the run reaches the threshold, so a longer run needs no exact length. Reads the
/// newest shard first and stops at the first tick that was not unknown (or at `cap`), so a long
/// history costs no more than the run itself. Unreadable lines neither end nor extend the run.
fn unknown_run(ledger: &Ledger, member: Option<&str>, record: &TickRecord, cap: u64) -> u64 {
    let Ok(key) = ShardKey::converge(member, &record.env, &record.op) else { return 1 };
    let mut run = 0_u64;
    let streamed = ledger.stream_newest_typed::<TickRecord>(&key, |visit| match visit {
        Visit::Record(stored) if event::is_unknown(&stored.record) => {
            run += 1;
            if run >= cap { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        }
        Visit::Record(_) => ControlFlow::Break(()),
        Visit::Unreadable(_) => ControlFlow::Continue(()),
    });
    if streamed.is_err() { 1 } else { run.max(1) }
}

/// Derives, sends and records the events of one tick; returns the failed deliveries as
/// (sink name, sink kind, error).
fn deliver(project: &Project, config: &NotifyConfig, job: &Job) -> Vec<(String, &'static str, String)> {
    let record = &job.record;
    let member = job.member.as_deref();
    let Ok(key) = ShardKey::notify(member, &record.env, &record.op) else { return Vec::new() };
    let (sent_for, problem_open) = last_sent(project, &key);
    if sent_for.as_deref() == Some(record.id.as_str()) {
        return Vec::new();
    }
    let run = if event::is_unknown(record) {
        unknown_run(&project.ledger, member, record, config.unknown_ticks.max(1))
    } else {
        0
    };
    let rules = project.catalog.get(&record.op).and_then(|d| d.converge.as_ref()).map(|c| c.rules.as_slice());
    let why = |rule: &str| rules.into_iter().flatten().find(|r| r.id == rule).map(|r| r.why.clone());
    let unknown_sent = run > 0 && unknown_sent(&project.ledger, &key);
    let cx =
        event::Context { why: &why, unknown_run: run, unknown_ticks: config.unknown_ticks, problem_open, unknown_sent };
    let events = event::events(record, &cx);
    if events.is_empty() {
        return Vec::new();
    }
    let mut deliveries = Vec::new();
    let mut failed = Vec::new();
    for e in &events {
        for s in &config.sinks {
            let result = s.send(e, config.timeout).map_err(|err| project.redactor.record(&crate::error::chain(&err)));
            if let Err(err) = &result {
                failed.push((s.name(), s.kind(), err.clone()));
            }
            deliveries.push(Delivery { sink: s.name(), event: e.event, ok: result.is_ok(), error: result.err() });
        }
    }
    let record = NotifyRecord {
        version: 1,
        kind: "notification".to_owned(),
        op: record.op.clone(),
        env: record.env.clone(),
        tick_id: record.id.clone(),
        timestamp: crate::clock::format(project.ledger.clock().now()),
        problem: events.iter().any(Event::is_problem),
        events: events
            .iter()
            .map(|e| Notified { event: e.event, rule_id: e.rule.clone(), resource: e.resource.clone() })
            .collect(),
        sinks: deliveries,
    };
    if let Err(e) = project.ledger.append_record(member, &record) {
        failed.push(("the ledger".to_owned(), "ledger", crate::error::chain(&e)));
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unknown_run_counts_the_newest_unknown_ticks_up_to_its_cap() {
        let tmp = tempfile::tempdir().unwrap();
        gix::init_bare(tmp.path()).unwrap();
        let ledger = Ledger::open(tmp.path(), crate::ledger::LedgerConfig::default()).unwrap();
        let tick = |id: &str, unobserved: u64| TickRecord {
            version: 1,
            id: id.into(),
            op: "c".into(),
            env: "e".into(),
            timestamp: "2026-03-01T10:00:00.000Z".into(),
            summary: crate::tick::Summary { unobserved, ..Default::default() },
            ..TickRecord::default()
        };
        // Oldest first: an unknown tick, a clean one, then four unknown ones.
        let ticks = [tick("t0", 1), tick("t1", 0), tick("t2", 2), tick("t3", 1), tick("t4", 1), tick("t5", 1)];
        for t in &ticks {
            assert!(event::is_unknown(t) == (t.summary.unobserved > 0));
            ledger.append_record(None, t).unwrap();
        }
        let newest = &ticks[5];
        assert_eq!(unknown_run(&ledger, None, newest, 100), 4, "the clean tick t1 ends the run");
        assert_eq!(unknown_run(&ledger, None, newest, 3), 3, "the count stops at its cap");
        ledger.append_record(None, &tick("t6", 0)).unwrap();
        assert_eq!(unknown_run(&ledger, None, newest, 100), 1, "a clean newest tick: at least the tick at hand");
    }

    fn load(notify: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::config::FILE_NAME);
        std::fs::write(&path, format!("[project]\nname = \"n\"\n\n[notify]\n{notify}")).unwrap();
        Config::load(&path).unwrap()
    }

    #[test]
    fn notify_settings_are_read_and_bad_ones_name_the_file_and_field() {
        let config = load("timeout = \"2s\"\nunknown_ticks = 4\n[[notify.webhook]]\nurl_var = \"HOOK\"\n");
        let read = NotifyConfig::from_config(&config).unwrap().unwrap();
        assert_eq!((read.timeout, read.unknown_ticks, read.sinks.len()), (Duration::from_secs(2), 4, 1));
        assert!(NotifyConfig::from_config(&load("timeout = \"2s\"\n")).unwrap().is_none(), "no sink, no notifier");
        for (bad, says) in [
            ("timeout = \"5\"", "[notify] timeout = \"5\" is not a duration such as \"5s\""),
            ("timeout = \"0s\"", "[notify] timeout must be longer than zero"),
            ("unknown_ticks = 0", "[notify] unknown_ticks must be at least 1"),
        ] {
            let err =
                NotifyConfig::from_config(&load(&format!("{bad}\n[[notify.command]]\ncmd = \"true\"\n"))).unwrap_err();
            let text = crate::error::chain(&err);
            assert!(text.contains("chant.toml: ") && text.contains(says), "{bad}: {text}");
        }
    }
}
