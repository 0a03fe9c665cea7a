//! Compile-fail and pass cases for chant's macros; see `tests/`.
//!
//! The library itself holds one module of ordinary declarations compiled under the strictest
//! lints, so `cargo clippy --workspace --all-targets -- -D warnings` proves the generated code is
//! clean (trybuild's pass cases cover rustc's lints, not clippy's).

mod lint_clean;
