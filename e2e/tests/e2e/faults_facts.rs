//! kill -9 during the writes the first campaign (`faults.rs`) does not reach (issue #34's fault
//! campaign): a gate approval, a baseline acceptance, and an append whose push to a real bare
//! remote is under way. In each trial a victim is killed with SIGKILL after a pseudo-random
//! delay while a survivor (`run site-ping --json`) appends beside it. After every trial:
//!
//! - no line on the ledger is torn, here or on the remote once it is synced;
//! - no completed record is lost: every run record a survivor printed is on the ledger;
//! - `git fsck --strict` is clean, in the clone and in the bare remote;
//! - a lock file the kill left behind (in the clone or the remote) is named with its fix by the
//!   next command once it is stale, and removing it is enough;
//! - the facts still decide: the gate opens on an approval that landed, and stays shut (exit 3)
//!   on one that did not; an accepted baseline reads back whole or not at all.
//!
//! CI runs a few trials; the campaign runs `CHANT_FAULT_TRIALS` (default 100 per kind) with
//! `cargo test -p chant-e2e --test e2e faults_facts:: -- --ignored --nocapture`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::faults::{at, at_minute, clear_locks, kill_beside, lcg, locks, ping_ids};
use super::support::{PROJECT, Sandbox};

/// The declaration with the JSON document the baseline accepts a value of.
const DOC: (&str, &str) = ("E2E_SITE_DOC", "1");

/// What one campaign found, per kind of victim.
#[derive(Debug, Default)]
struct Figures {
    trials: [usize; 3],
    killed: [usize; 3],
    locks: Vec<String>,
    approvals_landed: usize,
    baselines_landed: usize,
}

const KINDS: [&str; 3] = ["approve", "baseline", "pushed run"];

/// A project whose ledger remote is a bare repository beside it.
fn shared() -> (Sandbox, PathBuf) {
    let shared = super::gate_remote::Shared::new();
    (shared.sandbox, shared.bare)
}

/// Asserts that every line of every record shard is one JSON object, and every whole document
/// (`*.json`, such as the baseline) parses whole.
fn nothing_torn(sandbox: &Sandbox, trial: usize) {
    let mut documents: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for (path, line) in sandbox.ledger_lines_of(&sandbox.dir) {
        if path.ends_with(".json") {
            let doc = documents.entry(path).or_default();
            doc.push_str(&line);
            doc.push('\n');
            continue;
        }
        let parsed: Result<Value, _> = serde_json::from_str(&line);
        assert!(parsed.is_ok_and(|v| v.is_object()), "trial {trial}: a torn line in {path}: {line:?}");
    }
    for (path, doc) in documents {
        let parsed: Result<Value, _> = serde_json::from_str(&doc);
        assert!(parsed.is_ok_and(|v| v.is_object()), "trial {trial}: a torn document {path}: {doc:?}");
    }
}

/// The accepted baseline on the ledger, when there is one: it must parse whole.
fn baseline(sandbox: &Sandbox, trial: usize) -> Option<Value> {
    let out = sandbox.git_out(&sandbox.dir, &["show", "chant/lifecycle:site/observation-baseline.json"]);
    if out.code != 0 {
        return None;
    }
    let doc: Result<Value, _> = serde_json::from_str(&out.stdout);
    assert!(doc.as_ref().is_ok_and(Value::is_object), "trial {trial}: a torn baseline: {:?}", out.stdout);
    doc.ok()
}

fn campaign(per_kind: usize) -> Figures {
    let (sandbox, bare) = shared();
    let git_dir = sandbox.dir.join(".git");
    let mut figures = Figures::default();
    let mut completed: BTreeSet<String> = BTreeSet::new();
    let setup = at(0);
    sandbox.project(&["run", "site-apply"], &[("CHANT_NOW", setup.as_str()), DOC]).code(0);
    for n in 1..=per_kind * KINDS.len() {
        let kind = n % KINDS.len();
        figures.trials[kind] += 1;
        let now = at(n);
        let vars = [("CHANT_NOW", now.as_str()), DOC];
        let args: &[&str] = match kind {
            0 => {
                // A standing request for the victim to approve (a run that an earlier approval
                // still admits runs through instead: that is fine, the approve then answers it).
                let asked = sandbox.project(&["run", "site-release"], &vars);
                assert!([0, 3].contains(&asked.code), "trial {n}: {}", asked.all());
                &["approve", "site-release", "release"]
            }
            1 => {
                std::fs::write(
                    sandbox.path("estates/site/app.json"),
                    format!("{{\"port\": {}, \"log\": {{\"level\": \"info\"}}}}\n", 9000 + n),
                )
                .unwrap();
                &["lifecycle", "diff", "site", "--live", "--update-baseline", "--path", "app.json.document.port"]
            }
            _ => {
                std::fs::write(sandbox.path("estates/site/app.conf"), format!("trial = {n}\n")).unwrap();
                &["run", "site-apply"]
            }
        };
        let mut victim = sandbox.command(PROJECT, &sandbox.dir, args, &vars);
        let victim = victim.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let mut survivor = sandbox.command(PROJECT, &sandbox.dir, &["run", "site-ping", "--json"], &vars);
        let survivor = survivor.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let delay = Duration::from_millis(lcg(n as u64) % 500);
        if kill_beside(victim, survivor, delay, sandbox.root(), &mut completed) {
            figures.killed[kind] += 1;
        }

        // A lock the kill left, in the clone or in the remote: once stale, the next command names
        // it and its fix, and removing it is enough.
        let later = at_minute(10 * n + 6);
        let leftover = locks(&git_dir).into_iter().chain(locks(&bare)).collect();
        let what = format!("trial {n} ({})", KINDS[kind]);
        figures.locks.extend(clear_locks(&sandbox, leftover, &[("CHANT_NOW", later.as_str()), DOC], &what));

        // The next write appends (and pushes) anything kept; nothing completed is missing.
        sandbox.project(&["run", "site-ping"], &vars).code(0);
        nothing_torn(&sandbox, n);
        let on_ledger = ping_ids(&sandbox);
        let lost: Vec<&String> = completed.difference(&on_ledger).collect();
        assert!(lost.is_empty(), "trial {n} ({}): completed records lost: {lost:?}", KINDS[kind]);
        sandbox.git(&sandbox.dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
        sandbox.git(&bare, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
        let local = sandbox.git(&sandbox.dir, &["rev-parse", "chant/lifecycle"]);
        let remote = sandbox.git(&bare, &["rev-parse", "chant/lifecycle"]);
        assert_eq!(local, remote, "trial {n}: the remote has the clone's ledger after the next write");

        // The facts still decide.
        match kind {
            0 => {
                let next = sandbox.project(&["run", "site-release"], &vars);
                assert!([0, 3].contains(&next.code), "trial {n}: {}", next.all());
                if next.code == 0 {
                    figures.approvals_landed += 1;
                }
            }
            1 => {
                if let Some(doc) = baseline(&sandbox, n) {
                    let accepted = doc["accepted"].as_array().map(Vec::len).unwrap_or_default();
                    assert!(accepted >= 1, "trial {n}: a baseline with nothing accepted: {doc}");
                    figures.baselines_landed += 1;
                }
            }
            _ => {}
        }
    }
    eprintln!(
        "faults_facts: trials {:?} of {KINDS:?}, killed mid-work {:?}, approvals that landed and opened the gate {}, baselines that landed whole {}, 0 torn lines, 0 lost records, fsck clean in the clone and the remote; leftover locks ({}), each named with its fix: {:?}",
        figures.trials,
        figures.killed,
        figures.approvals_landed,
        figures.baselines_landed,
        figures.locks.len(),
        figures.locks
    );
    figures
}

#[test]
fn kill_9_during_approvals_baselines_and_pushes_tears_nothing_and_loses_nothing() {
    let figures = campaign(2);
    assert_eq!(figures.trials, [2, 2, 2]);
}

#[test]
#[ignore = "the campaign: CHANT_FAULT_TRIALS (default 100) kill -9 trials of each kind take minutes; run with --ignored"]
fn kill_9_facts_campaign() {
    let trials = std::env::var("CHANT_FAULT_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let figures = campaign(trials);
    assert!(figures.killed.iter().all(|k| *k > 0), "some kind of victim was never killed mid-work: {figures:?}");
}

/// Found by the campaign: a fetch killed mid-way leaves the lock of a remote-tracking lease ref
/// (`refs/chant/lease-remote/<op>.lock`); git's `cannot lock ref` was passed on raw (a release's
/// warning, no fix). Once stale, the next run of the op names it with its fix.
#[test]
fn a_stale_lock_on_a_remote_tracking_lease_ref_is_named_with_its_fix() {
    let (sandbox, _bare) = shared();
    let (now, later) = (at(0), at(1));
    let (now, later) = ([("CHANT_NOW", now.as_str())], [("CHANT_NOW", later.as_str())]);
    sandbox.project(&["run", "site-apply"], &now).code(0);
    let lock = sandbox.dir.join(".git/refs/chant/lease-remote/site-apply.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let file = std::fs::File::create(&lock).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    // The acquire or, when it did not need the copy, the release meets it.
    let out = sandbox.project(&["run", "site-apply"], &now);
    assert!(out.stderr.contains(&format!("rm {}", lock.display())), "{}", out.all());
    std::fs::remove_file(&lock).unwrap();
    // A lease the release could not give back lapses with its TTL.
    sandbox.project(&["run", "site-apply"], &later).code(0);
}
