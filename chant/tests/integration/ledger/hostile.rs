//! Ledger content a hand edit (or an attacker with push access) can plant: a shard in the wrong
//! bucket, a shard number past what a sequence number can hold, a line that is not UTF-8. Each is
//! counted unreadable with its path and reason, never read as a record, never the base of an
//! append, and never a panic.

use std::path::Path;
use std::time::Duration;

use chant::git::SharedRepo;
use chant::ledger::BRANCH;

use super::support::{converge, git, local_config, open, project, record};

/// Writes `files` (raw bytes) onto the ledger branch in one commit.
fn plant(dir: &Path, files: &[(&str, &[u8])]) {
    let repo = SharedRepo::discover(dir, Duration::from_millis(100)).unwrap().local();
    let tip = repo.read_ref(BRANCH).unwrap();
    let root = tip.map(|tip| repo.commit_info(tip).unwrap().tree);
    let blobs: Vec<(String, _)> =
        files.iter().map(|(path, content)| (path.to_string(), repo.write_blob(content).unwrap())).collect();
    let tree = repo.edit_tree(root, &blobs).unwrap();
    let parents: Vec<_> = tip.into_iter().collect();
    let commit = repo.write_commit(tree, &parents, "hand edit\n", jiff::Timestamp::now()).unwrap();
    repo.update_ref(BRANCH, commit, tip, "test fixture").unwrap();
}

fn blob_at(dir: &Path, path: &str) -> String {
    git(dir, &["show", &format!("{BRANCH}:{path}")])
}

#[test]
fn a_shard_in_the_wrong_bucket_is_unreadable_and_never_the_base_of_an_append() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    for n in 0..3 {
        ledger.append(&key, &record("op", "real", n)).unwrap();
    }
    let stray = format!("{}\n", record("op", "stray", 99));
    plant(&dir, &[("staging/op/converge/999/5.jsonl", stray.as_bytes())]);

    let latest = ledger.latest(&key).unwrap();
    assert_eq!(latest.record.unwrap().value["writer"], "real", "the stray shard is not the newest");
    let records = ledger.read(&key).unwrap();
    assert_eq!(records.records.len(), 3);
    assert_eq!(records.unreadable.len(), 1, "{:?}", records.unreadable);
    let u = &records.unreadable[0];
    assert_eq!((u.path.as_str(), u.line), ("staging/op/converge/999/5.jsonl", 1));
    assert!(u.reason.contains("misplaced") && u.reason.contains("staging/op/converge/0/5.jsonl"), "{}", u.reason);

    let receipt = ledger.append(&key, &record("op", "real", 3)).unwrap();
    assert_eq!(receipt.seq, 3, "the append follows the real shard");
    assert_eq!(blob_at(&dir, "staging/op/converge/0/0.jsonl").lines().count(), 4);
    assert_eq!(blob_at(&dir, "staging/op/converge/999/5.jsonl"), stray, "the stray shard is left as it was");
    let missing = git_fails(&dir, "staging/op/converge/0/5.jsonl");
    assert!(missing, "nothing was written where the stray shard's number belongs");
    let records = ledger.read(&key).unwrap();
    assert_eq!((records.records.len(), records.unreadable.len()), (4, 1));
}

fn git_fails(dir: &Path, path: &str) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "-e", &format!("{BRANCH}:{path}")])
        .status()
        .map(|s| !s.success())
        .unwrap_or(false)
}

#[test]
fn a_shard_number_past_the_largest_is_unreadable_and_panics_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "real", 0)).unwrap();
    let line = format!("{}\n", record("op", "huge", 1));
    let max = u64::MAX.to_string();
    let in_bucket_zero = format!("staging/op/converge/0/{max}.jsonl");
    let in_its_bucket = format!("staging/op/converge/{}/{max}.jsonl", u64::MAX / 64);
    plant(&dir, &[(in_bucket_zero.as_str(), line.as_bytes()), (in_its_bucket.as_str(), line.as_bytes())]);

    let latest = ledger.latest(&key).unwrap();
    assert_eq!(latest.record.unwrap().value["writer"], "real");
    let records = ledger.read(&key).unwrap();
    assert_eq!(records.records.len(), 1);
    assert_eq!(records.unreadable.len(), 2, "{:?}", records.unreadable);
    assert!(records.unreadable.iter().all(|u| u.reason.contains("past the largest")), "{:?}", records.unreadable);
    let receipt = ledger.append(&key, &record("op", "real", 1)).unwrap();
    assert_eq!(receipt.seq, 1);
}

#[test]
fn a_line_that_is_not_utf8_is_unreadable_never_a_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "real", 0)).unwrap();
    // A record whose string holds an invalid byte: lossy decoding would make it a valid record.
    let mut content = format!("{}\n", record("op", "real", 0)).into_bytes();
    content.extend_from_slice(b"{\"n\":1,\"op\":\"op\",\"version\":1,\"writer\":\"bad\xff\"}\n");
    plant(&dir, &[("staging/op/converge/0/0.jsonl", &content)]);

    let latest = ledger.latest(&key).unwrap();
    assert_eq!(latest.record.unwrap().value["writer"], "real");
    assert_eq!(latest.unreadable.len(), 1);
    assert!(latest.unreadable[0].reason.contains("UTF-8"), "{}", latest.unreadable[0].reason);
    let records = ledger.read(&key).unwrap();
    assert_eq!((records.records.len(), records.unreadable.len()), (1, 1));
}

#[test]
fn a_newest_tick_line_of_defaults_is_unreadable_not_the_last_tick() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    let real = r#"{"env":"staging","op":"op","timestamp":"2026-01-01T00:00:00.000Z","version":1}"#;
    ledger.append(&key, real).unwrap();
    for planted in ["{}", r#"{"op":"op","env":"staging"}"#, r#"{"env":"","op":"op","timestamp":"t"}"#] {
        ledger.append(&key, planted).unwrap();
        let latest = ledger.latest_typed::<chant::tick::TickRecord>(&key).unwrap();
        let record = latest.record.expect("the real tick is still the newest");
        assert_eq!(record.record.timestamp, "2026-01-01T00:00:00.000Z", "{planted}");
        assert!(
            latest.unreadable.iter().any(|u| u.text == planted && u.reason.starts_with("not a tick record: no `")),
            "{planted}: {:?}",
            latest.unreadable
        );
    }
}
