//! Unit tests of replay over histories written by the real planner: an unchanged table finds no
//! difference (flap damping, budget and failed dispatches included), a removed rule differs
//! exactly where it fired, and records without a symptom are counted, never guessed.

use serde_json::json;

use super::{Replayer, Table, Verdict};
use crate::tick::plan::{DispatchResult, PlanInput, Subject, next_flap, plan, record_dispatch};
use crate::tick::record::{Action, FlapEntry, PlannedSymptom, TickRecord};
use chant_lexicon::model::contract::{ClassKind, DialKind};
use chant_lexicon::model::{ConvergeSymptom, EnvStatus, Rule};

fn rule(id: &str, status: &str, then: serde_json::Value, flap: Option<u64>) -> Rule {
    let mut v = json!({"id": id, "when": {"kind": "field-comparison", "field": "status", "op": "eq", "value": status},
        "then": then, "why": "w"});
    if let Some(f) = flap {
        v["flapThreshold"] = json!(f);
    }
    serde_json::from_value(v).unwrap()
}

fn classes(op: &str) -> Option<ClassKind> {
    match op {
        "apply" | "probe" | "fail" => Some(ClassKind::Mutating),
        _ => None,
    }
}

fn sym(status: EnvStatus) -> ConvergeSymptom {
    ConvergeSymptom {
        env: "e".into(),
        status,
        components: vec![],
        create_count: 0,
        update_count: 0,
        delete_count: 0,
        adopt_count: 0,
        runtime_count: 0,
        unobserved_count: 0,
        unobserved_reasons: vec![],
        total_count: 1,
        ambient_count: 0,
        dependency_unobserved_count: 0,
        artifact_changed_count: 0,
        baselined_count: 0,
    }
}

fn rules() -> Vec<Rule> {
    vec![
        rule("apply", "drifted", json!({"kind": "run", "op": "apply"}), Some(2)),
        rule("fail", "drifted", json!({"kind": "run", "op": "fail"}), None),
        rule("probe", "drifted", json!({"kind": "run", "op": "probe"}), None),
        rule("note", "unrecorded", json!({"kind": "report", "reason": "new"}), None),
    ]
}

/// Writes a history the way ticks do: plan, dispatch (`fail` always fails), next flap runs.
fn history(statuses: &[EnvStatus]) -> Vec<TickRecord> {
    let rules = rules();
    let mut flap: Vec<FlapEntry> = Vec::new();
    let mut out = Vec::new();
    for (n, status) in statuses.iter().enumerate() {
        let s = sym(*status);
        let input = PlanInput {
            rules: &rules,
            dial: DialKind::Apply,
            budget: 2,
            subject: Subject::Env(&s),
            previous_flap: &flap,
        };
        let p = plan(&input, &classes);
        let mut outcomes = p.outcomes.clone();
        for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
            let result = if o.op.as_deref() == Some("fail") {
                DispatchResult::Failed { error: "exit 1".into() }
            } else {
                DispatchResult::Ok
            };
            record_dispatch(o, result);
        }
        flap = next_flap(&p, &outcomes, &rules);
        out.push(TickRecord {
            version: 1,
            id: format!("t{n}"),
            outcomes,
            flap: flap.clone(),
            symptom: Some(PlannedSymptom::Env(s)),
            ..TickRecord::default()
        });
    }
    out
}

fn replay(rules: &[Rule], records: &[TickRecord]) -> (Vec<Verdict>, super::Totals) {
    let table = Table { rules, dial: DialKind::Apply, budget: 2, resource_mode: false, class_of: &classes };
    let mut r = Replayer::new(table);
    let verdicts = records.iter().map(|t| r.replay(t)).collect();
    (verdicts, r.totals())
}

const DRIFTY: [EnvStatus; 8] = [
    EnvStatus::Unrecorded,
    EnvStatus::Drifted,
    EnvStatus::Drifted,
    EnvStatus::Drifted,
    EnvStatus::Drifted,
    EnvStatus::Reconciled,
    EnvStatus::Drifted,
    EnvStatus::Drifted,
];

#[test]
fn an_unchanged_table_reproduces_history_flap_damping_budget_and_failures_included() {
    let records = history(&DRIFTY);
    let damped = records.iter().flat_map(|t| &t.outcomes).filter(|o| o.action == Action::SkippedFlap).count();
    let skipped = records.iter().flat_map(|t| &t.outcomes).filter(|o| o.action == Action::SkippedBudget).count();
    assert!(damped > 0 && skipped > 0, "the history exercises damping and the budget");
    let (verdicts, totals) = replay(&rules(), &records);
    assert!(verdicts.iter().all(|v| *v == Verdict::Same), "{verdicts:?}");
    assert_eq!((totals.ticks, totals.replayed, totals.differ), (8, 8, 0));
    assert_eq!((totals.dispatches_added, totals.dispatches_removed), (0, 0));
}

#[test]
fn a_removed_rule_differs_exactly_where_it_fired() {
    let records = history(&DRIFTY);
    let without: Vec<Rule> = rules().into_iter().filter(|r| r.id != "note").collect();
    let (verdicts, totals) = replay(&without, &records);
    let differ: Vec<usize> = (0..verdicts.len()).filter(|i| matches!(verdicts[*i], Verdict::Differs(_))).collect();
    assert_eq!(differ, vec![0], "note fired on the first tick only");
    let Verdict::Differs(d) = &verdicts[0] else { unreachable!() };
    assert_eq!(d.differences.len(), 1);
    assert_eq!(d.differences[0].rule_id, "note");
    assert!(d.differences[0].replayed.is_none() && d.differences[0].recorded.is_some());
    assert_eq!((totals.differ, totals.dispatches_removed), (1, 0), "a report is no dispatch");

    // Removing a dispatching rule frees its budget slot: `probe` runs where it was skipped.
    let without_apply: Vec<Rule> = rules().into_iter().filter(|r| r.id != "apply").collect();
    let (verdicts, totals) = replay(&without_apply, &records);
    let fired_apply: Vec<usize> =
        (0..records.len()).filter(|i| records[*i].outcomes.iter().any(|o| o.rule_id == "apply")).collect();
    let differ: Vec<usize> = (0..verdicts.len()).filter(|i| matches!(verdicts[*i], Verdict::Differs(_))).collect();
    assert_eq!(differ, fired_apply);
    assert!(totals.dispatches_removed > 0 && totals.dispatches_added > 0, "{totals:?}");
}

#[test]
fn records_without_a_symptom_are_counted_and_the_simulation_restarts_from_recorded_runs() {
    let mut records = history(&DRIFTY);
    records[2].symptom = None;
    // A tick that failed before planning carries the runs forward; it neither counts nor resets.
    let failed = TickRecord {
        id: "failed".into(),
        error: Some("the observer step failed".into()),
        flap: records[3].flap.clone(),
        ..TickRecord::default()
    };
    records.insert(4, failed);
    let (verdicts, totals) = replay(&rules(), &records);
    assert_eq!(verdicts[2], Verdict::NotReplayable);
    assert_eq!(verdicts[4], Verdict::Failed);
    assert_eq!((totals.ticks, totals.replayed, totals.not_replayable, totals.failed), (9, 7, 1, 1));
    assert_eq!(totals.differ, 0, "re-anchored on the recorded runs, history is reproduced: {verdicts:?}");
}
