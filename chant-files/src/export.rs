//! Live export of a files root: every regular file under it with its mode and content, and its
//! template generator (`FilesDeclaration::new().file(path, content, mode)`).
//!
//! [`read`] walks the root (the only I/O); [`template`] applies the options and [`generate`]
//! writes the declaration, both pure. The files lexicon keeps no marker on disk (ownership is the
//! last recorded apply, on the ledger), so every exported file's ownership is `unknown`, and
//! under `owned` nothing is exported (a note says why). Symlinks, FIFOs and anything else that
//! is not a regular file are notes, never followed. Content the redactor recognises as a
//! credential is not written: the generated code reads it from a variable.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::COMPONENT;
use chant_lexicon::export::module::{secret_helper, secret_variable};
use chant_lexicon::export::{
    Attr, ExportError, ExportOptions, ExportOwnership, ExportedResource, ExportedTemplate, Generated, Secret,
};
use chant_lexicon::redact::Redactor;

/// One file read under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// Its path relative to the root, with `/` separators.
    pub path: String,
    /// Its permission bits.
    pub mode: u32,
    /// Its content.
    pub content: Vec<u8>,
}

/// What a walk of the root found: the regular files, and what it skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Regular files, sorted by path.
    pub files: Vec<LiveFile>,
    /// Paths that are not regular files or could not be read, with why.
    pub skipped: Vec<String>,
}

/// Walks `root` (never following a symlink).
///
/// # Errors
///
/// The root itself cannot be read.
pub fn read(root: &Path) -> Result<Walk, std::io::Error> {
    let mut walk = Walk::default();
    let mut pending = vec![String::new()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(root.join(&dir)) {
            Ok(e) => e,
            Err(e) if dir.is_empty() => return Err(e),
            Err(e) => {
                walk.skipped.push(format!("{dir}: {e}"));
                continue;
            }
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if dir.is_empty() { name } else { format!("{dir}/{name}") };
            let meta = match entry.path().symlink_metadata() {
                Ok(m) => m,
                Err(e) => {
                    walk.skipped.push(format!("{path}: {e}"));
                    continue;
                }
            };
            if meta.is_dir() {
                pending.push(path);
            } else if meta.is_file() {
                match std::fs::read(entry.path()) {
                    Ok(content) => {
                        walk.files.push(LiveFile { path, mode: meta.permissions().mode() & 0o7777, content })
                    }
                    Err(e) => walk.skipped.push(format!("{path}: {e}")),
                }
            } else if meta.file_type().is_symlink() {
                walk.skipped.push(format!("{path}: a symlink (not followed)"));
            } else {
                walk.skipped.push(format!("{path}: not a regular file"));
            }
        }
    }
    walk.files.sort_by(|a, b| a.path.cmp(&b.path));
    walk.skipped.sort();
    Ok(walk)
}

/// Refuses `--owned` when the selector keeps any file: the files lexicon records which files
/// are chant's on the ledger (the env's last recorded apply), not on disk, and an export reads
/// the disk alone, so honouring it would leave every file out in silence.
///
/// # Errors
///
/// [`ExportError::Unsupported`] naming how many files it would leave out.
pub fn check_owned(walk: &Walk, source: &str, options: &ExportOptions) -> Result<(), ExportError> {
    let kept = walk.files.iter().filter(|f| options.selector.keeps("file", &f.path)).count();
    if !options.owned || kept == 0 {
        return Ok(());
    }
    Err(ExportError::Unsupported {
        lexicon: COMPONENT.into(),
        option: "--owned".into(),
        reason: format!(
            "the files lexicon records which files are chant's on the ledger (the env's last recorded apply), not on disk, and an export reads the disk alone; {kept} file(s) under {source} would be left out"
        ),
    })
}

/// Builds the template of `walk` for `env`, read from `source` at `read_at`. Pure.
pub fn template(walk: &Walk, env: &str, source: &str, read_at: &str, options: &ExportOptions) -> ExportedTemplate {
    let mut out = ExportedTemplate::new(COMPONENT, env, source, read_at);
    if options.owned {
        out.note(format!(
            "{} file(s) not exported under --owned: the files lexicon keeps no marker on disk, so no file shows as chant's",
            walk.files.len()
        ));
        return out;
    }
    for f in walk.files.iter().filter(|f| options.selector.keeps("file", &f.path)) {
        out.push(
            ExportedResource::new("file", f.path.clone(), ExportOwnership::Unknown)
                .attr("mode", Attr::Mode(f.mode))
                .attr("content", Attr::Bytes(f.content.clone())),
        );
    }
    for s in &walk.skipped {
        out.note(format!("not exported: {s}"));
    }
    out
}

/// Generates the declaration of a files template.
///
/// # Errors
///
/// [`ExportError::Generate`] when the template is not a files export.
pub fn generate(template: &ExportedTemplate, redactor: &Redactor) -> Result<Generated, ExportError> {
    if template.lexicon() != COMPONENT {
        return Err(ExportError::Generate {
            lexicon: COMPONENT.into(),
            detail: format!("the template is a {} export", template.lexicon()),
        });
    }
    let mut g = Generated::new(quote!(FilesDeclaration), TokenStream::new());
    let mut body = quote!(FilesDeclaration::new());
    for file in template.resources().iter().filter(|r| r.kind == "file") {
        let path = &file.name;
        let mode = match file.attrs.get("mode") {
            Some(Attr::Mode(m)) => *m,
            _ => 0o644,
        };
        let mode = syn::LitInt::new(&format!("0o{mode:o}"), proc_macro2::Span::call_site());
        let bytes: &[u8] = match file.attrs.get("content") {
            Some(Attr::Bytes(b)) => b,
            _ => &[],
        };
        let content = match std::str::from_utf8(bytes) {
            Ok(text) if redactor.redact(text) != text => {
                let secret = Secret { entity: path.clone(), what: "content".into(), variable: secret_variable(path) };
                let (item, call) = secret_helper(&secret);
                g.helpers.push(item);
                g.secrets.push(secret);
                call
            }
            Ok(text) => quote!(#text),
            Err(_) => {
                let lit = Literal::byte_string(bytes);
                quote!(#lit)
            }
        };
        body.extend(quote!(.file(#path, #content, #mode)));
    }
    g.uses.push(quote!(
        use chant::lexicon::files::FilesDeclaration;
    ));
    g.body = body;
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lexicon::export::{Selector, render_module};

    fn walk() -> Walk {
        Walk {
            files: vec![
                LiveFile { path: "app.conf".into(), mode: 0o644, content: b"port = 8080\n".to_vec() },
                LiveFile { path: "bin/start.sh".into(), mode: 0o755, content: b"#!/bin/sh\nexec app\n".to_vec() },
                LiveFile { path: "blob".into(), mode: 0o600, content: vec![0, 159, 146, 150] },
                LiveFile {
                    path: "db.env".into(),
                    mode: 0o600,
                    content: b"DSN=postgres://app:s3cretpw@db/app\n".to_vec(),
                },
            ],
            skipped: vec!["link: a symlink (not followed)".into()],
        }
    }

    #[test]
    fn files_are_declared_with_their_mode_and_secret_content_is_read_from_a_variable() {
        let t = template(&walk(), "site", "estates/site", "2026-01-01T00:00:00Z", &ExportOptions::default());
        assert_eq!(t.resources().len(), 4);
        assert_eq!(t.notes(), ["not exported: link: a symlink (not followed)"]);
        let g = generate(&t, &Redactor::default()).unwrap();
        let source = render_module("site", "chant import --from site", &[(&t, &g)], &Redactor::default()).unwrap();
        let flat: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(".file(\"app.conf\", \"port = 8080\\n\", 0o644)"), "{source}");
        assert!(flat.contains(".file(\"bin/start.sh\", \"#!/bin/sh\\nexec app\\n\", 0o755)"), "{source}");
        assert!(flat.contains(".file(\"blob\", b\"\\0\\x9F\\x92\\x96\", 0o600)"), "{source}");
        assert!(!source.contains("s3cretpw"), "{source}");
        assert!(flat.contains(".file(\"db.env\", db_env_content(), 0o600)"), "{source}");
        assert_eq!(g.secrets[0].variable, "CHANT_IMPORT_DB_ENV");
    }

    #[test]
    fn owned_exports_nothing_and_the_selector_picks_paths() {
        let owned = template(&walk(), "site", "r", "t", &ExportOptions { owned: true, ..ExportOptions::default() });
        assert!(owned.resources().is_empty());
        assert!(owned.notes()[0].contains("4 file(s) not exported under --owned"), "{:?}", owned.notes());
        let selector = Selector::parse("name='bin/*'").unwrap();
        let t = template(&walk(), "site", "r", "t", &ExportOptions { selector, ..ExportOptions::default() });
        let names: Vec<&str> = t.resources().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bin/start.sh"]);

        // `--owned` refuses while any file is selected, saying why; with none selected it has
        // nothing to leave out.
        let owned = ExportOptions { owned: true, ..ExportOptions::default() };
        let refused = check_owned(&walk(), "estates/site", &owned).unwrap_err().to_string();
        assert!(refused.contains("lexicon files cannot export under --owned"), "{refused}");
        assert!(refused.contains("on the ledger") && refused.contains("4 file(s) under estates/site"), "{refused}");
        let none = ExportOptions { selector: Selector::parse("type=table").unwrap(), ..owned };
        check_owned(&walk(), "estates/site", &none).unwrap();
        check_owned(&walk(), "estates/site", &ExportOptions::default()).unwrap();
    }

    #[test]
    fn a_walk_reads_regular_files_and_skips_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/c.txt"), "c").unwrap();
        std::fs::write(dir.path().join("top"), "t").unwrap();
        std::fs::set_permissions(dir.path().join("top"), std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink("top", dir.path().join("link")).unwrap();
        let walk = read(dir.path()).unwrap();
        let files: Vec<(&str, u32)> = walk.files.iter().map(|f| (f.path.as_str(), f.mode)).collect();
        assert_eq!(files, [("a/b/c.txt", walk.files[0].mode), ("top", 0o640)]);
        assert_eq!(walk.skipped, ["link: a symlink (not followed)"]);
        assert!(read(&dir.path().join("missing")).is_err());
    }
}
