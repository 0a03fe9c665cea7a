//! Deep observation of the 2,000-table schema of the `postgres_observe` benchmark (each table with
//! a primary key and one declared index): wall time and queries issued for the deep read and
//! core's classification, against `pg_dump --schema-only` of the same database in the same run,
//! with the ratio. Starts its own throw-away cluster (the integration tests' harness).
//!
//! Run: `cargo bench -p chant-ops --bench postgres_deep_observe` (server binaries from `.ci/postgres.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub, missing_docs)]
// A benchmark drives pg_dump and the cluster's binaries directly; chant's own children go
// through `chant::process`, which the clippy ban (chant/clippy.toml) is for.
#![allow(clippy::disallowed_methods)]

use chant_testkit::postgres as postgres_cluster;

mod support;
use support::median;

use std::time::Instant;

use chant::lexicon::postgres::{Column, Constraint, Index, PostgresDeclaration, PostgresLexicon, Table, deep};
use chant::observe::deep::observe_deep;

const TABLES: usize = 2000;
const RUNS: usize = 5;

fn main() {
    let c = postgres_cluster::cluster();
    let db = c.database("bench_deep");
    support::create_tables(c, &db, TABLES, |i| {
        format!(
            "CREATE TABLE app.t{i} (id bigint PRIMARY KEY, name text NOT NULL DEFAULT '', n integer); \
             CREATE INDEX t{i}_name_idx ON app.t{i} (name);"
        )
    });

    let declaration = (0..TABLES).fold(PostgresDeclaration::new(), |d, i| {
        d.table(
            Table::new("app", format!("t{i}"))
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("name", "text").not_null().default("''::text"))
                .column(Column::new("n", "integer"))
                .constraint(Constraint::new(format!("t{i}_pkey"), "PRIMARY KEY (id)"))
                .index(Index::new(format!("t{i}_name_idx"), ["name"])),
        )
    });
    let lexicon = PostgresLexicon::new("bench", "bench", declaration).with_binding(Some("V".into()), Some(c.dsn(&db)));
    let declared = lexicon.declared();

    let mut observe = Vec::new();
    let mut paths = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let verdict = observe_deep(&lexicon, &declared).unwrap();
        observe.push(t.elapsed());
        assert_eq!(verdict.unavailable, None);
        assert_eq!(verdict.entities.len(), TABLES);
        assert!(verdict.entities.iter().all(|e| e.drift.is_empty()), "the declared schema is the live one");
        paths = verdict.entities.iter().map(|e| e.unclaimed.len()).sum::<usize>();
    }
    let (catalog, _) = lexicon.read_deep().unwrap();
    assert_eq!(catalog.queries, deep::QUERIES);

    let dump = support::pg_dump_schema_only(c, &db, RUNS);

    let (ours, theirs) = (median(observe.clone()), median(dump.clone()));
    println!("deep observation of {TABLES} declared tables, median of {RUNS} ({paths} unclaimed paths):");
    println!(
        "  chant deep read + classification: {ours:?} (min {:?}); {} catalog queries, connect included",
        observe.iter().min().unwrap(),
        deep::QUERIES
    );
    println!("  pg_dump --schema-only:            {theirs:?} (min {:?})", dump.iter().min().unwrap());
    println!("  ratio (chant / pg_dump):          {:.2}x", ours.as_secs_f64() / theirs.as_secs_f64());
}
