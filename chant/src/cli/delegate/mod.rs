//! Delegation: the stock `chant` binary hands every command that needs the project's ops to the
//! project binary, so the seed's commands (`chant run staging-converge`, `chant operator --once`)
//! work as written in any project.
//!
//! Inside a project (a `chant.toml` above the working directory), the stock binary finds the
//! project binaries ([`locate`]), builds the ones that are missing or older than their sources
//! ([`build`]), and `exec`s the one that carries the command with the same arguments, so exit
//! codes, output and signals are exactly the project binary's. `CHANT_PROJECT_BIN=<path>` skips
//! finding and building. With several project binaries (workspace members with bins of their
//! own), `run`/`tick` go to the binary that carries the op (and say which when two do), and
//! `operator` runs one child operator per binary with its lines prefixed by the member
//! (`fanout`). Outside any project nothing is delegated and the stock binary says what it
//! looked for.

pub mod build;
mod fanout;
pub mod locate;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use self::locate::{BinTarget, Metadata};
use super::{CommandError, Exit};

/// The variable naming a project binary to run instead of finding and building one.
pub const PROJECT_BIN_VAR: &str = "CHANT_PROJECT_BIN";

/// The errors of delegating a command. Returned by [`resolve`] and [`carrying`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The working directory is in no project.
    #[error("no chant.toml in {start} or any parent directory, so there is no project binary to run")]
    NotInProject {
        /// Where the search started.
        start: PathBuf,
    },
    /// The project has no Cargo workspace to build a project binary from.
    #[error("no Cargo.toml in {} or any parent directory, so there is no project binary to build", root.display())]
    NoWorkspace {
        /// The project root.
        root: PathBuf,
    },
    /// `chant.toml` is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::Error),
    /// A binary just built could not be bound to this checkout's path.
    #[error("cannot link the project binary {} to {}", from.display(), to.display())]
    Bind {
        /// Cargo's binary.
        from: PathBuf,
        /// This checkout's path for it.
        to: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `cargo metadata` failed.
    #[error("cannot read the workspace with `cargo metadata` in {dir}: {message}")]
    Metadata {
        /// Where it ran.
        dir: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `chant.workspace.json` is not valid.
    #[error("{}: {message}", path.display())]
    Workspace {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A configured bin is no bin target of the workspace.
    #[error("the project binary `{bin}` is no bin target of this workspace (bins of packages depending on chant: {})", known.join(", "))]
    UnknownBin {
        /// The configured name.
        bin: String,
        /// The candidates there are.
        known: Vec<String>,
    },
    /// Nothing names a project binary and the workspace has no candidate.
    #[error(
        "no project binary: no package of the workspace at {} depending on chant has a bin target; add a bin with `chant::main!()` (see docs/first-project.md)",
        root.display()
    )]
    NoCandidate {
        /// The workspace root.
        root: PathBuf,
    },
    /// Nothing names a project binary and the workspace has several candidates.
    #[error(
        "several bin targets could be the project binary: {}; name one in chant.toml under [project]: `bin = \"<name>\"`",
        candidates.join(", ")
    )]
    Ambiguous {
        /// `name (package)` of each.
        candidates: Vec<String>,
    },
    /// cargo could not be started.
    #[error("cannot start cargo to build the project binary")]
    Cargo {
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The build failed (its output was shown).
    #[error("building the project binary failed (`{command}`)")]
    BuildFailed {
        /// The cargo command line.
        command: String,
    },
    /// No project binary carries the op.
    #[error("no project binary carries an op named `{op}` (asked: {})", bins.join(", "))]
    OpNotFound {
        /// The op.
        op: String,
        /// The binaries asked.
        bins: Vec<String>,
    },
    /// Several project binaries carry the op.
    #[error("the op `{op}` is in several project binaries ({}); run it with one of them: {}", bins.join(", "), bins.iter().map(|b| format!("`{b} run {op}`")).collect::<Vec<_>>().join(" or "))]
    OpAmbiguous {
        /// The op.
        op: String,
        /// The binaries that carry it.
        bins: Vec<String>,
    },
    /// A project binary could not be asked for its ops.
    #[error("cannot list the ops of {}: {message}", path.display())]
    Query {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// A project binary, built and ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectBin {
    /// The bin target's name (or the file name of `CHANT_PROJECT_BIN`).
    pub name: String,
    /// The member it belongs to, when `chant.workspace.json` says.
    pub member: Option<String>,
    /// The executable.
    pub path: PathBuf,
}

impl ProjectBin {
    /// Returns the prefix its lines get when several binaries run at once: the member, else the
    /// bin's name.
    pub fn label(&self) -> &str {
        self.member.as_deref().unwrap_or(&self.name)
    }
}

/// Finds the project binaries of the project around `cwd` and builds the stale ones.
///
/// # Errors
///
/// [`Error::NotInProject`] outside any project, [`Error::NoWorkspace`] in a project with no Cargo
/// workspace (the stock binary then answers itself); every other [`Error`] names what is wrong.
pub fn resolve(cwd: &Path, release: bool) -> Result<Vec<ProjectBin>, Error> {
    if let Some(path) = std::env::var_os(PROJECT_BIN_VAR).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(vec![ProjectBin { name, member: None, path }]);
    }
    // The stock binary does not link the project's lexicons, so it cannot tell their binding keys
    // from misspelt ones: the project binary it hands over to checks them.
    let config = match crate::config::Config::discover_any_bindings(cwd) {
        Ok(c) => c,
        Err(crate::config::Error::NotFound { .. }) => return Err(Error::NotInProject { start: cwd.to_path_buf() }),
        Err(e) => return Err(e.into()),
    };
    if !config.root.ancestors().any(|d| d.join("Cargo.toml").is_file()) {
        return Err(Error::NoWorkspace { root: config.root.clone() });
    }
    let metadata = metadata(&config.root)?;
    let targets = locate::targets(&config, &metadata)?;
    let newest = build::newest_source(&metadata);
    // This checkout's own copy is what is fresh or not: cargo's shared path may hold the build of
    // another checkout that shares the target directory.
    let stale: Vec<&BinTarget> = targets
        .iter()
        .filter(|t| !build::is_fresh(&build::checkout_binary_path(&metadata, &t.name, release), newest))
        .collect();
    build::build(&config.root, &stale, release)?;
    for t in &stale {
        build::bind(&metadata, &t.name, release)?;
    }
    Ok(targets
        .into_iter()
        .map(|t| ProjectBin {
            path: build::checkout_binary_path(&metadata, &t.name, release),
            name: t.name,
            member: t.member,
        })
        .collect())
}

/// Reads the workspace around `dir` with `cargo metadata --no-deps`.
fn metadata(dir: &Path) -> Result<Metadata, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut spec = crate::process::Spec::new(&cargo);
    spec.args = ["metadata", "--no-deps", "--format-version", "1"].map(String::from).to_vec();
    spec.cwd = Some(dir.to_path_buf());
    spec.timeout = std::time::Duration::from_secs(120);
    let out =
        crate::process::run(&spec).map_err(|e| Error::Metadata { dir: dir.to_path_buf(), message: e.to_string() })?;
    if !out.success() {
        let message = crate::redact::sanitise(&out.stderr);
        return Err(Error::Metadata { dir: dir.to_path_buf(), message });
    }
    serde_json::from_str(&out.stdout).map_err(|e| Error::Metadata { dir: dir.to_path_buf(), message: e.to_string() })
}

/// Returns the binary among `bins` that carries `op`; with one binary, that one (it says so
/// itself when it does not).
///
/// # Errors
///
/// [`Error::OpNotFound`], [`Error::OpAmbiguous`], or [`Error::Query`] when a binary cannot list
/// its ops.
pub fn carrying<'a>(bins: &'a [ProjectBin], op: &str) -> Result<&'a ProjectBin, Error> {
    if let [one] = bins {
        return Ok(one);
    }
    let mut found = Vec::new();
    for b in bins {
        let mut spec = crate::process::Spec::new(&b.path);
        spec.args = vec!["ops".into(), "--json".into()];
        spec.timeout = std::time::Duration::from_secs(60);
        let out =
            crate::process::run(&spec).map_err(|e| Error::Query { path: b.path.clone(), message: e.to_string() })?;
        if !out.success() {
            return Err(Error::Query { path: b.path.clone(), message: crate::redact::sanitise(&out.stderr) });
        }
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        let ops: Vec<Named> = serde_json::from_str(out.stdout.trim())
            .map_err(|e| Error::Query { path: b.path.clone(), message: e.to_string() })?;
        if ops.iter().any(|o| o.name == op) {
            found.push(b);
        }
    }
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::OpNotFound { op: op.to_owned(), bins: bins.iter().map(|b| b.name.clone()).collect() }),
        many => Err(Error::OpAmbiguous { op: op.to_owned(), bins: many.iter().map(|b| b.name.clone()).collect() }),
    }
}

/// Replaces this process with `bin` run with `args`; returns only when that fails, with why.
pub fn exec(bin: &ProjectBin, args: &[OsString]) -> CommandError {
    let err = crate::process::command(&bin.path).args(args).exec();
    CommandError::usage_with(format!("cannot run the project binary {}", bin.path.display()), err)
}

/// Runs one operator per binary, their lines prefixed, until all have stopped.
///
/// # Errors
///
/// A [`CommandError`] when the stop signals cannot be caught or an operator cannot start.
pub fn operator(bins: &[ProjectBin], args: &[OsString]) -> Result<Exit, CommandError> {
    fanout::run(bins, args)
}

/// How long a reader of a child's output is waited for once the child has exited: a pipe that a
/// detached grandchild (a daemon the child started) still holds may never close.
pub(crate) const DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// A thread reading a child's output, which says when it is done.
pub(crate) struct Reader {
    done: std::sync::mpsc::Receiver<()>,
    handle: std::thread::JoinHandle<()>,
}

/// Runs `read` (a loop over a child's pipe) on a thread of its own.
pub(crate) fn reader(read: impl FnOnce() + Send + 'static) -> Reader {
    let (tx, done) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        read();
        let _ = tx.send(());
    });
    Reader { done, handle }
}

/// Joins each of `readers` that ends within [`DRAIN`] (one deadline for all); the others are
/// left behind: their pipes are held by something that outlived the child, and this process is
/// about to exit.
pub(crate) fn drain(readers: impl IntoIterator<Item = Reader>) {
    let deadline = std::time::Instant::now() + DRAIN;
    for r in readers {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if !matches!(r.done.recv_timeout(left), Err(std::sync::mpsc::RecvTimeoutError::Timeout)) {
            let _ = r.handle.join();
        }
    }
}
