//! Health on the dashboard: each ConvergeOp's word is the one `operator status`, the operator's
//! line and `lifecycle diff` use ([`crate::tick::health`], rolled up from the newest tick), and an
//! env and a member roll up as the worst of their ops.
//!
//! The order, worst first: `failing` (the tick or a dispatch it made failed), `given-up` (a rule
//! reached its restart limit and stopped until a person acts), `gated` (a gate
//! waits for a human, on the tick or among the op's pending gates), `unknown` (the tick could not
//! observe everything), `degraded` (a dispatch ran and the observation after it found its
//! symptom still there), `damped` (a rule was stopped by flap damping), `drifted`,
//! `never-ticked`, `healed`, `in-sync`. Pure: no I/O, no clock.

use std::fmt;

use serde::Serialize;

use crate::operator::status::OpStatus;
use crate::tick::health::HealthState;

/// Where a ConvergeOp (or a group of them) stands, ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// The newest tick observed everything as declared, and no gate waits.
    InSync,
    /// The newest tick found drift, and its dispatches were verified to remove it.
    Healed,
    /// No tick is recorded yet.
    NeverTicked,
    /// The newest tick saw drift.
    Drifted,
    /// A rule was stopped by flap damping.
    Damped,
    /// A dispatch ran and the observation after it found its symptom still there.
    Degraded,
    /// The newest tick could not observe everything, so it remediated nothing.
    Unknown,
    /// A dispatch stopped at a gate that waits for a human's approval.
    Gated,
    /// A rule reached its restart limit and gave up until a person acts.
    GivenUp,
    /// The newest tick, or a dispatch it made, failed.
    Failing,
}

impl Health {
    /// Returns the word records and pages use (`in-sync`, `never-ticked`): the words of
    /// [`HealthState`].
    pub fn as_str(self) -> &'static str {
        HealthState::from(self).as_str()
    }

    /// Returns the worst of `healths`, `None` when there are none.
    pub fn worst(healths: impl IntoIterator<Item = Health>) -> Option<Health> {
        healths.into_iter().max()
    }
}

impl From<HealthState> for Health {
    fn from(state: HealthState) -> Self {
        match state {
            HealthState::InSync => Health::InSync,
            HealthState::Healed => Health::Healed,
            HealthState::NeverTicked => Health::NeverTicked,
            HealthState::Drifted => Health::Drifted,
            HealthState::Damped => Health::Damped,
            HealthState::Degraded => Health::Degraded,
            HealthState::Unknown => Health::Unknown,
            HealthState::Gated => Health::Gated,
            HealthState::GivenUp => Health::GivenUp,
            HealthState::Failing => Health::Failing,
        }
    }
}

impl From<Health> for HealthState {
    fn from(h: Health) -> Self {
        match h {
            Health::InSync => HealthState::InSync,
            Health::Healed => HealthState::Healed,
            Health::NeverTicked => HealthState::NeverTicked,
            Health::Drifted => HealthState::Drifted,
            Health::Damped => HealthState::Damped,
            Health::Degraded => HealthState::Degraded,
            Health::Unknown => HealthState::Unknown,
            Health::Gated => HealthState::Gated,
            Health::GivenUp => HealthState::GivenUp,
            Health::Failing => HealthState::Failing,
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Returns the health of one `operator status` row: its health roll-up, `gated` at least while
/// one of its pending gates waits (a hand run's gate, with or without a tick).
pub fn of(row: &OpStatus) -> Health {
    let health = Health::from(row.health.state);
    if row.pending_gates.is_empty() { health } else { health.max(Health::Gated) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::status::PendingGateView;

    fn row(state: HealthState, gates: usize) -> OpStatus {
        let gate = PendingGateView {
            op: "o".into(),
            gate: "g".into(),
            env: "e".into(),
            resource: None,
            rule: None,
            description: None,
            expires_at: None,
            url: None,
            approve: "chant approve o g".into(),
            plan_digest: None,
            plan: None,
        };
        OpStatus {
            op: "o".into(),
            env: "e".into(),
            member: None,
            health: crate::tick::health::Health { state, detail: None },
            last_tick: None,
            lease: None,
            pending_gates: vec![gate; gates],
            suspended: None,
        }
    }

    #[test]
    fn each_row_gets_the_word_of_its_status_roll_up_and_a_waiting_gate_makes_it_gated() {
        for state in [
            HealthState::InSync,
            HealthState::NeverTicked,
            HealthState::Drifted,
            HealthState::Damped,
            HealthState::Unknown,
            HealthState::Gated,
            HealthState::GivenUp,
            HealthState::Failing,
        ] {
            assert_eq!(of(&row(state, 0)).as_str(), state.as_str(), "one vocabulary");
        }
        assert_eq!(of(&row(HealthState::NeverTicked, 1)), Health::Gated, "a hand run's gate with no tick yet");
        assert_eq!(of(&row(HealthState::Unknown, 2)), Health::Gated);
        assert_eq!(of(&row(HealthState::Failing, 2)), Health::Failing, "failing outranks all");
    }

    #[test]
    fn the_worst_health_rolls_up() {
        assert_eq!(Health::worst([]), None);
        assert_eq!(Health::worst([Health::InSync, Health::Drifted, Health::NeverTicked]), Some(Health::Drifted));
        assert_eq!(Health::worst([Health::Gated, Health::Failing, Health::Unknown]), Some(Health::Failing));
        assert_eq!(Health::worst([Health::Damped, Health::Drifted]), Some(Health::Damped));
        assert_eq!(Health::worst([Health::Gated, Health::GivenUp, Health::Unknown]), Some(Health::GivenUp));
    }
}
