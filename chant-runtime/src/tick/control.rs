//! The facts a person records about one ConvergeOp beside its ticks (`<env>/<op>/control`):
//! `operator undamp`'s, and `operator suspend`'s and `resume`'s ([`crate::operator::suspend`]).
//! One lenient shape reads them all, so each reader finds the newest fact of the kinds it cares
//! about, whatever else was appended after it.

use std::ops::ControlFlow;

use chant_store::ledger::{self, Ledger, Record, RecordKind, ShardKey, Visit};
use serde::{Deserialize, Serialize};

/// The `kind` of a suspension ([`crate::operator::suspend`]).
pub const SUSPEND: &str = "suspend";
/// The `kind` of its end, which also clears a rule that gave up ([`super::limit`]).
pub const RESUME: &str = "resume";

/// A person's decision about one ConvergeOp, on its control shard: `suspend`, `resume`, or
/// `undamp` ([`crate::tick::undamp::UndampFact`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlFact {
    /// The shape's version, 1.
    pub version: u32,
    /// `suspend`, `resume` or `undamp`.
    pub kind: String,
    /// The ConvergeOp.
    pub op: String,
    /// Its env.
    pub env: String,
    /// An undamp fact's rule.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule: Option<String>,
    /// Why it is suspended.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// When a suspension lapses by itself (RFC 3339); it stands until resumed when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub until: Option<String>,
    /// Who decided (`--actor`, else the git identity or `$USER`).
    pub by: String,
    /// When (RFC 3339).
    pub timestamp: String,
}

impl ControlFact {
    /// Whether a person recorded this fact after the op's newest tick (`last_tick`, its
    /// timestamp; `None`: no tick yet), so the next tick takes it into account. A fact whose
    /// timestamp does not parse is never newer.
    pub fn is_newer_than(&self, last_tick: Option<&str>) -> bool {
        match (chant_store::clock::parse(&self.timestamp), last_tick.and_then(chant_store::clock::parse)) {
            (Some(at), Some(tick)) => at > tick,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

impl Record for ControlFact {
    const KIND: RecordKind = RecordKind::Control;
    const NAME: &'static str = "control fact";
    const REQUIRED: &'static [&'static str] = &["kind", "op", "env", "by", "timestamp"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        ShardKey::control(member, &self.env, &self.op)
    }
}

/// Returns the newest fact of `key` whose kind is one of `kinds` (unreadable lines skipped).
///
/// # Errors
///
/// Ledger read errors.
pub fn newest(ledger: &Ledger, key: &ShardKey, kinds: &[&str]) -> Result<Option<ControlFact>, ledger::Error> {
    let mut found = None;
    ledger.stream_newest_typed::<ControlFact>(key, |visit| match visit {
        Visit::Record(stored) if kinds.contains(&stored.record.kind.as_str()) => {
            found = Some(stored.record);
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })?;
    Ok(found)
}

/// The flap runs and restart counts a tick plans with once a person's facts are taken into
/// account: an `operator undamp` recorded after the op's newest tick (`last_tick`) clears the
/// damped runs it names ([`super::undamp::undamped`]), and with `operator resume` the counts of
/// a rule that gave up ([`super::limit::cleared`]). With no runs and no counts there is nothing
/// to clear, and the op's facts are not read. The tick and its `--plan` both start here, so the
/// plan says what the tick would do.
///
/// # Errors
///
/// Ledger read errors.
pub fn taken_into_account(
    ledger: &Ledger,
    key: &ShardKey,
    flap: Vec<super::record::FlapEntry>,
    restarts: Vec<super::limit::RestartEntry>,
    last_tick: Option<&str>,
) -> Result<(Vec<super::record::FlapEntry>, Vec<super::limit::RestartEntry>), ledger::Error> {
    if flap.is_empty() && restarts.is_empty() {
        return Ok((flap, restarts));
    }
    // The newest undamp fact, whatever was appended after it (a suspension, a resume).
    let undamp = newest(ledger, key, &[super::undamp::UNDAMP])?;
    let flap = super::undamp::undamped(&flap, undamp.as_ref(), last_tick);
    if restarts.is_empty() {
        return Ok((flap, restarts));
    }
    let resume = newest(ledger, key, &[RESUME])?;
    let facts: Vec<ControlFact> = undamp.into_iter().chain(resume).collect();
    Ok((flap, super::limit::cleared(&restarts, &facts, last_tick)))
}
