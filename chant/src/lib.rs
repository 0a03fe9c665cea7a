//! chant keeps declared environments converged.
//!
//! Users write Ops and ConvergeOps as Rust source with [`op!`] and [`converge_op!`]; the macros
//! check every rule at compile time, embed the validated table as op.json, and register it with
//! the project binary that [`main!`] builds. See the README for a tour.

extern crate self as chant;

// The layers below, from their crates, under the paths they always had here: storage
// (`chant-store`), the model and the lexicon API (`chant-lexicon`), the runtime
// (`chant-runtime`), and the lexicons (`chant-files`, `chant-postgres`, `chant-box`, under
// `lexicon`).
pub use chant_lexicon::{duration, handoff, http, model, observe, redact};
pub use chant_runtime::{
    approval, catalog, config, diff, gate, graph, notification, operator, project, registry, runner, schedule,
    scheduler, search, step, terminal, tick,
};
pub use chant_store::{backoff, canonical, clock, error, git, id, lease, ledger, process};

pub mod behaviour;
#[cfg(feature = "cli")]
pub mod cli;
pub mod lexicon;
#[cfg(feature = "notify")]
pub mod notify;
#[cfg(feature = "serve")]
pub mod serve;
/// chant's stand-in for the `sprite-env` supervisor (the `sprite-env` binary), from `chant-box`.
#[cfg(feature = "box")]
pub use chant_box::supervisor;

#[doc(hidden)]
pub mod __private;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;

pub use chant_macros::{converge_op, main, op, when};

/// The names a project needs to declare its ops: the macros, what a step of its own is given
/// and returns, and (under the `box` feature) the box lexicon's step macros, which declare its
/// steps to `op!` and `converge_op!`.
pub mod prelude {
    pub use crate::step::{StepContext, StepError, StepResult};
    pub use crate::{converge_op, op, when};
    #[cfg(feature = "box")]
    pub use chant_box::{sprite_apply_services, sprite_service_restart, sprite_services_observe};
}
