//! The live catalog, read from `pg_catalog` in a fixed number of queries ([`QUERIES`]) whatever
//! the size of the database: schemas (with the role's USAGE and their comments), relations (with
//! their comments, the table an index or sequence belongs to, and each table's toast table), and
//! the columns of every table.
//!
//! Only `pg_catalog` is read: `information_schema` hides what the role cannot use, which would
//! turn an unreadable table into a false `create`. System schemas (`pg_catalog`,
//! `information_schema`, `pg_toast`, temporary schemas) are skipped.

use std::collections::BTreeMap;

use postgres::GenericClient;

/// How many queries [`read`] issues, whatever the size of the database.
pub const QUERIES: usize = 3;

pub(super) const NOT_SYSTEM: &str = "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') \
     AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'";

/// One live schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSchema {
    /// Whether the connected role has USAGE on it.
    pub usage: bool,
    /// Its comment (empty when none).
    pub comment: String,
}

/// One live relation of the kinds the lexicon reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRelation {
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// `pg_class.relkind` (`r`, `p`, `v`, `m`, `f`, `S`, `i`, `I`).
    pub relkind: char,
    /// Its comment (empty when none).
    pub comment: String,
    /// For an index or an owned sequence: the table it belongs to (`schema.table`).
    pub owner: Option<String>,
    /// For a table: its toast table (`pg_toast.<name>`), if any.
    pub toast: Option<String>,
}

impl LiveRelation {
    /// Returns the relation's entity name (`schema.name`).
    pub fn entity(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// Returns true for a table or a partitioned table.
    pub fn is_table(&self) -> bool {
        matches!(self.relkind, 'r' | 'p')
    }

    /// Returns the relation kind in words, as the `kind` property.
    pub fn kind_word(&self) -> &'static str {
        relkind_word(self.relkind)
    }
}

/// Returns a `relkind` in words.
pub fn relkind_word(relkind: char) -> &'static str {
    match relkind {
        'r' | 'p' => "table",
        'v' => "view",
        'm' => "materialized view",
        'f' => "foreign table",
        'S' => "sequence",
        'i' | 'I' => "index",
        _ => "relation",
    }
}

/// One live column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveColumn {
    /// Its type, as `format_type` prints it.
    pub sql_type: String,
    /// Whether it is `NOT NULL`.
    pub not_null: bool,
    /// Its default, as `pg_get_expr` prints it (empty when none).
    pub default: String,
}

/// Everything one read of the catalog found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Schemas by name.
    pub schemas: BTreeMap<String, LiveSchema>,
    /// Relations by entity name (`schema.name`).
    pub relations: BTreeMap<String, LiveRelation>,
    /// Columns by table entity name, then column name, in column order.
    pub columns: BTreeMap<String, Vec<(String, LiveColumn)>>,
    /// How many queries the read issued.
    pub queries: usize,
}

impl Snapshot {
    /// Returns the columns of the table `entity`.
    pub fn columns_of(&self, entity: &str) -> &[(String, LiveColumn)] {
        self.columns.get(entity).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Reads the catalog through `client` (a connection or a transaction).
///
/// # Errors
///
/// The first query that fails.
pub fn read(client: &mut impl GenericClient) -> Result<Snapshot, postgres::Error> {
    let mut snapshot = Snapshot::default();

    let schemas = client.query(
        &format!(
            "SELECT n.nspname::text, pg_catalog.has_schema_privilege(n.oid, 'USAGE'), \
                    coalesce(d.description, '') \
             FROM pg_catalog.pg_namespace n \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = n.oid \
                  AND d.classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass AND d.objsubid = 0 \
             WHERE {NOT_SYSTEM}"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    for row in schemas {
        snapshot.schemas.insert(row.try_get(0)?, LiveSchema { usage: row.try_get(1)?, comment: row.try_get(2)? });
    }

    let relations = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, c.relkind::text, coalesce(d.description, ''), \
                    owner_n.nspname::text, owner_c.relname::text, toast.relname::text \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid \
                  AND d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0 \
             LEFT JOIN pg_catalog.pg_index i ON c.relkind IN ('i', 'I') AND i.indexrelid = c.oid \
             LEFT JOIN pg_catalog.pg_depend dep ON c.relkind = 'S' \
                  AND dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.objid = c.oid \
                  AND dep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.deptype IN ('a', 'i') \
             LEFT JOIN pg_catalog.pg_class owner_c ON owner_c.oid = coalesce(i.indrelid, dep.refobjid) \
             LEFT JOIN pg_catalog.pg_namespace owner_n ON owner_n.oid = owner_c.relnamespace \
             LEFT JOIN pg_catalog.pg_class toast ON c.reltoastrelid <> 0 AND toast.oid = c.reltoastrelid \
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'i', 'I') AND {NOT_SYSTEM}"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    for row in relations {
        let relkind: String = row.try_get(2)?;
        let owner_schema: Option<String> = row.try_get(4)?;
        let owner_name: Option<String> = row.try_get(5)?;
        let toast: Option<String> = row.try_get(6)?;
        let relation = LiveRelation {
            schema: row.try_get(0)?,
            name: row.try_get(1)?,
            relkind: relkind.chars().next().unwrap_or('?'),
            comment: row.try_get(3)?,
            owner: owner_schema.zip(owner_name).map(|(s, n)| format!("{s}.{n}")),
            toast: toast.map(|t| format!("pg_toast.{t}")),
        };
        snapshot.relations.entry(relation.entity()).or_insert(relation);
    }

    let columns = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, \
                    pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, \
                    coalesce(pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), '') \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND {NOT_SYSTEM} \
             ORDER BY n.nspname, c.relname, a.attnum"
        ),
        &[],
    )?;
    snapshot.queries += 1;
    for row in columns {
        let schema: String = row.try_get(0)?;
        let table: String = row.try_get(1)?;
        let column = LiveColumn { sql_type: row.try_get(3)?, not_null: row.try_get(4)?, default: row.try_get(5)? };
        snapshot.columns.entry(format!("{schema}.{table}")).or_default().push((row.try_get(2)?, column));
    }
    Ok(snapshot)
}
