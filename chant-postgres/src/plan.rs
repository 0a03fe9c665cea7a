//! What an apply (or a teardown) would do to the live catalog: statements to run, and changes
//! reported but not made. Pure: no I/O.
//!
//! A plain apply ([`DeleteMode::Never`]) converges what it can do safely — create a missing
//! schema, table or column; widen a narrowed column; restore nullability and defaults; restore a
//! comment and stamp the marker on a declared table that has none — and reports, without
//! applying, a change it cannot undo safely: a narrowing or a type change that could lose data.
//! It drops nothing. With [`DeleteMode::OwnedOnly`] it also makes those unsafe column changes
//! (`USING column::type`) and drops chant's own undeclared tables. A declared table that carries
//! another project's or env's marker, or that is not a table, is reported and left alone.
//! [`teardown`] executes a teardown plan: it drops exactly the tables the plan lists (each still
//! carrying this identity's marker), then tries each schema it lists; what it does not list is
//! never dropped.

use super::catalog::Snapshot;
use super::declaration::{Column, PostgresDeclaration, SCHEMA_KIND, TABLE_KIND, Table, is_widening};
use super::marker::{self, Identity};
use chant_lexicon::observe::estate::TeardownPlan;

pub use chant_lexicon::DeleteMode;

/// One statement, and whether it must run alone in a savepoint (its failure being expected and
/// reported rather than fatal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The SQL.
    pub sql: String,
    /// Try it in a savepoint; on failure report `why` and go on.
    pub tentative: Option<String>,
}

impl Statement {
    pub(crate) fn must(sql: String) -> Self {
        Statement { sql, tentative: None }
    }
}

/// What an apply or teardown would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Statements, in order.
    pub statements: Vec<Statement>,
    /// Changes reported but not made, one line each.
    pub reported: Vec<String>,
}

/// Quotes an identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quotes a string literal (with `standard_conforming_strings` on, PostgreSQL's default).
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", ident(schema), ident(name))
}

fn column_sql(c: &Column) -> String {
    let mut s = format!("{} {}", ident(&c.name), c.sql_type);
    if let Some(d) = &c.default {
        s.push_str(&format!(" DEFAULT {d}"));
    }
    if c.not_null {
        s.push_str(" NOT NULL");
    }
    s
}

/// Plans an apply of `declaration` over `snapshot`.
pub fn apply(declaration: &PostgresDeclaration, snapshot: &Snapshot, identity: &Identity, mode: DeleteMode) -> Plan {
    let mut plan = Plan::default();
    let mut blocked_schemas = Vec::new();
    for schema in declaration.schemas() {
        match snapshot.schemas.get(&schema) {
            None => {
                plan.statements.push(Statement::must(format!("CREATE SCHEMA {}", ident(&schema))));
                plan.statements.push(Statement::must(format!(
                    "COMMENT ON SCHEMA {} IS {}",
                    ident(&schema),
                    literal(&marker::stamp("", identity))
                )));
            }
            Some(live) if !live.usage => {
                plan.reported.push(format!(
                    "schema {schema}: the role has no USAGE on it, so its declared tables cannot be applied"
                ));
                blocked_schemas.push(schema);
            }
            Some(_) => {}
        }
    }
    for (entity, table) in declaration.tables() {
        if blocked_schemas.contains(&table.schema) {
            continue;
        }
        match snapshot.relations.get(entity) {
            None => create_table(&mut plan, table, identity),
            Some(live) if !live.is_table() => plan.reported.push(format!(
                "{entity}: declared as a table but is a {}; chant will not replace it",
                live.kind_word()
            )),
            Some(live) => {
                let (comment, found) = marker::split(&live.comment);
                if let Some(m) = &found
                    && !identity.owns(m)
                {
                    plan.reported.push(format!(
                        "{entity}: carries the marker of stack={} env={}; left alone",
                        m.stack,
                        m.env.as_deref().unwrap_or("-")
                    ));
                    continue;
                }
                if found.is_none() || comment != table.comment {
                    plan.statements.push(Statement::must(format!(
                        "COMMENT ON TABLE {} IS {}",
                        qualified(&table.schema, &table.name),
                        literal(&marker::stamp(&table.comment, identity))
                    )));
                }
                converge_columns(&mut plan, table, snapshot, mode);
            }
        }
    }
    for name in declaration.unsupported().keys() {
        plan.reported.push(format!("{name}: the postgres lexicon has no writer for this kind"));
    }
    if mode == DeleteMode::OwnedOnly {
        for (entity, live) in &snapshot.relations {
            if !live.is_table() || declaration.tables().contains_key(entity) {
                continue;
            }
            if snapshot.schemas.get(&live.schema).is_some_and(|s| !s.usage) {
                continue;
            }
            if marker::split(&live.comment).1.is_some_and(|m| identity.owns(&m)) {
                plan.statements.push(Statement::must(format!("DROP TABLE {}", qualified(&live.schema, &live.name))));
            }
        }
    }
    plan
}

fn create_table(plan: &mut Plan, table: &Table, identity: &Identity) {
    let columns: Vec<String> = table.columns.iter().map(column_sql).collect();
    let name = qualified(&table.schema, &table.name);
    plan.statements.push(Statement::must(format!("CREATE TABLE {name} ({})", columns.join(", "))));
    plan.statements.push(Statement::must(format!(
        "COMMENT ON TABLE {name} IS {}",
        literal(&marker::stamp(&table.comment, identity))
    )));
}

fn converge_columns(plan: &mut Plan, table: &Table, snapshot: &Snapshot, mode: DeleteMode) {
    let name = qualified(&table.schema, &table.name);
    let live_columns = snapshot.columns_of(&table.entity());
    for column in &table.columns {
        let col = ident(&column.name);
        let Some((_, live)) = live_columns.iter().find(|(n, _)| *n == column.name) else {
            plan.statements.push(Statement::must(format!("ALTER TABLE {name} ADD COLUMN {}", column_sql(column))));
            continue;
        };
        let full = format!("{}.{}", table.entity(), column.name);
        if live.sql_type != column.sql_type {
            if is_widening(&live.sql_type, &column.sql_type) {
                plan.statements
                    .push(Statement::must(format!("ALTER TABLE {name} ALTER COLUMN {col} TYPE {}", column.sql_type)));
            } else if mode == DeleteMode::OwnedOnly {
                plan.statements.push(Statement::must(format!(
                    "ALTER TABLE {name} ALTER COLUMN {col} TYPE {ty} USING {col}::{ty}",
                    ty = column.sql_type
                )));
            } else {
                plan.reported.push(format!(
                    "{full}: type is {}, declared {}; changing it could lose data, so chant will not do it unattended (apply with delete_mode = \"owned-only\" by hand)",
                    live.sql_type, column.sql_type
                ));
            }
        }
        let default = column.default.clone().unwrap_or_default();
        if live.default != default {
            plan.statements.push(Statement::must(match &column.default {
                Some(d) => format!("ALTER TABLE {name} ALTER COLUMN {col} SET DEFAULT {d}"),
                None => format!("ALTER TABLE {name} ALTER COLUMN {col} DROP DEFAULT"),
            }));
        }
        if live.not_null != column.not_null {
            let verb = if column.not_null { "SET" } else { "DROP" };
            plan.statements.push(Statement::must(format!("ALTER TABLE {name} ALTER COLUMN {col} {verb} NOT NULL")));
        }
    }
}

/// Plans a teardown of exactly `planned` (the plan `lifecycle teardown <env>` printed): drop
/// each table it lists that is still present, still a table and still carries `identity`'s
/// marker, then try each schema it lists (tentatively: a schema still holding anything else is
/// kept and reported). Nothing it does not list is dropped: a listed table gone or no longer
/// marked, and a marked table or schema the plan did not list, are reported and left alone.
pub fn teardown(snapshot: &Snapshot, identity: &Identity, planned: &TeardownPlan) -> Plan {
    let mut plan = Plan::default();
    let ours = |comment: &str| marker::split(comment).1.is_some_and(|m| identity.owns(&m));
    let listed = |name: &str, kind: &str| {
        planned.candidates.get(name).is_some_and(|c| c.kind.as_deref().is_none_or(|k| k == kind))
    };
    for (name, candidate) in &planned.candidates {
        match candidate.kind.as_deref() {
            Some(SCHEMA_KIND) => match snapshot.schemas.get(name) {
                Some(live) if live.usage && ours(&live.comment) => plan.statements.push(Statement {
                    sql: format!("DROP SCHEMA {}", ident(name)),
                    tentative: Some(format!("schema {name} kept: it still holds objects that are not chant's")),
                }),
                Some(_) => plan.reported.push(format!(
                    "schema {name} is in the plan but no longer carries this env's marker (or lost USAGE): left"
                )),
                None => plan.reported.push(format!("schema {name} is in the plan and already gone")),
            },
            _ => match snapshot.relations.get(name) {
                Some(live)
                    if live.is_table()
                        && ours(&live.comment)
                        && snapshot.schemas.get(&live.schema).is_none_or(|s| s.usage) =>
                {
                    plan.statements
                        .push(Statement::must(format!("DROP TABLE {}", qualified(&live.schema, &live.name))));
                }
                Some(_) => plan.reported.push(format!(
                    "table {name} is in the plan but no longer carries this env's marker (or lost USAGE): left"
                )),
                None => plan.reported.push(format!("table {name} is in the plan and already gone")),
            },
        }
    }
    // Schemas are dropped after the tables they may hold.
    plan.statements.sort_by_key(|s| s.tentative.is_some());
    for (entity, live) in &snapshot.relations {
        if live.is_table() && ours(&live.comment) && !listed(entity, TABLE_KIND) {
            plan.reported.push(format!("table {entity} carries this env's marker and is not in the plan: left"));
        }
    }
    for (schema, live) in &snapshot.schemas {
        if ours(&live.comment) && !listed(schema, SCHEMA_KIND) {
            plan.reported.push(format!("schema {schema} carries this env's marker and is not in the plan: left"));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{LiveColumn, LiveRelation, LiveSchema};

    fn identity() -> Identity {
        Identity { stack: "p".into(), env: "e".into() }
    }

    fn snapshot(email_type: &str, comment: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.schemas.insert("app".into(), LiveSchema { usage: true, comment: String::new() });
        s.relations.insert(
            "app.users".into(),
            LiveRelation {
                schema: "app".into(),
                name: "users".into(),
                relkind: 'r',
                comment: comment.into(),
                owner: None,
                toast: None,
            },
        );
        s.relations.insert(
            "app.old".into(),
            LiveRelation {
                schema: "app".into(),
                name: "old".into(),
                relkind: 'r',
                comment: "[chant managed-by=chant stack=p env=e]".into(),
                owner: None,
                toast: None,
            },
        );
        s.columns.insert(
            "app.users".into(),
            vec![("email".into(), LiveColumn { sql_type: email_type.into(), not_null: false, default: String::new() })],
        );
        s
    }

    fn declaration() -> PostgresDeclaration {
        PostgresDeclaration::new().table(
            Table::new("app", "users")
                .column(Column::new("email", "varchar(20)").not_null().default("''::character varying"))
                .column(Column::new("id", "bigint")),
        )
    }

    fn sql(plan: &Plan) -> Vec<&str> {
        plan.statements.iter().map(|s| s.sql.as_str()).collect()
    }

    #[test]
    fn a_fresh_database_gets_schema_table_and_markers() {
        let plan = apply(&declaration(), &Snapshot::default(), &identity(), DeleteMode::Never);
        assert_eq!(
            sql(&plan),
            [
                "CREATE SCHEMA \"app\"",
                "COMMENT ON SCHEMA \"app\" IS '[chant managed-by=chant stack=p env=e]'",
                "CREATE TABLE \"app\".\"users\" (\"email\" character varying(20) DEFAULT ''::character varying NOT NULL, \"id\" bigint)",
                "COMMENT ON TABLE \"app\".\"users\" IS '[chant managed-by=chant stack=p env=e]'",
            ]
        );
    }

    #[test]
    fn narrowed_by_hand_is_widened_back_and_widened_by_hand_is_reported() {
        let ours = "[chant managed-by=chant stack=p env=e]";
        let narrowed = apply(&declaration(), &snapshot("character varying(10)", ours), &identity(), DeleteMode::Never);
        let s = sql(&narrowed);
        assert_eq!(s[0], "ALTER TABLE \"app\".\"users\" ALTER COLUMN \"email\" TYPE character varying(20)");
        assert!(s.contains(&"ALTER TABLE \"app\".\"users\" ADD COLUMN \"id\" bigint"));
        assert!(narrowed.reported.is_empty());
        assert!(!sql(&narrowed).iter().any(|s| s.starts_with("DROP")), "plain apply drops nothing");

        let widened = apply(&declaration(), &snapshot("character varying(100)", ours), &identity(), DeleteMode::Never);
        assert!(!sql(&widened).iter().any(|s| s.contains("TYPE")));
        assert_eq!(widened.reported.len(), 1);
        assert!(
            widened.reported[0]
                .starts_with("app.users.email: type is character varying(100), declared character varying(20)")
        );

        let forced =
            apply(&declaration(), &snapshot("character varying(100)", ours), &identity(), DeleteMode::OwnedOnly);
        assert!(sql(&forced).contains(
            &"ALTER TABLE \"app\".\"users\" ALTER COLUMN \"email\" TYPE character varying(20) USING \"email\"::character varying(20)"
        ));
        assert!(sql(&forced).contains(&"DROP TABLE \"app\".\"old\""));
        assert!(forced.reported.is_empty());
    }

    #[test]
    fn nullability_defaults_and_comments_are_restored_and_foreign_markers_left_alone() {
        let plan =
            apply(&declaration(), &snapshot("character varying(20)", "hand comment"), &identity(), DeleteMode::Never);
        let s = sql(&plan);
        assert!(s.contains(&"COMMENT ON TABLE \"app\".\"users\" IS '[chant managed-by=chant stack=p env=e]'"));
        assert!(s.contains(&"ALTER TABLE \"app\".\"users\" ALTER COLUMN \"email\" SET DEFAULT ''::character varying"));
        assert!(s.contains(&"ALTER TABLE \"app\".\"users\" ALTER COLUMN \"email\" SET NOT NULL"));

        let other = apply(
            &declaration(),
            &snapshot("text", "[chant managed-by=chant stack=p env=other]"),
            &identity(),
            DeleteMode::OwnedOnly,
        );
        assert!(other.reported[0].contains("carries the marker of stack=p env=other"));
        assert_eq!(sql(&other), ["DROP TABLE \"app\".\"old\""]);
    }

    #[test]
    fn teardown_drops_only_what_carries_the_marker() {
        let mut s = snapshot("text", "");
        s.schemas.get_mut("app").unwrap().comment = "[chant managed-by=chant stack=p env=e]".into();
        let mut planned = TeardownPlan::new();
        planned.candidate("app", Some(SCHEMA_KIND), None);
        planned.candidate("app.old", Some(TABLE_KIND), None);
        let plan = teardown(&s, &identity(), &planned);
        assert_eq!(sql(&plan), ["DROP TABLE \"app\".\"old\"", "DROP SCHEMA \"app\""]);
        assert!(plan.statements[1].tentative.is_some());
        assert!(plan.reported.is_empty(), "{:?}", plan.reported);
    }

    #[test]
    fn teardown_drops_nothing_the_plan_did_not_list_and_says_so() {
        let s = snapshot("text", "");
        let mut planned = TeardownPlan::new();
        planned.candidate("app.gone", Some(TABLE_KIND), None);
        planned.candidate("app.users", Some(TABLE_KIND), None);
        let plan = teardown(&s, &identity(), &planned);
        assert!(plan.statements.is_empty(), "{:?}", sql(&plan));
        assert_eq!(
            plan.reported,
            [
                "table app.gone is in the plan and already gone",
                "table app.users is in the plan but no longer carries this env's marker (or lost USAGE): left",
                "table app.old carries this env's marker and is not in the plan: left",
            ]
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(literal("it's"), "'it''s'");
    }
}
