//! `lifecycle diff` and the tick read one assessment: in a real project (chant.toml, a git
//! repository, an env declaring files and PostgreSQL tables bound to a throw-away database), the
//! diff's status rows equal the tick record's `components` for the same state, before and after
//! an apply through the project (the seam `run` uses), and after a teardown.
//!
//! The DSN reaches the project through the variable chant.toml names, so each check runs in a
//! worker process (this test binary, re-run with that variable set).

use std::path::Path;
use std::process::{Command, Stdio};

use chant::cli::lifecycle;
use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::postgres::{Column, PostgresDeclaration, Table};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::model::OpDocument;
use chant::project::Project;
use chant::tick::{Dispatcher, TickOptions};

use super::postgres_cluster::cluster;

const ENV: &str = "pg-diff";
const DSN_VAR: &str = "CHANT_TEST_PG_DIFF_DSN";
/// Set for a worker run: `<project dir>|<step>`.
const WORKER: &str = "CHANT_PG_LIFECYCLE_WORKER";

fn declare() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("app.conf", "port = 5432\n", 0o644)).with(
        PostgresDeclaration::new().table(
            Table::new("app", "accounts")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("name", "varchar(40)")),
        ),
    )
}

chant::lexicon::inventory::submit! { DeclaredEnv::new(ENV, declare) }

fn converge_op() -> OpDocument {
    serde_json::from_value(serde_json::json!({
        "version": 1,
        "name": "pg-diff-converge",
        "overview": "Report the pg-diff env's status.",
        "env": ENV,
        "labels": {"Converge": "true", "Dial": "observe", "Env": ENV},
        "class": "read-only",
        "phases": [],
        "converge": {
            "dial": "observe",
            "budget": 3,
            "rules": [{
                "id": "report-any",
                "when": {"kind": "field-comparison", "field": "totalCount", "op": "gte", "value": 0},
                "then": {"kind": "report", "reason": "status reported"},
                "why": "Only reports, so the tick dispatches nothing.",
                "source": {"file": "tests/integration/postgres_lifecycle.rs", "line": 1}
            }]
        }
    }))
    .unwrap()
}

/// Does nothing in a normal run; as a worker, performs one step and checks that the diff and
/// the tick agree, printing the status to stdout.
#[test]
fn worker_checks_diff_against_tick_when_asked() {
    let Ok(task) = std::env::var(WORKER) else { return };
    let (dir, step) = task.split_once('|').unwrap();
    let project = Project::open(Path::new(dir)).unwrap();
    match step {
        "apply" => {
            project.apply_env(None, ENV, chant::lexicon::DeleteMode::Never).unwrap();
        }
        "teardown" => {
            project.teardown_env(None, ENV, false, None).unwrap();
        }
        _ => {}
    }
    let diff = lifecycle::diff(&project, None, ENV).unwrap();
    let options = TickOptions { dispatcher: Dispatcher::current().unwrap(), fence: None };
    let tick = chant::tick::execute(&project, &converge_op(), &options).unwrap();
    assert_eq!(tick.record.error, None);
    assert_eq!(Some(diff.components.clone()), tick.record.components, "the diff's rows are the tick's components");
    let components: Vec<&str> = diff.components.iter().map(|c| c.component.as_str()).collect();
    assert_eq!(components, ["files", "postgres"]);
    let rendered = lifecycle::render(&diff).join("\n");
    assert!(!rendered.contains(&std::env::var(DSN_VAR).unwrap()), "no DSN (and so no password) is rendered");
    println!("\nSTATUS={} ", diff.status.as_str());
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn step(dir: &Path, dsn: &str, step: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "postgres_lifecycle::worker_checks_diff_against_tick_when_asked",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(WORKER, format!("{}|{step}", dir.display()))
        .env(DSN_VAR, dsn)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "worker {step} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // libtest may print its own words on the same line as the worker's.
    let status = stdout.split("STATUS=").nth(1).unwrap_or_default();
    status.split_whitespace().next().unwrap_or_default().trim_end_matches("test").to_owned()
}

#[test]
fn the_diff_rows_equal_the_tick_records_components() {
    let c = cluster();
    let db = c.database("lifecycle");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("chant.toml"),
        format!("[project]\nname = \"diff-test\"\n\n[env.{ENV}]\nfiles_root = \"estate\"\npostgres_dsn_var = \"{DSN_VAR}\"\n"),
    )
    .unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "chant.toml"]);
    git(dir, &["commit", "-q", "-m", "init"]);
    let dsn = c.dsn(&db);

    assert_eq!(step(dir, &dsn, "observe"), "unrecorded");
    assert_eq!(step(dir, &dsn, "apply"), "reconciled");
    c.as_app(&db, "ALTER TABLE app.accounts ALTER COLUMN name TYPE varchar(10)");
    assert_eq!(step(dir, &dsn, "observe"), "drifted");
    assert_eq!(step(dir, &dsn, "teardown"), "unrecorded");
    assert!(c.strings(&db, "SELECT tablename::text FROM pg_tables WHERE schemaname = 'app'").is_empty());
    assert!(!dir.join("estate/app.conf").exists(), "the owned file is removed too");
    // A wrong DSN variable value: unknown, never a create.
    let wrong = format!("postgres://chant_app:wrong@127.0.0.1:{}/{db}", c.port);
    assert_eq!(step(dir, &wrong, "observe"), "unknown");
}
