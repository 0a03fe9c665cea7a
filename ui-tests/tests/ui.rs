//! Every compile-time refusal of chant's macros, and the forms they accept.
//!
//! `tests/ui/<family>/<case>.rs` must fail to compile with exactly the adjacent `.stderr`;
//! `tests/pass/*.rs` must compile (and run). Regenerate snapshots with `TRYBUILD=overwrite cargo
//! test -p ui-tests` and review them in `git diff`; never edit a `.stderr` by hand. The snapshots
//! belong to the toolchain pinned in `rust-toolchain.toml`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
    t.pass("tests/pass/*.rs");
}
