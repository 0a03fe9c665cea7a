//! The one blocking wait with a deadline: a child runs in its own process group with its output
//! captured, and the deadline bounds the whole call.
//!
//! A call is over when the child has exited *and* both of its output pipes are closed. A
//! background grandchild that keeps a pipe open (`echo hi; sleep 20 &`) therefore keeps the
//! call from being over, and so the deadline covers it too: when it passes, the child's whole
//! group is stopped ([`super::Group::stop`]) and the call reports `timed_out`. The child is
//! reaped only at the very end, so its group id cannot be reused by another process group while
//! this module may still signal it.
//!
//! A grandchild that left the group (`setsid`, a daemon) cannot be stopped with it, and may
//! hold a pipe for ever. So the stop waits for the child's exit and for its *group* to empty,
//! not for the pipes: once no process of the group is left, what still holds a pipe is outside
//! it, and the call ends at once. The readers stop reading then (each waits on its pipe and on
//! a stop pipe with `poll`), so no thread or descriptor outlives the call. A call therefore
//! ends within its timeout plus the stop's grace (SIGTERM) and kill wait (SIGKILL), whatever
//! its descendants do with their pipes; a call that timed out never counts as a success
//! ([`Output::success`]), even when the child itself exited 0.
//!
//! Waiting takes no polling while the child runs: the child's exit (seen with
//! `waitid(WNOWAIT)`, which leaves it unreaped) and the end of each pipe arrive as events on
//! one channel; only a stop past the deadline looks at the group every few milliseconds.

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

use super::{Command, Group};

/// How long a child may run, how long it gets between SIGTERM and SIGKILL, and how much of its
/// output is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long the whole call may take.
    pub timeout: Duration,
    /// How long after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// The most bytes kept of stdout and of stderr each; past it the rest is read and dropped
    /// (the child is never blocked on a full pipe) and the call fails with
    /// [`Error::TooMuchOutput`] once the child is over. `None`: no limit.
    pub max_output: Option<usize>,
}

/// What the child reads on stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// Bytes written to stdin; stdin is the null device when this is `None` and `hold_open` is
    /// false.
    pub bytes: Option<Vec<u8>>,
    /// Keep stdin open (after the bytes) until the call ends, so the child sees EOF when this
    /// process dies: how a dispatched run dies with its parent.
    pub hold_open: bool,
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
    /// Returns true for exit code 0 within the timeout. A child that exited 0 while a
    /// descendant held its output open past the timeout did not finish in time: not a success.
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// Describes how the child ended, in words (`exit 1`, `killed by signal 9`, `timed out after 2s`).
    pub fn describe(&self, timeout: Duration) -> String {
        if self.timed_out {
            return format!("timed out after {}", chant_core::duration::format(timeout));
        }
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "ended without a status".into(),
        }
    }
}

/// Errors of [`capture`] (and so of [`super::run`]).
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
    /// The child printed more than [`Limits::max_output`] bytes on stdout or stderr.
    #[error("{program} printed more than {limit} bytes")]
    TooMuchOutput {
        /// The program.
        program: String,
        /// The limit.
        limit: usize,
    },
}

/// One thing the wait is waiting for.
enum Event {
    /// The child exited (it is not reaped yet).
    Exited,
    /// One output pipe reached its end.
    Closed,
}

/// Runs `cmd` in its own process group with stdout and stderr captured and `input` on stdin,
/// until it has exited and closed its output, or `limits.timeout` passes; then its group is
/// stopped and the output says `timed_out`.
///
/// # Errors
///
/// [`Error::Spawn`] when it cannot start, [`Error::Wait`] when reaping it fails,
/// [`Error::TooMuchOutput`] past [`Limits::max_output`].
pub fn capture(cmd: &mut Command, input: Input, limits: Limits) -> Result<Output, Error> {
    let program = cmd.program().to_string_lossy().into_owned();
    let piped_stdin = input.bytes.is_some() || input.hold_open;
    cmd.own_group()
        .stdin(if piped_stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let (mut child, tracked) = super::live::spawn_tracked(|| cmd.spawn())
        .map_err(|source| Error::Spawn { program: program.clone(), source })?;
    let group = Group::led_by(&child);
    let (tx, rx) = mpsc::channel();
    let holder = feed(child.stdin.take(), input);
    let limit = limits.max_output.unwrap_or(usize::MAX);
    // The readers stop when `stop` is dropped (its read ends then report a hang-up).
    let (stopped, stop) =
        nix::unistd::pipe().map_err(|e| Error::Wait { program: program.clone(), source: e.into() })?;
    let stdout = collect(child.stdout.take(), limit, tx.clone(), stopped.try_clone());
    let stderr = collect(child.stderr.take(), limit, tx.clone(), stopped.try_clone());
    drop(stopped);
    watch_exit(Pid::from_raw(group.id()), tx);
    let mut waiting = Waiting { rx, exited: false, open: 2 };
    let timed_out = !waiting.until(deadline);
    if timed_out {
        group.stop(limits.grace, |until| waiting.until_group_over(until, group));
    }
    // Stops reading pipes something outside the group still holds, and closes a held stdin:
    // the child is over, or as over as it will get.
    drop(stop);
    drop(holder);
    drop(tracked);
    let status = child.wait().map_err(|source| Error::Wait { program: program.clone(), source })?;
    if stdout.over() || stderr.over() {
        return Err(Error::TooMuchOutput { program, limit });
    }
    Ok(Output {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout: stdout.text(),
        stderr: stderr.text(),
        elapsed: started.elapsed(),
    })
}

/// The events still to come.
struct Waiting {
    rx: Receiver<Event>,
    exited: bool,
    open: usize,
}

impl Waiting {
    /// Waits until the child has exited and closed both pipes (true), or `deadline` (false).
    fn until(&mut self, deadline: Instant) -> bool {
        while !(self.exited && self.open == 0) {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Event::Exited) => self.exited = true,
                Ok(Event::Closed) => self.open = self.open.saturating_sub(1),
                Err(RecvTimeoutError::Timeout) => return false,
                // Every sender is gone, so every event has arrived.
                Err(RecvTimeoutError::Disconnected) => return true,
            }
        }
        true
    }
}

impl Waiting {
    /// Waits until the child has exited and either closed both pipes or left no live process
    /// in its group (true), or `deadline` (false): how a stop ends. A pipe still open once the
    /// group is empty is held by a process that left it (`setsid`), which the stop cannot reach.
    fn until_group_over(&mut self, deadline: Instant, group: Group) -> bool {
        loop {
            if self.exited && (self.open == 0 || !group.alive()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let wait = deadline.saturating_duration_since(now).min(GROUP_POLL);
            match self.rx.recv_timeout(wait) {
                Ok(Event::Exited) => self.exited = true,
                Ok(Event::Closed) => self.open = self.open.saturating_sub(1),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return true,
            }
        }
    }
}

/// How often a stop looks at the group while its pipes stay open.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// Waits on a thread for `pid` to exit without reaping it, then sends [`Event::Exited`].
fn watch_exit(pid: Pid, tx: Sender<Event>) {
    std::thread::spawn(move || {
        // Anything but an interruption (ECHILD: the child was reaped elsewhere) means there is
        // nothing left to wait for.
        while let Err(Errno::EINTR) = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {}
        let _ = tx.send(Event::Exited);
    });
}

/// What was read of one pipe, and whether more than the limit came.
#[derive(Default)]
struct Collected {
    bytes: Vec<u8>,
    over: bool,
}

/// The buffer one reader thread fills.
struct Buffer(Arc<Mutex<Collected>>);

impl Buffer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Collected> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn over(&self) -> bool {
        self.lock().over
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.lock().bytes).into_owned()
    }
}

/// Reads a pipe to its end on a thread of its own into a shared buffer, keeping at most `limit`
/// bytes (the rest is read and dropped), then sends [`Event::Closed`]. It also stops, closing
/// its end of the pipe, when `stop` reports a hang-up (the call is over): a pipe a detached
/// grandchild holds is not read for ever. What was read stays available either way.
fn collect(
    pipe: Option<impl Read + AsFd + Send + 'static>,
    limit: usize,
    tx: Sender<Event>,
    stop: std::io::Result<OwnedFd>,
) -> Buffer {
    let buffer = Arc::new(Mutex::new(Collected::default()));
    let shared = Arc::clone(&buffer);
    std::thread::spawn(move || {
        if let Some(mut pipe) = pipe {
            let mut chunk = [0u8; 8192];
            loop {
                if let Ok(stop) = &stop
                    && !readable_before_stop(&pipe, stop)
                {
                    break;
                }
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut c = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        let room = limit.saturating_sub(c.bytes.len());
                        c.bytes.extend_from_slice(&chunk[..n.min(room)]);
                        c.over |= n > room;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // A read error ends the stream; what was read so far is kept.
                    Err(_) => break,
                }
            }
        }
        let _ = tx.send(Event::Closed);
    });
    Buffer(buffer)
}

/// Waits until `pipe` has something to read or reached its end (true), or `stop` hung up, or
/// polling failed (false).
fn readable_before_stop(pipe: &impl AsFd, stop: &OwnedFd) -> bool {
    loop {
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN), PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Err(_) => return false,
            Ok(_) => {}
        }
        if fds[1].any().unwrap_or(true) {
            return false;
        }
        if fds[0].any().unwrap_or(false) {
            return true;
        }
    }
}

/// Writes the input on a thread of its own (a child that does not read cannot block the wait)
/// and, with `hold_open`, keeps stdin open until the returned sender is dropped.
fn feed(stdin: Option<ChildStdin>, input: Input) -> Option<Sender<()>> {
    let mut pipe = stdin?;
    let (hold, released) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Some(bytes) = input.bytes {
            // A child that exits without reading its input is not an error of the call.
            let _ = pipe.write_all(&bytes);
        }
        if input.hold_open {
            // Returns when the sender is dropped: the call is over.
            let _ = released.recv();
        }
        drop(pipe);
    });
    Some(hold)
}
