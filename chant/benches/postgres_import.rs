//! `import --from` of a 2,000-table schema: export (the catalog read in `export::QUERIES`
//! queries, the cleaning) plus code generation (the template generator and the module, printed
//! by prettyplease), against `pg_dump --schema-only` of the same database in the same run; then
//! the generated module compiled into a scratch project by real cargo, timed (chant itself is
//! built first, so the second, timed build is the module's own compile and link).
//!
//! Run: `cargo bench -p chant-ops --bench postgres_import` (server binaries from `.ci/postgres.sh`).
//! Set `CHANT_BENCH_SKIP_COMPILE=1` to skip the compile.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub, missing_docs)]
// A benchmark drives pg_dump and cargo directly; chant's own children go through
// `chant::process`, which the clippy ban (chant/clippy.toml) is for.
#![allow(clippy::disallowed_methods)]

use chant_testkit::postgres as postgres_cluster;

mod support;
use support::median;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chant::lexicon::export::{ExportOptions, render_module};
use chant::lexicon::postgres::{PostgresDeclaration, PostgresLexicon, codegen, export};
use chant::redact::Redactor;

const TABLES: usize = 2000;
const RUNS: usize = 5;

fn main() {
    let c = postgres_cluster::cluster();
    let db = c.database("bench_import");
    support::create_tables(c, &db, TABLES, |i| {
        format!(
            "CREATE TABLE app.t{i} (id bigint PRIMARY KEY, name text NOT NULL DEFAULT '', n integer); \
             CREATE INDEX t{i}_n ON app.t{i} (n);"
        )
    });
    let lexicon = PostgresLexicon::new("bench", "bench", PostgresDeclaration::new())
        .with_binding(Some("V".into()), Some(c.dsn(&db)));
    let options = ExportOptions::default();

    let mut runs = Vec::new();
    let (mut reads, mut templates, mut generates) = (Vec::new(), Vec::new(), Vec::new());
    let mut source = String::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let (snapshot, address) = export::read(&lexicon).unwrap();
        reads.push(t.elapsed());
        assert_eq!(snapshot.queries, export::QUERIES);
        let ctx = export::TemplateContext {
            env: "bench",
            identity: lexicon.identity(),
            address: &address,
            read_at: "2026-01-01T00:00:00.000Z",
            options: &options,
        };
        let template = export::template(&snapshot, &ctx);
        templates.push(t.elapsed());
        let generated = codegen::generate(&template, &Redactor::default()).unwrap();
        generates.push(t.elapsed());
        source = render_module("bench", "chant import --from bench", &[(&template, &generated)], &Redactor::default())
            .unwrap();
        runs.push(t.elapsed());
        assert_eq!(template.resources().len(), TABLES + 1);
    }

    let dump = support::pg_dump_schema_only(c, &db, RUNS);
    let (ours, theirs) = (median(runs.clone()), median(dump.clone()));
    println!("import of {TABLES} tables (export + code generation), median of {RUNS}:");
    println!("  chant export + codegen: {ours:?} (min {:?}); {} queries", runs.iter().min().unwrap(), export::QUERIES);
    let (read, template, generate) = (median(reads), median(templates), median(generates));
    println!(
        "    of which the catalog read {read:?}, the cleaning {:?}, the generator {:?}, the module's printing {:?}",
        template.saturating_sub(read),
        generate.saturating_sub(template),
        ours.saturating_sub(generate)
    );
    println!("  pg_dump --schema-only:  {theirs:?} (min {:?})", dump.iter().min().unwrap());
    println!("  ratio: {:.2}x (goal: at most 1.0x)", ours.as_secs_f64() / theirs.as_secs_f64());
    println!("  generated module: {} lines, {} bytes", source.lines().count(), source.len());

    if std::env::var_os("CHANT_BENCH_SKIP_COMPILE").is_none() {
        compile(&source);
    }
}

/// Builds a scratch project declaring the env from `source`, twice: first with a stub module
/// (so chant is built), then with the generated one, timed.
fn compile(source: &str) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"bench-import\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nchant = {{ package = \"chant-ops\", path = {:?}, features = [\"full\"] }}\n\n[workspace]\n",
            workspace.join("chant").display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::write(root.join("src/main.rs"), "mod bench;\n\nchant::main!();\n").unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let build = || {
        let t = Instant::now();
        let out = Command::new(env!("CARGO"))
            .current_dir(root)
            .args(["build", "-q", "--offline"])
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap();
        assert!(out.status.success(), "cargo build: {}", String::from_utf8_lossy(&out.stderr));
        t.elapsed()
    };
    std::fs::write(root.join("src/bench.rs"), "").unwrap();
    let warm = build();
    std::fs::write(root.join("src/bench.rs"), source).unwrap();
    let module = build();
    println!("  compile (debug): chant and a stub {warm:?}; then the generated module {module:?}");
}
