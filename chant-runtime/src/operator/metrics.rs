//! The operator's metrics and health endpoints (`operator --metrics-addr 127.0.0.1:9464`):
//! Prometheus text exposition (OpenMetrics) from the official `prometheus-client` crate, fed by
//! the round's [`Hooks`], plus `/healthz` and `/readyz`.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `chant_ticks_total` | counter | `op, env, outcome` (`ok`, `gated`, `failed`, `fenced`, `interrupted`) |
//! | `chant_op_skips_total` | counter | `op, env, reason` (`lease-held`, `not-due`, `lease-error`) |
//! | `chant_dispatches_total` | counter | `op, rule, action` (`ran`, `reported`, `skipped-budget`, `skipped-flap`, `skipped-window`, `given-up`, `gated`) |
//! | `chant_unobserved_entities` | gauge | `op, env, reason` (the observation contract's reason codes, `resource-unknown`) |
//! | `chant_tick_duration_seconds` | histogram | `op` |
//! | `chant_lease_held` | gauge (0/1) | `op` |
//! | `chant_last_tick_timestamp_seconds` | gauge | `op, env` (the newest tick record's `timestamp`) |
//! | `chant_change_signals_total` | counter | |
//! | `chant_rounds_total`, `chant_rounds_woken_total` | counter | (rounds completed; rounds a change signal started early) |
//! | `chant_ledger_append_duration_seconds` | histogram | |
//! | `chant_ledger_push_failures_total` | counter | |
//! | `chant_notify_failures_total` | counter | `sink` (the sink's kind: `webhook`, `command`) |
//!
//! Every label value is a name chant validated (ops, envs and rule ids match `[a-z][a-z0-9-]*`) or
//! one of a fixed set: no free text. `/healthz` answers 200 while the process runs; `/readyz`
//! answers 200 only when the last round completed within two intervals and the ledger is
//! readable, else 503 saying which.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::hooks::{Hooks, TickStats};
use super::round::{OpEvent, OpReport, Target};
use chant_store::ledger::Ledger;

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The address `--metrics-addr` documents: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:9464";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    op: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpEnvLabels {
    op: String,
    env: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    op: String,
    env: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct ReasonLabels {
    op: String,
    env: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DispatchLabels {
    op: String,
    rule: String,
    action: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabels {
    sink: String,
}

fn duration_histogram() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// The operator's metrics, shared by the round (through [`Hooks`]) and the endpoint.
pub struct Metrics {
    registry: Registry,
    ticks: Family<OutcomeLabels, Counter>,
    skips: Family<ReasonLabels, Counter>,
    dispatches: Family<DispatchLabels, Counter>,
    unobserved: Family<ReasonLabels, Gauge>,
    tick_duration: Family<OpLabels, Histogram, fn() -> Histogram>,
    lease_held: Family<OpLabels, Gauge>,
    last_tick: Family<OpEnvLabels, Gauge<f64, AtomicU64>>,
    signals: Counter,
    rounds: Counter,
    woken: Counter,
    append: Histogram,
    push_failures: Counter,
    notify_failures: Family<SinkLabels, Counter>,
    unobserved_seen: Mutex<BTreeSet<ReasonLabels>>,
    last_round: Mutex<Option<Instant>>,
    interval: Duration,
}

impl Metrics {
    /// Creates the metrics of an operator whose rounds run every `interval`.
    pub fn new(interval: Duration) -> Metrics {
        let mut registry = Registry::default();
        let m = Metrics {
            ticks: Family::default(),
            skips: Family::default(),
            dispatches: Family::default(),
            unobserved: Family::default(),
            tick_duration: Family::new_with_constructor(duration_histogram),
            lease_held: Family::default(),
            last_tick: Family::default(),
            signals: Counter::default(),
            rounds: Counter::default(),
            woken: Counter::default(),
            append: duration_histogram(),
            push_failures: Counter::default(),
            notify_failures: Family::default(),
            unobserved_seen: Mutex::default(),
            last_round: Mutex::default(),
            interval,
            registry: Registry::default(),
        };
        registry.register("chant_ticks", "Ticks the operator ran, by op and outcome", m.ticks.clone());
        registry.register("chant_op_skips", "Ops a round did not tick, by reason", m.skips.clone());
        registry.register("chant_dispatches", "Outcomes of fired rules, by rule and action", m.dispatches.clone());
        registry.register(
            "chant_unobserved_entities",
            "Entities the op's last tick could not observe, by reason",
            m.unobserved.clone(),
        );
        registry.register(
            "chant_tick_duration_seconds",
            "How long a tick took, observation to append",
            m.tick_duration.clone(),
        );
        registry.register(
            "chant_lease_held",
            "Whether this operator holds the op's lease (0 or 1)",
            m.lease_held.clone(),
        );
        registry.register(
            "chant_last_tick_timestamp_seconds",
            "The timestamp of the op's newest tick record this operator wrote",
            m.last_tick.clone(),
        );
        registry.register("chant_change_signals", "Change signals received", m.signals.clone());
        registry.register("chant_rounds", "Rounds completed", m.rounds.clone());
        registry.register("chant_rounds_woken", "Rounds a change signal started early", m.woken.clone());
        registry.register(
            "chant_ledger_append_duration_seconds",
            "How long appending a tick record to the ledger took",
            m.append.clone(),
        );
        registry.register(
            "chant_ledger_push_failures",
            "Tick records whose push to the remote did not land",
            m.push_failures.clone(),
        );
        registry.register(
            "chant_notify_failures",
            "Notifications a sink failed to deliver, by sink kind",
            m.notify_failures.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Renders the exposition (ending in `# EOF`).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }

    /// Counts a notification a sink of `kind` (`webhook`, `command`) failed to deliver.
    pub fn notify_failed(&self, kind: &str) {
        self.notify_failures.get_or_create(&SinkLabels { sink: kind.to_owned() }).inc();
    }

    /// Returns why the operator is not ready, `None` when it is: the last round must have
    /// completed within two intervals.
    pub fn unready(&self) -> Option<String> {
        let last = *self.last_round.lock().unwrap_or_else(PoisonError::into_inner);
        match last {
            None => Some("no round has completed yet".to_owned()),
            Some(at) if at.elapsed() > self.interval * 2 => Some(format!(
                "the last round completed {} ago, more than two intervals ({} each)",
                chant_lexicon::duration::format(Duration::from_secs(at.elapsed().as_secs())),
                chant_lexicon::duration::format(self.interval)
            )),
            Some(_) => None,
        }
    }

    fn op_env(target: &Target) -> OpEnvLabels {
        OpEnvLabels { op: target.op().to_owned(), env: target.env.clone() }
    }
}

impl Hooks for Metrics {
    fn lease(&self, target: &Target, held: bool) {
        self.lease_held.get_or_create(&OpLabels { op: target.op().to_owned() }).set(i64::from(held));
    }

    fn ticked(&self, target: &Target, stats: &TickStats) {
        self.tick_duration
            .get_or_create(&OpLabels { op: target.op().to_owned() })
            .observe(stats.duration.as_secs_f64());
        if let Some(append) = stats.append {
            self.append.observe(append.as_secs_f64());
        }
        if stats.pushed == Some(false) {
            self.push_failures.inc();
        }
        let mut seen = self.unobserved_seen.lock().unwrap_or_else(PoisonError::into_inner);
        let labels = |reason: &str| ReasonLabels {
            op: target.op().to_owned(),
            env: target.env.clone(),
            reason: reason.to_owned(),
        };
        for stale in seen.iter().filter(|l| l.op == target.op() && !stats.unobserved.contains_key(&l.reason)) {
            self.unobserved.get_or_create(stale).set(0);
        }
        for (reason, count) in &stats.unobserved {
            let l = labels(reason);
            self.unobserved.get_or_create(&l).set(i64::try_from(*count).unwrap_or(i64::MAX));
            seen.insert(l);
        }
    }

    fn reported(&self, target: &Target, report: &OpReport) {
        let (op, env) = (target.op().to_owned(), target.env.clone());
        let tick = |outcome: &str| {
            self.ticks
                .get_or_create(&OutcomeLabels { op: op.clone(), env: env.clone(), outcome: outcome.to_owned() })
                .inc();
        };
        let skip = |reason: &str| {
            self.skips
                .get_or_create(&ReasonLabels { op: op.clone(), env: env.clone(), reason: reason.to_owned() })
                .inc();
        };
        match &report.event {
            OpEvent::Ticked { gate: None } => tick("ok"),
            OpEvent::Ticked { gate: Some(_) } => tick("gated"),
            OpEvent::Failed { .. } => tick("failed"),
            OpEvent::Fenced => tick("fenced"),
            OpEvent::Interrupted { .. } => tick("interrupted"),
            OpEvent::LeaseHeld { .. } => skip("lease-held"),
            OpEvent::GivenBack { .. } => skip("given-back"),
            OpEvent::NotDue { .. } => skip("not-due"),
            OpEvent::Suspended { .. } => skip("suspended"),
            OpEvent::LeaseError { .. } => skip("lease-error"),
        }
        let Some(record) = &report.record else { return };
        for o in &record.outcomes {
            let labels =
                DispatchLabels { op: op.clone(), rule: o.rule_id.clone(), action: o.action.as_str().to_owned() };
            self.dispatches.get_or_create(&labels).inc();
        }
        if let Some(at) = chant_store::clock::parse(&record.timestamp) {
            self.last_tick.get_or_create(&Self::op_env(target)).set(timestamp_seconds(at));
        }
    }

    fn round_done(&self, _at: Timestamp) {
        self.rounds.inc();
        *self.last_round.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    fn signal(&self) {
        self.signals.inc();
    }

    fn woken(&self) {
        self.woken.inc();
    }
}

fn timestamp_seconds(at: Timestamp) -> f64 {
    // Milliseconds are what records carry; f64 holds them exactly for any date chant writes.
    at.as_millisecond() as f64 / 1000.0
}

struct Endpoint {
    metrics: Arc<Metrics>,
    ledger: Ledger,
}

/// Returns the router of the metrics endpoint: `/metrics`, `/healthz`, `/readyz`.
pub fn router(metrics: Arc<Metrics>, ledger: Ledger) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(Arc::new(Endpoint { metrics, ledger }))
}

async fn scrape(State(e): State<Arc<Endpoint>>) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE))], e.metrics.encode()).into_response()
}

async fn ready(State(e): State<Arc<Endpoint>>) -> Response {
    let endpoint = Arc::clone(&e);
    let readable = tokio::task::spawn_blocking(move || endpoint.ledger.tip().map(|_| ()).map_err(|e| super::chain(&e)))
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
    let why = match (e.metrics.unready(), readable) {
        (Some(why), _) => why,
        (None, Err(why)) => format!("the ledger is not readable: {why}"),
        (None, Ok(())) => return (StatusCode::OK, "ready\n").into_response(),
    };
    (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}\n")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_is_unready_until_a_round_completes() {
        let m = Metrics::new(Duration::from_secs(60));
        assert_eq!(m.unready().as_deref(), Some("no round has completed yet"));
        m.round_done(Timestamp::UNIX_EPOCH);
        assert_eq!(m.unready(), None);
        let text = m.encode();
        assert!(text.contains("# TYPE chant_rounds counter\nchant_rounds_total 1\n"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn a_round_older_than_two_intervals_is_unready() {
        let m = Metrics::new(Duration::from_millis(1));
        *m.last_round.lock().unwrap() = Some(Instant::now() - Duration::from_secs(1));
        assert!(m.unready().is_some_and(|w| w.contains("more than two intervals")));
    }
}
