//! The postgres lexicon beyond its declared estate, on the throw-away cluster as the
//! non-superuser app role: foreign-key dependencies (and a hole when the referenced schema loses
//! USAGE, and a chain through undeclared tables followed past depth one), ambient views and
//! orphan sequences, the teardown plan of the prod-db estate (and the hole a lost USAGE makes)
//! executed exactly, pgbench's tables never teardown candidates, a schema as a deploy unit.

use chant::lexicon::postgres::{Column, DeleteMode, PostgresDeclaration, PostgresLexicon, Table, estate};
use chant::model::UnobservedReason;
use chant::observe::estate::{
    PlanSource, Reading, StackStatus, ambient_of, dependencies_of, stack_status, teardown_plan,
};
use chant::observe::{Lexicon, observe_component};

use super::postgres_cluster::{APP_ROLE, cluster, free_port};

const STACK: &str = "chant-tests";

/// The prod-db example's estate: one schema, two tables.
fn prod_db() -> PostgresDeclaration {
    PostgresDeclaration::new()
        .table(
            Table::new("app", "users")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("email", "varchar(120)").not_null())
                .comment("People who sign in"),
        )
        .table(
            Table::new("app", "audit_log")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("entry", "text").not_null()),
        )
}

fn lexicon(db: &str, declaration: PostgresDeclaration) -> PostgresLexicon {
    PostgresLexicon::new("prod-db", STACK, declaration)
        .with_binding(Some("PROD_DB_URL".into()), Some(cluster().dsn(db)))
}

fn orders() -> PostgresDeclaration {
    PostgresDeclaration::new().table(
        Table::new("app", "orders")
            .column(Column::new("id", "bigint").not_null())
            .column(Column::new("account_id", "integer"))
            .column(Column::new("vault_id", "integer")),
    )
}

#[test]
fn a_foreign_key_to_an_undeclared_table_is_a_dependency_and_a_lost_usage_makes_it_a_hole() {
    let c = cluster();
    let db = c.database("deps");
    c.as_superuser(
        &db,
        &format!(
            "CREATE SCHEMA billing; CREATE TABLE billing.ledger (id int PRIMARY KEY); \
             REVOKE ALL ON SCHEMA billing FROM PUBLIC; GRANT USAGE ON SCHEMA billing TO {APP_ROLE}; \
             GRANT REFERENCES ON billing.ledger TO {APP_ROLE};"
        ),
    );
    let lex = lexicon(&db, orders());
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(
        &db,
        "CREATE TABLE public.accounts (id int PRIMARY KEY); \
         ALTER TABLE app.orders ADD CONSTRAINT orders_account FOREIGN KEY (account_id) REFERENCES public.accounts (id); \
         ALTER TABLE app.orders ADD CONSTRAINT orders_ledger FOREIGN KEY (vault_id) REFERENCES billing.ledger (id);",
    );
    let declared = lex.declared();

    let Reading::Read(deps) = dependencies_of(&lex, &declared) else { panic!("dependencies not read") };
    let accounts = &deps.resources["public.accounts"];
    assert_eq!(accounts.kind, "table");
    assert_eq!(accounts.referenced_by, ["app.orders"]);
    assert_eq!(deps.resources["public"].kind, "schema");
    assert_eq!(deps.resources["public"].referenced_by, ["app.orders"]);
    assert_eq!(deps.resources["billing.ledger"].referenced_by, ["app.orders"]);
    assert!(deps.holes.is_empty(), "{deps:#?}");

    // The referenced schema loses USAGE: the table is a hole with its reason, never absent.
    c.as_superuser(&db, &format!("REVOKE USAGE ON SCHEMA billing FROM {APP_ROLE}"));
    let lex = lexicon(&db, orders());
    let Reading::Read(deps) = dependencies_of(&lex, &declared) else { panic!("dependencies not read") };
    assert!(!deps.resources.contains_key("billing.ledger"));
    let hole = &deps.holes["billing.ledger"];
    assert_eq!(hole.reason, UnobservedReason::ReadFailed);
    assert_eq!(hole.referenced_by, ["app.orders"]);
    assert!(hole.detail.as_deref().unwrap().contains("no USAGE"), "{hole:?}");
    assert_eq!(deps.resources["billing"].properties.get("usage").unwrap(), "false");
    assert_eq!(deps.unobserved_count(), 1);

    // The server down: a failed reading, not an empty one.
    let down = format!("postgres://{APP_ROLE}:{}@127.0.0.1:{}/{db}", c.app_password, free_port());
    let down = PostgresLexicon::new("prod-db", STACK, orders()).with_binding(Some("V".into()), Some(down));
    assert!(matches!(dependencies_of(&down, &declared), Reading::Failed(_)));
}

#[test]
fn a_foreign_key_chain_through_undeclared_tables_is_followed_with_its_declared_referrer() {
    let c = cluster();
    let db = c.database("chain");
    let lex = lexicon(&db, orders());
    lex.apply(DeleteMode::Never).unwrap();
    // declared app.orders -> undeclared public.accounts (A) -> undeclared public.regions (B).
    c.as_app(
        &db,
        "CREATE TABLE public.regions (id int PRIMARY KEY); \
         CREATE TABLE public.accounts (id int PRIMARY KEY, region_id int REFERENCES public.regions (id)); \
         ALTER TABLE app.orders ADD CONSTRAINT orders_account FOREIGN KEY (account_id) REFERENCES public.accounts (id);",
    );
    let Reading::Read(deps) = dependencies_of(&lex, &lex.declared()) else { panic!("dependencies not read") };
    assert_eq!(deps.resources.keys().collect::<Vec<_>>(), ["public", "public.accounts", "public.regions"], "{deps:#?}");
    let a = &deps.resources["public.accounts"];
    assert_eq!(a.referenced_by, ["app.orders"]);
    assert!(!a.properties.contains_key("via"));
    let b = &deps.resources["public.regions"];
    assert_eq!(b.kind, "table");
    assert_eq!(b.referenced_by, ["app.orders"], "B keeps the declared node that pulled it in");
    assert_eq!(b.properties.get("via").unwrap(), "public.accounts");
    assert_eq!(b.properties.get("depth").unwrap(), "2");
    assert!(deps.holes.is_empty(), "{deps:#?}");
}

#[test]
fn an_orphan_sequence_and_an_extra_view_are_ambient_and_pgbench_tables_are_adopt_never_teardown() {
    let c = cluster();
    let db = c.database("ambient");
    c.pgbench_init(&db);
    let declaration = prod_db().table(
        Table::new("public", "notes").column(Column::new("id", "bigint").not_null()).column(Column::new("t", "text")),
    );
    let lex = lexicon(&db, declaration);
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(
        &db,
        "CREATE SEQUENCE public.notes_id_seq OWNED BY public.notes.id; \
         CREATE SEQUENCE app.orphan_seq; CREATE VIEW app.active_users AS SELECT id FROM app.users; \
         CREATE TABLE app.scratch (id serial);",
    );
    let declared = lex.declared();
    let observed = observe_component(&lex, &declared);
    assert_eq!(lex.ambient_kinds(), ["table", "view", "materialized view", "sequence"]);
    let Reading::Read(ambient) = ambient_of(&lex, &declared, &observed, None) else { panic!("ambient not read") };
    let names: Vec<&str> = ambient.resources.keys().map(String::as_str).collect();
    assert_eq!(names, ["app.active_users", "app.orphan_seq"], "{ambient:#?}");
    assert!(ambient.resources.values().all(|r| r.ambient));
    assert_eq!(ambient.resources["app.active_users"].kind, "view");
    // The table nobody declares is already observed (adopt), and its serial's sequence belongs to
    // it; the declared column's sequence is runtime. pgbench's tables are observed, adopt.
    assert!(observed.resources.contains_key("app.scratch"));
    assert!(!ambient.resources.contains_key("app.scratch_id_seq"));
    assert!(!ambient.resources.contains_key("public.notes_id_seq"));
    assert!(observed.resources.contains_key("public.pgbench_accounts"));

    let plan = teardown_plan(&lex, &declared);
    assert_eq!(plan.source, PlanSource::TeardownOwned);
    assert_eq!(
        plan.candidates.keys().map(String::as_str).collect::<Vec<_>>(),
        ["app", "app.audit_log", "app.users", "public.notes"]
    );
    assert!(plan.candidates.keys().all(|k| !k.contains("pgbench")));
}

#[test]
fn the_teardown_plan_lists_exactly_chants_marked_tables_and_a_lost_usage_is_a_hole() {
    let c = cluster();
    let db = c.database("tdplan");
    let lex = lexicon(&db, prod_db());
    lex.apply(DeleteMode::Never).unwrap();
    // Another env's table and an unmarked one are not candidates.
    lexicon(&db, PostgresDeclaration::new().table(Table::new("other", "t").column(Column::new("id", "int"))))
        .apply(DeleteMode::Never)
        .unwrap();
    let other_env = PostgresLexicon::new(
        "staging-db",
        STACK,
        PostgresDeclaration::new().table(Table::new("side", "t").column(Column::new("id", "int"))),
    )
    .with_binding(Some("V".into()), Some(c.dsn(&db)));
    other_env.apply(DeleteMode::Never).unwrap();
    c.as_app(&db, "CREATE TABLE app.handmade (id int)");

    let declared = lex.declared();
    let plan = teardown_plan(&lex, &declared);
    let names: Vec<&str> = plan.candidates.keys().map(String::as_str).collect();
    // other.t carries this env's marker too (applied by a lexicon of this env), so it is chant's.
    assert_eq!(names, ["app", "app.audit_log", "app.users", "other", "other.t"], "{plan:#?}");
    assert!(plan.is_complete());
    assert!(plan.candidates.values().all(|c| c.marker.as_ref().is_some_and(|m| m.stack == STACK)));

    // The schema holding a marked table loses USAGE: the table is a hole, so the plan is not
    // complete and the teardown step refuses it.
    c.as_superuser(
        &db,
        &format!("ALTER SCHEMA other OWNER TO postgres; REVOKE ALL ON SCHEMA other FROM {APP_ROLE}, PUBLIC"),
    );
    let lex = lexicon(&db, prod_db());
    let plan = teardown_plan(&lex, &declared);
    assert!(!plan.candidates.contains_key("other.t"));
    let holes: Vec<String> = plan.holes.iter().map(|h| h.describe()).collect();
    assert!(holes.iter().any(|h| h.starts_with("other.t (table) — read failed: permission denied")), "{holes:?}");
    assert!(!plan.is_complete());
}

#[test]
fn the_teardown_executes_its_plan_and_nothing_the_live_set_gained_since() {
    let c = cluster();
    let db = c.database("tdexec");
    let lex = lexicon(&db, prod_db());
    lex.apply(DeleteMode::Never).unwrap();
    let plan = teardown_plan(&lex, &lex.declared());
    assert_eq!(plan.candidates.keys().collect::<Vec<_>>(), ["app", "app.audit_log", "app.users"]);

    // Between the plan and its execution, the live set changes: a table carrying this env's
    // marker appears (a later apply of this env) and a planned one goes.
    lexicon(&db, prod_db().table(Table::new("app", "late").column(Column::new("id", "int"))))
        .apply(DeleteMode::Never)
        .unwrap();
    c.as_app(&db, "DROP TABLE app.audit_log");
    let fresh = teardown_plan(&lexicon(&db, prod_db()), &lex.declared());
    assert!(fresh.candidates.contains_key("app.late"), "a fresh plan would list it: {fresh:#?}");

    let torn = lex.teardown(&plan).unwrap();
    assert_eq!(torn.executed, ["DROP TABLE \"app\".\"users\""], "{torn:#?}");
    let tables = c.strings(&db, "SELECT schemaname || '.' || tablename FROM pg_tables WHERE schemaname = 'app'");
    assert_eq!(tables, ["app.late"], "what the plan did not list is not dropped");
    for said in [
        "table app.audit_log is in the plan and already gone",
        "table app.late carries this env's marker and is not in the plan: left",
        "schema app kept: it still holds objects that are not chant's",
    ] {
        assert!(torn.reported.iter().any(|r| r == said), "{said:?} not in {:#?}", torn.reported);
    }
    assert!(torn.summary().contains("not in the plan: left"), "{}", torn.summary());
}

#[test]
fn a_schema_is_a_deploy_unit_present_absent_or_unknown() {
    let c = cluster();
    let db = c.database("unit");
    let lex = lexicon(&db, prod_db());
    assert_eq!(lex.stack_units(), ["app"]);
    assert_eq!(stack_status(&lex, "app").status, StackStatus::Absent);
    // One binding answers every estate hook from the snapshot its first hook read: a fresh
    // binding (one per command or tick) reads again.
    lex.apply(DeleteMode::Never).unwrap();
    assert_eq!(stack_status(&lex, "app").status, StackStatus::Absent, "the binding's one snapshot");
    let status = stack_status(&lexicon(&db, prod_db()), "app");
    assert!(matches!(status.status, StackStatus::Present { healthy: true, .. }), "{status:?}");
    c.as_app(&db, "DROP TABLE app.audit_log");
    let status = stack_status(&lexicon(&db, prod_db()), "app");
    assert!(matches!(status.status, StackStatus::Present { healthy: false, .. }), "{status:?}");
    assert_eq!(status.detail.as_deref(), Some("missing: app.audit_log"));
    let down = format!("postgres://{APP_ROLE}:{}@127.0.0.1:{}/{db}", c.app_password, free_port());
    let down = PostgresLexicon::new("prod-db", STACK, prod_db()).with_binding(Some("V".into()), Some(down));
    let status = stack_status(&down, "app");
    assert!(matches!(status.status, StackStatus::Unknown { .. }), "a failed read is unknown, never absent");
    assert_eq!(serde_json::to_string(&status.status).unwrap(), "null");
}

#[test]
fn the_estate_read_is_a_fixed_number_of_queries() {
    let c = cluster();
    let db = c.database("estate_queries");
    let lex = lexicon(&db, prod_db());
    lex.apply(DeleteMode::Never).unwrap();
    let (snapshot, _) = lex.read_estate().unwrap();
    assert_eq!(snapshot.queries(), estate::QUERIES);
    assert_eq!(estate::QUERIES, 4);
}
