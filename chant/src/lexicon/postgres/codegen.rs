//! The postgres lexicon's template generator: an [`ExportedTemplate`] as the
//! [`PostgresDeclaration`] a user writes by hand (`Table::new(..).column(Column::new(..)..)`).
//!
//! What today's declaration cannot express is listed, not dropped silently: constraints, indexes,
//! column comments, kept sequences, and tables or columns whose identifiers or types the
//! declaration refuses ([`PostgresDeclaration::validate`] decides, table by table). A default or
//! comment the redactor recognises as a credential is not written: the generated code reads it
//! from a variable named in the helper's doc comment. Pure: no I/O.

use proc_macro2::TokenStream;
use quote::quote;

use super::declaration::{Column, PostgresDeclaration, Table};
use super::export::attr;
use crate::lexicon::export::module::{secret_helper, secret_variable};
use crate::lexicon::export::{ExportError, ExportedResource, ExportedTemplate, Generated, Secret};
use crate::redact::Redactor;

/// How many omitted things the generated function's docs list one by one.
const LISTED: usize = 40;

struct Gen<'a> {
    redactor: &'a Redactor,
    generated: Generated,
}

impl Gen<'_> {
    /// A text value, or the call reading it from a variable when it holds a credential.
    fn value(&mut self, entity: &str, what: &str, text: &str) -> TokenStream {
        if self.redactor.redact(text) == text {
            return quote!(#text);
        }
        // A column's default is the entity's one secret; a comment gets a variable of its own.
        let variable =
            if what == "default" { secret_variable(entity) } else { secret_variable(&format!("{entity}_{what}")) };
        let secret = Secret { entity: entity.to_owned(), what: what.to_owned(), variable };
        let (item, call) = secret_helper(&secret);
        self.generated.helpers.push(item);
        self.generated.secrets.push(secret);
        call
    }

    fn table(&mut self, table: &ExportedResource) -> Option<TokenStream> {
        let (schema, name) = table.name.split_once('.')?;
        // What the declaration can hold, checked by the declaration itself.
        let mut probe = Table::new(schema, name);
        let mut columns = Vec::new();
        for c in table.children.iter().filter(|c| c.kind == "column") {
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
        if let Some(comment) = table.text(attr::COMMENT) {
            probe = probe.comment(comment);
        }
        if let Err(e) = PostgresDeclaration::new().table(probe).validate() {
            self.generated.omitted.push(format!("table {}: {e}", table.name));
            return None;
        }
        let mut chain = quote!(Table::new(#schema, #name));
        for c in columns {
            let entity = format!("{}.{}", table.name, c.name);
            let column = &c.name;
            let sql_type = c.text(attr::TYPE).unwrap_or_default();
            let mut col = quote!(Column::new(#column, #sql_type));
            if c.flag(attr::NOT_NULL) {
                col.extend(quote!(.not_null()));
            }
            if let Some(d) = c.text(attr::DEFAULT) {
                let v = self.value(&entity, "default", d);
                col.extend(quote!(.default(#v)));
            }
            if let Some(comment) = c.text(attr::COMMENT) {
                self.generated.omitted.push(format!("column {entity}: comment {comment:?}"));
            }
            chain.extend(quote!(.column(#col)));
        }
        if let Some(comment) = table.text(attr::COMMENT) {
            let v = self.value(&table.name, "comment", comment);
            chain.extend(quote!(.comment(#v)));
        }
        for child in table.children.iter().filter(|c| c.kind != "column") {
            let what = match (child.kind.as_str(), child.text(attr::CONSTRAINT)) {
                ("constraint", Some(kind)) => format!("{kind} {}", child.name),
                (kind, _) => format!("{kind} {}", child.name),
            };
            let definition = child.text(attr::DEFINITION).map(|d| format!(": {d}")).unwrap_or_default();
            self.generated.omitted.push(format!("table {}: {what}{}", table.name, self.redactor.redact(&definition)));
        }
        Some(chain)
    }
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
    let mut g = Gen { redactor, generated: Generated::new(quote!(PostgresDeclaration), TokenStream::new()) };
    let tables: Vec<&ExportedResource> = template.resources().iter().filter(|r| r.kind == "table").collect();
    let mut body = quote!(PostgresDeclaration::new());
    for schema in template.resources().iter().filter(|r| r.kind == "schema") {
        let implied = tables.iter().any(|t| t.name.split_once('.').is_some_and(|(s, _)| s == schema.name));
        if !implied {
            let name = &schema.name;
            body.extend(quote!(.schema(#name)));
        }
    }
    let mut declared = 0usize;
    for table in &tables {
        if let Some(chain) = g.table(table) {
            body.extend(quote!(.table(#chain)));
            declared += 1;
        }
    }
    let mut uses = vec!["PostgresDeclaration"];
    if declared > 0 {
        uses.extend(["Column", "Table"]);
    }
    uses.sort_unstable();
    let idents: Vec<proc_macro2::Ident> = uses.iter().map(|u| quote::format_ident!("{}", u)).collect();
    g.generated.uses.push(match idents.as_slice() {
        [one] => quote!(use chant::lexicon::postgres::#one;),
        many => quote!(use chant::lexicon::postgres::{#(#many),*};),
    });
    g.generated.body = body;
    let omitted = &g.generated.omitted;
    if !omitted.is_empty() {
        g.generated.docs.push(String::new());
        g.generated.docs.push(format!(
            "Read but not declared ({} item(s)): the postgres declaration cannot express these yet.",
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
    use crate::lexicon::export::{Attr, ExportOwnership, render_module};

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
        let source = render_module("legacy", "chant import --from legacy", &[(&t, &g)]).unwrap();
        assert!(source.contains("use chant::lexicon::postgres::{Column, PostgresDeclaration, Table};"), "{source}");
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
        assert!(source.contains("/// - table app.users: primary key users_pkey: PRIMARY KEY (id)"), "{source}");
        assert!(source.contains("table app.Weird: invalid postgres declaration"), "{source}");
        assert!(!source.contains("Table::new(\"app\", \"Weird\")"), "{source}");
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
        assert!(!g.body.to_string().contains("ghp_"), "{}", g.body);
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
