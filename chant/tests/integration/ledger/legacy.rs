//! The original's single files (`<env>/converge.jsonl`, `_gates/<op>.jsonl`,
//! `<env>/runs__<op>.jsonl`) are read as history, before the shards, and never written.

use std::path::Path;
use std::time::Duration;

use chant::git::SharedRepo;
use chant::ledger::{BRANCH, ShardKey};

use super::support::{converge, git, local_config, open, project, record};

/// Writes `files` onto the ledger branch in one commit, as the original (or a hand edit) would,
/// through the git layer's primitives.
pub(crate) fn commit_files(dir: &Path, files: &[(&str, &str)]) {
    let repo = SharedRepo::discover(dir, Duration::from_millis(100)).unwrap().local();
    let tip = repo.read_ref(BRANCH).unwrap();
    let root = tip.map(|tip| repo.commit_info(tip).unwrap().tree);
    let blobs: Vec<(String, _)> =
        files.iter().map(|(path, content)| (path.to_string(), repo.write_blob(content.as_bytes()).unwrap())).collect();
    let tree = repo.edit_tree(root, &blobs).unwrap();
    let parents: Vec<_> = tip.into_iter().collect();
    let commit = repo.write_commit(tree, &parents, "Converge tick record\n", jiff::Timestamp::now()).unwrap();
    repo.update_ref(BRANCH, commit, tip, "test fixture").unwrap();
}

#[test]
fn the_shared_converge_file_is_read_per_op_before_the_shards_and_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    // No trailing newline, as the original wrote; another op's line; a line naming no op; garbage.
    let legacy = [
        record("tick", "old", 0),
        record("other-op", "old", 0),
        r#"{"version":1}"#.to_owned(),
        record("tick", "old", 1),
        "garbage".to_owned(),
    ]
    .join("\n");
    commit_files(&dir, &[("staging/converge.jsonl", &legacy)]);
    let before = git(&dir, &["rev-parse", &format!("{BRANCH}:staging/converge.jsonl")]);

    let ledger = open(&dir, local_config());
    let key = converge("tick");
    let latest = ledger.latest(&key).unwrap();
    assert_eq!(latest.record.as_ref().unwrap().value["n"], 1, "the newest record comes from history");
    assert_eq!(latest.record.as_ref().unwrap().seq, None);
    assert_eq!(latest.unreadable.len(), 1, "the garbage line after it");

    let receipt = ledger.append(&key, &record("tick", "new", 0)).unwrap();
    assert_eq!(receipt.seq, 0, "sequence numbers start with the shards");
    assert_eq!(git(&dir, &["rev-parse", &format!("{BRANCH}:staging/converge.jsonl")]), before, "never written");

    let records = ledger.read(&key).unwrap();
    let got: Vec<(String, u64)> = records
        .records
        .iter()
        .map(|r| (r.value["writer"].as_str().unwrap().to_owned(), r.value["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, [("old".to_owned(), 0), ("old".to_owned(), 1), ("new".to_owned(), 0)]);
    assert_eq!((records.records[1].path.as_str(), records.records[1].line), ("staging/converge.jsonl", 4));
    let reasons: Vec<(usize, &str)> = records.unreadable.iter().map(|u| (u.line, u.reason.as_str())).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons[0].0, 3);
    assert!(reasons[0].1.contains("no string `op`"));
    assert_eq!(reasons[1].0, 5);
    assert!(reasons[1].1.starts_with("not JSON"));

    let other = ledger.read(&converge("other-op")).unwrap();
    assert_eq!(other.records.len(), 1);
}

#[test]
fn gate_and_run_files_are_read_as_history_with_the_member_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let pending = r#"{"env":"staging","gate":"approve","kind":"pending","op":"deploy","version":1}"#;
    let resolution = r#"{"gate":"approve","op":"deploy","resolvedBy":"ann","version":1}"#;
    commit_files(
        &dir,
        &[
            ("_members/web/_gates/deploy.jsonl", pending),
            ("_members/web/staging/runs__deploy.jsonl", "{\"id\":\"r1\"}\n{\"id\":\"r2\"}\n"),
        ],
    );
    let ledger = open(&dir, local_config());
    let gate = ShardKey::gate(Some("web"), "deploy").unwrap();
    ledger.append(&gate, resolution).unwrap();
    let facts = ledger.read(&gate).unwrap();
    let kinds: Vec<_> = facts.records.iter().map(|r| r.value.get("resolvedBy").is_some()).collect();
    assert_eq!(kinds, [false, true], "the pending fact (history) precedes the resolution");
    assert_eq!(facts.records[1].path, "_members/web/_gates/deploy/0/0.jsonl");

    let runs = ShardKey::run(Some("web"), Some("staging"), "deploy").unwrap();
    let ids: Vec<_> = ledger.read(&runs).unwrap().records.iter().map(|r| r.value["id"].clone()).collect();
    assert_eq!(ids, ["r1", "r2"]);
    assert_eq!(ledger.latest(&runs).unwrap().record.unwrap().value["id"], "r2");
    assert!(ledger.read(&ShardKey::gate(None, "deploy").unwrap()).unwrap().records.is_empty(), "flat is another key");
}
