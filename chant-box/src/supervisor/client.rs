//! The client side of the stand-in: finds the state directory, starts the daemon on first use
//! (detached, its stdio on its own log, never the caller's), and sends it one request.
//!
//! A daemon that is dying (killed, or exiting after a shutdown) can still hold its listening
//! socket while its last threads are torn down: a connection made then lands in a backlog nobody
//! will accept, and is reset when the socket closes. A reset means the daemon never read the
//! request (a Unix socket is reset only when closed with unread data, or never accepted), so the
//! client connects again, starting a new daemon once the old one's socket refuses, until a live
//! daemon answers or the start deadline passes ([`Error::NotRunning`]). An end of stream after the
//! request was read is not retried: that request may have been acted on.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::daemon::SOCKET;
use super::{Request, Response};
use chant_store::process;

/// Errors of [`Client::send`], [`Client::watch`] and [`state_dir`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No state directory could be chosen.
    #[error("no state directory: set {var} or HOME", var = super::STATE_DIR_VAR)]
    NoStateDir,
    /// The state directory or the daemon's log could not be prepared.
    #[error("cannot start the sprite-env daemon: {}", path.display())]
    Prepare {
        /// The directory or file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The daemon could not be started.
    #[error("cannot start the sprite-env daemon: {}", program.display())]
    Spawn {
        /// The program started as the daemon.
        program: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The daemon did not answer.
    #[error("the sprite-env daemon at {} does not answer", socket.display())]
    Unreachable {
        /// The socket.
        socket: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// No live daemon could be reached: the socket kept being reset by a daemon that was going
    /// away, or (for [`Client::watch`], which never starts one) no daemon listens.
    #[error("the sprite-env daemon at {} is not running", socket.display())]
    NotRunning {
        /// The socket.
        socket: PathBuf,
        /// The last connection's error.
        #[source]
        source: std::io::Error,
    },
    /// The daemon's answer is not a response.
    #[error("the sprite-env daemon at {} does not answer: unreadable answer", socket.display())]
    Unreadable {
        /// The socket.
        socket: PathBuf,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// A request could not be encoded.
    #[error("cannot encode the request")]
    Encode(#[source] serde_json::Error),
    /// The daemon refused the request, with its words.
    #[error("{0}")]
    Refused(String),
}

/// Returns the state directory: `SPRITE_ENV_STATE_DIR`, else `$XDG_STATE_HOME/chant/sprite-env`,
/// else `$HOME/.local/state/chant/sprite-env`.
///
/// # Errors
///
/// [`Error::NoStateDir`] when none of the variables is set.
pub fn state_dir() -> Result<PathBuf, Error> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var(super::STATE_DIR_VAR) {
        return Ok(d);
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return Ok(d.join("chant").join("sprite-env"));
    }
    var("HOME").map(|h| h.join(".local/state/chant/sprite-env")).ok_or(Error::NoStateDir)
}

/// A connection to the daemon of one state directory.
#[derive(Debug, Clone)]
pub struct Client {
    dir: PathBuf,
    /// The program started as the daemon (`<program> __daemon`).
    program: PathBuf,
    /// How long one request may wait for the daemon's answer (none: as long as it takes).
    timeout: Option<Duration>,
}

impl Client {
    /// A client of the daemon serving `dir`, started as `program __daemon` when none runs.
    pub fn new(dir: impl Into<PathBuf>, program: impl Into<PathBuf>) -> Self {
        Client { dir: dir.into(), program: program.into(), timeout: None }
    }

    /// Bounds how long [`Client::send`] waits on the socket for one write and for the answer:
    /// a daemon that stopped answering (stopped, or stuck) is then [`Error::Unreachable`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Sends `req`, starting the daemon first when none answers.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] when no live daemon could be reached in time, [`Error::Unreachable`]
    /// when one read the request and ended before answering, [`Error::Refused`] with its words.
    pub fn send(&self, req: &Request) -> Result<Response, Error> {
        let socket = self.dir.join(SOCKET);
        let mut text = serde_json::to_string(req).map_err(Error::Encode)?;
        text.push('\n');
        let deadline = Instant::now() + START_WITHIN;
        loop {
            let stream = match UnixStream::connect(&socket) {
                Ok(s) => s,
                Err(_) => {
                    self.spawn_daemon()?;
                    self.connect_within(&socket, deadline)?
                }
            };
            match exchange(stream, &text, self.timeout) {
                Ok(line) => {
                    let resp: Response = serde_json::from_str(&line)
                        .map_err(|source| Error::Unreadable { socket: socket.clone(), source })?;
                    return match resp.error {
                        Some(e) => Err(Error::Refused(e)),
                        None => Ok(resp),
                    };
                }
                // Reset before the request was read: a dying daemon's backlog. Connect again.
                Err(source) if never_read(&source) => {
                    if Instant::now() >= deadline {
                        return Err(Error::NotRunning { socket, source });
                    }
                    std::thread::sleep(RETRY_PAUSE);
                }
                Err(source) => return Err(Error::Unreachable { socket, source }),
            }
        }
    }

    /// Opens the change stream of a daemon that already runs (never starting one): each line
    /// read after this returns is one [`super::Event`] as JSON.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] when no daemon listens, [`Error::Unreachable`] when it does not answer.
    pub fn watch(&self) -> Result<BufReader<UnixStream>, Error> {
        let socket = self.dir.join(SOCKET);
        let unreachable = |source| Error::Unreachable { socket: socket.clone(), source };
        let mut stream = UnixStream::connect(&socket).map_err(|source| match source.kind() {
            ErrorKind::NotFound | ErrorKind::ConnectionRefused => Error::NotRunning { socket: socket.clone(), source },
            _ => Error::Unreachable { socket: socket.clone(), source },
        })?;
        let text = serde_json::to_string(&Request::Watch).map_err(Error::Encode)?;
        writeln!(stream, "{text}").map_err(unreachable)?;
        let mut reader = BufReader::new(stream);
        let mut ack = String::new();
        reader.read_line(&mut ack).map_err(unreachable)?;
        if ack.trim() != "{}" {
            return Err(Error::Refused(format!("the daemon refused to watch: {}", ack.trim())));
        }
        Ok(reader)
    }

    fn spawn_daemon(&self) -> Result<(), Error> {
        super::access::private_dir(&self.dir).map_err(|source| Error::Prepare { path: self.dir.clone(), source })?;
        let path = self.dir.join("daemon.log");
        let prepare = |source| Error::Prepare { path: path.clone(), source };
        let log = super::access::append(&path).map_err(prepare)?;
        let err = log.try_clone().map_err(prepare)?;
        // A daemon that finds another one alive exits at once; the connect below reaches the winner.
        // No process group of its own here: the daemon calls setsid(), which a group leader cannot.
        process::command(&self.program)
            .arg("__daemon")
            .env(super::STATE_DIR_VAR, &self.dir)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|source| Error::Spawn { program: self.program.clone(), source })?;
        Ok(())
    }

    fn connect_within(&self, socket: &Path, deadline: Instant) -> Result<UnixStream, Error> {
        loop {
            match UnixStream::connect(socket) {
                Ok(s) => return Ok(s),
                Err(source) if Instant::now() >= deadline => {
                    return Err(Error::NotRunning { socket: socket.to_path_buf(), source });
                }
                Err(_) => std::thread::sleep(RETRY_PAUSE),
            }
        }
    }
}

/// How long a request waits for a live daemon (one started by it, or one going away to be gone).
const START_WITHIN: Duration = Duration::from_secs(10);
/// The pause between two connection attempts.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Writes `request` (one line, in one write) and reads the answer line.
fn exchange(stream: UnixStream, request: &str, timeout: Option<Duration>) -> std::io::Result<String> {
    stream.set_read_timeout(timeout)?;
    stream.set_write_timeout(timeout)?;
    let mut w = stream.try_clone()?;
    w.write_all(request.as_bytes())?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    Ok(line)
}

/// Whether a connection error means the daemon never read the request: a Unix stream socket is
/// reset only when its peer closes it with data unread (or never accepted it), and a write meets
/// a broken pipe only when the peer has closed before reading.
fn never_read(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    #[test]
    fn a_daemon_that_never_answers_is_unreachable_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let listener = UnixListener::bind(dir.path().join(SOCKET)).unwrap();
        // Accepts, reads the request, never answers (a stopped or stuck daemon).
        let held = std::thread::spawn(move || {
            let (conn, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&conn).read_line(&mut line).unwrap();
            std::thread::sleep(Duration::from_secs(3));
            line
        });
        let client = Client::new(dir.path(), "/nonexistent/sprite-env").with_timeout(Duration::from_millis(200));
        let e = client.send(&Request::List).unwrap_err();
        assert!(matches!(e, Error::Unreachable { .. }), "{e}");
        assert_eq!(held.join().unwrap(), "{\"op\":\"list\"}\n");
    }
}
