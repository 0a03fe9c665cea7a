//! A remediation the server refuses is never recorded as a repair: the example's `prod-db`
//! (a real PostgreSQL database on the test harness's cluster) drifts, and the role its DSN logs in
//! as may read the catalog but may not alter the table. The tick's dispatched apply is refused
//! half-way through its plan (the transaction rolls back), and the record says so: the outcome is
//! a failed dispatch (`reported`, `dispatchFailed`) naming the statement and the column it could
//! not change, nothing is counted remediated,
//! the health is not `healed`, and the column still differs on the next observation.

use std::path::Path;

use chant_testkit::postgres::cluster;

use super::support::{PROJECT, Sandbox, actions, outcome};

/// The example binary (`prod-db` reads its DSN from a variable), beside this package's binaries.
fn staging_binary() -> String {
    let bin = Path::new(PROJECT).parent().unwrap().join(format!("staging{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} is missing: run the suite with --workspace (it builds chant-examples)", bin.display());
    bin.display().to_string()
}

#[test]
fn an_apply_the_server_refuses_is_failed_never_remediated() {
    let pg = cluster();
    let db = pg.database("refused");
    let dsn = pg.dsn(&db);
    let sandbox =
        Sandbox::new("[project]\nname = \"refused\"\n\n[env.prod-db]\npostgres_dsn_var = \"E2E_REFUSED_DSN\"\n");
    let vars = [("E2E_REFUSED_DSN", dsn.as_str())];
    let bin = staging_binary();

    // The first tick creates the tables (the app role owns the database).
    let first = sandbox.run_in(&bin, &sandbox.dir, &["tick", "prod-db-converge", "--json"], &vars);
    first.code(0);
    assert_eq!(actions(&first.json()), [("first-apply".to_owned(), "ran".to_owned())], "{}", first.all());

    // A column narrowed by hand, on a table the app role no longer owns: the apply that would
    // widen it back is refused by the server.
    pg.as_superuser(
        &db,
        "ALTER TABLE app.users ALTER COLUMN display_name TYPE varchar(20); ALTER TABLE app.users OWNER TO postgres",
    );
    let tick = sandbox.run_in(&bin, &sandbox.dir, &["tick", "prod-db-converge", "--json"], &vars);
    tick.code(0);
    let record = tick.json();
    let drift = outcome(&record, "drift-apply");
    assert_ne!(drift["action"], "ran", "a refused apply is never a repair: {record}");
    // The dispatch failed: the outcome is reported with `dispatchFailed`, naming why.
    assert_eq!((&drift["action"], &drift["dispatchFailed"]), (&"reported".into(), &true.into()), "{record}");
    let reason = drift["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("display_name") && reason.contains("must be owner"),
        "the refusal names the column: {record}"
    );
    assert_eq!(record["summary"]["remediated"], 0, "{record}");

    // The human line leads with a health word that is not a repair.
    let line = sandbox.run_in(&bin, &sandbox.dir, &["operator", "status", "--json"], &vars);
    let status = line.json();
    let row = status["ops"].as_array().unwrap().iter().find(|r| r["op"] == "prod-db-converge").unwrap().clone();
    assert!(!["healed", "in-sync"].contains(&row["health"]["state"].as_str().unwrap()), "{status}");

    // The column still differs: the next observation finds the same drift.
    let diff = sandbox.run_in(&bin, &sandbox.dir, &["lifecycle", "diff", "prod-db", "--live", "--json"], &vars);
    diff.code(0);
    assert!(diff.stdout.contains("display_name"), "the column still differs: {}", diff.all());
    assert_eq!(diff.json()["status"], "drifted", "{}", diff.all());
}
