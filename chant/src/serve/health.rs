//! Health: one word for where a ConvergeOp stands, derived from what `operator status` shows of
//! it (its last tick's summary line and error, its pending gates), and rolled up over an env and
//! a member as the worst of its ops.
//!
//! The order, worst first: `failed` (the last tick recorded an error), `gated` (a gate waits for
//! a human), `unknown` (the last tick could not observe everything), `drifted` (the last tick
//! saw drift), `never-ticked`, `in-sync`. Pure: no I/O, no clock.

use std::fmt;

use serde::Serialize;

use crate::operator::status::OpStatus;

/// Where a ConvergeOp (or a group of them) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// The last tick found nothing to do: no drift, nothing unobserved, no gate waiting.
    InSync,
    /// No tick is recorded yet.
    NeverTicked,
    /// The last tick saw drift (created, updated or deleted entries, or drifted resources).
    Drifted,
    /// The last tick could not observe everything, so it remediated nothing.
    Unknown,
    /// A dispatch stopped at a gate that waits for a human's approval.
    Gated,
    /// The last tick recorded an error.
    Failed,
}

impl Health {
    /// Returns the word records and pages use (`in-sync`, `never-ticked`).
    pub fn as_str(self) -> &'static str {
        match self {
            Health::InSync => "in-sync",
            Health::NeverTicked => "never-ticked",
            Health::Drifted => "drifted",
            Health::Unknown => "unknown",
            Health::Gated => "gated",
            Health::Failed => "failed",
        }
    }

    /// Returns the worst of `healths`, `None` when there are none.
    pub fn worst(healths: impl IntoIterator<Item = Health>) -> Option<Health> {
        healths.into_iter().max()
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The counts a summary line carries, as far as the line says them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// `drifted=N`.
    pub drifted: Option<u64>,
    /// `unobserved=N`.
    pub unobserved: Option<u64>,
    /// `gated=N`.
    pub gated: Option<u64>,
}

/// Reads the counts of a tick's summary line
/// (`converge(<env>): drifted=N remediated=N ... gated=N unobserved=N adopted=N`). A count the
/// line does not carry (an older record, free text) is `None`.
pub fn line_counts(log: &str) -> LineCounts {
    let mut counts = LineCounts::default();
    let fields = log.split_once("): ").map_or(log, |(_, rest)| rest);
    for pair in fields.split_whitespace() {
        let Some((key, value)) = pair.split_once('=') else { continue };
        let Ok(n) = value.parse::<u64>() else { continue };
        match key {
            "drifted" => counts.drifted = Some(n),
            "unobserved" => counts.unobserved = Some(n),
            "gated" => counts.gated = Some(n),
            _ => {}
        }
    }
    counts
}

/// Returns the health of one `operator status` row.
pub fn of(row: &OpStatus) -> Health {
    let Some(tick) = &row.last_tick else {
        return if row.pending_gates.is_empty() { Health::NeverTicked } else { Health::Gated };
    };
    if tick.error.is_some() {
        return Health::Failed;
    }
    let counts = line_counts(&tick.log);
    if !row.pending_gates.is_empty() || counts.gated.is_some_and(|n| n > 0) {
        Health::Gated
    } else if counts.unobserved.is_some_and(|n| n > 0) {
        Health::Unknown
    } else if counts.drifted.is_some_and(|n| n > 0) {
        Health::Drifted
    } else {
        Health::InSync
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::status::{LastTickView, PendingGateView};

    fn row(log: Option<&str>, error: Option<&str>, gates: usize) -> OpStatus {
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
            health: crate::tick::health::Health::of_tick(None),
            last_tick: log.map(|l| LastTickView {
                id: "t".into(),
                started_at: String::new(),
                timestamp: String::new(),
                log: l.into(),
                error: error.map(str::to_owned),
                lease: None,
            }),
            lease: None,
            pending_gates: vec![gate; gates],
        }
    }

    const CLEAN: &str =
        "converge(e): drifted=0 remediated=0 reported=0 skipped-budget=0 skipped-flap=0 gated=0 unobserved=0 adopted=0";

    #[test]
    fn each_row_gets_the_health_its_last_tick_and_gates_say() {
        assert_eq!(of(&row(None, None, 0)), Health::NeverTicked);
        assert_eq!(of(&row(None, None, 1)), Health::Gated, "a hand run's gate with no tick yet");
        assert_eq!(of(&row(Some(CLEAN), None, 0)), Health::InSync);
        assert_eq!(of(&row(Some(&CLEAN.replace("drifted=0", "drifted=4")), None, 0)), Health::Drifted);
        assert_eq!(of(&row(Some(&CLEAN.replace("unobserved=0", "unobserved=1")), None, 0)), Health::Unknown);
        let both = CLEAN.replace("drifted=0", "drifted=4").replace("unobserved=0", "unobserved=1");
        assert_eq!(of(&row(Some(&both), None, 0)), Health::Unknown, "unknown outranks drifted");
        assert_eq!(of(&row(Some(&CLEAN.replace("gated=0", "gated=1")), None, 0)), Health::Gated);
        assert_eq!(of(&row(Some(CLEAN), None, 2)), Health::Gated);
        assert_eq!(of(&row(Some(CLEAN), Some("observer failed"), 2)), Health::Failed, "failed outranks all");
        assert_eq!(of(&row(Some("free text from an older chant"), None, 0)), Health::InSync);
    }

    #[test]
    fn the_worst_health_rolls_up() {
        assert_eq!(Health::worst([]), None);
        assert_eq!(Health::worst([Health::InSync, Health::Drifted, Health::NeverTicked]), Some(Health::Drifted));
        assert_eq!(Health::worst([Health::Gated, Health::Failed, Health::Unknown]), Some(Health::Failed));
    }

    #[test]
    fn counts_are_read_only_from_well_formed_pairs() {
        let c = line_counts("converge(a=1): drifted=3 gated=x unobserved=2");
        assert_eq!(c, LineCounts { drifted: Some(3), unobserved: Some(2), gated: None });
        assert_eq!(line_counts(""), LineCounts::default());
    }
}
