//! Project configuration: `chant.toml` at the project root, found by walking up from the
//! working directory, with `chant.workspace.json` beside it.
//!
//! Every relative path in it is anchored at the directory that holds it. Secrets never live in
//! it: a binding names the *variable* that holds a DSN, and `redact` names variables whose values
//! are removed from everything chant prints or records.
//!
//! ```toml
//! [project]
//! name = "chant-examples"
//! bin = "staging"              # optional: the project binary the stock `chant` runs
//!
//! [ledger]
//! remote = "origin"            # optional; without it the ledger and leases are local-only
//!
//! [env.staging]
//! files_root = "examples/estates/staging"
//! postgres_dsn_var = "STAGING_DATABASE_URL"
//! redact = ["STAGING_API_TOKEN"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file name chant looks for.
pub const FILE_NAME: &str = "chant.toml";

/// The file beside `chant.toml` that lists the workspace's members.
pub const WORKSPACE_FILE: &str = "chant.workspace.json";

/// Errors of [`Config::discover`] and [`Config::load`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No `chant.toml` in the directory or any parent.
    #[error("no {FILE_NAME} in {start} or any parent directory; create one at the project root (see the README)")]
    NotFound {
        /// Where the search started.
        start: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid configuration.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with line and column where known.
        message: String,
    },
}

/// `[project]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Project {
    /// The project's name (stamped into ownership markers).
    pub name: String,
    /// The project binary's bin target (`staging`): the stock `chant` builds and runs it for
    /// every command that needs the project's ops. A workspace member may name its own in
    /// `chant.workspace.json` (`"bin": "box"`).
    #[serde(default)]
    pub bin: Option<String>,
}

/// `[ledger]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerSection {
    /// The git remote the ledger and leases are pushed to; none means local-only.
    pub remote: Option<String>,
}

/// `[env.<name>]`: the bindings of one environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvBinding {
    /// The root of the files lexicon, relative to the project root.
    pub files_root: Option<String>,
    /// The name of the variable holding the PostgreSQL DSN.
    pub postgres_dsn_var: Option<String>,
    /// Names of variables whose values are redacted from output and records.
    #[serde(default)]
    pub redact: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    project: Project,
    #[serde(default)]
    ledger: LedgerSection,
    #[serde(default)]
    env: BTreeMap<String, EnvBinding>,
}

/// A loaded `chant.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The directory holding `chant.toml`: the project root.
    pub root: PathBuf,
    /// `[project]`.
    pub project: Project,
    /// `[ledger]`.
    pub ledger: LedgerSection,
    /// `[env.*]`, by env name.
    pub envs: BTreeMap<String, EnvBinding>,
}

impl Config {
    /// Finds `chant.toml` in `start` or its nearest ancestor and loads it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is none; otherwise as [`Config::load`].
    pub fn discover(start: &Path) -> Result<Config, Error> {
        let mut dir = Some(start);
        while let Some(d) = dir {
            let candidate = d.join(FILE_NAME);
            if candidate.is_file() {
                return Config::load(&candidate);
            }
            dir = d.parent();
        }
        Err(Error::NotFound { start: start.display().to_string() })
    }

    /// Loads the file at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Read`] or [`Error::Invalid`] (with the line, column and field).
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text =
            std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.display().to_string(), source })?;
        let raw: Raw = toml::from_str(&text).map_err(|e| Error::Invalid {
            path: path.display().to_string(),
            message: describe_toml_error(&text, &e),
        })?;
        for name in raw.env.keys() {
            if let Err(m) = crate::model::Name::parse("env name", name.as_str()) {
                return Err(Error::Invalid { path: path.display().to_string(), message: format!("[env.{name}]: {m}") });
            }
        }
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Config { root, project: raw.project, ledger: raw.ledger, envs: raw.env })
    }

    /// Returns the binding of `env`, if configured.
    pub fn env(&self, env: &str) -> Option<&EnvBinding> {
        self.envs.get(env)
    }

    /// Resolves a path relative to the project root.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Returns the names of every variable to redact, across envs, plus the DSN variables.
    pub fn secret_vars(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for b in self.envs.values() {
            v.extend(b.redact.iter().map(String::as_str));
            v.extend(b.postgres_dsn_var.as_deref());
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_owned();
    match e.span() {
        Some(span) => {
            let line = text.as_bytes()[..span.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join(FILE_NAME);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn discovers_from_a_subdirectory_and_anchors_paths() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "[project]\nname = \"p\"\n[env.staging]\nfiles_root = \"estates/staging\"\nredact = [\"TOKEN\"]\n",
        );
        let sub = d.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let c = Config::discover(&sub).unwrap();
        assert_eq!(c.root, d.path());
        assert_eq!(
            c.resolve(c.env("staging").unwrap().files_root.as_deref().unwrap()),
            d.path().join("estates/staging")
        );
        assert_eq!(c.ledger.remote, None);
        assert_eq!(c.secret_vars(), ["TOKEN"]);
    }

    #[test]
    fn unknown_fields_name_the_line() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "[project]\nname = \"p\"\n\n[env.staging]\nfile_root = \"x\"\n");
        let e = Config::load(&p).unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("file_root"), "{e}");
    }

    #[test]
    fn bad_env_names_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "[project]\nname = \"p\"\n[env.Staging]\n");
        assert!(Config::load(&p).unwrap_err().to_string().contains("[env.Staging]"));
    }

    #[test]
    fn missing_file_says_where_it_looked() {
        let d = tempfile::tempdir().unwrap();
        let e = Config::discover(d.path()).unwrap_err().to_string();
        assert!(e.contains("no chant.toml"), "{e}");
    }
}
