//! Every child process chant starts (other than `git`, which has its own module): shell steps,
//! dispatched op runs, command engines.
//!
//! Each child runs in its own process group, with stdin either closed or a pipe the child can
//! watch to die with its parent, stdout and stderr captured, and a timeout after which the whole
//! group is sent SIGTERM and, after a grace period, SIGKILL. Every wait is a parameter so tests
//! use short ones.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The variable that tells a dispatched chant child to exit when its parent goes away.
pub const DIE_WITH_PARENT_VAR: &str = "CHANT_DIE_WITH_PARENT";

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables to set (after clearing, when `clear_env`).
    pub env: Vec<(String, String)>,
    /// Start from an empty environment.
    pub clear_env: bool,
    /// The working directory.
    pub cwd: Option<PathBuf>,
    /// Bytes written to stdin, then stdin is closed. `None` with `watch_parent` keeps it open.
    pub stdin: Option<Vec<u8>>,
    /// Keep a pipe on stdin open for the child's life, so it sees EOF when this process dies.
    pub watch_parent: bool,
    /// How long the child may run.
    pub timeout: Duration,
    /// How long after SIGTERM before SIGKILL.
    pub grace: Duration,
}

impl Spec {
    /// Creates a spec for `program` with a 10-minute timeout and a 5-second grace period.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Spec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            stdin: None,
            watch_parent: false,
            timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
        }
    }

    /// Creates a spec running `cmd` through `/bin/sh -c`.
    pub fn shell(cmd: &str) -> Self {
        let mut s = Spec::new("/bin/sh");
        s.args = vec!["-c".into(), cmd.into()];
        s
    }
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Whether it was stopped for running past its timeout.
    pub timed_out: bool,
    /// Its stdout, lossily decoded.
    pub stdout: String,
    /// Its stderr, lossily decoded.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Output {
    /// Returns true for exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Describes how the child ended, in words (`exit 1`, `killed by signal 9`, `timed out after 2s`).
    pub fn describe(&self, timeout: Duration) -> String {
        if self.timed_out {
            return format!("timed out after {}", crate::duration::format(timeout));
        }
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "ended without a status".into(),
        }
    }
}

/// Errors of [`run`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The program could not be started.
    #[error("cannot start {program}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Waiting on the child failed.
    #[error("cannot wait for {program}")]
    Wait {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Runs a child to completion (or its timeout) and returns its output.
///
/// # Errors
///
/// [`Error::Spawn`] when it cannot start, [`Error::Wait`] when waiting fails.
pub fn run(spec: &Spec) -> Result<Output, Error> {
    let program = spec.program.display().to_string();
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args).process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped());
    if spec.clear_env {
        cmd.env_clear();
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(d) = &spec.cwd {
        cmd.current_dir(d);
    }
    let piped_stdin = spec.stdin.is_some() || spec.watch_parent;
    cmd.stdin(if piped_stdin { Stdio::piped() } else { Stdio::null() });
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| Error::Spawn { program: program.clone(), source })?;
    let stdin = child.stdin.take();
    let writer = stdin.map(|mut pipe| {
        let bytes = spec.stdin.clone();
        let keep = spec.watch_parent;
        std::thread::spawn(move || {
            use std::io::Write;
            if let Some(b) = bytes {
                let _ = pipe.write_all(&b);
            }
            // Returning the pipe keeps it open until the caller drops it after the child ends.
            if keep { Some(pipe) } else { None }
        })
    });
    let out_reader = reader(child.stdout.take());
    let err_reader = reader(child.stderr.take());
    let (status, timed_out) = wait(&mut child, spec, &program)?;
    // The writer thread ends once its bytes are written; the watch pipe closes here.
    drop(writer.map(std::thread::JoinHandle::join));
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok(Output { code: status.code(), signal: status.signal(), timed_out, stdout, stderr, elapsed: started.elapsed() })
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn wait(child: &mut Child, spec: &Spec, program: &str) -> Result<(std::process::ExitStatus, bool), Error> {
    let deadline = Instant::now() + spec.timeout;
    let wait_err = |source| Error::Wait { program: program.to_owned(), source };
    loop {
        if let Some(st) = child.try_wait().map_err(wait_err)? {
            return Ok((st, false));
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let pgid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let _ = killpg(pgid, Signal::SIGTERM);
    let kill_at = Instant::now() + spec.grace;
    loop {
        if let Some(st) = child.try_wait().map_err(wait_err)? {
            let _ = killpg(pgid, Signal::SIGKILL);
            return Ok((st, true));
        }
        if Instant::now() >= kill_at {
            let _ = killpg(pgid, Signal::SIGKILL);
            let st = child.wait().map_err(wait_err)?;
            return Ok((st, true));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a thread that exits this process (and its process group) when stdin reaches EOF, if
/// [`DIE_WITH_PARENT_VAR`] is set: how a dispatched `run` dies with the tick that started it.
pub fn die_with_parent_if_asked() {
    if std::env::var_os(DIE_WITH_PARENT_VAR).is_none() {
        return;
    }
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let me = Pid::this();
        let _ = killpg(me, Signal::SIGTERM);
        std::process::exit(143);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let out = run(&Spec::shell("echo out; echo err >&2; exit 7")).unwrap();
        assert_eq!(out.code, Some(7));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(!out.timed_out);
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let mut s = Spec::shell(&format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
        s.timeout = Duration::from_millis(300);
        s.grace = Duration::from_millis(200);
        let out = run(&s).unwrap();
        assert!(out.timed_out);
        assert_eq!(out.describe(s.timeout), "timed out after 300ms");
        // The background grandchild was in the same group, so it was killed too: its /proc entry
        // is gone or a zombie waiting for init.
        // SIGKILL is delivered asynchronously, so wait (bounded) for the kernel to act on it.
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let dead = || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next().unwrap_or("").to_owned();
            stat.is_empty() || state == "Z"
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dead() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(dead(), "the grandchild survived the group kill");
    }

    #[test]
    fn stdin_and_a_cleared_environment() {
        let mut s = Spec::shell("cat; env | sort");
        s.stdin = Some(b"hello\n".to_vec());
        s.clear_env = true;
        s.env = vec![("ONLY".into(), "this".into())];
        let out = run(&s).unwrap();
        assert!(out.stdout.starts_with("hello\n"));
        assert!(out.stdout.contains("ONLY=this"));
        assert!(!out.stdout.contains("HOME="));
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let e = run(&Spec::new("/nonexistent/program")).unwrap_err();
        assert!(e.to_string().contains("cannot start /nonexistent/program"));
    }
}
