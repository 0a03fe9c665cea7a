//! The git layer's generic primitives that the lease builds on: a reference pointing directly at
//! a blob, moved only by compare-and-swap, with a lost race and a held lock told apart, and pushed
//! and fetched through the git binary with a lease.

use std::time::Duration;

use chant::git::cmd::{Fetched, Git, Pushed};
use chant::git::porcelain::PushRefusal;
use chant::git::{Error, SharedRepo};

use super::support::{bare, git, hermetic_env, project};

const LEASE: &str = "refs/chant/lease/staging-converge";

#[test]
fn a_blob_ref_moves_only_by_compare_and_swap() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let repo = SharedRepo::discover(&dir, Duration::ZERO).unwrap().local();
    let first = repo.write_blob(br#"{"holder":"a","token":1}"#).unwrap();
    let second = repo.write_blob(br#"{"holder":"b","token":2}"#).unwrap();

    assert_eq!(repo.read_ref(LEASE).unwrap(), None);
    repo.update_ref(LEASE, first, None, "acquire").unwrap();
    assert_eq!(repo.read_ref(LEASE).unwrap(), Some(first));
    assert_eq!(repo.read_blob(first).unwrap(), br#"{"holder":"a","token":1}"#);
    assert_eq!(git(&dir, &["cat-file", "-t", LEASE]).trim(), "blob");

    match repo.update_ref(LEASE, second, None, "acquire").unwrap_err() {
        Error::RefConflict { name, expected: None, actual } => {
            assert_eq!((name.as_str(), actual), (LEASE, Some(first)));
        }
        other => panic!("{other}"),
    }
    match repo.update_ref(LEASE, second, Some(second), "renew").unwrap_err() {
        Error::RefConflict { expected, actual, .. } => assert_eq!((expected, actual), (Some(second), Some(first))),
        other => panic!("{other}"),
    }
    repo.update_ref(LEASE, second, Some(first), "take over").unwrap();
    assert!(matches!(repo.delete_ref(LEASE, first), Err(Error::RefConflict { .. })));

    // Packed, the ref reads and moves the same way.
    git(&dir, &["pack-refs", "--all"]);
    assert_eq!(repo.read_ref(LEASE).unwrap(), Some(second));
    repo.update_ref(LEASE, first, Some(second), "renew").unwrap();
    repo.delete_ref(LEASE, first).unwrap();
    assert_eq!(repo.read_ref(LEASE).unwrap(), None);
    assert!(matches!(
        repo.update_ref(LEASE, first, Some(second), "renew"),
        Err(Error::RefConflict { actual: None, .. })
    ));
}

#[test]
fn a_held_lock_is_not_a_lost_race_and_carries_its_path_and_age() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let repo = SharedRepo::discover(&dir, Duration::ZERO).unwrap().local();
    let blob = repo.write_blob(b"{}").unwrap();
    let lock = dir.join(".git/refs/chant/lease/staging-converge.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    match repo.update_ref(LEASE, blob, None, "acquire").unwrap_err() {
        Error::RefLocked { name, lock_path, age } => {
            assert_eq!((name.as_str(), lock_path), (LEASE, lock.clone()));
            assert!(age.unwrap() < Duration::from_secs(10), "a young lock");
        }
        other => panic!("{other}"),
    }
    std::fs::remove_file(&lock).unwrap();
    repo.update_ref(LEASE, blob, None, "acquire").unwrap();
}

#[test]
fn a_blob_ref_is_pushed_with_a_lease_and_fetched_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let remote = bare(tmp.path(), "remote.git");
    let repo = SharedRepo::discover(&dir, Duration::from_millis(100)).unwrap().local();
    let git_bin = Git::new(repo.git_dir(), Duration::from_secs(60)).with_env(hermetic_env());
    let url = remote.to_str().unwrap();
    let first = repo.write_blob(br#"{"holder":"a"}"#).unwrap();
    let second = repo.write_blob(br#"{"holder":"b"}"#).unwrap();

    assert_eq!(git_bin.push_with_lease(url, first, LEASE, None).unwrap(), Pushed::Landed);
    assert_eq!(git_bin.push_with_lease(url, second, LEASE, None).unwrap(), Pushed::Refused(PushRefusal::Moved));
    assert_eq!(git_bin.push_with_lease(url, second, LEASE, Some(second)).unwrap(), Pushed::Refused(PushRefusal::Moved));
    assert_eq!(git_bin.push_with_lease(url, second, LEASE, Some(first)).unwrap(), Pushed::Landed);
    assert_eq!(git(&remote, &["cat-file", "-p", LEASE]), r#"{"holder":"b"}"#);

    let tracking = "refs/chant/lease-remote/staging-converge";
    assert_eq!(git_bin.fetch_ref(url, LEASE, tracking).unwrap(), Fetched::Updated);
    assert_eq!(repo.read_ref(tracking).unwrap(), Some(second));
    assert_eq!(repo.read_ref(LEASE).unwrap(), None, "the local ref is never overwritten by a fetch");
    assert_eq!(git_bin.fetch_ref(url, "refs/chant/lease/none", tracking).unwrap(), Fetched::Missing);
    match git_bin.fetch_ref(tmp.path().join("nowhere").to_str().unwrap(), LEASE, tracking).unwrap() {
        Fetched::Failed(text) => assert!(text.starts_with("fatal:"), "{text}"),
        other => panic!("{other:?}"),
    }
}
