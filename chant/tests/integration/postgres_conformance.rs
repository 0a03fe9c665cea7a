//! The observation conformance suite run on the postgres lexicon over a real database: every
//! reason produced for real, held to the lexicon's declared ownership channel (the COMMENT
//! marker on `describeResources`), markers surfaced verbatim and absent where the live model has
//! none. Also the refusal of a channel naming a read path a lexicon does not implement.

use chant::lexicon::postgres::{Column, DeleteMode, PostgresDeclaration, PostgresLexicon, Table};
use chant::model::UnobservedReason;
use chant::observe::conformance::{Scenario, Suite};
use chant::observe::{
    ChannelKeys, DeclaredEntity, Lexicon, LexiconError, Marker, Observation, OwnershipChannel, ReadPath,
};

use super::postgres_cluster::{APP_ROLE, cluster, free_port};

const STACK: &str = "chant-tests";

fn declaration() -> PostgresDeclaration {
    PostgresDeclaration::new()
        .table(Table::new("app", "users").column(Column::new("id", "bigint").not_null()).comment("Users"))
        .table(Table::new("public", "theirs").column(Column::new("id", "integer")))
        .table(Table::new("locked", "secret").column(Column::new("id", "integer")))
        .table(Table::new("app", "missing").column(Column::new("id", "integer")))
        .materialized_view("app", "stats")
}

fn lexicon(dsn: Option<String>) -> PostgresLexicon {
    PostgresLexicon::new("prod-db", STACK, declaration()).with_binding(Some("PROD_DATABASE_URL".into()), dsn)
}

fn scenario(name: &str, lexicon: PostgresLexicon) -> Scenario {
    let declared = lexicon.declared();
    Scenario::new(name, declared, move |d| lexicon.describe_resources(d))
}

#[test]
fn the_postgres_lexicon_keeps_the_observation_contract() {
    let c = cluster();
    let db = c.database("conformance");
    // app.users applied by chant (so it carries the marker); app.missing never created.
    let users_only = PostgresDeclaration::new().table(declaration().tables()["app.users"].clone());
    PostgresLexicon::new("prod-db", STACK, users_only)
        .with_binding(Some("V".into()), Some(c.dsn(&db)))
        .apply(DeleteMode::Never)
        .unwrap();
    c.as_superuser(
        &db,
        "CREATE SCHEMA locked; CREATE TABLE locked.secret (id int); \
         CREATE TABLE public.theirs (id int); COMMENT ON TABLE public.theirs IS 'hand made';",
    );
    let dsn = Some(c.dsn(&db));
    let wrong = Some(format!("postgres://{APP_ROLE}:wrong@127.0.0.1:{}/{db}", c.port));
    let down = Some(format!("postgres://{APP_ROLE}:x@127.0.0.1:{}/{db}", free_port()));
    let all: Vec<String> = lexicon(None).declared().into_iter().map(|d| d.name).collect();

    let suite = Suite::for_lexicon(&lexicon(None))
        .unwrap()
        .scenario(
            scenario("a mixed estate", lexicon(dsn.clone()))
                .expect_present(["app", "app.users", "app.users.id", "public.theirs", "public.theirs.id"])
                .expect_absent(["app.missing", "app.missing.id"])
                .expect_unobserved_because("locked.secret", UnobservedReason::ReadFailed)
                .expect_unobserved_because("locked.secret.id", UnobservedReason::ReadFailed)
                .expect_unobserved_because("app.stats", UnobservedReason::UnsupportedKind)
                .expect_marker("app.users", Marker::new(STACK, "prod-db"))
                .expect_no_marker(["public.theirs", "app.users.id"]),
        )
        .scenario(
            scenario("owned filter", lexicon(dsn.clone()).owned_only(true))
                .owned()
                .expect_present(["app.users", "app.users.id"])
                .expect_unobserved_because("public.theirs", UnobservedReason::Filtered)
                .expect_unobserved_because("public.theirs.id", UnobservedReason::Filtered)
                .expect_absent(["app.missing"])
                .expect_marker("app.users", Marker::new(STACK, "prod-db")),
        )
        .scenario(all.iter().fold(scenario("variable unset", lexicon(None)), |s, n| {
            s.expect_unobserved_because(n.clone(), UnobservedReason::NoBinding)
        }))
        .scenario(all.iter().fold(scenario("wrong password", lexicon(wrong)), |s, n| {
            s.expect_unobserved_because(n.clone(), UnobservedReason::NoCredentials)
        }))
        .scenario(all.iter().fold(scenario("server down", lexicon(down)), |s, n| {
            s.expect_unobserved_because(n.clone(), UnobservedReason::ReadFailed)
        }));
    suite.run().unwrap();
}

/// A lexicon that claims its marker on a read path it does not implement.
struct Overclaiming;

impl Lexicon for Overclaiming {
    fn name(&self) -> &str {
        "overclaiming"
    }

    fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        Ok(Observation::new())
    }

    fn ownership_channel(&self) -> Option<OwnershipChannel> {
        Some(OwnershipChannel {
            keys: ChannelKeys { managed_by: "managed-by".into(), stack: "stack".into(), env: "env".into() },
            reads: vec![ReadPath::DescribeResources, ReadPath::ExportResources],
        })
    }
}

#[test]
fn a_channel_naming_an_unimplemented_read_path_is_refused() {
    let err = Suite::for_lexicon(&Overclaiming).unwrap_err();
    assert!(err.to_string().contains("exportResources, a read path it does not implement"), "{err}");
}

#[test]
fn an_owned_read_without_a_channel_must_answer_unknown() {
    // The files lexicon declares no channel: an owned scenario of it that answers `owned` breaks
    // the contract, and the suite says so.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), "x").unwrap();
    let files = chant::lexicon::files::FilesLexicon::new(
        "staging",
        Some(tmp.path().to_path_buf()),
        chant::lexicon::files::FilesDeclaration::new().file("a", "x", 0o644),
    )
    .with_last_apply(chant::observe::LastApply::recorded(["a"]));
    let declared = files.declared().unwrap();
    let suite = Suite::for_lexicon(&files)
        .unwrap()
        .scenario(Scenario::new("owned", declared, move |d| files.describe_resources(d)).owned().expect_present(["a"]));
    let err = suite.run().unwrap_err();
    assert_eq!(err.violations.len(), 1);
    assert_eq!(err.violations[0].rule, "ownership-channel");
}
