//! A step kind of the lexicon's own, `docs_snapshot(env = "docs", into = "snapshots")`: copies
//! every document of an env into a directory of the project, so the last applied copy of each
//! stays beside the project after a hand edit or a teardown.
//!
//! A lexicon brings a step in two pieces, and chant names neither:
//!
//! - the **runner**, registered with `inventory::submit!` as a [`StepKind`]: its kind, its class
//!   (what the dial allows), what it does, and the one line its run record carries;
//! - the **step macro**, named after the kind and exported with `#[macro_export]`, which declares
//!   the step to `op!` and `converge_op!`: its class and its arguments with their types. The
//!   macros ask it for the declaration when they meet the step, check the step against it at
//!   compile time (each problem at its token) and record it in op.json like a built-in step.
//!
//! A crate that writes `docs_snapshot(...)` in its ops brings the macro into scope
//! (`use chant_example_jsondocs::docs_snapshot;`); in this crate, `#[macro_use]` on the module
//! does it for the modules declared after it.

use std::path::{Path, PathBuf};

use chant::lexicon::steps::{StepInput, StepKind, StepRunError};
use chant::model::ClassKind;
use serde_json::{Value, json};

use crate::error::DocsError;
use crate::lexicon::ROOT_KEY;

/// The step's kind.
pub const SNAPSHOT: &str = "docs_snapshot";

chant::lexicon::inventory::submit! {
    StepKind::new(SNAPSHOT, ClassKind::Mutating, run).with_describe(describe)
}

/// `docs_snapshot(env = "<env>", into = "<dir>")`: copies every document of `env` into `dir`
/// (relative to the project root), replacing older copies (mutating).
#[macro_export]
macro_rules! docs_snapshot {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step {
                kind: "docs_snapshot",
                class: mutating,
                args: [env: str required, into: str required],
            }
            $($input)*
        }
    };
}

/// Why a snapshot failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// An argument the declaration requires is missing (a hand-written op.json).
    #[error("docs_snapshot needs `{0}`")]
    Missing(&'static str),
    /// chant.toml could not be read.
    #[error("cannot read the project's chant.toml")]
    Config(#[source] chant::config::Error),
    /// The env binds no documents root.
    #[error(transparent)]
    Unbound(#[from] DocsError),
}

/// Copies the env's documents; returns the names copied, in order.
fn run(input: &StepInput<'_>) -> Result<Value, StepRunError> {
    let arg = |name: &'static str| input.args.get(name).and_then(Value::as_str).ok_or(SnapshotError::Missing(name));
    let (env, into) = (arg("env")?, arg("into")?);
    let config = chant::config::Config::discover(input.root).map_err(SnapshotError::Config)?;
    let root = config
        .env(env)
        .and_then(|b| b.get(ROOT_KEY))
        .map(|r| config.resolve(r))
        .ok_or_else(|| DocsError::NoBinding { env: env.to_owned() })
        .map_err(SnapshotError::Unbound)?;
    let copied = snapshot(&root, &input.root.join(into))?;
    Ok(json!({ "into": into, "copied": copied }))
}

/// Copies every `*.json` file of `from` (none when it does not exist yet) into `into`.
fn snapshot(from: &Path, into: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<PathBuf> = match std::fs::read_dir(from) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    names.sort();
    std::fs::create_dir_all(into)?;
    let mut copied = Vec::new();
    for path in names {
        let Some(name) = path.file_name() else { continue };
        std::fs::copy(&path, into.join(name))?;
        copied.push(name.to_string_lossy().into_owned());
    }
    Ok(copied)
}

/// `2 document(s) copied to snapshots`.
fn describe(_: &StepInput<'_>, result: &Value) -> String {
    let count = result["copied"].as_array().map_or(0, Vec::len);
    format!("{count} document(s) copied to {}", result["into"].as_str().unwrap_or("?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_copies_each_document_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (from, into) = (dir.path().join("estate"), dir.path().join("snap"));
        assert!(snapshot(&from, &into).unwrap().is_empty(), "no estate yet: nothing to copy");
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join("b.json"), "{}").unwrap();
        std::fs::write(from.join("a.json"), "{\"x\":1}").unwrap();
        std::fs::write(from.join("notes.txt"), "x").unwrap();
        assert_eq!(snapshot(&from, &into).unwrap(), ["a.json", "b.json"]);
        assert_eq!(std::fs::read_to_string(into.join("a.json")).unwrap(), "{\"x\":1}");
        assert!(!into.join("notes.txt").exists());
        assert!(chant::lexicon::steps::find(SNAPSHOT).is_some_and(|k| k.class == ClassKind::Mutating));
    }
}
