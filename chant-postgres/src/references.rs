//! The postgres lexicon's reference catalog, and the attributes that carry its references.
//!
//! [`CATALOG`] is data: a table is contained in its schema, a column in its table, an index in
//! its table and a sequence in its schema; a foreign key is a reference table -> table; a
//! column whose default draws from a sequence (`nextval(...)`) references that sequence.
//!
//! The describe read carries none of those attributes, so [`read_live_attrs`] reads them from
//! `pg_catalog` in [`QUERIES`] queries of one read-only transaction: foreign keys by
//! `pg_constraint` (`confrelid`, the referenced table, named even when it lives in a schema the
//! role has no USAGE on, which is what makes such a key dangling rather than invisible), the
//! sequence a default depends on by `pg_depend` (not by parsing the expression), and the schema
//! and table of every relation and column. [`declared_attrs`] derives the same attributes from
//! the declaration, without I/O: a declared `FOREIGN KEY` constraint is a foreign key to the
//! table its definition names ([`foreign_key`]), a declared default `nextval('s.q'::regclass)` names sequence
//! `s.q`, an unqualified one a sequence in `public` (the schema PostgreSQL prints unqualified
//! under the default `search_path`).

use std::collections::BTreeMap;

use crate::client::GenericClient;
use serde_json::{Map, Value, json};

use super::catalog::NOT_SYSTEM;
use super::declaration::{COLUMN_KIND, PostgresDeclaration, SCHEMA_KIND, TABLE_KIND};
use chant_lexicon::references::{Attrs, Chain, IdentityRule, RefRule, ReferenceCatalog, Relation};

/// The kind of a sequence (a runtime resource of the table owning it).
pub const SEQUENCE_KIND: &str = "sequence";
/// The kind of an index (a runtime resource of its table).
pub const INDEX_KIND: &str = "index";

/// The attribute keys the catalog's rules read.
pub mod attr {
    /// The schema a table or sequence lives in.
    pub const SCHEMA: &str = "schema";
    /// The table a column or an index belongs to.
    pub const TABLE: &str = "table";
    /// A table's foreign keys: `[{name, table, columns}]`.
    pub const FOREIGN_KEYS: &str = "foreign_keys";
    /// The sequence a column's default draws from.
    pub const DEFAULT_SEQUENCE: &str = "default_sequence";
    /// A relation's `oid`, as text.
    pub const OID: &str = "oid";
}

/// The postgres lexicon's reference catalog.
pub const CATALOG: ReferenceCatalog = ReferenceCatalog {
    identities: &[
        IdentityRule { kind: TABLE_KIND, ids: &[attr::OID] },
        IdentityRule { kind: SEQUENCE_KIND, ids: &[attr::OID] },
    ],
    refs: &[
        RefRule {
            from: TABLE_KIND,
            path: attr::SCHEMA,
            target_kind: SCHEMA_KIND,
            relation: Relation::Containment,
            label: "in schema",
            via_attr: Some("relnamespace"),
        },
        RefRule {
            from: TABLE_KIND,
            path: "foreign_keys[].table",
            target_kind: TABLE_KIND,
            relation: Relation::Reference,
            label: "foreign key",
            via_attr: Some("confrelid"),
        },
        RefRule {
            from: COLUMN_KIND,
            path: attr::TABLE,
            target_kind: TABLE_KIND,
            relation: Relation::Containment,
            label: "column of",
            via_attr: Some("attrelid"),
        },
        RefRule {
            from: COLUMN_KIND,
            path: attr::DEFAULT_SEQUENCE,
            target_kind: SEQUENCE_KIND,
            relation: Relation::Reference,
            label: "default nextval",
            via_attr: Some("adbin"),
        },
        RefRule {
            from: INDEX_KIND,
            path: attr::TABLE,
            target_kind: TABLE_KIND,
            relation: Relation::Containment,
            label: "index of",
            via_attr: Some("indrelid"),
        },
        RefRule {
            from: SEQUENCE_KIND,
            path: attr::SCHEMA,
            target_kind: SCHEMA_KIND,
            relation: Relation::Containment,
            label: "in schema",
            via_attr: Some("relnamespace"),
        },
    ],
};

/// The chains of [`CATALOG`] the dependencies follow past depth one: a foreign key (a table a
/// declared table references through one is a dependency, and so is every table that table's
/// own foreign keys reach, however deep).
pub const CHAINS: &[Chain] = &[Chain { from: TABLE_KIND, label: FOREIGN_KEY_LABEL }];

/// The label of the foreign-key rule of [`CATALOG`].
pub const FOREIGN_KEY_LABEL: &str = "foreign key";

/// How many queries [`read_live_attrs`] issues, whatever the size of the database.
pub const QUERIES: usize = 3;

fn object(attrs: &mut Attrs, name: String) -> &mut Map<String, Value> {
    attrs.entry(name).or_default()
}

/// Reads the reference attributes of every relation and column outside the system schemas.
///
/// # Errors
///
/// The first query that fails.
pub fn read_live_attrs(client: &mut impl GenericClient) -> Result<Attrs, crate::client::Error> {
    let mut attrs = Attrs::new();

    let relations = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, c.oid::text, tn.nspname::text, t.relname::text \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_index i ON c.relkind IN ('i', 'I') AND i.indexrelid = c.oid \
             LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid \
             LEFT JOIN pg_catalog.pg_namespace tn ON tn.oid = t.relnamespace \
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'i', 'I') AND {NOT_SYSTEM}"
        ),
        &[],
    )?;
    for row in relations {
        let schema: String = row.try_get(0)?;
        let name: String = row.try_get(1)?;
        let node = object(&mut attrs, format!("{schema}.{name}"));
        node.insert(attr::OID.to_owned(), Value::String(row.try_get(2)?));
        let table_schema: Option<String> = row.try_get(3)?;
        let table: Option<String> = row.try_get(4)?;
        if let Some((ts, t)) = table_schema.zip(table) {
            node.insert(attr::TABLE.to_owned(), Value::String(format!("{ts}.{t}")));
        } else {
            node.insert(attr::SCHEMA.to_owned(), Value::String(schema));
        }
    }

    let foreign_keys = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, con.conname::text, fn.nspname::text, fc.relname::text, \
                    coalesce((SELECT pg_catalog.array_agg(a.attname::text ORDER BY k.ord) \
                              FROM pg_catalog.unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord) \
                              JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum), \
                             '{{}}'::text[]) \
             FROM pg_catalog.pg_constraint con \
             JOIN pg_catalog.pg_class c ON c.oid = con.conrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid \
             JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace \
             WHERE con.contype = 'f' AND {NOT_SYSTEM} \
             ORDER BY n.nspname, c.relname, con.conname"
        ),
        &[],
    )?;
    for row in foreign_keys {
        let table = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        let target = format!("{}.{}", row.try_get::<_, String>(3)?, row.try_get::<_, String>(4)?);
        let columns: Vec<String> = row.try_get(5)?;
        let key = json!({"name": row.try_get::<_, String>(2)?, "table": target, "columns": columns});
        let node = object(&mut attrs, table);
        let list = node.entry(attr::FOREIGN_KEYS).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            items.push(key);
        }
    }

    let columns = client.query(
        &format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, sn.nspname::text, s.relname::text \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum \
             LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass \
                  AND d.objid = ad.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass \
                  AND d.refobjid IN (SELECT oid FROM pg_catalog.pg_class WHERE relkind = 'S') \
             LEFT JOIN pg_catalog.pg_class s ON s.oid = d.refobjid \
             LEFT JOIN pg_catalog.pg_namespace sn ON sn.oid = s.relnamespace \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND {NOT_SYSTEM}"
        ),
        &[],
    )?;
    for row in columns {
        let table = format!("{}.{}", row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
        let name: String = row.try_get(2)?;
        let node = object(&mut attrs, format!("{table}.{name}"));
        node.insert(attr::TABLE.to_owned(), Value::String(table));
        let seq_schema: Option<String> = row.try_get(3)?;
        let seq: Option<String> = row.try_get(4)?;
        if let Some((ss, s)) = seq_schema.zip(seq) {
            node.insert(attr::DEFAULT_SEQUENCE.to_owned(), Value::String(format!("{ss}.{s}")));
        }
    }
    Ok(attrs)
}

/// Returns the reference attributes of the declared entities: each table's schema and foreign
/// keys (its declared `FOREIGN KEY` constraints, in the live read's form), each column's table,
/// and the sequence a `nextval(...)` default names.
pub fn declared_attrs(declaration: &PostgresDeclaration) -> Attrs {
    let mut attrs: Attrs = BTreeMap::new();
    for (entity, table) in declaration.tables() {
        let node = object(&mut attrs, entity.clone());
        node.insert(attr::SCHEMA.to_owned(), Value::String(table.schema.clone()));
        let keys: Vec<Value> = table
            .constraints
            .iter()
            .filter_map(|c| {
                let (columns, target) = foreign_key(&c.definition)?;
                Some(json!({"name": c.name, "table": target, "columns": columns}))
            })
            .collect();
        if !keys.is_empty() {
            node.insert(attr::FOREIGN_KEYS.to_owned(), Value::Array(keys));
        }
        for column in &table.columns {
            let node = object(&mut attrs, format!("{entity}.{}", column.name));
            node.insert(attr::TABLE.to_owned(), Value::String(entity.clone()));
            if let Some(sequence) = column.default.as_deref().and_then(nextval_sequence) {
                node.insert(attr::DEFAULT_SEQUENCE.to_owned(), Value::String(sequence));
            }
        }
    }
    attrs
}

/// Returns the columns and the referenced table (schema-qualified, `public` when it is not, as
/// `pg_get_constraintdef` leaves a table on the default `search_path`) of a definition
/// `FOREIGN KEY (a, b) REFERENCES s.t(x, y) ...`, or `None` for any other definition.
pub fn foreign_key(definition: &str) -> Option<(Vec<String>, String)> {
    let rest = definition.trim().strip_prefix("FOREIGN KEY (")?;
    let (columns, rest) = rest.split_once(')')?;
    let rest = rest.trim_start().strip_prefix("REFERENCES ")?;
    let target = rest.split_once('(').map_or(rest, |(t, _)| t).trim().replace('"', "");
    let columns: Vec<String> = columns.split(',').map(|c| c.trim().replace('"', "")).collect();
    if target.is_empty() || target.contains(' ') || columns.iter().any(String::is_empty) {
        return None;
    }
    let target = if target.contains('.') { target } else { format!("public.{target}") };
    Some((columns, target))
}

/// Returns the sequence a default of the form `nextval('<name>'::regclass)` draws from,
/// schema-qualified (`public` when the name is not), or `None` for any other default.
pub fn nextval_sequence(default: &str) -> Option<String> {
    let rest = default.trim().strip_prefix("nextval('")?;
    let (name, tail) = rest.split_once('\'')?;
    if !(tail.starts_with("::regclass)") || tail.starts_with(')')) {
        return None;
    }
    let name = name.replace('"', "");
    if name.is_empty() {
        return None;
    }
    Some(if name.contains('.') { name } else { format!("public.{name}") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Column, Constraint, Table};
    use chant_lexicon::references::values_at;

    #[test]
    fn a_nextval_default_names_its_sequence_and_nothing_else_does() {
        assert_eq!(nextval_sequence("nextval('app.orders_id_seq'::regclass)").as_deref(), Some("app.orders_id_seq"));
        assert_eq!(nextval_sequence("nextval('orders_id_seq'::regclass)").as_deref(), Some("public.orders_id_seq"));
        assert_eq!(nextval_sequence("nextval('\"App\".\"Seq\"')").as_deref(), Some("App.Seq"));
        assert_eq!(nextval_sequence("'nextval'::text"), None);
        assert_eq!(nextval_sequence("now()"), None);
        assert_eq!(nextval_sequence("nextval(''::regclass)"), None);
        assert_eq!(nextval_sequence("nextval('x'"), None);
    }

    #[test]
    fn declared_attributes_carry_schema_table_and_sequence() {
        let declaration = PostgresDeclaration::new().table(
            Table::new("app", "orders")
                .column(Column::new("id", "bigint").default("nextval('app.orders_id_seq'::regclass)"))
                .column(Column::new("note", "text").default("'x'::text")),
        );
        let attrs = declared_attrs(&declaration);
        assert_eq!(values_at(&attrs["app.orders"], "schema"), ["app"]);
        assert_eq!(values_at(&attrs["app.orders.id"], "table"), ["app.orders"]);
        assert_eq!(values_at(&attrs["app.orders.id"], "default_sequence"), ["app.orders_id_seq"]);
        assert!(values_at(&attrs["app.orders.note"], "default_sequence").is_empty());
    }

    #[test]
    fn the_foreign_key_is_the_one_chain_marked_meaningful() {
        let chained: Vec<&str> = chant_lexicon::references::chained(&CATALOG, CHAINS).map(|r| r.path).collect();
        assert_eq!(chained, ["foreign_keys[].table"]);
    }

    #[test]
    fn a_foreign_key_definition_names_its_columns_and_table() {
        let key = |d: &str| foreign_key(d).map(|(c, t)| (c.join(","), t));
        assert_eq!(
            key("FOREIGN KEY (customer_id) REFERENCES shop.customers(id)"),
            Some(("customer_id".into(), "shop.customers".into()))
        );
        assert_eq!(
            key("FOREIGN KEY (a, b) REFERENCES pair(x, y) ON DELETE CASCADE"),
            Some(("a,b".into(), "public.pair".into()))
        );
        assert_eq!(key("FOREIGN KEY (a) REFERENCES \"Odd\".\"T\"(id)"), Some(("a".into(), "Odd.T".into())));
        assert_eq!(key("PRIMARY KEY (id)"), None);
        assert_eq!(key("CHECK ((id > 0))"), None);
        assert_eq!(key("FOREIGN KEY (a) REFERENCES (id)"), None);
        assert_eq!(key("FOREIGN KEY () REFERENCES t(id)"), None);
    }

    #[test]
    fn declared_foreign_keys_become_the_attribute_the_catalog_reads() {
        let declaration = PostgresDeclaration::new()
            .table(Table::new("shop", "customers").column(Column::new("id", "bigint")))
            .table(
                Table::new("shop", "orders")
                    .column(Column::new("customer_id", "bigint"))
                    .constraint(Constraint::new("orders_pkey", "PRIMARY KEY (customer_id)"))
                    .constraint(Constraint::new(
                        "orders_customer_id_fkey",
                        "FOREIGN KEY (customer_id) REFERENCES shop.customers(id)",
                    )),
            );
        let attrs = declared_attrs(&declaration);
        assert_eq!(values_at(&attrs["shop.orders"], "foreign_keys[].table"), ["shop.customers"]);
        assert_eq!(
            attrs["shop.orders"]["foreign_keys"],
            json!([{"name": "orders_customer_id_fkey", "table": "shop.customers", "columns": ["customer_id"]}])
        );
        assert!(!attrs["shop.customers"].contains_key("foreign_keys"), "no key, no attribute");
    }

    #[test]
    fn every_rule_reads_an_attribute_this_module_writes() {
        let written = [attr::SCHEMA, attr::TABLE, attr::DEFAULT_SEQUENCE, attr::FOREIGN_KEYS];
        for rule in CATALOG.refs {
            let head = rule.path.split(['.', '[']).next().unwrap();
            assert!(written.contains(&head), "{} reads {head}, which nothing writes", rule.path);
            assert!(rule.via_attr.is_some(), "{} names no provider attribute", rule.path);
        }
    }
}
