//! The ledger in one repository: layout, ordering, CAS appends from many threads, refusals,
//! unreadable lines, locks, gc, and that HEAD, the index and the work tree stay untouched.

use std::time::{Duration, SystemTime};

use chant::ledger::{BRANCH, Error, Ledger, PushStatus, RECORDS_PER_SHARD, ShardKey};

use super::support::{converge, git, local_config, open, project, record, show_lines, written};

#[test]
fn first_append_creates_an_orphan_branch_and_leaves_head_index_and_work_tree_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    std::fs::write(dir.join("README.md"), "edited, not staged\n").unwrap();
    std::fs::write(dir.join("staged.txt"), "staged\n").unwrap();
    git(&dir, &["add", "staged.txt"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    let status = git(&dir, &["status", "--porcelain"]);
    let index = std::fs::read(dir.join(".git/index")).unwrap();

    let ledger = open(&dir, local_config());
    let key = converge("staging-converge");
    for n in 0..3 {
        let receipt = ledger.append(&key, &record("staging-converge", "a", n)).unwrap();
        assert_eq!(receipt.seq, n as u64);
        assert_eq!(receipt.path, "staging/staging-converge/converge/0/0.jsonl");
        assert_eq!(receipt.push, PushStatus::LocalOnly);
        assert!(!receipt.pushed());
    }

    assert_eq!(git(&dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&dir, &["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
    assert_eq!(git(&dir, &["status", "--porcelain"]), status);
    assert_eq!(std::fs::read(dir.join(".git/index")).unwrap(), index);
    assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "edited, not staged\n");

    let roots = git(&dir, &["rev-list", "--max-parents=0", BRANCH]);
    assert_eq!(roots.lines().count(), 1, "one orphan root");
    assert_eq!(git(&dir, &["rev-list", "--count", BRANCH]).trim(), "3", "one commit per append");
    let merge_base = super::support::git_output(&dir, &["merge-base", "--all", "HEAD", BRANCH]);
    assert!(merge_base.stdout.is_empty(), "no shared history with main");
    let lines = show_lines(&dir, &format!("{BRANCH}:staging/staging-converge/converge/0/0.jsonl"));
    assert_eq!(lines, (0..3).map(|n| record("staging-converge", "a", n)).collect::<Vec<_>>());
    git(&dir, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn shards_hold_64_records_and_reads_come_back_in_ledger_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = ShardKey::run(Some("platform"), Some("staging"), "apply").unwrap();
    let total = 2 * RECORDS_PER_SHARD as usize + 2;
    let mut paths = Vec::new();
    for n in 0..total {
        paths.push(ledger.append(&key, &record("apply", "a", n)).unwrap().path);
    }
    assert_eq!(paths[0], "_members/platform/staging/apply/runs/0/0.jsonl");
    assert_eq!(paths[64], "_members/platform/staging/apply/runs/0/1.jsonl");
    assert_eq!(paths[total - 1], "_members/platform/staging/apply/runs/0/2.jsonl");

    let records = ledger.read(&key).unwrap();
    assert_eq!(records.records.len(), total);
    for (n, r) in records.records.iter().enumerate() {
        assert_eq!(r.value["n"], n);
        assert_eq!(r.seq, Some(n as u64));
    }
    assert_eq!(records.tip, ledger.tip().unwrap());

    let latest = ledger.latest(&key).unwrap();
    let newest = latest.record.unwrap();
    assert_eq!(newest.value["n"], total - 1);
    assert_eq!((newest.path.as_str(), newest.line), ("_members/platform/staging/apply/runs/0/2.jsonl", 2));
    assert!(latest.unreadable.is_empty());

    assert!(ledger.read(&converge("other")).unwrap().records.is_empty());
    assert!(ledger.latest(&converge("other")).unwrap().record.is_none());
}

#[test]
fn concurrent_threads_to_different_and_the_same_shards_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let per_thread = 40;
    let writers = ["a", "b", "c", "d"];
    std::thread::scope(|scope| {
        for (i, writer) in writers.iter().enumerate() {
            let ledger = ledger.clone();
            scope.spawn(move || {
                // a and b share one key; c and d have their own.
                let key = converge(if i < 2 { "shared" } else { writer });
                for n in 0..per_thread {
                    ledger.append(&key, &record("x", writer, n)).unwrap();
                }
            });
        }
    });
    let shared = written(&ledger, &converge("shared"));
    assert_eq!(shared.len(), 2 * per_thread);
    for writer in ["a", "b"] {
        let mine: Vec<u64> = shared.iter().filter(|(w, _)| w == writer).map(|(_, n)| *n).collect();
        assert_eq!(mine, (0..per_thread as u64).collect::<Vec<_>>(), "each writer's records once, in its order");
    }
    for writer in ["c", "d"] {
        assert_eq!(written(&ledger, &converge(writer)).len(), per_thread);
    }
    let commits = git(&dir, &["rev-list", "--count", BRANCH]);
    assert_eq!(commits.trim(), (writers.len() * per_thread).to_string());
}

#[test]
fn a_branch_named_chant_is_refused_naming_the_clash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    git(&dir, &["branch", "chant"]);
    let err = Ledger::open(&dir, local_config()).err().unwrap();
    assert!(matches!(err, Error::BranchClash));
    let text = err.to_string();
    assert!(text.contains("refs/heads/chant") && text.contains("refs/heads/chant/lifecycle"), "{text}");
}

#[test]
fn records_that_are_not_one_json_object_are_refused_and_nothing_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "a", 0)).unwrap();
    let tip = ledger.tip().unwrap();
    for bad in ["not json", "{\"a\":1}\n{\"b\":2}", "[1,2]", ""] {
        let err = ledger.append(&key, bad).unwrap_err();
        assert!(matches!(err, Error::InvalidRecord { .. }), "{bad:?}: {err}");
    }
    assert_eq!(ledger.tip().unwrap(), tip);
    assert!(ShardKey::converge(None, "../etc", "op").is_err());
}

#[test]
fn unreadable_lines_are_counted_and_returned_never_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "a", 0)).unwrap();
    // A hand edit appends a broken line to the shard.
    let path = "staging/op/converge/0/0.jsonl";
    let content = format!("{}\n{{\"truncated\":\n", record("op", "a", 0));
    super::legacy::commit_files(&dir, &[(path, content.as_str())]);

    let latest = ledger.latest(&key).unwrap();
    assert_eq!(latest.record.unwrap().value["n"], 0);
    assert_eq!(latest.unreadable.len(), 1);
    assert_eq!((latest.unreadable[0].path.as_str(), latest.unreadable[0].line), (path, 2));
    assert!(latest.unreadable[0].reason.starts_with("not JSON"), "{}", latest.unreadable[0].reason);

    let receipt = ledger.append(&key, &record("op", "a", 1)).unwrap();
    assert_eq!(receipt.seq, 2, "the broken line keeps its slot");
    let records = ledger.read(&key).unwrap();
    assert_eq!(records.records.len(), 2);
    assert_eq!(records.unreadable.len(), 1);
    assert_eq!(records.unreadable[0].text, "{\"truncated\":");
}

#[test]
fn a_stale_lock_on_the_branch_ref_is_an_error_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "a", 0)).unwrap();
    let tip = ledger.tip().unwrap();
    let lock = dir.join(".git/refs/heads/chant/lifecycle.lock");
    let file = std::fs::File::create(&lock).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();

    let err = ledger.append(&key, &record("op", "a", 1)).unwrap_err();
    match &err {
        Error::StaleLock { path, age, .. } => {
            assert_eq!(path, &lock);
            assert!(*age >= Duration::from_secs(50));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains(&format!("rm {}", lock.display())), "{err}");
    assert_eq!(ledger.tip().unwrap(), tip);

    std::fs::remove_file(&lock).unwrap();
    assert_eq!(ledger.append(&key, &record("op", "a", 1)).unwrap().seq, 1);
}

#[test]
fn a_lock_a_live_process_might_hold_is_waited_on_for_a_bounded_time_then_named_with_its_rm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "a", 0)).unwrap();
    let tip = ledger.tip().unwrap();
    // Another chant process of the repository is alive (its liveness marker names a real,
    // running process), so the old lock may be its own: not provably stale.
    let mut other = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = other.id();
    let started = chant::process::identity::start_time(i32::try_from(pid).unwrap()).unwrap();
    std::fs::create_dir_all(dir.join(".git/chant/live")).unwrap();
    std::fs::write(dir.join(format!(".git/chant/live/{pid}")), format!("{pid} {started}\n")).unwrap();
    let lock = dir.join(".git/refs/heads/chant/lifecycle.lock");
    let file = std::fs::File::create(&lock).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();

    // The wait ends (the bound is chant::ledger::LOCK_WAIT), with the lock file, its rm and who
    // is alive, and nothing is written.
    let err = ledger.append(&key, &record("op", "a", 1)).unwrap_err();
    other.kill().unwrap();
    other.wait().unwrap();
    let Error::Locked(wait) = &err else { panic!("{err}") };
    assert_eq!(wait.path, lock);
    assert!(wait.waited >= chant::ledger::LOCK_WAIT, "{:?}", wait.waited);
    assert_eq!(wait.alive, [pid]);
    let said = err.to_string();
    assert!(said.contains(&format!("rm {}", lock.display())) && said.contains(&pid.to_string()), "{said}");
    assert_eq!(ledger.tip().unwrap(), tip, "the branch did not move");

    std::fs::remove_file(&lock).unwrap();
    assert_eq!(ledger.append(&key, &record("op", "a", 1)).unwrap().seq, 1);
}

#[test]
fn a_record_that_cannot_be_written_is_kept_and_appended_first_by_the_next_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("op");
    ledger.append(&key, &record("op", "a", 0)).unwrap();
    assert!(ledger.writable().is_ok());
    let tip = ledger.tip().unwrap();
    let lock = dir.join(".git/refs/heads/chant/lifecycle.lock");
    let file = std::fs::File::create(&lock).unwrap();
    // A young lock is another writer at work, not a reason to stop.
    assert!(ledger.writable().is_ok());
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    assert!(matches!(ledger.writable(), Err(Error::StaleLock { path, .. }) if path == lock));

    // The record of something that happened is kept, and the error says where and why.
    let err = ledger.append_or_keep(&key, &record("op", "a", 1)).unwrap_err();
    let Error::Kept { path, source } = &err else { panic!("{err}") };
    assert!(matches!(**source, Error::StaleLock { .. }), "{source}");
    assert!(path.starts_with(dir.join(".git/chant/pending")), "{}", path.display());
    let said = chant::error::chain(&err);
    assert!(said.contains(&path.display().to_string()) && said.contains(&format!("rm {}", lock.display())), "{said}");
    assert_eq!(ledger.tip().unwrap(), tip, "the branch did not move");
    // A plain append is not kept: its caller decides.
    assert!(matches!(ledger.append(&key, &record("op", "a", 9)), Err(Error::StaleLock { .. })));

    // The next append that succeeds writes the kept record first, then its own, and says so.
    std::fs::remove_file(&lock).unwrap();
    let receipt = ledger.append(&key, &record("op", "a", 2)).unwrap();
    assert_eq!(receipt.seq, 2);
    assert!(receipt.warnings.iter().any(|w| w.contains("appended the record kept in")), "{:?}", receipt.warnings);
    let lines: Vec<String> = ledger.read(&key).unwrap().records.iter().map(|r| r.value.to_string()).collect();
    let want: Vec<String> = (0..3).map(|n| record("op", "a", n)).collect();
    assert_eq!(lines, want);
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.join(".git/chant/pending")).unwrap().count(), 0);
}

#[test]
fn gc_auto_runs_through_the_git_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let trace = tmp.path().join("trace.log");
    let mut config = chant::ledger::LedgerConfig { gc_every: 1, ..local_config() };
    config.git_env.push(("GIT_TRACE".into(), trace.clone().into()));
    let ledger = open(&dir, config);
    let key = converge("op");
    for n in 0..3 {
        let receipt = ledger.append(&key, &record("op", "a", n)).unwrap();
        assert!(receipt.warnings.is_empty(), "{:?}", receipt.warnings);
    }
    let traced = std::fs::read_to_string(&trace).unwrap();
    let runs = traced.lines().filter(|l| l.contains("built-in: git") && l.contains("gc --auto --quiet")).count();
    assert_eq!(runs, 3, "{traced}");
    assert_eq!(written(&ledger, &key).len(), 3);
}

/// An append writes its objects as one pack, and each thread's handle merges its packs every 16
/// (removing the small ones); `git gc --auto` after every append here rolls the packs up with
/// `repack --geometric=2` (on a thread of its own, while the appends go on). Two threads appending at once to two keys and one key in turn: every
/// record reads back (through this ledger and a fresh one), `git fsck --strict` is clean before
/// and after a full `git gc --prune=now`, no loose object is left by an append and the packs stay
/// few.
#[test]
fn many_appends_from_two_threads_with_gc_leave_fsck_clean_and_every_record_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, chant::ledger::LedgerConfig { gc_every: 1, ..local_config() });
    let shared = converge("shared");
    let per_thread = 70;
    std::thread::scope(|scope| {
        for writer in ["a", "b"] {
            let ledger = ledger.clone();
            let shared = shared.clone();
            scope.spawn(move || {
                let own = converge(&format!("op-{writer}"));
                for n in 0..per_thread {
                    let key = if n % 2 == 0 { &own } else { &shared };
                    let receipt = ledger.append(key, &record("op", writer, n)).unwrap();
                    assert!(receipt.warnings.is_empty(), "{:?}", receipt.warnings);
                }
            });
        }
    });
    let packs = || packs_in(&dir);
    assert!(Ledger::wait_for_roll_up(Duration::from_secs(120)), "the background roll-up ends");
    let loose = git(&dir, &["count-objects", "-v"]);
    assert!(loose.contains("\ncount: 0\n") || loose.starts_with("count: 0\n"), "{loose}");
    assert!(loose.contains("garbage: 0"), "no half-written pack left: {loose}");
    assert!(packs() <= 12, "{} packs", packs());
    git(&dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
    let check = |ledger: &Ledger| {
        for writer in ["a", "b"] {
            let own: Vec<(String, u64)> = (0..per_thread).step_by(2).map(|n| (writer.to_owned(), n as u64)).collect();
            assert_eq!(written(ledger, &converge(&format!("op-{writer}"))), own);
        }
        let mut shared_records = written(ledger, &shared);
        shared_records.sort();
        let mut want: Vec<(String, u64)> = ["a", "b"]
            .iter()
            .flat_map(|w| (1..per_thread).step_by(2).map(move |n| ((*w).to_owned(), n as u64)))
            .collect();
        want.sort();
        assert_eq!(shared_records, want);
    };
    check(&ledger);
    git(&dir, &["gc", "--quiet", "--prune=now"]);
    git(&dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
    check(&open(&dir, local_config()));
    assert_eq!(packs(), 1, "a full gc leaves one pack");
}

/// A process that appends once (a tick run by cron) leaves a pack that nobody merges. With no gc
/// due, an append rolls the packs up once they pass 16 (beside its work) and before it returns
/// once they pass 32: 80 appends, each by a ledger opened on a thread of its own (a handle per
/// thread, as each process has one), never leave more than 48 packs and end with at most 24
/// (they were 80 before: one each), `git fsck --strict` clean and every record readable.
#[test]
fn one_shot_appends_keep_the_packs_few_without_a_gc() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let key = converge("op");
    let packs = || packs_in(&dir);
    let mut most = 0;
    for n in 0..80 {
        let (dir, key) = (dir.clone(), key.clone());
        // A gc is due for one commit in 65,536 at most: none here.
        let config = chant::ledger::LedgerConfig { gc_every: u32::MAX, ..local_config() };
        let receipt =
            std::thread::spawn(move || open(&dir, config).append(&key, &record("op", "a", n)).unwrap()).join().unwrap();
        assert!(receipt.warnings.is_empty(), "{:?}", receipt.warnings);
        most = most.max(packs());
    }
    assert!(Ledger::wait_for_roll_up(Duration::from_secs(120)), "the background roll-up ends");
    assert!(most <= 48, "{most} packs at most");
    assert!(packs() <= 24, "{} packs at the end", packs());
    git(&dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
    let want: Vec<(String, u64)> = (0..80).map(|n| ("a".to_owned(), n)).collect();
    assert_eq!(written(&open(&dir, local_config()), &key), want);
}

#[test]
fn keys_lists_every_kind_member_and_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    super::legacy::commit_files(
        &dir,
        &[
            ("staging/converge.jsonl", "{\"op\":\"old-converge\",\"version\":1}\n"),
            ("_members/web/_gates/old-gate.jsonl", "{\"version\":1}\n"),
            ("prod/runs__old-run.jsonl", "{\"version\":1}\n"),
        ],
    );
    let ledger = open(&dir, local_config());
    let keys = [
        converge("tick"),
        ShardKey::run(None, None, "by-hand").unwrap(),
        ShardKey::run(None, Some("prod"), "apply").unwrap(),
        ShardKey::gate(Some("web/api"), "deploy").unwrap(),
        ShardKey::apply(None, "staging", "files").unwrap(),
    ];
    for key in &keys {
        ledger.append(key, "{}").unwrap();
    }
    let mut expected = keys.to_vec();
    expected.push(converge("old-converge"));
    expected.push(ShardKey::gate(Some("web"), "old-gate").unwrap());
    expected.push(ShardKey::run(None, Some("prod"), "old-run").unwrap());
    expected.sort();
    assert_eq!(ledger.keys().unwrap(), expected);
}

#[test]
fn a_long_lived_ledger_keeps_working_while_the_repository_gains_many_packs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    // Its own housekeeping off (gc_every 0), so that the packs the repacks below add stay.
    let ledger = open(&dir, chant::ledger::LedgerConfig { gc_every: 0, ..local_config() });
    let key = converge("op");
    // gix sizes its pack index table when a repository is opened; each repack adds a pack (of
    // a loose blob written beside the append, reachable from a ref of its own: the append is a
    // pack already, merged every 16).
    for n in 0..40 {
        ledger.append(&key, &record("op", "a", n)).unwrap();
        let loose = tmp.path().join(format!("loose-{n}"));
        std::fs::write(&loose, format!("loose {n}\n")).unwrap();
        let blob = git(&dir, &["hash-object", "-w", loose.to_str().unwrap()]);
        git(&dir, &["update-ref", &format!("refs/tests/loose-{n}"), blob.trim()]);
        git(&dir, &["repack", "-q", "-d"]);
    }
    assert!(std::fs::read_dir(dir.join(".git/objects/pack")).unwrap().count() > 2 * 32);
    assert_eq!(written(&ledger, &key).len(), 40);
    assert_eq!(ledger.latest(&key).unwrap().record.unwrap().value["n"], 39);
}

#[test]
fn streaming_reads_hand_over_every_line_in_ledger_order_from_any_sequence_number() {
    use std::ops::ControlFlow;

    use chant::ledger::Visit;
    use chant::tick::TickRecord;

    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let key = converge("streamed");
    let total = 2 * RECORDS_PER_SHARD + 3;
    for n in 0..total {
        if n == 70 {
            // A JSON object of another shape: an unreadable line, handed over, never dropped.
            ledger.append(&key, r#"{"version":"one"}"#).unwrap();
            continue;
        }
        let tick = TickRecord {
            version: 1,
            id: format!("t{n}"),
            op: "streamed".into(),
            env: "staging".into(),
            timestamp: "2026-01-01T00:00:00.000Z".into(),
            ..TickRecord::default()
        };
        ledger.append_record(None, &tick).unwrap();
    }
    assert_eq!(ledger.sharded_len(&key).unwrap(), total);
    let collect = |from: Option<u64>, stop_after: usize| {
        let mut seen: Vec<(Option<u64>, String)> = Vec::new();
        let tip = ledger
            .stream_typed::<TickRecord>(&key, from, |item| {
                seen.push(match item {
                    Visit::Record(stored) => (stored.seq, stored.record.id),
                    Visit::Unreadable(u) => (None, format!("unreadable {}:{}", u.path, u.line)),
                });
                if seen.len() == stop_after { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            })
            .unwrap();
        assert_eq!(tip, ledger.tip().unwrap());
        seen
    };
    let all = collect(None, usize::MAX);
    assert_eq!(all.len() as u64, total);
    assert_eq!(all[0], (Some(0), "t0".to_owned()));
    assert_eq!(all[70], (None, "unreadable staging/streamed/converge/0/1.jsonl:7".to_owned()));
    assert_eq!(all[130], (Some(130), "t130".to_owned()));
    let typed = ledger.read_typed::<TickRecord>(&key).unwrap();
    let ids: Vec<String> = all.iter().filter(|(s, _)| s.is_some()).map(|(_, id)| id.clone()).collect();
    assert_eq!(ids, typed.records.iter().map(|s| s.record.id.clone()).collect::<Vec<_>>(), "same as a full read");
    let tail = collect(Some(127), usize::MAX);
    assert_eq!(tail.iter().map(|(s, _)| s.unwrap()).collect::<Vec<_>>(), vec![127, 128, 129, 130]);
    assert_eq!(collect(Some(5), 2), vec![(Some(5), "t5".to_owned()), (Some(6), "t6".to_owned())], "stops early");
    assert!(collect(Some(total), usize::MAX).is_empty());
    assert_eq!(ledger.sharded_len(&converge("never")).unwrap(), 0);
}

/// A tick record of `op` in `staging` ending `minutes` after 10:00.
fn tick_line(op: &str, minutes: u64) -> String {
    let at = format!("2026-08-25T{:02}:{:02}:00.000Z", 10 + minutes / 60, minutes % 60);
    format!(
        r#"{{"env":"staging","id":"id-{op}-{minutes}","log":"tick","op":"{op}","startedAt":"{at}","timestamp":"{at}","version":1}}"#
    )
}

#[test]
fn newest_first_streams_shard_by_shard_and_operator_log_reads_only_what_its_filter_reaches() {
    use chant::ledger::Visit;
    use chant::operator::{log, status::OpRef};
    use chant::tick::TickRecord;
    use std::ops::ControlFlow;

    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let (a, b) = (converge("a-converge"), converge("b-converge"));
    // The very first line of `a` is a JSON object but no tick record: unreadable, in shard 0.
    ledger.append(&a, r#"{"not":"a tick"}"#).unwrap();
    let total = 3 * RECORDS_PER_SHARD as usize;
    for n in 1..total as u64 {
        ledger.append(&a, &tick_line("a-converge", n)).unwrap();
        if n % 8 == 0 {
            ledger.append(&b, &tick_line("b-converge", n)).unwrap();
        }
    }

    // Newest first, across shards, and nothing older once the visitor stops.
    let mut seen = Vec::new();
    ledger
        .stream_newest_typed::<TickRecord>(&a, |visit| {
            if let Visit::Record(stored) = visit {
                seen.push(stored.seq.unwrap());
            }
            if seen.len() == 70 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
    let expected: Vec<u64> = (total as u64 - 70..total as u64).rev().collect();
    assert_eq!(seen, expected);

    let ops: Vec<OpRef> = ["a-converge", "b-converge"]
        .iter()
        .map(|op| OpRef { op: (*op).to_owned(), env: "staging".to_owned(), member: None })
        .collect();
    let full = log::timeline(&ledger, &ops, &log::Filter::default()).unwrap();
    assert_eq!(full.malformed.converge, 1, "the whole history is read");
    let stamps = |t: &log::Timeline| t.entries.iter().map(|e| (e.op.clone(), e.timestamp.clone())).collect::<Vec<_>>();
    let all = stamps(&full);

    // --limit: the same newest entries, and the oldest shard (with its unreadable line) unread.
    let limited = log::timeline(&ledger, &ops, &log::Filter { since: None, limit: Some(10) }).unwrap();
    assert_eq!(stamps(&limited), all[all.len() - 10..]);
    assert_eq!(limited.malformed.converge, 0, "shard 0 was not read");
    // --since: everything at or after it, still without reading shard 0.
    let since = chant::clock::parse("2026-08-25T12:30:00Z").unwrap();
    let recent = log::timeline(&ledger, &ops, &log::Filter { since: Some(since), limit: None }).unwrap();
    let want: Vec<_> = all.iter().filter(|(_, t)| t.as_str() >= "2026-08-25T12:30:00.000Z").cloned().collect();
    assert!(!want.is_empty());
    assert_eq!(stamps(&recent), want);
    assert_eq!(recent.malformed.converge, 0);
    // A limit larger than the history reads it all.
    let everything = log::timeline(&ledger, &ops, &log::Filter { since: None, limit: Some(10_000) }).unwrap();
    assert_eq!((stamps(&everything), everything.malformed.converge), (all.clone(), 1));

    // The env page's health strips: one op's newest ticks, oldest first, exactly `limit` of them
    // (the window reads a whole shard), the same ticks `--limit` shows; none for a limit of 0;
    // the whole history (its unreadable line skipped) when the limit exceeds it.
    let a_ticks: Vec<String> = all.iter().filter(|(op, _)| op == "a-converge").map(|(_, t)| t.clone()).collect();
    let newest = log::newest_ticks(&ledger, &ops[0], 30).unwrap();
    let newest_stamps: Vec<String> = newest.iter().map(|t| t.timestamp.clone()).collect();
    assert_eq!(newest_stamps, a_ticks[a_ticks.len() - 30..]);
    assert!(log::newest_ticks(&ledger, &ops[0], 0).unwrap().is_empty());
    assert_eq!(log::newest_ticks(&ledger, &ops[0], 10_000).unwrap().len(), a_ticks.len());
}

#[test]
fn operator_log_shows_what_was_notified_for_a_tick_after_it_and_counts_an_unreadable_notification() {
    use chant::notification::{Delivery, EventKind, Notified, NotifyRecord};
    use chant::operator::{log, status::OpRef};

    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "p");
    let ledger = open(&dir, local_config());
    let op = "a-converge";
    let notify = ShardKey::notify(None, "staging", op).unwrap();
    // Two ticks; the first was notified (a webhook took it, a command failed), and one
    // notification line is unreadable.
    ledger.append(&converge(op), &tick_line(op, 1)).unwrap();
    let sent = NotifyRecord {
        version: 1,
        kind: "notification".to_owned(),
        op: op.to_owned(),
        env: "staging".to_owned(),
        tick_id: format!("id-{op}-1"),
        // Sent after the tick was recorded, before the next one.
        timestamp: "2026-08-25T10:01:00.500Z".to_owned(),
        problem: true,
        events: vec![Notified { event: EventKind::Gated, rule_id: Some("guard".to_owned()), resource: None }],
        sinks: vec![
            Delivery { sink: "webhook $HOOK".to_owned(), event: EventKind::Gated, ok: true, error: None },
            Delivery {
                sink: "command ./page.sh".to_owned(),
                event: EventKind::Gated,
                ok: false,
                error: Some("exit 3\u{1b}[2J".to_owned()),
            },
        ],
    };
    ledger.append_record(None, &sent).unwrap();
    ledger.append(&notify, r#"{"kind":"notification"}"#).unwrap();
    ledger.append(&converge(op), &tick_line(op, 2)).unwrap();

    let ops = [OpRef { op: op.to_owned(), env: "staging".to_owned(), member: None }];
    let kinds = |t: &log::Timeline| t.entries.iter().map(|e| (e.kind, e.timestamp.clone())).collect::<Vec<_>>();
    let full = log::timeline(&ledger, &ops, &log::Filter::default()).unwrap();
    assert_eq!(
        kinds(&full),
        [
            (log::EntryKind::Tick, "2026-08-25T10:01:00.000Z".to_owned()),
            (log::EntryKind::Notification, "2026-08-25T10:01:00.500Z".to_owned()),
            (log::EntryKind::Tick, "2026-08-25T10:02:00.000Z".to_owned()),
        ]
    );
    assert_eq!(full.malformed.notifications, 1, "the unreadable notification line is counted");
    assert!(full.malformed.warning("timeline").unwrap().contains("notifications: 1"));
    let json = serde_json::to_value(&full).unwrap();
    assert_eq!(json["entries"][1]["kind"], "notification");
    assert_eq!(json["entries"][1]["record"]["tickId"], "id-a-converge-1");

    // The human form: the tick it answers, the events, each sink's delivery, escaped.
    let text = log::render(&full);
    assert!(text.contains("2026-08-25T10:01:00.500Z  a-converge@staging  [id-a-con]  notified gated\n"), "{text}");
    assert!(text.contains("    gated  webhook $HOOK  delivered\n"), "{text}");
    assert!(text.contains("    gated  command ./page.sh  not delivered: exit 3\\u{1b}[2J\n"), "{text}");

    // --limit reads the notifications newest first too: the newest two entries.
    let limited = log::timeline(&ledger, &ops, &log::Filter { since: None, limit: Some(2) }).unwrap();
    assert_eq!(kinds(&limited), kinds(&full)[1..]);
}

/// How many packs (`.idx` files) the repository at `dir` holds.
fn packs_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".idx"))
        .count()
}
