//! The estate readers of the postgres lexicon on a 2,000-table schema: dependencies (a foreign
//! key from every other table to an undeclared `public.accounts`, which references an undeclared
//! `public.regions`: a chain followed past depth one), ambient relations (100 views and 100
//! orphan sequences) and the teardown plan, against the plain describe of the same declaration in
//! the same run: from one catalog read, and through the hooks as `lifecycle diff` and
//! `lifecycle teardown` call them. Prints the queries each issues and the ratios.
//! Starts its own throw-away cluster (the integration tests' harness).
//!
//! Run: `cargo bench -p chant-ops --bench postgres_estate` (server binaries from `.ci/postgres.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub, missing_docs)]

use chant_testkit::postgres as postgres_cluster;

mod support;
use support::median;

use std::time::Instant;

use chant::lexicon::postgres::{Column, DeleteMode, PostgresDeclaration, PostgresLexicon, Table, catalog, estate};
use chant::observe::estate::{Reading, ambient_of, dependencies_of, teardown_plan};
use chant::observe::observe_component;

const TABLES: usize = 2000;
const EXTRAS: usize = 100;
const RUNS: usize = 5;

fn main() {
    let c = postgres_cluster::cluster();
    let db = c.database("estate_bench");
    let declaration = (0..TABLES).fold(PostgresDeclaration::new(), |d, i| {
        d.table(
            Table::new("app", format!("t{i}"))
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("account_id", "integer")),
        )
    });
    let dsn = c.dsn(&db);
    // A binding, as each command or tick makes one (its estate hooks share one snapshot).
    let bind = || {
        PostgresLexicon::new("bench", "bench", declaration.clone()).with_binding(Some("V".into()), Some(dsn.clone()))
    };
    let lexicon = bind();
    let load = Instant::now();
    lexicon.apply(DeleteMode::Never).unwrap();
    let fks: String = (0..TABLES)
        .step_by(2)
        .map(|i| format!("ALTER TABLE app.t{i} ADD FOREIGN KEY (account_id) REFERENCES public.accounts (id);"))
        .collect();
    let extras: String = (0..EXTRAS)
        .map(|i| format!("CREATE VIEW app.v{i} AS SELECT id FROM app.t{i}; CREATE SEQUENCE app.s{i};"))
        .collect();
    c.as_app(&db, &format!("BEGIN; CREATE TABLE public.regions (id int PRIMARY KEY); \
         CREATE TABLE public.accounts (id int PRIMARY KEY, region_id int REFERENCES public.regions (id)); {fks} {extras} COMMIT;"));
    println!(
        "setup: {TABLES} tables applied, {} foreign keys, {EXTRAS} views and sequences in {:?}",
        TABLES / 2,
        load.elapsed()
    );
    let declared = lexicon.declared();

    let mut describe = Vec::new();
    let mut readers = Vec::new();
    let mut hooks = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let o = observe_component(&lexicon, &declared);
        describe.push(t.elapsed());
        assert!(o.unobserved.is_empty());

        let t = Instant::now();
        let (snapshot, _) = lexicon.read_estate().unwrap();
        let deps = estate::dependencies(lexicon.declaration(), &snapshot);
        let ambient = estate::ambient(lexicon.declaration(), &snapshot);
        let plan = estate::teardown_plan(&snapshot.catalog, lexicon.identity());
        readers.push(t.elapsed());
        assert_eq!(snapshot.queries(), estate::QUERIES);
        assert_eq!(deps.resources["public.accounts"].referenced_by.len(), TABLES / 2);
        assert_eq!(ambient.resources.len(), 2 * EXTRAS);
        assert_eq!(deps.resources["public.regions"].properties.get("depth").unwrap(), "2");
        assert_eq!(plan.candidates.len(), TABLES + 1, "every table and the schema");
        assert!(plan.is_complete());

        // Through the hooks of a fresh binding, as `lifecycle diff` (dependencies, then ambient
        // past what describe observed) and `lifecycle teardown` (the plan) ask them.
        let bound = bind();
        let t = Instant::now();
        let deps = dependencies_of(&bound, &declared);
        let ambient = ambient_of(&bound, &declared, &o, deps.read());
        let plan = teardown_plan(&bound, &declared);
        hooks.push(t.elapsed());
        let Reading::Read(deps) = deps else { panic!("{deps:?}") };
        assert_eq!(deps.resources["public.regions"].referenced_by.len(), TABLES / 2);
        assert_eq!(ambient.read().map(|a| a.resources.len()), Some(2 * EXTRAS));
        assert_eq!(plan.candidates.len(), TABLES + 1);
    }
    let (d, r, h) = (median(describe.clone()), median(readers.clone()), median(hooks.clone()));
    println!("estate readers on {TABLES} declared tables, median of {RUNS}:");
    println!(
        "  plain describe:                          {d:?} (min {:?}); {} catalog queries",
        describe.iter().min().unwrap(),
        catalog::QUERIES
    );
    println!(
        "  dependencies + ambient + teardown plan:  {r:?} (min {:?}); {} catalog queries, one read",
        readers.iter().min().unwrap(),
        estate::QUERIES
    );
    println!(
        "  the same through the hooks:              {h:?} (min {:?}); {} catalog queries",
        hooks.iter().min().unwrap(),
        estate::HOOK_QUERIES
    );
    println!("  ratio (readers / describe): {:.2}x", r.as_secs_f64() / d.as_secs_f64());
    println!("  ratio (hooks / describe):   {:.2}x", h.as_secs_f64() / d.as_secs_f64());
}
