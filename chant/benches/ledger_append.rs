//! Append cost of the ledger at growing history, to show it is O(1) in the number of records.
//!
//! Run with `cargo bench -p chant --bench ledger_append` (release build). For each history size
//! it fills one shard key to that many records through the public API, then times 15 further
//! appends and 15 reads of the newest record, and prints the medians and the bytes each append
//! adds to `.git/objects`. `CHANT_BENCH_SIZES=0,1000,10000,100000` picks other sizes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};

const REPETITIONS: usize = 15;

fn main() {
    let sizes: Vec<usize> = std::env::var("CHANT_BENCH_SIZES")
        .unwrap_or_else(|_| "0,1000,10000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    println!("ledger append, one shard key, {} build, median of {REPETITIONS}", profile());
    println!("{:>16} | {:>14} | {:>18} | {:>16}", "records before", "append", "bytes per append", "latest()");
    let mut first = None;
    for size in sizes {
        let row = measure(size);
        let ratio = first.get_or_insert(row.append).as_secs_f64();
        println!(
            "{:>16} | {:>11.3} ms | {:>18} | {:>13.3} ms   ({:.2}x the first)",
            size,
            ms(row.append),
            row.bytes,
            ms(row.latest),
            row.append.as_secs_f64() / ratio
        );
    }
}

struct Row {
    append: Duration,
    latest: Duration,
    bytes: u64,
}

fn measure(size: usize) -> Row {
    let tmp = tempfile::tempdir().unwrap();
    gix::init(tmp.path()).unwrap();
    let key = ShardKey::converge(None, "staging", "staging-converge").unwrap();
    // Fill with gc enabled, as in production, so loose objects get packed along the way.
    let filler = Ledger::open(tmp.path(), hermetic(LedgerConfig::default())).unwrap();
    for n in 0..size {
        filler.append(&key, &line(n)).unwrap();
    }
    // Measure without gc, so no append pays for a repack.
    let ledger = Ledger::open(tmp.path(), hermetic(LedgerConfig { gc_every: 0, ..LedgerConfig::default() })).unwrap();
    let objects = tmp.path().join(".git/objects");
    let before = du(&objects);
    let mut appends = Vec::new();
    for n in 0..REPETITIONS {
        let start = Instant::now();
        ledger.append(&key, &line(size + n)).unwrap();
        appends.push(start.elapsed());
    }
    let bytes = (du(&objects) - before) / REPETITIONS as u64;
    let mut reads = Vec::new();
    for _ in 0..REPETITIONS {
        let start = Instant::now();
        let latest = ledger.latest(&key).unwrap();
        reads.push(start.elapsed());
        assert!(latest.record.is_some());
    }
    Row { append: median(appends), latest: median(reads), bytes }
}

/// A tick record of a realistic size (about 600 bytes).
fn line(n: usize) -> String {
    format!(
        concat!(
            r#"{{"env":"staging","firedRuleIds":["drift-apply"],"flap":[{{"ruleId":"drift-apply","run":1}}],"#,
            r#""id":"tick-{n:08}","log":"converge(staging): drifted=1 remediated=1 reported=0 skipped-budget=0 "#,
            r#"skipped-flap=0 gated=0 unobserved=0 adopted=0","op":"staging-converge","opDigest":"sha256:{n:064}","#,
            r#""outcomes":[{{"action":"ran","op":"staging-apply","ruleId":"drift-apply","source":{{"file":"src/ops.rs","line":12}}}}],"#,
            r#""startedAt":"2026-11-29T22:00:00.000Z","summary":{{"adopted":0,"drifted":1,"gated":0,"remediated":1,"#,
            r#""reported":0,"skippedBudget":0,"skippedFlap":0,"unobserved":0}},"timestamp":"2026-11-29T22:00:01.000Z","version":1}}"#
        ),
        n = n
    )
}

fn hermetic(config: LedgerConfig) -> LedgerConfig {
    let env = [("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_CONFIG_GLOBAL", "/dev/null")];
    LedgerConfig { git_env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(), ..config }
}

fn du(path: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(path).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() { du(&entry.path()) } else { meta.len() };
    }
    total
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn profile() -> &'static str {
    if cfg!(debug_assertions) { "debug" } else { "release" }
}
