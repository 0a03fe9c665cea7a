//! A tick: observe, derive a symptom, evaluate the rules, dispatch within the budget and the
//! dial's authority, record.
//!
//! This module holds the pure half: [`plan()`] (from a symptom and a rule table to outcomes) and
//! [`record`] (the tick record and its summary line). The effectful half builds on it:
//! [`execute()`] (observation, dispatch, the ledger append), [`dispatch`] (a `run()` as a child
//! process that hands back its run record), and [`leased()`] with its [`Fence`] (the one leased
//! tick: take or renew the lease, check it before every side effect, release it). [`preview()`]
//! observes and plans as a tick does and writes nothing (`tick --plan`); [`reading`] writes a
//! predicate back in the DSL's words and reads it against a symptom.
//!
//! # Guarantees
//!
//! - `unknown` never remediates: a `run()` rule that fires on an unknown env or resource is
//!   recorded `reported`, whatever the rule says.
//! - The worst tick is bounded: at most `budget` dispatches; a match beyond it is
//!   `skipped-budget`, never queued.
//! - A dial never grants more than its matrix: a refused dispatch is `reported` before any budget
//!   is used.
//! - A rule whose predicate reads `adopt_count` never dispatches a mutating op: the macros and the
//!   loader refuse such a table, and the planner refuses the dispatch again (the backstop for a
//!   table that did not come through either).
//! - Flap damping reads only the newest tick record's run lengths, so it survives restarts.
//!
//! # Assumptions
//!
//! - The rule table was validated (by the macros, and again by the catalog) before planning.
//!
//! # Caveats
//!
//! - A target's class is looked up in this binary's catalog; a target missing from it is reported.

pub use chant_lexicon::handoff::{ENV_VAR, RESOURCE_VAR};

pub mod control;
pub mod dispatch;
mod estate;
pub mod execute;
pub mod explain;
pub mod fence;
pub mod health;
pub mod leased;
pub mod limit;
pub mod observer;
pub mod plan;
pub mod preview;
pub mod proposal;
pub mod reading;
pub mod record;
pub mod replay;
pub mod undamp;
pub mod verify;
pub mod window;

#[cfg(test)]
mod tests;

use chant_lexicon::model::{ConvergeSymptom, ResourceStatus, ResourceSymptom};

pub use dispatch::Dispatcher;
pub use execute::{
    TickOptions, TickOutcome, execute, execute_after, observe, plan_with, plan_with_controls, record_interrupted,
};
pub use fence::{Fence, Lost, Proof, Proofs};
pub use leased::{Claim, LEASE_WAIT, Landing, Leased, Ran, Release, leased};
pub use observer::{ObserveError, parse_observation};
pub use plan::{
    COOL_OFF_WORDS, Controls, DispatchResult, FLAP_COOL_OFF, Plan, PlanInput, Subject, cooled, is_refusal, next_flap,
    plan, plan_controlled, record_dispatch, stamp_damped,
};
pub use preview::{Preview, RuleVerdict, preview};
pub use record::{
    Action, DRIFTED_PATHS, DriftedPath, ENTITIES, Fired, FlapEntry, LeaseStamp, ObservedResource, Outcome,
    PlannedSymptom, Summary, TickRecord,
};

/// Computes the summary counts of a tick from its subject and final outcomes.
pub fn summarise(subject: Subject<'_>, outcomes: &[Outcome]) -> Summary {
    let mut s = match subject {
        Subject::Env(sym) => env_counts(sym),
        Subject::Resources(rs) => resource_counts(rs),
    };
    s.count_outcomes(outcomes);
    s
}

fn env_counts(sym: &ConvergeSymptom) -> Summary {
    Summary {
        drifted: sym.create_count + sym.update_count + sym.delete_count,
        unobserved: sym.unobserved_count,
        adopted: sym.adopt_count,
        baselined: sym.baselined_count,
        ..Summary::default()
    }
}

fn resource_counts(rs: &[ResourceSymptom]) -> Summary {
    let count = |st: ResourceStatus| rs.iter().filter(|r| r.status == st).count() as u64;
    Summary {
        drifted: count(ResourceStatus::Drifted),
        unobserved: count(ResourceStatus::Unknown),
        ..Summary::default()
    }
}
