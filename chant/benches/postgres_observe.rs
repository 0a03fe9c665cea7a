//! Observing a 2,000-table schema with the postgres lexicon: wall time and queries issued,
//! against `pg_dump --schema-only` and one catalog query through `psql` on the same database in
//! the same run, with the ratios of the medians, and the CPU the client and the server use for
//! each. Starts its own throw-away cluster (the integration tests' harness).
//!
//! Run: `cargo bench -p chant-ops --bench postgres_observe` (server binaries from `.ci/postgres.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub, missing_docs)]
// A benchmark drives psql, pg_dump and the cluster's binaries directly; chant's own children go
// through `chant::process`, which the clippy ban (chant/clippy.toml) is for.
#![allow(clippy::disallowed_methods)]

use chant_testkit::postgres as postgres_cluster;

mod support;
use support::median;

use std::time::{Duration, Instant};

use std::str::FromStr;

use chant::lexicon::postgres::{Column, PostgresDeclaration, PostgresLexicon, Table, catalog, verdict};
use chant::observe::{ChangeAction, LastApply, build_change_set, observe_component};

const TABLES: usize = 2000;
/// Observes and psql queries timed, taking turns.
const RUNS: usize = 15;
/// `pg_dump` runs timed, and repetitions of each step of the split.
const DUMP_RUNS: usize = 5;
/// Observes and psql queries whose server CPU is read, taking turns.
const SERVER_RUNS: usize = 10;
/// The pause after each of those, for its sessions to end and their backends to be reaped.
const SETTLE: Duration = Duration::from_millis(50);

fn main() {
    let c = postgres_cluster::cluster();
    let db = c.database("bench");
    support::create_tables(c, &db, TABLES, |i| {
        format!("CREATE TABLE app.t{i} (id bigint PRIMARY KEY, name text NOT NULL DEFAULT '', n integer);")
    });

    let declaration = (0..TABLES).fold(PostgresDeclaration::new(), |d, i| {
        d.table(
            Table::new("app", format!("t{i}"))
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("name", "text").not_null().default("''::text"))
                .column(Column::new("n", "integer")),
        )
    });
    let lexicon = PostgresLexicon::new("bench", "bench", declaration).with_binding(Some("V".into()), Some(c.dsn(&db)));
    let declared = lexicon.declared();

    let query = "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'app'";
    let psql_once = || support::time_tool(c, "psql", &db, &["-X", "-q", "-c", query]);
    let observe_once = || {
        let t = Instant::now();
        let o = observe_component(&lexicon, &declared);
        let cs = build_change_set("postgres", &declared, &o, &LastApply::none());
        let took = t.elapsed();
        assert!(o.unobserved.is_empty());
        assert!(cs.entries.iter().all(|e| e.action != ChangeAction::Create));
        (took, cs.entries.len())
    };
    // One of each first, not counted: the first reads of a catalog just written set its tuples'
    // hint bits and prune its pages, a cost paid once by whichever reader comes first. Then the
    // observe and the psql query take turns, so that both see the machine in the same state.
    let (_, entries) = observe_once();
    psql_once();
    let mut observe = Vec::new();
    let mut psql = Vec::new();
    // This process's CPU over the observes alone (psql is a child, not counted): the client's
    // share of an observe, a steadier figure than wall time on a shared machine.
    let mut client_cpu = Duration::ZERO;
    for _ in 0..RUNS {
        let before = process_cpu();
        observe.push(observe_once().0);
        client_cpu += process_cpu().saturating_sub(before);
        psql.push(psql_once());
    }
    // The server's CPU per observe and per psql query, taking turns: the postmaster's reaped
    // children (each backend once it has exited) before and after each run, a pause after it for
    // its sessions to end and be reaped.
    let mut server_observe = Duration::ZERO;
    let mut server_psql = Duration::ZERO;
    let server_cpu_of = |run: &dyn Fn()| -> Option<Duration> {
        let before = c.server_cpu()?;
        run();
        std::thread::sleep(SETTLE);
        Some(c.server_cpu()?.saturating_sub(before))
    };
    let mut server_read = true;
    for _ in 0..SERVER_RUNS {
        let observed = server_cpu_of(&|| {
            observe_once();
        });
        let queried = server_cpu_of(&|| {
            psql_once();
        });
        match (observed, queried) {
            (Some(o), Some(q)) => {
                server_observe += o;
                server_psql += q;
            }
            _ => server_read = false,
        }
    }
    let (snapshot, _) = lexicon.read_snapshot().unwrap();
    assert_eq!(snapshot.queries, catalog::QUERIES);

    let split = split(&lexicon, &c.dsn(&db), &declared);

    let dump = support::pg_dump_schema_only(c, &db, DUMP_RUNS);

    println!(
        "observe {TABLES} declared tables ({entries} change-set entries), median of {RUNS} (pg_dump of {DUMP_RUNS}):"
    );
    println!(
        "  chant postgres lexicon: {:?} (min {:?}); {} catalog queries over 2 connections in 1 snapshot, connects included",
        median(observe.clone()),
        observe.iter().min().unwrap(),
        catalog::QUERIES
    );
    println!(
        "  client CPU per observe (this process, user + system, change set included): {:?}",
        client_cpu / RUNS as u32
    );
    if server_read {
        println!(
            "  server CPU (its backends, reaped by the postmaster), mean of {SERVER_RUNS}: per observe {:?}, per psql query {:?}",
            server_observe / SERVER_RUNS as u32,
            server_psql / SERVER_RUNS as u32
        );
    } else {
        println!("  server CPU: not read (the postmaster's /proc entry could not be read)");
    }
    println!("  pg_dump --schema-only:  {:?} (min {:?})", median(dump.clone()), dump.iter().min().unwrap());
    println!("  psql, one catalog query: {:?} (min {:?})", median(psql.clone()), psql.iter().min().unwrap());
    println!("  split of one observe, each step timed on its own (median of {DUMP_RUNS}):");
    for (step, runs) in &split {
        println!("    {step:<44} {:?}", median(runs.clone()));
    }
    let ratio = |a: &[Duration], b: &[Duration]| median(a.to_vec()).as_secs_f64() / median(b.to_vec()).as_secs_f64();
    println!(
        "  ratios of medians: chant / psql query {:.2}x (goal <= 1.8, issue 37; anchor: psql), chant / pg_dump {:.2}x (goal <= 0.2)",
        ratio(&observe, &psql),
        ratio(&observe, &dump)
    );
}

/// The CPU time (user + system) this process has used so far (clock ticks of 10 ms: summed over
/// the observes of a run, close enough).
fn process_cpu() -> Duration {
    chant_testkit::cpu_time("self", false).unwrap()
}

/// Times each step of one observe on its own, `DUMP_RUNS` times: connect (SCRAM over 127.0.0.1), the
/// transaction and each catalog query one after the other on one connection (round trips and
/// server time), the whole catalog read on one connection (queries and row decoding), the read
/// as an observation makes it (two connections, the second opened once the first is in, the
/// queries shared between them in one exported snapshot, connects included), the observation
/// built from the snapshot, and the change set.
fn split(
    lexicon: &PostgresLexicon,
    dsn: &str,
    declared: &[chant::observe::DeclaredEntity],
) -> Vec<(&'static str, Vec<Duration>)> {
    let steps = [
        "connect (startup + SCRAM)",
        "BEGIN (repeatable read, read only)",
        "query: schemas",
        "query: relations",
        "query: columns",
        "COMMIT",
        "catalog::read (3 queries + row decoding)",
        "read_snapshot (2 connections, 1 snapshot)",
        "observation from the snapshot (verdict)",
        "observe_component (connect + read + verdict)",
        "build_change_set",
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); steps.len()];
    let config = postgres::Config::from_str(dsn).unwrap();
    for _ in 0..DUMP_RUNS {
        let mut lap = Instant::now();
        let mut next = |i: usize, lap: &mut Instant| {
            times[i].push(lap.elapsed());
            *lap = Instant::now();
        };
        let mut client = config.connect(postgres::NoTls).unwrap();
        next(0, &mut lap);
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .unwrap();
        next(1, &mut lap);
        for (i, query) in [catalog::SCHEMAS, catalog::RELATIONS, catalog::COLUMNS].into_iter().enumerate() {
            assert!(!tx.query_typed(query, &[]).unwrap().is_empty());
            next(2 + i, &mut lap);
        }
        tx.commit().unwrap();
        next(5, &mut lap);
        let mut tx = client.build_transaction().read_only(true).start().unwrap();
        lap = Instant::now();
        let snapshot = catalog::read(&mut tx).unwrap();
        next(6, &mut lap);
        tx.commit().unwrap();
        lap = Instant::now();
        let (shared, _) = lexicon.read_snapshot().unwrap();
        next(7, &mut lap);
        assert_eq!(shared, snapshot);
        let ctx = verdict::ReadContext { identity: lexicon.identity(), owned_only: false, address: "bench" };
        lap = Instant::now();
        let observation = verdict::observation(lexicon.declaration(), &snapshot, &ctx);
        next(8, &mut lap);
        assert!(observation.unobserved.is_empty());
        let observation = observe_component(lexicon, declared);
        next(9, &mut lap);
        let cs = build_change_set("postgres", declared, &observation, &LastApply::none());
        next(10, &mut lap);
        assert!(!cs.entries.is_empty());
        // The observation's read makes the columns' verdicts before the relations are in: the
        // same observation as the one built from the whole snapshot.
        let address = lexicon.address().unwrap();
        let ctx = verdict::ReadContext { address: &address, ..ctx };
        assert!(observation == verdict::observation(lexicon.declaration(), &snapshot, &ctx), "observations differ");
    }
    steps.into_iter().zip(times).collect()
}
