//! The children of steps, dispatches and engines, described as data: a [`Spec`] names the
//! program, its arguments, environment, working directory, input and limits, and [`run`] runs
//! it through [`super::capture`]. Every wait is a field so tests use short ones.

use std::path::PathBuf;
use std::time::Duration;

use super::{Command, Error, Input, Limits, Output, capture, command};

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
    /// The most bytes kept of stdout and of stderr each ([`Limits::max_output`]); `None`: no
    /// limit.
    pub max_output: Option<usize>,
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
            max_output: None,
        }
    }

    /// Creates a spec running `cmd` through `/bin/sh -c`.
    pub fn shell(cmd: &str) -> Self {
        let mut s = Spec::new("/bin/sh");
        s.args = vec!["-c".into(), cmd.into()];
        s
    }

    /// Returns the command this spec describes (stdio and group are set by [`capture`]).
    pub fn command(&self) -> Command {
        let mut cmd = command(&self.program);
        cmd.args(&self.args);
        if self.clear_env {
            cmd.env_clear();
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(d) = &self.cwd {
            cmd.current_dir(d);
        }
        cmd
    }
}

/// Runs a child to completion (or its timeout) and returns its output.
///
/// # Errors
///
/// [`Error::Spawn`] when it cannot start, [`Error::Wait`] when waiting fails,
/// [`Error::TooMuchOutput`] past [`Spec::max_output`].
pub fn run(spec: &Spec) -> Result<Output, Error> {
    let input = Input { bytes: spec.stdin.clone(), hold_open: spec.watch_parent };
    let limits = Limits { timeout: spec.timeout, grace: spec.grace, max_output: spec.max_output };
    capture(&mut spec.command(), input, limits)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use nix::sys::signal::{SigSet, Signal};

    use super::*;

    /// Whether the process `pid` is gone or a zombie waiting for init. SIGKILL is delivered
    /// asynchronously, so this waits (bounded) for the kernel to act on it.
    fn dies(pid: &str) -> bool {
        let dead = || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next().unwrap_or("").to_owned();
            stat.is_empty() || state == "Z"
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dead() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        dead()
    }

    /// Reads one `/proc/self/status` mask line (`SigBlk`, `SigIgn`) of a child's output.
    fn mask(status: &str, name: &str) -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
    }

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
        // The background grandchild was in the same group, so it was killed too.
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(dies(&pid), "the grandchild survived the group kill");
    }

    #[test]
    fn a_grandchild_holding_stdout_open_cannot_hold_the_call_past_its_timeout() {
        // The child exits at once; its background grandchild keeps the stdout pipe open.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let mut s = Spec::shell(&format!("echo hi; sleep 30 & echo $! > {}", pidfile.display()));
        s.timeout = Duration::from_millis(500);
        s.grace = Duration::from_millis(200);
        let out = run(&s).unwrap();
        assert!(out.timed_out, "{out:?}");
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.describe(s.timeout), "timed out after 500ms");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(dies(&pid), "the grandchild holding the pipe survived");
    }

    #[test]
    fn a_detached_grandchild_holding_stdout_cannot_hold_the_call_past_its_stop() {
        // The child exits 0 at once; its grandchild leaves the group (setsid) and keeps stdout
        // open, out of reach of the group kill. The call used to wait the grace and the whole
        // KILL_WAIT for that pipe (10.7 s here) and call the result a success.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let mut s = Spec::shell(&format!("echo hi; setsid sleep 30 & echo $! > {}", pidfile.display()));
        s.timeout = Duration::from_millis(500);
        s.grace = Duration::from_millis(200);
        let started = Instant::now();
        let out = run(&s).unwrap();
        let took = started.elapsed();
        let pid = nix::unistd::Pid::from_raw(std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap());
        // Not ours to stop (it left the group); stopped here so the test leaves nothing behind.
        let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
        assert!(took < Duration::from_secs(5), "the call took {took:?} against a 500ms timeout");
        assert!(out.timed_out, "{out:?}");
        assert_eq!(out.code, Some(0), "the child itself exited 0");
        assert!(!out.success(), "a call that ran past its timeout is no success");
        assert_eq!(out.stdout, "hi\n");
    }

    #[test]
    fn a_background_grandchild_that_closes_its_output_does_not_hold_the_call() {
        let mut s = Spec::shell("sleep 30 >/dev/null 2>&1 & echo $!");
        s.timeout = Duration::from_secs(60);
        let out = run(&s).unwrap();
        assert!(!out.timed_out);
        assert!(out.success());
        // Not part of what was waited for, so left alone; stopped here so the test leaves nothing.
        let pid = nix::unistd::Pid::from_raw(out.stdout.trim().parse().unwrap());
        nix::sys::signal::kill(pid, Signal::SIGKILL).unwrap();
    }

    #[test]
    fn a_child_starts_with_an_empty_signal_mask_and_sigpipe_at_its_default() {
        // This test thread blocks what the operator once blocked; the child must not inherit it.
        // The Rust runtime ignores SIGPIPE in this process; the child must not inherit that either.
        std::thread::spawn(|| {
            let mut blocked = SigSet::empty();
            blocked.add(Signal::SIGINT);
            blocked.add(Signal::SIGTERM);
            blocked.thread_block().unwrap();
            let mut cat = Spec::new("/bin/cat");
            cat.args = vec!["/proc/self/status".into()];
            let out = run(&cat).unwrap();
            assert_eq!(mask(&out.stdout, "SigBlk:"), 0, "{}", out.stdout);
            // Signals 1 to 31 (glibc's posix_spawn leaves its own real-time signals ignored): the
            // child ignores what this process's parent made it ignore, and not SIGPIPE.
            let ours = std::fs::read_to_string("/proc/self/status").unwrap();
            let sigpipe = 1 << (Signal::SIGPIPE as u64 - 1);
            assert_ne!(mask(&ours, "SigIgn:") & sigpipe, 0, "the Rust runtime ignores SIGPIPE");
            let want = mask(&ours, "SigIgn:") & 0x7fff_ffff & !sigpipe;
            assert_eq!(mask(&out.stdout, "SigIgn:") & 0x7fff_ffff, want, "{}", out.stdout);
            // The thread's own mask is back.
            assert!(SigSet::thread_get_mask().unwrap().contains(Signal::SIGTERM));
        })
        .join()
        .unwrap();
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
    fn output_past_the_limit_fails_the_run_without_blocking_the_child() {
        // 1 MiB on stdout against a 64 KiB limit: the child is drained to its end (it exits 0
        // rather than being stuck on a full pipe until the timeout), and the run fails.
        let mut s = Spec::shell("head -c 1048576 /dev/zero; echo done >&2");
        s.max_output = Some(64 * 1024);
        let e = run(&s).unwrap_err();
        assert!(matches!(e, Error::TooMuchOutput { limit: 65536, .. }), "{e}");
        assert_eq!(e.to_string(), "/bin/sh printed more than 65536 bytes");
        s.max_output = Some(2 * 1024 * 1024);
        let out = run(&s).unwrap();
        assert_eq!(out.stdout.len(), 1_048_576);
        assert!(!out.timed_out);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let e = run(&Spec::new("/nonexistent/program")).unwrap_err();
        assert!(e.to_string().contains("cannot start /nonexistent/program"));
    }
}
