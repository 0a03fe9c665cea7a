//! The module dependency rules inside each crate of the family, written down as data and checked
//! against the source: every top-level module of a crate sits in a layer, a module imports only
//! modules of lower layers, and the import graph has no cycle.
//!
//! Between crates the compiler holds the layering (a lower crate cannot name a higher one):
//! `chant-core` (the model), `chant-store` (storage), `chant-lexicon` (the lexicon API and the
//! observation contract), the lexicons (`chant-files`, `chant-postgres`), `chant-runtime` (running
//! ops, ticks, the operator) and the facade (`chant-ops`: the command line, the dashboard, the
//! notifications and the box lexicon). Inside a crate the rules below follow DESIGN.md §1 and
//! docs/architecture.md ("Layering"): pure data below what reads substrates, the model below
//! planning, nothing below `cli` parsing flags or rendering for a terminal.
//!
//! An import is a `crate::<module>` or `chant::<module>` path, or a name in a
//! `use crate::{...}` group, outside line comments. Edges that break a rule today are listed in
//! [`TOLERATED`], each with a `TODO(lead)` saying what moves; the test fails when one of them
//! disappears (take it off the list) and when a new one appears.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate's directory and its layers, bottom to top. A module may import any module of a
/// lower layer of its crate, and none of its own layer or above.
const CRATES: &[(&str, &[&[&str]])] = &[
    (
        "chant-lexicon",
        &[
            // Pure data and pure functions: the model and durations (from `chant-core`),
            // redaction, the variables a tick hands to the run it dispatches.
            &["model", "duration", "redact", "handoff"],
            // The observation contract, and the HTTP GET of `http_check` and health probes.
            &["observe", "http"],
            // The lexicon API: declarations and their registry, bindings, the plugin traits, the
            // estate beyond the declaration, the step kinds a lexicon registers, export hooks.
            &["artifacts", "binding", "bound", "env", "estate", "export", "plugin", "references", "registry", "steps"],
        ],
    ),
    (
        "chant-runtime",
        &[
            // Pure data: a user step's context, text made safe to print, text diffs.
            &["step", "terminal", "textdiff"],
            // Ids, the registry of compiled ops, schedules (and the schedulers generated from
            // them), and what an approval records.
            &["registry", "schedule", "scheduler", "approval"],
            &["catalog"],
            // Records kept on the ledger: gate facts and decisions, the notification record.
            &["gate", "notification"],
            // The estate as a graph, rebuilt from the lexicons' reference catalogs.
            &["graph"],
            // The behaviour engines, and `chant.toml` (checked against the binding keys the
            // registered lexicons declare).
            &["behaviour", "config"],
            // Running an op, the project around the ops, a tick, the diff of an env (for
            // `lifecycle diff` and the dashboard alike), the operator's rounds.
            &["runner"],
            &["project"],
            // Search reads the envs' estates through the project, as a tick does.
            &["tick", "search"],
            &["diff"],
            &["operator"],
        ],
    ),
    (
        "chant",
        &[
            // The box lexicon and its supervisor stand-in.
            &["supervisor"],
            &["lexicon"],
            // The files lexicon's behaviour request, beside the runtime's engines.
            &["behaviour"],
            // The operator's notifications (an operator hook), and the read-only dashboard (which
            // shows the approve command notifications send).
            &["notify"],
            &["serve"],
            // The command line, what the macros' generated code names, and the fuzz targets (entry
            // points into the parsers of every layer, for the fuzz driver only).
            &["cli"],
            &["__private", "fuzz"],
        ],
    ),
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
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let tolerated: BTreeSet<(String, String)> =
        TOLERATED.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    let mut all_edges = BTreeSet::new();
    for (dir, layers) in CRATES {
        let src = workspace.join(dir).join("src");
        let layer: BTreeMap<&str, usize> =
            layers.iter().enumerate().flat_map(|(i, mods)| mods.iter().map(move |m| (*m, i))).collect();
        let found = modules(&src);
        for module in found.keys() {
            assert!(layer.contains_key(module.as_str()), "{dir}/src/{module} is in no layer: add it to CRATES");
        }
        let edges = edges(&src);
        let mut broken = Vec::new();
        for ((from, to), file) in &edges {
            let upward = layer[from.as_str()] <= layer[to.as_str()];
            if upward && !tolerated.contains(&(from.clone(), to.clone())) {
                broken.push(format!("{from} -> {to} ({})", file.strip_prefix(&src).unwrap_or(file).display()));
            }
        }
        assert!(broken.is_empty(), "imports in {dir} that go up or sideways a layer:\n  {}", broken.join("\n  "));
        all_edges.extend(edges.keys().cloned());
        let checked: BTreeSet<(String, String)> = edges.into_keys().filter(|e| !tolerated.contains(e)).collect();
        assert_eq!(cycle(&checked), None, "the module graph of {dir} has a cycle");
    }
    for (from, to) in TOLERATED {
        assert!(
            all_edges.contains(&((*from).to_owned(), (*to).to_owned())),
            "{from} -> {to} is gone: take it off TOLERATED"
        );
    }
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

/// The normal dependencies `dir`'s manifest names.
fn dependencies(dir: &str) -> BTreeSet<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    parsed.get("dependencies").and_then(|d| d.as_table()).map(|d| d.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn the_runtime_and_the_lexicon_api_depend_on_no_lexicon_and_lexicons_not_on_the_runtime() {
    const LEXICONS: &[&str] = &["chant-files", "chant-postgres", "chant-box"];
    for dir in ["chant-core", "chant-store", "chant-lexicon", "chant-runtime"] {
        let deps = dependencies(dir);
        let named: Vec<&&str> = LEXICONS.iter().filter(|l| deps.contains(**l)).collect();
        assert!(
            named.is_empty(),
            "{dir} depends on the lexicon crates {named:?}: lexicons plug in through chant-lexicon"
        );
    }
    for dir in ["chant-files", "chant-postgres", "chant-box"] {
        let deps = dependencies(dir);
        assert!(deps.contains("chant-lexicon"), "{dir} implements the lexicon API: {deps:?}");
        for higher in ["chant-runtime", "chant-ops", "chant", "chant-macros"] {
            assert!(!deps.contains(higher), "{dir} depends on {higher}: a lexicon knows nothing of running ops");
        }
    }
}
