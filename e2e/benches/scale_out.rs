//! Several operators against one remote: N = 1, 2, 4 `operator --once` processes, each in its
//! own clone of one bare repository on this machine (`[ledger] remote = "origin"`), started
//! together over the 200 trivial ConvergeOps of `e2e/src/bench_ops.rs` at one fire time
//! (`CHANT_NOW`), with `--lease-ttl 30s` (fire times are a minute apart on that fixed clock, so a
//! lease kept because its record could not be pushed yet has lapsed by the next one).
//!
//! Run with `cargo bench -p chant-e2e --bench scale_out` (release build); `CHANT_BENCH_REPS` sets
//! the repetitions (default 2), `CHANT_BENCH_OPERATORS` the operator counts (default `1,2,4`),
//! `CHANT_BENCH_OPERATOR_BIN` another build of the project binary to run (to compare two builds
//! in one sitting), `CHANT_BENCH_DUMP` prints every operator's lines to stderr, and
//! `GIT_TRACE2_EVENT` reaches the operators' git processes (to see where a round's git time goes).
//! Every repetition runs each N once, in turn, at a fire time of its own. Per N it prints the
//! round's wall time (spawn to the slowest operator's exit), the CPU of the busiest operator
//! (its own and its git processes': the least the round could take with a core per operator, as
//! on machines of their own, which this 2-core machine cannot give four), the ticks per operator, and the
//! git traffic: every `git push` and `git fetch` the operators ran goes through a wrapper on
//! `PATH` that logs it, its exit code and, for a push, how many of its refs the remote or git
//! rejected (`!` lines of `--porcelain`). A rejected push is one that exited non-zero (a batch
//! push whose every ref landed exits 0). Hard checks, not figures: every op ticked exactly once
//! per fire time (its `ticked=1` lines over all operators), and after every clone's final sync the
//! remote's newest record of every op is the one of that fire time.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{git, hermetic, project};

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};

const BENCH_OPERATOR: &str = env!("CARGO_BIN_EXE_e2e-bench-operator");
const OPS: usize = 200;
const CONFIG: &str = "[project]\nname = \"opbench\"\n\n[ledger]\nremote = \"origin\"\n";

fn main() {
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(2);
    let counts: Vec<usize> = std::env::var("CHANT_BENCH_OPERATORS")
        .ok()
        .map(|s| s.split(',').map(|n| n.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| vec![1, 2, 4]);
    let most = counts.iter().copied().max().unwrap();
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let shim = push_counter(tmp.path());

    let bare = tmp.path().join("remote.git");
    git(&home, tmp.path(), &["-c", "init.defaultBranch=main", "init", "-q", "--bare", bare.to_str().unwrap()]);
    let first = project(&home, &tmp.path().join("clone-0"), CONFIG);
    git(&home, &first, &["remote", "add", "origin", bare.to_str().unwrap()]);
    git(&home, &first, &["push", "-q", "origin", "main"]);
    let mut clones = vec![first];
    for i in 1..most {
        let dir = tmp.path().join(format!("clone-{i}"));
        git(&home, tmp.path(), &["clone", "-q", bare.to_str().unwrap(), dir.to_str().unwrap()]);
        clones.push(dir);
    }

    let mut fire = 0_u32;
    let mut results: Vec<(usize, Trial)> = Vec::new();
    for _ in 0..reps {
        for &n in &counts {
            fire += 1;
            let now = format!("2026-03-02T{:02}:{:02}:00.000Z", fire / 60, fire % 60);
            results.push((n, trial(&home, &shim, &clones[..n], &bare, &now)));
        }
    }

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "scale-out benchmark, {build} build, {reps} repetitions of N = {counts:?} operators over {OPS} ConvergeOps, \
         one clone each of one bare remote (total {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    println!("temporary directory: {}", chant_testkit::filesystem::describe(tmp.path()));
    println!("every op ticked exactly once at every fire time, and every record reached the remote: checked");
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut one = None;
    let mut one_cpu = None;
    for &n in &counts {
        let trials: Vec<&Trial> = results.iter().filter(|(k, _)| *k == n).map(|(_, t)| t).collect();
        let mut walls: Vec<Duration> = trials.iter().map(|t| t.wall).collect();
        walls.sort();
        let wall = walls[walls.len() / 2];
        let one_wall = *one.get_or_insert(wall);
        let ticks: Vec<String> = trials[0].ticks.iter().map(usize::to_string).collect();
        let mean = |f: fn(&Trial) -> usize| trials.iter().map(|t| f(t)).sum::<usize>() as f64 / trials.len() as f64;
        let (pushes, rejected, refs) = (mean(|t| t.pushes), mean(|t| t.rejected), mean(|t| t.rejected_refs));
        let fetches = mean(|t| t.fetches);
        let cpu = trials.iter().map(|t| t.cpu.as_secs_f64()).sum::<f64>() / trials.len() as f64;
        // The busiest operator's CPU (its own and its git processes'), median over the trials: the
        // least a round could take with a core per operator (operators on machines of their own).
        let mut busiest: Vec<f64> =
            trials.iter().map(|t| t.operator_cpu.iter().map(Duration::as_secs_f64).fold(0.0, f64::max)).collect();
        busiest.sort_by(f64::total_cmp);
        let busiest = busiest[busiest.len() / 2];
        let one_busiest = *one_cpu.get_or_insert(busiest);
        println!(
            "  N={n}: wall {:>7.2} s ({:.2}x N=1)   ticks per operator [{}]   pushes {pushes:>5.0} ({:.1}/s)   \
             rejected {rejected:>3.0} ({:.3} per tick; {refs:.0} refs)   fetches {fetches:>4.0}   git processes per tick {:.3}   CPU {cpu:.2} s ({:.2}x wall)",
            wall.as_secs_f64(),
            wall.as_secs_f64() / one_wall.as_secs_f64(),
            ticks.join(", "),
            pushes / wall.as_secs_f64(),
            rejected / OPS as f64,
            (pushes + fetches) / OPS as f64,
            cpu / wall.as_secs_f64()
        );
        println!(
            "       busiest operator's CPU (own + its git processes) {busiest:.2} s ({:.2}x N=1): the round's floor \
             with a core per operator",
            busiest / one_busiest
        );
        // Work conservation: the operators cannot finish before the machine's cores have done the
        // round's CPU, so no protocol takes the wall time below this on this machine.
        let floor = cpu / cores as f64;
        println!(
            "       the round's CPU over this machine's {cores} cores {floor:.2} s ({:.2}x N=1's wall): the least wall \
             time any split of this round's work can take here",
            floor / one_wall.as_secs_f64()
        );
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

/// One fire time: `clones.len()` operators started together; checks exactly-once and the remote.
fn trial(home: &Path, shim: &Path, clones: &[PathBuf], bare: &Path, now: &str) -> Trial {
    let log = shim.join("pushes.log");
    let _ = std::fs::remove_file(&log);
    let path = format!("{}:{}", shim.display(), std::env::var("PATH").unwrap_or_default());
    let program = std::env::var("CHANT_BENCH_OPERATOR_BIN").unwrap_or_else(|_| BENCH_OPERATOR.to_owned());
    let cpu_before = children_cpu();
    let start = Instant::now();
    let children: Vec<_> = clones
        .iter()
        .map(|dir| {
            hermetic(&program, home, dir)
                // Fire times are a minute apart on the fixed clock: a lease an operator had to keep
                // (its record had not reached the remote) has lapsed by the next one.
                .args(["operator", "--once", "--lease-ttl", "30s"])
                .env("CHANT_NOW", now)
                .env("PATH", &path)
                .env("CHANT_BENCH_PUSH_LOG", &log)
                .envs(std::env::var_os("GIT_TRACE2_EVENT").map(|t| ("GIT_TRACE2_EVENT", t)))
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
    let mut ticks = Vec::new();
    let mut per_op = vec![0_usize; OPS];
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
            .filter_map(|l| l.strip_prefix("operator: opb-")?.get(..3)?.parse().ok())
            .collect();
        for op in &mine {
            per_op[*op] += 1;
        }
        ticks.push(mine.len());
    }
    let all: Vec<&String> = outputs.iter().flat_map(|(_, l, _)| l).collect();
    for (op, n) in per_op.iter().enumerate() {
        assert_eq!(*n, 1, "opb-{op:03} ticked {n} times at {now}:\n{all:?}");
    }
    // Whatever an operator could not push yet, a sync pushes; then the remote has every tick.
    for dir in clones {
        let config = LedgerConfig { remote: Some("origin".into()), ..LedgerConfig::default() };
        Ledger::open(dir, config).unwrap().sync().unwrap();
    }
    let remote = Ledger::open(bare, LedgerConfig::default()).unwrap();
    for op in 0..OPS {
        let key = ShardKey::converge(None, "opbench", &format!("opb-{op:03}")).unwrap();
        let newest = remote.latest(&key).unwrap().record.unwrap().value;
        assert_eq!(newest["startedAt"], now, "opb-{op:03}: the remote lacks the tick of {now}");
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
