//! The cost of an in-sync tick of a 1,000-file estate, against reading those 1,000 files once.
//!
//! Run with `cargo bench -p chant-e2e --bench tick` (release build). It builds the fixture's
//! `bulk` env (1,000 files of about 80 bytes in ten directories) in a temporary git repository,
//! applies it once through the project binary, then prints medians (and minima; the machine is
//! shared) of:
//!
//! - **read**: opening, `fstat`ing and reading the 1,000 declared files once (the floor: any
//!   observation must at least do this);
//! - **assess**: the tick's observation alone, in process (declaration, files lexicon with its
//!   confinement checks and content digests, the last apply read from the ledger, the symptom);
//! - **tick**: one whole in-process tick, as `tick` runs it (read the previous tick record,
//!   assess, plan, append the tick record: one git commit);
//! - **process tick**: `e2e-project tick bulk-converge` as a child process (the above plus exec,
//!   catalog validation and opening the repository).
//!
//! and each one's ratio to **read**. Files are in the page cache throughout (the estate was just
//! written), so the figures compare work, not disk latency. `CHANT_BENCH_REPS` sets the number
//! of repetitions (default 21).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
use support::{git, hermetic};

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chant::project::Project;
use chant::tick::{Dispatcher, TickOptions};
use chant_e2e::declaration::{BULK_FILES, bulk_path};

const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");

fn main() {
    let reps: usize = std::env::var("CHANT_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(21);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    git(&home, &dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(dir.join("chant.toml"), "[project]\nname = \"bench\"\n[env.bulk]\nfiles_root = \"estates/bulk\"\n")
        .unwrap();
    git(&home, &dir, &["add", "chant.toml"]);
    git(&home, &dir, &["commit", "-q", "-m", "initial"]);
    let applied = hermetic(PROJECT, &home, &dir).args(["run", "bulk-apply"]).output().unwrap();
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));

    let root = dir.join("estates/bulk");
    let paths: Vec<PathBuf> = (0..BULK_FILES).map(|n| root.join(bulk_path(n))).collect();
    let bytes: usize = paths.iter().map(|p| std::fs::metadata(p).unwrap().len() as usize).sum();

    let project = Project::open(&dir).unwrap();
    let doc = project.catalog.get("bulk-converge").unwrap().clone();
    let options = TickOptions {
        dispatcher: Dispatcher { program: PathBuf::from(PROJECT), ..Dispatcher::current().unwrap() },
        fence: None,
    };

    let read = time(reps, || {
        let mut buf = Vec::with_capacity(128);
        for p in &paths {
            let mut f = std::fs::File::open(p).unwrap();
            let _ = f.metadata().unwrap();
            buf.clear();
            f.read_to_end(&mut buf).unwrap();
        }
    });
    let assess = time(reps, || {
        let a = project.assess(None, "bulk").unwrap();
        assert_eq!(a.symptom.status.as_str(), "reconciled");
    });
    let tick = time(reps, || {
        let outcome = chant::tick::execute(&project, &doc, &options).unwrap();
        assert_eq!((outcome.record.summary.drifted, outcome.record.outcomes.len()), (0, 0), "in sync");
    });
    let process = time(reps, || {
        let out = hermetic(PROJECT, &home, &dir).args(["tick", "bulk-converge"]).output().unwrap();
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("drifted=0 remediated=0"));
    });

    println!(
        "in-sync tick of a {BULK_FILES}-file estate ({bytes} bytes), {} build, {reps} repetitions",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    println!("{:>13} | {:>10} | {:>10} | {:>15}", "", "median", "min", "median / read");
    let base = median(&read);
    for (name, samples) in [("read", &read), ("assess", &assess), ("tick", &tick), ("process tick", &process)] {
        println!(
            "{name:>13} | {:>7.3} ms | {:>7.3} ms | {:>14.1}x",
            ms(median(samples)),
            ms(*samples.iter().min().unwrap()),
            median(samples).as_secs_f64() / base.as_secs_f64()
        );
    }
}

/// Runs `f` once to warm up, then `reps` times, and returns the durations.
fn time(reps: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

fn median(samples: &[Duration]) -> Duration {
    let mut s = samples.to_vec();
    s.sort();
    s[s.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
