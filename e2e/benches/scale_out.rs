//! Several operators against one remote, each on a simulated machine of its own: N = 1, 2, 4, 8
//! `operator --once` processes, each in its own clone of one bare repository
//! (`[ledger] remote = "origin"`), started together over the same ConvergeOps of
//! `e2e/src/bin/e2e-bench-scale.rs` at one fire time (`CHANT_NOW`), with `--lease-ttl 30s` (fire
//! times are a minute apart on that fixed clock, so a lease kept because its record could not be
//! pushed yet has lapsed by the next one).
//!
//! Run with `cargo bench -p chant-e2e --bench scale_out` (release build, as root for the CPU
//! slices). The simulation (docs/operator.md, "Scale-out on simulated machines", says what it
//! shows and what it cannot):
//!
//! - **A slice of CPU per machine**: every operator runs in a cgroup of its own with a CPU quota
//!   (`CHANT_BENCH_CPU`, default 0.2 of a core; cgroup v2 `cpu.max`, or cgroup v1's
//!   `cpu.cfs_quota_us` where the cpu controller is mounted v1), which its git processes inherit;
//!   the remote's `git daemon` and the upload/receive-packs it forks run in a slice of their own
//!   (`CHANT_BENCH_REMOTE_CPU`, default 0.5). The slices are made when the cgroup filesystem is
//!   writable (one printed line says when it is not, and the operators then share the machine),
//!   and removed when the bench ends, panicking or not.
//! - **A link with a delay per machine**: each operator reaches the remote at
//!   `git://127.0.0.1:<port>/remote.git` through a proxy of its own that holds every chunk of
//!   bytes `CHANT_BENCH_DELAY_MS` (default 5) in each direction, in front of one `git daemon`
//!   (`--enable=receive-pack`) on 127.0.0.1: the remote is a server over git's own protocol, not
//!   a path the operators' git processes open themselves (which would do the remote's work on the
//!   operator's CPU and with no round trip at all).
//! - **Realistic ops**: the 200 ops of env `scale-a`; one in five observes through a `GET` of a
//!   loopback HTTP engine that answers after `CHANT_BENCH_ENGINE_MS` (default 20), the others are
//!   in-sync ticks that wait on nothing. The flat-cost line runs the 2,000 ops of the binary
//!   (no `--env`) at N = `CHANT_BENCH_FLAT_N` (default 4; 0 leaves it out) against the 200 at the
//!   same N.
//!
//! `CHANT_BENCH_REPS` sets the repetitions (default 2), `CHANT_BENCH_OPERATORS` the operator
//! counts (default `1,2,4,8`), `CHANT_BENCH_OPERATOR_BIN` another build of the project binary to
//! run (to compare two builds in one sitting), `CHANT_BENCH_DUMP` prints every operator's lines
//! to stderr. Every repetition runs each N once, in turn, at a fire time of its own. Per N it
//! prints the round's wall time (spawn to the slowest operator's exit), the CPU of the busiest
//! operator (its own and its git processes'), the ticks per operator, and the git traffic: every
//! `git push` and `git fetch` the operators ran goes through a wrapper on `PATH` that logs it,
//! its exit code and, for a push, how many of its refs the remote rejected (`!` lines of
//! `--porcelain`). A rejected push is one that exited non-zero (a batch push whose every ref
//! landed exits 0). Hard checks, not figures: every op ticked exactly once per fire time (its
//! `ticked=1` lines over all operators), every op that asks the engine asked it exactly once, and
//! after every clone's final sync the remote's newest record of every op is the one of that fire
//! time.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{git, hermetic, project};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};

const BENCH_OPERATOR: &str = env!("CARGO_BIN_EXE_e2e-bench-scale");
/// The ops of env `scale-a` (`scl-0000`..`scl-0199`); the binary has `ALL`.
const OPS: usize = 200;
const ALL: usize = 2000;
const CONFIG: &str = "[project]\nname = \"scalebench\"\n\n[ledger]\nremote = \"origin\"\n";

fn main() {
    let reps: usize = env_parse("CHANT_BENCH_REPS", 2);
    let counts: Vec<usize> = std::env::var("CHANT_BENCH_OPERATORS")
        .ok()
        .map(|s| s.split(',').map(|n| n.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8]);
    let flat_n: usize = env_parse("CHANT_BENCH_FLAT_N", 4);
    let cpu: f64 = env_parse("CHANT_BENCH_CPU", 0.2);
    let remote_cpu: f64 = env_parse("CHANT_BENCH_REMOTE_CPU", 0.5);
    let delay = Duration::from_millis(env_parse("CHANT_BENCH_DELAY_MS", 5));
    let engine_wait = Duration::from_millis(env_parse("CHANT_BENCH_ENGINE_MS", 20));
    let most = counts.iter().copied().chain([flat_n]).max().unwrap();
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let shim = push_counter(tmp.path());

    // The machines' CPU slices: one per operator, one for the remote. Made before anything runs
    // in them, removed (by `Slices`' drop) after everything that ran in them is gone.
    let mut slices = Slices::new();
    let remote_slice = slices.slice("remote", remote_cpu);
    let op_slices: Vec<Option<PathBuf>> = (0..most).map(|i| slices.slice(&format!("op{i}"), cpu)).collect();

    let bare = tmp.path().join("remote.git");
    git(&home, tmp.path(), &["-c", "init.defaultBranch=main", "init", "-q", "--bare", bare.to_str().unwrap()]);
    let daemon = GitDaemon::start(&home, tmp.path(), remote_slice.as_deref());
    let engine = Engine::start(engine_wait);
    let first = project(&home, &tmp.path().join("clone-0"), CONFIG);
    git(&home, &first, &["remote", "add", "origin", bare.to_str().unwrap()]);
    git(&home, &first, &["push", "-q", "origin", "main"]);
    let mut clones = vec![first];
    for i in 1..most {
        let dir = tmp.path().join(format!("clone-{i}"));
        git(&home, tmp.path(), &["clone", "-q", bare.to_str().unwrap(), dir.to_str().unwrap()]);
        clones.push(dir);
    }
    // From now on each clone reaches the remote only through its own delayed link.
    let mut links = Vec::new();
    for dir in &clones {
        let link = Link::start(daemon.port, delay);
        git(&home, dir, &["remote", "set-url", "origin", &format!("git://127.0.0.1:{}/remote.git", link.port)]);
        links.push(link);
    }

    let machines = Machines { home: &home, shim: &shim, clones: &clones, slices: &op_slices, engine: &engine };
    let mut fire = 0_u32;
    let mut results: Vec<(usize, usize, Trial)> = Vec::new();
    let mut next_fire = || {
        fire += 1;
        format!("2026-03-02T{:02}:{:02}:00.000Z", fire / 60, fire % 60)
    };
    let mut run = |n: usize, ops: usize, now: &str| {
        let t = machines.trial(n, ops, &bare, now);
        // As it goes, so a run stopped early still says what it measured.
        println!(
            "trial N={n}, {ops} ops: wall {:.2} s, ticks per operator {:?}, {} pushes ({} rejected), {} fetches",
            t.wall.as_secs_f64(),
            t.ticks,
            t.pushes,
            t.rejected,
            t.fetches
        );
        results.push((n, ops, t));
    };
    for _ in 0..reps {
        for &n in &counts {
            run(n, OPS, &next_fire());
        }
        if flat_n > 0 {
            run(flat_n, ALL, &next_fire());
        }
    }

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "scale-out benchmark, {build} build, {reps} repetitions of N = {counts:?} operators over {OPS} ConvergeOps \
         (and N = {flat_n} over {ALL}), one clone each of one remote (total {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    println!("temporary directory: {}", chant_testkit::filesystem::describe(tmp.path()));
    println!("simulated machines: {}", slices.describe(cpu, remote_cpu));
    println!(
        "  link: each operator reaches `git daemon` on 127.0.0.1 through a proxy of its own holding every chunk {} ms \
         each way (tc netem: {}); ops: 1 in 5 observes through a loopback HTTP engine answering after {} ms, 4 in 5 \
         are in-sync ticks waiting on nothing",
        delay.as_millis(),
        netem_note(),
        engine_wait.as_millis()
    );
    println!(
        "every op ticked exactly once at every fire time, every engine op asked the engine exactly once, and every \
         record reached the remote: checked"
    );
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut one = None;
    for &n in &counts {
        let trials: Vec<&Trial> = results.iter().filter(|(k, o, _)| *k == n && *o == OPS).map(|(_, _, t)| t).collect();
        let wall = median(trials.iter().map(|t| t.wall.as_secs_f64()).collect());
        let one_wall = *one.get_or_insert(wall);
        let ticks: Vec<String> = trials[0].ticks.iter().map(usize::to_string).collect();
        let mean = |f: fn(&Trial) -> usize| trials.iter().map(|t| f(t)).sum::<usize>() as f64 / trials.len() as f64;
        let (pushes, rejected, refs) = (mean(|t| t.pushes), mean(|t| t.rejected), mean(|t| t.rejected_refs));
        let fetches = mean(|t| t.fetches);
        let cpu = trials.iter().map(|t| t.cpu.as_secs_f64()).sum::<f64>() / trials.len() as f64;
        let busiest = median(
            trials.iter().map(|t| t.operator_cpu.iter().map(Duration::as_secs_f64).fold(0.0, f64::max)).collect(),
        );
        println!(
            "  N={n}: wall per round {wall:>6.2} s ({:.2}x N=1)   ticks per operator [{}]   pushes {pushes:>4.0}   \
             rejected {rejected:>3.0} ({:.3} per tick; {refs:.0} refs)   fetches {fetches:>4.0}   CPU {cpu:.2} s, \
             busiest operator {busiest:.2} s",
            wall / one_wall,
            ticks.join(", "),
            rejected / OPS as f64,
        );
    }
    let wall_of = |n: usize, ops: usize| {
        let walls: Vec<f64> =
            results.iter().filter(|(k, o, _)| *k == n && *o == ops).map(|(_, _, t)| t.wall.as_secs_f64()).collect();
        (!walls.is_empty()).then(|| median(walls))
    };
    if let (Some(four), Some(one)) = (wall_of(4, OPS), wall_of(1, OPS)) {
        println!("ratio N=4 / N=1 wall: {:.2}x (goal <= 0.35x)", four / one);
    }
    let worst_rejections = counts
        .iter()
        .map(|&n| {
            let t: Vec<&Trial> = results.iter().filter(|(k, o, _)| *k == n && *o == OPS).map(|(_, _, t)| t).collect();
            t.iter().map(|t| t.rejected).sum::<usize>() as f64 / (t.len() * OPS) as f64
        })
        .fold(0.0, f64::max);
    println!("rejected pushes per tick, worst N: {worst_rejections:.3} (goal <= 0.5)");
    if let (Some(small), Some(large)) = (wall_of(flat_n, OPS), wall_of(flat_n, ALL)) {
        let cpu_per_op = |ops: usize| {
            let t: Vec<f64> = results
                .iter()
                .filter(|(k, o, _)| *k == flat_n && *o == ops)
                .map(|(_, _, t)| t.cpu.as_secs_f64() / ops as f64)
                .collect();
            median(t)
        };
        let (c_small, c_large) = (cpu_per_op(OPS), cpu_per_op(ALL));
        println!(
            "per-op cost at N={flat_n}, {ALL} ops vs {OPS}: wall {:.2} ms vs {:.2} ms per op ({:.2}x), CPU {:.2} ms vs \
             {:.2} ms per op ({:.2}x) (goal: flat, <= 1.2x)",
            large * 1000.0 / ALL as f64,
            small * 1000.0 / OPS as f64,
            (large / ALL as f64) / (small / OPS as f64),
            c_large * 1000.0,
            c_small * 1000.0,
            c_large / c_small
        );
    }
    println!(
        "  (this machine has {cores} cores, shared; N operators ask N x {cpu} core(s) plus the remote's {remote_cpu}: \
         past the cores free, the slices no longer hold and wall times say so)"
    );
    drop(links);
    drop(daemon);
    drop(slices);
}

fn env_parse<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Whether the kernel has netem (the delay is the bench's proxy either way; this only says why).
fn netem_note() -> &'static str {
    let config = Command::new("sh").args(["-c", "zcat /proc/config.gz 2>/dev/null"]).output();
    match config {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("CONFIG_NET_SCH_NETEM=") => {
            "in this kernel, but a proxy needs no namespace or root"
        }
        Ok(out) if !out.stdout.is_empty() => "not built into this kernel (CONFIG_NET_SCH_NETEM is not set)",
        _ => "unknown for this kernel",
    }
}

struct Trial {
    wall: Duration,
    /// CPU time (user + system) of the operators and every git process they waited for.
    cpu: Duration,
    /// The same, per operator (its own process and the git processes it waited for).
    operator_cpu: Vec<Duration>,
    ticks: Vec<usize>,
    pushes: usize,
    rejected: usize,
    rejected_refs: usize,
    fetches: usize,
}

/// What every trial's operators run on.
struct Machines<'a> {
    home: &'a Path,
    shim: &'a Path,
    clones: &'a [PathBuf],
    slices: &'a [Option<PathBuf>],
    engine: &'a Engine,
}

impl Machines<'_> {
    /// One fire time: `n` operators over `ops` ops started together; checks exactly-once, the
    /// engine's requests and the remote.
    fn trial(&self, n: usize, ops: usize, bare: &Path, now: &str) -> Trial {
        let log = self.shim.join("pushes.log");
        let _ = std::fs::remove_file(&log);
        let path = format!("{}:{}", self.shim.display(), std::env::var("PATH").unwrap_or_default());
        let program = std::env::var("CHANT_BENCH_OPERATOR_BIN").unwrap_or_else(|_| BENCH_OPERATOR.to_owned());
        let clones = &self.clones[..n];
        let asked_before = self.engine.hits.load(Ordering::SeqCst);
        let cpu_before = children_cpu();
        let start = Instant::now();
        let children: Vec<Child> = clones
            .iter()
            .zip(self.slices)
            .map(|(dir, slice)| {
                let mut args = vec!["operator", "--once", "--lease-ttl", "30s"];
                if ops == OPS {
                    args.extend(["--env", "scale-a"]);
                }
                in_slice(slice.as_deref(), &program, self.home, dir)
                    .args(args)
                    .env("CHANT_NOW", now)
                    .env("PATH", &path)
                    .env("CHANT_BENCH_PUSH_LOG", &log)
                    .env("CHANT_BENCH_ENGINE", &self.engine.url)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let readers: Vec<_> = children
            .into_iter()
            .map(|mut child| {
                let stderr = child.stderr.take().unwrap();
                let errors = std::thread::spawn(move || {
                    BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<String>>()
                });
                let stdout = child.stdout.take().unwrap();
                std::thread::spawn(move || {
                    // The op lines are on stdout, the diagnostics on stderr.
                    let mut lines: Vec<String> = BufReader::new(stdout).lines().map_while(Result::ok).collect();
                    lines.extend(errors.join().unwrap());
                    let cpu = own_cpu(&child);
                    let status = child.wait().unwrap();
                    (status, lines, cpu)
                })
            })
            .collect();
        let outputs: Vec<_> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        let wall = start.elapsed();
        let cpu = children_cpu() - cpu_before;
        let asked = self.engine.hits.load(Ordering::SeqCst) - asked_before;
        let mut ticks = Vec::new();
        let mut per_op = vec![0_usize; ops];
        let operator_cpu: Vec<Duration> = outputs.iter().map(|(_, _, cpu)| *cpu).collect();
        if std::env::var_os("CHANT_BENCH_DUMP").is_some() {
            for (i, (_, lines, _)) in outputs.iter().enumerate() {
                for l in lines {
                    eprintln!("[{i}] {l}");
                }
            }
        }
        for (status, lines, _) in &outputs {
            assert!(status.success(), "{status}:\n{}", lines.join("\n"));
            let mine: Vec<usize> = lines
                .iter()
                .filter(|l| l.contains(" ticked=1 status="))
                .filter_map(|l| l.strip_prefix("operator: scl-")?.get(..4)?.parse().ok())
                .collect();
            for op in &mine {
                per_op[*op] += 1;
            }
            ticks.push(mine.len());
        }
        let all: Vec<&String> = outputs.iter().flat_map(|(_, l, _)| l).collect();
        for (op, n) in per_op.iter().enumerate() {
            assert_eq!(*n, 1, "scl-{op:04} ticked {n} times at {now}:\n{all:?}");
        }
        // Ops ending in 0 or 5 ask the engine: one request per tick of theirs.
        let engine_ops = (0..ops).filter(|op| op % 5 == 0).count();
        assert_eq!(asked, engine_ops, "engine requests at {now} (one per tick of an op that asks it)");
        // Whatever an operator could not push yet, a sync pushes; then the remote has every tick.
        for dir in clones {
            let config = LedgerConfig { remote: Some("origin".into()), ..LedgerConfig::default() };
            Ledger::open(dir, config).unwrap().sync().unwrap();
        }
        let remote = Ledger::open(bare, LedgerConfig::default()).unwrap();
        for op in 0..ops {
            let env = if op < OPS { "scale-a" } else { "scale-b" };
            let key = ShardKey::converge(None, env, &format!("scl-{op:04}")).unwrap();
            let newest = remote.latest(&key).unwrap().record.unwrap().value;
            assert_eq!(newest["startedAt"], now, "scl-{op:04}: the remote lacks the tick of {now}");
        }
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        let entries: Vec<Vec<&str>> = logged.lines().map(|l| l.split(' ').collect()).collect();
        let pushes: Vec<&Vec<&str>> = entries.iter().filter(|e| e[0] == "push").collect();
        Trial {
            wall,
            cpu,
            operator_cpu,
            ticks,
            pushes: pushes.len(),
            rejected: pushes.iter().filter(|e| e[1] != "0").count(),
            rejected_refs: pushes.iter().map(|e| e[2].parse::<usize>().unwrap()).sum(),
            fetches: entries.iter().filter(|e| e[0] == "fetch").count(),
        }
    }
}

/// `program` (hermetic) started inside the cgroup `slice`, when there is one: a shell writes its
/// own pid into the slice's `cgroup.procs` and `exec`s the program, so the program keeps the
/// pid the bench waits for, and every process it starts (its git processes) is in the slice too.
fn in_slice(slice: Option<&Path>, program: &str, home: &Path, dir: &Path) -> Command {
    match slice {
        None => hermetic(program, home, dir),
        Some(slice) => {
            let mut cmd = hermetic("sh", home, dir);
            cmd.args(["-c", "echo $$ > \"$0\" && exec \"$@\""]).arg(slice.join("cgroup.procs")).arg(program);
            cmd
        }
    }
}

/// The CPU slices of the simulated machines: a cgroup each, with a CPU quota, under one parent
/// named after this process; removed on drop (whatever is still in one is moved back to the root
/// first, so the removal cannot fail on it).
struct Slices {
    /// The cgroup hierarchy's root holding the cpu controller, when it is writable, and whether it
    /// is cgroup v2; or why there are no slices.
    root: Result<(PathBuf, bool), String>,
    made: Vec<PathBuf>,
}

impl Slices {
    fn new() -> Slices {
        let v2 = Path::new("/sys/fs/cgroup");
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let controllers = std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
        let root = if controllers.split_whitespace().any(|c| c == "cpu") {
            Ok((v2.to_owned(), true))
        } else if v1.join("cpu.cfs_quota_us").exists() {
            Ok((v1.to_owned(), false))
        } else {
            Err("no cpu controller under /sys/fs/cgroup (neither v2 nor v1)".to_owned())
        };
        let mut slices = Slices { root, made: Vec::new() };
        if let Ok((root, _)) = &slices.root {
            sweep(root);
        }
        if let Ok((root, v2)) = slices.root.clone() {
            let parent = root.join(format!("chant-scale-{}", std::process::id()));
            let made = (|| {
                if v2 {
                    std::fs::write(root.join("cgroup.subtree_control"), "+cpu")?;
                }
                std::fs::create_dir(&parent)?;
                if v2 {
                    std::fs::write(parent.join("cgroup.subtree_control"), "+cpu")?;
                }
                Ok::<_, std::io::Error>(())
            })();
            match made {
                Ok(()) => slices.made.push(parent),
                Err(e) => slices.root = Err(format!("{} is not writable here ({e})", root.display())),
            }
        }
        slices
    }

    /// A slice of `cores` of a core named `name`, or none when slices cannot be made.
    fn slice(&mut self, name: &str, cores: f64) -> Option<PathBuf> {
        let (_, v2) = self.root.as_ref().ok()?;
        let v2 = *v2;
        let dir = self.made.first()?.join(name);
        let period = 100_000_u64;
        let quota = ((cores * period as f64) as u64).max(1000);
        let made = (|| {
            std::fs::create_dir(&dir)?;
            if v2 {
                std::fs::write(dir.join("cpu.max"), format!("{quota} {period}"))
            } else {
                std::fs::write(dir.join("cpu.cfs_period_us"), period.to_string())?;
                std::fs::write(dir.join("cpu.cfs_quota_us"), quota.to_string())
            }
        })();
        match made {
            Ok(()) => {
                self.made.push(dir.clone());
                Some(dir)
            }
            Err(e) => {
                self.root = Err(format!("{} could not be made ({e})", dir.display()));
                None
            }
        }
    }

    fn describe(&self, cpu: f64, remote: f64) -> String {
        match &self.root {
            Ok((root, v2)) => format!(
                "a cgroup {} slice per operator of {cpu} core ({}), the remote's of {remote} core, under {}",
                if *v2 { "v2" } else { "v1" },
                if *v2 { "cpu.max" } else { "cpu.cfs_quota_us" },
                root.display()
            ),
            Err(why) => format!("NO CPU slices: {why}; the operators share this machine's cores"),
        }
    }
}

impl Drop for Slices {
    fn drop(&mut self) {
        let Ok((root, _)) = &self.root else {
            // A failure after some were made still removes those.
            for dir in self.made.iter().rev() {
                let _ = std::fs::remove_dir(dir);
            }
            return;
        };
        for dir in self.made.iter().rev() {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines() {
                let _ = std::fs::write(root.join("cgroup.procs"), pid);
            }
            if let Err(e) = std::fs::remove_dir(dir) {
                eprintln!("scale_out: could not remove the cgroup {}: {e}", dir.display());
            }
        }
    }
}

/// Removes the slices a bench that was killed left behind (`chant-scale-<pid>` of a process that
/// is gone: a drop runs on a panic, not on SIGKILL or an uncaught SIGINT), saying so.
fn sweep(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("chant-scale-").and_then(|p| p.parse::<u32>().ok()) else { continue };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let parent = entry.path();
        let children: Vec<PathBuf> = std::fs::read_dir(&parent)
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
            .unwrap_or_default();
        for dir in children.iter().chain([&parent]) {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines() {
                let _ = std::fs::write(root.join("cgroup.procs"), pid);
            }
            let _ = std::fs::remove_dir(dir);
        }
        println!("removed the CPU slices {} a killed run left behind", parent.display());
    }
}

/// The remote: `git daemon` serving the bare repository (pushes too) on 127.0.0.1, in its slice;
/// stopped on drop.
struct GitDaemon {
    child: Child,
    port: u16,
}

impl GitDaemon {
    fn start(home: &Path, base: &Path, slice: Option<&Path>) -> GitDaemon {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = in_slice(slice, "git", home, base)
            .args([
                "daemon",
                "--reuseaddr",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
            ])
            .arg(base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let daemon = GitDaemon { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "git daemon did not listen on 127.0.0.1:{port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        daemon
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One machine's link to the remote: a proxy on 127.0.0.1 that forwards every connection to the
/// remote's port, holding each chunk `delay` in each direction (a one-way latency; no bandwidth
/// limit). Its threads end with their connections; the listener's with the bench.
struct Link {
    port: u16,
}

impl Link {
    fn start(upstream: u16, delay: Duration) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                delayed_pump(client, server, delay);
                delayed_pump(s2, c2, delay);
            }
        });
        Link { port }
    }
}

/// Copies `from` to `to`, each chunk written `delay` after it was read; at the end of `from`,
/// shuts `to`'s writing half once every chunk is delivered.
fn delayed_pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0_u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    });
    std::thread::spawn(move || {
        for (at, bytes) in rx {
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// The slow engine: an HTTP server on 127.0.0.1 that answers every `GET` with `200` after
/// `wait`, counting the requests.
struct Engine {
    url: String,
    hits: Arc<AtomicUsize>,
}

impl Engine {
    fn start(wait: Duration) -> Engine {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}/observe", listener.local_addr().unwrap().port());
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let counted = Arc::clone(&counted);
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut head = Vec::new();
                    let mut buf = [0_u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    std::thread::sleep(wait);
                    counted.fetch_add(1, Ordering::SeqCst);
                    let _ = conn
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                        .and_then(|()| conn.flush());
                });
            }
        });
        Engine { url, hits }
    }
}

/// The CPU time (user + system) of `child`, an operator that has exited but is not reaped yet,
/// and of every process it waited for (its git processes): `/proc/<pid>/stat`'s `utime`,
/// `stime`, `cutime` and `cstime`, read while the exited child is still a zombie (`waitid` with
/// `WNOWAIT`), in clock ticks.
fn own_cpu(child: &std::process::Child) -> Duration {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's closing parenthesis start at field 3 (state); utime is 14.
    let fields: Vec<u64> =
        stat.rsplit_once(')').unwrap().1.split_whitespace().skip(11).take(4).map(|f| f.parse().unwrap()).collect();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).unwrap().unwrap() as f64;
    Duration::from_secs_f64(fields.iter().sum::<u64>() as f64 / hz)
}

/// The CPU time (user + system) of this process's waited-for children and their descendants.
fn children_cpu() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    let d = |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    d(usage.user_time()) + d(usage.system_time())
}

/// A directory holding a `git` wrapper that appends a line for every `git push` (`push <exit code>
/// <refs rejected>`) and `git fetch` (`fetch <exit code> 0`) to `$CHANT_BENCH_PUSH_LOG`, and passes
/// everything else straight through.
fn push_counter(tmp: &Path) -> PathBuf {
    let dir = tmp.join("shim");
    std::fs::create_dir_all(&dir).unwrap();
    let real =
        String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in\n  *\" push \"*) out=$(\"{real}\" \"$@\"); code=$?; printf '%s\\n' \"$out\"; \
         n=$(printf '%s\\n' \"$out\" | grep -c '^!'); echo \"push $code $n\" >> \"$CHANT_BENCH_PUSH_LOG\"; exit $code ;;\n  \
         *\" fetch \"*) \"{real}\" \"$@\"; code=$?; echo \"fetch $code 0\" >> \"$CHANT_BENCH_PUSH_LOG\"; exit $code ;;\n  \
         *) exec \"{real}\" \"$@\" ;;\nesac\n"
    );
    let path = dir.join("git");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}
