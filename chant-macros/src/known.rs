//! The ops the macro can see for itself: every `op!` and `converge_op!` written in the crate's
//! source files, read with the same parser and checks as the macros (so their names and classes
//! are exactly what those invocations declare).
//!
//! The compile-time registry (`::chant::__private`) stays the authority: an op declared by a
//! `macro_rules!`, behind a `cfg`, or in another crate is invisible here. So this knowledge only
//! ever adds to the registry's checks: a `run()` target found here with a class the dial refuses
//! is reported by the macro itself, as an ordinary error at `run("...")`, and the names found here
//! feed the "did you mean" of a target the registry does not know. A target not found here is
//! never refused on that ground; the registry decides.
//!
//! The same scan collects the envs the sources declare (`DeclaredEnv::new("<name>", ...)` inside
//! an item macro such as `inventory::submit!`), so a step's or a ConvergeOp's env that is a typo
//! of one of them is refused at its token. A name close to none of them is left to the load of the
//! op set, which sees every declaration.
//!
//! The files read are the crate root (the `.rs` file rustc compiles), the package's library root
//! (a binary's ops usually live there), and the invocation's own file, with every `mod` they
//! declare, inline or in its own file (a `path` attribute included), each file once. A file's
//! parse is kept while its modification time and length are unchanged, so the invocations of one
//! build read each file once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use chant_core::{ClassKind, Name};
use proc_macro2::{Span, TokenStream};
use syn::{Item, Meta};

use crate::check;
use crate::ctxt::Ctxt;
use crate::env::BuildEnv;
use crate::lexicon::StepTable;
use crate::parse;

/// The most files one scan reads (a guard against a pathological module tree).
const MAX_FILES: usize = 512;

/// One op found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KnownOp {
    /// Its name.
    pub(crate) name: String,
    /// Its verb class, folded from its steps as the macro folds it.
    pub(crate) class: ClassKind,
    /// True for a `converge_op!`.
    pub(crate) converge: bool,
}

/// The ops found in the crate's sources, and the envs they declare.
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownOps {
    ops: Vec<KnownOp>,
    /// The names of the envs declared with `DeclaredEnv::new("<name>", ...)` in an item macro
    /// (`inventory::submit! { ... }`, as `chant init` writes it).
    envs: BTreeSet<String>,
}

impl KnownOps {
    /// Reads the crate's sources as seen from an invocation at `span`.
    pub(crate) fn scan(env: &BuildEnv, span: Span) -> Self {
        let mut roots: Vec<PathBuf> = Vec::new();
        roots.extend(env.crate_root.clone());
        roots.extend(env.manifest_dir.as_ref().map(|d| d.join("src/lib.rs")).filter(|p| p.is_file()));
        roots.extend(span.local_file().map(|f| absolute(&f)));
        let mut scan = Scan { seen: BTreeSet::new(), ops: Vec::new(), envs: BTreeSet::new() };
        for root in roots {
            scan.file(&root, None, true);
        }
        KnownOps { ops: scan.ops, envs: scan.envs }
    }

    /// Creates a set from a list (unit tests).
    #[cfg(test)]
    pub(crate) fn from_ops(ops: Vec<KnownOp>) -> Self {
        KnownOps { ops, envs: BTreeSet::new() }
    }

    /// The names of the envs the sources declare.
    #[cfg(test)]
    pub(crate) fn envs(&self) -> &BTreeSet<String> {
        &self.envs
    }

    /// Refuses an env name that is a typo of an env the sources declare: the name itself is
    /// declared nowhere in them, and one declared name is close to it. A name with no close
    /// declared name is left to the op set's load, which sees every crate's declarations (an env
    /// may be declared in another crate, or by a `macro_rules!`, where this scan cannot look).
    pub(crate) fn check_env(&self, lit: &syn::LitStr, what: &str, cx: &Ctxt) {
        let name = lit.value();
        if name.contains("${") || self.envs.contains(&name) {
            return;
        }
        if let Some(close) = chant_core::contract::did_you_mean(&name, self.envs.iter().map(String::as_str)) {
            let declared: Vec<&str> = self.envs.iter().map(String::as_str).collect();
            cx.error(
                lit.span(),
                format!(
                    "{what} names env \"{name}\", which this crate does not declare; did you mean \"{close}\"? (declared here: {})",
                    declared.join(", ")
                ),
            );
        }
    }

    /// Returns the op named `name` when exactly one declaration of it was found.
    pub(crate) fn get(&self, name: &str) -> Option<&KnownOp> {
        let mut found = self.ops.iter().filter(|o| o.name == name);
        match (found.next(), found.next()) {
            (Some(op), None) => Some(op),
            _ => None,
        }
    }

    /// Returns the names of every op found (`converge_only`: of the ConvergeOps), for a
    /// "did you mean".
    pub(crate) fn names(&self, converge_only: bool) -> impl Iterator<Item = &str> {
        self.ops.iter().filter(move |o| o.converge || !converge_only).map(|o| o.name.as_str())
    }
}

/// What one source file declares: its ops, and the files of its `mod x;` children.
#[derive(Debug, Default)]
struct Parsed {
    ops: Vec<KnownOp>,
    envs: Vec<String>,
    children: Vec<Child>,
}

/// A `mod x;` child: the files it may live in (the first that exists), and where its own
/// children live.
#[derive(Debug)]
struct Child {
    candidates: Vec<PathBuf>,
    dir: Option<PathBuf>,
}

/// A file's modification time and length: a parse is reused while both are unchanged.
type Stamp = (Option<SystemTime>, u64);

/// Parsed files, reused across the invocations one compiler process expands (each `converge_op!`
/// and `main!` scans the crate). It holds plain data only, never tokens.
static CACHE: Mutex<BTreeMap<PathBuf, (Stamp, Arc<Parsed>)>> = Mutex::new(BTreeMap::new());

struct Scan {
    seen: BTreeSet<PathBuf>,
    ops: Vec<KnownOp>,
    envs: BTreeSet<String>,
}

impl Scan {
    /// Reads one source file and its module children. `dir` is the directory its `mod x;`
    /// children live in; `None` derives it from the file: a crate root (`root`) or a `mod.rs`
    /// keeps them beside it, `a.rs` in `a/`.
    fn file(&mut self, path: &Path, dir: Option<PathBuf>, root: bool) {
        if self.seen.len() >= MAX_FILES || !self.seen.insert(path.to_path_buf()) {
            return;
        }
        let Some(parsed) = parsed(path, dir, root) else { return };
        self.ops.extend(parsed.ops.iter().cloned());
        self.envs.extend(parsed.envs.iter().cloned());
        for child in &parsed.children {
            if let Some(file) = child.candidates.iter().find(|c| c.is_file()) {
                self.file(file, child.dir.clone(), false);
            }
        }
    }
}

/// Returns the parse of `path`, from the cache while the file is unchanged.
fn parsed(path: &Path, dir: Option<PathBuf>, root: bool) -> Option<Arc<Parsed>> {
    let meta = std::fs::metadata(path).ok()?;
    let stamp: Stamp = (meta.modified().ok(), meta.len());
    let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((s, p)) = cache.get(path)
        && *s == stamp
    {
        return Some(Arc::clone(p));
    }
    let text = std::fs::read_to_string(path).ok()?;
    let file = syn::parse_file(&text).ok()?;
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = dir.unwrap_or_else(|| {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        if root || stem == "mod" { parent.clone() } else { parent.join(stem) }
    });
    let mut out = Parsed::default();
    items(&mut out, &file.items, &parent, &dir);
    let out = Arc::new(out);
    cache.insert(path.to_path_buf(), (stamp, Arc::clone(&out)));
    Some(out)
}

fn items(out: &mut Parsed, list: &[Item], file_dir: &Path, dir: &Path) {
    for item in list {
        match item {
            Item::Macro(m) => {
                let Some(last) = m.mac.path.segments.last() else { continue };
                if last.ident == "op" {
                    out.ops.extend(invocation(m.mac.tokens.clone(), false));
                } else if last.ident == "converge_op" {
                    out.ops.extend(invocation(m.mac.tokens.clone(), true));
                } else {
                    declared_envs(m.mac.tokens.clone(), &mut out.envs);
                }
            }
            Item::Mod(m) => {
                let path_attr = m.attrs.iter().find_map(|a| match &a.meta {
                    Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                });
                let name = m.ident.to_string();
                match (&m.content, path_attr) {
                    (Some((_, inner)), _) => items(out, inner, file_dir, &dir.join(&name)),
                    (None, Some(p)) => out.children.push(Child { candidates: vec![file_dir.join(p)], dir: None }),
                    (None, None) => out.children.push(Child {
                        candidates: vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                        dir: Some(dir.join(&name)),
                    }),
                }
            }
            _ => {}
        }
    }
}

/// Collects the `<name>` of every `DeclaredEnv::new("<name>", ...)` in a macro's tokens (the
/// registration `chant init` writes: `inventory::submit! { DeclaredEnv::new("dev", dev) }`).
fn declared_envs(tokens: TokenStream, out: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => declared_envs(g.stream(), out),
            TokenTree::Ident(id) if id == "DeclaredEnv" => {
                let rest = &tokens[i + 1..];
                let call = match rest {
                    [TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(new), TokenTree::Group(args), ..]
                        if a.as_char() == ':' && b.as_char() == ':' && new == "new" =>
                    {
                        args
                    }
                    _ => continue,
                };
                if let Some(TokenTree::Literal(lit)) = call.stream().into_iter().next()
                    && let Ok(syn::Lit::Str(s)) = syn::parse2::<syn::Lit>(TokenTree::Literal(lit).into())
                {
                    out.push(s.value());
                }
            }
            _ => {}
        }
    }
}

/// Reads one invocation with the macros' own parser and checks; one with errors is skipped.
fn invocation(tokens: TokenStream, converge: bool) -> Option<KnownOp> {
    let cx = Ctxt::new();
    let (name, class) = if converge {
        let ast = parse::converge_op(tokens, &cx);
        (ast.name.map(|n| n.value()).filter(|n| Name::is_valid(n)), Some(ClassKind::ReadOnly))
    } else {
        let ast = parse::op(tokens, &cx);
        // A lexicon's steps are declared only in the macros' own round trip, never in a source
        // file: an op that has any is not known here, and the registry decides about it.
        let checked = check::op(&ast, Some(None), &StepTable::default(), &cx);
        (checked.name.map(|n| n.into_string()), checked.doc.map(|d| d.class))
    };
    let clean = cx.check().is_ok();
    match (clean, name, class) {
        (true, Some(name), Some(class)) => Some(KnownOp { name, class, converge }),
        _ => None,
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_relative() {
        std::env::current_dir().map(|c| c.join(p)).unwrap_or_else(|_| p.to_path_buf())
    } else {
        p.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_module_file_and_inline_module() {
        let dir = std::env::temp_dir().join(format!("chant-macros-known-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/ops")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "mod ops;\nmod inline { pub mod deeper { chant::op! { name: \"deep\", overview: \"o\", phases: [ phase(\"P\", [ http_check(url = \"http://x/\") ]) ] } } }\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/ops/mod.rs"),
            "mod apply;\nchant::lexicon::inventory::submit! { DeclaredEnv::new(\"e\", e) }\ninventory::submit! { chant::lexicon::DeclaredEnv::new(\"other\", other) }\nchant::converge_op! { name: \"conv\", env: \"e\", rules: [ when!(eq(status, \"drifted\") => report(\"r\"), why = \"w\") ] }\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/ops/apply.rs"),
            "op! { name: \"apply-it\", overview: \"o\", phases: [ phase(\"P\", [ apply(env = \"e\") ]) ] }\nop! { name: \"Broken\" }\n",
        )
        .unwrap();
        let env = BuildEnv { package: "k".into(), manifest_dir: Some(dir.clone()), ops_dir: None, crate_root: None };
        let known = KnownOps::scan(&env, Span::call_site());
        let mut found: Vec<(String, ClassKind, bool)> =
            known.ops.iter().map(|o| (o.name.clone(), o.class, o.converge)).collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("apply-it".to_owned(), ClassKind::Mutating, false),
                ("conv".to_owned(), ClassKind::ReadOnly, true),
                ("deep".to_owned(), ClassKind::ReadOnly, false),
            ]
        );
        assert_eq!(known.names(true).collect::<Vec<_>>(), ["conv"]);
        assert_eq!(known.envs().iter().map(String::as_str).collect::<Vec<_>>(), ["e", "other"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_name_declared_twice_is_not_known() {
        let op = |class| KnownOp { name: "x".into(), class, converge: false };
        let known = KnownOps::from_ops(vec![op(ClassKind::Mutating), op(ClassKind::ReadOnly)]);
        assert!(known.get("x").is_none());
    }
}
