//! `tick <op> --plan`: observes and plans exactly as a tick does and writes nothing. The ledger
//! branch tip, the lease refs and the run records are unchanged by a plan, and the next real
//! tick records exactly what the plan predicted (its dispatches succeed here, and the
//! observation after them backs them as repairs), or, where a dispatch changes nothing, what the
//! plan decided with the verification's verdict on top.

use serde_json::Value;

use super::support::{Sandbox, config_with_roots, converge_key, run_key};

/// The parts of a tick record a plan predicts.
const PREDICTED: [&str; 7] = ["fired", "firedRuleIds", "outcomes", "flap", "summary", "log", "symptom"];

fn leases(sandbox: &Sandbox) -> String {
    sandbox.git(&sandbox.dir, &["for-each-ref", "--format=%(refname)", "refs/chant/"])
}

/// Plans `op` with `--json`, asserting that nothing was written, and returns the plan.
#[track_caller]
fn plan(sandbox: &Sandbox, op: &str, env: &str, dispatched: &str) -> Value {
    let (tip, refs) = (sandbox.tip(), leases(sandbox));
    let runs = sandbox.values(&run_key(env, dispatched)).len();
    let plan = sandbox.project(&["tick", op, "--plan", "--json"], &[]).code(0).json();
    assert_eq!(sandbox.tip(), tip, "a plan wrote a commit");
    assert_eq!(leases(sandbox), refs, "a plan touched a lease");
    assert_eq!(sandbox.values(&run_key(env, dispatched)).len(), runs, "a plan dispatched");
    plan
}

#[track_caller]
fn assert_predicted(plan: &Value, tick: &Value) {
    for field in PREDICTED {
        assert_eq!(plan[field], tick[field], "{field}\n--- plan\n{plan}\n--- tick\n{tick}");
    }
}

/// The decisions of a tick, before the observation after its dispatches judged them: what a plan
/// predicts. A verified outcome (`ineffective`, `unverified`) reads as the `ran` it was decided as.
fn decided(tick: &Value) -> Value {
    let mut outcomes = tick["outcomes"].clone();
    for o in outcomes.as_array_mut().unwrap() {
        if o["action"] == "ineffective" || o["action"] == "unverified" {
            o["action"] = "ran".into();
            o.as_object_mut().unwrap().remove("reason");
        }
    }
    outcomes
}

#[test]
fn a_plan_writes_nothing_and_predicts_the_next_tick() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    // Before anything is applied: the first apply.
    let first = plan(&sandbox, "site-converge", "site", "site-apply");
    assert_eq!(sandbox.tip(), None, "the ledger branch does not exist yet");
    let rules: Vec<(&str, &str)> = first["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["ruleId"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rules,
        vec![
            ("drift-apply", "not-fired"),
            ("first-apply", "ran"),
            ("owned-dropped", "not-fired"),
            ("adopt-report", "not-fired"),
            ("unknown-report", "not-fired")
        ]
    );
    assert_eq!(first["symptom"]["status"], "unrecorded", "{first}");
    let tick = sandbox.tick("site-converge", &[]);
    assert_predicted(&first, &tick);

    // Drift: the plan says drift-apply would run, and it does.
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let drift = plan(&sandbox, "site-converge", "site", "site-apply");
    assert_eq!(drift["symptom"]["status"], "drifted", "{drift}");
    assert_eq!(drift["outcomes"][0]["ruleId"], "drift-apply");
    let tick = sandbox.tick("site-converge", &[]);
    assert_predicted(&drift, &tick);
    assert_eq!(sandbox.values(&converge_key("site", "site-converge")).len(), 2, "plans are not ticks");

    // In sync: nothing fires.
    let calm = plan(&sandbox, "site-converge", "site", "site-apply");
    assert_eq!(calm["outcomes"], serde_json::json!([]), "{calm}");
    assert_predicted(&calm, &sandbox.tick("site-converge", &[]));
}

#[test]
fn a_plan_shows_every_rule_and_what_the_budget_leaves_out() {
    let sandbox = Sandbox::new(&config_with_roots(&["busy"]));
    let out = sandbox.project(&["tick", "busy-converge", "--plan"], &[]);
    out.code(0);
    let text = &out.stdout;
    for needle in [
        "plan busy-converge@busy (dial observe, budget 2): nothing is recorded, dispatched or leased",
        "symptom: status=unrecorded",
        "busy-report  neq(status, \"reconciled\")  fired → reported: busy is not reconciled",
        "probe-one    neq(status, \"reconciled\")  fired → would run busy-one",
        "probe-three  neq(status, \"reconciled\")  fired → skipped-budget (run busy-three): the budget of 2",
        "plan: converge(busy): drifted=1 would-run=2 reported=1 skipped-budget=2",
    ] {
        assert!(text.contains(needle), "{needle}\n{}", out.all());
    }
    assert_eq!(sandbox.tip(), None, "{}", out.all());
    let tick = sandbox.tick("busy-converge", &[]);
    let plan = sandbox.project(&["tick", "busy-converge", "--plan", "--json"], &[]).code(0).json();
    // The second plan reads the first tick's flap runs, as the second tick will.
    assert_eq!(plan["flap"].as_array().unwrap().len(), 2, "{plan}");
    assert_ne!(plan["flap"], tick["flap"], "the runs grow with each dispatching tick");
    // The probes change nothing, so the tick finds them ineffective: the plan predicted its
    // decisions, not the verdict of the observation after them.
    let next = sandbox.tick("busy-converge", &[]);
    for field in ["fired", "firedRuleIds", "flap", "symptom"] {
        assert_eq!(plan[field], next[field], "{field}\n--- plan\n{plan}\n--- tick\n{next}");
    }
    assert_eq!(plan["outcomes"], decided(&next), "--- plan\n{plan}\n--- tick\n{next}");
    assert_eq!(next["summary"]["ineffective"], 2, "{next}");
}

/// `lifecycle plan <env> --live`: the operator's next tick of each ConvergeOp of the env, from the
/// same planner (`--json` is `tick <op> --plan --json`, line for line), the gates a dispatch
/// would stop at with their description and approve command, `--exit-code` as `lifecycle diff
/// --exit-code` reads the same state, and nothing written.
#[test]
fn lifecycle_plan_is_the_ticks_plan_for_every_converge_op_of_the_env_with_the_gates_ahead() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let now = [("CHANT_NOW", "2026-03-01T10:00:00.000Z")];
    let (tip, refs) = (sandbox.tip(), leases(&sandbox));

    let text = sandbox.project(&["lifecycle", "plan", "site", "--live"], &now).code(0).stdout.clone();
    assert!(text.contains("plan site-converge@site"), "{text}");
    assert!(text.contains("fired → would run site-apply"), "{text}");
    let json = sandbox.project(&["lifecycle", "plan", "site", "--live", "--json"], &now).code(0).stdout.clone();
    let tick = sandbox.project(&["tick", "site-converge", "--plan", "--json"], &now).code(0).stdout.clone();
    assert_eq!(json, tick, "one planner: the same document as tick --plan");
    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live", "--exit-code"], &now).code;
    sandbox.project(&["lifecycle", "plan", "site", "--live", "--exit-code"], &now).code(diff);
    assert_eq!(diff, 1, "the site has files to create");

    // A resource-mode env whose rule dispatches an op behind a gate: the gate is named with why.
    let dash = sandbox.project(&["lifecycle", "plan", "dash", "--live"], &now).code(0).stdout.clone();
    assert!(
        dash.contains(
            "gated: dash-guarded would stop at gate \"ship-web\": Shipping <b>web</b> needs a human. (until `chant approve dash-guarded ship-web`)"
        ),
        "{dash}"
    );
    sandbox.project(&["lifecycle", "plan", "dash", "--live", "--exit-code"], &now).code(1);

    assert_eq!(sandbox.tip(), tip, "a plan wrote a commit");
    assert_eq!(leases(&sandbox), refs, "a plan touched a lease");
    let none = sandbox.project(&["lifecycle", "plan", "nowhere", "--live"], &now);
    none.code(2);
    // An env nothing declares is named as `lifecycle diff` names it, with the envs declared.
    assert!(none.stderr.contains("env `nowhere` has no declaration in this binary"), "{}", none.all());
    let typo = sandbox.project(&["lifecycle", "plan", "stie"], &now);
    typo.code(2);
    assert!(typo.stderr.contains("did you mean `site`?"), "{}", typo.all());
}
