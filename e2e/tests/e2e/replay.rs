//! `replay <converge-op>`: the recorded ticks of `site-converge`, re-decided with the compiled
//! table (no difference over 50 ticks), with a table from an op.json file that lacks one rule
//! (exactly the ticks where that rule fired differ), over a window (`--limit`), with a record
//! from before symptoms were recorded (counted, not replayed), and with a refused table (exit 1,
//! the messages `ops check` prints).

use std::collections::BTreeSet;

use serde_json::Value;

use super::support::{Sandbox, config_with_roots, converge_key};

/// Ticks `site-converge` 50 times, drifting `app.conf` before every fifth tick; returns the ids
/// of the ticks where `drift-apply` fired.
fn fifty_ticks(sandbox: &Sandbox) -> BTreeSet<String> {
    let mut fired = BTreeSet::new();
    for n in 0..50 {
        if n % 5 == 4 {
            std::fs::write(sandbox.path("estates/site/app.conf"), format!("port = {n}\n")).unwrap();
        }
        let tick = sandbox.tick("site-converge", &[]);
        if tick["firedRuleIds"].as_array().unwrap().iter().any(|r| r == "drift-apply") {
            fired.insert(tick["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(fired.len(), 10, "every fifth tick drifted");
    fired
}

/// The embedded op.json documents, by name.
fn exports(sandbox: &Sandbox) -> Vec<Value> {
    sandbox.project(&["ops", "--json"], &[]).code(0).json().as_array().unwrap().clone()
}

/// Writes `doc` to `<root>/<file>` and returns the path.
fn write(sandbox: &Sandbox, file: &str, doc: &Value) -> String {
    let path = sandbox.root().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path.display().to_string()
}

fn site_converge(sandbox: &Sandbox) -> Value {
    exports(sandbox).into_iter().find(|d| d["name"] == "site-converge").unwrap()
}

#[test]
fn replay_finds_nothing_new_in_an_unchanged_table_and_exactly_the_ticks_of_a_removed_rule() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let fired = fifty_ticks(&sandbox);

    let same = sandbox.project(&["replay", "site-converge", "--json"], &[]).code(0).json();
    assert_eq!(same["summary"]["ticks"], 50, "{same}");
    assert_eq!(same["summary"]["replayed"], 50, "{same}");
    assert_eq!(same["summary"]["differ"], 0, "{same}");
    assert_eq!(same["ticks"], serde_json::json!([]), "{same}");
    assert_eq!(same["table"], "compiled");

    let mut doc = site_converge(&sandbox);
    let rules = doc["converge"]["rules"].as_array_mut().unwrap();
    rules.retain(|r| r["id"] != "drift-apply");
    let file = write(&sandbox, "without-drift-apply.json", &doc);
    let without = sandbox.project(&["replay", "site-converge", "--rules", &file, "--json"], &[]).code(0).json();
    let differing: BTreeSet<String> =
        without["ticks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(differing, fired, "{without}");
    assert_eq!(without["summary"]["differ"], 10);
    assert_eq!(without["summary"]["dispatchesRemoved"], 10);
    assert_eq!(without["summary"]["dispatchesAdded"], 0);
    for t in without["ticks"].as_array().unwrap() {
        let d = &t["differences"][0];
        assert_eq!((d["ruleId"].as_str(), &d["replayed"]), (Some("drift-apply"), &Value::Null), "{t}");
        assert_eq!((d["recorded"]["action"].as_str(), d["recorded"]["op"].as_str()), (Some("ran"), Some("site-apply")));
    }

    // Text: one block per differing tick, then the summary line.
    let text = sandbox.project(&["replay", "site-converge", "--rules", &file], &[]);
    text.code(0);
    assert_eq!(text.stdout.matches("    drift-apply: recorded ran → site-apply, replayed not fired").count(), 10);
    assert!(
        text.stdout.contains(
            "replay(site-converge): ticks=50 replayed=50 differ=10 not-replayable=0 failed=0 dispatches-added=0 dispatches-removed=10"
        ),
        "{}",
        text.all()
    );

    // The newest 7 only: the one before them anchors the flap runs.
    let window = sandbox.project(&["replay", "site-converge", "--limit", "7", "--json"], &[]).code(0).json();
    assert_eq!((window["summary"]["ticks"].as_u64(), window["summary"]["differ"].as_u64()), (Some(7), Some(0)));
    let since = sandbox.project(&["replay", "site-converge", "--since", "2999-01-01T00:00:00Z", "--json"], &[]);
    assert_eq!(since.code(0).json()["summary"]["ticks"], 0);
}

#[test]
fn a_record_from_before_symptoms_is_counted_as_not_replayable() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let key = converge_key("site", "site-converge");
    sandbox.tick("site-converge", &[]);
    // A record as an older chant wrote it: the same tick, without its symptom.
    let mut old = sandbox.values(&key).pop().unwrap();
    old.as_object_mut().unwrap().remove("symptom");
    old["id"] = Value::from("00000000-0000-4000-8000-000000000000");
    sandbox.ledger_of(&sandbox.dir).append(&key, &serde_json::to_string(&old).unwrap()).unwrap();
    sandbox.tick("site-converge", &[]);
    let out = sandbox.project(&["replay", "site-converge", "--json"], &[]).code(0).json();
    let s = &out["summary"];
    assert_eq!((s["ticks"].as_u64(), s["replayed"].as_u64(), s["notReplayable"].as_u64()), (Some(3), Some(2), Some(1)));
    assert_eq!(s["differ"], 0, "{out}");
}

#[test]
fn a_refused_table_exits_1_with_the_messages_ops_check_prints() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let mut doc = site_converge(&sandbox);
    // Under `observe`, the mutating site-apply may not be dispatched: two rules are refused.
    doc["converge"]["dial"] = Value::from("observe");
    doc["labels"]["Dial"] = Value::from("observe");
    let file = write(&sandbox, "refused.json", &doc);
    for other in exports(&sandbox).into_iter().filter(|d| d["name"] != "site-converge") {
        write(&sandbox, &format!("others/{}.json", other["name"].as_str().unwrap()), &other);
    }
    let others = sandbox.root().join("others").display().to_string();
    let check = sandbox.project(&["ops", "check", &file, &others], &[]);
    check.code(1);
    let replay = sandbox.project(&["replay", "site-converge", "--rules", &file], &[]);
    replay.code(1);
    let errors = |text: &str| text.lines().filter(|l| l.starts_with("error: ")).map(str::to_owned).collect::<Vec<_>>();
    let expected = errors(&check.stderr);
    assert_eq!(expected.len(), 2, "{}", check.all());
    assert!(expected.iter().all(|l| l.contains("refused.json: op \"site-converge\", rule \"")), "{expected:?}");
    assert_eq!(errors(&replay.stderr), expected, "{}", replay.all());
    assert_eq!(replay.stdout, "", "nothing was replayed");

    // Usage: a file holding another op, a malformed --limit.
    let apply = exports(&sandbox).into_iter().find(|d| d["name"] == "site-apply").unwrap();
    let other = write(&sandbox, "apply.json", &apply);
    let wrong = sandbox.project(&["replay", "site-converge", "--rules", &other], &[]);
    wrong.code(2);
    assert!(wrong.stderr.contains("not the ConvergeOp `site-converge`"), "{}", wrong.all());
    sandbox.project(&["replay", "site-converge", "--limit", "0"], &[]).code(2);
    sandbox.project(&["replay", "site-apply"], &[]).code(2);
}
