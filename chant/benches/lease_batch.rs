//! What one batch of leases costs against a remote, as the batch grows: the operator claims a
//! round's ops in one push of their leases and releases them in one push of deletions
//! (`LeaseStore::acquire_every`, `release_every`), each ref under its own `--force-with-lease`.
//!
//! Run: `cargo bench -p chant-ops --bench lease_batch` (`CHANT_BENCH_LEASES=100,200,500,1000,2000`
//! picks the batch sizes, `CHANT_BENCH_REPS` the repetitions of each, default 3, and
//! `CHANT_BENCH_TAGS=5000` gives each clone that many tags, as a project's repository has: git
//! matches each ref of a push against every local ref, which the push directory avoids).
//!
//! For each size K it makes a bare remote on this machine and a clone, then times, K leases at a
//! time: the fetch of every lease plus the acquiring push, and the fetch plus the releasing push,
//! through chant's own lease store. It prints the median of each per lease and the growth of the
//! per-lease cost against the smallest size in the same run. A cost per lease that stays flat is
//! a push that grows with the batch; one that grows with K is a push that grows with K squared.
//! The anchor is one `git push` of a single lease ref to the same kind of remote, by the git
//! binary, in the same run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
// The anchor runs the git binary directly; chant's own children go through `chant::process`,
// which the clippy ban (chant/clippy.toml) is for.
#![allow(clippy::disallowed_methods)]

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chant::lease::{Acquisition, LeaseKey, LeaseStore};
use chant::ledger::{Ledger, LedgerConfig};

const TTL: Duration = Duration::from_secs(300);

fn main() {
    let sizes: Vec<usize> = std::env::var("CHANT_BENCH_LEASES")
        .unwrap_or_else(|_| "100,200,500,1000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let tags: usize = std::env::var("CHANT_BENCH_TAGS").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    println!(
        "lease batches against a bare remote on this machine, {reps} repetitions of each size, {tags} tags in the clone"
    );
    println!("temporary directory: {}", chant_testkit::filesystem::describe(&std::env::temp_dir()));
    let anchor = median((0..reps.max(3)).map(|_| one_git_push()).collect());
    println!("anchor: one `git push` of one lease ref by the git binary: {:.1} ms", ms(anchor));
    println!(
        "{:>7} | {:>20} | {:>20} | {:>22} | {:>22}",
        "leases", "acquire (fetch+push)", "release (fetch+push)", "acquire per lease", "release per lease"
    );
    let mut first: Option<(f64, f64)> = None;
    for &k in &sizes {
        let (mut acquires, mut releases) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let (a, r) = batch(k, tags);
            acquires.push(a);
            releases.push(r);
        }
        let (a, r) = (median(acquires), median(releases));
        let per = (ms(a) / k as f64, ms(r) / k as f64);
        let (base_a, base_r) = *first.get_or_insert(per);
        println!(
            "{k:>7} | {:>17.1} ms | {:>17.1} ms | {:>8.3} ms ({:>5.2}x) | {:>8.3} ms ({:>5.2}x)",
            ms(a),
            ms(r),
            per.0,
            per.0 / base_a,
            per.1,
            per.1 / base_r
        );
    }
    println!(
        "(the x columns: the cost per lease against the first size's, in this run; the anchor's push \
         carries one lease, so K leases in K such pushes would cost K times the anchor)"
    );
}

/// Acquires `k` leases in one batch on a fresh remote and releases them in another; the two
/// durations, each with its fetch of every lease.
fn batch(k: usize, tags: usize) -> (Duration, Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let work = remote_and_clone(tmp.path());
    if tags > 0 {
        // Packed, as a clone's tags are: one file of `<object> <ref>` lines, sorted.
        let file = tmp.path().join("tag.txt");
        std::fs::write(&file, "tagged\n").unwrap();
        let object = git(&work, &["hash-object", "-w", file.to_str().unwrap()]);
        let mut names: Vec<String> = (0..tags).map(|i| format!("refs/tags/v{i}")).collect();
        names.sort();
        let lines: String = names.iter().map(|n| format!("{} {n}\n", object.trim())).collect();
        std::fs::write(work.join(".git/packed-refs"), format!("# pack-refs with: peeled fully-peeled sorted\n{lines}"))
            .unwrap();
    }
    let config =
        LedgerConfig { remote: Some("origin".into()), git_env: hermetic(tmp.path()), ..LedgerConfig::default() };
    let store = LeaseStore::new(&Ledger::open(&work, config).unwrap());
    let keys: Vec<LeaseKey> = (0..k).map(|i| LeaseKey::new(None, &format!("op-{i:05}")).unwrap()).collect();
    let holder = "bench:1:0000beef";

    let t = Instant::now();
    store.fetch_every().unwrap();
    let outcomes = store.acquire_every(&keys, holder, TTL, store.clock().now()).unwrap();
    let acquire = t.elapsed();
    let held: Vec<_> = outcomes
        .into_iter()
        .map(|o| match o.unwrap() {
            Acquisition::Acquired { held, .. } => held,
            other => panic!("every lease of a fresh remote is free, got {other:?}"),
        })
        .collect();

    let t = Instant::now();
    let released = store.release_every(&held).unwrap();
    let release = t.elapsed();
    assert!(released.into_iter().all(|r| r.unwrap()), "every lease released");
    (acquire, release)
}

/// A bare remote and a clone of it with `origin` pointing at it, under `dir`; the clone's path.
fn remote_and_clone(dir: &Path) -> std::path::PathBuf {
    let bare = dir.join("remote.git");
    let work = dir.join("work");
    git(dir, &["init", "-q", "--bare", bare.to_str().unwrap()]);
    git(dir, &["init", "-q", work.to_str().unwrap()]);
    git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
    work
}

/// One `git push` of one blob to a lease ref under `--force-with-lease`, as a lease store's
/// push of a batch of one does.
fn one_git_push() -> Duration {
    let tmp = tempfile::tempdir().unwrap();
    let work = remote_and_clone(tmp.path());
    let file = tmp.path().join("lease.json");
    std::fs::write(&file, r#"{"op":"op","holder":"bench:1:0000beef"}"#).unwrap();
    let blob = git(&work, &["hash-object", "-w", file.to_str().unwrap()]);
    let t = Instant::now();
    git(
        &work,
        &[
            "push",
            "-q",
            "--porcelain",
            "--no-verify",
            "--force-with-lease=refs/chant/lease/op:",
            "origin",
            &format!("{}:refs/chant/lease/op", blob.trim()),
        ],
    );
    t.elapsed()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .envs(hermetic(dir))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A git environment that reads no configuration of this machine's user or system.
fn hermetic(home: &Path) -> Vec<(OsString, OsString)> {
    let fixed = [("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_CONFIG_GLOBAL", "/dev/null"), ("GIT_TERMINAL_PROMPT", "0")];
    let mut env: Vec<(OsString, OsString)> = fixed.iter().map(|(k, v)| (k.into(), v.into())).collect();
    env.push(("HOME".into(), home.into()));
    env
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
