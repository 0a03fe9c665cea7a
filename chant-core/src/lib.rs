//! The pure contract of chant: what an op.json holds, what a rule table may say, what a symptom
//! produces, which names are valid, which schedules fire, and which dispatches each dial permits.
//!
//! `chant-macros` checks a rule table against it at compile time and serialises its types into
//! op.json; the `chant` runtime deserialises the same types and re-validates every document it
//! loads ([`validate`]) against the same tables. Because both depend on this one crate (as
//! `kube-derive` and `kube-client` share `kube-core`), the compile-time refusals and the runtime
//! backstop cannot drift apart. Everything here is data and pure functions: no I/O, no clock, no
//! environment. `chant` re-exports this crate as `chant::model`.

pub mod carry;
pub mod component;
pub mod contract;
pub mod cron;
pub mod duration;
pub mod limit;
pub mod name;
pub mod op;
pub mod rule;
pub mod step;
pub mod symptom;
pub mod template;
pub mod validate;
pub mod window;

pub use contract::{ClassKind, DialKind, SymptomKind};
pub use limit::RestartLimit;
pub use name::{InvalidName, Name};
pub use op::{ConvergeSpec, Dial, OP_JSON_VERSION, OpDocument, Overlap, Phase, Schedule, VerbClass};
pub use rule::{
    Action, ComparisonOp, FieldValue, Literal, Predicate, Rule, Source, Symptom, TruthinessOp, check_predicate,
    evaluate, is_well_formed,
};
pub use step::{DeleteMode, HttpUrl, LexiconStep, Step};
pub use symptom::{ComponentRow, ConvergeSymptom, EnvStatus, ResourceStatus, ResourceSymptom, UnobservedReason};
pub use window::{SyncWindow, WindowKind};

#[cfg(test)]
mod tests;
