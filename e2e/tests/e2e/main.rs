//! chant end to end: the fixture project's real binaries (`e2e-project`, the stock
//! `e2e-stock-chant`) and the example's `staging-converge`, run as child processes in temporary
//! git repositories, with real files, a real bare remote and real concurrent processes. One test
//! binary, one module per area of the "Tests" section.

// Test helpers outside `#[test]` functions unwrap freely: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods)]

mod support;

mod bad_input;
mod bounds;
mod carried_gates;
mod check_lexicon;
mod clock;
mod components;
mod controls;
mod deep;
mod delegate;
mod diff;
mod explain;
mod faults;
mod faults_concurrent;
mod faults_disk;
mod faults_facts;
mod faults_liveness;
mod faults_remote;
mod faults_supervisor;
mod fence;
mod follow;
mod gate_remote;
mod gates;
mod golden;
mod graph_predict;
mod health;
mod honesty;
mod hostile;
mod import;
mod init;
mod ledger;
mod notify;
mod operator;
mod operator_exits;
mod operator_metrics;
mod operator_signals;
mod operator_views;
mod original_gates;
mod plan;
mod plan_gates;
mod proposals;
mod quiet;
mod readme;
mod refused_apply;
mod replay;
mod schedulers;
mod sealed_gates;
mod search;
mod secrets;
mod serve;
mod serve_env;
mod serve_graph;
mod shell;
mod slips;
mod tick_record;
mod undeclared;
mod unrecordable;
