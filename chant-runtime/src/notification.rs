//! The **notification record**: what the ledger remembers of the notifications sent for one
//! tick, one record per notified tick beside the op's ticks (`<env>/<op>/notify/`), and the kinds
//! of event it names. The operator's notifier (`crate::notify`, the `notify` feature) writes it;
//! `operator log` shows it in the timeline. Data only: deriving and sending the events is `notify`'s.

use serde::{Deserialize, Serialize};

use chant_store::ledger::{Record, RecordKind, ShardKey};

/// The kind of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A dispatch stopped at a gate.
    Gated,
    /// A dispatch failed.
    FailedDispatch,
    /// Flap damping skipped a dispatch.
    Damped,
    /// A rule reached its restart limit for a resource and gave up (sent by the tick that gave
    /// up).
    GivenUp,
    /// A dispatch succeeded and the observation after it found its symptom still there.
    Ineffective,
    /// The env (or a resource) has been unknown for the configured number of ticks in a row.
    Unknown,
    /// The op is clean again after a problem was notified.
    Recovered,
    /// A `propose()` rule wrote a new proposal branch (or a new text on it) for review.
    Proposed,
}

impl EventKind {
    /// Returns the event's name as sent (`failed-dispatch`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Gated => "gated",
            EventKind::FailedDispatch => "failed-dispatch",
            EventKind::Damped => "damped",
            EventKind::GivenUp => "given-up",
            EventKind::Ineffective => "ineffective",
            EventKind::Unknown => "unknown",
            EventKind::Recovered => "recovered",
            EventKind::Proposed => "proposed",
        }
    }
}

/// What the ledger remembers of a tick's notifications: one record per notified tick, beside the
/// op's ticks (`<env>/<op>/notify/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyRecord {
    /// Always 1.
    pub version: u32,
    /// Always `notification`.
    pub kind: String,
    /// The ConvergeOp.
    pub op: String,
    /// Its env.
    pub env: String,
    /// The tick notified.
    pub tick_id: String,
    /// When the notifications were sent.
    pub timestamp: String,
    /// Whether the events reported a problem (`recovered` alone does not).
    pub problem: bool,
    /// The events sent.
    pub events: Vec<Notified>,
    /// Each sink's delivery of each event.
    pub sinks: Vec<Delivery>,
}

impl Record for NotifyRecord {
    const KIND: RecordKind = RecordKind::Notify;
    const NAME: &'static str = "notification";
    const REQUIRED: &'static [&'static str] = &["op", "env", "tickId"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, chant_store::ledger::Error> {
        ShardKey::notify(member, &self.env, &self.op)
    }
}

/// One event sent, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notified {
    /// What happened.
    pub event: EventKind,
    /// The rule whose outcome it was.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule_id: Option<String>,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
}

/// One sink's delivery of one event, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The sink's name (`webhook $CHANT_NOTIFY_URL`).
    pub sink: String,
    /// The event.
    pub event: EventKind,
    /// Whether it was delivered.
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}
