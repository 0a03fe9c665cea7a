//! The serve benchmark's env, compiled only into `e2e-bench-serve` (through `#[path]`), never
//! into `e2e-project`: `estate`, 2,000 PostgreSQL tables (its DSN from the variable
//! `chant.toml` names) and 1,000 files, the Op that applies it, and one ConvergeOp over it whose
//! ticks fill the ledger.

use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::postgres::{Column, PostgresDeclaration, Table};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;

/// The tables `estate` declares (`app.t0` ... `app.t1999`).
const TABLES: usize = 2000;

/// The files `estate` declares.
const FILES: usize = 1000;

/// The path of the `n`th file (ten directories of a hundred files).
fn file_path(n: usize) -> String {
    format!("d{}/file-{n:04}.txt", n / 100)
}

/// The content of the `n`th file.
fn file_content(n: usize) -> String {
    format!("file {n}\n{}\n", "x".repeat(64))
}

/// Declares `estate`.
fn estate() -> EnvDeclaration {
    let tables = (0..TABLES).fold(PostgresDeclaration::new(), |d, i| {
        d.table(
            Table::new("app", format!("t{i}"))
                .column(Column::new("id", "bigint").not_null())
                .column(Column::new("name", "text").not_null().default("''::text"))
                .column(Column::new("n", "integer")),
        )
    });
    let files = (0..FILES).fold(FilesDeclaration::new(), |f, n| f.file(file_path(n), file_content(n), 0o644));
    EnvDeclaration::new().with(tables).with(files)
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("estate", estate) }

op! {
    name: "estate-apply",
    overview: "Apply the estate: create its tables and write its files.",
    env: "estate",
    phases: [ phase("Apply", [ apply(env = "estate") ]) ],
}

converge_op! {
    name: "estate-converge",
    env: "estate",
    rules: [
        when!(eq(status, "drifted") => report("estate drifted"), id = "drift-report",
              why = "The benchmark only observes: drift is reported, never repaired."),
    ],
}
