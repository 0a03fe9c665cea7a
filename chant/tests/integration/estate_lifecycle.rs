//! The estate readers through a real project (chant.toml, a git repository, an env declaring
//! files and PostgreSQL tables on a throw-away database): `lifecycle diff`'s `dependencies`,
//! `ambient` and `artifacts` sections, artifact snapshot documents on the ledger across two
//! snapshots (older ledgers' snapshot records read as history, and a document that does not parse
//! reported with its path), the teardown plan, and the teardown refused while its plan has a hole
//! unless holes are allowed, or when it is not the plan a gate approved.
//!
//! The DSN reaches the project through the variable chant.toml names, so the checks run in a
//! worker process (this test binary, re-run with that variable set).

use std::path::Path;
use std::process::{Command, Stdio};

use chant::cli::lifecycle;
use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::postgres::{Column, PostgresDeclaration, Table};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::observe::estate::Reading;
use chant::project::{self, Project};

use super::postgres_cluster::cluster;

const ENV: &str = "estate-env";
const DSN_VAR: &str = "CHANT_TEST_ESTATE_DSN";
/// Set for a worker run: `<project dir>`.
const WORKER: &str = "CHANT_ESTATE_WORKER";
/// The superuser's DSN of the same database, for the worker's own changes as superuser.
const SUPER_VAR: &str = "CHANT_TEST_ESTATE_SUPER_DSN";

/// Runs SQL through `dsn` (the cluster belongs to the parent process).
fn sql(dsn: &str, sql: &str) {
    let mut client = postgres::Client::connect(dsn, postgres::NoTls).unwrap();
    client.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn count(dsn: &str, sql: &str) -> i64 {
    let mut client = postgres::Client::connect(dsn, postgres::NoTls).unwrap();
    client.query_one(sql, &[]).unwrap().get(0)
}

fn declare() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("app.conf", "port = 5432\n", 0o644)).with(
        PostgresDeclaration::new().table(
            Table::new("shop", "orders")
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("account_id", "integer")),
        ),
    )
}

chant::lexicon::inventory::submit! { DeclaredEnv::new(ENV, declare) }

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

/// Does nothing in a normal run; as a worker, runs every check against the project.
#[test]
fn worker_checks_the_estate_when_asked() {
    let Ok(task) = std::env::var(WORKER) else { return };
    let dir = Path::new(&task);
    let app = std::env::var(DSN_VAR).unwrap();
    let admin = std::env::var(SUPER_VAR).unwrap();
    let project = Project::open(dir).unwrap();
    project.apply_env(None, ENV, chant::lexicon::DeleteMode::Never).unwrap();
    sql(
        &app,
        "CREATE TABLE public.accounts (id int PRIMARY KEY); \
         ALTER TABLE shop.orders ADD CONSTRAINT orders_account FOREIGN KEY (account_id) REFERENCES public.accounts (id); \
         CREATE VIEW shop.recent AS SELECT id FROM shop.orders;",
    );
    std::fs::write(dir.join("estate/stray.log"), "left behind\n").unwrap();
    std::fs::create_dir_all(dir.join("artifacts/build")).unwrap();
    std::fs::write(dir.join("artifacts/build/app.tar"), "v1").unwrap();
    std::fs::write(dir.join("artifacts/upload.bin"), "u").unwrap();

    // The diff carries each reader's answer per lexicon.
    let diff = lifecycle::diff(&project, None, ENV).unwrap();
    let Reading::Read(deps) = &diff.dependencies["postgres"] else { panic!("{:?}", diff.dependencies) };
    assert_eq!(deps.resources["public.accounts"].referenced_by, ["shop.orders"]);
    assert_eq!(diff.dependencies["files"], Reading::NotImplemented);
    let Reading::Read(ambient) = &diff.ambient["postgres"] else { panic!("{:?}", diff.ambient) };
    assert_eq!(ambient.resources.keys().collect::<Vec<_>>(), ["shop.recent"]);
    let Reading::Read(files) = &diff.ambient["files"] else { panic!("{:?}", diff.ambient) };
    assert_eq!(files.resources.keys().collect::<Vec<_>>(), ["stray.log"], "the artifacts dir is not ambient");
    let Reading::Read(artifacts) = &diff.artifacts["files"] else { panic!("{:?}", diff.artifacts) };
    assert!(!artifacts.snapshot);
    assert_eq!(artifacts.added, ["build/app.tar", "upload.bin"]);
    assert_eq!(diff.artifacts["postgres"], Reading::NotImplemented);
    let json = serde_json::to_value(&diff).unwrap();
    assert_eq!(json["dependencies"]["files"], serde_json::Value::Null);
    assert_eq!(json["ambient"]["postgres"]["resources"]["shop.recent"]["ambient"], true);
    assert_eq!(json["ambientKinds"]["files"], serde_json::json!(["file"]));
    assert!(
        diff.change_sets.iter().flat_map(|cs| &cs.entries).all(|e| !e.name.contains("upload.bin")),
        "an artifact never becomes a create or a delete"
    );
    let rendered = lifecycle::render(&diff).join("\n");
    assert!(
        rendered.contains("    dependency postgres/public.accounts (table) referenced by shop.orders"),
        "{rendered}"
    );
    assert!(rendered.contains("    ambient files/stray.log (file)"), "{rendered}");
    assert!(rendered.contains("  artifacts files (no snapshot yet): 2 added, 0 removed"), "{rendered}");

    // A snapshot, then added, changed and removed against it.
    let taken =
        chant::lexicon::estate::snapshot_artifacts(&project.ledger, None, ENV, &diff.artifact_listings).unwrap();
    assert_eq!(taken, 1);
    std::fs::write(dir.join("artifacts/build/app.tar"), "v2").unwrap();
    std::fs::remove_file(dir.join("artifacts/upload.bin")).unwrap();
    std::fs::write(dir.join("artifacts/new.txt"), "n").unwrap();
    let diff = lifecycle::diff(&project, None, ENV).unwrap();
    let Reading::Read(artifacts) = &diff.artifacts["files"] else { panic!("{:?}", diff.artifacts) };
    assert!(artifacts.snapshot);
    assert_eq!(
        (&artifacts.added, &artifacts.removed, &artifacts.changed),
        (&vec!["new.txt".to_owned()], &vec!["upload.bin".to_owned()], &vec!["build/app.tar".to_owned()])
    );
    assert_eq!(artifacts.changed_count(), 3);

    // The snapshot is one document of its own, `<env>/artifacts/<lexicon>.json`, not a record.
    let path = chant::lexicon::artifacts::snapshot_path(None, ENV, "files").unwrap();
    assert_eq!(path, "estate-env/artifacts/files.json");
    let document = project.ledger.read_document(&path).unwrap().expect("the snapshot document");
    let first: serde_json::Value = serde_json::from_slice(&document).unwrap();
    assert_eq!(first["artifacts"]["upload.bin"]["size"], 1);
    let legacy = chant::lexicon::artifacts::legacy_key(None, ENV, "files").unwrap();
    assert!(project.ledger.read(&legacy).unwrap().records.is_empty(), "no legacy record is written");

    // A second snapshot replaces the first: against it, everything is unchanged.
    let taken =
        chant::lexicon::estate::snapshot_artifacts(&project.ledger, None, ENV, &diff.artifact_listings).unwrap();
    assert_eq!(taken, 1);
    let second: serde_json::Value =
        serde_json::from_slice(&project.ledger.read_document(&path).unwrap().unwrap()).unwrap();
    assert!(second["artifacts"].get("upload.bin").is_none(), "{second}");
    let diff = lifecycle::diff(&project, None, ENV).unwrap();
    let Reading::Read(artifacts) = &diff.artifacts["files"] else { panic!("{:?}", diff.artifacts) };
    assert_eq!(artifacts.unchanged, ["build/app.tar", "new.txt"]);
    assert_eq!(artifacts.changed_count(), 0);

    // An older ledger's snapshot records are read as history while no document exists, and a
    // document, once written, is read instead; the records are never rewritten.
    let mut old = chant::observe::estate::ArtifactListing::default();
    old.artifacts.insert("a".into(), chant::observe::estate::Artifact { digest: "sha256:1".into(), size: 1 });
    let record =
        chant::lexicon::artifacts::ArtifactSnapshot::new(ENV, "legacy", "2026-01-01T00:00:00.000Z".into(), old);
    project.ledger.append_record(None, &record).unwrap();
    let read = chant::lexicon::artifacts::last_snapshot(&project.ledger, None, ENV, "legacy").unwrap().unwrap();
    assert_eq!(read, record);
    let newer = chant::lexicon::artifacts::ArtifactSnapshot::new(
        ENV,
        "legacy",
        "2026-02-01T00:00:00.000Z".into(),
        chant::observe::estate::ArtifactListing::default(),
    );
    chant::lexicon::artifacts::write_snapshot(&project.ledger, None, &newer).unwrap();
    let read = chant::lexicon::artifacts::last_snapshot(&project.ledger, None, ENV, "legacy").unwrap().unwrap();
    assert_eq!(read, newer);
    let key = chant::lexicon::artifacts::legacy_key(None, ENV, "legacy").unwrap();
    assert_eq!(project.ledger.read(&key).unwrap().records.len(), 1, "the legacy record is left as it was");

    // A snapshot document that does not parse is reported with its path, never read as empty.
    project.ledger.write_document(&path, b"{\"version\": 1, oops", "test: a broken snapshot").unwrap();
    let diff = lifecycle::diff(&project, None, ENV).unwrap();
    let Reading::Failed(why) = &diff.artifacts["files"] else { panic!("{:?}", diff.artifacts) };
    assert!(
        why.contains("chant/lifecycle:estate-env/artifacts/files.json:1") && why.contains("does not parse"),
        "{why}"
    );

    // The teardown plan: the marked table and schema, the owned file; nothing changed by it.
    let plan = project.teardown_plan(None, ENV).unwrap();
    let names: Vec<String> = plan
        .lexicons
        .iter()
        .flat_map(|l| l.plan.candidates.keys().map(move |k| format!("{}/{k}", l.lexicon)))
        .collect();
    assert_eq!(names, ["files/app.conf", "postgres/shop", "postgres/shop.orders"]);
    assert!(plan.is_complete());
    assert!(dir.join("estate/app.conf").exists());
    // Behind a gate, the step executes only the plan approved: another digest is refused.
    let gated = project::teardown_gate_plan(&plan);
    assert_eq!(gated.changes, ["drop files/app.conf", "drop postgres/shop", "drop postgres/shop.orders"]);
    let other = chant::gate::plan::sha256(b"another plan");
    let err = project.teardown_env(None, ENV, false, Some(&other)).unwrap_err();
    assert!(matches!(err, project::Error::TeardownPlanChanged { .. }), "{err}");
    assert!(err.to_string().contains("not the plan the gate approved"), "{err}");
    assert!(dir.join("estate/app.conf").exists(), "nothing was torn down");

    // The schema loses USAGE: a hole, and the teardown refuses before changing anything.
    sql(&admin, "ALTER SCHEMA shop OWNER TO postgres; REVOKE ALL ON SCHEMA shop FROM chant_app, PUBLIC");
    let plan = project.teardown_plan(None, ENV).unwrap();
    assert_eq!(plan.hole_count, 2, "{plan:#?}");
    let err = project.teardown_env(None, ENV, false, None).unwrap_err();
    assert!(matches!(err, project::Error::TeardownHoles { .. }), "{err}");
    assert!(err.to_string().contains("allow_holes = true"), "{err}");
    assert!(dir.join("estate/app.conf").exists(), "nothing was torn down");
    // Allowed: what can be seen is torn down; the hole stays.
    let approved = project::teardown_gate_plan(&plan).digest();
    let said = project.teardown_env(None, ENV, true, Some(&approved)).unwrap();
    assert!(said.contains("hole(s) allowed"), "{said}");
    assert!(!dir.join("estate/app.conf").exists());
    assert_eq!(count(&admin, "SELECT count(*) FROM pg_tables WHERE schemaname = 'shop'"), 1);
    println!("\nESTATE=ok ");
}

#[test]
fn diff_snapshot_and_teardown_plan_through_a_real_project() {
    let c = cluster();
    let db = c.database("estate");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("chant.toml"),
        format!(
            "[project]\nname = \"estate-test\"\n\n[env.{ENV}]\nfiles_root = \"estate\"\nartifacts_dir = \"artifacts\"\npostgres_dsn_var = \"{DSN_VAR}\"\n"
        ),
    )
    .unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "chant.toml"]);
    git(dir, &["commit", "-q", "-m", "init"]);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["estate_lifecycle::worker_checks_the_estate_when_asked", "--exact", "--test-threads=1", "--nocapture"])
        .env(WORKER, dir.display().to_string())
        .env(DSN_VAR, c.dsn(&db))
        .env(SUPER_VAR, format!("postgres://postgres:{}@127.0.0.1:{}/{db}", c.super_password, c.port))
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
    assert!(out.status.success(), "worker failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("ESTATE=ok"), "{stdout}");
}
