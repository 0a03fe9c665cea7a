//! chant's integration tests: one test binary, one module per area.

// Test helpers outside `#[test]` functions unwrap freely: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The tests drive real binaries (chant's, git, PostgreSQL's) with std's Command, as a user would;
// the ban in chant/clippy.toml is for the library, whose children go through `chant::process`.
#![allow(clippy::disallowed_methods)]

mod behaviour_command;
mod behaviour_conformance;
mod behaviour_corpus;
mod behaviour_engine;
mod behaviour_http;
mod behaviour_screen;
mod bounds;
mod deep_conformance;
mod estate_lifecycle;
mod files;
mod fuzz;
mod graph_postgres;
mod guard;
mod honesty_props;
mod layering;
mod lease;
mod ledger;
mod macros;
mod observe;
mod opcheck;
mod postgres;
mod postgres_cluster;
mod postgres_conformance;
mod postgres_deep;
mod postgres_estate;
mod postgres_export;
mod postgres_lifecycle;
mod predict_postgres;
mod sprite_direct;
mod sprite_heal;
mod sprite_lexicon;
mod supervisor;
