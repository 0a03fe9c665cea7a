//! The macros seen from the runtime: ops declared with `op!` / `converge_op!` are registered,
//! their embedded op.json parses into the typed model (unknown fields denied) and re-serialises to
//! the same bytes, ids are stable under reordering, each rule carries its source line, and
//! `cargo build` exports the file and keeps it fresh.

use chant::model::{Action, ClassKind, DialKind, OpDocument, Step};
use chant::prelude::*;

/// A user step, named by `step(..., run = ...)` below.
fn purge_cache(_cx: &StepContext<'_>) -> StepResult {
    Ok(serde_json::json!({ "purged": true }))
}

op! {
    name: "it-apply",
    overview: "Apply the it env.",
    env: "it",
    phases: [ phase("Apply", [ apply(env = "it") ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo ${HOME} failed", class = read_only) ]) ],
}

op! {
    name: "it-smoke",
    overview: "Probe the it env.",
    phases: [ phase("Probe", [ http_check(url = "http://127.0.0.1:${PORT}/health") ]) ],
}

op! {
    name: "it-purge",
    overview: "Purge a cache, behind a gate.",
    phases: [
        phase("Approve", [ gate("purge-approval", description = "a human approves", timeout = "48h") ]),
        phase("Purge", [ step("purge-cache", class = destructive, run = purge_cache) ]),
    ],
}

// The line numbers of the three `when!` below are asserted in `source_lines_point_at_each_when`.
converge_op! {
    name: "it-converge",
    env: "it",
    dial: apply,
    budget: 2,
    schedule: "*/10 * * * *",
    tz: "Europe/Berlin",
    rules: [
        when!(eq(status, "drifted") => run("it-apply"), id = "drift-apply",
              why = "Live state drifted; re-applying converges it."),
        when!(gt(adopt_count, 0) => run("it-smoke"),
              why = "A read-only probe may run on the adopt signal.", flap_threshold = 5),
        when!(any_of(truthy(unobserved_reasons), eq(status, "unknown")) => report("partly unobserved"),
              why = "unknown never remediates."),
    ],
}

// The same two rules in the other order, without ids, to show derived ids do not depend on order.
converge_op! {
    name: "it-order-a",
    env: "it",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "a"),
        when!(falsy(components) => report("nothing declared"), why = "b"),
    ],
}

converge_op! {
    name: "it-order-b",
    env: "it",
    rules: [
        when!(falsy(components) => report("nothing declared"), why = "b"),
        when!(eq(status, "drifted") => report("drifted"), why = "a"),
    ],
}

converge_op! {
    name: "it-box",
    env: "box",
    dial: apply,
    observe: sprite_services_observe(box = true),
    rules: [
        when!(eq(status, "drifted") => run("it-smoke"), why = "resource mode"),
    ],
}

fn doc(name: &str) -> (&'static str, OpDocument) {
    let op = chant::registry::find(name).unwrap_or_else(|| panic!("{name} is not registered"));
    let doc: OpDocument = serde_json::from_str(op.json).unwrap_or_else(|e| panic!("{name}: {e}\n{}", op.json));
    (op.json, doc)
}

fn bytes(doc: &OpDocument) -> String {
    let mut s = serde_json::to_string_pretty(doc).unwrap();
    s.push('\n');
    s
}

#[test]
fn declared_ops_are_registered_with_their_class_and_crate() {
    let names: Vec<&str> = chant::registry::ops().iter().map(|o| o.name).collect();
    for n in ["it-apply", "it-smoke", "it-purge", "it-converge", "it-order-a", "it-order-b", "it-box"] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let class = |n: &str| chant::registry::find(n).unwrap().class;
    assert_eq!(class("it-apply"), ClassKind::Mutating);
    assert_eq!(class("it-smoke"), ClassKind::ReadOnly);
    assert_eq!(class("it-purge"), ClassKind::Destructive);
    assert_eq!(class("it-converge"), ClassKind::ReadOnly);
    assert!(chant::registry::ops().iter().all(|o| o.krate == "chant-ops"), "the package name");
}

#[test]
fn user_steps_are_linked_by_name() {
    let op = chant::registry::find("it-purge").unwrap();
    assert_eq!(op.steps.len(), 1);
    let (name, f) = op.steps[0];
    assert_eq!(name, "purge-cache");
    let args = Default::default();
    let cx = StepContext { op: "it-purge", env: None, resource: None, args: &args };
    assert_eq!(f(&cx).unwrap(), serde_json::json!({ "purged": true }));
}

#[test]
fn every_document_round_trips_byte_identically() {
    for op in chant::registry::ops().iter().filter(|o| o.name.starts_with("it-")) {
        let (json, doc) = doc(op.name);
        assert_eq!(bytes(&doc), json, "{} does not round-trip", op.name);
        assert_eq!(doc.class, op.class);
        assert_eq!(doc.class, doc.folded_class());
        assert!(json.ends_with("}\n"));
    }
}

#[test]
fn converge_document_has_the_contract_shape() {
    let (_, d) = doc("it-converge");
    assert_eq!(d.version, 1);
    assert_eq!(d.env.as_deref(), Some("it"));
    assert_eq!(d.overview, "Converge the it environment toward its declaration (dial: apply)");
    let labels: Vec<(&str, &str)> = d.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(labels, [("Converge", "true"), ("Dial", "apply"), ("Env", "it")]);
    let s = d.schedule.as_ref().unwrap();
    assert_eq!((s.cron.as_str(), s.tz.as_deref()), ("*/10 * * * *", Some("Europe/Berlin")));
    assert!(d.phases.is_empty());
    let c = d.converge.as_ref().unwrap();
    assert_eq!((c.dial, c.budget), (DialKind::Apply, 2));
    let ids: Vec<&str> = c.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["drift-apply", "adopt-count-gt-0-run-it-smoke", "any-unobserved-reasons-truthy-or-status-eq-unknown-35b151c2"]
    );
    assert_eq!(c.rules[1].flap_threshold, Some(5));
    assert_eq!(c.rules[0].flap_threshold, None);
    assert_eq!(c.rules[0].then, Action::Run { op: chant::model::Name::new("it-apply").unwrap() });
    let json = chant::registry::find("it-converge").unwrap().json;
    assert!(json.contains("\"kind\": \"field-comparison\""), "{json}");
    assert!(json.contains("\"field\": \"adoptCount\""), "{json}");
    assert!(json.contains("\"overlap\": \"skip\""), "{json}");
    assert!(json.contains("\"phases\": []"), "{json}");
}

#[test]
fn step_arguments_keep_variables_and_fold_classes() {
    let (_, d) = doc("it-apply");
    let report = &d.on_failure[0].steps[0];
    assert_eq!(report.kind(), "shell");
    assert_eq!(report.class(), ClassKind::ReadOnly);
    let Step::Shell { args, .. } = report else { panic!("{report:?}") };
    assert_eq!(args.cmd, "echo ${HOME} failed");
    assert!(args.class.is_none());
    let (_, d) = doc("it-purge");
    let gate = &d.phases[0].steps[0];
    assert_eq!((gate.kind(), gate.name().map(|n| n.as_str())), ("gate", Some("purge-approval")));
    let Step::Gate { args, .. } = gate else { panic!("{gate:?}") };
    assert_eq!(args.timeout.as_ref().map(|t| t.as_str()), Some("48h"));
    let user = &d.phases[1].steps[0];
    let Step::User { run, .. } = user else { panic!("{user:?}") };
    assert_eq!(
        (user.kind(), user.name().map(|n| n.as_str()), run.as_str()),
        ("step", Some("purge-cache"), "purge_cache")
    );
    assert_eq!(user.class(), ClassKind::Destructive);
    let (_, d) = doc("it-box");
    let observe = d.converge.unwrap().observe.unwrap();
    assert_eq!(observe.kind(), "sprite_services_observe");
    let Step::Lexicon(observe) = observe else { panic!("{observe:?}") };
    assert_eq!(observe.args.get("box"), Some(&serde_json::Value::Bool(true)));
    assert_eq!(observe.class, ClassKind::ReadOnly, "the class the box lexicon declares");
}

#[test]
fn derived_ids_do_not_depend_on_rule_order() {
    let ids = |n: &str| {
        let (_, d) = doc(n);
        let mut v: Vec<String> = d.converge.unwrap().rules.into_iter().map(|r| r.id.into_string()).collect();
        v.sort();
        v
    };
    assert_eq!(ids("it-order-a"), ids("it-order-b"));
    assert_eq!(ids("it-order-a"), ["components-falsy-report-nothing-declared", "status-eq-drifted-report-drifted"]);
}

#[test]
fn source_lines_point_at_each_when() {
    let (_, d) = doc("it-converge");
    let text = include_str!("macros.rs");
    let expected: Vec<u32> = text
        .lines()
        .enumerate()
        .skip_while(|(_, l)| !l.contains("name: \"it-converge\""))
        .filter(|(_, l)| l.trim_start().starts_with("when!("))
        .take(3)
        .map(|(i, _)| u32::try_from(i + 1).unwrap())
        .collect();
    let got: Vec<u32> = d.converge.as_ref().unwrap().rules.iter().map(|r| r.source.as_ref().unwrap().line).collect();
    assert_eq!(got, expected);
    // Relative to the repository root (#15.5), so `git blame <file> -L <line>` there finds it.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for r in &d.converge.unwrap().rules {
        let source = r.source.as_ref().unwrap();
        assert_eq!(source.file, "chant/tests/integration/macros.rs");
        let line = std::fs::read_to_string(root.join(&source.file)).unwrap();
        assert!(line.lines().nth(source.line as usize - 1).unwrap().trim_start().starts_with("when!("));
    }
}

#[test]
fn the_build_exports_each_op_and_the_bytes_match() {
    // `.cargo/config.toml` sets CHANT_OPS_DIR for every build in this workspace; the test binary
    // sees the same value, so it can find what the build wrote.
    let Some(dir) = option_env!("CHANT_OPS_DIR") else {
        panic!("CHANT_OPS_DIR is not set: build through the workspace's .cargo/config.toml");
    };
    for n in ["it-apply", "it-converge", "it-box"] {
        let path = std::path::Path::new(dir).join("chant-ops").join(format!("{n}.json"));
        let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            on_disk,
            chant::registry::find(n).unwrap().json,
            "{} differs from the embedded copy",
            path.display()
        );
    }
}

/// Declares the `it` env its ConvergeOps read (empty: these tests only read their op.json), so
/// the catalog of this test binary loads.
fn it_env() -> chant::lexicon::EnvDeclaration {
    chant::lexicon::EnvDeclaration::new()
}

chant::lexicon::inventory::submit! { chant::lexicon::DeclaredEnv::new("it", it_env) }
