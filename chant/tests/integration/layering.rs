//! The module dependency rules of `chant/src`, written down as data and checked against the
//! source: every top-level module sits in a layer, a module imports only modules of lower
//! layers, and the import graph has no cycle.
//!
//! The layers follow DESIGN.md §1 and docs/architecture.md ("Layering"), bottom to top: pure
//! data and functions; ids and the contract's registries; the subprocess layer; substrates read
//! and written through it (git, the supervisor stand-in, the observation contract); the ledger;
//! what is kept on it and the lexicons; the behaviour engines and `chant.toml`; running ops;
//! the project; the tick; the operator; the command line; what generated code names. So the
//! model does no I/O, lexicons know nothing of running ops or ticks, storage knows nothing of
//! planning, and nothing below `cli` parses flags or renders for a terminal.
//!
//! An import is a `crate::<module>` or `chant::<module>` path, or a name in a
//! `use crate::{...}` group, outside line comments. Edges that break a rule today are listed in
//! [`TOLERATED`], each with a `TODO(lead)` saying what moves; the test fails when one of them
//! disappears (take it off the list) and when a new one appears.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom to top. A module may import any module of a lower layer, and none of its
/// own layer or above.
const LAYERS: &[&[&str]] = &[
    // Below every module here, in crates of their own that cannot name this one (the compiler
    // holds them to it): the model (`chant-core`) and storage (`chant-store`: `git`, `ledger`,
    // `lease`, and the `process`, `clock`, `canonical`, `id`, `backoff` and `error` they stand
    // on), re-exported under their old paths.
    //
    // Pure data and pure functions: no I/O, no chant module below them.
    // `terminal` makes text safe to print; the renderers above it use it.
    &["model", "duration", "step", "redact", "handoff", "terminal"],
    // Ids, the registry of compiled ops, schedules, and what an approval records.
    &["registry", "schedule", "approval"],
    &["catalog"],
    // Substrates reached through the storage crate's processes, and the observation contract.
    &["supervisor", "observe", "http"],
    // Records kept on the ledger and what reads them: gate facts and decisions, the
    // notification record (what was sent for a tick), and the lexicons (readers and writers of
    // substrates).
    &["gate", "notification", "lexicon"],
    // The estate as a graph, rebuilt from the lexicons' reference catalogs.
    &["graph"],
    // The behaviour engines, and `chant.toml` (checked against the binding keys the registered
    // lexicons declare).
    &["behaviour", "config"],
    // Running an op, the project around the ops, a tick, the operator's rounds.
    &["runner"],
    &["project"],
    &["tick"],
    // The diff of an env (the assessment, its health word, its estate), for `lifecycle diff`
    // and the dashboard alike.
    &["diff"],
    &["operator"],
    // The operator's notifications (an operator hook), and the read-only dashboard (which
    // shows the approve command notifications send).
    &["notify"],
    &["serve"],
    // The command line, what the macros' generated code names, and the fuzz targets (entry
    // points into the parsers of every layer, for the fuzz driver only).
    &["cli"],
    &["__private", "fuzz"],
];

/// Edges that break the rules today, each to be removed by the change its comment names. They
/// are left out of the cycle check; every one must still exist.
const TOLERATED: &[(&str, &str)] = &[];

/// The top-level modules of `chant/src` and the files of each.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "bin" {
                out.insert(name, rust_files(&path));
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            out.entry(name).or_default().push(path);
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The chant modules `code` names, from paths and `use` groups, line comments left out.
fn imports(code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect();
    let mut found = BTreeSet::new();
    for root in ["crate::", "chant::"] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(root) {
            // `::chant::` in a path, `crate::` at a word boundary; not `my_crate::`.
            let before = rest[..at].chars().next_back();
            rest = &rest[at + root.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                for name in group_heads(group) {
                    found.insert(name);
                }
            } else {
                found.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
        }
    }
    found.retain(|m| known.contains(m));
    found
}

/// The first segment of each item of a `use crate::{a::b, c, d::{e, f}}` group (the text after
/// the opening brace).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let (mut depth, mut at_item) = (0usize, true);
    let mut word = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item = true,
            c if at_item && (c.is_alphanumeric() || c == '_') => word.push(c),
            _ if at_item && !word.is_empty() => {
                heads.push(std::mem::take(&mut word));
                at_item = false;
            }
            _ => {}
        }
    }
    if !word.is_empty() {
        heads.push(word);
    }
    heads
}

/// Every import edge between top-level modules, with a file that makes it.
fn edges(src: &Path) -> BTreeMap<(String, String), PathBuf> {
    let modules = modules(src);
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (module, files) in &modules {
        for file in files {
            let code = std::fs::read_to_string(file).unwrap();
            for target in imports(&code, &known) {
                if &target != module {
                    out.entry((module.clone(), target)).or_insert_with(|| file.clone());
                }
            }
        }
    }
    out
}

/// A cycle among `edges`, if there is one, as the modules on it.
fn cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeSet<(String, String)>,
        state: &mut BTreeMap<String, bool>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        // `false`: on the current path; `true`: done.
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = path.iter().position(|n| n == node).unwrap_or(0);
                let mut found = path[start..].to_vec();
                found.push(node.to_owned());
                return Some(found);
            }
            None => {}
        }
        state.insert(node.to_owned(), false);
        path.push(node.to_owned());
        for (_, to) in edges.iter().filter(|(from, _)| from == node) {
            if let Some(c) = visit(to, edges, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(node.to_owned(), true);
        None
    }
    let mut state = BTreeMap::new();
    let nodes: BTreeSet<&String> = edges.iter().map(|(from, _)| from).collect();
    nodes.into_iter().find_map(|n| visit(n, edges, &mut state, &mut Vec::new()))
}

#[test]
fn every_module_imports_only_lower_layers_and_the_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer: BTreeMap<&str, usize> =
        LAYERS.iter().enumerate().flat_map(|(i, mods)| mods.iter().map(move |m| (*m, i))).collect();
    let found = modules(&src);
    for module in found.keys() {
        assert!(layer.contains_key(module.as_str()), "chant/src/{module} is in no layer: add it to LAYERS");
    }
    let edges = edges(&src);
    let tolerated: BTreeSet<(String, String)> =
        TOLERATED.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    let mut broken = Vec::new();
    for ((from, to), file) in &edges {
        let upward = layer[from.as_str()] <= layer[to.as_str()];
        if upward && !tolerated.contains(&(from.clone(), to.clone())) {
            broken.push(format!("{from} -> {to} ({})", file.strip_prefix(&src).unwrap_or(file).display()));
        }
    }
    assert!(broken.is_empty(), "imports that go up or sideways a layer:\n  {}", broken.join("\n  "));
    for (from, to) in TOLERATED {
        assert!(
            edges.contains_key(&((*from).to_owned(), (*to).to_owned())),
            "{from} -> {to} is gone: take it off TOLERATED"
        );
    }
    let checked: BTreeSet<(String, String)> = edges.into_keys().filter(|e| !tolerated.contains(e)).collect();
    assert_eq!(cycle(&checked), None, "the module graph has a cycle");
}

#[test]
fn imports_are_read_from_paths_and_use_groups_but_not_comments() {
    let known: BTreeSet<String> = ["model", "ledger", "git", "tick", "observe"].map(String::from).into();
    let code = "use crate::{model::Op, ledger};\nuse crate::git::{self, cmd};\n// crate::tick is only mentioned\n\
                fn f() { my_crate::observe(); ::chant::observe::x(); }";
    let got: Vec<String> = imports(code, &known).into_iter().collect();
    assert_eq!(got, ["git", "ledger", "model", "observe"]);
    let edges: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("c", "a")].map(|(x, y)| (x.to_owned(), y.to_owned())).into();
    assert_eq!(cycle(&edges), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
}
