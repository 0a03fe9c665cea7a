//! `init [DIR] [--env NAME] [--name NAME] [--chant SOURCE]`: a new project that builds and ticks
//! on its first `cargo run`.
//!
//! It writes a package depending on chant's facade (`chant = { package = "chant-ops", ... }`: a
//! version, a path or a git repository, as `--chant` says; by default the source this binary was
//! built from, see [`ChantSource::built_from`]), a library declaring one files env and the
//! ConvergeOp that keeps it converged, the project binary (`chant::main!()`), a one-tick binary
//! (`cargo run`'s default), `chant.toml`, `.gitignore` and `.cargo/config.toml`, and runs
//! `git init` when the directory is in no repository. It never overwrites a file: a target that
//! exists is a usage error naming it. `docs/first-project.md` walks through what is generated.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::error::println;
use super::{CommandError, Exit};
use crate::model::Name;

/// The facade's package name, which the generated `Cargo.toml` renames to `chant`.
const FACADE_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// Create a new chant project that builds and ticks on the first `cargo run`
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project's directory (created when missing; default: the working directory).
    pub dir: Option<PathBuf>,
    /// The env the project declares and converges.
    #[arg(long, default_value = "dev")]
    pub env: String,
    /// The package and project name (default: the directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Where the chant dependency comes from: `VERSION`, `path:DIR` (or a bare `DIR`) or
    /// `git:URL[#REV]` (default: the source this binary was built from).
    #[arg(long, value_name = "SOURCE")]
    pub chant: Option<String>,
    /// Print what was written as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Where the generated package's chant dependency comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChantSource {
    /// A registry version requirement (`chant = { package = "chant-ops", version = "0.1.0" }`).
    Version(String),
    /// A local checkout of the facade crate (`chant = { package = "chant-ops", path = "..." }`).
    Path(PathBuf),
    /// A git repository, optionally at a revision (`chant = { package = "chant-ops", git = "..." }`).
    Git {
        /// The repository's URL.
        url: String,
        /// The revision, when given after `#`.
        rev: Option<String>,
    },
}

/// Why a `--chant` value is not a chant source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChantSourceError {
    /// `path:` with nothing after it.
    #[error("--chant path: needs a directory (`--chant path:../chant`)")]
    NoDirectory,
    /// `git:` with no URL.
    #[error("--chant git: needs a URL (`--chant git:https://host/chant.git#v0.1.0`)")]
    NoUrl,
    /// Neither form nor a version requirement.
    #[error("--chant `{0}` is neither a version, a directory (`path:DIR`, `./DIR`) nor `git:URL[#REV]`")]
    Unrecognised(String),
}

impl ChantSource {
    /// Parses `--chant`: `path:DIR`, `git:URL[#REV]`, a version, or a bare directory (a value
    /// holding a `/` or starting with `.` or `~`, such as `../chant`).
    ///
    /// # Errors
    ///
    /// A [`ChantSourceError`] naming the flag when the value is empty or not one of the forms.
    pub fn parse(text: &str) -> Result<Self, ChantSourceError> {
        if let Some(dir) = text.strip_prefix("path:") {
            if dir.is_empty() {
                return Err(ChantSourceError::NoDirectory);
            }
            return Ok(ChantSource::Path(PathBuf::from(dir)));
        }
        if let Some(url) = text.strip_prefix("git:") {
            let (url, rev) = match url.split_once('#') {
                Some((u, r)) => (u, Some(r.to_owned()).filter(|r| !r.is_empty())),
                None => (url, None),
            };
            if url.is_empty() {
                return Err(ChantSourceError::NoUrl);
            }
            return Ok(ChantSource::Git { url: url.to_owned(), rev });
        }
        if text.contains('/') || text.starts_with('.') || text.starts_with('~') {
            return Ok(ChantSource::Path(PathBuf::from(text)));
        }
        let version_like = !text.is_empty()
            && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '=' | '^' | '~' | '*'));
        if version_like {
            Ok(ChantSource::Version(text.to_owned()))
        } else {
            Err(ChantSourceError::Unrecognised(text.to_owned()))
        }
    }

    /// The source this binary was built from, `init`'s default: the facade's directory when it
    /// is a checkout that still holds the facade's `Cargo.toml`; this version from the registry
    /// when it was built from the registry (`cargo install`); `None` when the checkout is gone.
    pub fn built_from() -> Option<ChantSource> {
        Self::built_from_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
    }

    fn built_from_dir(dir: &Path) -> Option<ChantSource> {
        let from_registry = dir
            .components()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w[0].as_os_str() == "registry" && w[1].as_os_str() == "src");
        if from_registry {
            return Some(ChantSource::Version(env!("CARGO_PKG_VERSION").to_owned()));
        }
        facade_dir(dir).map(ChantSource::Path)
    }

    /// The dependency line of the generated `Cargo.toml`.
    pub fn dependency(&self) -> String {
        let package = toml_str(FACADE_PACKAGE);
        match self {
            ChantSource::Version(v) => format!("chant = {{ package = {package}, version = {} }}", toml_str(v)),
            ChantSource::Path(p) => {
                format!("chant = {{ package = {package}, path = {} }}", toml_str(&p.display().to_string()))
            }
            ChantSource::Git { url, rev: None } => {
                format!("chant = {{ package = {package}, git = {} }}", toml_str(url))
            }
            ChantSource::Git { url, rev: Some(r) } => {
                format!("chant = {{ package = {package}, git = {}, rev = {} }}", toml_str(url), toml_str(r))
            }
        }
    }

    /// Says in words where the dependency comes from, for `init`'s output.
    pub fn describe(&self) -> String {
        match self {
            ChantSource::Version(v) => format!("{FACADE_PACKAGE} {v} from the registry"),
            ChantSource::Path(p) => format!("the checkout at {}", p.display()),
            ChantSource::Git { url, rev: None } => format!("the git repository {url}"),
            ChantSource::Git { url, rev: Some(r) } => format!("the git repository {url} at {r}"),
        }
    }
}

/// The facade's directory at or under `dir`: `dir` itself when its `Cargo.toml` is the facade's
/// package, else its `chant/` (a checkout's workspace root names its facade directory that way).
fn facade_dir(dir: &Path) -> Option<PathBuf> {
    [dir.to_owned(), dir.join("chant")]
        .into_iter()
        .find(|d| package_name(&d.join("Cargo.toml")).as_deref() == Some(FACADE_PACKAGE))
}

/// The `[package] name` of the manifest at `manifest`, when it is one.
fn package_name(manifest: &Path) -> Option<String> {
    let table: toml::Table = std::fs::read_to_string(manifest).ok()?.parse().ok()?;
    Some(table.get("package")?.get("name")?.as_str()?.to_owned())
}

/// A TOML basic string (the JSON escape rules are a subset TOML accepts).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// What `init` generates: the names it fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaffold {
    /// The package and project name (`[a-z][a-z0-9-]*`).
    pub name: Name,
    /// The env it declares.
    pub env: Name,
    /// The chant dependency.
    pub chant: ChantSource,
}

impl Scaffold {
    /// The library's crate name (`my-estate` -> `my_estate`), what a bin's `use` line names.
    pub fn lib(&self) -> String {
        self.name.as_str().replace('-', "_")
    }

    /// The one-tick binary's name, `cargo run`'s default.
    pub fn tick_bin(&self) -> String {
        format!("{}-converge", self.name.as_str())
    }

    /// The files to write, as (path relative to the project root, content), in writing order.
    pub fn files(&self) -> Vec<(String, String)> {
        let (name, env, lib, tick_bin) = (self.name.as_str(), self.env.as_str(), self.lib(), self.tick_bin());
        let env_fn = env.replace('-', "_");
        let vars = |t: &str| {
            t.replace("{name}", name)
                .replace("{env_fn}", &env_fn)
                .replace("{env}", env)
                .replace("{lib}", &lib)
                .replace("{tick_bin}", &tick_bin)
                .replace("{chant_dep}", &self.chant.dependency())
        };
        vec![
            ("Cargo.toml".into(), vars(CARGO_TOML)),
            ("chant.toml".into(), vars(CHANT_TOML)),
            (".gitignore".into(), GITIGNORE.into()),
            (".cargo/config.toml".into(), CARGO_CONFIG.into()),
            ("src/lib.rs".into(), vars(LIB_RS)),
            (format!("src/bin/{name}.rs"), vars(PROJECT_BIN)),
            (format!("src/bin/{tick_bin}.rs"), vars(TICK_BIN)),
        ]
    }
}

const CARGO_TOML: &str = r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false
# `cargo run` ticks the `{env}` env once; `cargo run --bin {name} -- <command>` is the full CLI.
default-run = "{tick_bin}"

[dependencies]
{chant_dep}
# The runtime, the files lexicon and the command line are always there. Optional parts, each a
# feature on the line above (`features = ["postgres", "serve"]`):
#   "postgres"  the PostgreSQL lexicon: tables, columns and roles, observed and applied
#   "box"       box services: observe, restart and apply them through the sprite-env supervisor
#   "serve"     `chant serve`: the read-only web dashboard over the ledger
#   "metrics"   `operator --metrics-addr`: Prometheus metrics, /healthz and /readyz
#   "notify"    the operator's notifications to webhooks and commands
#   "import"    `chant import --from`: Rust declarations written from a live estate
#   "search"    `chant search`: resources across the envs' live estates by kind or name glob
#   "watch"     the operator wakes as soon as a watched files root changes (inotify)
#   "tls"       https:// URLs for http_check, notifications and approvals

# A project of its own, even when it sits inside another cargo workspace.
[workspace]

# Small, quick debug builds: line tables for your own code (backtraces keep file and line), no
# debug info for dependencies.
[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
"#;

const CHANT_TOML: &str = r#"# chant's configuration of this project. Relative paths are anchored at this directory; secrets
# never live here, only the names of variables that hold them.

[project]
name = "{name}"
# The project binary the stock `chant` builds and runs for commands that need the ops.
bin = "{name}"

# Binds the `{env}` env, declared in src/lib.rs, to a directory (git-ignored).
[env.{env}]
files_root = "estates/{env}"
"#;

const GITIGNORE: &str = "/target\n/estates\n";

const CARGO_CONFIG: &str = r#"# Where `cargo build` exports each op's op.json, for reading and review.
[env]
CHANT_OPS_DIR = { value = "target/chant/ops", relative = true }
"#;

const LIB_RS: &str = r#"//! The {name} project: what the `{env}` env contains, and the ops that keep it converged.

use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;

/// What the `{env}` env contains: files under its `files_root` (bound in chant.toml).
pub fn {env_fn}() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file(
        "hello.txt",
        "hello from chant; edits are reverted on the next tick\n",
        0o644,
    ))
}

// Registers the declaration under the env's name; ticks, `lifecycle diff` and `apply` find it.
chant::lexicon::inventory::submit! { DeclaredEnv::new("{env}", {env_fn}) }

op! {
    name: "{env}-apply",
    overview: "Apply the {env} declaration.",
    env: "{env}",
    phases: [ phase("Apply", [ apply(env = "{env}") ]) ],
}

converge_op! {
    name: "{env}-converge",
    env: "{env}",
    dial: apply,
    rules: [
        when!(eq(status, "unrecorded") => run("{env}-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply establishes the estate."),
        when!(eq(status, "drifted") => run("{env}-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}
"#;

const PROJECT_BIN: &str = r#"//! The {name} project binary: the full chant command line over the project's ops
//! (`cargo run --bin {name} -- ops`).

// Links the library, whose ops and declarations register themselves; without a use of the crate
// the linker would leave it out and this binary would carry no ops.
use {lib} as _;

chant::main!();
"#;

const TICK_BIN: &str = r#"//! `cargo run`: one tick of `{env}-converge` (any subcommand of the project binary works too).

// Links the library, whose ops and declarations register themselves.
use {lib} as _;

chant::main!(default = tick("{env}-converge"));
"#;

/// What `init` did: its `--json` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Initialised {
    /// The document's version.
    pub version: u32,
    /// The project's root.
    pub root: PathBuf,
    /// The project name.
    pub project: String,
    /// The declared env.
    pub env: String,
    /// The chant dependency, as the generated `Cargo.toml` spells it.
    pub chant: String,
    /// The files written, relative to the root.
    pub files: Vec<String>,
    /// Whether `git init` ran (the directory was in no repository).
    pub git_init: bool,
}

/// Runs `init`.
pub fn cmd_init(args: &InitArgs) -> Result<Exit, CommandError> {
    let cwd = super::working_dir()?;
    let root = match &args.dir {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => cwd.join(d),
        None => cwd,
    };
    let name_text = match &args.name {
        Some(n) => n.clone(),
        None => dir_name(&root)?,
    };
    let name = Name::parse("project name", name_text.as_str())
        .map_err(|e| CommandError::usage(e).hint("name it with --name (lowercase letters, digits and `-`)"))?;
    let env = Name::parse("env name", args.env.as_str())?;
    let chant = match &args.chant {
        Some(s) => ChantSource::parse(s)?,
        None => ChantSource::built_from().ok_or_else(|| {
            CommandError::usage(format!(
                "this chant was built from {}, which no longer holds chant's source",
                env!("CARGO_MANIFEST_DIR")
            ))
            .hint("say where chant comes from: --chant path:DIR (a checkout), --chant git:URL[#REV] or --chant VERSION")
        })?,
    };
    let chant = match chant {
        ChantSource::Path(p) => ChantSource::Path(absolute(&p, &super::working_dir()?)?),
        other => other,
    };
    let scaffold = Scaffold { name, env, chant };
    let files = scaffold.files();
    let existing: Vec<&str> = files.iter().filter(|(p, _)| root.join(p).exists()).map(|(p, _)| p.as_str()).collect();
    if !existing.is_empty() {
        return Err(CommandError::usage(format!(
            "{} already holds {}; chant init never overwrites a file",
            root.display(),
            existing.join(", ")
        ))
        .hint("pick an empty or new directory: `chant init <dir>`"));
    }
    for (path, text) in &files {
        write_new(&root.join(path), text)?;
    }
    let git_init = if crate::git::SharedRepo::discover(&root, std::time::Duration::from_secs(1)).is_err() {
        git_init(&root)?;
        true
    } else {
        false
    };
    let done = Initialised {
        version: 1,
        root: root.clone(),
        project: scaffold.name.as_str().to_owned(),
        env: scaffold.env.as_str().to_owned(),
        chant: scaffold.chant.dependency(),
        files: files.into_iter().map(|(p, _)| p).collect(),
        git_init,
    };
    if args.json {
        let line = super::error::to_json(&done, "the answer")?;
        println(&line)?;
        return Ok(Exit::Done);
    }
    println(&format!("created project {} in {}", done.project, root.display()))?;
    println(&format!("  chant: {} ({})", scaffold.chant.describe(), scaffold.chant.dependency()))?;
    for f in &done.files {
        println(&format!("  {f}"))?;
    }
    if git_init {
        println("  (git init: the ledger lives on this repository's chant/lifecycle branch)")?;
    }
    let cd = args.dir.as_ref().map(|d| format!("cd {} && ", d.display())).unwrap_or_default();
    println(&format!("next: {cd}cargo run    # builds, then ticks env {} once", done.env))?;
    Ok(Exit::Done)
}

/// The last component of `root`, the default project name.
fn dir_name(root: &Path) -> Result<String, CommandError> {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CommandError::usage(format!("{} has no name to take", root.display())).hint("pass --name"))
}

fn absolute(p: &Path, cwd: &Path) -> Result<PathBuf, CommandError> {
    let expanded = match (p.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => p.to_owned(),
    };
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    let canonical =
        joined.canonicalize().map_err(|e| CommandError::usage_with(format!("--chant {}", p.display()), e))?;
    facade_dir(&canonical).ok_or_else(|| {
        CommandError::usage(format!(
            "--chant {} holds no {FACADE_PACKAGE} package (neither its Cargo.toml nor chant/Cargo.toml names it)",
            p.display()
        ))
        .hint("name a checkout of chant (its root or its chant/ directory): --chant path:../chant")
    })
}

fn write_new(path: &Path, text: &str) -> Result<(), CommandError> {
    use std::io::Write;
    let fail = |e: std::io::Error| CommandError::failed_with(format!("cannot write {}", path.display()), e);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(fail)?;
    f.write_all(text.as_bytes()).map_err(fail)
}

fn git_init(root: &Path) -> Result<(), CommandError> {
    let mut spec = crate::process::Spec::new("git");
    spec.args = vec!["init".into(), "-q".into()];
    spec.env = vec![("GIT_TERMINAL_PROMPT".into(), "0".into())];
    spec.cwd = Some(root.to_owned());
    spec.timeout = std::time::Duration::from_secs(30);
    match crate::process::run(&spec) {
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(CommandError::failed(format!(
            "git init in {} failed: {}",
            root.display(),
            crate::redact::sanitise(&out.stderr)
        ))),
        Err(e) => Err(CommandError::failed_with(format!("cannot run git init in {}", root.display()), e)),
    }
}

/// The hint for a project binary that carries no ops: almost always a bin that never names its
/// library, so the linker left the library's ops and declarations out. Names the library (from
/// the nearest `Cargo.toml` above the working directory) and the bin when it can.
pub fn no_ops_hint() -> String {
    let bin = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "<bin>".into());
    let lib = std::env::current_dir().ok().and_then(|d| package_lib(&d)).unwrap_or_else(|| "<your_lib>".into());
    format!(
        "add `use {lib} as _;` to src/bin/{bin}.rs: a bin links its library's ops only when it names the library (see docs/first-project.md)"
    )
}

/// The library crate name of the package whose `Cargo.toml` is nearest above `dir`.
fn package_lib(dir: &Path) -> Option<String> {
    let name = dir.ancestors().find_map(|d| package_name(&d.join("Cargo.toml")))?;
    Some(name.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaffold(chant: ChantSource) -> Scaffold {
        Scaffold {
            name: Name::parse("project name", "my-estate").unwrap(),
            env: Name::parse("env name", "dev-a").unwrap(),
            chant,
        }
    }

    #[test]
    fn the_chant_flag_takes_a_version_a_path_or_a_git_url_and_refuses_anything_else() {
        assert_eq!(ChantSource::parse("0.1.0"), Ok(ChantSource::Version("0.1.0".into())));
        assert_eq!(ChantSource::parse("path:../chant"), Ok(ChantSource::Path("../chant".into())));
        assert_eq!(
            ChantSource::parse("git:https://h/c.git#v1"),
            Ok(ChantSource::Git { url: "https://h/c.git".into(), rev: Some("v1".into()) })
        );
        for bare in ["../chant", "./chant", "/src/chant", "~/src/chant", "chant/"] {
            assert_eq!(ChantSource::parse(bare), Ok(ChantSource::Path(bare.into())), "{bare:?}");
        }
        for bad in ["", "path:", "git:", "a b"] {
            assert!(ChantSource::parse(bad).is_err(), "{bad:?} accepted");
        }
        let git = ChantSource::Git { url: "https://h/c.git".into(), rev: Some("v1".into()) };
        assert_eq!(git.dependency(), r#"chant = { package = "chant-ops", git = "https://h/c.git", rev = "v1" }"#);
        assert_eq!(
            ChantSource::Version("0.1.0".into()).dependency(),
            r#"chant = { package = "chant-ops", version = "0.1.0" }"#
        );
    }

    #[test]
    fn the_default_source_is_the_checkout_this_binary_was_built_from_or_the_registry_version() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(ChantSource::built_from(), Some(ChantSource::Path(here.to_owned())));
        let workspace_root = here.parent().unwrap();
        assert_eq!(ChantSource::built_from_dir(workspace_root), Some(ChantSource::Path(workspace_root.join("chant"))));
        let gone = tempfile::tempdir().unwrap();
        assert_eq!(ChantSource::built_from_dir(&gone.path().join("chant")), None);
        let registry = Path::new("/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/chant-ops-0.1.0");
        assert_eq!(ChantSource::built_from_dir(registry), Some(ChantSource::Version(env!("CARGO_PKG_VERSION").into())));
    }

    /// Every optional part the generated `Cargo.toml` lists is a feature of the facade, and every
    /// feature but the default `cli`, the `full` bundle and the internal `fuzz` is listed.
    #[test]
    fn the_generated_feature_list_names_the_facades_features() {
        let manifest: toml::Table =
            toml::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap())
                .unwrap();
        let features = manifest["features"].as_table().unwrap();
        let listed: Vec<&str> =
            CARGO_TOML.lines().filter_map(|l| l.strip_prefix("#   \"")).filter_map(|l| l.split('"').next()).collect();
        assert!(!listed.is_empty());
        for f in &listed {
            assert!(features.contains_key(*f), "the template lists {f:?}, which is no feature");
        }
        for f in features.keys().filter(|f| !matches!(f.as_str(), "default" | "cli" | "full" | "fuzz")) {
            assert!(listed.contains(&f.as_str()), "feature {f:?} is not listed in the template");
        }
    }

    #[test]
    fn the_generated_files_name_the_lib_in_each_bin_and_parse_as_toml() {
        let s = scaffold(ChantSource::Path("/src/chant".into()));
        let files = s.files();
        let get = |p: &str| files.iter().find(|(f, _)| f == p).map(|(_, t)| t.clone()).unwrap_or_default();
        for bin in ["src/bin/my-estate.rs", "src/bin/my-estate-converge.rs"] {
            assert!(get(bin).contains("use my_estate as _;"), "{bin}");
        }
        assert!(get("src/bin/my-estate-converge.rs").contains(r#"tick("dev-a-converge")"#));
        assert!(get("src/lib.rs").contains(r#"DeclaredEnv::new("dev-a", dev_a)"#));
        let cargo: toml::Table = toml::from_str(&get("Cargo.toml")).unwrap();
        assert_eq!(cargo["dependencies"]["chant"]["path"].as_str(), Some("/src/chant"));
        assert_eq!(cargo["dependencies"]["chant"]["package"].as_str(), Some("chant-ops"));
        assert_eq!(cargo["profile"]["dev"]["debug"].as_str(), Some("line-tables-only"));
        assert_eq!(cargo["package"]["default-run"].as_str(), Some("my-estate-converge"));
        let chant: toml::Table = toml::from_str(&get("chant.toml")).unwrap();
        assert_eq!(chant["env"]["dev-a"]["files_root"].as_str(), Some("estates/dev-a"));
        for key in ["{name}", "{env}", "{env_fn}", "{lib}", "{tick_bin}", "{chant_dep}"] {
            assert!(files.iter().all(|(_, t)| !t.contains(key)), "{key} left in a generated file");
        }
    }
}
