//! `operator undamp`: a fact a person records to clear flap damping by hand.
//!
//! Damping ends by itself when a tick finds the predicate false, and after the cool-off
//! ([`super::FLAP_COOL_OFF`]). When the cause is fixed and the cool-off is too long to wait,
//! `chant operator undamp <op> [<rule>]` appends an [`UndampFact`] beside the op's ticks
//! (`<env>/<op>/control`). The next tick that starts after it plans with the damped runs of that
//! rule (or of every rule) dropped ([`undamped`]), so it may dispatch again; the fact is a
//! recorded decision with who made it and when, never a rewritten tick record.

use chant_store::ledger::{self, Record, RecordKind, ShardKey};
use serde::{Deserialize, Serialize};

use super::record::FlapEntry;

/// A person's decision to clear the flap damping of a ConvergeOp, or of one of its rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndampFact {
    /// The shape's version, 1.
    pub version: u32,
    /// Always `undamp`.
    pub kind: String,
    /// The ConvergeOp.
    pub op: String,
    /// Its env.
    pub env: String,
    /// The rule whose runs are cleared; every rule's when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule: Option<String>,
    /// Who decided (`--actor`, else `$USER`).
    pub by: String,
    /// When (RFC 3339).
    pub timestamp: String,
}

/// The `kind` of an [`UndampFact`].
pub const UNDAMP: &str = "undamp";

impl Record for UndampFact {
    const KIND: RecordKind = RecordKind::Control;
    const NAME: &'static str = "undamp fact";
    const REQUIRED: &'static [&'static str] = &["kind", "op", "env", "by", "timestamp"];

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        ShardKey::control(member, &self.env, &self.op)
    }
}

/// The runs a tick plans with once `fact` is taken into account: when the fact is newer than the
/// tick the runs come from (`last_tick`, its timestamp; `None`: no tick yet), the runs of its
/// rule (or of every rule) are dropped; otherwise they are kept as they are. Pure.
pub fn undamped(previous: &[FlapEntry], fact: Option<&UndampFact>, last_tick: Option<&str>) -> Vec<FlapEntry> {
    let newer = fact.filter(|f| f.kind == UNDAMP).filter(|f| {
        let at = chant_store::clock::parse(&f.timestamp);
        match (at, last_tick.and_then(chant_store::clock::parse)) {
            (Some(at), Some(tick)) => at > tick,
            (Some(_), None) => true,
            (None, _) => false,
        }
    });
    match newer {
        None => previous.to_vec(),
        Some(f) => previous.iter().filter(|e| f.rule.as_deref().is_some_and(|r| r != e.rule_id)).cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(rule: &str) -> FlapEntry {
        FlapEntry { rule_id: rule.into(), resource: None, run: 3, damped_at: Some("2026-03-01T10:00:00.000Z".into()) }
    }

    fn fact(rule: Option<&str>, at: &str) -> UndampFact {
        UndampFact {
            version: 1,
            kind: UNDAMP.into(),
            op: "c".into(),
            env: "e".into(),
            rule: rule.map(str::to_owned),
            by: "ana".into(),
            timestamp: at.into(),
        }
    }

    #[test]
    fn a_fact_newer_than_the_last_tick_clears_its_rule_or_every_rule() {
        let runs = [entry("a"), entry("b")];
        let tick = Some("2026-03-01T10:05:00.000Z");
        let later = fact(Some("a"), "2026-03-01T10:06:00.000Z");
        assert_eq!(undamped(&runs, Some(&later), tick), [entry("b")]);
        let every = fact(None, "2026-03-01T10:06:00.000Z");
        assert!(undamped(&runs, Some(&every), tick).is_empty());
        // Already seen by a tick after it, or unreadable: nothing changes.
        let earlier = fact(None, "2026-03-01T10:04:00.000Z");
        assert_eq!(undamped(&runs, Some(&earlier), tick), runs);
        let garbled = fact(None, "yesterday");
        assert_eq!(undamped(&runs, Some(&garbled), tick), runs);
        assert_eq!(undamped(&runs, None, tick), runs);
    }
}
