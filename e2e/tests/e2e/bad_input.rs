//! Bad input: a clear error naming the thing and the fix, and the ledger unchanged where nothing
//! should be recorded; a malformed ledger line is counted and reported, never fatal, never
//! dropped; a secret planted in a failing step's output reaches no output and no record. (An
//! op.json failing the backstop is in `honesty`; `approve` without a pending fact and a non-http
//! `--url` are in `gates`.)

use serde_json::Value;

use super::support::{BRANCH, STOCK, Sandbox, config_with_roots, converge_key, gate_key, outcome, plant, shard};

#[test]
fn a_malformed_ledger_line_is_counted_reported_and_not_fatal() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    sandbox.tick("site-converge", &[]);
    let key = converge_key("site", "site-converge");
    let path = shard(&sandbox, &key.dir());
    plant(&sandbox, &path, "{\"op\": \"site-converge\", truncated by a bad hand edit");

    // The tick reads past the line to the newest readable record, says where the line is and what
    // to do, and records its own tick after it.
    let out = sandbox.project(&["tick", "site-converge", "--json"], &[]);
    out.code(0);
    let warning = format!("warning: unreadable ledger line {path}:3 on {BRANCH}");
    assert!(out.stderr.contains(&warning), "{}", out.all());
    assert!(out.stderr.contains("fix or remove it"), "{}", out.all());
    assert!(out.json()["log"].as_str().unwrap().contains("drifted=0 remediated=0"));
    let records = sandbox.records(&key);
    assert_eq!(records.records.len(), 3);
    assert_eq!(records.unreadable.len(), 1, "counted");
    assert_eq!((records.unreadable[0].path.as_str(), records.unreadable[0].line), (path.as_str(), 3));
    assert!(records.unreadable[0].reason.contains("not JSON"), "{:?}", records.unreadable);
    let file = sandbox.git(&sandbox.dir, &["show", &format!("{BRANCH}:{path}")]);
    assert!(file.lines().nth(2).unwrap().contains("truncated by a bad hand edit"), "left in place:\n{file}");

    // A malformed gate fact is not fatal either: the standing fact is still found and used.
    sandbox.project(&["run", "site-release"], &[]).code(3);
    let gates = shard(&sandbox, &gate_key("site-release").dir());
    plant(&sandbox, &gates, "not json at all");
    sandbox.project(&["run", "site-release"], &[]).code(3);
    let facts = sandbox.records(&gate_key("site-release"));
    assert_eq!((facts.records.len(), facts.unreadable.len()), (1, 1), "the pending fact is reused");
    sandbox.project(&["approve", "site-release", "release", "--actor", "erin"], &[]).code(0);
    sandbox.project(&["run", "site-release"], &[]).code(0);
}

#[test]
fn an_unset_variable_names_itself_and_the_step_and_records_nothing() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["run", "site-needs-var"], &[]);
    out.code(2);
    for needle in ["site-needs-var", "phase \"Greet\"", "step `shell`", "E2E_UNSET_VARIABLE is not set", "export it"] {
        assert!(out.stderr.contains(needle), "{needle}:\n{}", out.all());
    }
    assert_eq!(sandbox.tip(), None, "nothing on the ledger");

    // With a ledger already there, it stays as it was.
    sandbox.tick("site-converge", &[]);
    let tip = sandbox.tip();
    sandbox.project(&["run", "site-needs-var", "--json"], &[]).code(2);
    assert_eq!(sandbox.tip(), tip);

    // Set, the same op runs and expands it.
    let ok = sandbox.project(&["run", "site-needs-var", "--json"], &[("E2E_UNSET_VARIABLE", "world")]);
    ok.code(0);
    assert_eq!(ok.json()["outcomes"][0]["detail"], "hello world");
}

#[test]
fn an_unknown_op_exits_2_with_a_suggestion_and_records_nothing() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    let tip = sandbox.tip();
    let cases: [(&[&str], &[&str]); 2] = [
        (&["run", "site-aply"], &["no op named `site-aply`", "did you mean `site-apply`?"]),
        (&["tick", "site-convrge"], &["no op named `site-convrge`", "did you mean `site-converge`?"]),
    ];
    for (args, needles) in cases {
        let out = sandbox.project(args, &[]);
        out.code(2);
        for needle in needles {
            assert!(out.stderr.contains(needle), "{args:?}: {needle}\n{}", out.all());
        }
        assert_eq!(out.stdout, "", "{args:?}");
        assert_eq!(sandbox.tip(), tip, "{args:?}");
    }
}

#[test]
fn a_secret_in_a_failing_step_reaches_no_output_and_no_record() {
    const TOKEN: &str = "tok-5f1e2d3c-plain-word";
    const PASSWORD: &str = "pw-7a6b5c4d";
    let config = format!("{}\n[env.leak]\nredact = [\"E2E_TOKEN\"]\n", config_with_roots(&["site"]));
    let sandbox = Sandbox::new(&config);
    let secrets = [("E2E_TOKEN", TOKEN), ("E2E_DB_PASSWORD", PASSWORD)];
    let clean = |what: &str, text: &str| {
        assert!(!text.contains(TOKEN) && !text.contains(PASSWORD), "a secret in {what}:\n{text}");
    };

    // A tick dispatches the leaky op, which fails: `reported`, flagged, its error redacted.
    let json = sandbox.project(&["tick", "leak-converge", "--json"], &secrets);
    json.code(0);
    clean("tick --json", &json.all());
    let tick = json.json();
    let shout = outcome(&tick, "shout");
    assert_eq!((&shout["action"], &shout["dispatchFailed"]), (&Value::from("reported"), &Value::from(true)));
    let reason = shout["reason"].as_str().unwrap();
    assert!(reason.contains("token [redacted] to postgres://admin:[redacted]@db.invalid/app"), "{reason}");
    let human = sandbox.project(&["tick", "leak-converge"], &secrets);
    human.code(0);
    clean("tick", &human.all());

    // By hand, both forms: the failing step, the failure phase and the error are all redacted.
    let json = sandbox.project(&["run", "leak-shout", "--json"], &secrets);
    json.code(1);
    clean("run --json", &json.all());
    let record = json.json();
    assert!(record["error"].as_str().unwrap().contains("token [redacted]"), "{record}");
    let report = record["outcomes"].as_array().unwrap().iter().find(|o| o["phase"] == "Report").unwrap();
    assert!(report["detail"].as_str().unwrap().contains("postgres://admin:[redacted]@"), "{report}");
    let human = sandbox.project(&["run", "leak-shout"], &secrets);
    human.code(1);
    clean("run", &human.all());
    assert!(human.stderr.contains("[redacted]"), "{}", human.all());

    // Nothing on the ledger, in any version of any file, holds either secret.
    let history = sandbox.git(&sandbox.dir, &["log", "-p", "--format=%H %s", BRANCH]);
    clean("the ledger's history", &history);
    assert!(history.matches("[redacted]").count() >= 6, "the secrets were there to redact:\n{history}");
}

/// The stock `chant` outside any project and any git repository: the ledger cannot be opened,
/// and the error says where a ledger lives and how to make a project.
#[test]
fn outside_a_project_the_stock_binary_says_where_to_run() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let nowhere = sandbox.root().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let out = sandbox.run_in(STOCK, &nowhere, &["operator", "status"], &[]);
    out.code(2);
    assert!(
        out.stderr.contains("hint: no chant.toml here or in a parent directory: run this inside a chant project"),
        "{}",
        out.all()
    );
}
