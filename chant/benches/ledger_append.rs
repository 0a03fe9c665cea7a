//! Append cost of the ledger at growing history, to show it is O(1) in the number of records.
//!
//! Run with `cargo bench -p chant-ops --bench ledger_append` (release build). For each history size
//! it fills one shard key of its own repository to that many records through the public API.
//! Then, in 31 rounds that visit every repository in turn (so every size sees the same machine
//! load), it times one more append per repository, then one read of the newest record, and
//! prints the median and fastest append (the median carries the noise of a shared machine, the
//! minimum shows the work itself), the median CPU time of the appending thread per append (the
//! figure to compare on a loaded machine), the loose objects and bytes each append adds to
//! `.git/objects`, and the median read. The same append done by the git binary's plumbing
//! (nine processes: find the newest shard, read it, hash the new blob, rebuild the trees in a
//! temporary index, commit, compare-and-swap the ref) runs in the same repositories for
//! comparison.
//! `CHANT_BENCH_SIZES=0,1000,10000,100000` picks other sizes.
//!
//! On ext4, creating files right after `git gc` deleted thousands of loose objects is slow (the
//! inode allocator skips recently deleted inodes), so a fill that just ran gc makes the next
//! appends pay for that; `CHANT_BENCH_FILL_GC=0` fills without gc to show the append alone.
//!
//! Loose objects live in 256 `objects/xx` fan-out directories, which a fresh repository lacks and
//! `git gc` removes when it packs; creating one is a filesystem cost that varies a lot between
//! machines and has nothing to do with history, so all of them are created before timing. Every
//! object lookup also consults each pack's index, so the `packs` column (bounded by
//! `gc.autoPackLimit`, not by history) explains part of the difference between rows.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
// The comparison runs the git binary's plumbing directly; chant's own children go through
// `chant::process`, which the clippy ban (chant/clippy.toml) is for.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};

const REPETITIONS: usize = 31;

fn main() {
    let sizes: Vec<usize> = std::env::var("CHANT_BENCH_SIZES")
        .unwrap_or_else(|_| "0,1000,10000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let fixtures: Vec<Fixture> = sizes.iter().map(|&size| Fixture::filled(size)).collect();
    let rows = measure(&fixtures);
    println!("ledger append, one shard key, {} build, {REPETITIONS} rounds", profile());
    println!("temporary directory: {}", chant_testkit::filesystem::describe(&std::env::temp_dir()));
    println!(
        "{:>14} | {:>5} | {:>13} | {:>11} | {:>15} | {:>14} | {:>12} | {:>15} | {:>19}",
        "records before",
        "packs",
        "append median",
        "append min",
        "append CPU med",
        "objects/append",
        "bytes/append",
        "latest() median",
        "git plumbing median"
    );
    for (fixture, row) in fixtures.iter().zip(rows) {
        println!(
            "{:>14} | {:>5} | {:>10.3} ms | {:>8.3} ms | {:>12.3} ms | {:>14} | {:>12} | {:>12.3} ms | {:>16.3} ms",
            fixture.size,
            fixture.packs,
            ms(median(row.appends.clone())),
            ms(row.appends.iter().copied().min().unwrap()),
            ms(median(row.cpu.clone())),
            row.objects,
            row.bytes,
            ms(median(row.reads)),
            ms(median(row.plumbing)),
        );
    }
}

/// A repository whose key already holds `size` records.
struct Fixture {
    size: usize,
    dir: tempfile::TempDir,
    ledger: Ledger,
    key: ShardKey,
    /// Packs in the repository after the fill (`git gc --auto` keeps at most `gc.autoPackLimit`).
    packs: usize,
}

impl Fixture {
    fn filled(size: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        gix::init(dir.path()).unwrap();
        let key = ShardKey::converge(None, "staging", "staging-converge").unwrap();
        // Fill with gc enabled, as in production, so loose objects get packed along the way
        // (`CHANT_BENCH_FILL_GC=0` fills without it).
        let gc_every = if std::env::var("CHANT_BENCH_FILL_GC").is_ok_and(|v| v == "0") { 0 } else { 256 };
        let filler = Ledger::open(dir.path(), hermetic(LedgerConfig { gc_every, ..LedgerConfig::default() })).unwrap();
        for n in 0..size {
            filler.append(&key, &line(n)).unwrap();
        }
        // Measure without gc, so no append pays for a repack, and with every fan-out directory
        // present, so none pays for creating one.
        let ledger =
            Ledger::open(dir.path(), hermetic(LedgerConfig { gc_every: 0, ..LedgerConfig::default() })).unwrap();
        for byte in 0..=255u8 {
            std::fs::create_dir_all(dir.path().join(format!(".git/objects/{byte:02x}"))).unwrap();
        }
        let packs = std::fs::read_dir(dir.path().join(".git/objects/pack"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "pack"))
            .count();
        Self { size, dir, ledger, key, packs }
    }

    fn objects(&self) -> (u64, u64) {
        du(&self.dir.path().join(".git/objects"))
    }
}

#[derive(Default)]
struct Row {
    appends: Vec<Duration>,
    /// This thread's CPU time (user and system) per append: the figure to judge on a loaded machine.
    cpu: Vec<Duration>,
    /// Loose objects each append adds.
    objects: u64,
    /// Bytes each append adds to `.git/objects` (loose, compressed).
    bytes: u64,
    reads: Vec<Duration>,
    plumbing: Vec<Duration>,
}

/// Times every fixture in rounds, one operation per fixture per round, so that all sizes see
/// the same machine load.
fn measure(fixtures: &[Fixture]) -> Vec<Row> {
    let mut rows: Vec<Row> = fixtures.iter().map(|_| Row::default()).collect();
    let before: Vec<(u64, u64)> = fixtures.iter().map(Fixture::objects).collect();
    for round in 0..REPETITIONS {
        for (fixture, row) in fixtures.iter().zip(&mut rows) {
            let (start, cpu) = (Instant::now(), thread_cpu());
            fixture.ledger.append(&fixture.key, &line(fixture.size + round)).unwrap();
            row.appends.push(start.elapsed());
            row.cpu.push(thread_cpu().saturating_sub(cpu));
        }
    }
    for ((fixture, row), (files, bytes)) in fixtures.iter().zip(&mut rows).zip(before) {
        let (files_after, bytes_after) = fixture.objects();
        row.objects = (files_after - files) / REPETITIONS as u64;
        row.bytes = (bytes_after - bytes) / REPETITIONS as u64;
    }
    for _ in 0..REPETITIONS {
        for (fixture, row) in fixtures.iter().zip(&mut rows) {
            let start = Instant::now();
            let latest = fixture.ledger.latest(&fixture.key).unwrap();
            row.reads.push(start.elapsed());
            assert!(latest.record.is_some());
        }
    }
    for round in 0..REPETITIONS {
        for (fixture, row) in fixtures.iter().zip(&mut rows) {
            let start = Instant::now();
            plumbing_append(fixture.dir.path(), &fixture.key.dir(), &line(fixture.size + REPETITIONS + round));
            row.plumbing.push(start.elapsed());
        }
    }
    rows
}

/// The same append through the git binary's plumbing, one process per step.
fn plumbing_append(dir: &Path, key_dir: &str, line: &str) {
    let branch = chant::ledger::BRANCH;
    let tip = git(dir, &["rev-parse", branch], None);
    let newest = |tree: &str| {
        let names = git(dir, &["ls-tree", "--name-only", tree], None);
        names.lines().filter_map(|n| n.trim_end_matches(".jsonl").parse::<u64>().ok()).max().unwrap()
    };
    let bucket = newest(&format!("{tip}:{key_dir}"));
    let shard = newest(&format!("{tip}:{key_dir}/{bucket}"));
    let path = format!("{key_dir}/{bucket}/{shard}.jsonl");
    let mut content = git(dir, &["cat-file", "blob", &format!("{tip}:{path}")], None);
    content.push_str(line);
    content.push('\n');
    let blob = git(dir, &["hash-object", "-w", "--stdin"], Some(&content));
    let index = dir.join(".git/bench-index");
    let with_index = |args: &[&str]| {
        let output = Command::new("git").arg("-C").arg(dir).args(args).env("GIT_INDEX_FILE", &index).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    with_index(&["read-tree", &tip]);
    with_index(&["update-index", "--add", "--cacheinfo", &format!("100644,{blob},{path}")]);
    let tree = with_index(&["write-tree"]);
    let commit = git(dir, &["commit-tree", &tree, "-p", &tip, "-m", "plumbing append"], None);
    git(dir, &["update-ref", branch, &commit, &tip], None);
}

fn git(dir: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .envs([("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_CONFIG_GLOBAL", "/dev/null")])
        .envs([("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@example.invalid")])
        .envs([("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@example.invalid")])
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "git {args:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    if args.first() == Some(&"cat-file") { text } else { text.trim().to_owned() }
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

/// No system or user configuration for git children, and a `gc --auto` that finishes before it
/// returns instead of detaching, so no repack runs behind a measurement.
fn hermetic(config: LedgerConfig) -> LedgerConfig {
    let env = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "gc.autoDetach"),
        ("GIT_CONFIG_VALUE_0", "false"),
    ];
    LedgerConfig { git_env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(), ..config }
}

/// Files and bytes below `path`.
fn du(path: &Path) -> (u64, u64) {
    let (mut files, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(path).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            let (f, b) = du(&entry.path());
            files += f;
            bytes += b;
        } else {
            files += 1;
            bytes += meta.len();
        }
    }
    (files, bytes)
}

/// The calling thread's time on a CPU so far (`/proc/thread-self/schedstat`, nanoseconds; zero
/// where there is no such file).
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0))
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
