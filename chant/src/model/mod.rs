//! The data model: Ops, ConvergeOps, rules, predicates, actions and symptoms, as op.json and the
//! tick records spell them.
//!
//! Everything here is pure data and pure functions: no I/O, no clock. The files `contract.rs`,
//! `cron.rs`, `rule.rs` and `op.rs` are also compiled into `chant-macros` (included by path), so
//! the compile-time refusals and the runtime backstop share one source of truth.

pub mod contract;
pub mod cron;
pub mod op;
pub mod rule;
pub mod symptom;
pub mod validate;

pub use contract::{ClassKind, DialKind, SymptomKind};
pub use op::{ConvergeSpec, Dial, OP_JSON_VERSION, OpDocument, Overlap, Phase, Schedule, Step, VerbClass};
pub use rule::{
    Action, ComparisonOp, FieldValue, Literal, Predicate, Rule, Source, Symptom, TruthinessOp, check_predicate,
    evaluate, is_well_formed,
};
pub use symptom::{ComponentRow, ConvergeSymptom, EnvStatus, ResourceStatus, ResourceSymptom, UnobservedReason};

#[cfg(test)]
mod tests;
