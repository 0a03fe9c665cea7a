//! The build the macro runs in: the crate's package name and manifest directory, the export
//! directory (`CHANT_OPS_DIR`), whether a real compiler is invoking it, where a rule was written
//! (relative to the repository root), and which `chant.workspace.json` member owns the crate.
//!
//! Every read of the process environment goes through [`var`], so the one place that depends on
//! it is easy to audit (`clippy.toml` bans `std::env::var` elsewhere in this crate).

use std::path::{Component, Path, PathBuf};

use chant_core::rule::Source;
use proc_macro2::Span;

/// The name of the variable holding the export directory.
pub(crate) const OPS_DIR_VAR: &str = "CHANT_OPS_DIR";
/// The variable the stock `chant` sets to the workspace root of the checkout it builds in. Every
/// expansion that registers ops (and `main!`) reads it with `option_env!`, so rustc records it
/// and cargo rebuilds the crate when it changes: two checkouts of one project sharing a target
/// directory have the same unit hashes, and without it cargo would call one checkout's build
/// fresh in the other (its sources being older than that build).
pub(crate) const CHECKOUT_VAR: &str = "CHANT_CHECKOUT";
/// The workspace declaration a crate's member is read from.
pub(crate) const WORKSPACE_FILE: &str = "chant.workspace.json";

/// Reads one variable of the compiler's environment.
#[expect(clippy::disallowed_methods, reason = "the one tracked helper that reads the environment")]
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What the macro knows about the crate being compiled.
#[derive(Debug, Clone)]
pub(crate) struct BuildEnv {
    /// The package name (`CARGO_PKG_NAME`).
    pub(crate) package: String,
    /// The manifest directory (`CARGO_MANIFEST_DIR`), absolute.
    pub(crate) manifest_dir: Option<PathBuf>,
    /// The export directory, when set and when a real compiler invokes the macro.
    pub(crate) ops_dir: Option<PathBuf>,
    /// The crate's root source file, the `.rs` input on rustc's command line (absolute).
    pub(crate) crate_root: Option<PathBuf>,
}

/// A `chant.workspace.json` member that owns the crate.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// The member's name.
    pub(crate) name: String,
    /// The declaration file, tracked so an edit rebuilds the crate.
    pub(crate) file: PathBuf,
}

impl BuildEnv {
    /// Reads the build environment.
    pub(crate) fn read() -> Self {
        let cwd = std::env::current_dir().ok();
        let absolute = |p: PathBuf| match &cwd {
            Some(c) if p.is_relative() => c.join(p),
            _ => p,
        };
        // rust-analyzer and other hosts load the macro without a compiler's argv; only a real
        // rustc (which always passes `--out-dir`) may write exports.
        let real_rustc = std::env::args().any(|a| a == "--out-dir" || a.starts_with("--out-dir="));
        let crate_root = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with('-') && a.ends_with(".rs"))
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .map(absolute);
        BuildEnv {
            package: var("CARGO_PKG_NAME").unwrap_or_else(|| "unknown-crate".to_owned()),
            manifest_dir: var("CARGO_MANIFEST_DIR").map(PathBuf::from).map(absolute),
            ops_dir: var(OPS_DIR_VAR).filter(|_| real_rustc).map(PathBuf::from).map(absolute),
            crate_root,
        }
    }

    /// Returns the path an op's export goes to, when exports are on.
    pub(crate) fn export_path(&self, op: &str) -> Option<PathBuf> {
        self.ops_dir.as_ref().map(|d| d.join(&self.package).join(format!("{op}.json")))
    }

    /// Returns where the token at `span` was written: its file relative to the root of the git
    /// repository holding the crate (with `/` separators; relative to the manifest directory
    /// when the crate is in no repository, as a package from a registry is), and its 1-based
    /// line, so `git blame <file> -L <line>` run at the repository's root finds the rule.
    pub(crate) fn source(&self, span: Span) -> Source {
        let line = u32::try_from(span.start().line).unwrap_or(u32::MAX);
        let shown = span.file();
        let base = self.repo_root().or_else(|| self.manifest_dir.as_ref().map(|m| normalize(m)));
        let file = span
            .local_file()
            .and_then(|local| {
                let abs = if local.is_relative() { std::env::current_dir().ok()?.join(local) } else { local };
                let rel = normalize(&abs).strip_prefix(base.as_ref()?).ok()?.to_path_buf();
                Some(slashes(&rel))
            })
            .unwrap_or_else(|| shown.replace('\\', "/"));
        Source { file, line }
    }

    /// Returns the root of the git repository holding the crate: the nearest directory at or
    /// above the manifest directory that has a `.git` (a directory, or the file of a linked
    /// work tree or a submodule).
    pub(crate) fn repo_root(&self) -> Option<PathBuf> {
        let manifest = normalize(self.manifest_dir.as_ref()?);
        manifest.ancestors().find(|dir| dir.join(".git").exists()).map(Path::to_path_buf)
    }

    /// Finds the `chant.workspace.json` member whose directory holds the crate: the nearest
    /// declaration above the manifest directory (not above the repository root), and in it the
    /// deepest member directory containing the crate.
    ///
    /// # Errors
    ///
    /// Returns a message naming the file when a declaration exists but cannot be read.
    pub(crate) fn member(&self) -> Result<Option<Member>, String> {
        let Some(manifest) = self.manifest_dir.as_ref().map(|m| normalize(m)) else {
            return Ok(None);
        };
        for dir in manifest.ancestors() {
            let file = dir.join(WORKSPACE_FILE);
            if file.is_file() {
                return read_member(&file, dir, &manifest).map(|name| name.map(|name| Member { name, file }));
            }
            if dir.join(".git").exists() {
                break;
            }
        }
        Ok(None)
    }
}

fn read_member(file: &Path, root: &Path, manifest: &Path) -> Result<Option<String>, String> {
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "cannot read {}: {e}; an op records the workspace member that owns its crate, and chant does not guess it",
            file.display()
        )
    };
    let text = std::fs::read_to_string(file).map_err(|e| fail(&e))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| fail(&e))?;
    let Some(members) = doc.get("members").and_then(serde_json::Value::as_array) else {
        return Err(fail(&"it has no `members` array"));
    };
    let mut best: Option<(usize, String)> = None;
    for m in members {
        let (Some(name), Some(dir)) =
            (m.get("name").and_then(serde_json::Value::as_str), m.get("dir").and_then(serde_json::Value::as_str))
        else {
            return Err(fail(&"a member lacks a string `name` or `dir`"));
        };
        let dir = normalize(&root.join(dir));
        if manifest.starts_with(&dir) {
            let depth = dir.components().count();
            if best.as_ref().is_none_or(|(d, _)| depth > *d) {
                best = Some((depth, name.to_owned()));
            }
        }
    }
    Ok(best.map(|(_, name)| name))
}

/// Resolves `.` and `..` lexically (no file-system access).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn slashes(p: &Path) -> String {
    p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_relative_to_the_repository_root_and_to_the_manifest_outside_one() {
        let tmp = std::env::temp_dir().join(format!("chant-macros-root-{}", std::process::id()));
        let krate = tmp.join("repo/examples/site");
        std::fs::create_dir_all(&krate).unwrap();
        let env = |dir: &Path| BuildEnv {
            package: "site".into(),
            manifest_dir: Some(dir.to_path_buf()),
            ops_dir: None,
            crate_root: None,
        };
        assert_eq!(env(&krate).repo_root(), None, "no .git yet");
        std::fs::create_dir_all(tmp.join("repo/.git")).unwrap();
        assert_eq!(env(&krate).repo_root(), Some(tmp.join("repo")));
        // A linked work tree (or a submodule) has a `.git` file.
        std::fs::create_dir_all(tmp.join("wt/examples/site")).unwrap();
        std::fs::write(tmp.join("wt/.git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        assert_eq!(env(&tmp.join("wt/examples/site")).repo_root(), Some(tmp.join("wt")));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn normalize_resolves_dots() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }

    #[test]
    fn deepest_member_wins() {
        let dir = std::env::temp_dir().join(format!("chant-macros-member-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(WORKSPACE_FILE);
        std::fs::write(&file, r#"{"members":[{"name":"root","dir":"."},{"name":"box","dir":"examples/box"}]}"#)
            .unwrap();
        let got = read_member(&file, &dir, &dir.join("examples/box")).unwrap();
        assert_eq!(got.as_deref(), Some("box"));
        let got = read_member(&file, &dir, &dir.join("examples/staging")).unwrap();
        assert_eq!(got.as_deref(), Some("root"));
        std::fs::write(&file, "{").unwrap();
        assert!(read_member(&file, &dir, &dir).unwrap_err().contains(WORKSPACE_FILE));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
