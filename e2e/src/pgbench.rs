//! The `pgbench` env: pgbench's own four tables with the foreign keys `pgbench -i --foreign-keys`
//! adds, declared as PostgreSQL prints them, plus `public.orders`, whose foreign key points into
//! a schema (`secret`) the env neither declares nor (live) may read: its reference dangles in the
//! declared graph and in the live one. The dashboard's graph page draws this env; the DSN is bound
//! by the `chant.toml` each test writes (`postgres_dsn_var`).

use chant::lexicon::postgres::{Column, Constraint, PostgresDeclaration, Table};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};

/// The foreign keys of pgbench's tables: (table, constraint, definition).
pub const PGBENCH_KEYS: [(&str, &str, &str); 5] = [
    ("pgbench_accounts", "pgbench_accounts_bid_fkey", "FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)"),
    ("pgbench_history", "pgbench_history_aid_fkey", "FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)"),
    ("pgbench_history", "pgbench_history_bid_fkey", "FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)"),
    ("pgbench_history", "pgbench_history_tid_fkey", "FOREIGN KEY (tid) REFERENCES pgbench_tellers(tid)"),
    ("pgbench_tellers", "pgbench_tellers_bid_fkey", "FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)"),
];

/// Declares `pgbench`: the four pgbench tables with their keys, and `public.orders`.
pub fn pgbench() -> EnvDeclaration {
    let mut declaration = PostgresDeclaration::new();
    for (table, key) in [
        ("pgbench_accounts", "aid"),
        ("pgbench_branches", "bid"),
        ("pgbench_history", "tid"),
        ("pgbench_tellers", "tid"),
    ] {
        let mut t = Table::new("public", table).column(Column::new(key, "integer"));
        for (_, name, definition) in PGBENCH_KEYS.iter().filter(|(of, _, _)| *of == table) {
            t = t.constraint(Constraint::new(*name, *definition));
        }
        declaration = declaration.table(t);
    }
    declaration =
        declaration.table(Table::new("public", "orders").column(Column::new("customer_id", "bigint")).constraint(
            Constraint::new("orders_customer_id_fkey", "FOREIGN KEY (customer_id) REFERENCES secret.customers(id)"),
        ));
    EnvDeclaration::new().with(declaration)
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("pgbench", pgbench) }
