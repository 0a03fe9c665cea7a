//! `operator undamp`: a fact a person records to clear flap damping by hand.
//!
//! Damping ends by itself when a tick finds the predicate false, and after the cool-off
//! ([`super::FLAP_COOL_OFF`]). When the cause is fixed and the cool-off is too long to wait,
//! `chant operator undamp <op> [<rule>]` appends an [`UndampFact`] beside the op's ticks
//! (`<env>/<op>/control`). The next tick that starts after it plans with the damped runs of that
//! rule (or of every rule) dropped ([`undamped`]), so it may dispatch again; the fact is a
//! recorded decision with who made it and when, never a rewritten tick record.

use super::control::ControlFact;

use super::record::FlapEntry;

/// A person's decision to clear the flap damping of a ConvergeOp, or of one of its rules: a
/// [`ControlFact`] of kind [`UNDAMP`], with the rule whose runs are cleared (every rule's when
/// absent). Facts written before the other control kinds existed read as such unchanged.
pub type UndampFact = ControlFact;

/// The `kind` of an [`UndampFact`].
pub const UNDAMP: &str = "undamp";

/// The runs a tick plans with once `fact` is taken into account: when the fact is newer than the
/// tick the runs come from (`last_tick`, its timestamp; `None`: no tick yet), the runs of its
/// rule (or of every rule) are dropped; otherwise they are kept as they are. Pure.
pub fn undamped(previous: &[FlapEntry], fact: Option<&UndampFact>, last_tick: Option<&str>) -> Vec<FlapEntry> {
    let newer = fact.filter(|f| f.kind == UNDAMP && f.is_newer_than(last_tick));
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
            reason: None,
            until: None,
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
