//! Live export of a PostgreSQL database: schemas, tables, columns (type, nullability, default,
//! comment), constraints, indexes and chant's ownership markers, read in [`QUERIES`] queries
//! whatever the size of the database, and cleaned into an [`ExportedTemplate`].
//!
//! [`read`] is the only I/O: five queries of its own in one read-only repeatable-read
//! transaction (schemas; relations other than indexes, with the table owning a sequence;
//! columns with their comments; constraints with `pg_get_constraintdef`; indexes with
//! `pg_get_indexdef`), each row naming its table by oid, so a 2,000-table database is read
//! without the index relations and toast tables the observation's catalog read carries.
//! [`template`] is pure: it applies the options and strips what the server created or implied
//! unless `verbatim` is set:
//!
//! | stripped by default | kept under `verbatim` as |
//! |---|---|
//! | the `public` schema, when nothing exported lives in it and it carries no marker | a `schema` |
//! | a sequence owned by a column (its default names it) | a `sequence` child of the table |
//! | an index backing a primary key, unique or exclusion constraint | an `index` child |
//! | chant's marker inside a comment (it is read as the ownership instead) | the `raw_comment` attribute |
//!
//! Views, materialized views, foreign tables and free-standing sequences are not exported (the
//! lexicon declares tables); each is a note. A schema the role has no USAGE on is a note too.

use std::collections::{BTreeMap, HashMap};

use crate::client::GenericClient;

use super::catalog::{DEFAULT_EXPR, LiveColumn, LiveRelation, LiveSchema, NOT_SYSTEM, SCHEMAS, Snapshot};
use super::marker::{self, Identity};
use super::{PostgresError, PostgresLexicon};
use chant_lexicon::export::{Attr, ExportOptions, ExportOwnership, ExportedResource, ExportedTemplate};

/// How many queries [`read`] issues, whatever the size of the database.
pub const QUERIES: usize = 5;

/// Attribute keys of exported resources.
pub mod attr {
    /// A comment, without chant's marker.
    pub const COMMENT: &str = "comment";
    /// The comment as stored, marker included (`verbatim` only).
    pub const RAW_COMMENT: &str = "raw_comment";
    /// A column's type, as `format_type` prints it.
    pub const TYPE: &str = "type";
    /// A column's nullability.
    pub const NOT_NULL: &str = "not_null";
    /// A column's default, as `pg_get_expr` prints it.
    pub const DEFAULT: &str = "default";
    /// A constraint's kind (`primary key`, `foreign key`, `unique`, `check`, `exclusion`).
    pub const CONSTRAINT: &str = "constraint";
    /// A constraint's or index's definition, as PostgreSQL prints it (a constraint's as
    /// `pg_get_constraintdef` prints it unprettied, the form the deep read compares).
    pub const DEFINITION: &str = "definition";
    /// An index's key columns, in order (expression columns left out).
    pub const COLUMNS: &str = "columns";
    /// Whether an index is unique.
    pub const UNIQUE: &str = "unique";
    /// Whether an index backs a primary key, unique or exclusion constraint (`verbatim` only).
    pub const BACKS_CONSTRAINT: &str = "backs_constraint";
}

/// One live constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveConstraint {
    /// Its name.
    pub name: String,
    /// `pg_constraint.contype` (`p`, `u`, `f`, `c`, `x`).
    pub contype: char,
    /// `pg_get_constraintdef`.
    pub definition: String,
}

/// One live index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveIndex {
    /// Its name.
    pub name: String,
    /// `pg_get_indexdef`.
    pub definition: String,
    /// Whether a primary key, unique or exclusion constraint owns it.
    pub backs_constraint: bool,
    /// Whether it is unique.
    pub unique: bool,
    /// Its key columns, in order (expression columns left out).
    pub columns: Vec<String>,
}

/// Everything one export read found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSnapshot {
    /// Schemas, relations (no indexes) and columns, in the observation's catalog types.
    pub catalog: Snapshot,
    /// Constraints by table entity name, by name.
    pub constraints: BTreeMap<String, Vec<LiveConstraint>>,
    /// Indexes by table entity name, by name.
    pub indexes: BTreeMap<String, Vec<LiveIndex>>,
    /// Column comments by table entity name, then column name.
    pub column_comments: BTreeMap<String, BTreeMap<String, String>>,
    /// How many queries the read issued.
    pub queries: usize,
}

/// Reads everything an export needs through `lexicon`'s binding, in one read-only
/// repeatable-read transaction, and returns it with the address asked (no password).
///
/// # Errors
///
/// [`PostgresError::NoBinding`], [`PostgresError::NoCredentials`] or
/// [`PostgresError::Unreachable`].
pub fn read(lexicon: &PostgresLexicon) -> Result<(ExportSnapshot, String), PostgresError> {
    lexicon.read_in_snapshot(|tx| {
        let mut snapshot = ExportSnapshot::default();
        read_all(tx, &mut snapshot)?;
        Ok(snapshot)
    })
}

/// A `"char"` column (`relkind`, `contype`) as a char.
fn char_at(row: &tokio_postgres::Row, i: usize) -> Result<char, crate::client::Error> {
    Ok(char::from(row.try_get::<_, i8>(i)?.cast_unsigned()))
}

/// Groups rows ordered by a relation's oid (column 0) into `out` under each relation's entity
/// name, skipping relations `tables` does not name; `item` reads the rest of a row.
fn grouped<T>(
    rows: Vec<tokio_postgres::Row>,
    tables: &HashMap<u32, String>,
    out: &mut BTreeMap<String, Vec<T>>,
    item: impl Fn(&tokio_postgres::Row) -> Result<T, crate::client::Error>,
) -> Result<(), crate::client::Error> {
    let mut current: Option<(u32, Vec<T>)> = None;
    for row in rows {
        let oid: u32 = row.try_get(0)?;
        if current.as_ref().is_some_and(|(o, _)| *o != oid)
            && let Some((o, items)) = current.take()
            && let Some(entity) = tables.get(&o)
        {
            out.insert(entity.clone(), items);
        }
        current.get_or_insert_with(|| (oid, Vec::new())).1.push(item(&row)?);
    }
    if let Some((o, items)) = current
        && let Some(entity) = tables.get(&o)
    {
        out.insert(entity.clone(), items);
    }
    Ok(())
}

/// The export's own read of `pg_catalog`, in [`QUERIES`] queries: what a template needs and no
/// more (no index relations, no toast tables), each row naming its table by oid.
fn read_all(client: &mut impl GenericClient, snapshot: &mut ExportSnapshot) -> Result<(), crate::client::Error> {
    let rows = client.query(SCHEMAS, &[])?;
    snapshot.queries += 1;
    for row in rows {
        snapshot
            .catalog
            .schemas
            .insert(row.try_get(0)?, LiveSchema { usage: row.try_get(1)?, comment: row.try_get(2)? });
    }

    let rows = client.query(
        &format!(
            "SELECT c.oid, n.nspname::text, c.relname::text, c.relkind, coalesce(d.description, ''), dep.refobjid \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid \
                  AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0 \
             LEFT JOIN pg_catalog.pg_depend dep ON c.relkind = 'S' \
                  AND dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.objid = c.oid \
                  AND dep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.deptype IN ('a', 'i') \
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND {NOT_SYSTEM}"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    let mut names: HashMap<u32, String> = HashMap::with_capacity(rows.len());
    let mut owned_by: Vec<(String, u32)> = Vec::new();
    for row in rows {
        let relation = LiveRelation {
            schema: row.try_get(1)?,
            name: row.try_get(2)?,
            relkind: char_at(&row, 3)?,
            comment: row.try_get(4)?,
            owner: None,
            toast: None,
        };
        let entity = relation.entity();
        if let Some(owner) = row.try_get::<_, Option<u32>>(5)? {
            owned_by.push((entity.clone(), owner));
        }
        names.insert(row.try_get(0)?, entity.clone());
        snapshot.catalog.relations.entry(entity).or_insert(relation);
    }
    for (entity, owner) in owned_by {
        if let Some(relation) = snapshot.catalog.relations.get_mut(&entity) {
            // An owner outside the read (never a user table) still makes the sequence owned.
            relation.owner = Some(names.get(&owner).cloned().unwrap_or_default());
        }
    }

    let rows = client.query(
        &format!(
            "SELECT a.attrelid, a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, \
                    {DEFAULT_EXPR}, d.description \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = a.attrelid \
                  AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = a.attnum \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND {NOT_SYSTEM} \
             ORDER BY a.attrelid, a.attnum"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    let mut columns: BTreeMap<String, Vec<(String, LiveColumn, Option<String>)>> = BTreeMap::new();
    grouped(rows, &names, &mut columns, |row| {
        let column = LiveColumn { sql_type: row.try_get(2)?, not_null: row.try_get(3)?, default: row.try_get(4)? };
        Ok((row.try_get(1)?, column, row.try_get(5)?))
    })?;
    for (entity, list) in columns {
        let mut kept = Vec::with_capacity(list.len());
        for (name, column, comment) in list {
            if let Some(comment) = comment {
                snapshot.column_comments.entry(entity.clone()).or_default().insert(name.clone(), comment);
            }
            kept.push((name, column));
        }
        snapshot.catalog.columns.insert(entity, kept);
    }

    let rows = client.query(
        &format!(
            "SELECT con.conrelid, con.conname::text, con.contype, pg_catalog.pg_get_constraintdef(con.oid) \
             FROM pg_catalog.pg_constraint con \
             JOIN pg_catalog.pg_class c ON c.oid = con.conrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE con.contype IN ('p', 'u', 'f', 'c', 'x') AND c.relkind IN ('r', 'p') AND {NOT_SYSTEM} \
             ORDER BY con.conrelid, con.conname"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    grouped(rows, &names, &mut snapshot.constraints, |row| {
        Ok(LiveConstraint { name: row.try_get(1)?, contype: char_at(row, 2)?, definition: row.try_get(3)? })
    })?;

    let rows = client.query(
        &format!(
            "SELECT i.indrelid, ic.relname::text, pg_catalog.pg_get_indexdef(i.indexrelid), \
                    EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k WHERE k.conrelid = i.indrelid \
                            AND k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x')), \
                    i.indisunique, \
                    ARRAY(SELECT a.attname::text FROM pg_catalog.unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) \
                          JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
                          WHERE k.ord <= i.indnkeyatts ORDER BY k.ord) \
             FROM pg_catalog.pg_index i \
             JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid \
             JOIN pg_catalog.pg_class t ON t.oid = i.indrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace \
             WHERE t.relkind IN ('r', 'p') AND {NOT_SYSTEM} \
             ORDER BY i.indrelid, ic.relname"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    grouped(rows, &names, &mut snapshot.indexes, |row| {
        Ok(LiveIndex {
            name: row.try_get(1)?,
            definition: row.try_get(2)?,
            backs_constraint: row.try_get(3)?,
            unique: row.try_get(4)?,
            columns: row.try_get(5)?,
        })
    })?;
    Ok(())
}

/// What [`template`] needs besides the snapshot.
#[derive(Debug, Clone)]
pub struct TemplateContext<'a> {
    /// The env.
    pub env: &'a str,
    /// Whose marker counts as owned.
    pub identity: &'a Identity,
    /// The address read (no password).
    pub address: &'a str,
    /// When it was read (RFC 3339).
    pub read_at: &'a str,
    /// The export's options.
    pub options: &'a ExportOptions,
}

fn ownership(comment: &str, identity: &Identity) -> ExportOwnership {
    match marker::split(comment).1 {
        Some(m) if identity.owns(&m) => ExportOwnership::Owned,
        _ => ExportOwnership::Foreign,
    }
}

fn with_comment(mut r: ExportedResource, comment: &str, verbatim: bool) -> ExportedResource {
    let (declared, _) = marker::split(comment);
    if !declared.is_empty() {
        r = r.attr(attr::COMMENT, Attr::Text(declared));
    }
    if verbatim && !comment.is_empty() {
        r = r.attr(attr::RAW_COMMENT, Attr::Text(comment.to_owned()));
    }
    r
}

fn constraint_word(contype: char) -> &'static str {
    match contype {
        'p' => "primary key",
        'u' => "unique",
        'f' => "foreign key",
        'c' => "check",
        'x' => "exclusion",
        _ => "constraint",
    }
}

/// Builds the template of `snapshot` under `ctx`'s options. Pure.
pub fn template(snapshot: &ExportSnapshot, ctx: &TemplateContext<'_>) -> ExportedTemplate {
    let options = ctx.options;
    let mut out = ExportedTemplate::new(super::COMPONENT, ctx.env, ctx.address, ctx.read_at);
    let catalog = &snapshot.catalog;
    let mut tables: Vec<ExportedResource> = Vec::new();
    let mut not_exported: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut sequences: HashMap<&str, Vec<&LiveRelation>> = HashMap::new();
    for seq in catalog.relations.values().filter(|r| r.relkind == 'S') {
        if let Some(owner) = &seq.owner {
            sequences.entry(owner.as_str()).or_default().push(seq);
        }
    }
    for (entity, rel) in &catalog.relations {
        if catalog.schemas.get(&rel.schema).is_some_and(|s| !s.usage) {
            continue;
        }
        if !rel.is_table() {
            if rel.owner.is_none() && !matches!(rel.relkind, 'i' | 'I') {
                not_exported.entry(rel.kind_word()).or_default().push(entity.clone());
            }
            continue;
        }
        let owned = ownership(&rel.comment, ctx.identity);
        if (options.owned && owned != ExportOwnership::Owned) || !options.selector.keeps("table", entity) {
            continue;
        }
        let mut table =
            with_comment(ExportedResource::new("table", entity.clone(), owned), &rel.comment, options.verbatim);
        let comments = snapshot.column_comments.get(entity);
        for (name, col) in catalog.columns_of(entity) {
            let mut c = ExportedResource::new("column", name.clone(), ExportOwnership::Unknown)
                .attr(attr::TYPE, Attr::Text(col.sql_type.clone()))
                .attr(attr::NOT_NULL, Attr::Flag(col.not_null));
            if !col.default.is_empty() {
                c = c.attr(attr::DEFAULT, Attr::Text(col.default.clone()));
            }
            if let Some(comment) = comments.and_then(|m| m.get(name)) {
                c = c.attr(attr::COMMENT, Attr::Text(comment.clone()));
            }
            table = table.child(c);
        }
        for con in snapshot.constraints.get(entity).into_iter().flatten() {
            table = table.child(
                ExportedResource::new("constraint", con.name.clone(), owned)
                    .attr(attr::CONSTRAINT, Attr::Text(constraint_word(con.contype).to_owned()))
                    .attr(attr::DEFINITION, Attr::Text(con.definition.clone())),
            );
        }
        for index in snapshot.indexes.get(entity).into_iter().flatten() {
            if index.backs_constraint && !options.verbatim {
                continue;
            }
            let mut child = ExportedResource::new("index", index.name.clone(), owned)
                .attr(attr::DEFINITION, Attr::Text(index.definition.clone()))
                .attr(attr::COLUMNS, Attr::Names(index.columns.clone()))
                .attr(attr::UNIQUE, Attr::Flag(index.unique));
            if index.backs_constraint {
                child = child.attr(attr::BACKS_CONSTRAINT, Attr::Flag(true));
            }
            table = table.child(child);
        }
        if options.verbatim {
            for seq in sequences.get(entity.as_str()).into_iter().flatten() {
                table = table.child(ExportedResource::new("sequence", seq.entity(), owned));
            }
        }
        tables.push(table);
    }

    for (name, schema) in &catalog.schemas {
        if !schema.usage {
            out.note(format!("schema {name} not exported: the role has no USAGE on it"));
            continue;
        }
        let owned = ownership(&schema.comment, ctx.identity);
        let holds_tables = tables.iter().any(|t| t.name.split_once('.').is_some_and(|(s, _)| s == name));
        let server_default = name == "public" && owned != ExportOwnership::Owned && !holds_tables;
        if (options.owned && owned != ExportOwnership::Owned)
            || !options.selector.keeps("schema", name)
            || (server_default && !options.verbatim)
        {
            continue;
        }
        out.push(with_comment(ExportedResource::new("schema", name.clone(), owned), &schema.comment, options.verbatim));
    }
    for table in tables {
        out.push(table);
    }
    for (kind, names) in not_exported {
        let shown: Vec<&str> = names.iter().take(10).map(String::as_str).collect();
        let more =
            if names.len() > shown.len() { format!(" and {} more", names.len() - shown.len()) } else { String::new() };
        out.note(format!(
            "{} {kind}(s) not exported (the postgres lexicon declares tables): {}{more}",
            names.len(),
            shown.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::catalog::{LiveColumn, LiveRelation, LiveSchema};
    use super::*;
    use chant_lexicon::export::Selector;

    fn relation(schema: &str, name: &str, relkind: char, comment: &str, owner: Option<&str>) -> LiveRelation {
        LiveRelation {
            schema: schema.into(),
            name: name.into(),
            relkind,
            comment: comment.into(),
            owner: owner.map(str::to_owned),
            toast: None,
        }
    }

    fn snapshot() -> ExportSnapshot {
        let mut s = ExportSnapshot::default();
        let marker = "Users [chant managed-by=chant stack=demo env=legacy]";
        for (name, usage, comment) in
            [("app", true, ""), ("public", true, "standard public schema"), ("secret", false, "")]
        {
            s.catalog.schemas.insert(name.into(), LiveSchema { usage, comment: comment.into() });
        }
        for r in [
            relation("app", "users", 'r', marker, None),
            relation("app", "jobs", 'r', "", None),
            relation("app", "users_pkey", 'i', "", Some("app.users")),
            relation("app", "users_id_seq", 'S', "", Some("app.users")),
            relation("app", "stats", 'm', "", None),
            relation("secret", "keys", 'r', "", None),
        ] {
            s.catalog.relations.insert(r.entity(), r);
        }
        let col = |t: &str, nn: bool, d: &str| LiveColumn { sql_type: t.into(), not_null: nn, default: d.into() };
        s.catalog.columns.insert(
            "app.users".into(),
            vec![
                ("id".into(), col("bigint", true, "nextval('app.users_id_seq'::regclass)")),
                ("email".into(), col("text", false, "")),
            ],
        );
        s.catalog.columns.insert("app.jobs".into(), vec![("id".into(), col("integer", true, ""))]);
        s.constraints.insert(
            "app.users".into(),
            vec![LiveConstraint { name: "users_pkey".into(), contype: 'p', definition: "PRIMARY KEY (id)".into() }],
        );
        s.indexes.insert(
            "app.users".into(),
            vec![
                LiveIndex {
                    name: "users_pkey".into(),
                    definition: "CREATE UNIQUE INDEX users_pkey ON app.users USING btree (id)".into(),
                    backs_constraint: true,
                    unique: true,
                    columns: vec!["id".into()],
                },
                LiveIndex {
                    name: "users_email".into(),
                    definition: "CREATE INDEX users_email ON app.users USING btree (email)".into(),
                    backs_constraint: false,
                    unique: false,
                    columns: vec!["email".into()],
                },
            ],
        );
        s.column_comments.insert("app.users".into(), BTreeMap::from([("email".into(), "Where to write".into())]));
        s
    }

    fn export(options: &ExportOptions) -> ExportedTemplate {
        let identity = Identity { stack: "demo".into(), env: "legacy".into() };
        let ctx = TemplateContext {
            env: "legacy",
            identity: &identity,
            address: "postgres://app@127.0.0.1:5432/app",
            read_at: "2026-01-01T00:00:00.000Z",
            options,
        };
        template(&snapshot(), &ctx)
    }

    fn names(t: &ExportedTemplate) -> Vec<String> {
        t.resources().iter().map(|r| format!("{} {}", r.kind, r.name)).collect()
    }

    #[test]
    fn by_default_what_the_server_implied_is_stripped() {
        let t = export(&ExportOptions::default());
        assert_eq!(names(&t), ["schema app", "table app.jobs", "table app.users"]);
        let users = &t.resources()[2];
        assert_eq!(users.ownership, ExportOwnership::Owned);
        assert_eq!(users.text(attr::COMMENT), Some("Users"), "the marker is read as ownership, not kept as text");
        assert_eq!(users.text(attr::RAW_COMMENT), None);
        let children: Vec<String> = users.children.iter().map(|c| format!("{} {}", c.kind, c.name)).collect();
        assert_eq!(children, ["column id", "column email", "constraint users_pkey", "index users_email"]);
        assert_eq!(users.children[0].text(attr::DEFAULT), Some("nextval('app.users_id_seq'::regclass)"));
        assert!(users.children[0].flag(attr::NOT_NULL));
        assert_eq!(users.children[1].text(attr::COMMENT), Some("Where to write"));
        assert_eq!(users.children[2].text(attr::CONSTRAINT), Some("primary key"));
        assert_eq!(t.resources()[1].ownership, ExportOwnership::Foreign);
        let notes = t.notes().join("\n");
        assert!(notes.contains("schema secret not exported: the role has no USAGE"), "{notes}");
        assert!(notes.contains("1 materialized view(s) not exported") && notes.contains("app.stats"), "{notes}");
        assert!(!notes.contains("users_id_seq"), "an owned sequence is implied by its default: {notes}");
    }

    #[test]
    fn verbatim_keeps_the_server_created_parts() {
        let t = export(&ExportOptions { verbatim: true, ..ExportOptions::default() });
        assert_eq!(names(&t), ["schema app", "schema public", "table app.jobs", "table app.users"]);
        let users = &t.resources()[3];
        assert!(users.text(attr::RAW_COMMENT).unwrap().contains("[chant managed-by=chant"));
        let kinds: Vec<&str> = users.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(kinds, ["id", "email", "users_pkey", "users_pkey", "users_email", "app.users_id_seq"]);
    }

    #[test]
    fn owned_and_the_selector_narrow_the_export() {
        let t = export(&ExportOptions { owned: true, ..ExportOptions::default() });
        assert_eq!(names(&t), ["table app.users"], "only the marked table; the schema carries no marker");
        let selector = Selector::parse("type=table,name='app.j*'").unwrap();
        let t = export(&ExportOptions { selector, ..ExportOptions::default() });
        assert_eq!(names(&t), ["table app.jobs"]);
    }
}
