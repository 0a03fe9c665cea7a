//! The operator's costs, measured through its real binaries in temporary git repositories.
//!
//! Run with `cargo bench -p chant-e2e --bench operator` (release build). `CHANT_BENCH_REPS` sets
//! the number of repetitions (default 11). Every repetition visits every case once, in one
//! interleaved sequence (round, lease CAS against `git update-ref`, `status`/`log` at both
//! ledger sizes, a change signal), so a burst of load on the shared machine lands on all cases
//! alike; the two sides of each ratio alternate which goes first. It prints medians (and
//! minima) and the ratios measured in this run.
//!
//! - **round**: `e2e-bench-operator operator --once` as a child process, over 200 unscheduled
//!   ConvergeOps (`e2e/src/bench_ops.rs`, 200 real `converge_op!` declarations compiled into a
//!   binary of their own) whose ticks are trivial: env `opbench` declares nothing, so a tick
//!   observes no lexicon, fires no rule and dispatches nothing. Each op still pays the
//!   operator's real work: lease acquisition (blob + compare-and-swap), the stale-lock check,
//!   the due check from the newest record, the tick (assess, plan, append the tick record: one
//!   commit), the renewer thread and the fence check. **Per round** is spawn to exit; **per op**
//!   is the time between consecutive per-op lines read from the child's stdout as they arrive
//!   (the first op's line is left out: it carries the start-up).
//! - **round in process, split**: the same 200 ops (`bench_ops.rs` is compiled into this bench
//!   too) ticked by `RoundContext::run` in this process, in a project of their own, then
//!   `release_all`; each op's `OpTimings` give the split (lease, due check, tick without its
//!   append, append, after the work) and the release is `release_all` / 200. The CPU line is
//!   this process's user+system time over the round / 200 (the figure to judge a change by on a
//!   loaded machine, where wall time is mostly waiting for a core).
//! - **lease CAS**: `LeaseStore::acquire` by the holder of a live lease (a renewal: read the
//!   ref, read the record, write a new blob, compare-and-swap the ref through gix; each a third
//!   of the TTL after the last on the bench's own clock, since a sooner one writes nothing), in process,
//!   in batches of 100; against `git update-ref <ref> <new> <old>` (one process each, blobs
//!   written beforehand, so git does less: no blob write, no record read), in batches of 50, in
//!   the same repository. Figures are operations per second, and the CPU time (user+system)
//!   per swap: this process's for chant, the reaped children's for git.
//! - **signal to tick**: an `e2e-project operator --env site --interval 300s` daemon watches the
//!   `site` files root; each trial, once the 5 s signal floor has passed, overwrites `app.conf`
//!   and times the `woken by a change signal` line (the watcher's latency) and the
//!   `site-converge ticked=1` line (the woken round's remediating tick, recorded).
//! - **status / log**: the stock binary's `operator status` and `operator log --limit 50`, as
//!   child processes, on two ledgers of ten ConvergeOps and one workspace member's op
//!   (`box-heal` of member `box`) each, holding 100,000 and 1,000 tick records split evenly (a
//!   copy of a real tick record of the round's ledger, with its id, op and times changed). The ledgers are written with one `git fast-import` in chant's shard layout (64
//!   records a shard, 64 shards a bucket), not by 100,000 appends (a commit each, far too slow
//!   for the time budget); the views read the branch tip's tree, not the history, and the
//!   layout is checked by reading every key back through `Ledger::read` and by one real
//!   `Ledger::append` on top.
//! - **peak memory**: the maximum resident set of `operator status`, `operator log --limit 50`,
//!   an `e2e-bench-operator operator --once` round over the 200 ops, `e2e-bench-box workspace
//!   status --json` (the member's op's newest tick) and a daemon's round (`e2e-bench-operator
//!   operator -v --interval 300s`, sent SIGTERM once all 200 op lines are out; without `-v` a
//!   daemon prints only changes), each run in both view ledgers as the only child of a measuring
//!   process (this bench re-executed), which reads `getrusage(RUSAGE_CHILDREN)`.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../src/bench_ops.rs"]
mod bench_ops;
mod support;
use support::{git, hermetic, measure_if_asked, measured, measured_until, project, stamp};

use std::collections::BTreeSet;
use std::sync::Arc;

use chant::operator::round::{OpEvent, OpTimings, RoundContext, targets};
use chant::project::Project;
use chant::tick::Dispatcher;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::resource::UsageWho;

use chant::lease::{Acquisition, LeaseKey, LeaseStore};
use chant::ledger::{Ledger, LedgerConfig, ShardKey};

const BENCH_OPERATOR: &str = env!("CARGO_BIN_EXE_e2e-bench-operator");
const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");
const STOCK: &str = env!("CARGO_BIN_EXE_e2e-stock-chant");
/// The box bench's binary: its `box-heal` ConvergeOp belongs to the workspace member `box`.
const BENCH_BOX: &str = env!("CARGO_BIN_EXE_e2e-bench-box");

/// The ConvergeOps of `bench_ops.rs`.
const ROUND_OPS: usize = 200;
/// The ConvergeOps of the status/log ledgers.
const VIEW_OPS: usize = 10;
const LEASE_BATCH: usize = 100;
const GIT_BATCH: usize = 50;
/// The operator's change-signal floor, plus margin.
const SIGNAL_FLOOR: Duration = Duration::from_millis(5500);

fn main() {
    if measure_if_asked() {
        return;
    }
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(11);
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // The round's project; one warm-up round also yields the tick record the view ledgers copy.
    let round_dir = project(&home, &tmp.path().join("round"), "[project]\nname = \"opbench\"\n");
    round(&home, &round_dir);
    let template = Ledger::open(&round_dir, LedgerConfig::default())
        .unwrap()
        .latest(&ShardKey::converge(None, "opbench", "opb-000").unwrap())
        .unwrap()
        .record
        .expect("the warm-up round recorded a tick")
        .value;

    // The lease repository.
    let lease_dir = project(&home, &tmp.path().join("lease"), "[project]\nname = \"lease\"\n");
    let ledger = Ledger::open(&lease_dir, LedgerConfig::default()).unwrap();
    let leases = LeaseStore::new(&ledger);
    let key = LeaseKey::new(None, "lease-bench").unwrap();
    let holder = "bench:1:00000000";
    let ttl = Duration::from_secs(300);
    let renew_step = ttl / 3 + Duration::from_millis(1);
    let mut renew_at = chant::clock::now().unwrap();
    let git_ref = "refs/chant/lease/git-bench";
    let blobs = write_blobs(&home, &lease_dir, GIT_BATCH * (reps + 1) + 1);
    git(&home, &lease_dir, &["update-ref", git_ref, &blobs[0]]);
    let mut git_at = 0;

    // The view ledgers.
    let big = view_ledger(&home, &tmp.path().join("views-100k"), &template, 100_000);
    let small = view_ledger(&home, &tmp.path().join("views-1k"), &template, 1_000);

    for dir in [&big, &small] {
        let out = hermetic(STOCK, &home, dir).args(["operator", "log", "--limit", "50", "--json"]).output().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["entries"].as_array().map(Vec::len), Some(50), "{}", String::from_utf8_lossy(&out.stderr));
    }

    // The watched project.
    let site_dir = project(
        &home,
        &tmp.path().join("site"),
        "[project]\nname = \"site\"\n[env.site]\nfiles_root = \"estates/site\"\n",
    );
    let mut daemon = Daemon::start(&home, &site_dir);
    // Either line may come first (the subscription note and the first tick race).
    let subscribed = |l: &str| l == "operator: files(site) change signal subscribed (the timer still runs)";
    daemon.wait(|l| l.starts_with("operator: site-converge@site ticked=1"));
    if !daemon.seen.iter().any(|l| subscribed(l)) {
        daemon.wait(subscribed);
    }
    let mut last_round = Instant::now();

    // The in-process round's project (the bench ops are linked into this binary).
    let inproc_dir = project(&home, &tmp.path().join("inproc"), "[project]\nname = \"opbench\"\n");
    let inproc = InProcess::new(&inproc_dir);
    inproc.round();
    // The view ledgers are projects too, for the round's peak memory.
    for dir in [&big, &small] {
        std::fs::write(dir.join("chant.toml"), "[project]\nname = \"opbench\"\n").unwrap();
    }
    let setup = started.elapsed();

    let mut rounds = Vec::new();
    let mut per_op = Vec::new();
    let mut startup = Vec::new();
    let mut lease_rate = Vec::new();
    let mut git_rate = Vec::new();
    let mut ratio_cas = Vec::new();
    let mut cpu_cas: [Vec<f64>; 2] = Default::default();
    let mut views: [Vec<Duration>; 4] = Default::default();
    let mut wake = Vec::new();
    let mut ticked = Vec::new();
    let mut splits: Vec<Split> = Vec::new();
    let mut peaks: [Vec<u64>; 10] = Default::default();
    for rep in 0..reps {
        splits.push(inproc.round());
        let peak_cases: [(&str, &[&str], &Path); 6] = [
            (STOCK, &["operator", "status"], &big),
            (STOCK, &["operator", "status"], &small),
            (STOCK, &["operator", "log", "--limit", "50"], &big),
            (STOCK, &["operator", "log", "--limit", "50"], &small),
            (BENCH_OPERATOR, &["operator", "--once"], &big),
            (BENCH_OPERATOR, &["operator", "--once"], &small),
        ];
        for (slot, (program, args, dir)) in peak_cases.iter().enumerate() {
            peaks[slot].push(measured(&home, dir, program, args).1);
        }
        for (slot, dir) in [(6, &big), (7, &small)] {
            peaks[slot].push(measured(&home, dir, BENCH_BOX, &["workspace", "status", "--json"]).1);
        }
        // A daemon's first round over the 200 ops, stopped by SIGTERM once every op's line is out.
        for (slot, dir) in [(8, &big), (9, &small)] {
            let args = ["operator", "-v", "--interval", "300s"];
            peaks[slot].push(measured_until(&home, dir, BENCH_OPERATOR, &args, "operator: opb-", ROUND_OPS).1);
        }
        let r = round(&home, &round_dir);
        rounds.push(r.total);
        per_op.extend(r.per_op);
        startup.push(r.first_line);

        let mut chant_cas = || {
            let (t, cpu) = (Instant::now(), cpu_time(UsageWho::RUSAGE_SELF));
            for _ in 0..LEASE_BATCH {
                // Each renewal a third of the TTL after the last (on a clock of its own): a
                // renewal sooner keeps the lease as written, and this measures the swap.
                renew_at = renew_at.checked_add(renew_step).unwrap();
                let got = leases.acquire(&key, holder, ttl, renew_at).unwrap();
                assert!(matches!(got, Acquisition::Acquired { .. }), "{got:?}");
            }
            cpu_cas[0].push((cpu_time(UsageWho::RUSAGE_SELF) - cpu).as_secs_f64() / LEASE_BATCH as f64);
            LEASE_BATCH as f64 / t.elapsed().as_secs_f64()
        };
        let mut git_cpu = Vec::new();
        let mut git_cas = || {
            let (t, cpu) = (Instant::now(), cpu_time(UsageWho::RUSAGE_CHILDREN));
            for _ in 0..GIT_BATCH {
                git(&home, &lease_dir, &["update-ref", git_ref, &blobs[git_at + 1], &blobs[git_at]]);
                git_at += 1;
            }
            git_cpu.push((cpu_time(UsageWho::RUSAGE_CHILDREN) - cpu).as_secs_f64() / GIT_BATCH as f64);
            GIT_BATCH as f64 / t.elapsed().as_secs_f64()
        };
        let (c, g) = if rep % 2 == 0 {
            let c = chant_cas();
            (c, git_cas())
        } else {
            let g = git_cas();
            (chant_cas(), g)
        };
        lease_rate.push(c);
        git_rate.push(g);
        ratio_cas.push(c / g);
        cpu_cas[1].extend(git_cpu);

        let cases: [(&[&str], &Path, usize); 4] = [
            (&["operator", "status"], &big, 0),
            (&["operator", "status"], &small, 1),
            (&["operator", "log", "--limit", "50"], &big, 2),
            (&["operator", "log", "--limit", "50"], &small, 3),
        ];
        let order: Vec<usize> = if rep % 2 == 0 { vec![0, 1, 2, 3] } else { vec![1, 0, 3, 2] };
        for i in order {
            let (args, dir, slot) = cases[i];
            let t = Instant::now();
            let out = hermetic(STOCK, &home, dir).args(args).output().unwrap();
            views[slot].push(t.elapsed());
            assert!(
                out.status.success() && !out.stdout.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }

        if let Some(rest) = SIGNAL_FLOOR.checked_sub(last_round.elapsed()) {
            std::thread::sleep(rest);
        }
        daemon.drain();
        // Timed from before the write: the watcher can report the truncation before it returns.
        let t = Instant::now();
        std::fs::write(site_dir.join("estates/site/app.conf"), format!("port = {rep}\n")).unwrap();
        let woken = daemon.wait(|l| l.starts_with("operator: woken by a change signal after "));
        let done = daemon.wait(|l| l.starts_with("operator: site-converge@site ticked=1"));
        last_round = done;
        wake.push(woken - t);
        ticked.push(done - t);
    }
    daemon.stop();

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "operator benchmark, {build} build, {reps} interleaved repetitions (set-up {:.1} s, total {:.1} s)",
        setup.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    println!("temporary directory: {}", chant_testkit::filesystem::describe(tmp.path()));
    println!();
    println!(
        "round over {ROUND_OPS} ConvergeOps with trivial ticks (real `converge_op!` declarations in the \
         e2e-bench-operator binary, `operator --once` as a child process; every op ticked=1):"
    );
    row("per round (spawn to exit)", &rounds);
    row("per op (between its line and the previous)", &per_op);
    let spread: Vec<Duration> = rounds.iter().map(|r| *r / ROUND_OPS as u32).collect();
    row("per op (round / 200)", &spread);
    row("spawn to the first op's line", &startup);
    println!(
        "  goal (issue 37): <= 1.0 ms per op, a round / 200 (anchor: 1.97 ms per op before a ledger append was one pack)"
    );
    println!();
    println!(
        "the same round in process (`RoundContext::run` over the {ROUND_OPS} ops, then `release_all`), per op, \
         split (median over every op of every repetition):"
    );
    let part = |f: &dyn Fn(&Split) -> Vec<Duration>| splits.iter().flat_map(f).collect::<Vec<_>>();
    row("lease (acquire, renewer start)", &part(&|s| s.ops.iter().map(|t| t.lease).collect()));
    row("due check (stale lock, newest record)", &part(&|s| s.ops.iter().map(|t| t.due).collect()));
    row("tick without its append", &part(&|s| s.ops.iter().map(|t| t.tick.saturating_sub(t.append)).collect()));
    row("append (fence check, commit)", &part(&|s| s.ops.iter().map(|t| t.append).collect()));
    row("after the work (renewer stop)", &part(&|s| s.ops.iter().map(|t| t.after).collect()));
    row("release (release_all / 200)", &part(&|s| vec![s.release / ROUND_OPS as u32]));
    row("whole op (its wall time)", &part(&|s| s.whole.clone()));
    row(
        "outside the tick (whole op - tick + release)",
        &part(&|s| {
            s.ops.iter().zip(&s.whole).map(|(t, w)| w.saturating_sub(t.tick) + s.release / ROUND_OPS as u32).collect()
        }),
    );
    row("per op (round incl. release / 200)", &part(&|s| vec![s.total / ROUND_OPS as u32]));
    row("CPU per op (user+sys of this process / 200)", &part(&|s| vec![s.cpu / ROUND_OPS as u32]));
    println!("  goal (issue 37): <= 1.0 ms per op (round incl. release / 200)");
    println!();
    println!("lease compare-and-swap, same repository, per second (higher is better):");
    println!(
        "  {:<44} median {:>8.0}/s   max {:>8.0}/s",
        "chant LeaseStore::acquire (renewal)",
        fmedian(&lease_rate),
        fmax(&lease_rate)
    );
    println!(
        "  {:<44} median {:>8.0}/s   max {:>8.0}/s",
        "git update-ref <ref> <new> <old> (process)",
        fmedian(&git_rate),
        fmax(&git_rate)
    );
    println!("  {:<44} median {:>8.1}x", "chant / git, per repetition", fmedian(&ratio_cas));
    let us = |v: &[f64]| fmedian(v) * 1e6;
    println!(
        "  {:<44} chant {:>6.0} us   git {:>6.0} us   git / chant {:.1}x",
        "CPU per swap (user+sys, median batch)",
        us(&cpu_cas[0]),
        us(&cpu_cas[1]),
        fmedian(&cpu_cas[1]) / fmedian(&cpu_cas[0])
    );
    println!();
    println!("change signal of the files watcher (`operator --env site --interval 300s`, one edit of app.conf):");
    row("edit to `woken by a change signal` line", &wake);
    row("edit to the woken tick's `ticked=1` line", &ticked);
    println!();
    println!(
        "views of the stock binary, {VIEW_OPS} ConvergeOps and a member's (the records split evenly), tick records \
         only (child processes):"
    );
    row("operator status, 100k records", &views[0]);
    row("operator status, 1k records", &views[1]);
    row("operator log --limit 50, 100k records", &views[2]);
    row("operator log --limit 50, 1k records", &views[3]);
    let ratio = |a: &[Duration], b: &[Duration]| {
        let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x.as_secs_f64() / y.as_secs_f64()).collect();
        fmedian(&r)
    };
    println!("  {:<44} median {:>8.1}x", "status 100k / 1k, per repetition", ratio(&views[0], &views[1]));
    println!("  {:<44} median {:>8.1}x", "log 100k / 1k, per repetition", ratio(&views[2], &views[3]));
    println!();
    println!("peak resident memory (child of a measuring process), 100k vs 1k tick records:");
    let names = [
        "operator status",
        "operator log --limit 50",
        "round (operator --once, 200 ops)",
        "workspace status (a member's op)",
        "daemon round (operator --interval, SIGTERM)",
    ];
    for (i, name) in names.iter().enumerate() {
        let (b, s) = (imedian(&peaks[2 * i]), imedian(&peaks[2 * i + 1]));
        println!("  {name:<44} 100k {:>7} KiB   1k {:>7} KiB   {:.2}x", b, s, b as f64 / s as f64);
    }
}

/// One in-process round's figures.
struct Split {
    ops: Vec<OpTimings>,
    /// Each op's wall time, from the previous op's report to its own.
    whole: Vec<Duration>,
    release: Duration,
    total: Duration,
    /// User and system CPU time of this process over the round (renewer threads included).
    cpu: Duration,
}

/// The 200 bench ops ticked by the library's round in this process.
struct InProcess {
    ctx: RoundContext,
    targets: Vec<chant::operator::round::Target>,
}

impl InProcess {
    fn new(dir: &Path) -> InProcess {
        let project = Arc::new(Project::open(dir).unwrap());
        let targets: Vec<_> = targets(&project, Some("opbench")).into_iter().map(Result::unwrap).collect();
        assert_eq!(targets.len(), ROUND_OPS);
        let holder = chant::lease::holder_id().unwrap();
        let ctx = RoundContext::new(project, holder, Duration::from_secs(300), Dispatcher::current().unwrap());
        InProcess { ctx, targets }
    }

    fn round(&self) -> Split {
        let mut ops = Vec::new();
        let mut whole = Vec::new();
        let (start, cpu) = (Instant::now(), cpu_time(UsageWho::RUSAGE_SELF));
        let mut last = start;
        self.ctx.run(&self.targets, &BTreeSet::new(), &mut |report| {
            assert!(matches!(report.event, OpEvent::Ticked { .. }), "{report}");
            ops.push(report.timings);
            whole.push(last.elapsed());
            last = Instant::now();
        });
        let releasing = Instant::now();
        let (released, warnings) = self.ctx.release_all();
        assert_eq!((released, warnings.len()), (ROUND_OPS, 0), "{warnings:?}");
        let release = releasing.elapsed();
        Split { ops, whole, release, total: start.elapsed(), cpu: cpu_time(UsageWho::RUSAGE_SELF) - cpu }
    }
}

/// User plus system CPU time of `who` so far.
fn cpu_time(who: UsageWho) -> Duration {
    let usage = nix::sys::resource::getrusage(who).unwrap();
    let tv = |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    tv(usage.user_time()) + tv(usage.system_time())
}

fn imedian(samples: &[u64]) -> u64 {
    let mut s = samples.to_vec();
    s.sort_unstable();
    s[s.len() / 2]
}

struct Round {
    total: Duration,
    first_line: Duration,
    per_op: Vec<Duration>,
}

/// One `operator --once` over the 200 bench ops.
fn round(home: &Path, dir: &Path) -> Round {
    let start = Instant::now();
    let mut child = hermetic(BENCH_OPERATOR, home, dir)
        .args(["operator", "--once"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stamps = Vec::new();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("operator: opb-") {
            stamps.push(Instant::now());
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let total = start.elapsed();
    let ticked =
        lines.iter().filter(|l| l.starts_with("operator: opb-") && l.ends_with("ticked=1 status=in-sync")).count();
    assert!(status.success() && ticked == ROUND_OPS, "{status}, {ticked} ticked:\n{}", lines.join("\n"));
    Round { total, first_line: stamps[0] - start, per_op: stamps.windows(2).map(|w| w[1] - w[0]).collect() }
}

/// `n` distinct blobs written into `dir`'s repository, by one `git hash-object`.
fn write_blobs(home: &Path, dir: &Path, n: usize) -> Vec<String> {
    let src = dir.join("../blobs");
    std::fs::create_dir_all(&src).unwrap();
    let paths: Vec<String> = (0..n)
        .map(|i| {
            let p = src.join(format!("{i}"));
            std::fs::write(&p, format!("{{\"op\":\"git-bench\",\"n\":{i}}}")).unwrap();
            p.display().to_string()
        })
        .collect();
    let out = hermetic("git", home, dir).arg("hash-object").arg("-w").args(&paths).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// A repository (no `chant.toml`) whose ledger holds `total` tick records of [`VIEW_OPS`] ops
/// and one workspace member's op (with a `chant.workspace.json` naming the member), written by one
/// `git fast-import` in chant's shard layout, then checked through the ledger API.
fn view_ledger(home: &Path, dir: &Path, template: &serde_json::Value, total: usize) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(home, dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    // The ten ops of the views, and the one ConvergeOp of a workspace member (`box-heal` of
    // e2e-bench-box, member `box`), which `workspace status` reads.
    let mut keys: Vec<(ShardKey, &str, &str)> = (0..VIEW_OPS)
        .map(|o| (ShardKey::converge(None, "opbench", &format!("opb-{o:03}")).unwrap(), "opbench", ""))
        .collect();
    keys.push((ShardKey::converge(Some("box"), "box", "box-heal").unwrap(), "box", "box-heal"));
    let n_keys = keys.len();
    let per_op = total / n_keys;
    let base: i64 = 1_764_000_000; // 2025-11-24
    let mut stream = Vec::new();
    let msg = "chant: bench fill\n";
    write!(
        stream,
        "commit {}\ncommitter Bench <bench@e2e.invalid> {base} +0000\ndata {}\n{msg}",
        chant::ledger::BRANCH,
        msg.len()
    )
    .unwrap();
    for (o, (key, env, name)) in keys.iter().enumerate() {
        let op = if name.is_empty() { format!("opb-{o:03}") } else { (*name).to_owned() };
        let key_dir = key.dir();
        for shard in 0..per_op.div_ceil(64) {
            let mut content = String::new();
            for n in shard * 64..((shard + 1) * 64).min(per_op) {
                // Ticks of the ops interleave in time, one a minute per op.
                let at = base + ((n * n_keys + o) as i64) * 60 / n_keys as i64;
                let mut record = template.clone();
                record["id"] = format!("00000000-0000-4000-8000-{:012}", n * n_keys + o).into();
                record["op"] = op.clone().into();
                record["env"] = (*env).into();
                record["startedAt"] = stamp(at).into();
                record["timestamp"] = stamp(at).into();
                content.push_str(&serde_json::to_string(&record).unwrap());
                content.push('\n');
            }
            let path = format!("{key_dir}/{}/{shard}.jsonl", shard / 64);
            write!(stream, "M 100644 inline {path}\ndata {}\n{content}\n", content.len()).unwrap();
        }
    }
    let mut child = hermetic("git", home, dir).args(["fast-import", "--quiet"]).stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());

    let ledger = Ledger::open(dir, LedgerConfig { gc_every: 0, ..LedgerConfig::default() }).unwrap();
    for (key, _, _) in &keys {
        let read = ledger.read(key).unwrap();
        assert_eq!((read.records.len(), read.unreadable.len()), (per_op, 0), "{key:?}");
    }
    // `workspace status` lists the member `box` (no box block: no supervisor is asked).
    std::fs::write(
        dir.join("chant.workspace.json"),
        r#"{"members": [{"name": "box", "dir": ".", "kind": "other", "because": "the bench's member op"}]}"#,
    )
    .unwrap();
    // One real append lands after the imported records (and moves the tip by an ordinary commit).
    let key = ShardKey::converge(None, "opbench", "opb-000").unwrap();
    let mut last = template.clone();
    last["op"] = "opb-000".into();
    last["timestamp"] = stamp(base + (total as i64) * 60 / n_keys as i64 + 60).into();
    ledger.append(&key, &serde_json::to_string(&last).unwrap()).unwrap();
    assert_eq!(ledger.read(&key).unwrap().records.len(), per_op + 1);
    dir.to_owned()
}

/// The watching daemon (`-v`), its stdout and stderr lines arriving on a channel with their arrival time.
struct Daemon {
    child: Child,
    lines: mpsc::Receiver<(Instant, String)>,
    seen: Vec<String>,
}

impl Daemon {
    fn start(home: &Path, dir: &Path) -> Daemon {
        let mut child = hermetic(PROJECT, home, dir)
            .args(["operator", "-v", "--env", "site", "--interval", "300s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let stderr: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for stream in [stdout, stderr] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send((Instant::now(), line)).is_err() {
                        break;
                    }
                }
            });
        }
        Daemon { child, lines, seen: Vec::new() }
    }

    /// Waits (at most 60 s) for a line matching `want` and returns when it arrived.
    fn wait(&mut self, want: impl Fn(&str) -> bool) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    let hit = want(&line);
                    self.seen.push(line);
                    if hit {
                        return at;
                    }
                }
                Err(e) => panic!("daemon: {e}; its lines:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Drops the lines already printed.
    fn drain(&mut self) {
        while let Ok((_, line)) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    /// SIGTERM, then waits for a clean exit.
    fn stop(mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "daemon exited {status}:\n{}", self.seen.join("\n"));
    }
}

fn row(name: &str, samples: &[Duration]) {
    let mut s = samples.to_vec();
    s.sort();
    println!("  {name:<44} median {:>9.3} ms   min {:>9.3} ms   (n={})", ms(s[s.len() / 2]), ms(s[0]), s.len());
}

fn fmedian(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn fmax(samples: &[f64]) -> f64 {
    samples.iter().copied().fold(f64::MIN, f64::max)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
