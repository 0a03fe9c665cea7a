//! chant's end-to-end fixture: a complete chant project, written the way a user writes one, that
//! the suite in `tests/e2e/` drives through its real binaries in temporary git repositories.
//!
//! - [`ops`] declares the Ops and ConvergeOps with the real macros, one small env per rule the
//!   suite holds the runtime to (apply and restore, unknown, budget, flap damping, gates, secrets);
//! - [`declaration`] declares what each env contains (files, bound to a directory by the
//!   `chant.toml` each test writes).
//!
//! The binary `e2e-project` (`chant::main!()`) links this library; `e2e-stock-chant` is the stock
//! `chant` binary built from its own source, with no ops.

pub mod dashboard;
pub mod declaration;
pub mod operator;
pub mod ops;
pub mod pgbench;
