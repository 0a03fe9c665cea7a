//! chant keeps declared environments converged.
//!
//! Users write Ops and ConvergeOps as Rust source with [`op!`] and [`converge_op!`]; the macros
//! check every rule at compile time, embed the validated table as op.json, and register it with
//! the project binary that [`main!`] builds. See the README for a tour.

extern crate self as chant;

// The storage layer (git, the ledger, leases) and what it stands on, from `chant-store`, under
// the paths they always had here.
pub use chant_store::{backoff, canonical, clock, error, git, id, lease, ledger, process};

pub mod approval;
pub mod behaviour;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
pub mod diff;
pub mod duration;
pub mod gate;
pub mod graph;
pub mod handoff;
pub mod http;
pub mod lexicon;
pub mod model;
pub mod notification;
#[cfg(feature = "notify")]
pub mod notify;
pub mod observe;
pub mod operator;
pub mod project;
pub mod redact;
pub mod registry;
pub mod runner;
pub mod schedule;
#[cfg(feature = "serve")]
pub mod serve;
pub mod step;
#[cfg(feature = "box")]
pub mod supervisor;
pub mod terminal;
pub mod tick;

#[doc(hidden)]
pub mod __private;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;

pub use chant_macros::{converge_op, main, op, when};

/// The names a project needs to declare its ops.
pub mod prelude {
    pub use crate::step::{StepContext, StepError, StepResult};
    pub use crate::{converge_op, op, when};
}
