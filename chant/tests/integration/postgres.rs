//! The postgres lexicon on a real database, connected as a non-superuser role: every reason
//! produced by its real condition, safe apply (twice: the second a no-op), narrowing and
//! widening by hand, owned-only apply and teardown, two processes applying at once, pgbench's
//! schema as an undeclared estate, and no password ever printed.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use chant::lexicon::ApprovedPlan;
use chant::lexicon::postgres::{
    Column, DeleteMode, PostgresDeclaration, PostgresError, PostgresLexicon, Table, catalog,
};
use chant::model::{EnvStatus, UnobservedReason};
use chant::observe::{ChangeAction, ChangeSet, EnvAssessment, LastApply, Ownership, assess, describe_unobserved};

use super::postgres_cluster::{APP_ROLE, cluster, free_port};

const STACK: &str = "chant-tests";

fn declaration() -> PostgresDeclaration {
    PostgresDeclaration::new()
        .table(
            Table::new("app", "users")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("email", "varchar(20)").not_null().default("''::character varying"))
                .column(Column::new("nickname", "text"))
                .comment("People who use the app"),
        )
        .table(
            Table::new("app", "events")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("body", "jsonb")),
        )
}

fn lexicon(db: &str, declaration: PostgresDeclaration) -> PostgresLexicon {
    PostgresLexicon::new("prod-db", STACK, declaration)
        .with_binding(Some("PROD_DATABASE_URL".into()), Some(cluster().dsn(db)))
}

fn assess_pg(lex: &PostgresLexicon, last: LastApply) -> EnvAssessment {
    let lex = lex.clone().with_last_apply(last);
    assess("prod-db", &[lex.component_input(false)])
}

fn actions(cs: &ChangeSet) -> BTreeMap<String, ChangeAction> {
    cs.entries.iter().map(|e| (e.name.clone(), e.action)).collect()
}

fn recorded(lex: &PostgresLexicon) -> LastApply {
    LastApply::recorded(lex.declaration().tables().keys().cloned())
}

#[test]
fn first_apply_creates_everything_and_the_second_is_a_no_op() {
    let c = cluster();
    let db = c.database("apply_twice");
    let lex = lexicon(&db, declaration());

    let before = assess_pg(&lex, LastApply::none());
    assert_eq!(before.symptom.status, EnvStatus::Unrecorded);
    let cs = &before.change_sets[0];
    assert_eq!(cs.component, "postgres");
    assert!(cs.entries.iter().all(|e| e.action == ChangeAction::Create), "{cs:#?}");
    assert_eq!(cs.entry("app.users").unwrap().queried.as_deref(), Some(c.address(&db).as_str()));

    let first = lex.apply(DeleteMode::Never).unwrap();
    assert!(first.executed_count >= 5, "{first:?}");
    assert!(first.reported.is_empty());
    let after = assess_pg(&lex, recorded(&lex));
    assert_eq!(after.symptom.status, EnvStatus::Reconciled, "{:#?}", after.change_sets);
    let cs = &after.change_sets[0];
    assert_eq!(cs.entry("app.users").unwrap().ownership, Some(Ownership::Owned));
    assert_eq!(cs.entry("app.users.email").unwrap().action, ChangeAction::Noop);
    // The identity index of nothing, but the toast table of the jsonb and text columns is runtime.
    assert!(cs.entries.iter().any(|e| e.action == ChangeAction::Runtime && e.kind.as_deref() == Some("toast")));

    let second = lex.apply(DeleteMode::Never).unwrap();
    assert_eq!(second.executed_count, 0, "the second apply is a no-op: {second:?}");
    let comments = c.strings(&db, "SELECT obj_description('app.users'::regclass, 'pg_class')");
    assert_eq!(comments, ["People who use the app [chant managed-by=chant stack=chant-tests env=prod-db]"]);
}

#[test]
fn narrowed_by_hand_is_widened_back_widened_by_hand_is_reported_and_owned_only_fixes_it() {
    let c = cluster();
    let db = c.database("widen");
    let lex = lexicon(&db, declaration());
    lex.apply(DeleteMode::Never).unwrap();

    c.as_app(&db, "ALTER TABLE app.users ALTER COLUMN email TYPE varchar(10)");
    let drifted = assess_pg(&lex, recorded(&lex));
    assert_eq!(drifted.symptom.status, EnvStatus::Drifted);
    let entry = drifted.change_sets[0].entry("app.users.email").unwrap().clone();
    assert_eq!(entry.action, ChangeAction::Update);
    assert_eq!(entry.deltas[0].live.as_deref(), Some("character varying(10)"));
    let fixed = lex.apply(DeleteMode::Never).unwrap();
    assert!(fixed.executed.iter().any(|s| s.contains("TYPE character varying(20)")), "{fixed:?}");
    assert_eq!(assess_pg(&lex, recorded(&lex)).symptom.status, EnvStatus::Reconciled);

    c.as_app(&db, "ALTER TABLE app.users ALTER COLUMN email TYPE varchar(100)");
    let reported = lex.apply(DeleteMode::Never).unwrap();
    assert_eq!(reported.executed_count, 0);
    assert_eq!(reported.reported.len(), 1);
    assert!(reported.reported[0].contains("could lose data"), "{reported:?}");
    assert!(reported.summary().contains("1 change(s) reported, not applied"));
    assert_eq!(assess_pg(&lex, recorded(&lex)).symptom.status, EnvStatus::Drifted, "still drifted: reported only");

    let forced = lex.apply(DeleteMode::OwnedOnly).unwrap();
    assert!(forced.executed.iter().any(|s| s.contains("USING \"email\"::character varying(20)")));
    assert_eq!(assess_pg(&lex, recorded(&lex)).symptom.status, EnvStatus::Reconciled);
}

#[test]
fn nullability_defaults_comments_and_missing_columns_are_restored_and_nothing_is_dropped() {
    let c = cluster();
    let db = c.database("restore");
    let lex = lexicon(&db, declaration());
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(
        &db,
        "ALTER TABLE app.users ALTER COLUMN email DROP NOT NULL; \
         ALTER TABLE app.users ALTER COLUMN email DROP DEFAULT; \
         ALTER TABLE app.users DROP COLUMN nickname; \
         ALTER TABLE app.users ADD COLUMN added_by_hand int; \
         COMMENT ON TABLE app.users IS 'edited';",
    );
    let drifted = assess_pg(&lex, recorded(&lex));
    let a = actions(&drifted.change_sets[0]);
    assert_eq!(a["app.users.email"], ChangeAction::Update);
    assert_eq!(a["app.users.nickname"], ChangeAction::Create);
    assert_eq!(a["app.users.added_by_hand"], ChangeAction::Adopt, "an undeclared column is never a delete");
    assert_eq!(a["app.users"], ChangeAction::Update);
    assert_eq!(drifted.change_sets[0].entry("app.users").unwrap().ownership, Some(Ownership::Foreign));

    lex.apply(DeleteMode::Never).unwrap();
    let after = assess_pg(&lex, recorded(&lex));
    let a = actions(&after.change_sets[0]);
    assert!(
        a.iter()
            .all(|(n, x)| matches!(x, ChangeAction::Noop | ChangeAction::Runtime) || n == "app.users.added_by_hand"),
        "{a:?}"
    );
    assert_eq!(c.strings(&db, "SELECT attname::text FROM pg_attribute WHERE attrelid = 'app.users'::regclass AND attname = 'added_by_hand'").len(), 1);
}

/// The change lines a gate plan of `lex`'s apply lists, as an approval binds them.
fn approved_lines(lex: &PostgresLexicon, last: LastApply) -> Vec<String> {
    let assessment = assess_pg(lex, last);
    assessment.change_sets[0].entries.iter().filter_map(|e| e.apply_line("postgres")).collect()
}

fn bio(width: &str) -> PostgresDeclaration {
    PostgresDeclaration::new().table(
        Table::new("app", "users")
            .column(Column::new("id", "bigint").not_null())
            .column(Column::new("bio", format!("varchar({width})"))),
    )
}

#[test]
fn an_approved_type_change_is_rechecked_under_the_lock_and_rolled_back_when_the_column_changed() {
    let c = cluster();
    let db = c.database("approved_window");
    let same = |line: &str| line.to_owned();

    // An approved create is applied: the plan under the lock is the plan approved.
    let wide = lexicon(&db, bio("200"));
    let creates = approved_lines(&wide, LastApply::none());
    assert!(creates.contains(&"create postgres/app.users.bio".to_owned()), "{creates:?}");
    let created = wide.apply_approved(DeleteMode::Never, &ApprovedPlan { changes: &creates, redact: &same }).unwrap();
    assert!(created.executed_count >= 2, "{created:?}");

    // varchar(200) -> varchar(100) is approved...
    let narrow = lexicon(&db, bio("100"));
    let approved = approved_lines(&narrow, recorded(&narrow));
    let line = "update postgres/app.users.bio (type: character varying(200) -> character varying(100))";
    assert!(approved.contains(&line.to_owned()), "{approved:?}");

    // ...then, between the run's check and the apply's transaction, the column becomes text and
    // holds 5,000-character rows, which the approved narrowing would truncate.
    c.as_app(&db, "ALTER TABLE app.users ALTER COLUMN bio TYPE text");
    c.as_app(&db, "INSERT INTO app.users (id, bio) VALUES (1, repeat('x', 5000))");

    let refused =
        narrow.apply_approved(DeleteMode::OwnedOnly, &ApprovedPlan { changes: &approved, redact: &same }).unwrap_err();
    let PostgresError::Unapproved { difference, env, .. } = &refused else {
        panic!("expected Unapproved, got {refused:?}");
    };
    assert_eq!(env, "prod-db");
    assert_eq!(
        difference,
        &format!(
            "`update postgres/app.users.bio (type: text -> character varying(100))` was not approved \
             (approved for it: `{line}`)"
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("rolled back"), "{refused}");
    // Nothing ran: the column is still text, the row whole.
    let types = c.strings(
        &db,
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
        WHERE attrelid = 'app.users'::regclass AND attname = 'bio'",
    );
    assert_eq!(types, ["text"]);
    assert_eq!(c.strings(&db, "SELECT length(bio)::text FROM app.users WHERE id = 1"), ["5000"]);
}

#[test]
fn owned_only_drops_owned_undeclared_tables_and_teardown_removes_only_what_chant_owns() {
    let c = cluster();
    let db = c.database("teardown");
    let lex = lexicon(&db, declaration());
    lex.apply(DeleteMode::Never).unwrap();
    c.as_app(&db, "CREATE TABLE app.foreign_notes (id int); CREATE TABLE public.kept (id int)");

    // Declare one table fewer: app.events is owned and undeclared.
    let smaller = lexicon(&db, PostgresDeclaration::new().table(declaration().tables()["app.users"].clone()));
    let before = assess_pg(&smaller, recorded(&lex));
    let a = actions(&before.change_sets[0]);
    assert_eq!(a["app.events"], ChangeAction::Delete);
    assert_eq!(a["app.foreign_notes"], ChangeAction::Adopt);
    assert_eq!(a["public.kept"], ChangeAction::Adopt);
    let plain = smaller.apply(DeleteMode::Never).unwrap();
    assert!(!plain.executed.iter().any(|s| s.starts_with("DROP")));
    let owned_only = smaller.apply(DeleteMode::OwnedOnly).unwrap();
    assert_eq!(owned_only.executed, ["DROP TABLE \"app\".\"events\""]);
    let tables = || {
        c.strings(
            &db,
            "SELECT schemaname || '.' || tablename FROM pg_tables WHERE schemaname IN ('app', 'public') ORDER BY 1",
        )
    };
    assert_eq!(tables(), ["app.foreign_notes", "app.users", "public.kept"]);

    let plan = chant::observe::Lexicon::teardown_owned(&smaller, &[]).unwrap();
    let torn = smaller.teardown(&plan).unwrap();
    assert_eq!(torn.action, "teardown");
    assert!(torn.executed.contains(&"DROP TABLE \"app\".\"users\"".to_owned()), "{torn:?}");
    assert_eq!(tables(), ["app.foreign_notes", "public.kept"], "only chant's tables are dropped");
    assert!(torn.reported.iter().any(|r| r.contains("schema app kept")), "{torn:?}");
    assert_eq!(torn.last_apply_for("PROD_DATABASE_URL"), LastApply::none());
}

#[test]
fn every_reason_arises_from_its_real_condition() {
    let c = cluster();
    let db = c.database("reasons");
    c.as_superuser(
        &db,
        "CREATE SCHEMA locked; CREATE TABLE locked.secret (id int); REVOKE ALL ON SCHEMA locked FROM PUBLIC; \
         CREATE TABLE public.theirs (id int); GRANT ALL ON public.theirs TO chant_app;",
    );
    let declared = PostgresDeclaration::new()
        .table(Table::new("public", "theirs").column(Column::new("id", "integer")))
        .table(Table::new("locked", "secret").column(Column::new("id", "integer")))
        .table(Table::new("public", "fresh").column(Column::new("id", "integer")))
        .materialized_view("public", "stats");
    let reason = |lex: &PostgresLexicon, name: &str| {
        let o = chant::observe::observe_component(lex, &lex.declared());
        o.unobserved.get(name).map(|u| u.reason)
    };

    // A schema without USAGE: that table alone.
    let lex = lexicon(&db, declared.clone());
    let o = chant::observe::observe_component(&lex, &lex.declared());
    assert_eq!(o.unobserved["locked.secret"].reason, UnobservedReason::ReadFailed);
    assert!(o.unobserved["locked.secret"].detail.as_deref().unwrap().contains("no USAGE"));
    assert_eq!(o.unobserved["public.stats"].reason, UnobservedReason::UnsupportedKind);
    assert!(o.resources.contains_key("public.theirs"));
    assert!(o.is_absent("public.fresh"), "the rest is read as usual");
    let a = assess_pg(&lex, LastApply::none());
    assert_eq!(a.symptom.status, EnvStatus::Unknown);
    assert_eq!(a.symptom.unobserved_reasons, [UnobservedReason::UnsupportedKind, UnobservedReason::ReadFailed]);

    // The owned filter on a foreign table.
    let owned = lex.clone().owned_only(true);
    assert_eq!(reason(&owned, "public.theirs"), Some(UnobservedReason::Filtered));

    // The variable unset.
    let unset =
        PostgresLexicon::new("prod-db", STACK, declared.clone()).with_binding(Some("PROD_DATABASE_URL".into()), None);
    assert_eq!(reason(&unset, "public.fresh"), Some(UnobservedReason::NoBinding));

    // A wrong password: no credentials, with the address in words and no password anywhere.
    let wrong = format!("postgres://{APP_ROLE}:not-the-password@127.0.0.1:{}/{db}", c.port);
    let bad = PostgresLexicon::new("prod-db", STACK, declared.clone()).with_binding(Some("V".into()), Some(wrong));
    let o = chant::observe::observe_component(&bad, &bad.declared());
    assert!(o.unobserved.values().all(|u| u.reason == UnobservedReason::NoCredentials), "{o:#?}");
    let entry = assess_pg(&bad, LastApply::none()).change_sets[0].entry("public.fresh").unwrap().clone();
    let words = describe_unobserved(&entry);
    assert!(words.starts_with("public.fresh (table) — no credentials"), "{words}");
    assert!(words.ends_with(&format!("[queried {}]", c.address(&db))), "{words}");
    let json = serde_json::to_string(&o).unwrap();
    assert!(!json.contains("not-the-password") && !words.contains("not-the-password"));
    let err = bad.apply(DeleteMode::Never).unwrap_err();
    assert!(matches!(err, PostgresError::NoCredentials { .. }));
    assert!(!err.to_string().contains("not-the-password"), "{err}");

    // The server down: every entity read-failed.
    let down = format!("postgres://{APP_ROLE}:{}@127.0.0.1:{}/{db}", c.app_password, free_port());
    let down = PostgresLexicon::new("prod-db", STACK, declared).with_binding(Some("V".into()), Some(down));
    let o = chant::observe::observe_component(&down, &down.declared());
    assert_eq!(o.unobserved.len(), down.declared().len());
    assert!(o.unobserved.values().all(|u| u.reason == UnobservedReason::ReadFailed && u.queried.is_some()));
    assert!(!serde_json::to_string(&o).unwrap().contains(&c.app_password));
    assert!(matches!(down.apply(DeleteMode::Never), Err(PostgresError::Unreachable { .. })));
}

#[test]
fn pgbench_schema_is_an_undeclared_estate_that_is_adopted_never_deleted() {
    let c = cluster();
    let db = c.database("pgbench");
    c.pgbench_init(&db);
    let lex = lexicon(&db, declaration());
    lex.apply(DeleteMode::Never).unwrap();
    for mode in [false, true] {
        let lex = lex.clone().with_last_apply(recorded(&lex));
        let a = assess("prod-db", &[lex.component_input(mode)]);
        let cs = &a.change_sets[0];
        for table in ["pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"] {
            let entry = cs.entry(&format!("public.{table}")).unwrap();
            assert_eq!(entry.action, ChangeAction::Adopt, "{table}");
            assert_eq!(entry.ownership, Some(Ownership::Foreign));
        }
        assert!(cs.entries.iter().all(|e| e.action != ChangeAction::Delete));
        assert!(a.symptom.adopt_count >= 4);
    }
    let owned_only = lex.apply(DeleteMode::OwnedOnly).unwrap();
    assert_eq!(owned_only.executed_count, 0, "{owned_only:?}");
    assert_eq!(c.strings(&db, "SELECT count(*)::text FROM pg_tables WHERE tablename LIKE 'pgbench%'"), ["4"]);
}

#[test]
fn the_catalog_is_read_in_a_fixed_number_of_queries() {
    let c = cluster();
    let db = c.database("queries");
    let lex = lexicon(&db, declaration());
    let (small, _) = lex.read_snapshot().unwrap();
    c.as_app(
        &db,
        &(0..50).map(|i| format!("CREATE TABLE public.t{i} (id int primary key, v text);")).collect::<String>(),
    );
    let (big, address) = lex.read_snapshot().unwrap();
    assert_eq!(small.queries, catalog::QUERIES);
    assert_eq!(big.queries, catalog::QUERIES);
    assert_eq!(big.relations.values().filter(|r| r.is_table()).count(), 50);
    assert_eq!(address, c.address(&db));
}

/// The catalog read names what it resolves by oid (an index's and an owned sequence's table, a
/// table's toast table) and deparses defaults exactly as the catalog answers when asked the way
/// `pg_dump` asks (`pg_get_expr` with the table as context, `regclass` names): a serial's
/// `nextval`, a literal, and a generated column's expression, which refers to another column.
#[test]
fn the_catalog_read_resolves_owners_toast_tables_and_defaults_like_the_catalog() {
    let c = cluster();
    let db = c.database("resolve");
    c.as_app(
        &db,
        "CREATE SCHEMA app; \
         CREATE TABLE app.t (id serial PRIMARY KEY, body jsonb, n integer NOT NULL DEFAULT 7, \
                             twice integer GENERATED ALWAYS AS (n * 2) STORED); \
         CREATE INDEX t_n ON app.t (n); \
         CREATE SEQUENCE app.s OWNED BY app.t.n; CREATE SEQUENCE app.loose; \
         COMMENT ON TABLE app.t IS 'the t';",
    );
    let lex = lexicon(&db, declaration());
    let (snapshot, _) = lex.read_snapshot().unwrap();
    let t = &snapshot.relations["app.t"];
    assert_eq!(t.comment, "the t");
    let toast = c.strings(&db, "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'app.t'::regclass");
    assert_eq!(t.toast.as_deref(), Some(toast[0].as_str()));
    assert!(t.toast.as_deref().is_some_and(|n| n.starts_with("pg_toast.")));
    for owned in ["app.t_pkey", "app.t_n", "app.t_id_seq", "app.s"] {
        assert_eq!(snapshot.relations[owned].owner.as_deref(), Some("app.t"), "{owned}");
    }
    assert_eq!(snapshot.relations["app.loose"].owner, None);
    let expected = c.strings(
        &db,
        "SELECT a.attname || '=' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '') \
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
         WHERE a.attrelid = 'app.t'::regclass AND a.attnum > 0 ORDER BY a.attnum",
    );
    let read: Vec<String> =
        snapshot.columns_of("app.t").iter().map(|(name, col)| format!("{name}={}", col.default)).collect();
    assert_eq!(read, expected);
    assert_eq!(read, ["id=nextval('app.t_id_seq'::regclass)", "body=", "n=7", "twice=(n * 2)"]);
}

/// The observation's read (two connections sharing one exported snapshot) finds exactly what one
/// transaction reading the three queries in a row finds (the estate read's catalog), read after
/// read of a changing catalog.
#[test]
fn the_shared_snapshot_read_is_the_read_of_one_transaction() {
    let c = cluster();
    let db = c.database("shared");
    c.as_app(
        &db,
        "CREATE SCHEMA app; COMMENT ON SCHEMA app IS 'the app'; \
         CREATE TABLE app.t (id serial PRIMARY KEY, body jsonb, n integer NOT NULL DEFAULT 7); \
         CREATE INDEX t_n ON app.t (n); CREATE SEQUENCE app.s OWNED BY app.t.n; \
         CREATE VIEW app.v AS SELECT id FROM app.t; COMMENT ON TABLE app.t IS 'the t';",
    );
    let lex = lexicon(&db, declaration());
    for round in 0..3 {
        let (shared, address) = lex.read_snapshot().unwrap();
        let (estate, _) = lex.read_estate().unwrap();
        assert_eq!(shared, estate.catalog, "round {round}");
        assert_eq!(shared.queries, catalog::QUERIES);
        assert_eq!(address, c.address(&db));
        assert_eq!(shared.columns_of("app.t").len(), 3 + round);
        c.as_app(&db, &format!("ALTER TABLE app.t ADD COLUMN c{round} text; CREATE TABLE app.u{round} (id int);"));
    }
}

/// A role allowed one connection: of the two connections an observation opens at once, one is
/// refused, and the other reads everything itself, in its own transaction. The observation is
/// the same as the app role's.
#[test]
fn a_refused_second_connection_leaves_the_read_to_the_first() {
    let c = cluster();
    let db = c.database("solo");
    c.as_app(&db, "CREATE SCHEMA app; CREATE TABLE app.t (id serial PRIMARY KEY, n integer NOT NULL DEFAULT 7);");
    let role = format!("chant_solo_{}", std::process::id());
    c.as_superuser(
        &db,
        &format!(
            "CREATE ROLE {role} LOGIN CONNECTION LIMIT 1 PASSWORD 'solo-pw'; GRANT {APP_ROLE} TO {role}; \
             ALTER ROLE {role} SET role = {APP_ROLE};"
        ),
    );
    let solo = PostgresLexicon::new("prod-db", STACK, declaration())
        .with_binding(Some("V".into()), Some(format!("postgres://{role}:solo-pw@127.0.0.1:{}/{db}", c.port)));
    let (alone, _) = solo.read_snapshot().unwrap();
    let (shared, _) = lexicon(&db, declaration()).read_snapshot().unwrap();
    assert_eq!(alone, shared);
    assert_eq!(alone.columns_of("app.t").len(), 2);
    let o = chant::observe::observe_component(&solo, &solo.declared());
    assert!(o.unobserved.is_empty(), "{o:#?}");
    assert!(o.resources.contains_key("app.t"));
}

/// An observation ends both of its sessions as a client should, each transaction ended and the
/// goodbye said: the server logs no `unexpected EOF on client connection` for them (every tick
/// observes, and a DBA would read that line at every one).
#[test]
fn an_observation_ends_both_sessions_without_an_unexpected_eof_in_the_server_log() {
    let c = cluster();
    let db = c.database("goodbye");
    c.as_app(&db, "CREATE SCHEMA app; CREATE TABLE app.users (id bigint NOT NULL);");
    let lex = lexicon(&db, declaration());
    for _ in 0..3 {
        let o = chant::observe::observe_component(&lex, &lex.declared());
        assert!(o.unobserved.is_empty(), "{o:#?}");
        assert!(o.resources.contains_key("app.users"));
    }
    assert_sessions_said_goodbye(&db);
}

/// A server that refuses to export a snapshot (the function revoked in this database): the first
/// connection ends its failed transaction and reads everything alone, in a transaction of its
/// own, as one connection's read does, and its session ends with a goodbye too.
#[test]
fn a_refused_snapshot_export_leaves_the_whole_read_to_the_first_connection() {
    let c = cluster();
    let db = c.database("no_export");
    c.as_app(&db, "CREATE SCHEMA app; CREATE TABLE app.t (id serial PRIMARY KEY, n integer NOT NULL DEFAULT 7);");
    c.as_superuser(&db, "REVOKE EXECUTE ON FUNCTION pg_catalog.pg_export_snapshot() FROM PUBLIC");
    let lex = lexicon(&db, declaration());
    let (alone, _) = lex.read_snapshot().unwrap();
    let (estate, _) = lex.read_estate().unwrap();
    assert_eq!(alone, estate.catalog);
    assert_eq!(alone.columns_of("app.t").len(), 2);
    let o = chant::observe::observe_component(&lex, &lex.declared());
    assert!(o.unobserved.is_empty(), "{o:#?}");
    assert!(o.resources.contains_key("app.t"));
    assert_sessions_said_goodbye(&db);
}

/// Waits (within a bound) until no session of `db` is open, then asserts that the server logged
/// no `unexpected EOF` for any of them: each ended with a goodbye. The test cluster's log lines
/// name their database; a session's last log line comes before its server process leaves
/// `pg_stat_activity`. Sessions may end on threads of their own after a read has returned.
fn assert_sessions_said_goodbye(db: &str) {
    let c = cluster();
    let mut admin = c.superuser("postgres").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let open: i64 =
            admin.query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", &[&db]).unwrap().get(0);
        assert!(std::time::Instant::now() < deadline, "{open} sessions of {db} still open after 20 s");
        if open == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let log = std::fs::read_to_string(&c.log).unwrap();
    let tag = format!("db={db} ");
    let eof: Vec<&str> = log.lines().filter(|l| l.contains(&tag) && l.contains("unexpected EOF")).collect();
    assert!(eof.is_empty(), "sessions of {db} ended without a goodbye: {eof:#?}");
}

/// Set for a worker run: `<dsn>`.
const WORKER: &str = "CHANT_PG_APPLY_WORKER";

/// Does nothing in a normal run; applies the declaration when started as a worker, printing the
/// error and exiting 1 on failure.
#[test]
fn worker_applies_when_asked() {
    let Ok(dsn) = std::env::var(WORKER) else { return };
    let lex = PostgresLexicon::new("prod-db", STACK, many_tables()).with_binding(Some("V".into()), Some(dsn));
    if let Err(e) = lex.apply(DeleteMode::Never) {
        eprintln!("apply failed: {e}");
        std::process::exit(1);
    }
}

fn many_tables() -> PostgresDeclaration {
    (0..40).fold(declaration(), |d, i| {
        d.table(
            Table::new("app", format!("t{i}"))
                .column(Column::new("id", "bigint").not_null())
                .comment(format!("table {i}")),
        )
    })
}

#[test]
fn two_processes_applying_at_once_both_succeed_or_the_loser_names_the_lock() {
    let c = cluster();
    let db = c.database("concurrent");
    let spawn = || {
        Command::new(std::env::current_exe().unwrap())
            .args(["postgres::worker_applies_when_asked", "--exact", "--test-threads=1", "--quiet", "--nocapture"])
            .env(WORKER, c.dsn(&db))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let workers = [spawn(), spawn()];
    let mut ok = 0;
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => ok += 1,
            Some(1) => assert!(stderr.contains("advisory lock"), "the loser must name the lock: {stderr}"),
            other => panic!("worker exited {other:?}: {stderr}"),
        }
    }
    assert!(ok >= 1);
    let tables = c.strings(&db, "SELECT tablename::text FROM pg_tables WHERE schemaname = 'app' ORDER BY 1");
    assert_eq!(tables.len(), many_tables().tables().len());
    let markers = c.strings(
        &db,
        "SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'app' AND c.relkind = 'r'",
    );
    for comment in markers {
        assert_eq!(comment.matches("[chant ").count(), 1, "one marker per table: {comment}");
    }
    let lex = lexicon(&db, many_tables());
    assert_eq!(assess_pg(&lex, recorded(&lex)).symptom.status, EnvStatus::Reconciled);
}

#[test]
fn bad_declarations_are_refused_with_the_entity_named() {
    let c = cluster();
    let db = c.database("baddecl");
    let bad =
        lexicon(&db, PostgresDeclaration::new().table(Table::new("app", "Users").column(Column::new("id", "int"))));
    let err = bad.apply(DeleteMode::Never).unwrap_err().to_string();
    assert_eq!(err, "invalid postgres declaration for app.Users: invalid identifier \"Users\": use [a-z_][a-z0-9_]*");
    let o = chant::observe::observe_component(&bad, &bad.declared());
    assert!(o.unobserved.values().all(|u| u.reason == UnobservedReason::ReadFailed));
    assert!(o.unobserved.values().next().unwrap().detail.as_deref().unwrap().contains("invalid identifier"));
}

/// The columns query leaves the order of its rows to the server's plan (so that rows stream as
/// they are made): a plan that scans `pg_attribute` in the order its tuples lie sends a table's
/// columns apart and out of column order once one was altered (its tuple rewritten at the end)
/// or added after another table was made. The read still files every column under its table, in
/// column order, whichever way the rows came.
#[test]
fn the_columns_are_read_in_column_order_whatever_order_the_server_sends_them_in() {
    let c = cluster();
    let db = c.database("column_order");
    c.as_app(
        &db,
        "CREATE SCHEMA app; CREATE TABLE app.a (x int, y int, z int); CREATE TABLE app.b (id int); \
         ALTER TABLE app.a ALTER COLUMN x SET NOT NULL; ALTER TABLE app.a ADD COLUMN w int;",
    );
    // Hash joins only: pg_attribute is scanned as its tuples lie (the usual plan reads each
    // table's columns through the index, together and in order).
    c.as_superuser(
        &db,
        &format!("ALTER DATABASE {db} SET enable_nestloop = off; ALTER DATABASE {db} SET enable_mergejoin = off"),
    );
    let sent: Vec<String> = c
        .strings(
            &db,
            &format!(
                "SELECT relname || '.' || attname FROM ({}) r(oid, attname, t, nn, d, nspname, relname, attnum)",
                catalog::COLUMNS
            ),
        )
        .into_iter()
        .filter(|name| name.starts_with("a.") || name.starts_with("b."))
        .collect();
    assert_ne!(sent, ["a.x", "a.y", "a.z", "a.w", "b.id"], "the plan sent the rows in order: the test shows nothing");

    let declaration = PostgresDeclaration::new()
        .table(Table::new("app", "a").column(Column::new("x", "integer").not_null()))
        .table(Table::new("app", "b").column(Column::new("id", "integer")));
    let lex = lexicon(&db, declaration);
    let (snapshot, _) = lex.read_snapshot().unwrap();
    let names = |table: &str| snapshot.columns_of(table).iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>();
    assert_eq!(names("app.a"), ["x", "y", "z", "w"]);
    assert_eq!(names("app.b"), ["id"]);
    assert!(snapshot.columns_of("app.a")[0].1.not_null);
    // And the observation (two connections, the columns' verdicts made as they come) agrees.
    let a = actions(&assess_pg(&lex, LastApply::none()).change_sets[0]);
    assert_eq!(a["app.a.x"], ChangeAction::Noop, "{a:?}");
    assert_eq!(a["app.a.w"], ChangeAction::Adopt, "{a:?}");
    assert_eq!(a["app.b.id"], ChangeAction::Noop, "{a:?}");
}
