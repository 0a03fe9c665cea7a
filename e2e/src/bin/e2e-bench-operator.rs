//! The operator benchmark's project binary: the full chant command line over the 200 trivial
//! ConvergeOps of `bench_ops.rs` and nothing else (it does not link the `chant_e2e` library, so
//! the suite's ops are not in its catalog).

#[path = "../bench_ops.rs"]
mod bench_ops;

chant::main!();
