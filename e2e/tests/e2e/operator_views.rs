//! `operator status` and `operator log` from the stock binary (and the project binary) in a
//! repository with history: the one JSON shape of each, unreadable lines counted, `--since` and
//! `--limit` validated and applied.

use serde_json::Value;

use super::operator::{history, sandbox_with_marks};
use crate::support::{BRANCH, Sandbox};

/// Adds the original's single converge file `<env>/converge.jsonl` to the ledger branch with
/// `lines`, as history an older chant wrote.
fn add_legacy_file(sandbox: &Sandbox, env: &str, lines: &[&str]) {
    let dir = &sandbox.dir;
    let index = sandbox.root().join("legacy.index");
    let index = index.to_str().unwrap();
    let file = sandbox.root().join("legacy.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let with_index = |args: &[&str]| {
        let out = sandbox.run_in("git", dir, args, &[("GIT_INDEX_FILE", index)]);
        assert_eq!(out.code, 0, "git {args:?}: {}", out.stderr);
        out.stdout.trim().to_owned()
    };
    let tip = sandbox.tip().unwrap();
    with_index(&["read-tree", &tip]);
    let blob = with_index(&["hash-object", "-w", file.to_str().unwrap()]);
    with_index(&["update-index", "--add", "--cacheinfo", &format!("100644,{blob},{env}/converge.jsonl")]);
    let tree = with_index(&["write-tree"]);
    let commit = with_index(&["commit-tree", &tree, "-p", &tip, "-m", "history from the original"]);
    with_index(&["update-ref", BRANCH, &commit, &tip]);
}

#[test]
fn status_and_log_read_the_ledger_alone_with_one_json_shape() {
    let (sandbox, marks) = sandbox_with_marks();
    let times = history(&sandbox, &marks, 3);

    let out = sandbox.stock(&["operator", "status", "--json"], &[]);
    out.code(0);
    let status = out.json();
    assert_eq!(status["version"], 1);
    let keys: Vec<&str> = status.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["malformed", "ops", "pendingGates", "version"]);
    assert_eq!(status["malformed"], serde_json::json!({"converge": 0, "gates": 0, "runs": 0, "notifications": 0}));
    let rows = status["ops"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["mark-loop", "mark-sched"], "the stock binary finds ConvergeOps on the ledger");
    for row in rows {
        let keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["env", "health", "lastTick", "lease", "member", "op", "pendingGates"]);
        assert_eq!(row["lastTick"]["startedAt"], times[&2].as_str());
        assert!(
            row["lastTick"]["log"]
                .as_str()
                .unwrap()
                .starts_with("converge(marks): drifted=1 remediated=0 ineffective=1")
        );
        assert_eq!(row["lease"], Value::Null, "--once released the lease");
    }
    let human = sandbox.stock(&["operator", "status"], &[]);
    human.code(0);
    assert!(
        human.stdout.contains(" ago (mark [r] -> mark-loop-hit ran and did not remove its symptom)\n  last tick : ")
            && human.stdout.contains("mark-loop (marks)\n  health    : degraded, observed "),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("  lease     : free"), "{}", human.stdout);

    let out = sandbox.stock(&["operator", "log", "--json"], &[]);
    out.code(0);
    let log = out.json();
    let keys: Vec<&str> = log.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["entries", "malformed", "version"]);
    let entries = log["entries"].as_array().unwrap();
    let ticks = entries.iter().filter(|e| e["kind"] == "tick").count();
    let runs = entries.iter().filter(|e| e["kind"] == "run").count();
    assert_eq!((ticks, runs), (6, 6), "three ticks per op and the runs they dispatched");
    let stamps: Vec<&str> = entries.iter().map(|e| e["timestamp"].as_str().unwrap()).collect();
    let mut sorted = stamps.clone();
    sorted.sort();
    assert_eq!(stamps, sorted, "oldest first");

    let human = sandbox.stock(&["operator", "log", "--op", "mark-loop"], &[]);
    human.code(0);
    let first = human.stdout.lines().next().unwrap();
    assert!(first.starts_with(&format!("{}  mark-loop@marks  [", times[&0])), "{first}");
    // Sources are relative to the repository root (#15.5).
    // The observer still reads `r` drifted after the mark: the dispatch is ineffective, and says so.
    assert!(
        human.stdout.contains(
            "    ineffective  mark [r] → mark-loop-hit: \"mark-loop-hit\" ran and the symptom it answered is still there after it: resource \"r\" is drifted  (e2e/src/operator.rs:"
        ),
        "{}",
        human.stdout
    );

    // --since is inclusive, then --limit keeps the newest.
    let since = times[&2].as_str();
    let out = sandbox.stock(&["operator", "log", "--since", since, "--json"], &[]);
    let kept = out.json()["entries"].as_array().unwrap().len();
    assert_eq!(kept, 4, "the last fire time's two ticks and two runs");
    let out = sandbox.stock(&["operator", "log", "--limit", "1", "--json", "--op", "mark-sched"], &[]);
    let newest = &out.json()["entries"][0];
    assert_eq!(newest["op"], "mark-sched-hit");
    for (flag, bad) in
        [("--since", "yesterday"), ("--since", "2026-03-02"), ("--limit", "0"), ("--limit", "-3"), ("--limit", "x")]
    {
        let arg = format!("{flag}={bad}");
        let out = sandbox.stock(&["operator", "log", &arg], &[]);
        out.code(2);
        assert!(out.stderr.contains(flag), "{}", out.all());
    }
    sandbox.stock(&["operator", "status", "--env", "Not-A-Name"], &[]).code(2);

    // The project binary shows the same rows, plus the ConvergeOps it carries with no ticks yet.
    let out = sandbox.project(&["operator", "status", "--json"], &[]);
    let rows = out.json()["ops"].as_array().unwrap().clone();
    let hold = rows.iter().find(|r| r["op"] == "hold-converge").unwrap();
    assert_eq!(hold["lastTick"], Value::Null);
}

#[test]
fn unreadable_lines_are_counted_never_dropped_silently() {
    let (sandbox, marks) = sandbox_with_marks();
    history(&sandbox, &marks, 1);
    let old = r#"{"env":"marks","id":"0ld0ld00-0000-4000-8000-000000000000","log":"converge(marks): drifted=0 remediated=0 reported=0 skipped-budget=0 skipped-flap=0 gated=0 unobserved=0 adopted=0","op":"old-converge","outcomes":[],"startedAt":"2025-01-01T00:00:00.000Z","timestamp":"2025-01-01T00:00:01.000Z","version":1}"#;
    add_legacy_file(&sandbox, "marks", &[old, "this line is not JSON", r#"{"version":1}"#]);

    let out = sandbox.stock(&["operator", "status", "--json"], &[]);
    out.code(0);
    let status = out.json();
    assert_eq!(status["malformed"]["converge"], 2, "{status}");
    let old_row = status["ops"].as_array().unwrap().iter().find(|r| r["op"] == "old-converge").unwrap();
    assert_eq!(old_row["lastTick"]["startedAt"], "2025-01-01T00:00:00.000Z");
    assert!(out.stderr.contains("2 ledger line(s) were unreadable"), "{}", out.all());

    let out = sandbox.stock(&["operator", "log", "--json"], &[]);
    out.code(0);
    let log = out.json();
    assert_eq!(log["malformed"]["converge"], 2, "each bad line counted once, though three ops share the file");
    assert_eq!(log["entries"][0]["op"], "old-converge", "history first");
    let out = sandbox.stock(&["operator", "log"], &[]);
    assert!(
        out.stderr.contains("2 ledger line(s) were unreadable and are missing from this timeline"),
        "{}",
        out.all()
    );
}

#[test]
fn a_closed_stdout_ends_a_command_quietly_with_exit_0() {
    use crate::support::{PROJECT, STOCK};
    let (sandbox, marks) = sandbox_with_marks();
    history(&sandbox, &marks, 1);
    let cases: [(&str, &[&str]); 5] = [
        (PROJECT, &["operator", "log"]),
        (STOCK, &["operator", "log", "--json"]),
        (PROJECT, &["operator", "status"]),
        (STOCK, &["operator", "status", "--json"]),
        (PROJECT, &["ops"]),
    ];
    for (program, args) in cases {
        // The reading end is closed before the command writes a byte: `... | head -0`, without
        // a race on when the reader goes away.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = sandbox
            .command(program, &sandbox.dir, args, &[])
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?} said something on a closed stdout");
    }
}
