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
//!
//! Then the split, each part timed alone (medians) with its share of **assess** or **process
//! tick**: of assess, the declaration (building the env's declaration), the binding (the last
//! apply read from the ledger), the declared entities (their digests), the thin read (the files
//! lexicon's confinement checks, reads and digests), the deep read, the baseline read and the
//! fold into change sets and the symptom; of the tick, the previous tick record's read and the
//! append; of the process, a bare start (`e2e-project --version`: exec and the runtime's
//! start), opening the project (`chant.toml`, catalog validation, the repository) and the lease
//! (the difference to `tick --no-lease`). And the CPU (user + system) of one assess, one tick and
//! one process tick, which a loaded machine disturbs less than wall time.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
use support::{git, hermetic};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chant::ledger::ShardKey;
use chant::model::OpDocument;
use chant::observe::deep::fold::assess_with_deep;
use chant::observe::deep::observe_deep;
use chant::observe::observe_component;
use chant::project::Project;
use chant::tick::{Dispatcher, TickOptions, TickRecord};
use chant_e2e::declaration::{BULK_FILES, bulk_path};
use nix::sys::resource::{UsageWho, getrusage};

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

    let read_once = || {
        let mut buf = Vec::with_capacity(128);
        for p in &paths {
            let mut f = std::fs::File::open(p).unwrap();
            let _ = f.metadata().unwrap();
            buf.clear();
            f.read_to_end(&mut buf).unwrap();
        }
    };
    let read = time(reps, read_once);
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
    let split = Split::measure(reps, &project, &doc, &options, (&home, &dir), read_once);

    println!(
        "in-sync tick of a {BULK_FILES}-file estate ({bytes} bytes), {} build, {reps} repetitions, in {} ({})",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        tmp.path().display(),
        file_system(tmp.path())
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
    println!(
        "goal (issue 37; anchor: read): tick <= 3x read in process ({:.1}x), process tick <= 4x read ({:.1}x)",
        median(&tick).as_secs_f64() / base.as_secs_f64(),
        median(&process).as_secs_f64() / base.as_secs_f64()
    );
    split.print(median(&assess), median(&process));
}

/// The parts of an assess, a tick and a process tick, each timed alone.
struct Split {
    assess: Vec<(&'static str, Duration)>,
    tick: Vec<(&'static str, Duration)>,
    process: Vec<(&'static str, Duration)>,
    /// CPU (user + system) per assess, tick and process tick.
    cpu: [(&'static str, Duration); 4],
}

impl Split {
    fn measure(
        reps: usize,
        project: &Project,
        doc: &OpDocument,
        options: &TickOptions,
        (home, dir): (&Path, &Path),
        read: impl FnMut(),
    ) -> Self {
        let env = "bulk";
        let declaration = median(&time(reps, || {
            assert!(chant::lexicon::declaration(env).unwrap().is_some());
        }));
        let bind = median(&time(reps, || {
            assert_eq!(project.lexicons(None, env).unwrap().len(), 1);
        }));
        let lexicons = project.lexicons(None, env).unwrap();
        let bound = &lexicons[0];
        let declared_entities = median(&time(reps, || {
            assert_eq!(bound.declared_entities().unwrap().len(), BULK_FILES);
        }));
        let declared = bound.declared_entities().unwrap();
        let thin = median(&time(reps, || {
            let _ = observe_component(bound.lexicon(), &declared);
        }));
        let deep = median(&time(reps, || {
            // Each deep read takes what the thin read kept: pair them, and subtract the thin.
            let _ = observe_component(bound.lexicon(), &declared);
            assert!(observe_deep(bound.lexicon(), &declared).is_some());
        }))
        .saturating_sub(thin);
        let baseline = median(&time(reps, || {
            project.read_baseline(None, env).unwrap().unwrap();
        }));
        let input = bound.component_input(false).unwrap();
        let _ = observe_component(bound.lexicon(), &declared);
        let deep_read = observe_deep(bound.lexicon(), &declared).unwrap();
        let inputs = [input];
        let deeps = [deep_read];
        let fold = median(&time(reps, || {
            let a = assess_with_deep(env, &inputs, &deeps);
            assert_eq!(a.symptom.status.as_str(), "reconciled");
        }));

        let key = ShardKey::converge(None, env, &doc.name).unwrap();
        let previous = median(&time(reps, || {
            assert!(project.ledger.latest_typed::<TickRecord>(&key).unwrap().record.is_some());
        }));
        let mut appends = Vec::new();
        let _ = time(reps, || appends.push(chant::tick::execute(project, doc, options).unwrap().append_time));

        let bare = median(&time(reps, || {
            assert!(hermetic(PROJECT, home, dir).arg("--version").output().unwrap().status.success());
        }));
        let open = median(&time(reps, || {
            let _ = Project::open(dir).unwrap();
        }));
        let unleased = median(&time(reps, || {
            let out = hermetic(PROJECT, home, dir).args(["tick", "--no-lease", "bulk-converge"]).output().unwrap();
            assert!(out.status.success());
        }));
        let leased = median(&time(reps, || {
            let out = hermetic(PROJECT, home, dir).args(["tick", "bulk-converge"]).output().unwrap();
            assert!(out.status.success());
        }));

        let cpu = [
            ("read", cpu(UsageWho::RUSAGE_SELF, reps, read)),
            ("assess", cpu(UsageWho::RUSAGE_SELF, reps, || drop(project.assess(None, env).unwrap()))),
            ("tick", cpu(UsageWho::RUSAGE_SELF, reps, || drop(chant::tick::execute(project, doc, options).unwrap()))),
            (
                "process tick",
                cpu(UsageWho::RUSAGE_CHILDREN, reps, || {
                    assert!(
                        hermetic(PROJECT, home, dir).args(["tick", "bulk-converge"]).output().unwrap().status.success()
                    );
                }),
            ),
        ];
        Split {
            assess: vec![
                ("declaration", declaration),
                ("last apply", bind.saturating_sub(declaration)),
                ("declared", declared_entities),
                ("thin read", thin),
                ("deep read", deep),
                ("baseline", baseline),
                ("fold", fold),
            ],
            tick: vec![("previous", previous), ("append", median(&appends))],
            process: vec![("bare start", bare), ("open", open), ("lease", leased.saturating_sub(unleased))],
            cpu,
        }
    }

    fn print(&self, assess: Duration, process: Duration) {
        for (what, whole, parts) in
            [("assess", assess, &self.assess), ("tick", assess, &self.tick), ("process tick", process, &self.process)]
        {
            println!(
                "split of {what} (each part alone, median; share of {})",
                if what == "tick" { "assess" } else { what }
            );
            for (name, d) in parts {
                println!("{name:>13} | {:>7.3} ms | {:>5.1}%", ms(*d), 100.0 * d.as_secs_f64() / whole.as_secs_f64());
            }
        }
        println!("cpu (user + system) per repetition, and its ratio to read's");
        let base = self.cpu[0].1.max(Duration::from_micros(1));
        for (name, d) in &self.cpu {
            println!("{name:>13} | {:>7.3} ms | {:>5.1}x", ms(*d), d.as_secs_f64() / base.as_secs_f64());
        }
    }
}

/// The type of the file system holding `dir` (`tmpfs`, `ext2/ext3`), as `stat -f` names it:
/// creating a file costs far more on some than on others, which the append shows.
fn file_system(dir: &Path) -> String {
    std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map_or_else(|| "file system unknown".to_owned(), |out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The CPU (user + system) of `who` per run of `f`, over `reps` runs after a warm-up.
fn cpu(who: UsageWho, reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let used = || {
        let u = getrusage(who).unwrap();
        let t = |tv: nix::sys::time::TimeVal| Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000);
        t(u.user_time()) + t(u.system_time())
    };
    let before = used();
    for _ in 0..reps {
        f();
    }
    (used() - before) / reps as u32
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
