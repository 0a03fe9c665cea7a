//! Replay against one read of the same history: `replay site-converge --json` and `operator log
//! --op site-converge --json` of the fixture's project binary, as child processes, over 10,000
//! and 100,000 recorded ticks of one ConvergeOp, in the same run.
//!
//! Run with `cargo bench -p chant-e2e --bench replay` (release build). `CHANT_BENCH_REPS` sets
//! the repetitions (default 3); each repetition runs every case once, the two commands of a
//! size alternating which goes first, and the bench prints medians and in-run ratios: replay's
//! time over the read's (goal: at most 2x) and each command's peak memory at 100,000 ticks over
//! its peak at 10,000 (replay streams the records, so its memory must not grow with history;
//! `operator log` holds its whole timeline).
//!
//! - **History**: four real ticks of `site-converge` (the first apply, in sync, a drift and its
//!   repair, in sync again) are recorded by `e2e-project tick` in a template repository; the
//!   benchmark's ledgers repeat them (the first apply, then one drift in every ten ticks), with
//!   fresh ids and one tick a minute, laid down in chant's shard layout by one `git
//!   fast-import`. Their flap runs are what those ticks really record, so the replay of the
//!   unchanged table must find every tick replayable and no difference: the bench checks both.
//! - **Time** is spawn to exit, stdout to /dev/null. **Peak memory** is the child's maximum
//!   resident set, read with `getrusage(RUSAGE_CHILDREN)` by a measuring process (this bench
//!   binary re-executed) whose only child is the command.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{fast_import, hermetic, project, stamp};

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};
use serde_json::Value;

const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");
/// Set in the environment of the bench re-executed as the measuring process.
const MEASURE_VAR: &str = "CHANT_BENCH_MEASURE";
const SIZES: [usize; 2] = [10_000, 100_000];
const CONFIG: &str = "[project]\nname = \"replay-bench\"\n\n[env.site]\nfiles_root = \"estates/site\"\n";

fn main() {
    if std::env::var_os(MEASURE_VAR).is_some() {
        measure();
        return;
    }
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(3);
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let templates = templates(&home, &tmp.path().join("template"));
    let dirs: Vec<PathBuf> =
        SIZES.iter().map(|n| history(&home, &tmp.path().join(format!("history-{n}")), &templates, *n)).collect();
    for (dir, n) in dirs.iter().zip(SIZES) {
        check(&home, dir, n);
    }
    let setup = started.elapsed();

    // [size][0 replay, 1 log] -> runs
    let mut runs: Vec<[Vec<Run>; 2]> = SIZES.iter().map(|_| [Vec::new(), Vec::new()]).collect();
    for rep in 0..reps {
        for (s, dir) in dirs.iter().enumerate() {
            let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
            for which in order {
                runs[s][which].push(run(&home, dir, which));
            }
        }
    }

    println!("replay vs operator log --json, one ConvergeOp (site-converge), {reps} repetition(s), setup {setup:.1?}");
    println!("{:>9}  {:>22}  {:>22}  {:>10}", "ticks", "replay time / peak", "log time / peak", "time ratio");
    let mut peaks = [[0u64; 2]; 2];
    for (s, n) in SIZES.iter().enumerate() {
        let [replay, log] = &runs[s];
        let (rt, lt) = (median(replay.iter().map(|r| r.time)), median(log.iter().map(|r| r.time)));
        let (rm, lm) = (max_of(replay.iter().map(|r| r.peak_kib)), max_of(log.iter().map(|r| r.peak_kib)));
        peaks[s] = [rm, lm];
        println!(
            "{n:>9}  {:>10.3?} / {:>6} MiB  {:>10.3?} / {:>6} MiB  {:>9.2}x",
            rt,
            rm / 1024,
            lt,
            lm / 1024,
            rt.as_secs_f64() / lt.as_secs_f64()
        );
    }
    let growth = |which: usize| peaks[1][which] as f64 / peaks[0][which] as f64;
    println!(
        "peak memory at {} ticks over {} ticks: replay {:.2}x, operator log {:.2}x (goal: replay ≈ 1x, its memory does not grow with history)",
        SIZES[1],
        SIZES[0],
        growth(0),
        growth(1)
    );
    let big = &runs[1];
    println!(
        "replay time over operator log time at {} ticks: {:.2}x (goal: at most 2x)",
        SIZES[1],
        median(big[0].iter().map(|r| r.time)).as_secs_f64() / median(big[1].iter().map(|r| r.time)).as_secs_f64()
    );
}

/// One measured run.
struct Run {
    time: Duration,
    peak_kib: u64,
}

/// Runs replay (`which` 0) or the log (1) in `dir` through the measuring process.
fn run(home: &Path, dir: &Path, which: usize) -> Run {
    let args: &[&str] = if which == 0 {
        &["replay", "site-converge", "--json"]
    } else {
        &["operator", "log", "--op", "site-converge", "--json"]
    };
    let me = std::env::current_exe().unwrap();
    let out = hermetic(me.to_str().unwrap(), home, dir).env(MEASURE_VAR, "1").arg(PROJECT).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().unwrap());
    Run { time: Duration::from_micros(parts.next().unwrap()), peak_kib: parts.next().unwrap() }
}

/// The measuring process: runs its arguments as its only child (stdout to /dev/null) and prints
/// `<microseconds> <peak KiB>`.
fn measure() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let t = Instant::now();
    let status = std::process::Command::new(&args[0])
        .args(&args[1..])
        .env_remove(MEASURE_VAR)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let elapsed = t.elapsed();
    assert!(status.success(), "{args:?}");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    println!("{} {}", elapsed.as_micros(), usage.max_rss());
}

/// Records four real ticks in a template project and returns them: first apply, in sync, drift
/// repaired, in sync.
fn templates(home: &Path, dir: &Path) -> Vec<Value> {
    project(home, dir, CONFIG);
    let tick = || {
        let out = hermetic(PROJECT, home, dir).args(["tick", "site-converge", "--json"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    tick();
    tick();
    std::fs::write(dir.join("estates/site/app.conf"), "port = 1\n").unwrap();
    tick();
    tick();
    let key = ShardKey::converge(None, "site", "site-converge").unwrap();
    let ticks: Vec<Value> = Ledger::open(dir, LedgerConfig::default())
        .unwrap()
        .read(&key)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.value)
        .collect();
    assert_eq!(ticks.len(), 4);
    assert!(ticks[0]["log"].as_str().unwrap().contains("remediated=1"));
    assert!(ticks[2]["log"].as_str().unwrap().contains("drifted=1 remediated=1"));
    assert!(ticks.iter().all(|t| t.get("symptom").is_some()), "every tick records its symptom");
    ticks
}

/// A project whose ledger holds `n` ticks of site-converge: the first apply, then one drift in
/// every ten ticks, in chant's shard layout.
fn history(home: &Path, dir: &Path, templates: &[Value], n: usize) -> PathBuf {
    project(home, dir, CONFIG);
    let key_dir = ShardKey::converge(None, "site", "site-converge").unwrap().dir();
    let base: i64 = 1_764_000_000;
    let record = |i: usize| {
        let mut r = match i {
            0 => templates[0].clone(),
            _ if (i - 1).is_multiple_of(10) => templates[2].clone(),
            _ => templates[3].clone(),
        };
        r["id"] = format!("00000000-0000-4000-8000-{i:012}").into();
        r["startedAt"] = stamp(base + i as i64 * 60).into();
        r["timestamp"] = stamp(base + i as i64 * 60).into();
        serde_json::to_string(&r).unwrap()
    };
    let shards = (0..n.div_ceil(64)).map(|shard| {
        let mut content = String::new();
        for i in shard * 64..((shard + 1) * 64).min(n) {
            content.push_str(&record(i));
            content.push('\n');
        }
        (format!("{key_dir}/{}/{shard}.jsonl", shard / 64), content)
    });
    fast_import(home, dir, shards.collect::<Vec<_>>());
    dir.to_owned()
}

/// The replay of the unchanged table finds every tick replayable and no difference; the log reads
/// every tick.
fn check(home: &Path, dir: &Path, n: usize) {
    let out = hermetic(PROJECT, home, dir).args(["replay", "site-converge", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &doc["summary"];
    assert_eq!(
        (s["ticks"].as_u64(), s["replayed"].as_u64(), s["differ"].as_u64()),
        (Some(n as u64), Some(n as u64), Some(0)),
        "{s}"
    );
    let out =
        hermetic(PROJECT, home, dir).args(["operator", "log", "--op", "site-converge", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["entries"].as_array().unwrap().iter().filter(|e| e["kind"] == "tick").count(), n);
}

fn median(values: impl Iterator<Item = Duration>) -> Duration {
    let mut v: Vec<Duration> = values.collect();
    v.sort();
    v[v.len() / 2]
}

fn max_of(values: impl Iterator<Item = u64>) -> u64 {
    values.max().unwrap_or(0)
}
