//! The sandbox every test runs in: a temporary git repository with a `chant.toml` of the test's
//! own, the real binaries run as child processes in it with a hermetic environment, and readers
//! of what landed on the ledger.
//!
//! Hermetic means: each child starts from an empty environment plus `PATH`, a temporary `HOME`,
//! no system or global git configuration, a fixed author and committer, `USER=e2e-user`, and only
//! the variables the test passes. Nothing of the developer's (a `CHANT_NOW`, a `GIT_DIR`, a secret
//! in the shell) leaks in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use chant::ledger::{Ledger, LedgerConfig, Records, ShardKey};
use serde_json::Value;

/// The fixture's project binary.
pub(crate) const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-project");
/// The stock `chant` binary, built from `chant/src/bin/chant.rs` as a target of this package.
pub(crate) const STOCK: &str = env!("CARGO_BIN_EXE_e2e-stock-chant");

/// The ledger branch.
pub(crate) const BRANCH: &str = chant::ledger::BRANCH;

/// The identity and configuration every git child gets, ours and the binaries'.
fn git_vars(home: &Path) -> Vec<(String, String)> {
    let home = home.display().to_string();
    vec![
        ("HOME".into(), home.clone()),
        ("XDG_CONFIG_HOME".into(), home),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_AUTHOR_NAME".into(), "E2E Author".into()),
        ("GIT_AUTHOR_EMAIL".into(), "author@e2e.invalid".into()),
        ("GIT_AUTHOR_DATE".into(), "2026-01-01T00:00:00Z".into()),
        ("GIT_COMMITTER_NAME".into(), "E2E Committer".into()),
        ("GIT_COMMITTER_EMAIL".into(), "committer@e2e.invalid".into()),
        ("GIT_COMMITTER_DATE".into(), "2026-01-01T00:00:00Z".into()),
        ("LC_ALL".into(), "C".into()),
        ("USER".into(), "e2e-user".into()),
    ]
}

/// A command with an empty environment plus `PATH` and the hermetic git variables.
pub(crate) fn hermetic(program: &str, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.envs(git_vars(home));
    cmd.stdin(Stdio::null());
    cmd
}

/// How a child ended.
#[derive(Debug)]
pub(crate) struct Out {
    /// Its exit code (`-1` when a signal ended it).
    pub(crate) code: i32,
    /// Its stdout.
    pub(crate) stdout: String,
    /// Its stderr.
    pub(crate) stderr: String,
}

impl Out {
    fn from(output: Output) -> Out {
        Out {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub(crate) fn code(&self, want: i32) -> &Out {
        assert_eq!(self.code, want, "exit code\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        self
    }

    /// Parses the one JSON line `--json` printed on stdout.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        let lines: Vec<&str> = self.stdout.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "--json prints one line\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {}", lines[0]))
    }

    /// Returns stdout and stderr together.
    pub(crate) fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A temporary directory holding a `HOME` and one or more repositories.
pub(crate) struct Sandbox {
    tmp: tempfile::TempDir,
    /// The project repository (a work tree with one commit on `main`).
    pub(crate) dir: PathBuf,
}

impl Sandbox {
    /// Creates a sandbox whose project repository holds `chant_toml` as its `chant.toml`.
    pub(crate) fn new(chant_toml: &str) -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        let sandbox = Sandbox { dir: tmp.path().join("project"), tmp };
        sandbox.init_repo(&sandbox.dir);
        sandbox.write_config(chant_toml);
        sandbox
    }

    /// The temporary directory's root.
    pub(crate) fn root(&self) -> &Path {
        self.tmp.path()
    }

    /// The `HOME` every child gets.
    pub(crate) fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// Makes `dir` a work tree with one commit on `main`, as a user's project would be.
    pub(crate) fn init_repo(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        self.git(dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
        std::fs::write(dir.join("README.md"), "a chant project\n").unwrap();
        std::fs::write(dir.join(".gitignore"), "estates/\n").unwrap();
        self.git(dir, &["add", "README.md", ".gitignore"]);
        self.git(dir, &["commit", "-q", "-m", "initial"]);
    }

    /// Writes the project's `chant.toml`.
    pub(crate) fn write_config(&self, text: &str) {
        std::fs::write(self.dir.join("chant.toml"), text).unwrap();
    }

    /// A path under the project directory.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Runs git in `dir`, asserts it succeeded, and returns its stdout.
    #[track_caller]
    pub(crate) fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_out(dir, args);
        assert_eq!(out.code, 0, "git {args:?} in {}: {}", dir.display(), out.stderr);
        out.stdout
    }

    /// Runs git in `dir` and returns how it ended.
    pub(crate) fn git_out(&self, dir: &Path, args: &[&str]) -> Out {
        let mut cmd = hermetic("git", &self.home());
        cmd.arg("-C").arg(dir).args(args);
        Out::from(cmd.output().unwrap())
    }

    /// A command for `program` in `dir`, hermetic, with `vars` set.
    pub(crate) fn command(&self, program: &str, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Command {
        let mut cmd = hermetic(program, &self.home());
        cmd.current_dir(dir).args(args).envs(vars.iter().copied());
        cmd
    }

    /// Runs `program` in the project directory.
    pub(crate) fn run_in(&self, program: &str, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Out {
        Out::from(self.command(program, dir, args, vars).output().unwrap())
    }

    /// Runs the fixture's project binary in the project directory.
    pub(crate) fn project(&self, args: &[&str], vars: &[(&str, &str)]) -> Out {
        self.run_in(PROJECT, &self.dir, args, vars)
    }

    /// Runs the stock binary in the project directory.
    pub(crate) fn stock(&self, args: &[&str], vars: &[(&str, &str)]) -> Out {
        self.run_in(STOCK, &self.dir, args, vars)
    }

    /// Runs one tick of `op` with `--json`, asserts it exited 0, and returns its record.
    #[track_caller]
    pub(crate) fn tick(&self, op: &str, vars: &[(&str, &str)]) -> Value {
        self.project(&["tick", op, "--json"], vars).code(0).json()
    }

    /// The ledger branch's tip in `dir`, `None` when it does not exist.
    pub(crate) fn tip_of(&self, dir: &Path) -> Option<String> {
        let out = self.git_out(dir, &["rev-parse", "--verify", "-q", BRANCH]);
        (out.code == 0).then(|| out.stdout.trim().to_owned())
    }

    /// The project's ledger tip.
    pub(crate) fn tip(&self) -> Option<String> {
        self.tip_of(&self.dir)
    }

    /// Every line of every file on the ledger branch of `dir`, with its path.
    pub(crate) fn ledger_lines_of(&self, dir: &Path) -> Vec<(String, String)> {
        if self.tip_of(dir).is_none() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for path in self.git(dir, &["ls-tree", "-r", "--name-only", BRANCH]).lines() {
            let text = self.git(dir, &["show", &format!("{BRANCH}:{path}")]);
            out.extend(text.lines().map(|l| (path.to_owned(), l.to_owned())));
        }
        out
    }

    /// Opens the project's ledger through the library, with the hermetic git environment.
    pub(crate) fn ledger_of(&self, dir: &Path) -> Ledger {
        let git_env = git_vars(&self.home()).into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Ledger::open(dir, LedgerConfig { git_env, ..LedgerConfig::default() }).unwrap()
    }

    /// Every record of `key` in the project's ledger.
    pub(crate) fn records(&self, key: &ShardKey) -> Records {
        self.ledger_of(&self.dir).read(key).unwrap()
    }

    /// The readable records of `key`, as JSON values, oldest first.
    pub(crate) fn values(&self, key: &ShardKey) -> Vec<Value> {
        self.records(key).records.into_iter().map(|r| r.value).collect()
    }

    /// The mode bits of a file under the project.
    pub(crate) fn mode(&self, rel: &str) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(self.path(rel)).unwrap().permissions().mode() & 0o7777
    }

    /// The content of a file under the project.
    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }
}

/// Appends `line` to the file `path` of the ledger branch in a commit of its own, as a hand edit
/// (or a foreign writer) would, without touching HEAD, the index or the work tree.
pub(crate) fn plant(sandbox: &Sandbox, path: &str, line: &str) {
    let tip = sandbox.tip().unwrap();
    let mut content = sandbox.git(&sandbox.dir, &["show", &format!("{tip}:{path}")]);
    content.push_str(line);
    content.push('\n');
    let file = sandbox.root().join("planted");
    std::fs::write(&file, content).unwrap();
    let blob = sandbox.git(&sandbox.dir, &["hash-object", "-w", file.to_str().unwrap()]).trim().to_owned();
    let index = sandbox.root().join("planted-index");
    let with_index = |args: &[&str]| {
        let out = sandbox.run_in("git", &sandbox.dir, args, &[("GIT_INDEX_FILE", index.to_str().unwrap())]);
        out.code(0);
        out.stdout.trim().to_owned()
    };
    with_index(&["read-tree", &tip]);
    with_index(&["update-index", "--cacheinfo", &format!("100644,{blob},{path}")]);
    let tree = with_index(&["write-tree"]);
    let commit = sandbox.git(&sandbox.dir, &["commit-tree", &tree, "-p", &tip, "-m", "hand edit"]).trim().to_owned();
    sandbox.git(&sandbox.dir, &["update-ref", BRANCH, &commit, &tip]);
}

/// The one file of the ledger under `dir`.
pub(crate) fn shard(sandbox: &Sandbox, dir: &str) -> String {
    let files = sandbox.git(&sandbox.dir, &["ls-tree", "-r", "--name-only", BRANCH, &format!("{dir}/")]);
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].to_owned()
}

/// The key of `op`'s tick records in `env` (flat: the fixture belongs to no workspace member).
pub(crate) fn converge_key(env: &str, op: &str) -> ShardKey {
    ShardKey::converge(None, env, op).unwrap()
}

/// The key of `op`'s run records in `env`.
pub(crate) fn run_key(env: &str, op: &str) -> ShardKey {
    ShardKey::run(None, Some(env), op).unwrap()
}

/// The key of `op`'s gate facts.
pub(crate) fn gate_key(op: &str) -> ShardKey {
    ShardKey::gate(None, op).unwrap()
}

/// The key of the files applies of `env`.
pub(crate) fn apply_key(env: &str) -> ShardKey {
    ShardKey::apply(None, env, chant::lexicon::files::COMPONENT).unwrap()
}

/// The outcome of `rule` in a tick record.
#[track_caller]
pub(crate) fn outcome<'a>(tick: &'a Value, rule: &str) -> &'a Value {
    tick["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["ruleId"] == rule)
        .unwrap_or_else(|| panic!("no outcome for rule {rule}: {tick}"))
}

/// The `action` of every outcome, by rule id, in record order.
pub(crate) fn actions(tick: &Value) -> Vec<(String, String)> {
    tick["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["ruleId"].as_str().unwrap().to_owned(), o["action"].as_str().unwrap().to_owned()))
        .collect()
}

/// The summary line of a tick record.
pub(crate) fn log(tick: &Value) -> &str {
    tick["log"].as_str().unwrap()
}

/// A sandbox whose `chant.toml` binds `envs` and names `origin` as the ledger's remote, a bare
/// repository at `<root>/remote.git` the project's `main` (with that `chant.toml`) was pushed
/// to. Returns the sandbox and the bare repository's path.
pub(crate) fn with_bare_remote(envs: &[&str]) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new(&format!("{}\n[ledger]\nremote = \"origin\"\n", config_with_roots(envs)));
    let bare = sandbox.root().join("remote.git");
    sandbox.git(sandbox.root(), &["-c", "init.defaultBranch=main", "init", "-q", "--bare", "remote.git"]);
    let dir = &sandbox.dir;
    sandbox.git(dir, &["add", "chant.toml"]);
    sandbox.git(dir, &["commit", "-q", "-m", "chant.toml with a remote"]);
    sandbox.git(dir, &["remote", "add", "origin", bare.to_str().unwrap()]);
    sandbox.git(dir, &["push", "-q", "origin", "main"]);
    (sandbox, bare)
}

/// A `chant.toml` binding each of `envs` to `estates/<env>`.
pub(crate) fn config_with_roots(envs: &[&str]) -> String {
    let mut s = String::from("[project]\nname = \"e2e\"\n");
    for env in envs {
        s.push_str(&format!("\n[env.{env}]\nfiles_root = \"estates/{env}\"\n"));
    }
    s
}
