//! The honesty rules of a tick (DESIGN.md section 5), each seen from outside: the tick runs in
//! its own process, dispatches real child processes, and the test reads the files and the ledger
//! it left behind.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use serde_json::{Value, json};

use super::support::{Sandbox, actions, apply_key, config_with_roots, converge_key, gate_key, log, outcome, run_key};

/// The ledger keys present in the project's ledger, as their directory paths.
fn keys(sandbox: &Sandbox) -> Vec<String> {
    let mut keys: Vec<String> =
        sandbox.ledger_of(&sandbox.dir).keys().unwrap().iter().map(chant::ledger::ShardKey::dir).collect();
    keys.sort();
    keys
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn unknown_never_remediates_an_unbound_root() {
    // No `[env.blind]`: the files root is unset, so every declared file is `no-binding`.
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let tick = sandbox.tick("blind-converge", &[]);
    assert_eq!(actions(&tick), pairs(&[("not-reconciled-apply", "reported"), ("unknown-report", "reported")]));
    let refused = outcome(&tick, "not-reconciled-apply");
    let reason = refused["reason"].as_str().unwrap();
    assert!(reason.contains("unknown never remediates") && reason.contains("no-binding"), "{reason}");
    assert_eq!(refused["op"], "blind-apply");
    assert!(refused.get("dispatchFailed").is_none(), "nothing was dispatched: {refused}");
    assert!(log(&tick).contains("remediated=0 reported=2"), "{tick}");
    assert_eq!(tick["summary"]["unobserved"], 2);
    assert_eq!(tick["components"][0]["reconciliation"], "unknown");
    // Nothing ran, nothing was applied: the only record is the tick's own.
    assert_eq!(keys(&sandbox), [converge_key("blind", "blind-converge").dir()]);
    assert!(!sandbox.path("estates").exists());
}

#[test]
fn unknown_never_remediates_an_unreadable_file() {
    let sandbox = Sandbox::new(&config_with_roots(&["blind"]));
    // A directory where `a.conf` is declared, with something of the user's inside it, and a
    // symlink loop where the directory `sub` of `sub/b.conf` should be.
    let dir = sandbox.path("estates/blind/a.conf");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "the user's\n").unwrap();
    std::os::unix::fs::symlink("sub", sandbox.path("estates/blind/sub")).unwrap();

    let tick = sandbox.tick("blind-converge", &[]);
    assert_eq!(actions(&tick), pairs(&[("not-reconciled-apply", "reported"), ("unknown-report", "reported")]));
    let reason = outcome(&tick, "not-reconciled-apply")["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("unknown never remediates") && reason.contains("read-failed"), "{reason}");
    assert_eq!(tick["summary"]["unobserved"], 2, "{tick}");
    assert_eq!(tick["summary"]["remediated"], 0);

    // Nothing applied, nothing deleted or replaced.
    assert!(dir.is_dir());
    assert_eq!(sandbox.read("estates/blind/a.conf/keep.txt"), "the user's\n");
    assert_eq!(std::fs::read_link(sandbox.path("estates/blind/sub")).unwrap(), PathBuf::from("sub"));
    assert_eq!(keys(&sandbox), [converge_key("blind", "blind-converge").dir()]);

    // Once the obstacles are gone the same rule remediates: the refusal came from `unknown`.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(sandbox.path("estates/blind/sub")).unwrap();
    let tick = sandbox.tick("blind-converge", &[]);
    assert_eq!(actions(&tick), pairs(&[("not-reconciled-apply", "ran")]));
    assert_eq!(sandbox.read("estates/blind/sub/b.conf"), "b = 2\n");
}

#[test]
fn the_budget_bounds_dispatches_and_reports_use_none() {
    let sandbox = Sandbox::new(&config_with_roots(&["busy"]));
    let tick = sandbox.tick("busy-converge", &[]);
    assert_eq!(
        actions(&tick),
        pairs(&[
            ("busy-report", "reported"),
            // The probes run and change nothing: the env is as unrecorded after them.
            ("probe-one", "ineffective"),
            ("probe-two", "ineffective"),
            ("probe-three", "skipped-budget"),
            ("probe-four", "skipped-budget"),
        ])
    );
    let skipped = outcome(&tick, "probe-three")["reason"].as_str().unwrap();
    assert!(skipped.contains("budget of 2") && skipped.contains("not queued"), "{skipped}");
    assert!(log(&tick).contains("remediated=0 ineffective=2 reported=1 skipped-budget=2"), "{tick}");
    // Exactly the two dispatched ops ran: each left one run record, in the tick's env.
    for (op, runs) in [("busy-one", 1), ("busy-two", 1), ("busy-three", 0), ("busy-four", 0)] {
        let records = sandbox.values(&run_key("busy", op));
        assert_eq!(records.len(), runs, "{op}: {records:?}");
        assert!(records.iter().all(|r| r["status"] == "ok" && r["env"] == "busy"), "{records:?}");
    }
}

#[test]
fn flap_damping_holds_across_processes_and_spares_gates_and_reports() {
    let sandbox = Sandbox::new(&config_with_roots(&["flappy"]));
    // Each tick is its own process: the only memory between them is the ledger.
    let first = sandbox.tick("flappy-converge", &[]);
    assert_eq!(
        actions(&first),
        pairs(&[("probe", "ineffective"), ("fail", "reported"), ("guarded", "gated"), ("note", "reported")])
    );
    // The probe ran and changed nothing: `ineffective`, naming the status it left.
    let probe = outcome(&first, "probe")["reason"].as_str().unwrap();
    assert!(probe.contains("\"flappy-probe\" ran and the symptom it answered is still there after it"), "{probe}");
    // A failing dispatch is `reported`, flagged, with the child's redacted error.
    let fail = outcome(&first, "fail");
    assert_eq!(fail["dispatchFailed"], true);
    assert_eq!(fail["op"], "flappy-fail");
    let reason = fail["reason"].as_str().unwrap();
    assert!(reason.contains("refused the connection"), "{reason}");
    // A dispatch that stops at a gate is `gated`, with the gate's name.
    let gated = outcome(&first, "guarded");
    assert_eq!(gated["gateName"], "hold");
    assert!(gated["reason"].as_str().unwrap().contains("chant approve flappy-guarded hold"), "{gated}");
    assert!(gated.get("dispatchFailed").is_none());
    assert!(
        log(&first).contains("remediated=0 ineffective=1 reported=2 skipped-budget=0 skipped-flap=0 gated=1"),
        "{first}"
    );
    assert_eq!(first["flap"], json!([{"ruleId": "probe", "run": 1}, {"ruleId": "fail", "run": 1}]));

    let second = sandbox.tick("flappy-converge", &[]);
    assert_eq!(actions(&second), actions(&first));
    assert_eq!(second["flap"], json!([{"ruleId": "probe", "run": 2}, {"ruleId": "fail", "run": 2}]));

    // The threshold (2) is reached: both dispatching rules are damped. The gate (threshold 1) and
    // the report (threshold 1) are not, however often they fired.
    let third = sandbox.tick("flappy-converge", &[]);
    assert_eq!(
        actions(&third),
        pairs(&[("probe", "skipped-flap"), ("fail", "skipped-flap"), ("guarded", "gated"), ("note", "reported")])
    );
    assert!(outcome(&third, "probe")["reason"].as_str().unwrap().contains("threshold 2"), "{third}");
    let runs = |t: &Value| -> Vec<(Value, Value)> {
        t["flap"].as_array().unwrap().iter().map(|f| (f["ruleId"].clone(), f["run"].clone())).collect()
    };
    assert_eq!(runs(&third), runs(&second), "damping neither counts nor resets");
    // Each damped run records when it was first damped: the cool-off counts from there.
    assert!(third["flap"].as_array().unwrap().iter().all(|f| f["dampedAt"] == third["startedAt"]), "{third}");
    let fourth = sandbox.tick("flappy-converge", &[]);
    assert_eq!(actions(&fourth), actions(&third));
    assert_eq!(fourth["flap"], third["flap"], "the time it was first damped is kept");
    assert_eq!(sandbox.values(&run_key("flappy", "flappy-probe")).len(), 2, "damped ticks dispatch nothing");
    assert_eq!(sandbox.values(&run_key("flappy", "flappy-guarded")).len(), 4, "the gate is dispatched every tick");
    let pending: Vec<Value> = sandbox.values(&gate_key("flappy-guarded"));
    assert_eq!(pending.len(), 1, "one pending fact, reused while it stands: {pending:?}");

    // A person clears one rule's damping by hand: the next tick dispatches it again, and the
    // other rule stays damped. A name that is not the op's, or not its rule's, is refused.
    let undamp = sandbox.project(&["operator", "undamp", "flappy-converge", "probe", "--actor", "ana"], &[]);
    undamp.code(0);
    assert!(undamp.stdout.contains("undamped flappy-converge (rule probe) by ana"), "{}", undamp.all());
    let undamped = sandbox.tick("flappy-converge", &[]);
    assert_eq!(
        actions(&undamped),
        pairs(&[("probe", "ineffective"), ("fail", "skipped-flap"), ("guarded", "gated"), ("note", "reported")])
    );
    let probe_run =
        |t: &Value| t["flap"].as_array().unwrap().iter().find(|f| f["ruleId"] == "probe").unwrap()["run"].clone();
    assert_eq!(probe_run(&undamped), 1, "its run starts again: {undamped}");
    // The fact is taken once: the next tick counts on from there, and damps at the threshold.
    let counting = sandbox.tick("flappy-converge", &[]);
    assert_eq!(probe_run(&counting), 2, "{counting}");
    assert_eq!(outcome(&sandbox.tick("flappy-converge", &[]), "probe")["action"], "skipped-flap");
    let typo = sandbox.project(&["operator", "undamp", "flappy-convergee"], &[]);
    typo.code(2);
    assert!(typo.stderr.contains("did you mean flappy-converge?"), "{}", typo.all());
    let no_rule = sandbox.project(&["operator", "undamp", "flappy-converge", "prob"], &[]);
    no_rule.code(2);
    assert!(
        no_rule.stderr.contains("flappy-converge has no rule prob; its rules are: probe, fail"),
        "{}",
        no_rule.all()
    );

    // The predicate clears: the runs reset, and a new drift dispatches again.
    sandbox.project(&["run", "flappy-apply"], &[]).code(0);
    let cleared = sandbox.tick("flappy-converge", &[]);
    assert_eq!(cleared["outcomes"], json!([]));
    assert_eq!(cleared["flap"], json!([]));
    std::fs::remove_file(sandbox.path("estates/flappy/flap.txt")).unwrap();
    let again = sandbox.tick("flappy-converge", &[]);
    assert_eq!(outcome(&again, "probe")["action"], "ineffective");
    assert_eq!(again["flap"], json!([{"ruleId": "probe", "run": 1}, {"ruleId": "fail", "run": 1}]));
}

/// What the test compares to prove a file was left alone.
fn fingerprint(path: &std::path::Path) -> (Vec<u8>, u32, u64, i64, i64) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    (std::fs::read(path).unwrap(), meta.permissions().mode() & 0o7777, meta.ino(), meta.mtime(), meta.mtime_nsec())
}

#[test]
fn adopt_safety_owned_dropped_is_delete_and_foreign_is_never_touched() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let foreign = sandbox.path("estates/site/notes.txt");
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    std::fs::write(&foreign, "the operator's own notes\n").unwrap();
    std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = fingerprint(&foreign);

    let first = sandbox.tick("site-converge", &[]);
    assert!(log(&first).contains("remediated=1"), "{first}");
    let owned = sandbox.values(&apply_key("site"))[0]["owned"].clone();
    assert!(owned.as_array().unwrap().contains(&json!("old.conf")), "{owned}");
    assert!(!owned.as_array().unwrap().contains(&json!("notes.txt")), "{owned}");

    // `old.conf` leaves the declaration: owned, undeclared, live -> a `delete` entry, reported;
    // the default apply never deletes, so it does not count as drift and nothing is dispatched.
    let drop = [(chant_e2e::declaration::SITE_DROP_VAR, "1")];
    let dropped = sandbox.tick("site-converge", &drop);
    assert_eq!(actions(&dropped), pairs(&[("owned-dropped", "reported")]));
    assert!(log(&dropped).contains("drifted=1 remediated=0 reported=1"), "{dropped}");
    assert_eq!(dropped["summary"]["adopted"], 0, "the lexicon never scans the root: {dropped}");
    assert_eq!(sandbox.read("estates/site/old.conf"), "legacy = true\n");

    // A drift while `old.conf` is dropped: the apply runs and still deletes nothing.
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let drifted = sandbox.tick("site-converge", &drop);
    assert_eq!(actions(&drifted), pairs(&[("drift-apply", "ran"), ("owned-dropped", "reported")]));
    assert_eq!(sandbox.read("estates/site/old.conf"), "legacy = true\n");
    assert_eq!(sandbox.read("estates/site/app.conf"), chant_e2e::declaration::SITE_APP_CONF);

    // The foreign file was never read into a change, never rewritten, never removed.
    assert_eq!(fingerprint(&foreign), before);
    for record in sandbox.ledger_lines_of(&sandbox.dir) {
        assert!(!record.1.contains("notes.txt"), "the foreign file reached the ledger: {record:?}");
    }
}

#[test]
fn the_dial_backstop_refuses_a_hand_edited_op_json() {
    // The runtime check in the tick (`runtime backstop: ...`) cannot be reached through the
    // macros: they refuse a mutating target under `observe` at build time, and the binary
    // re-validates its embedded catalog before any tick. So the backstop is exercised where a
    // table that did not come through the macros enters: `chant ops check` on the exported
    // op.json files, one of them edited by hand.
    // `CHANT_OPS_DIR` comes from the workspace's .cargo/config.toml, for this crate's build too.
    let exported = PathBuf::from(env!("CHANT_OPS_DIR")).join(env!("CARGO_PKG_NAME"));
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let embedded: Vec<Value> = serde_json::from_str(&sandbox.project(&["ops", "--json"], &[]).code(0).stdout).unwrap();
    let copy = sandbox.root().join("ops");
    std::fs::create_dir_all(&copy).unwrap();
    for doc in &embedded {
        let name = doc["name"].as_str().unwrap();
        let file = exported.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(&serde_json::from_str::<Value>(&text).unwrap(), doc, "{} is not the embedded op", file.display());
        std::fs::write(copy.join(format!("{name}.json")), text).unwrap();
    }
    let copy_arg = copy.display().to_string();
    let ok = sandbox.stock(&["ops", "check", &copy_arg], &[]);
    ok.code(0);
    assert!(ok.stdout.contains(&format!("{} op.json file(s) checked: no problems", embedded.len())), "{}", ok.all());

    // The edit: `site-converge` under `observe`, which may not run the mutating `site-apply`.
    let file = copy.join("site-converge.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["converge"]["dial"] = json!("observe");
    doc["labels"]["Dial"] = json!("observe");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let refused = sandbox.stock(&["ops", "check", &copy_arg], &[]);
    refused.code(1);
    let err = &refused.stderr;
    for rule in ["drift-apply", "first-apply"] {
        let line = err.lines().find(|l| l.contains(rule)).unwrap_or_else(|| panic!("no problem for {rule}:\n{err}"));
        assert!(line.contains("site-converge.json") && line.contains("site-converge"), "{line}");
        assert!(line.contains("site-apply") && line.contains("observe") && line.contains("mutating"), "{line}");
    }
    assert!(err.contains("2 problem(s)"), "{err}");
    assert_eq!(sandbox.tip(), None, "checking touches no ledger");
}

#[test]
fn an_apply_that_makes_its_files_root_says_so_and_the_next_does_not() {
    // `estates/site` does not exist yet: the first apply makes it, which a mistyped
    // `files_root` would make somewhere else, so it is said with the key to check.
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    assert!(!sandbox.path("estates/site").exists());
    let first = sandbox.project(&["run", "site-apply"], &[]);
    first.code(0);
    assert!(first.all().contains("created the files root "), "{}", first.all());
    assert!(first.all().contains("set `files_root` under `[env.site]` in chant.toml"), "{}", first.all());
    assert!(sandbox.path("estates/site").is_dir());
    let second = sandbox.project(&["run", "site-apply"], &[]);
    second.code(0);
    assert!(!second.all().contains("created the files root"), "{}", second.all());
}
