//! What an env declares in PostgreSQL: schemas, tables with their columns (name, type,
//! nullability, default) and comments, and entities of kinds the lexicon has no reader for.
//!
//! Each declared thing becomes one [`DeclaredEntity`]: a schema `app` (kind `schema`), a table
//! `app.users` (kind `table`, properties `kind` and `comment`), a column `app.users.email` (kind
//! `column`, properties `type`, `not_null` and `default`), and a materialized view `app.stats`
//! (kind `materialized view`, which the lexicon reports `unsupported-kind`). The schema of every
//! declared table is declared implicitly. Types are compared in the form PostgreSQL's
//! `format_type` prints them, so common aliases are normalised ([`normalize_type`]: `varchar(20)`
//! is `character varying(20)`, `int8` is `bigint`); defaults are compared as `pg_get_expr`
//! prints them, so declare them in that form (`'active'::text`, `0`, `now()`).

use std::collections::{BTreeMap, BTreeSet};

use super::PostgresError;
use chant_lexicon::observe::DeclaredEntity;

/// The kind of a declared schema.
pub const SCHEMA_KIND: &str = "schema";
/// The kind of a declared table (tables and partitioned tables).
pub const TABLE_KIND: &str = "table";
/// The kind of a declared column.
pub const COLUMN_KIND: &str = "column";
/// The kind of a declared materialized view, which the lexicon cannot read.
pub const MATERIALIZED_VIEW_KIND: &str = "materialized view";

/// The property keys the change set compares.
pub mod property {
    /// A table's relation kind (`table`, `view`, `materialized view`, `foreign table`).
    pub const KIND: &str = "kind";
    /// A table's comment, without chant's marker.
    pub const COMMENT: &str = "comment";
    /// A column's type, as `format_type` prints it.
    pub const TYPE: &str = "type";
    /// A column's nullability: `true` when `NOT NULL`.
    pub const NOT_NULL: &str = "not_null";
    /// A column's default expression, as `pg_get_expr` prints it; empty when none.
    pub const DEFAULT: &str = "default";
}

/// The longest identifier PostgreSQL keeps (NAMEDATALEN - 1).
const MAX_IDENTIFIER: usize = 63;

/// One declared column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its type, normalised ([`normalize_type`]).
    pub sql_type: String,
    /// Whether it is `NOT NULL`.
    pub not_null: bool,
    /// Its default expression, if any.
    pub default: Option<String>,
    /// Its comment, when declared (compared by the deep read; an undeclared comment is unclaimed).
    pub comment: Option<String>,
}

impl Column {
    /// Creates a nullable column with no default.
    pub fn new(name: impl Into<String>, sql_type: impl AsRef<str>) -> Self {
        Column {
            name: name.into(),
            sql_type: normalize_type(sql_type.as_ref()),
            not_null: false,
            default: None,
            comment: None,
        }
    }

    /// Makes the column `NOT NULL`.
    #[must_use]
    pub fn not_null(mut self) -> Self {
        self.not_null = true;
        self
    }

    /// Sets the column's default, written as `pg_get_expr` prints it.
    #[must_use]
    pub fn default(mut self, expression: impl Into<String>) -> Self {
        self.default = Some(expression.into());
        self
    }

    /// Declares the column's comment.
    #[must_use]
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }
}

/// One declared constraint of a table: its name and its definition as
/// `pg_get_constraintdef` prints it (`PRIMARY KEY (id)`, `UNIQUE (email)`,
/// `FOREIGN KEY (user_id) REFERENCES app.users(id)`, `CHECK ((id > 0))`). A missing or different
/// one is drift, which apply reports and does not make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    /// Its name.
    pub name: String,
    /// Its definition.
    pub definition: String,
}

impl Constraint {
    /// Creates a declared constraint.
    pub fn new(name: impl Into<String>, definition: impl Into<String>) -> Self {
        Constraint { name: name.into(), definition: definition.into() }
    }
}

/// One declared index of a table (not one backing a constraint): a missing one is drift, which
/// apply creates; an undeclared one is unclaimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// Its name.
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<String>,
    /// Whether it is unique.
    pub unique: bool,
}

impl Index {
    /// Creates a non-unique index on `columns`.
    pub fn new<S: Into<String>>(name: impl Into<String>, columns: impl IntoIterator<Item = S>) -> Self {
        Index { name: name.into(), columns: columns.into_iter().map(Into::into).collect(), unique: false }
    }

    /// Makes the index unique.
    #[must_use]
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
}

/// One declared table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<Column>,
    /// Its comment (chant appends its marker after it).
    pub comment: String,
    /// Its declared constraints (compared by the deep read).
    pub constraints: Vec<Constraint>,
    /// Its declared indexes (compared by the deep read).
    pub indexes: Vec<Index>,
}

impl Table {
    /// Creates a table with no columns and no comment.
    pub fn new(schema: impl Into<String>, name: impl Into<String>) -> Self {
        Table {
            schema: schema.into(),
            name: name.into(),
            columns: Vec::new(),
            comment: String::new(),
            constraints: Vec::new(),
            indexes: Vec::new(),
        }
    }

    /// Adds a column.
    #[must_use]
    pub fn column(mut self, column: Column) -> Self {
        self.columns.push(column);
        self
    }

    /// Sets the table's comment.
    #[must_use]
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = comment.into();
        self
    }

    /// Declares a constraint.
    #[must_use]
    pub fn constraint(mut self, constraint: Constraint) -> Self {
        self.constraints.push(constraint);
        self
    }

    /// Declares an index.
    #[must_use]
    pub fn index(mut self, index: Index) -> Self {
        self.indexes.push(index);
        self
    }

    /// Returns the table's entity name (`schema.table`).
    pub fn entity(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// Returns the declared column named `name`.
    pub fn find_column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// Everything an env declares in one PostgreSQL database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostgresDeclaration {
    schemas: BTreeSet<String>,
    tables: BTreeMap<String, Table>,
    unsupported: BTreeMap<String, String>,
}

impl PostgresDeclaration {
    /// Creates an empty declaration.
    pub fn new() -> Self {
        PostgresDeclaration::default()
    }

    /// Declares a schema (the schema of every declared table is declared implicitly).
    #[must_use]
    pub fn schema(mut self, name: impl Into<String>) -> Self {
        self.schemas.insert(name.into());
        self
    }

    /// Declares a table; a second declaration of the same `schema.table` replaces the first.
    #[must_use]
    pub fn table(mut self, table: Table) -> Self {
        self.tables.insert(table.entity(), table);
        self
    }

    /// Declares a materialized view. The lexicon has no reader (or writer) for that kind, so it
    /// is reported `unsupported-kind`, never `create`.
    #[must_use]
    pub fn materialized_view(mut self, schema: impl Into<String>, name: impl Into<String>) -> Self {
        self.unsupported.insert(format!("{}.{}", schema.into(), name.into()), MATERIALIZED_VIEW_KIND.to_owned());
        self
    }

    /// Returns the declared schemas, explicit and implicit, sorted.
    pub fn schemas(&self) -> BTreeSet<String> {
        let mut all = self.schemas.clone();
        all.extend(self.tables.values().map(|t| t.schema.clone()));
        all
    }

    /// Returns the declared tables, by entity name.
    pub fn tables(&self) -> &BTreeMap<String, Table> {
        &self.tables
    }

    /// Returns the declared entities of unsupported kinds: name -> kind.
    pub fn unsupported(&self) -> &BTreeMap<String, String> {
        &self.unsupported
    }

    /// Returns true when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty() && self.tables.is_empty() && self.unsupported.is_empty()
    }

    /// Checks every identifier, type and default.
    ///
    /// # Errors
    ///
    /// [`PostgresError::InvalidDeclaration`] naming the entity at fault.
    pub fn validate(&self) -> Result<(), PostgresError> {
        let invalid =
            |entity: &str, reason: String| PostgresError::InvalidDeclaration { entity: entity.to_owned(), reason };
        for schema in self.schemas() {
            check_identifier(&schema).map_err(|r| invalid(&schema, r.to_string()))?;
        }
        for name in self.unsupported.keys() {
            for part in name.split('.') {
                check_identifier(part).map_err(|r| invalid(name, r.to_string()))?;
            }
        }
        for (entity, table) in &self.tables {
            check_identifier(&table.name).map_err(|r| invalid(entity, r.to_string()))?;
            if table.columns.is_empty() {
                return Err(invalid(entity, "a table needs at least one column".into()));
            }
            // A few columns are checked for a repeat against the ones before; many, against a
            // set. The column's entity name is written only for an error.
            let mut seen = BTreeSet::new();
            let few = table.columns.len() <= 32;
            for (i, column) in table.columns.iter().enumerate() {
                let name = || format!("{entity}.{}", column.name);
                check_identifier(&column.name).map_err(|r| invalid(&name(), r.to_string()))?;
                let repeated = if few {
                    table.columns[..i].iter().any(|c| c.name == column.name)
                } else {
                    !seen.insert(column.name.as_str())
                };
                if repeated {
                    return Err(invalid(&name(), "the column is declared twice".into()));
                }
                check_type(&column.sql_type).map_err(|r| invalid(&name(), r.to_string()))?;
                if let Some(default) = &column.default
                    && (default.trim().is_empty() || default.contains(';'))
                {
                    return Err(invalid(
                        &name(),
                        format!("invalid default {default:?}: a single non-empty expression"),
                    ));
                }
            }
            for constraint in &table.constraints {
                let name = format!("{entity} constraint {}", constraint.name);
                check_identifier(&constraint.name).map_err(|r| invalid(&name, r.to_string()))?;
                if constraint.definition.trim().is_empty() || constraint.definition.contains(';') {
                    return Err(invalid(
                        &name,
                        "a definition is one non-empty expression, as pg_get_constraintdef prints it".into(),
                    ));
                }
            }
            for index in &table.indexes {
                let name = format!("{entity} index {}", index.name);
                check_identifier(&index.name).map_err(|r| invalid(&name, r.to_string()))?;
                if index.columns.is_empty() {
                    return Err(invalid(&name, "an index needs at least one column".into()));
                }
                for column in &index.columns {
                    check_identifier(column).map_err(|r| invalid(&name, r.to_string()))?;
                }
            }
            if table.comment.contains("[chant ") {
                return Err(invalid(entity, "a declared comment cannot contain chant's marker `[chant `".into()));
            }
        }
        for name in self.unsupported.keys() {
            if self.tables.contains_key(name) {
                return Err(invalid(name, "declared both as a table and as a materialized view".into()));
            }
        }
        Ok(())
    }

    /// Returns the declared entities: schemas, tables, their columns, and unsupported kinds, in
    /// name order: the schemas, tables and unsupported entities merged by name, each table
    /// followed by its columns by name. The identifiers of a declaration that
    /// [validates](Self::validate) sort after the `.` that joins them, so a table's columns sort
    /// before any name after the table's, and a change set takes the list as it is instead of
    /// sorting it.
    pub fn entities(&self) -> Vec<DeclaredEntity> {
        let columns: usize = self.tables.values().map(|t| t.columns.len()).sum();
        let mut out = Vec::with_capacity(self.schemas.len() + self.tables.len() * 2 + columns + self.unsupported.len());
        let mut schemas = self.schemas().into_iter().peekable();
        let mut tables = self.tables.iter().peekable();
        let mut unsupported = self.unsupported.iter().peekable();
        loop {
            // The source whose next name is the smallest (of equal names, the first source).
            let heads = [
                schemas.peek().map(String::as_str),
                tables.peek().map(|(name, _)| name.as_str()),
                unsupported.peek().map(|(name, _)| name.as_str()),
            ];
            let Some((_, source)) = heads.into_iter().enumerate().filter_map(|(i, head)| Some((head?, i))).min() else {
                break;
            };
            match source {
                0 => out.extend(schemas.next().map(|schema| DeclaredEntity::new(schema).kind(SCHEMA_KIND))),
                1 => {
                    if let Some((entity, table)) = tables.next() {
                        table_entities(entity, table, &mut out);
                    }
                }
                _ => out.extend(unsupported.next().map(unsupported_entity)),
            }
        }
        out
    }
}

/// Pushes the entity of the declared table `entity` and those of its columns, by name.
fn table_entities(entity: &str, table: &Table, out: &mut Vec<DeclaredEntity>) {
    out.push(
        DeclaredEntity::new(entity)
            .kind(TABLE_KIND)
            .property(property::KIND, TABLE_KIND)
            .property(property::COMMENT, table.comment.clone()),
    );
    let mut columns: Vec<&Column> = table.columns.iter().collect();
    columns.sort_by(|a, b| a.name.cmp(&b.name));
    for column in columns {
        let mut name = String::with_capacity(entity.len() + 1 + column.name.len());
        name.push_str(entity);
        name.push('.');
        name.push_str(&column.name);
        out.push(
            DeclaredEntity::new(name)
                .kind(COLUMN_KIND)
                .property(property::TYPE, column.sql_type.clone())
                .property(property::NOT_NULL, column.not_null.to_string())
                .property(property::DEFAULT, column.default.clone().unwrap_or_default()),
        );
    }
}

/// The entity of a declared entity of an unsupported kind (`name`, `kind`).
fn unsupported_entity((name, kind): (&String, &String)) -> DeclaredEntity {
    DeclaredEntity::new(name.clone()).kind(kind.clone())
}

/// Why a declared identifier or type is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Refusal {
    /// Not `[a-z_][a-z0-9_]*`.
    #[error("invalid identifier {0:?}: use [a-z_][a-z0-9_]*")]
    Identifier(String),
    /// Past PostgreSQL's identifier length.
    #[error("identifier {0:?} is longer than {MAX_IDENTIFIER} bytes")]
    TooLong(String),
    /// Not a type name chant can compare.
    #[error("invalid type {0:?}")]
    Type(String),
    /// A pseudo-type PostgreSQL does not keep.
    #[error(
        "{0} is not a type PostgreSQL keeps (it becomes an integer with a sequence default); declare the integer type and its default"
    )]
    Serial(String),
}

/// Checks an identifier: `[a-z_][a-z0-9_]*`, at most 63 bytes, so it never needs case folding.
fn check_identifier(name: &str) -> Result<(), Refusal> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    if !first_ok || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        return Err(Refusal::Identifier(name.to_owned()));
    }
    if name.len() > MAX_IDENTIFIER {
        return Err(Refusal::TooLong(name.to_owned()));
    }
    Ok(())
}

fn check_type(sql_type: &str) -> Result<(), Refusal> {
    if sql_type.is_empty()
        || !sql_type.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || " (),_[]".contains(c))
    {
        return Err(Refusal::Type(sql_type.to_owned()));
    }
    if matches!(sql_type, "serial" | "bigserial" | "smallserial" | "serial4" | "serial8" | "serial2") {
        return Err(Refusal::Serial(sql_type.to_owned()));
    }
    Ok(())
}

/// Returns a type as PostgreSQL's `format_type` prints it, for the common aliases
/// (`varchar(20)` -> `character varying(20)`, `int`/`int4` -> `integer`, `int8` -> `bigint`,
/// `bool` -> `boolean`, `timestamptz` -> `timestamp with time zone`, `decimal` -> `numeric`, ...).
/// Unknown types are lowercased with their whitespace collapsed.
pub fn normalize_type(sql_type: &str) -> String {
    let lower = sql_type.trim().to_ascii_lowercase();
    let collapsed = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    let (body, array) = match collapsed.strip_suffix("[]") {
        Some(b) => (b.trim_end().to_owned(), "[]"),
        None => (collapsed.clone(), ""),
    };
    let (base, args) = match body.find('(') {
        Some(i) if body.ends_with(')') => {
            let args: String = body[i + 1..body.len() - 1].chars().filter(|c| !c.is_whitespace()).collect();
            (body[..i].trim_end().to_owned(), Some(args))
        }
        _ => (body.clone(), None),
    };
    let base = match base.as_str() {
        "int" | "int4" | "integer" => "integer",
        "int8" | "bigint" => "bigint",
        "int2" | "smallint" => "smallint",
        "bool" | "boolean" => "boolean",
        "varchar" | "character varying" => "character varying",
        "char" | "character" | "bpchar" => "character",
        "float8" | "double precision" | "float" => "double precision",
        "float4" | "real" => "real",
        "decimal" | "numeric" => "numeric",
        "timestamptz" | "timestamp with time zone" => "timestamp with time zone",
        "timestamp" | "timestamp without time zone" => "timestamp without time zone",
        "timetz" | "time with time zone" => "time with time zone",
        "time" | "time without time zone" => "time without time zone",
        other => other,
    }
    .to_owned();
    let args = match (base.as_str(), args) {
        ("numeric", Some(a)) if !a.contains(',') => Some(format!("{a},0")),
        ("character", None) if array.is_empty() => Some("1".to_owned()),
        (_, a) => a,
    };
    let typed = match args {
        Some(a) => match base.split_once(" with") {
            // `timestamp(3) with time zone`: the precision sits after the first word.
            Some((head, tail)) if base.starts_with("time") => format!("{head}({a}) with{tail}"),
            _ => format!("{base}({a})"),
        },
        None => base,
    };
    format!("{typed}{array}")
}

/// Returns true when changing a column from `live` to `declared` (both normalised) cannot lose
/// data: a longer or unbounded `character varying`, `text` from `character varying`, a wider
/// integer, `double precision` from `real`, a wider `numeric` of the same scale, or an unbounded
/// `numeric` from an integer.
pub fn is_widening(live: &str, declared: &str) -> bool {
    if live == declared {
        return false;
    }
    let varchar_len = |t: &str| -> Option<Option<u32>> {
        if t == "character varying" {
            Some(None)
        } else {
            t.strip_prefix("character varying(")
                .and_then(|r| r.strip_suffix(')'))
                .and_then(|n| n.parse().ok())
                .map(Some)
        }
    };
    let numeric = |t: &str| -> Option<Option<(u32, u32)>> {
        if t == "numeric" {
            return Some(None);
        }
        let inner = t.strip_prefix("numeric(")?.strip_suffix(')')?;
        let (p, s) = inner.split_once(',')?;
        Some(Some((p.parse().ok()?, s.parse().ok()?)))
    };
    let int_rank = |t: &str| match t {
        "smallint" => Some(1),
        "integer" => Some(2),
        "bigint" => Some(3),
        _ => None,
    };
    if let Some(from) = varchar_len(live) {
        if declared == "text" {
            return true;
        }
        if let Some(to) = varchar_len(declared) {
            return match (from, to) {
                (_, None) => true,
                (Some(a), Some(b)) => b > a,
                (None, Some(_)) => false,
            };
        }
        return false;
    }
    if let (Some(a), Some(b)) = (int_rank(live), int_rank(declared)) {
        return b > a;
    }
    if int_rank(live).is_some() && declared == "numeric" {
        return true;
    }
    if live == "real" && declared == "double precision" {
        return true;
    }
    if let (Some(from), Some(to)) = (numeric(live), numeric(declared)) {
        return match (from, to) {
            (_, None) => true,
            (Some((p1, s1)), Some((p2, s2))) => s1 == s2 && p2 > p1,
            (None, Some(_)) => false,
        };
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_normalise_to_format_type() {
        for (given, want) in [
            ("varchar(20)", "character varying(20)"),
            ("VARCHAR ( 20 )", "character varying(20)"),
            ("int", "integer"),
            ("int8", "bigint"),
            ("bool", "boolean"),
            ("text", "text"),
            ("timestamptz", "timestamp with time zone"),
            ("timestamp(3) with time zone", "timestamp(3) with time zone"),
            ("decimal(10,2)", "numeric(10,2)"),
            ("numeric(10)", "numeric(10,0)"),
            ("char", "character(1)"),
            ("text[]", "text[]"),
            ("jsonb", "jsonb"),
        ] {
            assert_eq!(normalize_type(given), want, "{given}");
        }
    }

    #[test]
    fn widening_is_only_what_cannot_lose_data() {
        assert!(is_widening("character varying(10)", "character varying(20)"));
        assert!(is_widening("character varying(10)", "text"));
        assert!(is_widening("character varying(10)", "character varying"));
        assert!(!is_widening("character varying(20)", "character varying(10)"));
        assert!(!is_widening("text", "character varying(10)"));
        assert!(is_widening("integer", "bigint"));
        assert!(!is_widening("bigint", "integer"));
        assert!(is_widening("real", "double precision"));
        assert!(is_widening("numeric(5,2)", "numeric(10,2)"));
        assert!(!is_widening("numeric(5,2)", "numeric(10,3)"));
        assert!(!is_widening("text", "integer"));
        assert!(!is_widening("text", "text"));
    }

    #[test]
    fn a_column_declared_twice_is_refused_by_name_among_few_columns_or_many() {
        for columns in [2, 3, 33, 40] {
            let table = (0..columns).fold(Table::new("app", "t"), |t, i| t.column(Column::new(format!("c{i}"), "int")));
            PostgresDeclaration::new().table(table.clone()).validate().unwrap();
            let twice = PostgresDeclaration::new().table(table.column(Column::new("c1", "text")));
            assert_eq!(
                twice.validate().unwrap_err().to_string(),
                "invalid postgres declaration for app.t.c1: the column is declared twice",
                "{columns} columns"
            );
        }
        let bad = PostgresDeclaration::new().table(
            Table::new("app", "t").column(Column::new("id", "int")).column(Column::new("n", "int").default(" ")),
        );
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .starts_with("invalid postgres declaration for app.t.n: invalid default")
        );
    }

    #[test]
    fn entities_and_validation() {
        let d = PostgresDeclaration::new()
            .schema("extra")
            .table(
                Table::new("app", "users")
                    .column(Column::new("id", "int8").not_null())
                    .column(Column::new("email", "varchar(20)").default("''::character varying"))
                    .comment("Users"),
            )
            .materialized_view("app", "stats");
        d.validate().unwrap();
        let names: Vec<String> = d.entities().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["app", "app.stats", "app.users", "app.users.email", "app.users.id", "extra"]);
        assert!(names.is_sorted(), "a valid declaration's entities come in name order");
        // Names that are prefixes of others, across schemas, tables, columns and views.
        let tricky = ["a_b", "a", "a0"].into_iter().fold(PostgresDeclaration::new().schema("b"), |d, schema| {
            ["t_x", "t", "t2", "t_"].into_iter().fold(d.materialized_view(schema, "t1"), |d, table| {
                d.table(
                    Table::new(schema, table)
                        .column(Column::new("x_", "int"))
                        .column(Column::new("x", "int"))
                        .column(Column::new("a", "int")),
                )
            })
        });
        tricky.validate().unwrap();
        let names: Vec<String> = tricky.entities().into_iter().map(|e| e.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(names.len(), 4 + 3 * (1 + 4 * 4));
        // A view in a schema with no table and no schema of its own still comes in its place.
        let lone = PostgresDeclaration::new()
            .materialized_view("m", "v")
            .table(Table::new("z", "t").column(Column::new("a", "int")));
        let names: Vec<String> = lone.entities().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["m.v", "z", "z.t", "z.t.a"]);
        let email = d.entities().into_iter().find(|e| e.name == "app.users.email").unwrap();
        assert_eq!(email.properties.get(property::TYPE).unwrap(), "character varying(20)");
        assert_eq!(email.properties.get(property::NOT_NULL).unwrap(), "false");

        let bad = PostgresDeclaration::new().table(Table::new("App", "t").column(Column::new("a", "text")));
        assert!(bad.validate().unwrap_err().to_string().contains("\"App\""));
        let bad = PostgresDeclaration::new().table(Table::new("a", "t"));
        assert!(bad.validate().unwrap_err().to_string().contains("at least one column"));
        let bad = PostgresDeclaration::new().table(Table::new("a", "t").column(Column::new("id", "serial")));
        assert!(bad.validate().unwrap_err().to_string().contains("serial"));
        let bad = PostgresDeclaration::new().table(Table::new("a", "t").column(Column::new("id", "text; drop")));
        assert!(bad.validate().is_err());
    }
}
