//! Unit tests of the pure model: predicate evaluation case by case, well-formedness, and the
//! agreement between the contract tables and the symptom types.

use serde_json::json;

use super::contract::{self, CONVERGE_FIELDS, FieldType, LeafProblem, RESOURCE_FIELDS, SymptomKind};
use super::rule::{ComparisonOp, Literal, Predicate, TruthinessOp, evaluate, is_well_formed};
use super::symptom::{ComponentRow, ConvergeSymptom, EnvStatus, ResourceStatus, ResourceSymptom, UnobservedReason};
use super::{Action, Rule};

fn cmp(field: &str, op: ComparisonOp, value: serde_json::Value) -> Predicate {
    Predicate::FieldComparison { field: field.into(), op, value: serde_json::from_value(value).unwrap() }
}

fn truth(field: &str, op: TruthinessOp) -> Predicate {
    Predicate::FieldTruthiness { field: field.into(), op }
}

fn symptom() -> ConvergeSymptom {
    ConvergeSymptom {
        env: "staging".into(),
        status: EnvStatus::Drifted,
        components: vec![ComponentRow {
            component: "files".into(),
            env: "staging".into(),
            recorded: true,
            live: true,
            reconciliation: EnvStatus::Drifted,
            detail: String::new(),
        }],
        create_count: 0,
        update_count: 2,
        delete_count: 0,
        adopt_count: 1,
        runtime_count: 0,
        unobserved_count: 0,
        unobserved_reasons: vec![],
        total_count: 5,
        ambient_count: 1,
        dependency_unobserved_count: 1,
        artifact_changed_count: 1,
        baselined_count: 0,
    }
}

#[test]
fn eq_is_strict() {
    let s = symptom();
    assert!(evaluate(&cmp("status", ComparisonOp::Eq, json!("drifted")), &s));
    assert!(!evaluate(&cmp("status", ComparisonOp::Eq, json!("unknown")), &s));
    assert!(evaluate(&cmp("updateCount", ComparisonOp::Eq, json!(2)), &s));
    assert!(evaluate(&cmp("updateCount", ComparisonOp::Eq, json!(2.0)), &s));
    // No coercion between types.
    assert!(!evaluate(&cmp("updateCount", ComparisonOp::Eq, json!("2")), &s));
    assert!(!evaluate(&cmp("status", ComparisonOp::Eq, json!(true)), &s));
    // Arrays never equal anything.
    assert!(!evaluate(&cmp("components", ComparisonOp::Eq, json!(1)), &s));
}

#[test]
fn neq_is_the_negation_and_a_missing_field_is_unequal() {
    let s = symptom();
    assert!(evaluate(&cmp("status", ComparisonOp::Neq, json!("unknown")), &s));
    assert!(!evaluate(&cmp("status", ComparisonOp::Neq, json!("drifted")), &s));
    assert!(evaluate(&cmp("nope", ComparisonOp::Neq, json!("x")), &s));
    assert!(!evaluate(&cmp("nope", ComparisonOp::Eq, json!("x")), &s));
}

#[test]
fn ordering_holds_only_between_numbers() {
    let s = symptom();
    assert!(evaluate(&cmp("adoptCount", ComparisonOp::Gt, json!(0)), &s));
    assert!(!evaluate(&cmp("adoptCount", ComparisonOp::Gt, json!(1)), &s));
    assert!(evaluate(&cmp("adoptCount", ComparisonOp::Gte, json!(1)), &s));
    assert!(evaluate(&cmp("adoptCount", ComparisonOp::Lt, json!(1.5)), &s));
    assert!(evaluate(&cmp("adoptCount", ComparisonOp::Lte, json!(1)), &s));
    assert!(!evaluate(&cmp("adoptCount", ComparisonOp::Lt, json!(1)), &s));
    // A string literal or a string field never orders.
    assert!(!evaluate(&cmp("adoptCount", ComparisonOp::Gt, json!("0")), &s));
    assert!(!evaluate(&cmp("status", ComparisonOp::Gt, json!(0)), &s));
    assert!(!evaluate(&cmp("status", ComparisonOp::Lt, json!("z")), &s));
    // An array never orders.
    assert!(!evaluate(&cmp("components", ComparisonOp::Gte, json!(0)), &s));
}

#[test]
fn truthiness_of_each_type() {
    let mut s = symptom();
    assert!(evaluate(&truth("components", TruthinessOp::Truthy), &s));
    assert!(evaluate(&truth("unobservedReasons", TruthinessOp::Falsy), &s));
    assert!(evaluate(&truth("adoptCount", TruthinessOp::Truthy), &s));
    assert!(evaluate(&truth("createCount", TruthinessOp::Falsy), &s));
    assert!(evaluate(&truth("status", TruthinessOp::Truthy), &s));
    assert!(evaluate(&truth("missing", TruthinessOp::Falsy), &s));
    assert!(!evaluate(&truth("missing", TruthinessOp::Truthy), &s));
    s.components.clear();
    s.unobserved_reasons.push(UnobservedReason::ReadFailed);
    assert!(evaluate(&truth("components", TruthinessOp::Falsy), &s));
    assert!(evaluate(&truth("unobservedReasons", TruthinessOp::Truthy), &s));
    let r = ResourceSymptom {
        env: "box".into(),
        resource: "app".into(),
        status: ResourceStatus::InSync,
        detail: String::new(),
        mem_mb: None,
        cpu_percent: None,
        file_age_secs: None,
    };
    assert!(evaluate(&truth("detail", TruthinessOp::Falsy), &r));
    assert!(evaluate(&truth("resource", TruthinessOp::Truthy), &r));
}

#[test]
fn combinators() {
    let s = symptom();
    let t = cmp("status", ComparisonOp::Eq, json!("drifted"));
    let f = cmp("status", ComparisonOp::Eq, json!("stale"));
    let all = |ps: Vec<Predicate>| Predicate::AllOf { predicates: ps };
    let any = |ps: Vec<Predicate>| Predicate::AnyOf { predicates: ps };
    assert!(evaluate(&all(vec![t.clone(), t.clone()]), &s));
    assert!(!evaluate(&all(vec![t.clone(), f.clone()]), &s));
    assert!(evaluate(&any(vec![f.clone(), t.clone()]), &s));
    assert!(!evaluate(&any(vec![f.clone(), f.clone()]), &s));
    assert!(evaluate(&all(vec![]), &s));
    assert!(!evaluate(&any(vec![]), &s));
    assert!(evaluate(&any(vec![all(vec![f.clone()]), all(vec![t.clone(), any(vec![t])])]), &s));
}

#[test]
fn resource_symptom_evaluates_its_own_fields() {
    let r = ResourceSymptom {
        env: "box".into(),
        resource: "app".into(),
        status: ResourceStatus::Drifted,
        detail: "stopped".into(),
        mem_mb: None,
        cpu_percent: None,
        file_age_secs: None,
    };
    assert!(evaluate(&cmp("status", ComparisonOp::Eq, json!("drifted")), &r));
    assert!(evaluate(&cmp("resource", ComparisonOp::Eq, json!("app")), &r));
    assert!(!evaluate(&cmp("adoptCount", ComparisonOp::Gt, json!(0)), &r));
}

#[test]
fn malformed_json_predicates_never_parse() {
    for bad in [
        json!({"kind": "field-comparison", "field": "status", "op": "matches", "value": ".*"}),
        json!({"kind": "regex", "field": "status"}),
        json!({"kind": "field-comparison", "field": "status", "op": "eq", "value": null}),
        json!({"kind": "field-comparison", "field": "status", "op": "eq", "value": [1]}),
        json!({"kind": "field-truthiness", "field": "status", "op": "truthy", "extra": 1}),
        json!({"kind": "all-of", "predicates": 3}),
    ] {
        assert!(serde_json::from_value::<Predicate>(bad.clone()).is_err(), "{bad}");
    }
}

#[test]
fn well_formedness_case_by_case() {
    let k = SymptomKind::Converge;
    assert!(is_well_formed(&cmp("status", ComparisonOp::Eq, json!("drifted")), k));
    assert!(is_well_formed(&cmp("adoptCount", ComparisonOp::Gt, json!(0)), k));
    assert!(is_well_formed(&truth("components", TruthinessOp::Truthy), k));
    assert!(!is_well_formed(&cmp("stauts", ComparisonOp::Eq, json!("drifted")), k));
    assert!(!is_well_formed(&cmp("adopt_count", ComparisonOp::Gt, json!(0)), k));
    assert!(!is_well_formed(&cmp("status", ComparisonOp::Eq, json!("drifed")), k));
    assert!(!is_well_formed(&cmp("status", ComparisonOp::Gt, json!(1)), k));
    assert!(!is_well_formed(&cmp("adoptCount", ComparisonOp::Eq, json!("1")), k));
    assert!(!is_well_formed(&cmp("components", ComparisonOp::Eq, json!(0)), k));
    assert!(!is_well_formed(&cmp("env", ComparisonOp::Eq, json!(true)), k));
    // Nested problems are found.
    let nested = Predicate::AnyOf {
        predicates: vec![Predicate::AllOf { predicates: vec![truth("detail", TruthinessOp::Truthy)] }],
    };
    assert!(!is_well_formed(&nested, k));
    assert!(is_well_formed(&nested, SymptomKind::Resource));
    // Resource mode has its own status domain and no counts.
    let r = SymptomKind::Resource;
    assert!(is_well_formed(&cmp("status", ComparisonOp::Eq, json!("in-sync")), r));
    assert!(!is_well_formed(&cmp("status", ComparisonOp::Eq, json!("reconciled")), r));
    assert!(!is_well_formed(&cmp("adoptCount", ComparisonOp::Gt, json!(0)), r));
}

#[test]
fn problems_are_worded_for_the_dsl_and_for_op_json() {
    let p = contract::check_leaf(SymptomKind::Converge, "adopt_count", "gt", Some(contract::LiteralKind::Number))
        .expect_err("snake name is not a camel field");
    let LeafProblem::UnknownField { suggestion: Some(s) } = &p else { panic!("{p:?}") };
    assert_eq!(s.camel, "adoptCount");
    assert!(p.message("adoptCount", "gt", None, SymptomKind::Converge, true).contains("snake_case"));
    let p = contract::check_leaf(SymptomKind::Converge, "status", "eq", Some(contract::LiteralKind::Str("drifed")))
        .expect_err("not a value");
    assert!(p.message("status", "eq", Some("drifed"), SymptomKind::Converge, true).contains("did you mean `drifted`"));
}

/// The contract's field tables and the symptom types agree: the same camelCase names, in the same
/// order, each readable by the evaluator with the contract's type.
#[test]
fn contract_fields_match_the_symptom_types() {
    let s = serde_json::to_value(symptom()).unwrap();
    let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
    let mut camel: Vec<&str> = CONVERGE_FIELDS.iter().map(|f| f.camel).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    camel.sort_unstable();
    assert_eq!(sorted, camel);
    let r = ResourceSymptom {
        env: "e".into(),
        resource: "r".into(),
        status: ResourceStatus::Unknown,
        detail: "d".into(),
        mem_mb: Some(1),
        cpu_percent: Some(2),
        file_age_secs: Some(3),
    };
    let rv = serde_json::to_value(&r).unwrap();
    let rkeys: Vec<&str> = rv.as_object().unwrap().keys().map(String::as_str).collect();
    let mut rc: Vec<&str> = RESOURCE_FIELDS.iter().map(|f| f.camel).collect();
    let mut rs = rkeys;
    rs.sort_unstable();
    rc.sort_unstable();
    assert_eq!(rs, rc);
    use super::rule::{FieldValue, Symptom};
    for f in CONVERGE_FIELDS {
        let v = symptom().field(f.camel).map(|v| match v {
            FieldValue::Str(_) => "str",
            FieldValue::Num(_) => "num",
            FieldValue::Bool(_) => "bool",
            FieldValue::List(_) => "list",
        });
        let want = match f.ty {
            FieldType::Enum(_) | FieldType::Text => "str",
            FieldType::Count => "num",
            FieldType::List => "list",
        };
        assert_eq!(v, Some(want), "{}", f.camel);
        assert_eq!(contract::snake_to_camel(f.snake), f.camel);
        assert_eq!(contract::camel_to_snake(f.camel), f.snake);
    }
    for f in RESOURCE_FIELDS {
        assert!(r.field(f.camel).is_some(), "{}", f.camel);
    }
    // Every status value of the enums is in the contract's domain, and no other.
    let statuses: Vec<&str> =
        [EnvStatus::Unknown, EnvStatus::Drifted, EnvStatus::Stale, EnvStatus::Unrecorded, EnvStatus::Reconciled]
            .iter()
            .map(|s| s.as_str())
            .collect();
    assert_eq!(statuses, contract::CONVERGE_STATUSES);
    let rstatuses: Vec<&str> =
        [ResourceStatus::InSync, ResourceStatus::Drifted, ResourceStatus::Unknown].iter().map(|s| s.as_str()).collect();
    assert_eq!(rstatuses, contract::RESOURCE_STATUSES);
}

#[test]
fn worst_status_prefers_caution() {
    assert_eq!(EnvStatus::worst([EnvStatus::Reconciled, EnvStatus::Drifted, EnvStatus::Stale]), EnvStatus::Drifted);
    assert_eq!(EnvStatus::worst([EnvStatus::Drifted, EnvStatus::Unknown]), EnvStatus::Unknown);
    assert_eq!(EnvStatus::worst([]), EnvStatus::Reconciled);
    assert_eq!(EnvStatus::worst([EnvStatus::Unrecorded, EnvStatus::Stale]), EnvStatus::Stale);
}

#[test]
fn derived_ids_depend_on_predicate_and_action_only() {
    let when = cmp("status", ComparisonOp::Eq, json!("drifted"));
    let then = Action::Run { op: crate::Name::new("staging-apply").unwrap() };
    let id = Rule::derive_id(&when, &then).unwrap();
    assert_eq!(id, "status-eq-drifted-run-staging-apply");
    assert!(crate::Name::is_valid(&id));
    let long = Predicate::AllOf {
        predicates: (0..6).map(|i| cmp("status", ComparisonOp::Neq, json!(format!("value-{i}")))).collect(),
    };
    let a = Rule::derive_id(&long, &then).unwrap();
    assert!(a.len() <= 60, "{a}");
    assert!(crate::Name::is_valid(&a), "{a}");
    let other = Action::Report { reason: "Something Odd!".into() };
    let b = Rule::derive_id(&long, &other).unwrap();
    assert_ne!(a, b);
    assert_eq!(
        Rule::derive_id(&cmp("adoptCount", ComparisonOp::Gt, json!(0)), &other).unwrap(),
        "adopt-count-gt-0-report-something-odd"
    );
}

#[test]
fn dial_by_class_matrix() {
    use contract::{ClassKind as C, DialKind as D, permits};
    for d in D::ALL {
        assert!(permits(d, C::ReadOnly).is_ok());
        assert!(permits(d, C::Destructive).is_err());
    }
    assert!(permits(D::Apply, C::Mutating).is_ok());
    assert!(permits(D::Observe, C::Mutating).is_err());
    assert!(permits(D::Reconcile, C::Mutating).is_err());
}

#[test]
fn literals_keep_integers_as_written() {
    let p = cmp("adoptCount", ComparisonOp::Gt, json!(0));
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"kind":"field-comparison","field":"adoptCount","op":"gt","value":0}"#
    );
    let Predicate::FieldComparison { value, .. } = p else { unreachable!() };
    assert!(matches!(value, Literal::Number(_)));
}

/// The estate counts are absent from a record when zero, so a symptom written before they existed
/// reads and re-encodes to its own bytes; when set they are read like every count.
#[test]
fn estate_counts_are_optional_on_the_wire_and_adopt_safe() {
    let mut s = symptom();
    s.ambient_count = 0;
    s.dependency_unobserved_count = 0;
    s.artifact_changed_count = 0;
    let line = serde_json::to_string(&s).unwrap();
    assert!(!line.contains("ambientCount") && !line.contains("artifactChangedCount"), "{line}");
    let back: ConvergeSymptom = serde_json::from_str(&line).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), line);
    s.ambient_count = 3;
    assert!(evaluate(&cmp("ambientCount", ComparisonOp::Gt, json!(2)), &s));
    assert!(!evaluate(&cmp("dependencyUnobservedCount", ComparisonOp::Gt, json!(0)), &s));
    assert_eq!(contract::adopt_safe_field(&cmp("ambientCount", ComparisonOp::Gt, json!(0))), Some("ambientCount"));
    assert_eq!(contract::adopt_safe_field(&cmp("artifactChangedCount", ComparisonOp::Gt, json!(0))), None);
    assert!(contract::adopt_safe_refusal("x", "ambientCount", true).contains("reads `ambient_count`"));
    assert_eq!(contract::adopt_safe_refusal("x", "adoptCount", false), contract::adopt_refusal("x", false));
}

#[test]
fn ops_check_refuses_a_bad_window_or_restart_limit_edited_into_op_json() {
    let doc = |windows: &str, limit: &str| {
        format!(
            r#"{{"version": 1, "name": "c", "overview": "o", "env": "e",
            "labels": {{"Converge": "true", "Dial": "observe", "Env": "e"}}, "class": "read-only",
            "converge": {{"dial": "observe", "budget": 3, "rules": [{{"id": "r", "why": "w",
              "when": {{"kind": "field-comparison", "field": "status", "op": "eq", "value": "drifted"}},
              "then": {{"kind": "report", "reason": "x"}}}}]{windows}{limit}}}}}"#
        )
    };
    let good = doc(
        r#", "windows": [{"kind": "deny", "cron": "0 9 * * 1-5", "duration": "8h"}]"#,
        r#", "restartLimit": {"count": 3, "within": "10m"}"#,
    );
    let report = super::validate::check_set([("good.json", good.as_str())]);
    assert!(report.is_valid(), "{:?}", report.problems);
    let spec = report.documents[0].1.converge.as_ref().unwrap();
    assert_eq!((spec.windows.len(), spec.restart_limit.as_ref().map(|l| l.count)), (1, Some(3)));
    let bad = doc(
        r#", "windows": [{"kind": "deny", "cron": "*/61 * * * *", "duration": "0s"}]"#,
        r#", "restartLimit": {"count": 0, "within": "10m"}"#,
    );
    let report = super::validate::check_set([("bad.json", bad.as_str())]);
    let messages: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(messages.iter().any(|m| m.contains(r#"window deny "*/61 * * * *" for 0s"#)), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("a restart limit of 0")), "{messages:?}");
}
