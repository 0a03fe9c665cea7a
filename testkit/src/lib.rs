//! Test support shared by chant's test suites and its benchmarks, so neither includes the other's
//! files by path: [`postgres`], a throw-away PostgreSQL cluster (one per test process), and
//! [`scratch`], a scratch cargo project that builds chant's macros with the real `cargo`, and
//! [`filesystem`], which says what file system a benchmark's temporary directory is on.
//!
//! Everything here runs only under tests and benchmarks, where a failure is a test failure, so the
//! helpers panic with the reason instead of returning errors.

// Test support: a helper that cannot do its job fails the test that called it, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods)]

pub mod filesystem;
pub mod golden;
pub mod postgres;
pub mod scratch;
