//! The postgres lexicon's deep read on the throw-away cluster: a default changed by hand is drift
//! with both values and the owning role as owner; a column the owning role adds is unclaimed,
//! `field-manager`, held by that role; a column on a table another role owns is held by that
//! role; a missing declared index is drift that apply creates back; a baselined default stops
//! alerting and a further change alerts with three values; pgbench's tables make no deep rows
//! for chant's declared tables; the read takes a fixed number of queries.

use chant::lexicon::postgres::{
    Column, Constraint, DeleteMode, Index, PostgresDeclaration, PostgresLexicon, Table, deep,
};
use chant::model::EnvStatus;
use chant::observe::deep::baseline::{Baseline, Candidate};
use chant::observe::deep::fold::assess_with_deep;
use chant::observe::deep::{ClaimSource, ComponentDeep, EntityDeep, observe_deep};
use chant::observe::{ChangeAction, EnvAssessment, LastApply, Lexicon};
use serde_json::json;

use super::postgres_cluster::{APP_ROLE, cluster};

fn declaration() -> PostgresDeclaration {
    PostgresDeclaration::new().table(
        Table::new("app", "users")
            .column(Column::new("id", "bigint").not_null())
            .column(Column::new("email", "text").not_null().default("''::text").comment("where we write"))
            .comment("People")
            .constraint(Constraint::new("users_pkey", "PRIMARY KEY (id)"))
            .index(Index::new("users_email_idx", ["email"])),
    )
}

fn lexicon(db: &str) -> PostgresLexicon {
    PostgresLexicon::new("prod-db", "chant-tests", declaration())
        .with_binding(Some("PROD_DATABASE_URL".into()), Some(cluster().dsn(db)))
        .with_last_apply(LastApply::recorded(["app.users"]))
}

fn deep_of(lex: &PostgresLexicon) -> ComponentDeep {
    let deep = observe_deep(lex, &lex.declared()).unwrap();
    assert_eq!(deep.unavailable, None, "{deep:?}");
    deep
}

fn users(deep: &ComponentDeep) -> &EntityDeep {
    deep.entities.iter().find(|e| e.entity == "app.users").unwrap()
}

fn assessed(lex: &PostgresLexicon, deep: &ComponentDeep) -> EnvAssessment {
    assess_with_deep("prod-db", &[lex.component_input(false)], std::slice::from_ref(deep))
}

#[test]
fn an_applied_table_is_clean_in_a_fixed_number_of_queries_and_a_changed_default_drifts() {
    let c = cluster();
    let db = c.database("deep_default");
    let lex = lexicon(&db);
    let applied = lex.apply(DeleteMode::Never).unwrap();
    assert!(
        applied.executed.iter().any(|s| s.contains("ADD CONSTRAINT \"users_pkey\" PRIMARY KEY (id)")),
        "{applied:?}"
    );
    assert!(applied.executed.iter().any(|s| s.starts_with("CREATE INDEX \"users_email_idx\"")), "{applied:?}");
    let (catalog, _) = lex.read_deep().unwrap();
    assert_eq!(catalog.queries, deep::QUERIES);
    let clean = deep_of(&lex);
    assert!(users(&clean).is_clean(), "{clean:#?}");
    assert!(lex.read_paths().contains(&chant::observe::ReadPath::ObserveResourcesDeep));

    c.as_app(&db, "ALTER TABLE app.users ALTER COLUMN email SET DEFAULT 'x'::text");
    let drifted = deep_of(&lex);
    let d = &users(&drifted).drift;
    assert_eq!(d.len(), 1, "{drifted:#?}");
    assert_eq!(d[0].path, "columns.email.default");
    assert_eq!((d[0].declared.clone(), d[0].live.clone()), (json!("''::text"), Some(json!("'x'::text"))));
    assert_eq!(d[0].owner.as_deref(), Some(APP_ROLE), "the owning role manages every path of its table");
    let a = assessed(&lex, &drifted);
    assert_eq!(a.symptom.status, EnvStatus::Drifted);
    let column = a.change_sets[0].entry("app.users.email").unwrap();
    assert_eq!(column.action, ChangeAction::Update, "the drift lands on the column's own entry");
    assert_eq!(column.deltas.len(), 1, "the thin and deep deltas are one: {column:?}");

    // A baselined default stops alerting; a further change alerts again with all three values.
    let mut baseline = Baseline::new("prod-db");
    let accept =
        Candidate { entity: "app.users".into(), path: "columns.email.default".into(), value: json!("'x'::text") };
    baseline.accept(&accept, "2026-01-01T00:00:00.000Z", "dba");
    let mut accepted = drifted.clone();
    baseline.subtract_component(&mut accepted);
    assert!(users(&accepted).is_clean(), "{accepted:#?}");
    assert_eq!(assessed(&lex, &accepted).symptom.status, EnvStatus::Reconciled, "accepted on both layers");
    c.as_app(&db, "ALTER TABLE app.users ALTER COLUMN email SET DEFAULT 'y'::text");
    let mut moved = deep_of(&lex);
    baseline.subtract_component(&mut moved);
    let d = &users(&moved).drift[0];
    assert_eq!(
        (d.declared.clone(), d.live.clone(), d.baseline.clone()),
        (json!("''::text"), Some(json!("'y'::text")), Some(json!("'x'::text")))
    );

    // Apply converges it (a default is safe to restore).
    lex.apply(DeleteMode::Never).unwrap();
    assert!(users(&deep_of(&lex)).is_clean());
}

#[test]
fn extra_columns_are_unclaimed_and_held_by_the_role_that_owns_the_table() {
    let c = cluster();
    let db = c.database("deep_unclaimed");
    let lex = lexicon(&db);
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(&db, "ALTER TABLE app.users ADD COLUMN extra integer; COMMENT ON COLUMN app.users.id IS 'hand'");
    let deep = deep_of(&lex);
    let u = users(&deep);
    assert!(u.drift.is_empty(), "an undeclared value is never drift: {u:#?}");
    let paths: Vec<&str> = u.unclaimed.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["columns.extra.default", "columns.extra.not_null", "columns.extra.type", "columns.id.comment"]);
    assert!(
        u.unclaimed.iter().all(|r| r.source == ClaimSource::FieldManager && r.held_by.as_deref() == Some(APP_ROLE))
    );
    let a = assessed(&lex, &deep);
    assert_ne!(a.symptom.status, EnvStatus::Drifted, "unclaimed never makes drift");

    let other = format!("other_{db}");
    c.as_superuser(&db, &format!("CREATE ROLE {other}; ALTER TABLE app.users OWNER TO {other}"));
    c.as_superuser(&db, "ALTER TABLE app.users ADD COLUMN theirs text");
    let deep = deep_of(&lex);
    let theirs = users(&deep).unclaimed.iter().find(|r| r.path == "columns.theirs.type").unwrap();
    assert_eq!(theirs.held_by.as_deref(), Some(other.as_str()));
    assert_eq!(theirs.value, json!("text"));
}

#[test]
fn a_missing_declared_index_is_drift_and_apply_creates_it_back() {
    let c = cluster();
    let db = c.database("deep_index");
    let lex = lexicon(&db);
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(&db, "DROP INDEX app.users_email_idx; CREATE INDEX users_id_idx ON app.users (id)");
    let deep = deep_of(&lex);
    let u = users(&deep);
    let drift: Vec<&str> = u.drift.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(drift, ["indexes.users_email_idx.columns", "indexes.users_email_idx.unique"], "{u:#?}");
    assert!(u.drift.iter().all(|d| d.live.is_none()));
    let unclaimed: Vec<&str> = u.unclaimed.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(unclaimed, ["indexes.users_id_idx.columns", "indexes.users_id_idx.unique"]);
    let a = assessed(&lex, &deep);
    assert_eq!(a.change_sets[0].entry("app.users").unwrap().action, ChangeAction::Update);
    assert_eq!(a.symptom.status, EnvStatus::Drifted);

    let fixed = lex.apply(DeleteMode::Never).unwrap();
    assert!(fixed.executed.iter().any(|s| s.contains("CREATE INDEX \"users_email_idx\"")), "{fixed:?}");
    let deep = deep_of(&lex);
    assert!(users(&deep).drift.is_empty(), "{deep:#?}");
    assert_eq!(assessed(&lex, &deep).symptom.status, EnvStatus::Reconciled);
    // A constraint is reported, never changed unattended.
    c.as_app(&db, "ALTER TABLE app.users DROP CONSTRAINT users_pkey");
    let reported = lex.apply(DeleteMode::Never).unwrap();
    assert!(reported.reported.iter().any(|r| r.contains("constraint users_pkey is missing")), "{reported:?}");
}

#[test]
fn pgbench_tables_make_no_deep_rows_for_the_declared_ones() {
    let c = cluster();
    let db = c.database("deep_pgbench");
    c.pgbench_init(&db);
    let lex = lexicon(&db);
    lex.apply(DeleteMode::Never).unwrap();
    let deep = deep_of(&lex);
    assert_eq!(deep.entities.len(), 1, "only declared tables are read deep: {deep:#?}");
    assert!(users(&deep).is_clean(), "{deep:#?}");
}
