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
//! git_timeout = "60s"          # optional: how long one git fetch or push may run (default 60s)
//!
//! [env.staging]
//! files_root = "examples/estates/staging"
//! postgres_dsn_var = "STAGING_DATABASE_URL"
//! redact = ["STAGING_API_TOKEN"]
//!
//! [notify]                     # optional: the operator's notifications
//! timeout = "5s"               # per sink and event; default 5s
//! unknown_ticks = 3            # `unknown` is sent after this many unknown ticks in a row
//!
//! [[notify.webhook]]
//! url_var = "CHANT_NOTIFY_URL" # the variable holding the URL (never the URL itself)
//!
//! [[notify.command]]
//! cmd = "./scripts/page-oncall.sh"   # run by `sh -c`, the event as JSON on stdin
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

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
    /// The lexicons linked into this binary are inconsistent (two of one name, a key declared
    /// twice).
    #[error(transparent)]
    Registry(#[from] chant_lexicon::RegistryError),
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
    /// How long one git child (a fetch or push of the ledger or a lease) may run before it is
    /// killed and the record is kept locally (`30s`); default 60 s. Checked when loaded.
    #[serde(default)]
    pub git_timeout: Option<String>,
}

impl LedgerSection {
    /// The configured `git_timeout`, `None` when unset (it was checked when the file was loaded,
    /// so a value that does not parse is `None` too).
    pub fn git_timeout(&self) -> Option<std::time::Duration> {
        self.git_timeout.as_deref().and_then(|t| chant_lexicon::duration::parse(t).ok()).filter(|d| !d.is_zero())
    }

    /// The ledger configuration this section gives, over `base`.
    pub fn ledger_config(&self, base: chant_store::ledger::LedgerConfig) -> chant_store::ledger::LedgerConfig {
        let git_timeout = self.git_timeout().unwrap_or(base.git_timeout);
        chant_store::ledger::LedgerConfig { remote: self.remote.clone(), git_timeout, ..base }
    }
}

/// `[gates]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatesSection {
    /// The allowed-signers file (the format `ssh-keygen -Y verify` reads), relative to the
    /// project root: a sealed gate opens only on an approval signed by a key it lists for the
    /// approval's signer.
    pub allowed_signers: Option<String>,
}

/// `[env.<name>]`: the bindings of one environment: chant's own `redact`, and the values of the
/// binding keys the registered lexicons declare (see [`chant_lexicon::binding`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvBinding {
    /// The values of the lexicons' binding keys, by key.
    values: BTreeMap<String, String>,
    /// Names of variables whose values are redacted from output and records.
    pub redact: Vec<String>,
}

impl EnvBinding {
    /// Returns the value bound to `key` (`files_root`), as written.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Returns every lexicon binding value, by key.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}

/// `[notify]`: where the operator sends notifications, and when.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySection {
    /// How long one sink may take for one event (`5s`); default 5 s.
    pub timeout: Option<String>,
    /// After how many consecutive `unknown` ticks `unknown` is sent; default 3.
    pub unknown_ticks: Option<u64>,
    /// `[[notify.webhook]]`: JSON POSTed to the URL held by a variable.
    #[serde(default)]
    pub webhook: Vec<WebhookSink>,
    /// `[[notify.command]]`: a command given the event as JSON on stdin.
    #[serde(default)]
    pub command: Vec<CommandSink>,
}

impl NotifySection {
    /// Whether it names any sink (a webhook or a command): a section with none sends nothing.
    pub fn configures_a_sink(&self) -> bool {
        !self.webhook.is_empty() || !self.command.is_empty()
    }
}

/// `[[notify.webhook]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSink {
    /// The name of the variable holding the URL (a URL may carry a token, so it is never
    /// written in the file).
    pub url_var: String,
}

/// `[[notify.command]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSink {
    /// The command, run by `sh -c` in the project root with a minimal environment.
    pub cmd: String,
}

/// `[ci]`: what `ci cronjob` puts in the schedulers it generates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CiSection {
    /// The container image holding the project binary and a clone of the repository, for the
    /// Kubernetes CronJobs `ci cronjob` writes (`--image` overrides it).
    pub image: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    project: Project,
    #[serde(default)]
    ledger: LedgerSection,
    #[serde(default)]
    gates: GatesSection,
    #[serde(default)]
    env: BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>,
    #[serde(default)]
    notify: NotifySection,
    #[serde(default)]
    ci: CiSection,
}

/// Which `[env.<name>]` keys a load accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// Only `redact` and the keys of the lexicons registered in this binary.
    Registered,
    /// Any key (for commands that read only `[project]` and `[ledger]`).
    Any,
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
    /// `[gates]`.
    pub gates: GatesSection,
    /// `[env.*]`, by env name.
    pub envs: BTreeMap<String, EnvBinding>,
    /// The variables to redact, sorted and distinct.
    secret_vars: Vec<String>,
    /// `[notify]`.
    pub notify: NotifySection,
    /// `[ci]`.
    pub ci: CiSection,
}

impl Config {
    /// Finds `chant.toml` in `start` or its nearest ancestor and loads it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when there is none; otherwise as [`Config::load`].
    pub fn discover(start: &Path) -> Result<Config, Error> {
        Config::load_checked(&find(start)?, Keys::Registered)
    }

    /// Finds and loads `chant.toml` like [`Config::discover`], accepting any key under
    /// `[env.<name>]`: for commands that read only `[project]` and `[ledger]` and may run in a
    /// binary that does not link the project's lexicons (the stock `chant`), which could not tell
    /// a misspelt key from a key of a lexicon it lacks.
    ///
    /// # Errors
    ///
    /// As [`Config::discover`], except for unknown binding keys.
    pub fn discover_any_bindings(start: &Path) -> Result<Config, Error> {
        Config::load_checked(&find(start)?, Keys::Any)
    }

    /// Loads the file at `path`. Under `[env.<name>]` it accepts `redact` and exactly the binding
    /// keys of the lexicons registered in this binary.
    ///
    /// # Errors
    ///
    /// [`Error::Read`] or [`Error::Invalid`] (with the line, column and field; an unknown binding
    /// key names the env and the known keys); [`Error::Registry`] when the registered lexicons
    /// are inconsistent.
    pub fn load(path: &Path) -> Result<Config, Error> {
        Config::load_checked(path, Keys::Registered)
    }

    fn load_checked(path: &Path, keys: Keys) -> Result<Config, Error> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: shown.clone(), source })?;
        Config::parse(path, &text, keys)
    }

    /// Parses `text`, the content of `chant.toml` at `path`, checking binding keys as `keys` says
    /// (the fuzz target passes [`Keys::Any`]).
    pub fn parse(path: &Path, text: &str, keys: Keys) -> Result<Config, Error> {
        let shown = path.display().to_string();
        let raw: Raw = toml::from_str(text)
            .map_err(|e| Error::Invalid { path: shown.clone(), message: describe_toml_error(text, &e) })?;
        if let Some(t) = &raw.ledger.git_timeout {
            match chant_lexicon::duration::parse(t) {
                Ok(d) if !d.is_zero() => {}
                Ok(_) => {
                    return Err(Error::Invalid {
                        path: shown,
                        message: format!("[ledger] git_timeout = {t:?} is zero; give a duration such as \"60s\""),
                    });
                }
                Err(e) => {
                    return Err(Error::Invalid {
                        path: shown,
                        message: format!(
                            "[ledger] git_timeout = {t:?} is not a duration ({e}); write one such as \"60s\""
                        ),
                    });
                }
            }
        }
        let registered = match (keys, chant_lexicon::registry::binding_keys()) {
            (_, Ok(registered)) => registered,
            (Keys::Registered, Err(e)) => return Err(Error::Registry(e)),
            (Keys::Any, Err(_)) => Vec::new(),
        };
        let mut envs = BTreeMap::new();
        let mut secret_vars = Vec::new();
        for (name, table) in raw.env {
            if let Err(m) = chant_lexicon::model::Name::parse("env name", name.as_str()) {
                return Err(Error::Invalid { path: shown, message: format!("[env.{name}]: {m}") });
            }
            let invalid = |value: &Spanned<toml::Value>, what: String| Error::Invalid {
                path: shown.clone(),
                message: format!("line {}: [env.{name}] {what}", line_of(text, value.span().start)),
            };
            let mut binding = EnvBinding::default();
            for (key, value) in table {
                if key == chant_lexicon::registry::REDACT_KEY {
                    binding.redact = string_list(value.get_ref())
                        .ok_or_else(|| invalid(&value, format!("{key} must be an array of variable names")))?;
                    continue;
                }
                let declared = registered.iter().find(|(_, k)| k.name == key);
                if declared.is_none() && keys == Keys::Registered {
                    return Err(invalid(&value, unknown_key(&key, &registered)));
                }
                let Some(bound) = value.get_ref().as_str() else {
                    return Err(invalid(&value, format!("{key} must be a string")));
                };
                if declared.is_some_and(|(_, k)| k.kind == chant_lexicon::BindingKind::SecretVar) {
                    secret_vars.push(bound.to_owned());
                }
                binding.values.insert(key, bound.to_owned());
            }
            secret_vars.extend(binding.redact.iter().cloned());
            envs.insert(name, binding);
        }
        secret_vars.sort_unstable();
        secret_vars.dedup();
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Config {
            root,
            project: raw.project,
            ledger: raw.ledger,
            gates: raw.gates,
            envs,
            secret_vars,
            notify: raw.notify,
            ci: raw.ci,
        })
    }

    /// Returns the binding of `env`, if configured.
    pub fn env(&self, env: &str) -> Option<&EnvBinding> {
        self.envs.get(env)
    }

    /// Resolves a path relative to the project root.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Returns the names of every variable to redact, across envs: those under `redact`, and
    /// every value of a binding key that names a secret variable (`postgres_dsn_var`).
    pub fn secret_vars(&self) -> Vec<&str> {
        self.secret_vars.iter().map(String::as_str).collect()
    }
}

/// Returns the directory of the `chant.toml` that holds `start` (the project root).
///
/// # Errors
///
/// As [`Config::discover_any_bindings`].
pub fn project_root(start: &Path) -> Result<PathBuf, Error> {
    Config::discover_any_bindings(start).map(|c| c.root)
}

fn find(start: &Path) -> Result<PathBuf, Error> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let candidate = d.join(FILE_NAME);
        if candidate.is_file() {
            return Ok(candidate);
        }
        dir = d.parent();
    }
    Err(Error::NotFound { start: start.display().to_string() })
}

fn string_list(value: &toml::Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

fn unknown_key(key: &str, registered: &[(&str, chant_lexicon::BindingKey)]) -> String {
    let mut known: Vec<String> = registered.iter().map(|(lexicon, k)| format!("{} ({lexicon})", k.name)).collect();
    known.push(chant_lexicon::registry::REDACT_KEY.to_owned());
    let names = registered.iter().map(|(_, k)| k.name).chain([chant_lexicon::registry::REDACT_KEY]);
    let meant = chant_lexicon::model::contract::did_you_mean(key, names)
        .map(|m| format!(" (did you mean `{m}`?)"))
        .unwrap_or_default();
    format!(
        "unknown key `{key}`{meant}: the keys an env binds here are {} (the keys of a lexicon this binary does not \
         link are not listed)",
        known.join(", ")
    )
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_owned();
    match e.span() {
        Some(span) => format!("line {}: {msg}", line_of(text, span.start)),
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
        assert_eq!(c.resolve(c.env("staging").unwrap().get("files_root").unwrap()), d.path().join("estates/staging"));
        assert_eq!(c.ledger.remote, None);
        assert_eq!(c.secret_vars(), ["TOKEN"]);
    }

    #[test]
    fn git_timeout_is_a_nonzero_duration_and_reaches_the_ledger_config() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "[project]\nname = \"p\"\n[ledger]\ngit_timeout = \"3s\"\n");
        let c = Config::load(&p).unwrap();
        let base = chant_store::ledger::LedgerConfig::default();
        assert_eq!(c.ledger.ledger_config(base).git_timeout, std::time::Duration::from_secs(3));
        for bad in ["0s", "soon"] {
            let p = write(d.path(), &format!("[project]\nname = \"p\"\n[ledger]\ngit_timeout = \"{bad}\"\n"));
            let e = Config::load(&p).unwrap_err().to_string();
            assert!(e.contains("[ledger] git_timeout") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn unknown_fields_name_the_line() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "[project]\nname = \"p\"\n\n[env.staging]\nfile_root = \"x\"\n");
        let e = Config::load(&p).unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("file_root"), "{e}");
        assert!(e.contains("unknown key `file_root` (did you mean `files_root`?)"), "{e}");
    }

    #[test]
    fn an_unknown_binding_key_names_the_file_the_env_and_the_known_keys() {
        let d = tempfile::tempdir().unwrap();
        let p =
            write(d.path(), "[project]\nname = \"p\"\n\n[env.staging]\nfiles_root = \"x\"\njsondocs_root = \"y\"\n");
        let e = Config::load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&p.display().to_string()), "{e}");
        assert!(e.contains("line 6: [env.staging] unknown key `jsondocs_root`"), "{e}");
        assert!(e.contains("files_root (files)") && e.contains("redact"), "{e}");
        // A command that reads only [project] and [ledger] accepts keys it cannot check.
        let lenient = Config::discover_any_bindings(d.path()).unwrap();
        assert_eq!(lenient.env("staging").unwrap().get("jsondocs_root"), Some("y"));
        assert_eq!(project_root(d.path()).unwrap(), d.path());
    }

    #[test]
    fn values_are_strings_and_redact_is_a_list() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "[project]\nname = \"p\"\n[env.a]\nfiles_root = 3\n");
        assert!(Config::load(&p).unwrap_err().to_string().contains("line 4: [env.a] files_root must be a string"));
        let p = write(d.path(), "[project]\nname = \"p\"\n[env.a]\nredact = \"TOKEN\"\n");
        assert!(Config::load(&p).unwrap_err().to_string().contains("redact must be an array of variable names"));
    }

    #[test]
    fn secret_variables_are_the_redact_lists_and_the_secret_bindings() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "[project]\nname = \"p\"\n[env.a]\npostgres_dsn_var = \"A_URL\"\nredact = [\"T\"]\n[env.b]\nfiles_root = \"B\"\n",
        );
        let c = Config::load(&p).unwrap();
        assert_eq!(c.secret_vars(), ["A_URL", "T"], "a files root is not a secret");
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
