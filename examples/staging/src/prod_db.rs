//! The `prod-db` env: a real PostgreSQL database, declared in Rust and kept converged.
//!
//! chant.toml binds the env to the *name* of the variable holding its DSN
//! (`postgres_dsn_var = "PROD_DB_URL"`); the DSN itself never lives in a file. `prod-db-converge`
//! ticks it: a first apply establishes the tables, a column narrowed by hand is widened back by
//! the next tick, and a column widened by hand is *reported* (changing it back could lose data),
//! never undone unattended. `prod-db-force` makes that change, and drops chant's own undeclared
//! tables, only by hand and behind its gate: it is destructive, so no rule may target it (the
//! macro refuses that at compile time). `prod-db-teardown` removes only what carries this
//! project's and env's marker.

use chant::lexicon::postgres::{Column, PostgresDeclaration, Table};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;

/// Declares the prod-db estate: one schema, two tables.
pub fn prod_db() -> EnvDeclaration {
    EnvDeclaration::new().with(
        PostgresDeclaration::new()
            .table(
                Table::new("app", "users")
                    .column(Column::new("id", "bigint").not_null())
                    .column(Column::new("email", "varchar(120)").not_null())
                    .column(Column::new("display_name", "varchar(40)"))
                    .column(Column::new("active", "boolean").not_null().default("true"))
                    .comment("People who sign in"),
            )
            .table(
                Table::new("app", "audit_log")
                    .column(Column::new("id", "bigint").not_null())
                    .column(Column::new("at", "timestamptz").not_null().default("now()"))
                    .column(Column::new("entry", "text").not_null())
                    .comment("What happened, in order"),
            ),
    )
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("prod-db", prod_db) }

op! {
    name: "prod-db-apply",
    overview: "Apply the prod-db declaration: create what is missing, converge what is safe, report the rest.",
    env: "prod-db",
    phases: [ phase("Apply", [ apply(env = "prod-db") ]) ],
}

converge_op! {
    name: "prod-db-converge",
    env: "prod-db",
    dial: apply,
    budget: 1,
    rules: [
        when!(eq(status, "unrecorded") => run("prod-db-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply creates the schema and tables."),
        when!(eq(status, "drifted") => run("prod-db-apply"), id = "drift-apply",
              why = "The database drifted; apply converges what is safe and reports what is not."),
        when!(gt(adopt_count, 0) => report("tables or columns chant does not own are present"),
              id = "adopt-report", why = "An unowned table or column is reported for a human, never claimed or dropped."),
        when!(eq(status, "unknown") => report("prod-db could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "prod-db-force",
    overview: "Make the changes plain apply only reports, and drop chant's own undeclared tables, after a human approves.",
    env: "prod-db",
    phases: [
        phase("Approve", [ gate("force", description = "Narrows or retypes columns back to the declaration (data that does not fit is lost) and drops chant's own undeclared tables.") ]),
        phase("Force", [ apply(env = "prod-db", delete_mode = "owned-only") ]),
    ],
}

op! {
    name: "prod-db-teardown",
    overview: "Drop every table and schema chant owns in prod-db, after a human approves.",
    env: "prod-db",
    phases: [
        phase("Approve", [ gate("teardown", description = "Drops every table carrying this project's prod-db marker.") ]),
        phase("Teardown", [ teardown(env = "prod-db") ]),
    ],
}
