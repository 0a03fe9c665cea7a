//! `chant ops check`: every compile-time refusal, edited by hand into an op.json, is refused by the
//! loader, naming the file, the op, the rule id and the reason. Runs the real stock binary over
//! real files.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn step(kind: &str, class: &str, args: Value) -> Value {
    json!({"kind": kind, "class": class, "args": args})
}

fn op(name: &str, class: &str, steps: Vec<Value>) -> Value {
    json!({"version": 1, "name": name, "overview": format!("{name} overview"), "env": "staging",
           "class": class, "phases": [{"name": "Main", "steps": steps}]})
}

fn rule(id: &str, when: Value, then: Value) -> Value {
    json!({"id": id, "when": when, "then": then, "why": "because", "source": {"file": "src/ops.rs", "line": 10}})
}

fn eq(field: &str, value: Value) -> Value {
    json!({"kind": "field-comparison", "field": field, "op": "eq", "value": value})
}

fn run(op: &str) -> Value {
    json!({"kind": "run", "op": op})
}

fn report(reason: &str) -> Value {
    json!({"kind": "report", "reason": reason})
}

fn converge(dial: &str, rules: Vec<Value>) -> Value {
    json!({"version": 1, "name": "staging-converge", "overview": "Converge staging.", "env": "staging",
           "labels": {"Converge": "true", "Dial": dial, "Env": "staging"},
           "schedule": {"cron": "*/10 * * * *", "overlap": "skip"},
           "class": "read-only", "phases": [],
           "converge": {"dial": dial, "budget": 3, "rules": rules}})
}

/// The valid set every case starts from: the DESIGN.md staging project.
fn base() -> Vec<(&'static str, Value)> {
    vec![
        (
            "staging-apply.json",
            op("staging-apply", "mutating", vec![step("apply", "mutating", json!({"env": "staging"}))]),
        ),
        (
            "staging-teardown.json",
            op("staging-teardown", "destructive", vec![step("teardown", "destructive", json!({"env": "staging"}))]),
        ),
        (
            "staging-smoke.json",
            op(
                "staging-smoke",
                "read-only",
                vec![step("http_check", "read-only", json!({"url": "http://127.0.0.1:1/"}))],
            ),
        ),
        (
            "staging-converge.json",
            converge(
                "apply",
                vec![
                    rule("drift-apply", eq("status", json!("drifted")), run("staging-apply")),
                    rule(
                        "adopt-report",
                        json!({"kind": "field-comparison", "field": "adoptCount", "op": "gt", "value": 0}),
                        report("unowned resources present"),
                    ),
                    rule("unknown-report", eq("status", json!("unknown")), report("not fully observed")),
                ],
            ),
        ),
    ]
}

struct Outcome {
    code: i32,
    stderr: String,
}

fn check(docs: &[(&str, Value)]) -> (tempfile::TempDir, Outcome) {
    let dir = tempfile::tempdir().unwrap();
    for (file, doc) in docs {
        std::fs::write(dir.path().join(file), serde_json::to_string_pretty(doc).unwrap() + "\n").unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_chant")).args(["ops", "check"]).arg(dir.path()).output().unwrap();
    let outcome =
        Outcome { code: out.status.code().unwrap_or(-1), stderr: String::from_utf8_lossy(&out.stderr).into_owned() };
    (dir, outcome)
}

fn converge_doc<'a>(docs: &'a mut [(&'static str, Value)]) -> &'a mut Value {
    &mut docs.iter_mut().find(|(f, _)| *f == "staging-converge.json").unwrap().1
}

fn rule_at<'a>(docs: &'a mut [(&'static str, Value)], i: usize) -> &'a mut Value {
    &mut converge_doc(docs)["converge"]["rules"][i]
}

/// Applies `edit` to the valid base set and asserts the check refuses it, naming the converge
/// file, the op, the rule (when given) and every `needles` fragment of the reason.
fn refused(edit: impl FnOnce(&mut Vec<(&'static str, Value)>), rule: Option<&str>, needles: &[&str]) {
    let mut docs = base();
    edit(&mut docs);
    let (dir, out) = check(&docs);
    assert_eq!(out.code, 1, "expected a refusal, got exit {}: {}", out.code, out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| needles.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no line names {needles:?}:\n{}", out.stderr));
    assert!(line.contains(&dir.path().display().to_string()), "the file is not named: {line}");
    if let Some(r) = rule {
        assert!(line.contains(&format!("rule \"{r}\"")), "the rule is not named: {line}");
    }
}

#[test]
fn the_base_set_is_valid() {
    let (_d, out) = check(&base());
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_missing_why_is_refused() {
    refused(|d| drop(rule_at(d, 0).as_object_mut().unwrap().remove("why")), Some("drift-apply"), &["why"]);
}

#[test]
fn a_blank_why_is_refused() {
    refused(|d| rule_at(d, 0)["why"] = json!("   "), Some("drift-apply"), &["why"]);
}

#[test]
fn an_unknown_field_is_refused_with_a_suggestion() {
    refused(
        |d| rule_at(d, 0)["when"]["field"] = json!("stauts"),
        Some("drift-apply"),
        &["stauts", "did you mean `status`"],
    );
}

#[test]
fn a_snake_case_field_is_refused() {
    refused(|d| rule_at(d, 1)["when"]["field"] = json!("adopt_count"), Some("adopt-report"), &["adoptCount"]);
}

#[test]
fn a_value_outside_the_domain_is_refused() {
    refused(
        |d| rule_at(d, 0)["when"]["value"] = json!("drifed"),
        Some("drift-apply"),
        &["drifed", "did you mean `drifted`"],
    );
}

#[test]
fn an_ordering_on_a_string_field_is_refused() {
    refused(
        |d| rule_at(d, 0)["when"] = json!({"kind": "field-comparison", "field": "status", "op": "gt", "value": 1}),
        Some("drift-apply"),
        &["compares numbers"],
    );
}

#[test]
fn a_string_literal_for_a_count_is_refused() {
    refused(|d| rule_at(d, 1)["when"]["value"] = json!("1"), Some("adopt-report"), &["adoptCount", "a number"]);
}

#[test]
fn a_comparison_on_an_array_field_is_refused() {
    refused(
        |d| rule_at(d, 1)["when"] = json!({"kind": "field-comparison", "field": "components", "op": "eq", "value": 0}),
        Some("adopt-report"),
        &["array", "truthy"],
    );
}

#[test]
fn a_predicate_outside_the_subset_is_refused() {
    refused(
        |d| {
            rule_at(d, 0)["when"] =
                json!({"kind": "field-comparison", "field": "status", "op": "matches", "value": ".*"})
        },
        Some("drift-apply"),
        &["evaluable subset", "matches"],
    );
    refused(
        |d| rule_at(d, 0)["when"] = json!({"kind": "closure", "source": "s => true"}),
        Some("drift-apply"),
        &["evaluable subset", "closure"],
    );
}

#[test]
fn a_run_naming_no_op_is_refused() {
    refused(|d| rule_at(d, 0)["then"] = run("staging-aply"), Some("drift-apply"), &["staging-aply", "did you mean"]);
}

#[test]
fn a_mutating_target_under_observe_is_refused() {
    refused(
        |d| {
            let c = converge_doc(d);
            c["converge"]["dial"] = json!("observe");
            c["labels"]["Dial"] = json!("observe");
        },
        Some("drift-apply"),
        &["mutating", "`observe`"],
    );
}

#[test]
fn a_mutating_target_under_reconcile_is_refused() {
    refused(
        |d| {
            let c = converge_doc(d);
            c["converge"]["dial"] = json!("reconcile");
            c["labels"]["Dial"] = json!("reconcile");
        },
        Some("drift-apply"),
        &["mutating", "reconcile"],
    );
}

#[test]
fn a_destructive_target_is_refused() {
    refused(|d| rule_at(d, 0)["then"] = run("staging-teardown"), Some("drift-apply"), &["destructive", "every dial"]);
}

#[test]
fn an_op_that_lies_about_its_class_is_refused_and_checked_by_its_steps() {
    // Claiming read-only does not make an apply read-only: the class is folded from the steps.
    refused(
        |d| d.iter_mut().find(|(f, _)| *f == "staging-apply.json").unwrap().1["class"] = json!("read-only"),
        None,
        &["staging-apply", "fold to mutating"],
    );
    refused(
        |d| {
            let apply = &mut d.iter_mut().find(|(f, _)| *f == "staging-apply.json").unwrap().1;
            apply["phases"][0]["steps"][0]["class"] = json!("read-only");
            apply["class"] = json!("read-only");
            let c = converge_doc(d);
            c["converge"]["dial"] = json!("observe");
            c["labels"]["Dial"] = json!("observe");
        },
        None,
        &["recorded as read-only but is mutating"],
    );
}

#[test]
fn adopt_with_a_mutating_dispatch_is_refused() {
    refused(
        |d| rule_at(d, 1)["then"] = run("staging-apply"),
        Some("adopt-report"),
        &["adoptCount", "never auto-claimed"],
    );
}

#[test]
fn a_non_read_only_observer_is_refused() {
    refused(
        |d| {
            let c = converge_doc(d);
            c["converge"]["observe"] = step("shell", "mutating", json!({"cmd": "echo"}));
            c["converge"]["rules"] = json!([rule("drift-restart", eq("status", json!("drifted")), report("x"))]);
        },
        None,
        &["observer", "read-only"],
    );
}

#[test]
fn a_resource_mode_rule_reading_a_converge_field_is_refused() {
    refused(
        |d| {
            let c = converge_doc(d);
            c["converge"]["observe"] = step("sprite_services_observe", "read-only", json!({"box": true}));
            c["converge"]["rules"] = json!([rule(
                "adopt-report",
                json!({"kind": "field-comparison", "field": "adoptCount", "op": "gt", "value": 0}),
                report("x")
            )]);
        },
        Some("adopt-report"),
        &["not a field of ResourceSymptom"],
    );
}

#[test]
fn duplicate_rule_ids_are_refused() {
    refused(|d| rule_at(d, 2)["id"] = json!("drift-apply"), Some("drift-apply"), &["duplicate rule id"]);
}

#[test]
fn an_empty_rule_table_is_refused() {
    refused(|d| converge_doc(d)["converge"]["rules"] = json!([]), None, &["at least one rule"]);
}

#[test]
fn a_negative_or_fractional_budget_is_refused() {
    refused(|d| converge_doc(d)["converge"]["budget"] = json!(-1), None, &["budget"]);
    refused(|d| converge_doc(d)["converge"]["budget"] = json!(1.5), None, &["budget"]);
}

#[test]
fn an_unknown_dial_is_refused() {
    refused(|d| converge_doc(d)["converge"]["dial"] = json!("yolo"), None, &["unknown dial `yolo`"]);
}

#[test]
fn bad_names_are_refused() {
    refused(|d| converge_doc(d)["name"] = json!("Staging_Converge"), None, &["op name", "[a-z][a-z0-9-]*"]);
    refused(|d| rule_at(d, 0)["id"] = json!("Drift Apply"), Some("Drift Apply"), &["rule id", "[a-z][a-z0-9-]*"]);
}

#[test]
fn invalid_cron_is_refused() {
    refused(|d| converge_doc(d)["schedule"]["cron"] = json!("*/61 * * * *"), None, &["minute", "1-59"]);
    refused(|d| converge_doc(d)["schedule"]["cron"] = json!("*/10 * * * * *"), None, &["exactly 5"]);
    refused(|d| converge_doc(d)["schedule"]["cron"] = json!("0 0 30 2 *"), None, &["never fires"]);
}

#[test]
fn a_flap_threshold_below_one_is_refused() {
    refused(|d| rule_at(d, 0)["flapThreshold"] = json!(0), Some("drift-apply"), &["flapThreshold", ">= 1"]);
}

#[test]
fn an_unknown_rule_key_is_refused() {
    refused(|d| rule_at(d, 0)["wy"] = json!("x"), Some("drift-apply"), &["unknown rule key `wy`"]);
}

#[test]
fn invalid_json_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("broken.json");
    std::fs::write(&f, "{\"version\": 1,").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chant")).args(["ops", "check"]).arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&f.display().to_string()) && err.contains("not valid JSON"), "{err}");
}

#[test]
fn a_missing_path_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_chant"))
        .args(["ops", "check"])
        .arg(Path::new("/nonexistent/chant-ops"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
