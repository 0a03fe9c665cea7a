//! What the PostgreSQL benches share: the median of a set of runs, a schema of many tables
//! created in one transaction, and the native tools (`pg_dump`, `psql`) each bench is measured
//! against, run on the throw-away cluster over 127.0.0.1.

// Each bench uses some of these. A benchmark drives the cluster's own binaries directly; chant's
// children go through `chant::process`, which the clippy ban (chant/clippy.toml) is for.
#![allow(dead_code, clippy::disallowed_methods)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chant_testkit::postgres::{APP_ROLE, Cluster};

/// The median of `runs`.
pub fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// Creates schema `app` in `db` with `tables` tables, `ddl(i)` the statements of the i-th, in
/// one transaction, and prints how long it took.
pub fn create_tables(c: &Cluster, db: &str, tables: usize, ddl: impl Fn(usize) -> String) {
    let ddl: String = (0..tables).map(ddl).collect();
    let load = Instant::now();
    c.as_app(db, &format!("BEGIN; CREATE SCHEMA app; {ddl} COMMIT;"));
    println!("setup: {tables} tables created in {:?}", load.elapsed());
}

/// Runs the cluster's `program` as the app role against `db` with `args`, output discarded;
/// how long it took.
pub fn time_tool(c: &Cluster, program: &str, db: &str, args: &[&str]) -> Duration {
    let port = c.port.to_string();
    let t = Instant::now();
    let out = Command::new(c.bin.join(program))
        .args(["-h", "127.0.0.1", "-p", &port, "-U", APP_ROLE, "-d", db])
        .args(args)
        .env("PGPASSWORD", &c.app_password)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{program}: {}", String::from_utf8_lossy(&out.stderr));
    t.elapsed()
}

/// `pg_dump --schema-only` of `db`, `runs` times.
pub fn pg_dump_schema_only(c: &Cluster, db: &str, runs: usize) -> Vec<Duration> {
    (0..runs).map(|_| time_tool(c, "pg_dump", db, &["--schema-only"])).collect()
}
