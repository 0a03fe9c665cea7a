//! The ledger with a remote: a real bare repository and several clones.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chant::ledger::{BRANCH, Ledger, LedgerConfig, PushStatus};

use super::support::{bare, converge, git, local_config, open, project, record, remote_config, written};

fn remote_records(remote: &Path, path: &str) -> Vec<String> {
    git(remote, &["show", &format!("{BRANCH}:{path}")]).lines().map(str::to_owned).collect()
}

fn roots(dir: &Path) -> usize {
    git(dir, &["rev-list", "--max-parents=0", BRANCH]).lines().count()
}

/// A bare remote and `n` clones of a project, each with `origin` pointing at the remote.
fn estate(tmp: &Path, clones: &[&str]) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let remote = bare(tmp, "remote.git");
    let dirs = clones
        .iter()
        .map(|name| {
            let dir = project(tmp, name);
            git(&dir, &["remote", "add", "origin", remote.to_str().unwrap()]);
            dir
        })
        .collect();
    (remote, dirs)
}

const SHARD: &str = "staging/op/converge/0/0.jsonl";

#[test]
fn the_first_append_creates_the_branch_on_both_sides() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a"]);
    let receipt = open(&dirs[0], remote_config("origin")).append(&converge("op"), &record("op", "a", 0)).unwrap();
    assert_eq!(receipt.push, PushStatus::Pushed { remote: "origin".to_owned() });
    assert!(receipt.pushed() && receipt.warnings.is_empty());
    assert_eq!(git(&remote, &["rev-parse", BRANCH]).trim(), receipt.commit.to_string());
    assert_eq!(remote_records(&remote, SHARD), [record("op", "a", 0)]);
}

#[test]
fn a_fresh_clone_fetches_history_before_its_first_append_and_a_clone_behind_fast_forwards() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a", "b"]);
    let (a, b) = (open(&dirs[0], remote_config("origin")), open(&dirs[1], remote_config("origin")));
    for n in 0..3 {
        assert!(a.append(&converge("op"), &record("op", "a", n)).unwrap().pushed());
    }
    assert_eq!(b.tip().unwrap(), None, "b never fetched the branch");
    assert!(b.append(&converge("op"), &record("op", "b", 0)).unwrap().pushed());
    assert_eq!(roots(&remote), 1, "no parentless commit over history");
    assert_eq!(remote_records(&remote, SHARD).len(), 4);

    // a is now behind: its next append fast-forwards first.
    let receipt = a.append(&converge("op"), &record("op", "a", 3)).unwrap();
    assert!(receipt.pushed());
    assert_eq!(receipt.seq, 4);
    let order: Vec<_> = written(&a, &converge("op")).into_iter().map(|(w, n)| format!("{w}{n}")).collect();
    assert_eq!(order, ["a0", "a1", "a2", "b0", "a3"]);
    assert_eq!(git(&remote, &["rev-list", "--count", BRANCH]).trim(), "5");
}

#[test]
fn a_diverged_clone_re_appends_its_records_onto_the_remote_tip() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a", "b"]);
    // b records locally, with no remote configured: a parentless local history.
    let b_local = open(&dirs[1], local_config());
    b_local.append(&converge("op"), &record("op", "b", 0)).unwrap();
    b_local.append(&converge("other"), &record("other", "b", 1)).unwrap();
    let a = open(&dirs[0], remote_config("origin"));
    for n in 0..3 {
        a.append(&converge("op"), &record("op", "a", n)).unwrap();
    }

    let b = open(&dirs[1], remote_config("origin"));
    let receipt = b.append(&converge("op"), &record("op", "b", 2)).unwrap();
    assert!(receipt.pushed(), "{:?}", receipt.warnings);
    assert_eq!(receipt.seq, 4, "after a's three records and b's re-appended one");
    assert_eq!(roots(&remote), 1);
    assert_eq!(git(&remote, &["rev-list", "--count", BRANCH]).trim(), "6");
    let order: Vec<_> = written(&b, &converge("op")).into_iter().map(|(w, n)| format!("{w}{n}")).collect();
    assert_eq!(order, ["a0", "a1", "a2", "b0", "b2"]);
    assert_eq!(written(&b, &converge("other")).len(), 1);
    assert_eq!(b.tip().unwrap(), Some(receipt.commit));

    // a sees everything after its next sync, and nothing is duplicated by syncing again.
    assert!(a.sync().unwrap().push == PushStatus::Pushed { remote: "origin".to_owned() });
    assert_eq!(written(&a, &converge("op")).len(), 5);
    b.sync().unwrap();
    assert_eq!(git(&remote, &["rev-list", "--count", BRANCH]).trim(), "6");
}

#[test]
fn a_push_that_cannot_land_is_reported_and_the_record_is_kept_and_pushed_later() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a"]);
    let unreachable = tmp.path().join("missing.git");
    let ledger = open(&dirs[0], remote_config(unreachable.to_str().unwrap()));
    let receipt = ledger.append(&converge("op"), &record("op", "a", 0)).unwrap();
    assert!(!receipt.pushed());
    match &receipt.push {
        PushStatus::NotPushed { reason, .. } => assert!(reason.contains("fetch"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(receipt.warnings.len(), 1);
    assert!(receipt.warnings[0].contains("kept locally"), "{}", receipt.warnings[0]);
    assert_eq!(written(&ledger, &converge("op")).len(), 1);

    let ledger = open(&dirs[0], remote_config("origin"));
    assert!(ledger.append(&converge("op"), &record("op", "a", 1)).unwrap().pushed());
    assert_eq!(remote_records(&remote, SHARD), [record("op", "a", 0), record("op", "a", 1)]);
}

#[test]
fn a_rejected_push_fetches_re_appends_and_pushes_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a", "c"]);
    let a = open(&dirs[0], remote_config("origin"));
    a.append(&converge("op"), &record("op", "a", 0)).unwrap();
    // c prepares a competing record on top of the remote tip and parks it on a side ref.
    let c = open(&dirs[1], remote_config("origin"));
    c.sync().unwrap();
    open(&dirs[1], local_config()).append(&converge("op"), &record("op", "c", 0)).unwrap();
    git(&dirs[1], &["push", "-q", "origin", &format!("{BRANCH}:refs/test/competitor")]);
    // The remote lands the competitor while a's push is in flight, once.
    let hook = remote.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nif [ ! -e \"$GIT_DIR/fired\" ]; then\n  touch \"$GIT_DIR/fired\"\n  \
         env -u GIT_QUARANTINE_PATH git update-ref refs/heads/chant/lifecycle refs/test/competitor\nfi\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let receipt = a.append(&converge("op"), &record("op", "a", 1)).unwrap();
    assert!(remote.join("fired").exists(), "the competing update happened");
    assert!(receipt.pushed(), "{:?}", receipt.warnings);
    assert_eq!(receipt.seq, 2);
    assert_eq!(remote_records(&remote, SHARD), [record("op", "a", 0), record("op", "c", 0), record("op", "a", 1)]);
    assert_eq!(git(&remote, &["rev-parse", BRANCH]).trim(), receipt.commit.to_string());
}

#[test]
fn a_lock_on_the_remote_is_reported_naming_the_remote_and_the_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a"]);
    let a = open(&dirs[0], remote_config("origin"));
    a.append(&converge("op"), &record("op", "a", 0)).unwrap();
    std::fs::write(remote.join("refs/heads/chant/lifecycle.lock"), "").unwrap();
    let receipt = a.append(&converge("op"), &record("op", "a", 1)).unwrap();
    match &receipt.push {
        PushStatus::NotPushed { remote, reason } => {
            assert_eq!(remote, "origin");
            assert!(reason.contains("locked on origin") && reason.contains("lifecycle.lock"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(written(&a, &converge("op")).len(), 2);
}

#[test]
fn two_clones_pushing_to_one_remote_at_once_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a", "b"]);
    let per_clone = 25;
    let config = LedgerConfig { push_attempts: 1000, ..remote_config("origin") };
    std::thread::scope(|scope| {
        for (dir, writer) in dirs.iter().zip(["a", "b"]) {
            let ledger = Ledger::open(dir, config.clone()).unwrap();
            scope.spawn(move || {
                for n in 0..per_clone {
                    let op = if n % 2 == 0 { "shared" } else { writer };
                    let receipt = ledger.append(&converge(op), &record(op, writer, n)).unwrap();
                    assert!(receipt.pushed(), "{:?}", receipt.warnings);
                }
            });
        }
    });
    assert_eq!(git(&remote, &["rev-list", "--count", BRANCH]).trim(), (2 * per_clone).to_string());
    let check = open(&dirs[0], remote_config("origin"));
    check.sync().unwrap();
    let shared = written(&check, &converge("shared"));
    for writer in ["a", "b"] {
        let mine: Vec<u64> = shared.iter().filter(|(w, _)| w == writer).map(|(_, n)| *n).collect();
        assert_eq!(mine, (0..per_clone as u64).step_by(2).collect::<Vec<_>>());
        assert_eq!(written(&check, &converge(writer)).len(), per_clone / 2);
    }
}

#[test]
fn without_a_remote_nothing_is_fetched_or_pushed() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a"]);
    let ledger = open(&dirs[0], local_config());
    let receipt = ledger.append(&converge("op"), &record("op", "a", 0)).unwrap();
    assert_eq!(receipt.push, PushStatus::LocalOnly);
    assert_eq!(ledger.sync().unwrap().push, PushStatus::LocalOnly);
    let output = super::support::git_output(&remote, &["rev-parse", "--verify", "-q", BRANCH]);
    assert!(!output.status.success(), "the remote has no ledger branch");
}

#[test]
fn a_local_commit_chant_did_not_write_is_never_pushed_over_and_the_record_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a", "b"]);
    let a = open(&dirs[0], remote_config("origin"));
    a.append(&converge("op"), &record("op", "a", 0)).unwrap();
    // b has a hand-made commit the remote lacks (the original's writer, or a person).
    super::legacy::commit_files(&dirs[1], &[("staging/converge.jsonl", &record("op", "old", 0))]);
    let b = open(&dirs[1], remote_config("origin"));
    let receipt = b.append(&converge("op"), &record("op", "b", 0)).unwrap();
    match &receipt.push {
        PushStatus::NotPushed { reason, .. } => assert!(reason.contains("chant did not write"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(remote_records(&remote, SHARD), [record("op", "a", 0)], "the remote is untouched");
    let local: Vec<_> = written(&b, &converge("op")).into_iter().map(|(w, _)| w).collect();
    assert_eq!(local, ["old", "b"], "b keeps its history and its record");
}

#[test]
fn sync_pushes_records_the_remote_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, dirs) = estate(tmp.path(), &["a"]);
    open(&dirs[0], local_config()).append(&converge("op"), &record("op", "a", 0)).unwrap();
    let report = open(&dirs[0], remote_config("origin")).sync().unwrap();
    assert_eq!(report.push, PushStatus::Pushed { remote: "origin".to_owned() });
    assert_eq!(git(&remote, &["rev-parse", BRANCH]).trim(), report.tip.unwrap().to_string());
}
