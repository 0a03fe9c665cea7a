//! The declaration module `import` writes: the lexicons' generated parts joined into one Rust
//! file, built as a `syn` tree and printed by `prettyplease` (rustfmt's layout), with a header
//! saying where and when it was read.
//!
//! A lexicon's template generator returns a [`Generated`] part: the expression building its
//! declaration with the builders a user writes by hand, the `use` lines it needs, doc lines for
//! its function, helper items, the secrets it left out ([`Secret`]: the generated code reads each
//! from a variable named in a doc comment) and what the declaration cannot express. Pure: no I/O.
//!
//! The module declares `pub fn <env>() -> EnvDeclaration` joining one function per lexicon, and
//! registers it under the env's name, so adding `mod <env>;` to a project declares the env.
//!
//! Every free text the module carries (the header, a part's docs, what was left out, the names in
//! them) is read from outside chant, so each doc line passes through the [`Redactor`] and then
//! [`comment_text`], which shows every control character and every character that reorders or
//! hides text as its escape (`\u{202e}`); string literals are escaped by `proc_macro2`. The
//! printed module is then held to [`check_module`]: it parses, and it holds no such character
//! anywhere, so what is written builds and reads as it compiles.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::layout::Expr;
use super::{ExportError, ExportedTemplate};
use crate::redact::Redactor;

/// A value left out of the generated source because the redactor recognised a credential in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The entity it belongs to (`app.settings.dsn`, `conf/db.env`).
    pub entity: String,
    /// What it was (`default`, `content`).
    pub what: String,
    /// The variable the generated code reads it from.
    pub variable: String,
}

/// One lexicon's part of the generated module.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The declaration type the part's function returns (`PostgresDeclaration`).
    pub declaration_type: TokenStream,
    /// The `use` items the part needs.
    pub uses: Vec<TokenStream>,
    /// The expression building the declaration, as tokens (printed by prettyplease).
    pub body: TokenStream,
    /// The expression building the declaration as a builder chain, printed straight in
    /// rustfmt's layout ([`Expr`]) instead of `body`: what a generator of thousands of calls
    /// writes, as the token route costs more than the read.
    pub chain: Option<Expr>,
    /// Doc lines for the part's function.
    pub docs: Vec<String>,
    /// Helper items (the functions reading secrets from their variables).
    pub helpers: Vec<TokenStream>,
    /// The secrets left out.
    pub secrets: Vec<Secret>,
    /// What was read but cannot be declared with today's builders, one line each.
    pub omitted: Vec<String>,
}

impl Generated {
    /// Creates a part returning `declaration_type`, built by `body`.
    pub fn new(declaration_type: TokenStream, body: TokenStream) -> Self {
        Generated {
            declaration_type,
            uses: Vec::new(),
            body,
            chain: None,
            docs: Vec::new(),
            helpers: Vec::new(),
            secrets: Vec::new(),
            omitted: Vec::new(),
        }
    }
}

/// Returns the Rust identifier for `name` (`prod-db` -> `prod_db`), prefixed when it would not
/// be one (a keyword, a leading digit).
pub fn ident_for(prefix: &str, name: &str) -> proc_macro2::Ident {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || syn::parse_str::<syn::Ident>(&s).is_err() {
        s = format!("{prefix}_{s}");
    }
    format_ident!("{}", s)
}

/// Returns the variable a secret of `entity` is read from: `CHANT_IMPORT_` and the entity's name
/// in upper snake case (`app.settings.dsn` -> `CHANT_IMPORT_APP_SETTINGS_DSN`).
pub fn secret_variable(entity: &str) -> String {
    let body: String =
        entity.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("CHANT_IMPORT_{body}")
}

/// Returns the name of the helper function [`secret_helper`] writes for `secret`.
pub fn secret_helper_name(secret: &Secret) -> proc_macro2::Ident {
    ident_for("secret", &format!("{}_{}", secret.entity, secret.what))
}

/// Returns a helper function reading a secret from its variable, documented with the variable's
/// name, and the call to put where the value would have been.
pub fn secret_helper(secret: &Secret) -> (TokenStream, TokenStream) {
    let name = secret_helper_name(secret);
    let var = &secret.variable;
    let doc1 = comment_text(&format!(
        " The {} of `{}` held a credential, so it is not written here: it is read from the variable `{var}`.",
        secret.what, secret.entity
    ));
    let doc2 = " Set it before observing or applying this env.".to_owned();
    let item = quote! {
        #[doc = #doc1]
        #[doc = #doc2]
        fn #name() -> String {
            std::env::var(#var).unwrap_or_default()
        }
    };
    (item, quote!(#name()))
}

/// Returns true for a character a module must not carry as itself: a control character other
/// than the line feed (rustc refuses a bare CR in a comment or a literal) or an invisible format
/// character that reorders or hides text (U+061C, U+200B-U+200F, U+202A-U+202E, U+2060-U+2069,
/// U+FEFF; rustc refuses the bidirectional ones, and the others hide what the code says). The
/// same class as the terminal filter of the runtime (`terminal::is_unsafe`), which sits above
/// this crate.
pub fn is_unsafe_in_source(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Returns `text` for a comment: every [unsafe](is_unsafe_in_source) character, and the line
/// feed (a doc line is one line), shown as its Rust escape (`\u{202e}`), so a name read from a
/// database or a disk reads in the module as it is, and the module builds.
pub fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || is_unsafe_in_source(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Holds printed module source to what rustc accepts and a reader can trust: it parses as a Rust
/// file, and carries no [unsafe](is_unsafe_in_source) character, in a comment, a literal or
/// anywhere else.
///
/// # Errors
///
/// [`ExportError::Unbuildable`] naming the line and the character, or the parse error.
pub fn check_module(source: &str) -> Result<(), ExportError> {
    for (n, line) in source.split('\n').enumerate() {
        if let Some(c) = line.chars().find(|c| is_unsafe_in_source(*c)) {
            return Err(ExportError::Unbuildable {
                detail: format!("line {} holds {}, which a module must not carry unescaped", n + 1, c.escape_unicode()),
            });
        }
    }
    syn::parse_file(source).map_err(|e| ExportError::Unbuildable { detail: format!("not valid Rust: {e}") })?;
    Ok(())
}

/// Renders the module declaring `env` from each lexicon's template and generated part, read by
/// `command` (`chant import --from legacy`). Every doc line is redacted by `redactor` and passed
/// through [`comment_text`]; the result is held to [`check_module`].
///
/// # Errors
///
/// [`ExportError::Generate`] when a part does not form valid Rust (a generator's bug);
/// [`ExportError::Unbuildable`] when the printed module would not build.
pub fn render_module(
    env: &str,
    command: &str,
    parts: &[(&ExportedTemplate, &Generated)],
    redactor: &Redactor,
) -> Result<String, ExportError> {
    let doc = |line: &str| comment_text(&redactor.redact(line));
    let env_fn = ident_for("env", env);
    let read_at = parts.iter().map(|(t, _)| t.read_at()).max().unwrap_or_default();
    let mut header = vec![format!(" The `{env}` env, as `{command}` read it at {read_at}:"), String::new()];
    for (t, _) in parts {
        header.push(format!(" - {} from `{}`", t.lexicon(), t.source()));
    }
    header.push(String::new());
    header.push(format!(
        " Generated by chant with the builders a declaration is written with; edit it freely, and add `mod {env_fn};`"
    ));
    header.push(format!(
        " to the crate to declare the env (`lifecycle diff {env} --live` then compares it with the live estate)."
    ));
    let header: Vec<String> = header.iter().map(|l| doc(l)).collect();
    let header = header.iter().map(|l| quote!(#![doc = #l]));

    let mut uses: Vec<String> = Vec::new();
    let mut seen_use = std::collections::BTreeSet::new();
    for (_, g) in parts {
        for u in &g.uses {
            let text = u.to_string();
            if seen_use.insert(text) {
                uses.push(u.to_string());
            }
        }
    }
    // rustfmt's order: a lexicon's path (`chant_files::X`) before the brace group.
    uses.sort();
    let uses: Vec<TokenStream> = uses.iter().filter_map(|u| u.parse().ok()).collect();
    let part_fns: Vec<proc_macro2::Ident> =
        parts.iter().map(|(t, _)| ident_for("lexicon", &format!("{env}_{}", t.lexicon()))).collect();
    let withs = part_fns.iter().map(|f| quote!(.with(#f())));
    let env_doc = doc(&format!(" What the `{env}` env contains, as read from the live estate."));
    let functions = parts.iter().zip(&part_fns).map(|((t, g), f)| {
        let first = format!(" The {} part of `{env}`, read from `{}`.", t.lexicon(), t.source());
        let docs = std::iter::once(first).chain(g.docs.iter().map(|d| format!(" {d}")));
        let docs = docs.map(|d| doc(&d)).map(|d| quote!(#[doc = #d]));
        let ty = &g.declaration_type;
        let body = match &g.chain {
            Some(_) => {
                let placeholder = format_ident!("{}", placeholder(f));
                quote!(#placeholder)
            }
            None => g.body.clone(),
        };
        quote! {
            #(#docs)*
            fn #f() -> #ty {
                #body
            }
        }
    });
    let helpers = parts.iter().flat_map(|(_, g)| g.helpers.iter());
    let tokens = quote! {
        #(#header)*

        #(#uses)*
        use chant::lexicon::{DeclaredEnv, EnvDeclaration};

        #[doc = #env_doc]
        pub fn #env_fn() -> EnvDeclaration {
            EnvDeclaration::new() #(#withs)*
        }

        #(#functions)*

        #(#helpers)*

        chant::lexicon::inventory::submit! { DeclaredEnv::new(#env, #env_fn) }
    };
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| ExportError::Generate { lexicon: "module".into(), detail: format!("not valid Rust: {e}") })?;
    let mut source = spaced(&prettyplease::unparse(&file));
    for ((_, g), f) in parts.iter().zip(&part_fns) {
        if let Some(chain) = &g.chain {
            let mut printed = String::with_capacity(1 << 16);
            printed.push_str("    ");
            chain.print(4, 4, 0, &mut printed);
            source = source.replacen(&format!("    {}\n", placeholder(f)), &format!("{printed}\n"), 1);
        }
    }
    // The doc lines of helper items (a generator's own, built from names) are free text too.
    let source = redact_comments(&source, redactor);
    check_module(&source)?;
    Ok(source)
}

/// Returns `source` with the text of every comment line (`//`, `///`, `//!`) redacted: a
/// generator's helper items carry docs built from names, which the redactor has not seen. String
/// literals are never on such a line (every literal's line breaks are escaped).
fn redact_comments(source: &str, redactor: &Redactor) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        let body = line.trim_start();
        if body.starts_with("//") {
            out.push_str(&line[..line.len() - body.len()]);
            out.push_str(&redactor.redact(body));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The identifier standing for a laid-out body until it is printed in.
fn placeholder(function: &proc_macro2::Ident) -> String {
    format!("__chant_laid_out_{function}__")
}

/// Puts one blank line between top-level items, after the header and after the `use` lines, as a
/// person writes them (prettyplease puts none; rustfmt keeps what it finds).
fn spaced(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 256);
    let mut previous: Option<&str> = None;
    for line in source.lines() {
        if let Some(p) = previous {
            let top = !line.starts_with(' ') && !line.is_empty() && line != "}";
            let ends_item = p == "}" || p.starts_with("use ") || (p.starts_with("//!") && !line.starts_with("//!"));
            let same_group = p.starts_with("use ") && line.starts_with("use ");
            if top && ends_item && !same_group {
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
        previous = Some(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_variables_are_derived_from_names() {
        assert_eq!(ident_for("env", "prod-db").to_string(), "prod_db");
        assert_eq!(ident_for("env", "type").to_string(), "env_type");
        assert_eq!(ident_for("env", "9lives").to_string(), "env_9lives");
        assert_eq!(secret_variable("app.settings.dsn"), "CHANT_IMPORT_APP_SETTINGS_DSN");
        assert_eq!(secret_variable("conf/db.env"), "CHANT_IMPORT_CONF_DB_ENV");
    }

    #[test]
    fn the_module_declares_and_registers_the_env_with_a_header() {
        let t = ExportedTemplate::new("files", "prod-db", "estates/prod", "2026-01-01T00:00:00.000Z");
        let mut g =
            Generated::new(quote!(FilesDeclaration), quote!(FilesDeclaration::new().file("a.conf", "x = 1\n", 0o644)));
        g.uses.push(quote!(
            use chant::lexicon::files::FilesDeclaration;
        ));
        g.uses.push(quote!(
            use chant::lexicon::files::FilesDeclaration;
        ));
        let secret = Secret { entity: "db.env".into(), what: "content".into(), variable: secret_variable("db.env") };
        g.helpers.push(secret_helper(&secret).0);
        let source =
            render_module("prod-db", "chant import --from prod-db", &[(&t, &g)], &Redactor::default()).unwrap();
        assert!(
            source.starts_with(
                "//! The `prod-db` env, as `chant import --from prod-db` read it at 2026-01-01T00:00:00.000Z:\n"
            ),
            "{source}"
        );
        assert!(source.contains("//! - files from `estates/prod`\n"), "{source}");
        assert_eq!(source.matches("use chant::lexicon::files::FilesDeclaration;").count(), 1, "{source}");
        assert!(
            source.contains("pub fn prod_db() -> EnvDeclaration {\n    EnvDeclaration::new().with(prod_db_files())\n}"),
            "{source}"
        );
        assert!(
            source.contains("chant::lexicon::inventory::submit! {\n    DeclaredEnv::new(\"prod-db\", prod_db)\n}"),
            "{source}"
        );
        assert!(source.contains("/// The content of `db.env` held a credential"), "{source}");
        assert!(source.contains("std::env::var(\"CHANT_IMPORT_DB_ENV\").unwrap_or_default()"), "{source}");
        syn::parse_file(&source).unwrap();
        assert!(source.contains("}\n\n/// The content of"), "items are spaced: {source}");
        assert!(!source.contains("\n\n\n"), "{source}");
        assert_rustfmt_clean(&source);
    }

    #[test]
    fn a_module_holding_what_rustc_refuses_is_refused_and_comment_text_escapes_it() {
        assert!(check_module("/// fine \\u{202e}\nfn f() {}\n").is_ok());
        for bad in ["/// a\u{202e}b\nfn f() {}\n", "/// a\rb\nfn f() {}\n", "const X: &str = \"\u{2067}\";\n"] {
            let e = check_module(bad).unwrap_err();
            assert!(matches!(e, ExportError::Unbuildable { .. }), "{bad:?}: {e}");
        }
        assert!(check_module("fn f( {}\n").unwrap_err().to_string().contains("would not build: not valid Rust"));
        assert_eq!(comment_text(" t\u{202e}x\ry\nz\u{1b}"), " t\\u{202e}x\\u{d}y\\u{a}z\\u{1b}");
    }

    #[test]
    fn every_doc_line_is_redacted_and_escaped() {
        let t = ExportedTemplate::new("files", "e", "postgres://u:Pw0rdSecret@h/db\u{202e}x", "now");
        let mut g = Generated::new(quote!(FilesDeclaration), quote!(FilesDeclaration::new()));
        g.docs.push("default 'postgres://svc:Sup3rSecretPw@db/app;x' cannot be declared\rforged".into());
        let redactor = Redactor::new(["hunter2-secret".to_owned()]);
        // A helper's docs, built from a name (a generator's own item), are redacted too.
        let secret = Secret { entity: "hunter2-secret.conf".into(), what: "content".into(), variable: "V".into() };
        g.helpers.push(secret_helper(&secret).0);
        let source =
            render_module("e", "chant import --from e --select name=hunter2-secret", &[(&t, &g)], &redactor).unwrap();
        for leaked in ["Pw0rdSecret", "Sup3rSecretPw", "hunter2-secret", "\u{202e}", "\r"] {
            assert!(!source.contains(leaked), "{leaked:?} is written:\n{source}");
        }
        assert!(source.contains("cannot be declared\\u{d}forged"), "{source}");
    }

    /// Holds `source` to rustfmt's own layout (its defaults: run outside any rustfmt.toml).
    fn assert_rustfmt_clean(source: &str) {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = chant_store::process::Spec::new("rustfmt");
        spec.args = vec!["--edition".into(), "2024".into(), "--emit".into(), "stdout".into()];
        spec.cwd = Some(dir.path().to_path_buf());
        spec.stdin = Some(source.as_bytes().to_vec());
        let out = chant_store::process::run(&spec).unwrap();
        assert!(out.success(), "{}", out.stderr);
        let formatted = &out.stdout;
        assert_eq!(formatted.trim_start_matches("<stdin>:\n\n"), source, "rustfmt would change the generated source");
    }
}
