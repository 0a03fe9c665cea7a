//! Unit tests of tick planning: every step of DESIGN.md §5's planning order, flap runs across
//! ticks, resource mode, and the summary.

use serde_json::json;

use super::plan::{
    DispatchResult, FLAP_COOL_OFF, PlanInput, Subject, cooled, next_flap, plan, record_dispatch, stamp_damped,
};
use super::record::{Action, FlapEntry, Outcome};
use super::summarise;
use chant_lexicon::model::contract::{ClassKind, DialKind};
use chant_lexicon::model::{ConvergeSymptom, EnvStatus, ResourceStatus, ResourceSymptom, Rule, UnobservedReason};

fn rule(id: &str, when: serde_json::Value, then: serde_json::Value) -> Rule {
    serde_json::from_value(json!({"id": id, "when": when, "then": then, "why": "w"})).unwrap()
}

fn status_is(s: &str) -> serde_json::Value {
    json!({"kind": "field-comparison", "field": "status", "op": "eq", "value": s})
}

fn run(op: &str) -> serde_json::Value {
    json!({"kind": "run", "op": op})
}

fn report(r: &str) -> serde_json::Value {
    json!({"kind": "report", "reason": r})
}

fn sym(status: EnvStatus) -> ConvergeSymptom {
    ConvergeSymptom {
        env: "staging".into(),
        status,
        components: vec![],
        create_count: 1,
        update_count: 1,
        delete_count: 0,
        adopt_count: 2,
        runtime_count: 0,
        unobserved_count: 0,
        unobserved_reasons: vec![],
        total_count: 4,
        ambient_count: 0,
        dependency_unobserved_count: 0,
        artifact_changed_count: 0,
        baselined_count: 0,
    }
}

fn classes(op: &str) -> Option<ClassKind> {
    match op {
        "apply" | "apply-2" | "apply-3" => Some(ClassKind::Mutating),
        "smoke" => Some(ClassKind::ReadOnly),
        "teardown" => Some(ClassKind::Destructive),
        _ => None,
    }
}

fn actions(outcomes: &[Outcome]) -> Vec<Action> {
    outcomes.iter().map(|o| o.action).collect()
}

fn input<'a>(
    rules: &'a [Rule],
    dial: DialKind,
    budget: u64,
    s: &'a ConvergeSymptom,
    flap: &'a [FlapEntry],
) -> PlanInput<'a> {
    PlanInput { rules, dial, budget, subject: Subject::Env(s), previous_flap: flap }
}

#[test]
fn a_false_predicate_produces_nothing() {
    let rules = [rule("r", status_is("stale"), run("apply"))];
    let s = sym(EnvStatus::Drifted);
    let p = plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes);
    assert!(p.fired.is_empty() && p.outcomes.is_empty());
}

#[test]
fn runs_within_budget_then_skips_without_queueing() {
    let rules = [
        rule("a", status_is("drifted"), run("apply")),
        rule("b", status_is("drifted"), run("apply-2")),
        rule("c", status_is("drifted"), run("apply-3")),
    ];
    let s = sym(EnvStatus::Drifted);
    let p = plan(&input(&rules, DialKind::Apply, 2, &s, &[]), &classes);
    assert_eq!(actions(&p.outcomes), [Action::Ran, Action::Ran, Action::SkippedBudget]);
    assert_eq!(p.fired_rule_ids(), ["a", "b", "c"]);
}

#[test]
fn reports_use_no_budget() {
    let rules = [rule("r1", status_is("drifted"), report("x")), rule("r2", status_is("drifted"), run("apply"))];
    let s = sym(EnvStatus::Drifted);
    let p = plan(&input(&rules, DialKind::Apply, 1, &s, &[]), &classes);
    assert_eq!(actions(&p.outcomes), [Action::Reported, Action::Ran]);
    assert_eq!(p.outcomes[0].reason.as_deref(), Some("x"));
}

#[test]
fn unknown_never_remediates() {
    let rules = [rule("r", json!({"kind": "field-truthiness", "field": "env", "op": "truthy"}), run("apply"))];
    let mut s = sym(EnvStatus::Unknown);
    s.unobserved_reasons = vec![UnobservedReason::NoCredentials];
    let p = plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes);
    assert_eq!(actions(&p.outcomes), [Action::Reported]);
    assert!(p.outcomes[0].reason.as_deref().unwrap().contains("no-credentials"));
    assert_eq!(p.outcomes[0].op.as_deref(), Some("apply"));
}

#[test]
fn dial_is_checked_before_budget() {
    let rules = [rule("refused", status_is("drifted"), run("apply")), rule("ok", status_is("drifted"), run("smoke"))];
    let s = sym(EnvStatus::Drifted);
    let p = plan(&input(&rules, DialKind::Observe, 1, &s, &[]), &classes);
    // The refused mutating dispatch uses no budget slot, so the read-only one still runs.
    assert_eq!(actions(&p.outcomes), [Action::Reported, Action::Ran]);
    assert!(p.outcomes[0].reason.as_deref().unwrap().contains("runtime backstop"));
}

#[test]
fn destructive_and_unknown_targets_are_reported_under_every_dial() {
    for dial in DialKind::ALL {
        let rules = [rule("t", status_is("drifted"), run("teardown")), rule("u", status_is("drifted"), run("ghost"))];
        let s = sym(EnvStatus::Drifted);
        let p = plan(&input(&rules, dial, 3, &s, &[]), &classes);
        assert_eq!(actions(&p.outcomes), [Action::Reported, Action::Reported], "{dial:?}");
    }
}

#[test]
fn read_only_targets_run_under_every_dial() {
    for dial in DialKind::ALL {
        let rules = [rule("s", status_is("drifted"), run("smoke"))];
        let s = sym(EnvStatus::Drifted);
        let p = plan(&input(&rules, dial, 3, &s, &[]), &classes);
        assert_eq!(actions(&p.outcomes), [Action::Ran], "{dial:?}");
    }
}

/// Runs `n` ticks with the predicate holding and each dispatch ending as `result`, carrying the
/// flap runs from one tick to the next like the ledger does.
fn ticks(
    n: usize,
    status: EnvStatus,
    result: &dyn Fn() -> DispatchResult,
    start: Vec<FlapEntry>,
) -> (Vec<Vec<Action>>, Vec<FlapEntry>) {
    let rules = [rule("r", status_is("drifted"), run("apply"))];
    let s = sym(status);
    let mut flap = start;
    let mut seen = Vec::new();
    for _ in 0..n {
        let p = plan(&input(&rules, DialKind::Apply, 3, &s, &flap), &classes);
        let mut outcomes = p.outcomes.clone();
        for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
            record_dispatch(o, result());
        }
        flap = next_flap(&p, &outcomes, &rules);
        seen.push(actions(&outcomes));
    }
    (seen, flap)
}

#[test]
fn flap_damps_after_threshold_dispatches_and_clears_with_the_predicate() {
    let (seen, flap) = ticks(5, EnvStatus::Drifted, &|| DispatchResult::Ok, vec![]);
    assert_eq!(
        seen,
        [vec![Action::Ran], vec![Action::Ran], vec![Action::Ran], vec![Action::SkippedFlap], vec![Action::SkippedFlap]]
    );
    assert_eq!(flap, [FlapEntry { rule_id: "r".into(), resource: None, run: 3, damped_at: None }]);
    // The predicate clears: the run resets, and the rule dispatches again next time.
    let (seen, flap) = ticks(1, EnvStatus::Reconciled, &|| DispatchResult::Ok, flap);
    assert_eq!(seen, [Vec::<Action>::new()]);
    assert!(flap.is_empty());
}

/// A tick at `now` as `execute` runs it: the cool-off applied to the runs it plans with, the runs
/// after it stamped with when damping stopped them.
fn tick_at(
    now: jiff::Timestamp,
    rules: &[Rule],
    s: &ConvergeSymptom,
    flap: &[FlapEntry],
) -> (Vec<Action>, Vec<FlapEntry>) {
    let planned_with = cooled(flap, rules, now);
    let p = plan(&input(rules, DialKind::Apply, 3, s, &planned_with), &classes);
    let mut outcomes = p.outcomes.clone();
    for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
        record_dispatch(o, DispatchResult::Ok);
    }
    let mut next = next_flap(&p, &outcomes, rules);
    stamp_damped(&mut next, flap, &outcomes, now);
    (actions(&outcomes), next)
}

#[test]
fn a_damped_rule_dispatches_once_more_after_the_cool_off_and_is_damped_again_if_it_did_not_help() {
    let rules = [rule("r", status_is("drifted"), run("apply"))];
    let s = sym(EnvStatus::Drifted);
    let t0: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let minute = jiff::SignedDuration::from_secs(60);
    let mut flap = Vec::new();
    let mut seen = Vec::new();
    for i in 0..4 {
        let (a, next) = tick_at(t0 + minute * i, &rules, &s, &flap);
        seen.push(a);
        flap = next;
    }
    assert_eq!(seen, [vec![Action::Ran], vec![Action::Ran], vec![Action::Ran], vec![Action::SkippedFlap]]);
    let damped_at = t0 + minute * 3;
    assert_eq!(flap[0].damped_at.as_deref(), Some(chant_store::clock::format(damped_at).as_str()));
    // Within the cool-off it stays damped, and keeps the time it was first damped.
    let (a, next) = tick_at(damped_at + FLAP_COOL_OFF - minute, &rules, &s, &flap);
    assert_eq!(a, [Action::SkippedFlap]);
    assert_eq!(next[0].damped_at, flap[0].damped_at);
    // Once it has passed: one more dispatch, and the run is at the threshold again.
    let after = damped_at + FLAP_COOL_OFF;
    let (a, next) = tick_at(after, &rules, &s, &next);
    assert_eq!(a, [Action::Ran]);
    assert_eq!((next[0].run, next[0].damped_at.as_deref()), (3, None));
    // The symptom is still there: damped again, from this tick's time.
    let (a, next) = tick_at(after + minute, &rules, &s, &next);
    assert_eq!(a, [Action::SkippedFlap]);
    assert_eq!(next[0].damped_at.as_deref(), Some(chant_store::clock::format(after + minute).as_str()));
    // The symptom gone (the retry fixed it, or a hand did): the run and the damping are gone.
    let (a, next) = tick_at(after + minute * 2, &rules, &sym(EnvStatus::Reconciled), &next);
    assert!(a.is_empty() && next.is_empty(), "{a:?} {next:?}");
    // A record written before damping had a time reads as damped until the predicate clears.
    let old = [FlapEntry { rule_id: "r".into(), resource: None, run: 3, damped_at: None }];
    assert_eq!(tick_at(after + FLAP_COOL_OFF * 10, &rules, &s, &old).0, [Action::SkippedFlap]);
}

#[test]
fn failed_dispatches_count_and_gates_do_not() {
    let failed = || DispatchResult::Failed { error: "boom".into() };
    let (seen, _) = ticks(4, EnvStatus::Drifted, &failed, vec![]);
    assert_eq!(seen[3], [Action::SkippedFlap]);
    let gated = || DispatchResult::Gated { gate: "rollout".into(), url: None, owner: None };
    let (seen, flap) = ticks(6, EnvStatus::Drifted, &gated, vec![]);
    assert!(seen.iter().all(|a| a == &[Action::Gated]), "{seen:?}");
    assert!(flap.is_empty());
}

#[test]
fn unknown_ticks_neither_count_nor_reset() {
    let start = vec![FlapEntry { rule_id: "r".into(), resource: None, run: 2, damped_at: None }];
    let rules = [rule("r", json!({"kind": "field-truthiness", "field": "env", "op": "truthy"}), run("apply"))];
    let s = sym(EnvStatus::Unknown);
    let p = plan(&input(&rules, DialKind::Apply, 3, &s, &start), &classes);
    assert_eq!(actions(&p.outcomes), [Action::Reported]);
    assert_eq!(next_flap(&p, &p.outcomes, &rules), start);
}

#[test]
fn record_dispatch_marks_failures_and_gates() {
    let mut o = Outcome {
        rule_id: "r".into(),
        action: Action::Ran,
        source: None,
        op: Some("apply".into()),
        resource: None,
        gate_name: None,
        gate_owner: None,
        reason: None,
        url: None,
        branch: None,
        dispatch_failed: None,
        entities: Vec::new(),
    };
    let mut g = o.clone();
    record_dispatch(&mut o, DispatchResult::Failed { error: "exit 1: boom".into() });
    assert_eq!((o.action, o.dispatch_failed), (Action::Reported, Some(true)));
    record_dispatch(
        &mut g,
        DispatchResult::Gated { gate: "rollout".into(), url: Some("https://x/pr/1".into()), owner: None },
    );
    assert_eq!(g.action, Action::Gated);
    assert_eq!(g.gate_name.as_deref(), Some("rollout"));
    assert!(g.reason.unwrap().contains("chant approve apply rollout"));
}

#[test]
fn resource_mode_plans_per_resource_with_its_own_unknown() {
    let rules =
        [rule("restart", status_is("drifted"), run("apply")), rule("unk", status_is("unknown"), report("hole"))];
    let rs = [
        ResourceSymptom {
            env: "box".into(),
            resource: "app".into(),
            status: ResourceStatus::Drifted,
            detail: "stopped".into(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        },
        ResourceSymptom {
            env: "box".into(),
            resource: "hud".into(),
            status: ResourceStatus::InSync,
            detail: String::new(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        },
        ResourceSymptom {
            env: "box".into(),
            resource: "db".into(),
            status: ResourceStatus::Unknown,
            detail: String::new(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        },
        ResourceSymptom {
            env: "box".into(),
            resource: "web".into(),
            status: ResourceStatus::Drifted,
            detail: String::new(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        },
    ];
    let input = PlanInput {
        rules: &rules,
        dial: DialKind::Apply,
        budget: 1,
        subject: Subject::Resources(&rs),
        previous_flap: &[],
    };
    let p = plan(&input, &classes);
    let got: Vec<(Action, Option<&str>)> = p.outcomes.iter().map(|o| (o.action, o.resource.as_deref())).collect();
    assert_eq!(got, [(Action::Ran, Some("app")), (Action::SkippedBudget, Some("web")), (Action::Reported, Some("db"))]);
    let sum = summarise(Subject::Resources(&rs), &p.outcomes);
    assert_eq!((sum.drifted, sum.unobserved, sum.adopted), (2, 1, 0));
    // Flap runs are per resource.
    let flap = next_flap(&p, &p.outcomes, &rules);
    assert_eq!(flap, [FlapEntry { rule_id: "restart".into(), resource: Some("app".into()), run: 1, damped_at: None }]);
}

#[test]
fn summary_line_and_counts() {
    let rules = [rule("a", status_is("drifted"), run("apply")), rule("b", status_is("drifted"), report("r"))];
    let s = sym(EnvStatus::Drifted);
    let p = plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes);
    let sum = summarise(Subject::Env(&s), &p.outcomes);
    assert_eq!(
        sum.line("staging"),
        "converge(staging): drifted=2 remediated=1 reported=1 skipped-budget=0 skipped-flap=0 gated=0 unobserved=0 adopted=2"
    );
}

#[test]
fn a_rule_reading_ambient_count_runs_only_a_read_only_op() {
    let ambient = json!({"kind": "field-comparison", "field": "ambientCount", "op": "gt", "value": 0});
    let rules = [rule("claim", ambient.clone(), run("apply")), rule("look", ambient, run("smoke"))];
    let mut s = sym(EnvStatus::Reconciled);
    s.ambient_count = 2;
    let p = plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes);
    assert_eq!(actions(&p.outcomes), [Action::Reported, Action::Ran]);
    let why = p.outcomes[0].reason.as_deref().unwrap();
    assert!(why.contains("reads `ambientCount`") && why.contains("never claimed"), "{why}");
    s.ambient_count = 0;
    assert!(plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes).outcomes.is_empty());
}

fn ran(rule: &str, resource: Option<&str>) -> Outcome {
    Outcome {
        rule_id: rule.into(),
        action: Action::Ran,
        source: None,
        op: Some("apply".into()),
        resource: resource.map(str::to_owned),
        gate_name: None,
        gate_owner: None,
        reason: None,
        url: None,
        branch: None,
        dispatch_failed: None,
        entities: Vec::new(),
    }
}

#[test]
fn a_dispatch_is_remediated_only_when_the_observation_after_it_finds_the_symptom_gone() {
    use super::verify::{After, verify};
    let rules = [rule("r", status_is("drifted"), run("apply")), rule("u", status_is("unrecorded"), run("apply"))];
    let drifted = super::record::DriftedPath {
        component: "files".into(),
        entity: "app.conf".into(),
        path: "content".into(),
        declared: "port = 8080".into(),
        live: Some("tampered".into()),
    };
    let reported = Outcome { action: Action::Reported, ..ran("r", None) };

    // The env in sync after the dispatch: the repair stands.
    let mut o = vec![ran("r", None), reported.clone()];
    let after = sym(EnvStatus::Reconciled);
    verify(&mut o, &rules, After::Observed(Subject::Env(&after), &[]));
    assert_eq!(actions(&o), [Action::Ran, Action::Reported], "only dispatches are verified");

    // Still drifted: ineffective, naming what still differs; another rule's symptom gone: ran.
    let mut o = vec![ran("r", None), ran("u", None)];
    let after = sym(EnvStatus::Drifted);
    verify(&mut o, &rules, After::Observed(Subject::Env(&after), std::slice::from_ref(&drifted)));
    assert_eq!(actions(&o), [Action::Ineffective, Action::Ran]);
    let why = o[0].reason.as_deref().unwrap();
    assert!(why.contains("still there after it: status drifted; still differs: files/app.conf content"), "{why}");

    // Unknown after it, or no observation: unverified, never remediated.
    let mut o = vec![ran("r", None)];
    let after = sym(EnvStatus::Unknown);
    verify(&mut o, &rules, After::Observed(Subject::Env(&after), &[]));
    assert_eq!(actions(&o), [Action::Unverified]);
    let mut o = vec![ran("r", None)];
    verify(&mut o, &rules, After::Failed("files: permission denied"));
    assert_eq!(actions(&o), [Action::Unverified]);
    assert!(o[0].reason.as_deref().unwrap().contains("permission denied"), "{o:?}");

    // Resource mode: judged on the resource it was dispatched for.
    let rules = [rule("restart", status_is("drifted"), run("apply"))];
    let res = |name: &str, status| ResourceSymptom {
        env: "box".into(),
        resource: name.into(),
        status,
        detail: String::new(),
        mem_mb: None,
        cpu_percent: None,
        file_age_secs: None,
    };
    let after =
        [res("app", ResourceStatus::InSync), res("hud", ResourceStatus::Drifted), res("db", ResourceStatus::Unknown)];
    let mut o = vec![
        ran("restart", Some("app")),
        ran("restart", Some("hud")),
        ran("restart", Some("db")),
        ran("restart", Some("gone")),
    ];
    verify(&mut o, &rules, After::Observed(Subject::Resources(&after), &[]));
    assert_eq!(actions(&o), [Action::Ran, Action::Ineffective, Action::Unverified, Action::Unverified]);

    // The summary counts each, and only `ran` as remediated; all of them count for flap.
    let mut summary = super::record::Summary::default();
    summary.count_outcomes(&o);
    assert_eq!((summary.remediated, summary.ineffective, summary.unverified), (1, 1, 2));
    assert!(
        summary.line("box").contains("remediated=1 ineffective=1 unverified=2 reported=0"),
        "{}",
        summary.line("box")
    );
    assert!(o.iter().all(Outcome::counts_for_flap));
}

#[test]
fn a_held_tick_skips_mutating_dispatches_without_budget_and_still_runs_read_only_ones() {
    use super::plan::{Controls, plan_controlled};
    use super::window::Held;
    let rules = [
        rule("apply", status_is("drifted"), run("apply")),
        rule("smoke", status_is("drifted"), run("smoke")),
        rule("teardown", status_is("drifted"), run("teardown")),
    ];
    let s = sym(EnvStatus::Drifted);
    let held = Held { window: r#"deny "0 9 * * 1-5" for 8h"#.into(), until: Some("2026-03-02T17:00:00.000Z".into()) };
    let controls = Controls { held: Some(&held), ..Controls::default() };
    let p = plan_controlled(&input(&rules, DialKind::Apply, 1, &s, &[]), &controls, &classes);
    // The read-only smoke test keeps the one budget slot; the destructive target is refused by
    // the dial before the window is asked.
    assert_eq!(actions(&p.outcomes), [Action::SkippedWindow, Action::Ran, Action::Reported]);
    let reason = p.outcomes[0].reason.as_deref().unwrap();
    assert!(reason.contains(r#"window: deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z"#), "{reason}");
    let summary = summarise(Subject::Env(&s), &p.outcomes);
    assert_eq!(summary.skipped_window, 1);
    assert!(summary.line("staging").contains("skipped-flap=0 skipped-window=1 gated=0"), "{}", summary.line("staging"));
    // A skipped-window outcome neither counts toward a flap run nor resets it.
    let flap = [FlapEntry { rule_id: "apply".into(), resource: None, run: 1, damped_at: None }];
    let p = plan_controlled(&input(&rules, DialKind::Apply, 3, &s, &flap), &controls, &classes);
    assert_eq!(next_flap(&p, &p.outcomes, &rules)[0].run, 1);
    // Without a hold the same table dispatches.
    let free = plan(&input(&rules, DialKind::Apply, 3, &s, &[]), &classes);
    assert_eq!(actions(&free.outcomes), [Action::Ran, Action::Ran, Action::Reported]);
}

#[test]
fn a_rule_at_its_restart_limit_gives_up_for_its_resource_only() {
    use super::limit::RestartEntry;
    use super::plan::{Controls, plan_controlled};
    let limit = chant_lexicon::model::RestartLimit { count: 2, within: "10m".into() };
    let rules = [rule("restart", status_is("drifted"), run("apply"))];
    let res = |name: &str| ResourceSymptom {
        env: "box".into(),
        resource: name.into(),
        status: ResourceStatus::Drifted,
        detail: String::new(),
        mem_mb: None,
        cpu_percent: None,
        file_age_secs: None,
    };
    let resources = [res("app"), res("worker")];
    let counted = |r: &str, n: usize| RestartEntry {
        rule_id: "restart".into(),
        resource: Some(r.into()),
        at: vec!["2026-03-02T10:00:00.000Z".into(); n],
        given_up_at: None,
    };
    let restarts = [counted("app", 2), counted("worker", 1)];
    let controls = Controls { limit: Some(&limit), restarts: &restarts, op: "converge", ..Controls::default() };
    let input = PlanInput {
        rules: &rules,
        dial: DialKind::Apply,
        budget: 3,
        subject: Subject::Resources(&resources),
        previous_flap: &[],
    };
    let p = plan_controlled(&input, &controls, &classes);
    assert_eq!(actions(&p.outcomes), [Action::GivenUp, Action::Ran]);
    let reason = p.outcomes[0].reason.as_deref().unwrap();
    assert!(reason.starts_with("restart [app] gave up: 2 remediations within 10m"), "{reason}");
    assert!(reason.contains("`chant operator undamp converge`"), "{reason}");
    assert_eq!(summarise(Subject::Resources(&resources), &p.outcomes).given_up, 1);
}

#[test]
fn a_rule_reading_a_reading_the_resource_lacks_never_remediates() {
    let rules =
        [rule("leak", json!({"kind": "field-comparison", "field": "memMb", "op": "neq", "value": 0}), run("apply"))];
    let with = ResourceSymptom {
        env: "box".into(),
        resource: "app".into(),
        status: ResourceStatus::InSync,
        detail: String::new(),
        mem_mb: Some(250),
        cpu_percent: None,
        file_age_secs: None,
    };
    let without = ResourceSymptom { resource: "worker".into(), mem_mb: None, ..with.clone() };
    let resources = [with, without];
    let input = PlanInput {
        rules: &rules,
        dial: DialKind::Apply,
        budget: 3,
        subject: Subject::Resources(&resources),
        previous_flap: &[],
    };
    let p = plan(&input, &classes);
    assert_eq!(actions(&p.outcomes), [Action::Ran, Action::Reported]);
    let reason = p.outcomes[1].reason.as_deref().unwrap();
    assert_eq!(reason, "resource \"worker\" has no memMb reading; unknown never remediates");
}
