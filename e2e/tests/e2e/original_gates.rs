//! The original's gate files (`_gates/<op>.jsonl`, hand-written here in its exact encoding: a
//! resolution without `kind`, `environment` for `env`, no `runId`, keys in its order, no trailing
//! newline) are facts: they count in `operator status`, `operator log`, `approve` and `run` like
//! chant's own lines, and a malformed one is counted, never dropped.

use serde_json::Value;

use super::support::{BRANCH, Sandbox, config_with_roots, gate_key};

/// The instant `minutes` after 2026-03-01T10:00:00Z.
fn at(minutes: i64) -> String {
    format!("2026-03-01T{:02}:{:02}:00.000Z", 10 + minutes / 60, minutes % 60)
}

/// Writes `content` at `path` on the ledger branch in one commit of its own (the branch is
/// created when it does not exist), as the original's `writeBlobToPath` would. Returns the commit.
pub(crate) fn commit_ledger_file(sandbox: &Sandbox, path: &str, content: &str, vars: &[(&str, &str)]) -> String {
    let dir = &sandbox.dir;
    let index = sandbox.root().join("original.index");
    let _ = std::fs::remove_file(&index);
    let index = index.to_str().unwrap().to_owned();
    let file = sandbox.root().join("original.jsonl");
    std::fs::write(&file, content).unwrap();
    let mut env: Vec<(&str, &str)> = vec![("GIT_INDEX_FILE", index.as_str())];
    env.extend_from_slice(vars);
    let with_index = |args: &[&str]| {
        let out = sandbox.run_in("git", dir, args, &env);
        assert_eq!(out.code, 0, "git {args:?}: {}", out.stderr);
        out.stdout.trim().to_owned()
    };
    let tip = sandbox.tip();
    if let Some(tip) = &tip {
        with_index(&["read-tree", tip]);
    }
    let blob = with_index(&["hash-object", "-w", file.to_str().unwrap()]);
    with_index(&["update-index", "--add", "--cacheinfo", &format!("100644,{blob},{path}")]);
    let tree = with_index(&["write-tree"]);
    let commit = match &tip {
        Some(tip) => with_index(&["commit-tree", &tree, "-p", tip, "-m", "Gate resolution record"]),
        None => with_index(&["commit-tree", &tree, "-m", "Pending gate record"]),
    };
    with_index(&["update-ref", BRANCH, &commit, tip.as_deref().unwrap_or("")]);
    commit
}

/// The original's pending fact for `site-release`'s gate, keys in the order it writes them.
fn original_pending(minutes: i64, expires: i64) -> String {
    format!(
        r#"{{"version":1,"kind":"pending","op":"site-release","gate":"release","description":"Shipping the site needs a human.","timestamp":"{}","expiresAt":"{}","environment":"site"}}"#,
        at(minutes),
        at(expires)
    )
}

/// The original's resolution: no `kind`, no env, no `runId`.
fn original_resolution(minutes: i64, by: &str) -> String {
    format!(
        r#"{{"version":1,"op":"site-release","gate":"release","resolvedBy":"{by}","timestamp":"{}","url":"https://github.com/org/repo/pull/7","relayedBy":"relay-bot"}}"#,
        at(minutes)
    )
}

#[test]
fn the_originals_pending_fact_stands_in_status_and_run_and_approve_answers_it() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    commit_ledger_file(&sandbox, "_gates/site-release.jsonl", &original_pending(0, 60), &[]);
    let now = at(5);
    let vars = [("CHANT_NOW", now.as_str())];

    let status = sandbox.stock(&["operator", "status", "--json"], &vars);
    status.code(0);
    let status = status.json();
    assert_eq!(status["malformed"]["gates"], 0, "{status}");
    let gates = status["pendingGates"].as_array().unwrap();
    assert_eq!(gates.len(), 1, "{status}");
    assert_eq!((&gates[0]["op"], &gates[0]["gate"]), (&Value::from("site-release"), &Value::from("release")));
    assert_eq!(gates[0]["env"], "site");
    assert_eq!(gates[0]["description"], "Shipping the site needs a human.");
    assert_eq!(gates[0]["expiresAt"], at(60));

    // A run reuses the original's standing fact rather than writing another.
    sandbox.project(&["run", "site-release", "--json"], &vars).code(3);
    assert_eq!(sandbox.values(&gate_key("site-release")).len(), 1, "no new pending fact");

    // approve answers it and copies its environment.
    let later = at(10);
    sandbox.stock(&["approve", "site-release", "release", "--actor", "alex"], &[("CHANT_NOW", &later)]).code(0);
    let facts = sandbox.values(&gate_key("site-release"));
    assert_eq!(facts.len(), 2);
    assert_eq!((&facts[1]["kind"], &facts[1]["env"]), (&Value::from("resolution"), &Value::from("site")));
    assert!(facts[1].get("runId").is_none(), "the original's fact had none to copy: {}", facts[1]);
    let done = at(15);
    let run = sandbox.project(&["run", "site-release", "--json"], &[("CHANT_NOW", &done)]);
    run.code(0);
    assert_eq!(run.json()["status"], "ok");
}

#[test]
fn the_originals_resolution_opens_the_gate_and_a_malformed_line_is_counted() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let lines =
        [original_pending(0, 60), "{\"version\":1,\"op\":\"site-release\"}".to_owned(), original_resolution(3, "ann")];
    commit_ledger_file(&sandbox, "_gates/site-release.jsonl", &lines.join("\n"), &[]);
    let now = at(5);
    let vars = [("CHANT_NOW", now.as_str())];

    let status = sandbox.stock(&["operator", "status", "--json"], &vars).code(0).json();
    assert_eq!(status["malformed"]["gates"], 1, "the line without a gate is counted: {status}");
    assert_eq!(status["pendingGates"], Value::Array(Vec::new()), "the resolution answers the pending fact");
    let human = sandbox.stock(&["operator", "status"], &vars);
    assert!(human.stderr.contains("unreadable"), "{}", human.all());

    // approve says it is already approved, by the original's resolver.
    let out = sandbox.stock(&["approve", "site-release", "release"], &vars);
    out.code(0);
    assert!(out.stderr.contains("already approved by ann"), "{}", out.all());

    let run = sandbox.project(&["run", "site-release", "--json"], &vars);
    run.code(0);
    let record = run.json();
    assert_eq!(record["outcomes"][0]["approvedBy"], "ann", "{record}");
}

#[test]
fn the_originals_resolutions_are_on_the_operator_log() {
    let sandbox = Sandbox::new(&config_with_roots(&["flappy"]));
    // A tick dispatches `flappy-guarded`, which stops at its gate: the log follows that op's gates.
    sandbox.tick("flappy-converge", &[]);
    let resolution = r#"{"gate":"hold","resolvedBy":"ann","op":"flappy-guarded","timestamp":"2026-03-01T10:03:00.000Z","version":1}"#;
    commit_ledger_file(&sandbox, "_gates/flappy-guarded.jsonl", resolution, &[]);
    let log = sandbox.stock(&["operator", "log", "--json"], &[]).code(0).json();
    assert_eq!(log["malformed"]["gates"], 0, "{log}");
    let resolved: Vec<&Value> =
        log["entries"].as_array().unwrap().iter().filter(|e| e["kind"] == "gate-resolution").collect();
    assert_eq!(resolved.len(), 1, "{log}");
    assert_eq!(resolved[0]["record"]["resolvedBy"], "ann");
    let human = sandbox.stock(&["operator", "log"], &[]).code(0).stdout.clone();
    assert!(human.contains("gate-resolved  flappy-guarded/hold by ann"), "{human}");
}

/// The author variables of a commit by `name`.
fn by(name: &str) -> [(&'static str, String); 2] {
    [
        ("GIT_AUTHOR_NAME", name.to_owned()),
        ("GIT_AUTHOR_EMAIL", format!("{}@example.org", name.to_lowercase().replace(' ', "."))),
    ]
}

fn commit_as(sandbox: &Sandbox, name: &str, lines: &[String]) -> String {
    let vars = by(name);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    commit_ledger_file(sandbox, "_gates/site-release.jsonl", &lines.join("\n"), &vars)
}

fn audit(sandbox: &Sandbox, code: i32) -> Value {
    sandbox.stock(&["operator", "audit", "--json"], &[]).code(code).json()
}

fn entry_kinds(audit: &Value) -> Vec<&str> {
    audit["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect()
}

#[test]
fn the_audit_reads_the_ledger_history_with_commits_revocations_and_gaps() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let pending = original_pending(0, 60);
    commit_as(&sandbox, "Original Runner", std::slice::from_ref(&pending));
    let approved_in = commit_as(&sandbox, "Ann Approver", &[pending.clone(), original_resolution(3, "ann")]);

    let a = audit(&sandbox, 0);
    assert_eq!(a["ops"], serde_json::json!(["site-release"]));
    assert_eq!(entry_kinds(&a), ["approval-requested", "approved"], "{a}");
    let approved = &a["entries"][1];
    assert_eq!(approved["approver"], "ann");
    assert_eq!(approved["relayedBy"], "relay-bot");
    assert_eq!(approved["seal"], "unsigned");
    assert_eq!(approved["committedBy"], "Ann Approver", "the author of the commit that added the line");
    assert_eq!(approved["source"]["commit"], approved_in.as_str());
    assert_eq!(
        (&approved["source"]["path"], &approved["source"]["line"]),
        (&Value::from("_gates/site-release.jsonl"), &Value::from(2))
    );
    assert_eq!(approved["source"]["text"], original_resolution(3, "ann"));
    assert!(a["entries"][0]["id"].as_str().unwrap().starts_with("sha256:"));

    // A later commit removes the approval: a revocation, by that commit's author.
    let revoked_in = commit_as(&sandbox, "Lead Revoker", std::slice::from_ref(&pending));
    let a = audit(&sandbox, 0);
    assert_eq!(entry_kinds(&a), ["approval-requested", "approved", "revoked"], "{a}");
    let revoked = &a["entries"][2];
    assert_eq!(revoked["source"]["author"], "Lead Revoker");
    assert_eq!(revoked["source"]["commit"], revoked_in.as_str());
    assert_eq!(revoked["source"]["removed"], true);
    assert_eq!(revoked["under"], a["entries"][1]["id"]);

    // chant's own approval and the run that walks through it: approved, then applied under it.
    sandbox.stock(&["approve", "site-release", "release", "--actor", "alex"], &[("CHANT_NOW", &at(10))]).code(0);
    sandbox.project(&["run", "site-release", "--json"], &[("CHANT_NOW", &at(15))]).code(0);
    let a = audit(&sandbox, 0);
    assert_eq!(entry_kinds(&a), ["approval-requested", "approved", "revoked", "approved", "applied"], "{a}");
    assert_eq!(a["entries"][3]["source"]["path"], "_gates/site-release/0/0.jsonl");
    assert_eq!(a["entries"][3]["committedBy"], "alex", "approve writes its commit as the actor it records");
    assert!(a["entries"][3].get("committerMismatch").is_none(), "{a}");
    assert_eq!(a["entries"][4]["under"], a["entries"][3]["id"]);
    assert!(
        sandbox.stock(&["operator", "audit"], &[]).code(0).stdout.contains("no gaps (5 entries over 1 gate ledgers)")
    );

    // An approval nobody asked for and a malformed line: gaps, and exit 1.
    let stray = r#"{"version":1,"op":"site-release","gate":"ship-anyway","resolvedBy":"mallory","timestamp":"2026-03-01T11:00:00.000Z"}"#;
    commit_as(
        &sandbox,
        "Mallory",
        &[pending.clone(), stray.to_owned(), "{\"version\":1,\"op\":\"site-release\"}".to_owned()],
    );
    let a = audit(&sandbox, 1);
    let gaps: Vec<(&str, &str)> = a["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["kind"].as_str().unwrap(), g["message"].as_str().unwrap()))
        .collect();
    assert_eq!(gaps.len(), 2, "{gaps:?}");
    assert_eq!(gaps[0].0, "approval-without-request");
    assert!(
        gaps[0].1.starts_with("_gates/site-release.jsonl:2: approval of gate \"ship-anyway\" by mallory"),
        "{}",
        gaps[0].1
    );
    assert_eq!(gaps[1].0, "malformed-line");
    assert!(gaps[1].1.starts_with("_gates/site-release.jsonl:3: not a gate fact: no string `gate`"), "{}", gaps[1].1);
    let stray_entry = a["entries"].as_array().unwrap().iter().find(|e| e["gate"] == "ship-anyway").unwrap();
    assert_eq!(stray_entry["committedBy"], "Mallory", "resolvedBy says mallory; the commit says who pushed it");
    let human = sandbox.stock(&["operator", "audit", "--op", "site-release"], &[]);
    human.code(1);
    assert!(
        human.stdout.contains("gaps (2):\n  approval-without-request  _gates/site-release.jsonl:2"),
        "{}",
        human.stdout
    );
    sandbox.stock(&["operator", "audit", "--op", "Bad_Name"], &[]).code(2);
    let none = sandbox.stock(&["operator", "audit", "--op", "site-ping", "--json"], &[]).code(0).json();
    assert_eq!(none["entries"], Value::Array(Vec::new()));
}
