//! Unit tests of the claimed-field classification, the path grammar, the prune table, the
//! accepted baseline and the fold into the change set.

use std::collections::BTreeMap;

use serde_json::json;

use super::baseline::{Baseline, Candidate, candidates, split_target};
use super::path::{Pattern, leaves, render};
use super::*;

fn entity(declared: Value, live: Value) -> DeepEntity {
    DeepEntity { kind: Some("table".into()), declared, live, field_owners: None, subentities: BTreeMap::new() }
}

#[test]
fn paths_join_keys_and_name_collection_elements() {
    let tree = json!({
        "comment": "users",
        "columns": {"id": {"type": "bigint"}, "a.b": {"type": "text"}},
        "constraints": [{"name": "users_pkey", "kind": "p"}],
        "tags": ["x", "y"],
        "empty": {}
    });
    let paths: Vec<String> = leaves(&tree).iter().map(|(s, _)| render(s)).collect();
    assert_eq!(
        paths,
        [
            "columns.\"a.b\".type",
            "columns.id.type",
            "comment",
            "constraints[users_pkey].kind",
            "constraints[users_pkey].name",
            "tags"
        ]
    );
}

#[test]
fn equal_declared_values_report_nothing_and_a_changed_one_is_drift_with_both_values() {
    let declared = json!({"columns": {"id": {"default": "0", "type": "bigint"}}});
    let same = classify("public.users", &entity(declared.clone(), declared.clone()), &[]);
    assert!(same.is_clean(), "{same:?}");
    let live = json!({"columns": {"id": {"default": "42", "type": "bigint"}}});
    let report = classify("public.users", &entity(declared, live), &[]);
    assert_eq!(report.drift.len(), 1);
    let d = &report.drift[0];
    assert_eq!(d.path, "columns.id.default");
    assert_eq!((d.declared.clone(), d.live.clone()), (json!("0"), Some(json!("42"))));
    assert_eq!(d.owner, None, "no field owners, no owner");
    assert!(report.unclaimed.is_empty());
}

#[test]
fn a_missing_declared_path_is_drift_with_no_live_value() {
    let declared = json!({"indexes": {"users_email": {"columns": ["email"]}}});
    let report = classify("t", &entity(declared, json!({"indexes": {}})), &[]);
    assert_eq!(report.drift.len(), 1);
    assert_eq!(report.drift[0].path, "indexes.users_email.columns");
    assert_eq!(report.drift[0].live, None);
}

#[test]
fn undeclared_live_values_are_unclaimed_never_drift_with_their_source() {
    let declared = json!({"columns": {"id": {"type": "bigint"}}});
    let live = json!({"columns": {"id": {"type": "bigint"}, "extra": {"type": "text"}}});
    let plain = classify("t", &entity(declared.clone(), live.clone()), &[]);
    assert!(plain.drift.is_empty());
    assert_eq!(plain.unclaimed.len(), 1);
    assert_eq!(plain.unclaimed[0].path, "columns.extra.type");
    assert_eq!(plain.unclaimed[0].source, ClaimSource::ClaimedFields);
    assert_eq!(plain.unclaimed[0].held_by, None);

    let mut owned = entity(declared, live);
    owned.field_owners = Some(BTreeMap::from([(String::new(), "alice".to_owned())]));
    let report = classify("t", &owned, &[]);
    assert_eq!(report.unclaimed[0].source, ClaimSource::FieldManager);
    assert_eq!(report.unclaimed[0].held_by.as_deref(), Some("alice"));
}

#[test]
fn field_owners_label_drift_by_the_longest_covering_path() {
    let mut e = entity(json!({"a": {"b": 1}, "c": 1}), json!({"a": {"b": 2}, "c": 2}));
    e.field_owners = Some(BTreeMap::from([
        ("a".to_owned(), "kubectl".to_owned()),
        ("a.b".to_owned(), "helm".to_owned()),
        ("ab".to_owned(), "nobody".to_owned()),
    ]));
    let report = classify("x", &e, &[]);
    let owners: Vec<_> = report.drift.iter().map(|d| (d.path.as_str(), d.owner.as_deref())).collect();
    assert_eq!(owners, [("a.b", Some("helm")), ("c", None)]);
}

#[test]
fn only_undeclared_substrate_written_paths_are_pruned() {
    let declared = json!({"metadata": {"label": "x"}});
    let live = json!({"metadata": {"label": "y", "uid": "123"}, "status": {"phase": "ok"}, "spec": 1});
    let prune = [Pattern::parse("status"), Pattern::parse("metadata.*")];
    let report = classify("x", &entity(declared, live), &prune);
    assert_eq!(report.drift.len(), 1, "a declared path matching a prune pattern is still classified");
    assert_eq!(report.drift[0].path, "metadata.label");
    let unclaimed: Vec<_> = report.unclaimed.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(unclaimed, ["spec"]);
}

#[test]
fn pattern_elements_match_any_member_of_a_collection() {
    let live = json!({"items": [{"name": "a", "status": 1, "v": 2}]});
    let report = classify("x", &entity(json!({}), live), &[Pattern::parse("items[].status")]);
    let unclaimed: Vec<_> = report.unclaimed.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(unclaimed, ["items[a].name", "items[a].v"]);
}

#[test]
fn the_baseline_is_value_bound_and_reports_three_values_when_moved_away() {
    let declared = json!({"default": "0"});
    let mut baseline = Baseline::new("staging");
    baseline.accept(
        &Candidate { entity: "t".into(), path: "default".into(), value: json!("42") },
        "2026-01-01T00:00:00.000Z",
        "me",
    );
    let mut accepted = classify("t", &entity(declared.clone(), json!({"default": "42"})), &[]);
    baseline.subtract(&mut accepted);
    assert!(accepted.is_clean());
    assert_eq!(accepted.baselined.len(), 1);
    assert_eq!(accepted.baselined[0].declared, Some(json!("0")));

    let mut moved = classify("t", &entity(declared, json!({"default": "43"})), &[]);
    baseline.subtract(&mut moved);
    let d = &moved.drift[0];
    assert_eq!(
        (d.declared.clone(), d.live.clone(), d.baseline.clone()),
        (json!("0"), Some(json!("43")), Some(json!("42")))
    );
    assert!(moved.baselined.is_empty());

    assert!(baseline.clear("t", "default"));
    assert!(!baseline.clear("t", "default"));
}

#[test]
fn baseline_documents_round_trip_and_bad_ones_name_their_path() {
    let mut baseline = Baseline::new("staging");
    let report = classify("t", &entity(json!({"a": 1}), json!({"a": 2, "b": 3})), &[]);
    let component = ComponentDeep { component: "x".into(), entities: vec![report], unavailable: None };
    for c in candidates(&[component]) {
        baseline.accept(&c, "2026-01-01T00:00:00.000Z", "me");
    }
    assert_eq!(baseline.accepted.len(), 2);
    let doc = baseline.to_document();
    assert_eq!(Baseline::parse(doc.as_bytes(), "p").unwrap(), baseline);
    let err = Baseline::parse(b"{not json", "chant/lifecycle:staging/observation-baseline.json").unwrap_err();
    assert!(
        err.to_string().starts_with("chant/lifecycle:staging/observation-baseline.json: not an observation baseline")
    );
    let err = Baseline::parse(br#"{"version":2,"env":"s"}"#, "p").unwrap_err();
    assert!(err.to_string().contains("version 2 is not supported"), "{err}");
}

#[test]
fn targets_split_on_the_longest_entity_name() {
    let entities = ["public.users", "public", "app.json"];
    assert_eq!(
        split_target("public.users.columns.id.default", &entities),
        Some(("public.users", "columns.id.default"))
    );
    assert_eq!(split_target("public.x", &entities), Some(("public", "x")));
    assert_eq!(split_target("app.json[a].b", &entities), Some(("app.json", "[a].b")));
    assert_eq!(split_target("nothing.here", &entities), None);
    assert_eq!(split_target("public.users", &entities), Some(("public", "users")));
}

struct ThinOnly;

impl Lexicon for ThinOnly {
    fn name(&self) -> &str {
        "thin"
    }

    fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<super::super::Observation, LexiconError> {
        Ok(super::super::Observation::new())
    }
}

#[test]
fn a_lexicon_without_the_hook_adds_nothing() {
    assert!(matches!(ThinOnly.observe_resources_deep(&[]), Err(DeepError::NotImplemented { .. })));
    assert_eq!(observe_deep(&ThinOnly, &[DeclaredEntity::new("a")]), None);
    assert!(ThinOnly.substrate_written_paths().is_empty());
}

#[test]
fn the_fold_puts_drift_on_the_sub_entity_and_an_accepted_drift_clears_both_layers() {
    use crate::observe::{ChangeAction, LastApply, Observation, Ownership, PresentResource, build_change_set};
    let declared = vec![
        DeclaredEntity::new("t"),
        DeclaredEntity::new("t.c").property("default", "0"),
        DeclaredEntity::new("u").property("mode", "0644"),
    ];
    let mut observation = Observation::new();
    observation.insert_present("t", PresentResource::new(Ownership::Owned));
    observation.insert_present("t.c", PresentResource::new(Ownership::Unknown).property("default", "1"));
    observation.insert_present("u", PresentResource::new(Ownership::Owned).property("mode", "0600"));
    let mut t = entity(
        json!({"columns": {"c": {"default": "0"}}, "comment": "x"}),
        json!({"columns": {"c": {"default": "1"}}, "comment": "y"}),
    );
    t.subentities = BTreeMap::from([("columns.c".to_owned(), "t.c".to_owned())]);
    let u = entity(json!({"mode": "0644"}), json!({"mode": "0600"}));
    let deep = classify_all(
        "x",
        &DeepObservation { entities: BTreeMap::from([("t".to_owned(), t), ("u".to_owned(), u)]) },
        &[],
    );

    let mut cs = build_change_set("x", &declared, &observation, &LastApply::recorded(["t"]));
    fold::fold(&mut cs, &deep);
    let column = cs.entry("t.c").unwrap();
    assert_eq!((column.action, column.deltas.len()), (ChangeAction::Update, 1), "one delta, not two: {column:?}");
    let table = cs.entry("t").unwrap();
    assert_eq!(table.action, ChangeAction::Update);
    assert_eq!(table.deltas[0].property, "comment");

    let mut baseline = Baseline::new("e");
    for (entity, path, value) in [("t", "columns.c.default", "1"), ("t", "comment", "y"), ("u", "mode", "0600")] {
        baseline.accept(&Candidate { entity: entity.into(), path: path.into(), value: json!(value) }, "at", "me");
    }
    let mut accepted = deep.clone();
    baseline.subtract_component(&mut accepted);
    let mut cs = build_change_set("x", &declared, &observation, &LastApply::recorded(["t"]));
    fold::fold(&mut cs, &accepted);
    assert!(cs.entries.iter().all(|e| e.action == ChangeAction::Noop), "{cs:#?}");
}
