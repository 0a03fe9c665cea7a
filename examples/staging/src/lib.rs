//! The staging example: a complete chant project.
//!
//! - [`ops`] declares the project's Ops and its ConvergeOp, exactly as a user writes them;
//! - [`declaration`] declares what the `staging` env contains (files, bound to a directory by
//!   `chant.toml` at the repository root);
//! - [`prod_db`] declares the `prod-db` env (PostgreSQL tables, bound to the variable holding the
//!   DSN) and its ops: a ConvergeOp, and gated destructive ops run only by hand.
//!
//! The ops live in this library so each expands once; the binaries `staging-converge` (whose bare
//! invocation ticks `staging-converge`) and `staging` (the project binary) link it.

pub mod declaration;
pub mod ops;
pub mod prod_db;
