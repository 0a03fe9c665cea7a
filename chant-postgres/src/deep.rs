//! The postgres lexicon's deep read: per declared table, its property tree from `pg_catalog` in
//! a fixed number of queries ([`QUERIES`]) whatever the number of tables — the table's comment
//! (without chant's marker), each column's type, nullability, default and comment, the table's
//! constraints (primary key, unique, foreign key, check, exclusion, by name with their
//! `pg_get_constraintdef` definition) and its indexes (those not backing a constraint: columns
//! and uniqueness).
//!
//! **Field owners at object granularity**: only a table's owner (or a superuser) can alter it,
//! so the owning role is the manager of every path under it (`""` in the field owners). An
//! extra column on a table owned by another role is unclaimed and held by that role. Each
//! declared column is a sub-entity (`columns.<name>` -> `<schema>.<table>.<name>`), so its drift
//! lands on the column's own change-set entry. The substrate writes nothing on every table that
//! is not already left out of the tree, so the prune table is empty.
//!
//! [`plan`] adds what apply converges of it safely: a missing declared index (created), a
//! declared column comment (set), and the declared constraints of a table it creates; on an
//! existing table a missing or different constraint and an index that differs are reported, not
//! made.

use std::collections::BTreeMap;

use crate::client::GenericClient;
use serde_json::{Map, Value, json};

use super::declaration::{PostgresDeclaration, TABLE_KIND, Table};
use super::marker::{self, Identity};
use super::plan::{Plan, ident, literal};
use chant_lexicon::observe::deep::{DeepEntity, DeepObservation};

/// How many queries [`read`] issues, whatever the number of tables.
pub const QUERIES: usize = 4;

/// One live column, as the deep read sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepColumn {
    /// Its name.
    pub name: String,
    /// Its type, as `format_type` prints it.
    pub sql_type: String,
    /// Whether it is `NOT NULL`.
    pub not_null: bool,
    /// Its default (empty when none).
    pub default: String,
    /// Its comment (empty when none).
    pub comment: String,
}

/// One live index not backing a constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepIndex {
    /// Its columns, in order (expression columns left out).
    pub columns: Vec<String>,
    /// Whether it is unique.
    pub unique: bool,
}

/// One live table, as the deep read sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeepTable {
    /// The owning role.
    pub owner: String,
    /// Its comment, chant's marker included.
    pub comment: String,
    /// Its columns, in order.
    pub columns: Vec<DeepColumn>,
    /// Its constraints: name -> definition.
    pub constraints: BTreeMap<String, String>,
    /// Its indexes not backing a constraint, by name.
    pub indexes: BTreeMap<String, DeepIndex>,
}

/// What one deep read found: tables by entity name, and the queries it issued.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeepCatalog {
    /// Tables by entity name (`schema.table`).
    pub tables: BTreeMap<String, DeepTable>,
    /// How many queries the read issued.
    pub queries: usize,
}

const IN_TABLES: &str = "c.relkind IN ('r', 'p') AND (n.nspname || '.' || c.relname) = ANY($1)";

/// Reads the deep catalog of the tables named `tables` (`schema.table`) through `client`.
///
/// # Errors
///
/// The first query that fails.
pub fn read(client: &mut impl GenericClient, tables: &[String]) -> Result<DeepCatalog, crate::client::Error> {
    let mut out = DeepCatalog::default();
    let names: Vec<String> = tables.to_vec();
    let rows = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, pg_catalog.pg_get_userbyid(c.relowner)::text, \
                    coalesce(d.description, '') \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid \
                  AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0 \
             WHERE {IN_TABLES}"
        ),
        &[&names],
    )?;
    out.queries += 1;
    for row in rows {
        let entity = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        out.tables
            .insert(entity, DeepTable { owner: row.try_get(2)?, comment: row.try_get(3)?, ..DeepTable::default() });
    }

    let rows = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, \
                    pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, \
                    coalesce(pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), ''), coalesce(d.description, '') \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid \
                  AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = a.attnum \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND {IN_TABLES} \
             ORDER BY n.nspname, c.relname, a.attnum"
        ),
        &[&names],
    )?;
    out.queries += 1;
    for row in rows {
        let entity = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        let column = DeepColumn {
            name: row.try_get(2)?,
            sql_type: row.try_get(3)?,
            not_null: row.try_get(4)?,
            default: row.try_get(5)?,
            comment: row.try_get(6)?,
        };
        out.tables.entry(entity).or_default().columns.push(column);
    }

    let rows = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, con.conname::text, pg_catalog.pg_get_constraintdef(con.oid) \
             FROM pg_catalog.pg_constraint con \
             JOIN pg_catalog.pg_class c ON c.oid = con.conrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE con.contype IN ('p', 'u', 'f', 'c', 'x') AND {IN_TABLES}"
        ),
        &[&names],
    )?;
    out.queries += 1;
    for row in rows {
        let entity = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        out.tables.entry(entity).or_default().constraints.insert(row.try_get(2)?, row.try_get(3)?);
    }

    let rows = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, ic.relname::text, i.indisunique, \
                    ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) \
                          JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
                          ORDER BY k.ord) \
             FROM pg_catalog.pg_index i \
             JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid \
             JOIN pg_catalog.pg_class c ON c.oid = i.indrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE {IN_TABLES} AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint con \
                   WHERE con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x'))"
        ),
        &[&names],
    )?;
    out.queries += 1;
    for row in rows {
        let entity = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        let index = DeepIndex { unique: row.try_get(3)?, columns: row.try_get(4)? };
        out.tables.entry(entity).or_default().indexes.insert(row.try_get(2)?, index);
    }
    Ok(out)
}

fn column_tree(sql_type: &str, not_null: bool, default: &str, comment: Option<&str>) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), json!(sql_type));
    map.insert("not_null".into(), json!(not_null));
    map.insert("default".into(), json!(default));
    if let Some(comment) = comment {
        map.insert("comment".into(), json!(comment));
    }
    Value::Object(map)
}

/// Returns the declared tree of `table`.
pub fn declared_tree(table: &Table) -> Value {
    let columns: Map<String, Value> = table
        .columns
        .iter()
        .map(|c| {
            let default = c.default.clone().unwrap_or_default();
            (c.name.clone(), column_tree(&c.sql_type, c.not_null, &default, c.comment.as_deref()))
        })
        .collect();
    let constraints: Map<String, Value> =
        table.constraints.iter().map(|c| (c.name.clone(), json!({ "definition": c.definition }))).collect();
    let indexes: Map<String, Value> =
        table.indexes.iter().map(|i| (i.name.clone(), json!({ "columns": i.columns, "unique": i.unique }))).collect();
    json!({ "comment": table.comment, "columns": columns, "constraints": constraints, "indexes": indexes })
}

/// Returns the live tree of `table`.
pub fn live_tree(table: &DeepTable) -> Value {
    let columns: Map<String, Value> = table
        .columns
        .iter()
        .map(|c| {
            let comment = (!c.comment.is_empty()).then_some(c.comment.as_str());
            (c.name.clone(), column_tree(&c.sql_type, c.not_null, &c.default, comment))
        })
        .collect();
    let constraints: Map<String, Value> =
        table.constraints.iter().map(|(name, def)| (name.clone(), json!({ "definition": def }))).collect();
    let indexes: Map<String, Value> = table
        .indexes
        .iter()
        .map(|(name, i)| (name.clone(), json!({ "columns": i.columns, "unique": i.unique })))
        .collect();
    json!({
        "comment": marker::split(&table.comment).0,
        "columns": columns,
        "constraints": constraints,
        "indexes": indexes,
    })
}

/// Builds the deep observation of every declared table the deep read found.
pub fn observation(declaration: &PostgresDeclaration, catalog: &DeepCatalog) -> DeepObservation {
    let mut out = DeepObservation::default();
    for (entity, table) in declaration.tables() {
        let Some(live) = catalog.tables.get(entity) else { continue };
        let subentities =
            table.columns.iter().map(|c| (format!("columns.{}", c.name), format!("{entity}.{}", c.name))).collect();
        out.entities.insert(
            entity.clone(),
            DeepEntity {
                kind: Some(TABLE_KIND.into()),
                declared: declared_tree(table),
                live: live_tree(live),
                field_owners: Some(BTreeMap::from([(String::new(), live.owner.clone())])),
                subentities,
            },
        );
    }
    out
}

/// Adds to `plan` what apply converges of the deep read safely: missing declared indexes and
/// declared column comments; reports a missing or different constraint and a different index.
/// A table the plan creates gets its indexes and comments too; a table carrying another
/// identity's marker is left alone.
pub fn plan(
    plan: &mut Plan,
    declaration: &PostgresDeclaration,
    catalog: &DeepCatalog,
    identity: &Identity,
    created: &[String],
) {
    for (entity, table) in declaration.tables() {
        let live = catalog.tables.get(entity);
        if live.is_none() && !created.contains(entity) {
            continue;
        }
        if let Some(m) = live.and_then(|l| marker::split(&l.comment).1)
            && !identity.owns(&m)
        {
            continue;
        }
        let name = format!("{}.{}", ident(&table.schema), ident(&table.name));
        for column in &table.columns {
            let Some(want) = &column.comment else { continue };
            let got = live.and_then(|l| l.columns.iter().find(|c| c.name == column.name)).map(|c| c.comment.as_str());
            if got != Some(want.as_str()) {
                plan.statements.push(super::plan::Statement::must(format!(
                    "COMMENT ON COLUMN {name}.{} IS {}",
                    ident(&column.name),
                    literal(want)
                )));
            }
        }
        for index in &table.indexes {
            match live.and_then(|l| l.indexes.get(&index.name)) {
                None => {
                    let unique = if index.unique { "UNIQUE " } else { "" };
                    let columns: Vec<String> = index.columns.iter().map(|c| ident(c)).collect();
                    plan.statements.push(super::plan::Statement::must(format!(
                        "CREATE {unique}INDEX {} ON {name} ({})",
                        ident(&index.name),
                        columns.join(", ")
                    )));
                }
                Some(got) if got.columns != index.columns || got.unique != index.unique => plan.reported.push(format!(
                    "{entity}: index {} is on ({}){}, declared on ({}){}; chant will not rebuild it unattended",
                    index.name,
                    got.columns.join(", "),
                    if got.unique { " unique" } else { "" },
                    index.columns.join(", "),
                    if index.unique { " unique" } else { "" }
                )),
                Some(_) => {}
            }
        }
        for constraint in &table.constraints {
            let got = live.and_then(|l| l.constraints.get(&constraint.name));
            if live.is_none() {
                // A table this plan creates takes its declared constraints with it.
                plan.statements.push(super::plan::Statement::must(format!(
                    "ALTER TABLE {name} ADD CONSTRAINT {} {}",
                    ident(&constraint.name),
                    constraint.definition
                )));
            } else if got != Some(&constraint.definition) {
                plan.reported.push(format!(
                    "{entity}: constraint {} is {}, declared {}; chant does not change constraints unattended",
                    constraint.name,
                    got.map_or("missing", String::as_str),
                    constraint.definition
                ));
            }
        }
    }
}
