//! The git-test helper of the ledger tests: the only place these tests spawn git. Every git
//! child, ours and the library's (through `LedgerConfig::git_env`), runs without system or user
//! configuration, with a temporary HOME and a fixed author and committer.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use chant::ledger::{Ledger, LedgerConfig, ShardKey};

/// Variables that would point git at another repository or configuration.
const REMOVED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_SSH_COMMAND",
];

fn home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// The environment every git child of these tests gets.
pub(crate) fn hermetic_env() -> Vec<(OsString, OsString)> {
    let home = home().as_os_str().to_owned();
    let fixed = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", "Test Author"),
        ("GIT_AUTHOR_EMAIL", "author@example.invalid"),
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
        ("GIT_COMMITTER_NAME", "Test Committer"),
        ("GIT_COMMITTER_EMAIL", "committer@example.invalid"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
    ];
    let mut env: Vec<(OsString, OsString)> = fixed.iter().map(|(k, v)| (k.into(), v.into())).collect();
    env.push(("HOME".into(), home.clone()));
    env.push(("XDG_CONFIG_HOME".into(), home));
    env
}

/// Runs git in `dir` and returns its output, whatever the exit status.
pub(crate) fn git_output(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    for name in REMOVED {
        cmd.env_remove(name);
    }
    cmd.envs(hermetic_env()).env("LC_MESSAGES", "C").env_remove("LC_ALL");
    cmd.output().unwrap()
}

/// Runs git in `dir`, asserts it succeeded, and returns its stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_output(dir, args);
    assert!(
        output.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A work tree with one commit on `main`, as a user's project would be.
pub(crate) fn project(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(dir.join("README.md"), "project\n").unwrap();
    git(&dir, &["add", "README.md"]);
    git(&dir, &["commit", "-q", "-m", "initial"]);
    dir
}

/// A bare repository to act as the remote.
pub(crate) fn bare(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    git(parent, &["-c", "init.defaultBranch=main", "init", "-q", "--bare", name]);
    dir
}

/// A local-only ledger configuration with a hermetic git.
pub(crate) fn local_config() -> LedgerConfig {
    LedgerConfig { git_env: hermetic_env(), git_timeout: Duration::from_secs(60), ..LedgerConfig::default() }
}

/// A configuration that synchronises with `remote`.
pub(crate) fn remote_config(remote: &str) -> LedgerConfig {
    LedgerConfig { remote: Some(remote.to_owned()), ..local_config() }
}

/// Opens the ledger of `dir`.
pub(crate) fn open(dir: &Path, config: LedgerConfig) -> Ledger {
    Ledger::open(dir, config).unwrap()
}

/// A record line with a writer and a counter, keys in byte order.
pub(crate) fn record(op: &str, writer: &str, n: usize) -> String {
    format!(r#"{{"n":{n},"op":"{op}","version":1,"writer":"{writer}"}}"#)
}

/// The converge key of `op` in `staging`, flat.
pub(crate) fn converge(op: &str) -> ShardKey {
    ShardKey::converge(None, "staging", op).unwrap()
}

/// The `(writer, n)` pairs of every record of `key`, oldest first.
pub(crate) fn written(ledger: &Ledger, key: &ShardKey) -> Vec<(String, u64)> {
    let records = ledger.read(key).unwrap();
    assert!(records.unreadable.is_empty(), "{:?}", records.unreadable);
    records
        .records
        .iter()
        .map(|r| (r.value["writer"].as_str().unwrap().to_owned(), r.value["n"].as_u64().unwrap()))
        .collect()
}

/// Lines of a file on a branch of the repository in `dir`.
pub(crate) fn show_lines(dir: &Path, rev_path: &str) -> Vec<String> {
    git(dir, &["show", rev_path]).lines().map(str::to_owned).collect()
}
