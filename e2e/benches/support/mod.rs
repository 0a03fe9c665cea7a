//! Helpers shared by the e2e benches: hermetic child processes and git.

#![allow(dead_code, clippy::disallowed_methods)] // each bench uses its own subset; a harness spawns as it likes

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A child with no configuration of the developer's: an empty environment plus `PATH`, a
/// temporary `HOME`, no system or global git configuration, a fixed identity.
pub(crate) fn hermetic(program: &str, home: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear().current_dir(dir).stdin(Stdio::null());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@e2e.invalid")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@e2e.invalid");
    cmd
}

pub(crate) fn git(home: &Path, dir: &Path, args: &[&str]) {
    let out = hermetic("git", home, dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A git repository at `dir` with `chant.toml` committed.
pub(crate) fn project(home: &Path, dir: &Path, chant_toml: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(home, dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(dir.join("chant.toml"), chant_toml).unwrap();
    git(home, dir, &["add", "chant.toml"]);
    git(home, dir, &["commit", "-q", "-m", "initial"]);
    dir.to_owned()
}

/// An RFC 3339 UTC instant with milliseconds, from seconds since the epoch.
pub(crate) fn stamp(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Writes `files` (path on the ledger branch, content) onto chant's ledger branch of `dir` in one
/// commit, with one `git fast-import`: how the benches lay down a long history in chant's shard
/// layout without a commit per record.
pub(crate) fn fast_import(home: &Path, dir: &Path, files: impl IntoIterator<Item = (String, String)>) {
    let msg = "chant: bench fill\n";
    let mut stream = Vec::new();
    write!(
        stream,
        "commit {}\ncommitter Bench <bench@e2e.invalid> 1764000000 +0000\ndata {}\n{msg}",
        chant::ledger::BRANCH,
        msg.len()
    )
    .unwrap();
    for (path, content) in files {
        write!(stream, "M 100644 inline {path}\ndata {}\n{content}\n", content.len()).unwrap();
    }
    let mut child = hermetic("git", home, dir).args(["fast-import", "--quiet"]).stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
}

/// Fills a new repository at `dir` with `per_op` tick records of each of `ops` in `env` (copies
/// of `template` with their id, op and times changed; the ops' ticks interleave, one a minute per
/// op), written by one [`fast_import`] in chant's shard layout (64 records a shard, 64 shards a
/// bucket), not by appends (a commit each, far too slow), then read back through `Ledger::read`.
/// Returns the first record's time (seconds since the epoch).
pub(crate) fn fill_ledger(
    home: &Path,
    dir: &Path,
    template: &serde_json::Value,
    env: &str,
    ops: &[String],
    per_op: usize,
) -> i64 {
    use chant::ledger::{Ledger, LedgerConfig, ShardKey};

    std::fs::create_dir_all(dir).unwrap();
    git(home, dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    let base: i64 = 1_764_000_000; // 2025-11-24
    let n_ops = ops.len();
    let mut files = Vec::new();
    for (o, op) in ops.iter().enumerate() {
        let key_dir = ShardKey::converge(None, env, op).unwrap().dir();
        for shard in 0..per_op.div_ceil(64) {
            let mut content = String::new();
            for n in shard * 64..((shard + 1) * 64).min(per_op) {
                let at = base + ((n * n_ops + o) as i64) * 60 / n_ops as i64;
                let mut record = template.clone();
                record["id"] = format!("00000000-0000-4000-8000-{:012}", n * n_ops + o).into();
                record["op"] = op.clone().into();
                record["env"] = env.into();
                record["startedAt"] = stamp(at).into();
                record["timestamp"] = stamp(at).into();
                content.push_str(&serde_json::to_string(&record).unwrap());
                content.push('\n');
            }
            files.push((format!("{key_dir}/{}/{shard}.jsonl", shard / 64), content));
        }
    }
    fast_import(home, dir, files);
    let ledger = Ledger::open(dir, LedgerConfig { gc_every: 0, ..LedgerConfig::default() }).unwrap();
    for op in ops {
        let read = ledger.read(&ShardKey::converge(None, env, op).unwrap()).unwrap();
        assert_eq!((read.records.len(), read.unreadable.len()), (per_op, 0), "{op}");
    }
    base
}

/// The variable that makes a bench binary a measuring process ([`measure_if_asked`]).
pub(crate) const MEASURE_VAR: &str = "CHANT_BENCH_MEASURE";

/// Runs `program args` in `dir` as the only child of a measuring process (this bench binary
/// re-executed with [`MEASURE_VAR`]), and returns its wall time and peak resident set in KiB.
pub(crate) fn measured(home: &Path, dir: &Path, program: &str, args: &[&str]) -> (std::time::Duration, u64) {
    let me = std::env::current_exe().unwrap();
    let out = hermetic(me.to_str().unwrap(), home, dir).env(MEASURE_VAR, "1").arg(program).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().unwrap());
    (std::time::Duration::from_micros(parts.next().unwrap()), parts.next().unwrap())
}

/// The variable that makes a measuring process stop its child: `<n>:<prefix>`, SIGTERM once the
/// child printed `n` lines starting with `prefix` ([`measured_until`]).
const MEASURE_STOP_VAR: &str = "CHANT_BENCH_MEASURE_STOP";

/// Like [`measured`] for a daemon: the measuring process sends `program` SIGTERM once it printed
/// `lines` lines starting with `prefix` on stdout (one round of an operator), and waits for its
/// clean exit.
pub(crate) fn measured_until(
    home: &Path,
    dir: &Path,
    program: &str,
    args: &[&str],
    prefix: &str,
    lines: usize,
) -> (std::time::Duration, u64) {
    let me = std::env::current_exe().unwrap();
    let out = hermetic(me.to_str().unwrap(), home, dir)
        .env(MEASURE_VAR, "1")
        .env(MEASURE_STOP_VAR, format!("{lines}:{prefix}"))
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().unwrap());
    (std::time::Duration::from_micros(parts.next().unwrap()), parts.next().unwrap())
}

/// In a measuring process (started by [`measured`] or [`measured_until`]): runs the arguments as
/// its only child (stdout and stderr to /dev/null, or stdout read until the stop line), prints
/// `<microseconds> <peak KiB>` and returns true.
pub(crate) fn measure_if_asked() -> bool {
    use std::io::BufRead;
    if std::env::var_os(MEASURE_VAR).is_none() {
        return false;
    }
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let stop = std::env::var(MEASURE_STOP_VAR).ok().map(|v| {
        let (n, prefix) = v.split_once(':').unwrap();
        (n.parse::<usize>().unwrap(), prefix.to_owned())
    });
    let t = std::time::Instant::now();
    let mut child = Command::new(&args[0])
        .args(&args[1..])
        .env_remove(MEASURE_VAR)
        .env_remove(MEASURE_STOP_VAR)
        .stdout(if stop.is_some() { Stdio::piped() } else { Stdio::null() })
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some((n, prefix)) = stop {
        let mut seen = 0;
        for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
            if line.unwrap().starts_with(&prefix) {
                seen += 1;
                if seen == n {
                    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
                    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
                }
            }
        }
        assert!(seen >= n, "{args:?}: {seen} of {n} lines");
    }
    let status = child.wait().unwrap();
    let elapsed = t.elapsed();
    assert!(status.success(), "{args:?}");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    println!("{} {}", elapsed.as_micros(), usage.max_rss());
    true
}
