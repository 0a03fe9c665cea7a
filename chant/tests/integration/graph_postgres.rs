//! The live graph of a real PostgreSQL database, rebuilt through the postgres reference catalog:
//! pgbench's own schema with the foreign keys `pgbench -i --foreign-keys` adds gives exactly those
//! edges; a foreign key into a schema the role cannot read is dangling, never an edge; a column's
//! sequence default is an edge in the live graph and dangling in the declared one (the sequence is
//! not declared); the declared graph draws the declared foreign keys (the same edges as the live
//! one for pgbench's tables); and the DOT output is rendered by Graphviz's own `dot`.

use std::collections::BTreeSet;
use std::time::Duration;

use chant::graph::{self, DanglingReason, Graph};
use chant::lexicon::BoundLexicon;
use chant::lexicon::postgres::{Column, Constraint, PostgresDeclaration, PostgresLexicon, Table};
use chant::lexicon::references::Relation;
use chant::process::{Input, Limits, capture, command};

use super::postgres_cluster::cluster;

fn bound(db: &str, declaration: PostgresDeclaration) -> Vec<BoundLexicon> {
    let lexicon = PostgresLexicon::new("graph-db", "graph-test", declaration)
        .with_binding(Some("GRAPH_DATABASE_URL".into()), Some(cluster().dsn(db)));
    vec![BoundLexicon::new("postgres", lexicon)]
}

fn edges(graph: &Graph, relation: Relation) -> BTreeSet<(String, String)> {
    graph.edges_of(relation).map(|e| (e.from.clone(), e.to.clone())).collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter().map(|(a, b)| (format!("postgres:{a}"), format!("postgres:{b}"))).collect()
}

/// Renders `dot` text with Graphviz into SVG, through chant's process module.
fn graphviz(dot: &str) -> String {
    let mut cmd = command("dot");
    cmd.arg("-Tsvg");
    let input = Input { bytes: Some(dot.as_bytes().to_vec()), hold_open: false };
    let limits = Limits { timeout: Duration::from_secs(60), grace: Duration::from_secs(1), max_output: None };
    let out = capture(&mut cmd, input, limits).expect("Graphviz `dot` runs (install graphviz; .ci/run does)");
    assert!(out.success(), "dot refused the graph: {}\n{dot}", out.stderr);
    out.stdout
}

#[test]
fn pgbench_foreign_keys_are_exactly_the_edges_and_dot_renders_them() {
    let db = cluster().database("graph_pgbench");
    cluster().pgbench_init_with(&db, &["--foreign-keys"]);
    let graph = graph::live("graph-db", &bound(&db, PostgresDeclaration::new().schema("public"))).unwrap();

    // The foreign keys pgbench adds, as PostgreSQL's own catalog lists them.
    let listed = cluster().strings(
        &db,
        "SELECT conrelid::regclass::text || '>' || confrelid::regclass::text FROM pg_constraint WHERE contype = 'f'",
    );
    assert_eq!(listed.len(), 5, "{listed:?}");
    let expected: BTreeSet<(String, String)> = listed
        .iter()
        .map(|l| {
            let (from, to) = l.split_once('>').unwrap();
            (format!("postgres:public.{from}"), format!("postgres:public.{to}"))
        })
        .collect();
    assert_eq!(edges(&graph, Relation::Reference), expected);
    assert_eq!(
        edges(&graph, Relation::Reference),
        pairs(&[
            ("public.pgbench_accounts", "public.pgbench_branches"),
            ("public.pgbench_history", "public.pgbench_accounts"),
            ("public.pgbench_history", "public.pgbench_branches"),
            ("public.pgbench_history", "public.pgbench_tellers"),
            ("public.pgbench_tellers", "public.pgbench_branches"),
        ])
    );
    assert!(graph.edges_of(Relation::Reference).all(|e| e.label == "foreign key"));
    assert!(graph.edges_of(Relation::Reference).all(|e| e.via_attr.as_deref() == Some("confrelid")));
    assert_eq!(
        edges(&graph, Relation::Containment),
        pairs(&[
            ("public.pgbench_accounts", "public"),
            ("public.pgbench_branches", "public"),
            ("public.pgbench_history", "public"),
            ("public.pgbench_tellers", "public"),
        ])
    );
    assert!(graph.dangling.is_empty(), "{:?}", graph.dangling);
    assert!(graph.lexicon("postgres").unwrap().edges_computed);

    let dot = graph::render_dot(&graph);
    assert_eq!(dot.matches(" -> ").count(), 5, "{dot}");
    assert_eq!(dot.matches("subgraph cluster_").count(), 1, "{dot}");
    let svg = graphviz(&dot);
    assert!(svg.contains("<svg"), "{svg}");
    for table in ["pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"] {
        assert!(svg.contains(table), "{table} not drawn: {svg}");
    }
    // One arrow per edge: Graphviz draws each as a `class="edge"` group.
    assert_eq!(svg.matches("class=\"edge\"").count(), 5, "{svg}");
    let mermaid = graph::render_mermaid(&graph);
    assert_eq!(mermaid.matches(" -->|").count(), 5, "{mermaid}");

    // The declared graph of the same tables, declaring the keys as PostgreSQL prints them
    // (`REFERENCES pgbench_branches(bid)`, unqualified on the default search_path): the same
    // five edges, drawn from the declaration alone.
    let mut declaration = PostgresDeclaration::new();
    let mut tables: std::collections::BTreeMap<String, Table> = std::collections::BTreeMap::new();
    for row in cluster().strings(
        &db,
        "SELECT c.relname::text || '|' || coalesce(con.conname::text, '') || '|' || \
                coalesce(pg_get_constraintdef(con.oid), '') \
         FROM pg_class c LEFT JOIN pg_constraint con ON con.conrelid = c.oid AND con.contype = 'f' \
         WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace",
    ) {
        let mut parts = row.splitn(3, '|');
        let (table, name, definition) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let entry = tables
            .entry(table.to_owned())
            .or_insert_with(|| Table::new("public", table).column(Column::new("id", "integer")));
        if !name.is_empty() {
            assert!(!definition.contains("public."), "printed unqualified: {definition}");
            *entry = entry.clone().constraint(Constraint::new(name, definition));
        }
    }
    assert_eq!(tables.len(), 4, "{tables:?}");
    for table in tables.into_values() {
        declaration = declaration.table(table);
    }
    let declared = graph::declared("graph-db", &bound(&db, declaration)).unwrap();
    assert_eq!(edges(&declared, Relation::Reference), expected, "{:?}", declared.dangling);
    assert!(declared.edges_of(Relation::Reference).all(|e| e.label == "foreign key"));
    assert!(declared.dangling.is_empty(), "{:?}", declared.dangling);
}

fn orders() -> PostgresDeclaration {
    PostgresDeclaration::new().table(
        Table::new("app", "orders")
            .column(Column::new("id", "bigint").not_null().default("nextval('app.orders_id_seq'::regclass)"))
            .column(Column::new("customer_id", "bigint"))
            .constraint(Constraint::new(
                "orders_customer_id_fkey",
                "FOREIGN KEY (customer_id) REFERENCES secret.customers(id)",
            )),
    )
}

#[test]
fn a_foreign_key_into_an_unreadable_schema_is_dangling_and_a_sequence_default_is_an_edge() {
    let db = cluster().database("graph_dangling");
    cluster().as_superuser(
        &db,
        "CREATE SCHEMA app AUTHORIZATION chant_app; \
         CREATE SCHEMA secret; \
         CREATE TABLE secret.customers (id bigint PRIMARY KEY); \
         CREATE TABLE app.orders (id bigserial PRIMARY KEY, \
                                  customer_id bigint REFERENCES secret.customers (id)); \
         ALTER TABLE app.orders OWNER TO chant_app;",
    );
    let lexicons = bound(&db, orders());
    let live = graph::live("graph-db", &lexicons).unwrap();

    // The role has no USAGE on `secret`: its table is no node, and the key pointing there is
    // listed as dangling, never drawn to anything else.
    assert!(live.node("postgres:secret.customers").is_none());
    assert!(live.edges_of(Relation::Reference).all(|e| !e.to.contains("secret")), "{:?}", live.edges);
    let fk: Vec<_> = live.dangling.iter().filter(|d| d.label == "foreign key").collect();
    assert_eq!(fk.len(), 1, "{:?}", live.dangling);
    assert_eq!(
        (fk[0].from.as_str(), fk[0].target.as_str(), fk[0].reason),
        ("postgres:app.orders", "secret.customers", DanglingReason::NotObserved)
    );

    // The sequence bigserial made is observed (a runtime part of the declared table), and the
    // column drawing from it references it.
    assert_eq!(
        edges(&live, Relation::Reference),
        pairs(&[("app.orders.id", "app.orders_id_seq")]),
        "{:?}",
        live.dangling
    );
    let contained = edges(&live, Relation::Containment);
    for (from, to) in [
        ("app.orders", "app"),
        ("app.orders.id", "app.orders"),
        ("app.orders.customer_id", "app.orders"),
        ("app.orders_pkey", "app.orders"),
        ("app.orders_id_seq", "app"),
    ] {
        assert!(
            contained.contains(&(format!("postgres:{from}"), format!("postgres:{to}"))),
            "{from} in {to}: {contained:?}"
        );
    }
    let svg = graphviz(&graph::render_dot(&live));
    assert!(svg.contains("orders_id_seq"), "{svg}");
    assert!(graph::render_dot(&live).contains("// dangling: postgres:app.orders foreign key secret.customers"));

    // The declared graph: the same catalog over the declaration. The sequence is not declared,
    // so the default's reference is dangling there; so is the declared foreign key, as its
    // table is not declared either.
    let declared = graph::declared("graph-db", &lexicons).unwrap();
    assert!(declared.edges_of(Relation::Reference).next().is_none(), "{:?}", declared.edges);
    assert_eq!(
        declared.dangling.iter().map(|d| (d.from.as_str(), d.label.as_str(), d.target.as_str())).collect::<Vec<_>>(),
        [
            ("postgres:app.orders", "foreign key", "secret.customers"),
            ("postgres:app.orders.id", "default nextval", "app.orders_id_seq")
        ]
    );
    assert!(
        edges(&declared, Relation::Containment)
            .contains(&("postgres:app.orders".to_owned(), "postgres:app".to_owned()))
    );
}

#[test]
fn a_database_that_cannot_be_reached_has_unobserved_entities_and_no_edges() {
    let lexicon = PostgresLexicon::new("graph-db", "graph-test", orders()).with_binding(
        Some("V".into()),
        Some(format!("postgres://app:x@127.0.0.1:{}/nope", super::postgres_cluster::free_port())),
    );
    let graph = graph::live("graph-db", &[BoundLexicon::new("postgres", lexicon)]).unwrap();
    assert!(graph.nodes.is_empty());
    assert!(graph.edges.is_empty());
    assert!(!graph.unobserved.is_empty());
    let entry = graph.lexicon("postgres").unwrap();
    assert!(!entry.edges_computed, "a failed enrichment computes no edges");
    assert!(entry.note.as_deref().unwrap().contains("edges not computed"), "{entry:?}");
}
