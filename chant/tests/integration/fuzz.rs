//! The fuzz campaign (issue #19): every target of `chant::fuzz::TARGETS` (a parser of outside
//! input, and what chant does with what it parses) runs on generated inputs and must never panic.
//!
//! The driver is proptest, on the stable toolchain, inside the ordinary test binary: each input is
//! arbitrary bytes, a seed of the target's corpus (`tests/fuzz-corpus/<target>/`, taken from the
//! tests and fixtures: the examples' golden op.json, the golden ledger's lines, the parsers' unit
//! cases) with random byte edits, splices and tokens, or a run of dictionary tokens. Every seed is
//! run as is first. A panic fails the test with the smallest input proptest shrinks it to.
//!
//! CI runs `CHANT_FUZZ_CASES` inputs per target (default 2,000, a few seconds in all); a campaign
//! sets it higher and prints the figures (README.md, "Fuzzing").

use std::sync::atomic::{AtomicU64, Ordering};

use chant::fuzz::TARGETS;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Tokens the mutations insert and the dictionary runs are made of: the syntax of every format
/// the targets read, boundary numbers, and bytes a parser may trip on.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "1e999",
    "-0",
    "0.5",
    "\n",
    "\r\n",
    "\t",
    " ",
    "=",
    "[env.",
    "[project]",
    "[ledger]",
    "name = ",
    "\"\"\"",
    "#",
    "*",
    "/",
    "-",
    "L",
    "W",
    "?",
    "MON",
    "JAN",
    "60",
    "24",
    "32",
    "13",
    "h",
    "m",
    "s",
    "ms",
    "@",
    "://",
    "https://",
    "%",
    "\u{1b}[",
    "\u{202e}",
    "\u{feff}",
    "é",
    "\u{10ffff}",
    "\u{0}",
    "\u{7f}",
    "\u{9b}",
    "\"kind\":",
    "\"op\":",
    "\"runId\":",
    "\"expiresAt\":",
    "\"version\":1",
    "\"status\":",
    "\"resources\":",
    "\"services\":",
    "\"name\":",
    ".jsonl",
    "9999-12-31T23:59:59Z",
    "2026-03-01T10:00:00.000Z",
    "+25:00",
    "running",
    "failed",
    "drifted",
    "unknown",
];

fn cases() -> u32 {
    std::env::var("CHANT_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus").join(target);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the seed corpus of {target} at {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Applies `edits` (position, byte, kind) to `seed`.
fn mutate(seed: &[u8], edits: &[(u16, u8, u8)]) -> Vec<u8> {
    let mut out = seed.to_vec();
    for &(pos, byte, kind) in edits {
        let at = if out.is_empty() { 0 } else { usize::from(pos) % (out.len() + 1) };
        match kind {
            0 if at < out.len() => out[at] = byte,
            1 => out.insert(at, byte),
            2 if at < out.len() => {
                out.remove(at);
            }
            3 => {
                let end = (at + usize::from(byte)).min(out.len());
                let chunk = out[at..end].to_vec();
                out.splice(at..at, chunk);
            }
            4 => {
                let end = (at + usize::from(byte)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let token = TOKENS[usize::from(byte) % TOKENS.len()].as_bytes();
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}

fn inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let count = seeds.len();
    let raw = proptest::collection::vec(any::<u8>(), 0..512);
    let edits = proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..6), 1..10);
    let mutated = (0..count, edits).prop_map(move |(i, edits)| mutate(&seeds[i], &edits));
    let soup = proptest::collection::vec(0..TOKENS.len(), 0..40)
        .prop_map(|picks| picks.into_iter().flat_map(|i| TOKENS[i].bytes()).collect::<Vec<u8>>());
    prop_oneof![1 => raw, 6 => mutated, 2 => soup]
}

/// Runs target `name` on its seeds, then on [`cases`] generated inputs, and prints the figure.
fn campaign(name: &str) {
    let target = TARGETS.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no fuzz target {name}"));
    let seeds = corpus(name);
    assert!(!seeds.is_empty(), "the seed corpus of {name} is empty");
    for seed in &seeds {
        (target.run)(seed);
    }
    let executions = AtomicU64::new(seeds.len() as u64);
    let config = Config { cases: cases(), failure_persistence: None, max_shrink_iters: 4_096, ..Config::default() };
    let result = TestRunner::new(config).run(&inputs(seeds), |input| {
        executions.fetch_add(1, Ordering::Relaxed);
        (target.run)(&input);
        Ok(())
    });
    let panics = u64::from(result.is_err());
    eprintln!("fuzz {name}: {} executions, {panics} panics", executions.load(Ordering::Relaxed));
    if let Err(failure) = result {
        panic!("fuzz target {name} panicked: {failure}");
    }
}

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                campaign(stringify!($name));
            }
        )*

        /// Every target of the library has a test here, and every test a target and a corpus.
        #[test]
        fn every_target_runs() {
            let here = [$(stringify!($name)),*];
            let mut library: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
            library.sort_unstable();
            let mut listed = here.to_vec();
            listed.sort_unstable();
            assert_eq!(listed, library);
        }
    };
}

targets!(
    op_json,
    ledger_lines,
    shard_names,
    gate_facts,
    lease_blob,
    chant_toml,
    workspace_box,
    cron,
    duration,
    services_list,
    supervisor_messages,
    behaviour_answer,
    chant_now,
    observer_reading,
    git_output,
    approval,
    redact,
    gate_seals,
    plan_documents,
    baseline_documents,
    notify_payloads,
    import_module,
);

/// The notify target is not vacuous: its seeds are tick records that raise events, whose
/// payloads it renders (a seed that stopped parsing would leave the target testing nothing).
#[test]
fn the_notify_seeds_raise_events() {
    let mut raised = 0;
    for seed in corpus("notify_payloads") {
        let text = String::from_utf8(seed).unwrap();
        let record: chant::tick::TickRecord = serde_json::from_str(text.split_once('\n').unwrap().1).unwrap();
        let why = |_: &str| None;
        let cx = chant::notify::event::Context {
            why: &why,
            unknown_run: 5,
            unknown_ticks: 1,
            problem_open: true,
            unknown_sent: false,
        };
        raised += chant::notify::event::events(&record, &cx).len();
    }
    assert!(raised >= 2, "{raised}");
}
