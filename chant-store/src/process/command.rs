//! The builder of every child process: a thin wrapper over `std::process::Command` that only
//! this module can create, whose [`Command::spawn`] gives the child a clean signal state.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// A child process to start: program, arguments, environment, working directory, stdio and
/// process group. Stdin is the null device unless set; stdout and stderr are inherited unless
/// set.
#[derive(Debug)]
pub struct Command {
    inner: std::process::Command,
}

/// Creates a command running `program` (a path, or a name looked up on `PATH`): the start of
/// every child process chant runs.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    Command::create(program)
}

impl Command {
    #[expect(
        clippy::disallowed_methods,
        reason = "the one place chant creates a std Command: every child is built here and spawned by Command::spawn"
    )]
    fn create(program: impl AsRef<OsStr>) -> Self {
        let mut inner = std::process::Command::new(program);
        inner.stdin(Stdio::null());
        Command { inner }
    }

    /// Adds one argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.inner.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.inner.args(args);
        self
    }

    /// Sets one environment variable.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.inner.env(key, value);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.inner.envs(vars);
        self
    }

    /// Removes one environment variable.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.inner.env_remove(key);
        self
    }

    /// Starts the child from an empty environment (plus what [`Command::env`] sets).
    pub fn env_clear(&mut self) -> &mut Self {
        self.inner.env_clear();
        self
    }

    /// Sets the working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.inner.current_dir(dir);
        self
    }

    /// Sets stdin.
    pub fn stdin(&mut self, stdin: impl Into<Stdio>) -> &mut Self {
        self.inner.stdin(stdin);
        self
    }

    /// Sets stdout.
    pub fn stdout(&mut self, stdout: impl Into<Stdio>) -> &mut Self {
        self.inner.stdout(stdout);
        self
    }

    /// Sets stderr.
    pub fn stderr(&mut self, stderr: impl Into<Stdio>) -> &mut Self {
        self.inner.stderr(stderr);
        self
    }

    /// Makes the child the leader of a process group of its own, so [`super::Group`] can stop it
    /// with everything it started, and a terminal's Ctrl-C does not reach it.
    pub fn own_group(&mut self) -> &mut Self {
        self.inner.process_group(0);
        self
    }

    /// Returns the program.
    pub fn program(&self) -> &OsStr {
        self.inner.get_program()
    }

    /// Replaces this process with the program, with an empty signal mask; returns only when
    /// that fails (the mask is then back as it was).
    pub fn exec(&mut self) -> std::io::Error {
        match super::signals::with_empty_mask(|| self.inner.exec()) {
            Ok(e) | Err(e) => e,
        }
    }

    /// Starts the child with an empty signal mask (see [`super::signals`]).
    ///
    /// # Errors
    ///
    /// The I/O error of a program that cannot be started, or of a signal mask that cannot be
    /// set (the child is then not started).
    pub fn spawn(&mut self) -> std::io::Result<Child> {
        let child = super::signals::with_empty_mask(|| self.inner.spawn())??;
        STARTED.fetch_add(1, Ordering::Relaxed);
        Ok(child)
    }
}

/// How many children [`Command::spawn`] has started in this process.
static STARTED: AtomicU64 = AtomicU64::new(0);

/// Returns how many children this process has started (every one goes through
/// [`Command::spawn`]): a diagnostic of what a step costs, read by tests that prove a reading
/// runs no process.
pub fn started() -> u64 {
    STARTED.load(Ordering::Relaxed)
}
