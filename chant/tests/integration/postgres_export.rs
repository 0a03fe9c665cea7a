//! The postgres lexicon's live export on a real database, connected as the non-superuser app
//! role: constraints, indexes, column comments and markers are read in a fixed number of queries
//! whatever the size, a schema the role cannot use is a note (never a silent gap), and the
//! generated declaration is the one a person would write.

use chant::lexicon::export::{ExportOptions, ExportOwnership, Selector};
use chant::lexicon::postgres::{PostgresDeclaration, PostgresLexicon, codegen, export};
use chant::redact::Redactor;

use super::postgres_cluster::cluster;

const SCHEMA: &str = "
    CREATE SCHEMA app;
    CREATE TABLE app.teams (id integer PRIMARY KEY, name text NOT NULL UNIQUE);
    CREATE TABLE app.users (
        id bigserial PRIMARY KEY,
        team_id integer REFERENCES app.teams (id),
        age integer CHECK (age >= 0),
        email varchar(40) NOT NULL DEFAULT ''
    );
    CREATE INDEX users_email ON app.users (email);
    COMMENT ON TABLE app.users IS 'People [chant managed-by=chant stack=tests env=legacy]';
    COMMENT ON COLUMN app.users.email IS 'Where to write';
    CREATE VIEW app.adults AS SELECT * FROM app.users WHERE age >= 18;
";

fn lexicon(dsn: String) -> PostgresLexicon {
    PostgresLexicon::new("legacy", "tests", PostgresDeclaration::new()).with_binding(Some("DSN".into()), Some(dsn))
}

fn template(lexicon: &PostgresLexicon, options: &ExportOptions) -> chant::lexicon::export::ExportedTemplate {
    let (snapshot, address) = export::read(lexicon).unwrap();
    assert_eq!(snapshot.queries, export::QUERIES);
    let ctx = export::TemplateContext {
        env: "legacy",
        identity: lexicon.identity(),
        address: &address,
        read_at: "2026-01-01T00:00:00.000Z",
        options,
    };
    export::template(&snapshot, &ctx)
}

#[test]
fn constraints_indexes_comments_and_markers_are_read_in_a_fixed_number_of_queries() {
    let c = cluster();
    let db = c.database("export");
    c.as_app(&db, SCHEMA);
    c.as_superuser(&db, "CREATE SCHEMA hidden; CREATE TABLE hidden.keys (k text);");
    let lex = lexicon(c.dsn(&db));

    let (snapshot, address) = export::read(&lex).unwrap();
    assert_eq!(snapshot.queries, export::QUERIES, "5 queries of its own");
    assert_eq!(address, c.address(&db));
    let users = &snapshot.constraints["app.users"];
    let fk = users.iter().find(|k| k.contype == 'f').unwrap();
    assert_eq!(fk.definition, "FOREIGN KEY (team_id) REFERENCES app.teams(id)");
    assert!(users.iter().any(|k| k.contype == 'c' && k.definition.contains("age >= 0")), "{users:?}");
    let pkey = snapshot.indexes["app.users"].iter().find(|i| i.name == "users_pkey").unwrap();
    assert!(pkey.backs_constraint);
    assert!(!snapshot.indexes["app.users"].iter().find(|i| i.name == "users_email").unwrap().backs_constraint);
    assert_eq!(snapshot.column_comments["app.users"]["email"], "Where to write");

    let t = template(&lex, &ExportOptions::default());
    let names: Vec<&str> = t.resources().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["app", "app.teams", "app.users"], "no hidden table, no view, no empty public");
    let users = t.resources().iter().find(|r| r.name == "app.users").unwrap();
    assert_eq!(users.ownership, ExportOwnership::Owned, "the marker is this project's and env's");
    assert_eq!(users.text("comment"), Some("People"));
    let children: Vec<String> = users.children.iter().map(|c| format!("{} {}", c.kind, c.name)).collect();
    assert!(children.contains(&"index users_email".to_owned()), "{children:?}");
    assert!(!children.contains(&"index users_pkey".to_owned()), "implied by the primary key: {children:?}");
    let notes = t.notes().join("\n");
    assert!(notes.contains("schema hidden not exported: the role has no USAGE on it"), "{notes}");
    assert!(notes.contains("1 view(s) not exported") && notes.contains("app.adults"), "{notes}");

    let g = codegen::generate(&t, &Redactor::default()).unwrap();
    let body: String = g.chain.as_ref().unwrap().one_line().split_whitespace().collect();
    assert!(body.contains("Table::new(\"app\",\"users\")"), "{body}");
    assert!(
        body.contains("Column::new(\"email\",\"charactervarying(40)\").not_null().default(\"''::charactervarying\")"),
        "{body}"
    );
    // The whole table is declared: its column comment, its constraints (as the deep read
    // compares them) and its plain index.
    assert!(body.contains(".comment(\"Wheretowrite\")"), "{body}");
    assert!(
        body.contains(
            ".constraint(Constraint::new(\"users_team_id_fkey\",\"FOREIGNKEY(team_id)REFERENCESapp.teams(id)\"))"
        ),
        "{body}"
    );
    assert!(body.contains(".index(Index::new(\"users_email\",[\"email\"]))"), "{body}");
    assert!(g.omitted.is_empty(), "{:?}", g.omitted);

    // More tables, same number of queries.
    let more: String = (0..30).map(|i| format!("CREATE TABLE app.more{i} (id int PRIMARY KEY);")).collect();
    c.as_app(&db, &more);
    let (snapshot, _) = export::read(&lex).unwrap();
    assert_eq!(snapshot.queries, export::QUERIES);
    assert_eq!(snapshot.constraints.len(), 32);
}

#[test]
fn owned_selector_and_verbatim_on_a_real_database() {
    let c = cluster();
    let db = c.database("export_opts");
    c.as_app(&db, SCHEMA);
    let lex = lexicon(c.dsn(&db));
    let owned = template(&lex, &ExportOptions { owned: true, ..ExportOptions::default() });
    let names: Vec<&str> = owned.resources().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["app.users"]);
    let selected = template(
        &lex,
        &ExportOptions { selector: Selector::parse("type=table,name='app.t*'").unwrap(), ..Default::default() },
    );
    let names: Vec<&str> = selected.resources().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["app.teams"]);
    let verbatim = template(&lex, &ExportOptions { verbatim: true, ..ExportOptions::default() });
    let users = verbatim.resources().iter().find(|r| r.name == "app.users").unwrap();
    assert!(users.text("raw_comment").unwrap().ends_with("[chant managed-by=chant stack=tests env=legacy]"));
    assert!(users.children.iter().any(|c| c.kind == "sequence" && c.name == "app.users_id_seq"), "{users:?}");
    assert!(verbatim.resources().iter().any(|r| r.name == "public"), "the server's public schema is kept");
}
