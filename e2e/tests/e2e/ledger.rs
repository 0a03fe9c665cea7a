//! The ledger under concurrency and with a remote (DESIGN.md section 6): separate processes
//! appending at once, two clones pushing to one real bare remote at once, and a clone that fell
//! behind while its remote was unreachable re-appending its records onto the remote tip.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chant::ledger::{Ledger, LedgerConfig};
use serde_json::Value;

use super::support::{BRANCH, PROJECT, Sandbox, config_with_roots, run_key, with_bare_remote};

/// Set for a worker run: `<repo dir>|<home>|<writer>|<count>`.
const WORKER: &str = "CHANT_E2E_LEDGER_WORKER";
/// This file's worker test, as the test harness names it.
const WORKER_TEST: &str = "ledger::worker_appends_when_asked";

/// Does nothing in a normal run; appends `count` records through the library when started as a
/// worker by the test below.
#[test]
fn worker_appends_when_asked() {
    let Ok(task) = std::env::var(WORKER) else { return };
    let [dir, home, writer, count]: [&str; 4] = task.split('|').collect::<Vec<_>>().try_into().unwrap();
    let git_env = [
        ("HOME", home),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_COMMITTER_NAME", "E2E Committer"),
        ("GIT_COMMITTER_EMAIL", "committer@e2e.invalid"),
    ]
    .iter()
    .map(|(k, v)| ((*k).into(), (*v).into()))
    .collect();
    let ledger = Ledger::open(Path::new(dir), LedgerConfig { git_env, ..LedgerConfig::default() }).unwrap();
    let key = run_key("site", "site-ping");
    for n in 0..count.parse::<u64>().unwrap() {
        ledger.append(&key, &format!(r#"{{"n":{n},"version":1,"writer":"{writer}"}}"#)).unwrap();
    }
}

#[test]
fn two_processes_appending_200_records_each_all_land() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let count = 200;
    let workers: Vec<std::process::Child> = ["p1", "p2"]
        .iter()
        .map(|writer| {
            Command::new(std::env::current_exe().unwrap())
                .args([WORKER_TEST, "--exact", "--test-threads=1", "--quiet"])
                .env(WORKER, format!("{}|{}|{writer}|{count}", sandbox.dir.display(), sandbox.home().display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut worker in workers {
        assert!(worker.wait().unwrap().success());
    }
    let records = sandbox.records(&run_key("site", "site-ping"));
    assert!(records.unreadable.is_empty(), "{:?}", records.unreadable);
    assert_eq!(records.records.len(), 2 * count);
    for writer in ["p1", "p2"] {
        let mine: Vec<u64> = records
            .records
            .iter()
            .filter(|r| r.value["writer"] == writer)
            .map(|r| r.value["n"].as_u64().unwrap())
            .collect();
        assert_eq!(mine, (0..count as u64).collect::<Vec<_>>(), "{writer}: every record once, in order");
    }
    assert_eq!(sandbox.git(&sandbox.dir, &["rev-list", "--count", BRANCH]).trim(), (2 * count).to_string());
}

/// Runs `site-ping` once in `dir` and returns the id of the run record it printed, and the
/// warnings it gave (a record that did not reach the remote is one).
fn ping_once(sandbox: &Sandbox, dir: &Path) -> (String, Vec<String>) {
    let out = sandbox.run_in(PROJECT, dir, &["run", "site-ping", "--json"], &[]);
    out.code(0);
    let warnings = out.stderr.lines().filter(|l| l.starts_with("warning:")).map(str::to_owned).collect();
    (out.json()["id"].as_str().unwrap().to_owned(), warnings)
}

/// Runs `site-ping` `times` times in `dir` and returns the ids it printed, failing on any warning.
fn ping(sandbox: &Sandbox, dir: &Path, times: usize) -> Vec<String> {
    (0..times)
        .map(|_| {
            let (id, warnings) = ping_once(sandbox, dir);
            assert!(warnings.is_empty(), "{warnings:?}");
            id
        })
        .collect()
}

#[test]
fn two_project_binaries_appending_at_once_all_land() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let ids: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(|| ping(&sandbox, &sandbox.dir, 15));
        let b = s.spawn(|| ping(&sandbox, &sandbox.dir, 15));
        [a.join().unwrap(), b.join().unwrap()].concat()
    });
    let recorded: BTreeSet<String> =
        sandbox.values(&run_key("site", "site-ping")).iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(recorded, ids.iter().cloned().collect::<BTreeSet<_>>());
    assert_eq!(recorded.len(), 30);
}

/// A project whose `chant.toml` names `origin`, pushed to a bare repository, and clones
/// of it.
struct Remote {
    sandbox: Sandbox,
    bare: PathBuf,
}

impl Remote {
    fn new() -> Remote {
        let (sandbox, bare) = with_bare_remote(&["site"]);
        Remote { sandbox, bare }
    }

    fn clone(&self, name: &str) -> PathBuf {
        let dir = self.sandbox.root().join(name);
        self.sandbox.git(self.sandbox.root(), &["clone", "-q", self.bare.to_str().unwrap(), name]);
        dir
    }

    /// The ids of the `site-ping` run records in `dir`'s ledger (a bare repository or a clone).
    fn ids(&self, dir: &Path) -> Vec<String> {
        let prefix = format!("{}/", run_key("site", "site-ping").dir());
        self.sandbox
            .ledger_lines_of(dir)
            .into_iter()
            .filter(|(path, _)| path.starts_with(&prefix))
            .map(|(_, line)| serde_json::from_str::<Value>(&line).unwrap()["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The number of root commits of the ledger branch in `dir`.
    fn roots(&self, dir: &Path) -> usize {
        self.sandbox.git(dir, &["rev-list", "--max-parents=0", BRANCH]).lines().count()
    }
}

#[test]
fn two_clones_pushing_to_one_bare_remote_at_once_lose_nothing() {
    let remote = Remote::new();
    let (a, b) = (remote.clone("a"), remote.clone("b"));
    let sandbox = &remote.sandbox;
    // Both clones append and push at once. Under sustained contention an append may exhaust its
    // push rounds: DESIGN.md section 6 has it keep the record locally, say so, and push it with
    // the clone's next append. So: every record is kept locally at once, and on the remote after
    // each clone's next append.
    let at_once = |dir: &Path| (0..8).map(|_| ping_once(sandbox, dir)).collect::<Vec<_>>();
    let (from_a, from_b) = std::thread::scope(|s| {
        let ta = s.spawn(|| at_once(&a));
        let tb = s.spawn(|| at_once(&b));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    for (dir, pings) in [(&a, &from_a), (&b, &from_b)] {
        let local: BTreeSet<String> = remote.ids(dir).into_iter().collect();
        for (id, warnings) in pings {
            assert!(local.contains(id), "a record its clone printed is missing from that clone: {id}");
            for w in warnings {
                assert!(w.contains("kept locally") && w.contains("origin"), "{w}");
            }
        }
    }
    let last = [ping(sandbox, &a, 1), ping(sandbox, &b, 1)].concat();
    let on_remote = remote.ids(&remote.bare);
    let want: BTreeSet<String> = from_a.iter().chain(&from_b).map(|(id, _)| id.clone()).chain(last).collect();
    assert_eq!(
        on_remote.iter().cloned().collect::<BTreeSet<_>>(),
        want,
        "every record of both clones is on the remote"
    );
    assert_eq!(on_remote.len(), 18, "each once");
    assert_eq!(remote.roots(&remote.bare), 1, "one history, never a parentless commit over it");
    assert_eq!(sandbox.tip_of(&b), sandbox.tip_of(&remote.bare));
    sandbox.git(&remote.bare, &["merge-base", "--is-ancestor", &sandbox.tip_of(&a).unwrap(), BRANCH]);
}

#[test]
fn a_diverged_clone_reappends_its_records_and_pushes() {
    let remote = Remote::new();
    let sandbox = &remote.sandbox;
    let a = remote.clone("a");
    let first_a = ping(sandbox, &a, 1);

    // `b` is cloned after `a` pushed: its ledger branch exists only on the remote, so its first
    // append fetches it and builds on it rather than starting a parentless history.
    let b = remote.clone("b");
    assert_eq!(sandbox.tip_of(&b), None);
    let first_b = ping(sandbox, &b, 1);
    assert_eq!(remote.roots(&b), 1);
    let shared = sandbox.tip_of(&remote.bare).unwrap();

    // The remote goes away: `b`'s runs still succeed and are recorded locally, with a warning.
    let away = remote.bare.with_extension("away");
    std::fs::rename(&remote.bare, &away).unwrap();
    let mut offline_b = Vec::new();
    for _ in 0..2 {
        let out = sandbox.run_in(PROJECT, &b, &["run", "site-ping", "--json"], &[]);
        out.code(0);
        assert!(out.stderr.contains("warning") && out.stderr.contains("origin"), "{}", out.all());
        offline_b.push(out.json()["id"].as_str().unwrap().to_owned());
    }
    std::fs::rename(&away, &remote.bare).unwrap();

    // Meanwhile `a` moves the remote on: `b` has diverged from it.
    let second_a = ping(sandbox, &a, 1);
    let remote_tip = sandbox.tip_of(&remote.bare).unwrap();
    let b_tip = sandbox.tip_of(&b).unwrap();
    assert_ne!(sandbox.git_out(&b, &["merge-base", "--is-ancestor", &b_tip, &remote_tip]).code, 0);

    // `b`'s next append fetches, re-appends its two local records onto the remote tip, and pushes.
    let last_b = ping(sandbox, &b, 1);
    let want: Vec<String> = [first_a, first_b, second_a, offline_b, last_b].concat();
    let on_remote = remote.ids(&remote.bare);
    assert_eq!(on_remote.iter().cloned().collect::<BTreeSet<_>>(), want.iter().cloned().collect::<BTreeSet<_>>());
    assert_eq!(on_remote.len(), want.len(), "no record twice");
    assert_eq!(sandbox.tip_of(&b), sandbox.tip_of(&remote.bare), "b's ledger is what the remote holds");
    // The remote's history was extended, never rewritten: a's commits are still on it.
    sandbox.git(&remote.bare, &["merge-base", "--is-ancestor", &remote_tip, BRANCH]);
    sandbox.git(&remote.bare, &["merge-base", "--is-ancestor", &shared, BRANCH]);
    assert_eq!(remote.roots(&remote.bare), 1);
}

#[test]
fn under_chant_now_every_ledger_commit_carries_that_time() {
    // The ledger's commits are dated by the clock the records read, so a test's fixed clock
    // fixes them too (the tick, its dispatched run and that run's apply: three commits).
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let tick = sandbox.tick("site-converge", &[("CHANT_NOW", "2026-03-01T10:00:00Z")]);
    assert_eq!(tick["startedAt"], "2026-03-01T10:00:00.000Z");
    let dates = sandbox.git(&sandbox.dir, &["log", "--format=%aI %cI", BRANCH]);
    let dates: Vec<&str> = dates.lines().collect();
    assert_eq!(dates.len(), 3, "{dates:?}");
    for line in dates {
        assert_eq!(line, "2026-03-01T10:00:00Z 2026-03-01T10:00:00Z");
    }
}
