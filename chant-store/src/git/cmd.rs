//! The one place that runs the `git` binary: fetch, push and `gc --auto`, which gix cannot do
//! (or which git does better). Every child gets an explicit `--git-dir`, `-c core.fsmonitor=false`,
//! `LC_MESSAGES=C` (so the parsers in [`super::porcelain`] read English), `GIT_TERMINAL_PROMPT=0`,
//! batch-mode ssh, a null stdin and a timeout; variables that would point git at another
//! repository are removed. Non-zero exits of fetch and push are classified into outcomes; only a
//! git that cannot be run, or one that overruns its timeout, is an error.
//!
//! The arguments and environment are this module's; the child itself is a
//! [`crate::process::Command`] waited for by [`crate::process::capture`], so git runs in its own
//! process group and a timeout stops it together with the helpers it started (`ssh`,
//! `git-remote-https`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::process::{self, Input, Limits, Output};

use super::ObjectId;
use super::porcelain::{self, FetchFailure, PushRefusal, Version};

/// The oldest git chant drives: `fetch --no-write-fetch-head` needs 2.29;
/// `push --force-with-lease=<ref>:<expect>` (1.8.5) and `push --porcelain` (1.7) are older.
pub const MINIMUM_GIT_VERSION: Version = (2, 29, 0);

/// Variables removed from every git child, so that only `--git-dir` decides the repository.
const REPOSITORY_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "LC_ALL",
    "LANGUAGE",
];

/// What [`Git`] returns when git could not be run to completion.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The git binary could not be started.
    #[error("failed to run {program}")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it could not start.
        #[source]
        source: std::io::Error,
    },
    /// Git ran past its timeout and was killed.
    #[error("git {command} did not finish within {timeout:?} and was killed")]
    Timeout {
        /// The subcommand.
        command: String,
        /// The timeout.
        timeout: Duration,
    },
    /// Git exited non-zero where no outcome classification applies.
    #[error("git {command} failed: {message}")]
    Failed {
        /// The subcommand.
        command: String,
        /// Git's first error line.
        message: String,
    },
    /// `git version` printed something unparseable.
    #[error("failed to read the git version from {output:?}")]
    Version {
        /// What git printed.
        output: String,
    },
    /// The installed git is older than [`MINIMUM_GIT_VERSION`].
    #[error("git {found} is too old: chant needs git {}.{}.{} or newer", MINIMUM_GIT_VERSION.0, MINIMUM_GIT_VERSION.1, MINIMUM_GIT_VERSION.2)]
    TooOld {
        /// The version found, as printed.
        found: String,
    },
}

/// The result type of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How long a git that overran its timeout gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How `git fetch` of one reference ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The remote reference was copied to the local tracking reference.
    Updated,
    /// The remote has no such reference.
    Missing,
    /// The fetch failed (unknown or unreachable remote, refused connection), with git's words.
    Failed(String),
}

/// How `git push --force-with-lease` of one reference ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// The remote reference now holds what was pushed.
    Landed,
    /// The remote refused the update.
    Refused(PushRefusal),
    /// The push failed before the remote could decide (unreachable remote), with git's words.
    Failed(String),
}

/// One reference of a [`Git::push_many`]: set `remote_ref` to `new` (`None`: delete it) if and
/// only if the remote holds `expected` there (`None`: it does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The reference on the remote.
    pub remote_ref: String,
    /// What it should point at; `None` deletes it.
    pub new: Option<ObjectId>,
    /// What the remote must hold for the update to land.
    pub expected: Option<ObjectId>,
}

/// The repository [`Git::push_many`] pushes from, created on first use: a bare repository with no
/// references at `<common dir>/chant/push.git` that borrows the objects of the repository at
/// `git_dir` (`objects/info/alternates`) and includes its configuration (`include.path`, so its
/// remotes, URL rewrites, credentials and HTTP headers apply; `core.bare` stays true).
///
/// Why: git resolves each reference of a push against every local reference (six formatted
/// names per pair), so a push of K leases from a repository with R references costs K x R of
/// that before it connects: 1.9 s for 200 leases from a clone with 5,000 tags, 0.13 s from the
/// push directory (docs/operator.md). Its pushes read only objects, which the alternates lend.
///
/// `None` (push from the repository itself) when the repository's objects are not where a
/// plain or linked-worktree layout puts them, when its configuration names an object format
/// (the push directory would need the same one), or when the directory cannot be made.
pub(crate) fn push_dir(git_dir: &Path) -> Option<PathBuf> {
    let common = common_dir(git_dir);
    // Canonical, so that a linked worktree (whose `commondir` is reached through `..`) and the
    // main one name the same objects in the same words and do not remake each other's.
    let common = std::fs::canonicalize(common).ok()?;
    let dir = common.join("chant").join("push.git");
    let alternates = dir.join("objects").join("info").join("alternates");
    let objects = common.join("objects");
    let config = common.join("config");
    let lent = format!("{}\n", objects.to_str().filter(|p| !p.contains('\n'))?);
    match std::fs::read_to_string(&alternates) {
        Ok(text) if text == lent => return Some(dir),
        // Made for a repository that has since moved: made again below.
        Ok(_) => std::fs::remove_dir_all(&dir).ok()?,
        Err(_) => {}
    }
    let own = std::fs::read_to_string(&config).ok()?;
    if !objects.is_dir() || own.to_ascii_lowercase().contains("objectformat") {
        return None;
    }
    // The included file comes first, so that the `core` lines after it win.
    let quoted = config.to_str().filter(|p| !p.contains(['"', '\\', '\n']))?;
    // Made under a temporary name and renamed into place, so that a process racing this one
    // finds either nothing or the whole directory.
    let parent = dir.parent()?;
    std::fs::create_dir_all(parent).ok()?;
    let staging = tempfile::Builder::new().prefix(".push.git-").tempdir_in(parent).ok()?;
    let root = staging.path();
    let made = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(root.join("objects").join("info"))?;
        std::fs::create_dir_all(root.join("refs").join("heads"))?;
        std::fs::write(root.join("HEAD"), "ref: refs/heads/main\n")?;
        std::fs::write(
            root.join("config"),
            format!("[include]\n\tpath = \"{quoted}\"\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n"),
        )?;
        std::fs::write(root.join("objects").join("info").join("alternates"), &lent)
    })();
    made.ok()?;
    // Renamed, the staging directory is gone and its drop removes nothing; not renamed (another
    // process made the directory first, so `dir` is not empty), its drop removes it.
    match std::fs::rename(root, &dir) {
        Ok(()) => Some(dir),
        Err(_) if std::fs::read_to_string(&alternates).is_ok_and(|text| text == lent) => Some(dir),
        Err(_) => None,
    }
}

/// How many references one `git push` of [`Git::push_many`] carries at most (its command line
/// stays far below the kernel's argument limit).
const PUSH_CHUNK: usize = 500;

/// A git binary bound to one repository.
#[derive(Debug, Clone)]
pub struct Git {
    program: PathBuf,
    git_dir: PathBuf,
    timeout: Duration,
    env: Vec<(OsString, OsString)>,
}

impl Git {
    /// Runs `git` from `PATH` against `git_dir`, killing any run that takes longer than `timeout`.
    pub fn new(git_dir: &Path, timeout: Duration) -> Self {
        Self { program: PathBuf::from("git"), git_dir: git_dir.to_owned(), timeout, env: Vec::new() }
    }

    /// Runs `program` instead of the `git` found on `PATH`.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self
    }

    /// Adds variables to every child's environment (tests use this for a hermetic git).
    pub fn with_env(mut self, env: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        self.env.extend(env);
        self
    }

    /// The installed git's version, refused when older than [`MINIMUM_GIT_VERSION`].
    pub fn check_version(&self) -> Result<Version> {
        let output = self.run("version", &["version"])?;
        let version =
            porcelain::parse_version(&output.stdout).ok_or(Error::Version { output: output.stdout.clone() })?;
        if version < MINIMUM_GIT_VERSION {
            return Err(Error::TooOld { found: output.stdout.trim().to_owned() });
        }
        Ok(version)
    }

    /// Fetches `remote_ref` of `remote` (a configured remote name or a URL) into `local_ref`,
    /// forcing the local reference to whatever the remote holds.
    pub fn fetch_ref(&self, remote: &str, remote_ref: &str, local_ref: &str) -> Result<Fetched> {
        self.fetch_refspecs(remote, &[&format!("+{remote_ref}:{local_ref}")], false)
    }

    /// Pushes object `new` to `remote_ref` of `remote` if and only if the remote reference holds
    /// `expected` (`None`: does not exist). Hooks are not run.
    pub fn push_with_lease(
        &self,
        remote: &str,
        new: ObjectId,
        remote_ref: &str,
        expected: Option<ObjectId>,
    ) -> Result<Pushed> {
        let lease =
            format!("--force-with-lease={remote_ref}:{}", expected.map(|id| id.to_string()).unwrap_or_default());
        self.push_one(remote, remote_ref, &lease, &format!("{new}:{remote_ref}"))
    }

    /// Deletes `remote_ref` on `remote` if and only if it holds `expected`. Deleting a reference
    /// the remote does not have is reported by git as refused; callers that read the remote first
    /// only delete what they saw.
    pub fn push_delete_with_lease(&self, remote: &str, remote_ref: &str, expected: ObjectId) -> Result<Pushed> {
        let lease = format!("--force-with-lease={remote_ref}:{expected}");
        self.push_one(remote, remote_ref, &lease, &format!(":{remote_ref}"))
    }

    /// Pushes one `refspec` to `remote` under `lease` (hooks not run) and reads what became of
    /// `remote_ref` from `--porcelain`.
    fn push_one(&self, remote: &str, remote_ref: &str, lease: &str, refspec: &str) -> Result<Pushed> {
        let output = self.run("push", &["push", "--porcelain", "--no-verify", lease, "--", remote, refspec])?;
        let lines = porcelain::parse_push(&output.stdout);
        match lines.iter().find(|line| line.to == remote_ref) {
            Some(line) if line.landed() && output.success() => Ok(Pushed::Landed),
            Some(line) if !line.landed() => Ok(Pushed::Refused(porcelain::classify_refusal(line, &output.stderr))),
            _ => Ok(Pushed::Failed(porcelain::first_error_line(&output.stderr))),
        }
    }

    /// Fetches every refspec of `refspecs` (globs such as `+refs/chant/lease/*:refs/chant/lease-remote/*`
    /// allowed) from `remote` in one git process; with `prune`, local references matching a
    /// refspec's destination that the remote no longer has are removed.
    pub fn fetch_refspecs(&self, remote: &str, refspecs: &[&str], prune: bool) -> Result<Fetched> {
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--no-auto-maintenance",
        ];
        if prune {
            args.push("--prune");
        }
        args.extend(["--", remote]);
        args.extend(refspecs);
        let output = self.run("fetch", &args)?;
        Ok(fetched(&output))
    }

    /// Pushes every update of `updates` to `remote` in one non-atomic `git push`, each under its
    /// own `--force-with-lease=<ref>:<expected>`: the remote accepts or refuses each reference on
    /// its own. Returns the outcome of each update, in order. Hooks are not run.
    ///
    /// The push runs from this repository's push directory (`.git/chant/push.git`, a bare
    /// repository with no references that borrows this one's objects) when it has one: git
    /// matches every reference of a push against every local reference, so from the repository
    /// itself a push of K leases costs K times its reference count (tags, branches, lease copies).
    pub fn push_many(&self, remote: &str, updates: &[RefUpdate]) -> Result<Vec<Pushed>> {
        let push_from = push_dir(&self.git_dir).unwrap_or_else(|| self.git_dir.clone());
        let mut outcomes = Vec::with_capacity(updates.len());
        for chunk in updates.chunks(PUSH_CHUNK) {
            let leases: Vec<String> = chunk
                .iter()
                .map(|u| {
                    let expected = u.expected.map(|id| id.to_string()).unwrap_or_default();
                    format!("--force-with-lease={}:{expected}", u.remote_ref)
                })
                .collect();
            let refspecs: Vec<String> = chunk
                .iter()
                .map(|u| match u.new {
                    Some(new) => format!("{new}:{}", u.remote_ref),
                    None => format!(":{}", u.remote_ref),
                })
                .collect();
            let mut args = vec!["push", "--porcelain", "--no-verify"];
            args.extend(leases.iter().map(String::as_str));
            args.extend(["--", remote]);
            args.extend(refspecs.iter().map(String::as_str));
            let output = self.run_in(&push_from, "push", &args)?;
            let lines = porcelain::parse_push(&output.stdout);
            for update in chunk {
                let outcome = match lines.iter().find(|line| line.to == update.remote_ref) {
                    Some(line) if line.landed() => Pushed::Landed,
                    Some(line) => {
                        // The `remote:` lines of the other references say nothing of this one.
                        let own: String = output
                            .stderr
                            .lines()
                            .filter(|l| !l.starts_with("remote:") || l.contains(update.remote_ref.as_str()))
                            .map(|l| format!("{l}\n"))
                            .collect();
                        Pushed::Refused(porcelain::classify_refusal(line, &own))
                    }
                    None => Pushed::Failed(porcelain::first_error_line(&output.stderr)),
                };
                outcomes.push(outcome);
            }
        }
        Ok(outcomes)
    }

    /// Runs `git gc --auto --quiet`, which packs and prunes only when git's own thresholds say
    /// so, except for the count of packs: a ledger append writes a pack (merged sixteen at a time
    /// by the writing process), and `gc.autoPackLimit`'s answer to many packs is to repack
    /// everything into one, the whole history each time. Instead, when there are more than
    /// [`GEOMETRIC_AT`] packs, [`Git::roll_up`] runs on a thread of its own (one at a time per
    /// process), as `git gc --auto` detaches its own work by default (`gc.autoDetach`): the
    /// append that happened to be the one to run gc does not wait for it (about 0.2 s of git per
    /// few hundred appends, which a synchronous roll-up charged to that append). A failed
    /// roll-up changes nothing and is tried again at a later gc.
    pub fn gc_auto(&self) -> Result<()> {
        let output = self.run("gc", &["-c", "gc.autoPackLimit=0", "gc", "--auto", "--quiet"])?;
        if !output.success() {
            return Err(Error::Failed {
                command: "gc".to_owned(),
                message: porcelain::first_error_line(&output.stderr),
            });
        }
        if self.pack_count() > GEOMETRIC_AT {
            self.roll_up_beside();
        }
        Ok(())
    }

    /// Keeps the number of packs an append leaves behind small whether or not `git gc --auto`
    /// is due: a process that appends once (a tick run by cron) writes one pack and never merges
    /// its own, and a process opens every pack's index to look an object up, so packs left to
    /// the next gc (about one append in 256) cost every later process (a process tick over 253
    /// packs: 28 ms, over one: 16 ms). Past [`ROLL_UP_AT`] packs [`Git::roll_up`] starts on a
    /// thread of its own, as [`Git::gc_auto`]'s does; past [`ROLL_UP_NOW_AT`] (a process that
    /// exited before its thread got far, many times over) it runs here, before the append
    /// returns, unless this process's own roll-up is running. A failed roll-up changes nothing
    /// and is tried again by a later append.
    pub fn keep_packs_few(&self) {
        let count = self.pack_count();
        if count > ROLL_UP_NOW_AT {
            if !ROLLING_UP.swap(true, Ordering::SeqCst) {
                let _done = RollUpDone;
                let _ = self.roll_up();
            }
        } else if count > ROLL_UP_AT {
            self.roll_up_beside();
        }
    }

    /// How many packs the repository's object directory holds (0 when it cannot be read).
    fn pack_count(&self) -> usize {
        pack_count(&common_dir(&self.git_dir).join("objects/pack"))
    }

    /// Starts [`Git::roll_up`] on a thread of its own unless this process's roll-up is running.
    fn roll_up_beside(&self) {
        if ROLLING_UP.swap(true, Ordering::SeqCst) {
            return;
        }
        let git = self.clone();
        let spawned = std::thread::Builder::new().name("chant-git-roll-up".to_owned()).spawn(move || {
            let _done = RollUpDone;
            let _ = git.roll_up();
        });
        if spawned.is_err() {
            ROLLING_UP.store(false, Ordering::SeqCst);
        }
    }

    /// Rolls the repository's small packs up with `git repack -d -l --geometric=2` into a
    /// geometric progression of sizes, which costs what the small packs hold, not the history;
    /// on a git older than 2.32 (no geometric repack), `git gc --auto`'s own answer, everything
    /// in one.
    ///
    /// # Errors
    ///
    /// When git cannot be run or reports a failure.
    pub fn roll_up(&self) -> Result<()> {
        let geometric = self.run("repack", &["repack", "-d", "-l", "-q", "--geometric=2"])?;
        if !geometric.success() {
            let output = self.run("gc", &["gc", "--auto", "--quiet"])?;
            if !output.success() {
                let message = porcelain::first_error_line(&output.stderr);
                return Err(Error::Failed { command: "gc".to_owned(), message });
            }
        }
        Ok(())
    }

    /// Whether a roll-up started by [`Git::gc_auto`] in this process is still running.
    pub fn rolling_up() -> bool {
        ROLLING_UP.load(Ordering::SeqCst)
    }

    /// Runs git with `args` (after the fixed `--git-dir` and `-c` options) and captures its output.
    pub fn run(&self, command: &str, args: &[&str]) -> Result<Output> {
        self.run_in(&self.git_dir, command, args)
    }

    /// As [`Git::run`], against the repository at `git_dir`.
    fn run_in(&self, git_dir: &Path, command: &str, args: &[&str]) -> Result<Output> {
        let mut cmd = process::command(&self.program);
        cmd.arg("--git-dir").arg(git_dir).args(["-c", "core.fsmonitor=false"]).args(args);
        for name in REPOSITORY_VARIABLES {
            cmd.env_remove(name);
        }
        let ssh = match std::env::var_os("GIT_SSH_COMMAND") {
            Some(mut user) if !user.is_empty() => {
                user.push(" -o BatchMode=yes");
                user
            }
            _ => OsString::from("ssh -o BatchMode=yes"),
        };
        cmd.env("LC_MESSAGES", "C").env("GIT_TERMINAL_PROMPT", "0").env("GIT_SSH_COMMAND", ssh);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        let limits = Limits { timeout: self.timeout, grace: KILL_GRACE, max_output: None };
        let output = process::capture(&mut cmd, Input::default(), limits).map_err(|e| match e {
            process::Error::Spawn { source, .. } | process::Error::Wait { source, .. } => {
                Error::Spawn { program: self.program.display().to_string(), source }
            }
            // Not reached: git's output is not limited (`max_output: None`).
            e @ process::Error::TooMuchOutput { .. } => Error::Spawn {
                program: self.program.display().to_string(),
                source: std::io::Error::other(e.to_string()),
            },
        })?;
        if output.timed_out {
            return Err(Error::Timeout { command: command.to_owned(), timeout: self.timeout });
        }
        Ok(output)
    }
}

/// What a finished `git fetch` did: updated, or why not.
fn fetched(output: &Output) -> Fetched {
    if output.success() {
        return Fetched::Updated;
    }
    match porcelain::classify_fetch_failure(&output.stderr) {
        FetchFailure::MissingRemoteRef => Fetched::Missing,
        FetchFailure::Other(message) => Fetched::Failed(message),
    }
}

/// The common directory of the repository at `git_dir`: itself, or where its `commondir` file
/// points (a linked worktree's git directory).
fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => git_dir.join(text.trim_end_matches(['\n', '\r'])),
        Err(_) => git_dir.to_owned(),
    }
}

/// How many packs [`Git::gc_auto`] leaves alone; more are rolled up geometrically.
pub const GEOMETRIC_AT: usize = 8;

/// Whether a roll-up started by [`Git::gc_auto`] or [`Git::keep_packs_few`] is running in this
/// process.
static ROLLING_UP: AtomicBool = AtomicBool::new(false);

/// Packs past which an append starts a roll-up beside its work ([`Git::keep_packs_few`]).
pub const ROLL_UP_AT: usize = 16;

/// Packs past which an append rolls them up before it returns ([`Git::keep_packs_few`]).
pub const ROLL_UP_NOW_AT: usize = 32;

/// Lets the next append or gc start a roll-up however this one ends.
struct RollUpDone;

impl Drop for RollUpDone {
    fn drop(&mut self) {
        ROLLING_UP.store(false, Ordering::SeqCst);
    }
}

/// How many packs (`.idx` files) directory `pack_dir` holds; 0 when it cannot be read.
fn pack_count(pack_dir: &Path) -> usize {
    std::fs::read_dir(pack_dir)
        .map_or(0, |entries| entries.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".idx")).count())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A git directory's files as `push_dir` reads them: `objects/` and `config`.
    fn git_dir_with(dir: &Path, config: &str) {
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::write(dir.join("config"), config).unwrap();
    }

    #[test]
    fn a_linked_worktree_pushes_from_its_common_directorys_push_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let common = tmp.path().join("repo/.git");
        git_dir_with(&common, "[core]\n\tbare = false\n");
        let linked = common.join("worktrees/feature");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();

        let dir = push_dir(&linked).unwrap();
        assert_eq!(std::fs::canonicalize(&dir).unwrap(), std::fs::canonicalize(common.join("chant/push.git")).unwrap());
        let config = std::fs::read_to_string(dir.join("config")).unwrap();
        let include = config.find("[include]").unwrap();
        assert!(include < config.find("bare = true").unwrap(), "our core lines come after the include: {config}");
        let lent = std::fs::read_to_string(dir.join("objects/info/alternates")).unwrap();
        let from_main = push_dir(&common).unwrap();
        assert_eq!(
            std::fs::read_to_string(from_main.join("objects/info/alternates")).unwrap(),
            lent,
            "not made again from the main worktree"
        );
        assert_eq!(
            std::fs::canonicalize(from_main).unwrap(),
            std::fs::canonicalize(dir).unwrap(),
            "the same directory from the main worktree"
        );
    }

    #[test]
    fn a_repository_that_names_an_object_format_pushes_from_itself() {
        let tmp = tempfile::tempdir().unwrap();
        git_dir_with(tmp.path(), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n");
        assert_eq!(push_dir(tmp.path()), None);
        assert!(!tmp.path().join("chant/push.git").exists());
    }

    /// A stand-in for git: a shell script that ignores its arguments.
    fn fake_git(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("fake-git");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_git_that_overruns_its_timeout_is_killed() {
        let tmp = tempfile::tempdir().unwrap();
        let git = Git::new(tmp.path(), Duration::from_millis(200)).with_program(fake_git(tmp.path(), "exec sleep 30"));
        assert!(matches!(git.run("fetch", &[]), Err(Error::Timeout { .. })));
    }

    #[test]
    fn a_timeout_stops_git_together_with_the_helpers_it_started() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("helper.pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let git = Git::new(tmp.path(), Duration::from_millis(300)).with_program(fake_git(tmp.path(), &script));
        assert!(matches!(git.run("fetch", &[]), Err(Error::Timeout { .. })));
        // The helper was in git's process group, so it was stopped with it (gone, or a zombie
        // waiting for init to reap it).
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let stat = || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let dead = || stat().is_empty() || stat().rsplit(')').next().unwrap_or("").trim_start().starts_with('Z');
        while !dead() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(dead(), "git's helper outlived its timeout");
    }

    #[test]
    fn output_and_status_are_captured_with_a_null_stdin_and_c_messages() {
        let tmp = tempfile::tempdir().unwrap();
        let script =
            "read line || echo \"stdin closed\"; echo \"$LC_MESSAGES $GIT_TERMINAL_PROMPT\"; echo \"$@\" >&2; exit 3";
        let git = Git::new(Path::new("/repo.git"), Duration::from_secs(30)).with_program(fake_git(tmp.path(), script));
        let output = git.run("x", &["status"]).unwrap();
        assert_eq!(output.code, Some(3));
        assert_eq!(output.stdout, "stdin closed\nC 0\n");
        assert_eq!(output.stderr, "--git-dir /repo.git -c core.fsmonitor=false status\n");
    }

    #[test]
    fn an_old_git_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let git = Git::new(tmp.path(), Duration::from_secs(30));
        let old = git.clone().with_program(fake_git(tmp.path(), "echo git version 2.20.1"));
        assert!(matches!(old.check_version(), Err(Error::TooOld { .. })));
        let new = git.with_program(fake_git(tmp.path(), "echo git version 2.47.3"));
        assert_eq!(new.check_version().unwrap(), (2, 47, 3));
    }

    #[test]
    fn a_missing_git_is_a_spawn_error() {
        let git = Git::new(Path::new("/"), Duration::from_secs(30)).with_program("/nonexistent/git");
        assert!(matches!(git.run("version", &["version"]), Err(Error::Spawn { .. })));
    }
}
