//! The serve benchmark's project binary: the full chant command line over the `estate` env of
//! `serve_bench.rs` (2,000 PostgreSQL tables and 1,000 files) and its one ConvergeOp; it does not
//! link the `chant_e2e` library, so the suite's ops are not in its catalog.

#[path = "../serve_bench.rs"]
mod serve_bench;

chant::main!();
