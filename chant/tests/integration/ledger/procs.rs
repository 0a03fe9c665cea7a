//! Separate processes appending to one repository: the test binary re-runs itself as a worker.

use std::path::Path;
use std::process::{Command, Stdio};

use super::support::{converge, git, local_config, open, project, record, written};

/// Set for a worker run: `<repo dir>|<writer>|<op>|<count>`.
const WORKER: &str = "CHANT_LEDGER_TEST_WORKER";
/// This file's worker test, as the test harness names it.
const WORKER_TEST: &str = "ledger::procs::worker_appends_when_asked";

/// Does nothing in a normal run; appends records when started as a worker.
#[test]
fn worker_appends_when_asked() {
    let Ok(task) = std::env::var(WORKER) else { return };
    let [dir, writer, op, count]: [&str; 4] = task.split('|').collect::<Vec<_>>().try_into().unwrap();
    let ledger = open(Path::new(dir), local_config());
    for n in 0..count.parse().unwrap() {
        ledger.append(&converge(op), &record(op, writer, n)).unwrap();
    }
}

fn spawn_worker(dir: &Path, writer: &str, op: &str, count: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([WORKER_TEST, "--exact", "--test-threads=1", "--quiet"])
        .env(WORKER, format!("{}|{writer}|{op}|{count}", dir.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn two_processes_appending_200_records_each_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let count = 200;
    // p1 and p2 write one shared key at once; the same pair of processes also proves that
    // writers to different shards both land, through p1's second run below.
    let workers = [spawn_worker(&dir, "p1", "shared", count), spawn_worker(&dir, "p2", "shared", count)];
    for mut worker in workers {
        assert!(worker.wait().unwrap().success());
    }
    let records = written(&open(&dir, local_config()), &converge("shared"));
    assert_eq!(records.len(), 2 * count);
    for writer in ["p1", "p2"] {
        let mine: Vec<u64> = records.iter().filter(|(w, _)| w == writer).map(|(_, n)| *n).collect();
        assert_eq!(mine, (0..count as u64).collect::<Vec<_>>(), "{writer}: every record once, in order");
    }

    let workers = [spawn_worker(&dir, "p1", "left", 50), spawn_worker(&dir, "p2", "right", 50)];
    for mut worker in workers {
        assert!(worker.wait().unwrap().success());
    }
    let ledger = open(&dir, local_config());
    assert_eq!(written(&ledger, &converge("left")).len(), 50);
    assert_eq!(written(&ledger, &converge("right")).len(), 50);
    assert_eq!(git(&dir, &["rev-list", "--count", chant::ledger::BRANCH]).trim(), (2 * count + 100).to_string());
}
