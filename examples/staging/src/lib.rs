//! The staging example: a complete chant project.
//!
//! - [`ops`] declares the project's Ops and its ConvergeOp, exactly as a user writes them;
//! - [`declaration`] declares what the `staging` env contains (files, bound to a directory by
//!   `chant.toml` at the repository root).
//!
//! The ops live in this library so each expands once; the binaries `staging-converge` (whose bare
//! invocation ticks `staging-converge`) and `staging` (the project binary) link it.

pub mod declaration;
pub mod ops;
