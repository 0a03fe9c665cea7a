//! chant's storage layer: git is chant's only memory.
//!
//! - [`git`]: the repository (reads and writes through gix, fetch and push through the `git`
//!   binary, in one module, the way jj does it);
//! - [`ledger`]: records (ticks, runs, gate facts) on the orphan branch `chant/lifecycle`;
//! - [`lease`]: leases as refs updated by compare-and-swap, with fencing tokens;
//! - what they stand on: [`clock`] (every time they read), [`process`] (every child process),
//!   [`backoff`], [`canonical`] JSON, [`id`]s and [`error`] rendering.
//!
//! It knows nothing of planning, lexicons or the command line: the `chant` facade (the package
//! `chant-ops`) re-exports these modules under the same paths (`chant::ledger`, `chant::lease`).

pub mod backoff;
pub mod canonical;
pub mod clock;
pub mod error;
pub mod git;
pub mod id;
pub mod lease;
pub mod ledger;
pub mod process;

/// The data model, from `chant-core` (as the facade's `chant::model` re-exports it).
pub(crate) use chant_core as model;
