//! The postgres lexicon's template generator: an [`ExportedTemplate`] as the
//! [`PostgresDeclaration`] a user writes by hand (`Table::new(..).column(Column::new(..)..)`).
//!
//! Each table is written whole: its columns (type, nullability, default, comment), its comment,
//! its constraints (`Constraint::new(name, definition)`, the definition as the deep read compares
//! it) and its plain indexes (`Index::new(name, [columns])`, `.unique()`). What the declaration
//! cannot express is listed, not dropped silently: an index that is not a btree on plain columns
//! (an expression, a predicate, included columns, another method), an index backing a
//! constraint (`--verbatim`), a kept sequence, a constraint or index whose name the declaration
//! refuses, and a table whose identifiers or types it refuses ([`PostgresDeclaration::validate`]
//! decides). A default, comment or definition the redactor recognises as a credential is not
//! written: the generated code reads it from a variable named in the helper's doc comment. Pure:
//! no I/O.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::declaration::{Column, Constraint, Index, PostgresDeclaration, Table};
use super::export::attr;
use chant_lexicon::export::layout::Expr;
use chant_lexicon::export::module::{secret_helper, secret_helper_name, secret_variable};
use chant_lexicon::export::{ExportError, ExportedResource, ExportedTemplate, Generated, Secret};
use chant_lexicon::redact::Redactor;

/// How many omitted things the generated function's docs list one by one.
const LISTED: usize = 40;

struct Gen<'a> {
    redactor: &'a Redactor,
    generated: Generated,
    used_constraint: bool,
    used_index: bool,
    /// Whether each text seen holds no credential.
    clean: HashMap<String, bool>,
}

impl Gen<'_> {
    /// A text value, or the call reading it from a variable when it holds a credential.
    fn value(&mut self, entity: &str, what: &str, text: &str) -> Expr {
        // Schemas repeat their defaults and definitions (`now()`, `PRIMARY KEY (id)`): each
        // distinct text is shown to the redactor once.
        let clean = match self.clean.get(text) {
            Some(clean) => *clean,
            None => {
                let clean = self.redactor.redact(text) == text;
                self.clean.insert(text.to_owned(), clean);
                clean
            }
        };
        if clean {
            return Expr::str(text);
        }
        // A column's default is the entity's one secret; a comment gets a variable of its own.
        let variable =
            if what == "default" { secret_variable(entity) } else { secret_variable(&format!("{entity}_{what}")) };
        let secret = Secret { entity: entity.to_owned(), what: what.to_owned(), variable };
        let (item, _) = secret_helper(&secret);
        let call = Expr::call(secret_helper_name(&secret).to_string(), Vec::new());
        self.generated.helpers.push(item);
        self.generated.secrets.push(secret);
        call
    }

    fn table(&mut self, table: &ExportedResource) -> Option<Expr> {
        let (schema, name) = table.name.split_once('.')?;
        // What the declaration can hold, checked by the declaration itself: the table whole
        // first, then, if it is refused, without its constraints and indexes, each of which
        // is then checked alone (one bad name leaves out that constraint, not the table).
        let mut probe = Table::new(schema, name);
        let mut columns = Vec::new();
        let mut constraints = Vec::new();
        let mut indexes = Vec::new();
        for c in &table.children {
            match c.kind.as_str() {
                "column" => {
                    let mut column = Column::new(c.name.clone(), c.text(attr::TYPE).unwrap_or_default());
                    if c.flag(attr::NOT_NULL) {
                        column = column.not_null();
                    }
                    if let Some(d) = c.text(attr::DEFAULT) {
                        column = column.default(d);
                    }
                    probe = probe.column(column);
                    columns.push(c);
                }
                "constraint" => match c.text(attr::DEFINITION) {
                    Some(definition) => constraints.push((c, Constraint::new(c.name.clone(), definition))),
                    None => self.omit(table, c, "no definition was read"),
                },
                "index" => match plain_index(c) {
                    Ok(index) => indexes.push((c, index)),
                    Err(why) => self.omit(table, c, why),
                },
                _ => self.omit(table, c, "the declaration has no builder for it"),
            }
        }
        if let Some(comment) = table.text(attr::COMMENT) {
            probe = probe.comment(comment);
        }
        let mut whole = probe;
        whole.constraints = constraints.iter().map(|(_, c)| c.clone()).collect();
        whole.indexes = indexes.iter().map(|(_, i)| i.clone()).collect();
        let declaration = PostgresDeclaration::new().table(whole);
        if declaration.validate().is_err() {
            let mut probe = declaration.tables().get(&table.name)?.clone();
            probe.constraints.clear();
            probe.indexes.clear();
            if let Err(e) = PostgresDeclaration::new().table(probe.clone()).validate() {
                self.generated.omitted.push(format!("table {}: {e}", table.name));
                return None;
            }
            let alone = |t: Table| PostgresDeclaration::new().table(t).validate();
            constraints.retain(|(c, constraint)| match alone(probe.clone().constraint(constraint.clone())) {
                Ok(()) => true,
                Err(e) => {
                    self.generated.omitted.push(format!("table {}: constraint {}: {e}", table.name, c.name));
                    false
                }
            });
            indexes.retain(|(c, index)| match alone(probe.clone().index(index.clone())) {
                Ok(()) => true,
                Err(e) => {
                    self.generated.omitted.push(format!("table {}: index {}: {e}", table.name, c.name));
                    false
                }
            });
        }
        let mut chain = Expr::call("Table::new", vec![Expr::str(schema), Expr::str(name)]);
        for c in columns {
            let entity = format!("{}.{}", table.name, c.name);
            let sql_type = c.text(attr::TYPE).unwrap_or_default();
            let mut col = Expr::call("Column::new", vec![Expr::str(&c.name), Expr::str(sql_type)]);
            if c.flag(attr::NOT_NULL) {
                col.push_method("not_null", Vec::new());
            }
            if let Some(d) = c.text(attr::DEFAULT) {
                let v = self.value(&entity, "default", d);
                col.push_method("default", vec![v]);
            }
            if let Some(comment) = c.text(attr::COMMENT) {
                let v = self.value(&entity, "comment", comment);
                col.push_method("comment", vec![v]);
            }
            chain.push_method("column", vec![col]);
        }
        if let Some(comment) = table.text(attr::COMMENT) {
            let v = self.value(&table.name, "comment", comment);
            chain.push_method("comment", vec![v]);
        }
        for (c, constraint) in constraints {
            let v = self.value(&format!("{}.{}", table.name, c.name), "definition", &constraint.definition);
            chain.push_method("constraint", vec![Expr::call("Constraint::new", vec![Expr::str(&constraint.name), v])]);
            self.used_constraint = true;
        }
        for (_, index) in indexes {
            let columns = index.columns.iter().map(Expr::str).collect();
            let mut i = Expr::call("Index::new", vec![Expr::str(&index.name), Expr::Array(columns)]);
            if index.unique {
                i.push_method("unique", Vec::new());
            }
            chain.push_method("index", vec![i]);
            self.used_index = true;
        }
        Some(chain)
    }

    /// Lists a child of `table` the declaration cannot hold, with why and its definition.
    fn omit(&mut self, table: &ExportedResource, child: &ExportedResource, why: &str) {
        let what = match (child.kind.as_str(), child.text(attr::CONSTRAINT)) {
            ("constraint", Some(kind)) => format!("{kind} {}", child.name),
            (kind, _) => format!("{kind} {}", child.name),
        };
        let definition = child.text(attr::DEFINITION).map(|d| format!(": {d}")).unwrap_or_default();
        self.generated.omitted.push(format!(
            "table {}: {what} ({why}){}",
            table.name,
            self.redactor.redact(&definition)
        ));
    }
}

/// The [`Index`] an exported index is, when the declaration's builder makes exactly it: a btree
/// on plain columns in their default order, with no predicate and no included columns, which
/// `CREATE [UNIQUE] INDEX <name> ON <table> (<columns>)` recreates.
fn plain_index(index: &ExportedResource) -> Result<Index, &'static str> {
    if index.flag(attr::BACKS_CONSTRAINT) {
        return Err("it backs a constraint, which makes it");
    }
    let columns = index.names(attr::COLUMNS).unwrap_or_default();
    let definition = index.text(attr::DEFINITION).unwrap_or_default();
    let unique = index.flag(attr::UNIQUE);
    let head = if unique { "CREATE UNIQUE INDEX " } else { "CREATE INDEX " };
    let tail = format!(" USING btree ({})", columns.join(", "));
    if columns.is_empty() || !definition.starts_with(head) || !definition.ends_with(&tail) {
        return Err("not a btree on plain columns, which is all the declaration's Index builds");
    }
    let built = Index::new(index.name.clone(), columns.iter().cloned());
    Ok(if unique { built.unique() } else { built })
}

/// Generates the declaration of `template`.
///
/// # Errors
///
/// [`ExportError::Generate`] when the template is not a postgres export.
pub fn generate(template: &ExportedTemplate, redactor: &Redactor) -> Result<Generated, ExportError> {
    if template.lexicon() != super::COMPONENT {
        return Err(ExportError::Generate {
            lexicon: super::COMPONENT.into(),
            detail: format!("the template is a {} export", template.lexicon()),
        });
    }
    let mut g = Gen {
        redactor,
        generated: Generated::new(quote!(PostgresDeclaration), TokenStream::new()),
        used_constraint: false,
        used_index: false,
        clean: HashMap::new(),
    };
    let tables: Vec<&ExportedResource> = template.resources().iter().filter(|r| r.kind == "table").collect();
    let mut body = Expr::call("PostgresDeclaration::new", Vec::new());
    for schema in template.resources().iter().filter(|r| r.kind == "schema") {
        let implied = tables.iter().any(|t| t.name.split_once('.').is_some_and(|(s, _)| s == schema.name));
        if !implied {
            let name = &schema.name;
            body.push_method("schema", vec![Expr::str(name)]);
        }
    }
    let mut declared = 0usize;
    for table in &tables {
        if let Some(chain) = g.table(table) {
            body.push_method("table", vec![chain]);
            declared += 1;
        }
    }
    let mut uses = vec!["PostgresDeclaration"];
    if declared > 0 {
        uses.extend(["Column", "Table"]);
    }
    if g.used_constraint {
        uses.push("Constraint");
    }
    if g.used_index {
        uses.push("Index");
    }
    uses.sort_unstable();
    let idents: Vec<proc_macro2::Ident> = uses.iter().map(|u| quote::format_ident!("{}", u)).collect();
    g.generated.uses.push(match idents.as_slice() {
        [one] => quote!(use chant::lexicon::postgres::#one;),
        many => quote!(use chant::lexicon::postgres::{#(#many),*};),
    });
    g.generated.chain = Some(body);
    let omitted = &g.generated.omitted;
    if !omitted.is_empty() {
        g.generated.docs.push(String::new());
        g.generated.docs.push(format!(
            "Read but not declared ({} item(s)): the postgres declaration cannot express these.",
            omitted.len()
        ));
        let mut listed: Vec<String> = omitted.iter().take(LISTED).map(|o| format!("- {o}")).collect();
        if omitted.len() > LISTED {
            listed.push(format!("- and {} more (`chant import` listed each on stderr)", omitted.len() - LISTED));
        }
        g.generated.docs.extend(listed);
    }
    Ok(g.generated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lexicon::export::{Attr, ExportOwnership, render_module};

    fn column(name: &str, sql_type: &str, not_null: bool, default: Option<&str>) -> ExportedResource {
        let mut c = ExportedResource::new("column", name, ExportOwnership::Unknown)
            .attr(attr::TYPE, Attr::Text(sql_type.into()))
            .attr(attr::NOT_NULL, Attr::Flag(not_null));
        if let Some(d) = default {
            c = c.attr(attr::DEFAULT, Attr::Text(d.into()));
        }
        c
    }

    fn template() -> ExportedTemplate {
        let mut t =
            ExportedTemplate::new("postgres", "legacy", "postgres://app@127.0.0.1:5432/app", "2026-01-01T00:00:00Z");
        t.push(ExportedResource::new("schema", "empty", ExportOwnership::Foreign));
        t.push(ExportedResource::new("schema", "app", ExportOwnership::Foreign));
        t.push(
            ExportedResource::new("table", "app.users", ExportOwnership::Foreign)
                .attr(attr::COMMENT, Attr::Text("Users".into()))
                .child(column("id", "bigint", true, Some("nextval('app.users_id_seq'::regclass)")))
                .child(column("dsn", "text", false, Some("'postgres://app:hunter2pass@db.internal/app'::text")))
                .child(
                    ExportedResource::new("constraint", "users_pkey", ExportOwnership::Foreign)
                        .attr(attr::CONSTRAINT, Attr::Text("primary key".into()))
                        .attr(attr::DEFINITION, Attr::Text("PRIMARY KEY (id)".into())),
                ),
        );
        t.push(
            ExportedResource::new("table", "app.Weird", ExportOwnership::Foreign)
                .child(column("a", "text", false, None)),
        );
        t
    }

    #[test]
    fn tables_are_written_with_the_builders_and_secrets_are_read_from_variables() {
        let t = template();
        let g = generate(&t, &Redactor::default()).unwrap();
        let source = render_module("legacy", "chant import --from legacy", &[(&t, &g)], &Redactor::default()).unwrap();
        assert!(
            source.contains("use chant::lexicon::postgres::{Column, Constraint, PostgresDeclaration, Table};"),
            "{source}"
        );
        assert!(source.contains(".schema(\"empty\")"), "a schema holding no table is declared: {source}");
        assert!(!source.contains(".schema(\"app\")"), "a table's schema is implied: {source}");
        assert!(source.contains("Table::new(\"app\", \"users\")"), "{source}");
        let flat: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "Column::new(\"id\", \"bigint\") .not_null() .default(\"nextval('app.users_id_seq'::regclass)\")"
            ),
            "{source}"
        );

        assert!(!source.contains("hunter2pass"), "the password is not written: {source}");
        assert!(source.contains("std::env::var(\"CHANT_IMPORT_APP_USERS_DSN\")"), "{source}");
        assert_eq!(g.secrets.len(), 1);
        assert_eq!(g.secrets[0].entity, "app.users.dsn");
        assert!(flat.contains(".constraint(Constraint::new(\"users_pkey\", \"PRIMARY KEY (id)\"))"), "{source}");
        assert!(source.contains("table app.Weird: invalid postgres declaration"), "{source}");
        assert!(!source.contains("Table::new(\"app\", \"Weird\")"), "{source}");
    }

    fn index(name: &str, definition: &str, columns: &[&str], unique: bool) -> ExportedResource {
        ExportedResource::new("index", name, ExportOwnership::Foreign)
            .attr(attr::DEFINITION, Attr::Text(definition.into()))
            .attr(attr::COLUMNS, Attr::Names(columns.iter().map(|c| (*c).to_owned()).collect()))
            .attr(attr::UNIQUE, Attr::Flag(unique))
    }

    fn constraint(name: &str, kind: &str, definition: &str) -> ExportedResource {
        ExportedResource::new("constraint", name, ExportOwnership::Foreign)
            .attr(attr::CONSTRAINT, Attr::Text(kind.into()))
            .attr(attr::DEFINITION, Attr::Text(definition.into()))
    }

    #[test]
    fn constraints_plain_indexes_and_column_comments_are_declared_and_the_rest_listed() {
        let mut t = ExportedTemplate::new("postgres", "e", "a", "now");
        t.push(
            ExportedResource::new("table", "shop.orders", ExportOwnership::Foreign)
                .child(column("id", "integer", true, None).attr(attr::COMMENT, Attr::Text("The key".into())))
                .child(column("customer_id", "bigint", true, None))
                .child(column("email", "text", false, None))
                .child(constraint("orders_pkey", "primary key", "PRIMARY KEY (id)"))
                .child(constraint(
                    "orders_customer_id_fkey",
                    "foreign key",
                    "FOREIGN KEY (customer_id) REFERENCES shop.customers(id)",
                ))
                .child(constraint("Bad Name", "check", "CHECK ((id > 0))"))
                .child(index(
                    "orders_customer",
                    "CREATE INDEX orders_customer ON shop.orders USING btree (customer_id)",
                    &["customer_id"],
                    false,
                ))
                .child(index(
                    "orders_pair",
                    "CREATE UNIQUE INDEX orders_pair ON shop.orders USING btree (customer_id, id)",
                    &["customer_id", "id"],
                    true,
                ))
                .child(index(
                    "orders_lower",
                    "CREATE INDEX orders_lower ON shop.orders USING btree (lower(email))",
                    &[],
                    false,
                ))
                .child(index(
                    "orders_partial",
                    "CREATE INDEX orders_partial ON shop.orders USING btree (email) WHERE (id > 10)",
                    &["email"],
                    false,
                ))
                .child(index(
                    "orders_hash",
                    "CREATE INDEX orders_hash ON shop.orders USING hash (email)",
                    &["email"],
                    false,
                ))
                .child(
                    index(
                        "orders_pkey",
                        "CREATE UNIQUE INDEX orders_pkey ON shop.orders USING btree (id)",
                        &["id"],
                        true,
                    )
                    .attr(attr::BACKS_CONSTRAINT, Attr::Flag(true)),
                ),
        );
        let g = generate(&t, &Redactor::default()).unwrap();
        let source = render_module("e", "chant import --from e", &[(&t, &g)], &Redactor::default()).unwrap();
        // Whitespace and trailing commas aside, so the test holds whatever the line breaks.
        let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>().replace(",)", ")");
        let flat = squeeze(&source);
        assert!(
            source.contains("use chant::lexicon::postgres::{Column, Constraint, Index, PostgresDeclaration, Table};"),
            "{source}"
        );
        for needle in [
            "Column::new(\"id\", \"integer\").not_null().comment(\"The key\")",
            ".constraint(Constraint::new(\"orders_pkey\", \"PRIMARY KEY (id)\"))",
            ".constraint(Constraint::new(\"orders_customer_id_fkey\", \"FOREIGN KEY (customer_id) REFERENCES shop.customers(id)\"))",
            ".index(Index::new(\"orders_customer\", [\"customer_id\"]))",
            ".index(Index::new(\"orders_pair\", [\"customer_id\", \"id\"]).unique())",
        ] {
            assert!(flat.contains(&squeeze(needle)), "{needle}:\n{source}");
        }
        let omitted = g.omitted.join("\n");
        assert!(omitted.contains("table shop.orders: constraint Bad Name: invalid postgres declaration"), "{omitted}");
        for name in ["orders_lower", "orders_partial", "orders_hash"] {
            assert!(omitted.contains(&format!("index {name} (not a btree on plain columns")), "{name}: {omitted}");
        }
        assert!(omitted.contains("index orders_pkey (it backs a constraint"), "{omitted}");
        assert_eq!(g.omitted.len(), 5, "{omitted}");
    }

    #[test]
    fn a_secret_comment_gets_a_variable_of_its_own() {
        let mut t = ExportedTemplate::new("postgres", "e", "a", "now");
        t.push(
            ExportedResource::new("table", "app.keys", ExportOwnership::Foreign)
                .attr(attr::COMMENT, Attr::Text("token ghp_abcdefghijklmnopqrstuvwxyz0123456789".into()))
                .child(column("k", "text", false, Some("'Bearer abcdefghijklmnop1234'::text"))),
        );
        let g = generate(&t, &Redactor::default()).unwrap();
        let vars: Vec<&str> = g.secrets.iter().map(|s| s.variable.as_str()).collect();
        assert_eq!(vars, ["CHANT_IMPORT_APP_KEYS_K", "CHANT_IMPORT_APP_KEYS_COMMENT"]);
        let body = g.chain.as_ref().unwrap().one_line();
        assert!(!body.contains("ghp_"), "{body}");
    }

    /// What the declaration refuses is listed in the module's docs: with its credential
    /// redacted, and a name that holds a bidirectional override or a bare CR escaped, so the
    /// module builds (rustc refuses both in a comment) and reads as it compiles.
    #[test]
    fn free_text_in_the_docs_is_redacted_and_names_are_escaped() {
        let mut t = ExportedTemplate::new("postgres", "e", "a", "now");
        t.push(
            ExportedResource::new("table", "app.settings", ExportOwnership::Foreign)
                .child(column("id", "bigint", true, None))
                .child(column("upstream", "text", false, Some("'postgres://svc:Sup3rSecretPw@db/app;x'::text"))),
        );
        t.push(ExportedResource::new("table", "app.evil\u{202e}txt", ExportOwnership::Foreign).child(column(
            "a\u{2066}b",
            "text",
            false,
            None,
        )));
        t.push(
            ExportedResource::new("table", "app.t", ExportOwnership::Foreign)
                .child(column("id", "bigint", true, None))
                .child(index("bad\rname", "CREATE INDEX \"bad\rname\" ON app.t USING btree (id)", &["id"], false)),
        );
        let g = generate(&t, &Redactor::default()).unwrap();
        let source = render_module("e", "chant import --from e", &[(&t, &g)], &Redactor::default()).unwrap();
        assert!(!source.contains("Sup3rSecretPw"), "the password is written:\n{source}");
        assert!(source.contains("table app.settings: invalid postgres declaration"), "{source}");
        assert!(source.contains("app.evil\\u{202e}txt"), "{source}");
        assert!(source.contains("bad\\u{d}name"), "{source}");
        for c in ['\u{202e}', '\u{2066}', '\r'] {
            assert!(!source.contains(c), "{:?} is written:\n{source}", c);
        }
        chant_lexicon::export::module::check_module(&source).unwrap();
    }

    #[test]
    fn only_postgres_templates_are_generated() {
        let t = ExportedTemplate::new("files", "e", "root", "now");
        assert!(matches!(generate(&t, &Redactor::default()), Err(ExportError::Generate { .. })));
        let empty = ExportedTemplate::new("postgres", "e", "a", "now");
        let g = generate(&empty, &Redactor::default()).unwrap();
        assert_eq!(
            g.uses[0].to_string(),
            quote!(
                use chant::lexicon::postgres::PostgresDeclaration;
            )
            .to_string()
        );
    }
}
