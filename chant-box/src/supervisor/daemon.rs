//! The daemon: owns the service table of one state directory, answers one JSON request per
//! connection on its Unix socket, spawns each service in its own process group, reaps its
//! children as they exit, and re-adopts the services a previous daemon left running.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use super::access;
use super::watchers::Watchers;
use super::{Event, Request, Response, Service, State, Status};
use chant_store::error::chain;
use chant_store::process::identity as proc;
use chant_store::process::{self, Group, Stopped};

/// The socket's file name in the state directory.
pub(crate) const SOCKET: &str = "sprite-env.sock";
/// The pid file's name in the state directory.
pub(crate) const PID_FILE: &str = "daemon.pid";
/// The service table's file name in the state directory.
pub(crate) const TABLE: &str = "services.json";

/// What the daemon could not do: the answer to a request (its text goes on the wire), or why
/// it could not start serving.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The state directory or `logs/` could not be created (`0700`, this user's), or the socket
    /// made `0600`.
    #[error("cannot make {} private to this user", path.display())]
    Private {
        /// The directory or socket.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The socket could not be bound.
    #[error("cannot bind {}", path.display())]
    Bind {
        /// The socket.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// Another live daemon serves the directory.
    #[error("a daemon (pid {pid}) already serves {}", dir.display())]
    AlreadyServed {
        /// Its pid.
        pid: i32,
        /// The state directory.
        dir: PathBuf,
    },
    /// The pid file could not be claimed (another daemon kept replacing it).
    #[error("cannot claim {}", path.display())]
    Claim {
        /// The pid file.
        path: PathBuf,
    },
    /// No service has the name.
    #[error("no service {0}")]
    NoService(String),
    /// A service of the name is already defined.
    #[error("service {0} already exists")]
    Exists(String),
    /// A service needs one that is not defined.
    #[error("service {name} needs {need}, which is not defined")]
    Undefined {
        /// The service.
        name: String,
        /// What it needs.
        need: String,
    },
    /// A service needs itself.
    #[error("service {0} needs itself through a cycle")]
    Cycle(String),
    /// A service's log could not be opened.
    #[error("cannot open the log of {name}")]
    Log {
        /// The service.
        name: String,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// A service's program or arguments name a variable no value was given for.
    #[error("{0}")]
    Expand(String),
    /// A service's program could not be started.
    #[error("service {name} cannot start {cmd}")]
    Start {
        /// The service.
        name: String,
        /// Its program.
        cmd: String,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// A service's group outlived SIGKILL.
    #[error("service {name}'s process group {pgid} survived SIGKILL")]
    Survived {
        /// The service.
        name: String,
        /// Its process group.
        pgid: i32,
    },
}

struct Table {
    services: Vec<Service>,
    /// Pids of services adopted from a previous daemon: not children, watched through `/proc`.
    adopted: BTreeSet<i32>,
    /// Children spawned and not yet reaped.
    live_children: usize,
}

struct Shared {
    dir: PathBuf,
    /// Connections that asked to watch, each fed from a bounded queue.
    watchers: Watchers,
    grace: Duration,
    table: Mutex<Table>,
    children: Condvar,
}

/// Runs the daemon for `dir` until asked to shut down. Returns the process exit code.
pub(crate) fn run(dir: &Path) -> i32 {
    match serve(dir) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("sprite-env daemon: {}", chain(&e));
            1
        }
    }
}

fn serve(dir: &Path) -> Result<(), Error> {
    // Its own session: no controlling terminal, no signal from the caller's group.
    let _ = nix::unistd::setsid();
    let private = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Private { path, source }
    };
    access::private_dir(dir).map_err(private(dir))?;
    access::private_dir(&dir.join("logs")).map_err(private(&dir.join("logs")))?;
    take_pid_file(dir)?;
    let socket = dir.join(SOCKET);
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).map_err(|source| Error::Bind { path: socket.clone(), source })?;
    // The directory is 0700, so nobody else could reach the socket before this.
    access::private_socket(&socket).map_err(private(&socket))?;
    let grace = std::env::var(super::STOP_GRACE_VAR)
        .ok()
        .and_then(|g| chant_lexicon::duration::parse(&g).ok())
        .unwrap_or(Duration::from_secs(5));
    let shared = Arc::new(Shared {
        dir: dir.to_path_buf(),
        watchers: Watchers::default(),
        grace,
        table: Mutex::new(Table { services: load(dir), adopted: BTreeSet::new(), live_children: 0 }),
        children: Condvar::new(),
    });
    adopt(&shared);
    {
        let s = Arc::clone(&shared);
        std::thread::spawn(move || reap(&s));
    }
    // Services are adopted only here, at the start: with none, nothing needs polling (an idle
    // daemon then wakes for nothing but its requests and its children's exits).
    if !lock(&shared).adopted.is_empty() {
        let s = Arc::clone(&shared);
        std::thread::spawn(move || watch_adopted(&s));
    }
    eprintln!("sprite-env daemon {} serving {}", std::process::id(), socket.display());
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let s = Arc::clone(&shared);
        std::thread::spawn(move || handle(&s, conn));
    }
    Ok(())
}

/// Claims the pid file, replacing one whose daemon is gone.
fn take_pid_file(dir: &Path) -> Result<(), Error> {
    let path = dir.join(PID_FILE);
    let me = std::process::id();
    // The content is written first and linked into place (a link never replaces a file), so a
    // racing daemon never reads a half-written pid file as a stale one.
    let mine = dir.join(format!("{PID_FILE}.{me}"));
    let started = proc::start_time(me as i32).unwrap_or(0);
    access::write(&mine, format!("{me} {started}\n").as_bytes())
        .map_err(|source| Error::Write { path: mine.clone(), source })?;
    let result = (|| {
        for _ in 0..2 {
            match std::fs::hard_link(&mine, &path) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if let Some((pid, t)) = read_pid_file(dir)
                        && proc::same_process(pid, t)
                    {
                        return Err(Error::AlreadyServed { pid, dir: dir.to_owned() });
                    }
                    let _ = std::fs::remove_file(&path);
                }
                Err(source) => return Err(Error::Write { path: path.clone(), source }),
            }
        }
        Err(Error::Claim { path: path.clone() })
    })();
    let _ = std::fs::remove_file(&mine);
    result
}

/// Reads the pid and start time of the daemon recorded in `dir`.
pub(crate) fn read_pid_file(dir: &Path) -> Option<(i32, u64)> {
    let text = std::fs::read_to_string(dir.join(PID_FILE)).ok()?;
    let mut words = text.split_whitespace();
    Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
}

fn load(dir: &Path) -> Vec<Service> {
    std::fs::read_to_string(dir.join(TABLE)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

fn persist(dir: &Path, services: &[Service]) {
    let tmp = dir.join(format!("{TABLE}.tmp"));
    let Ok(text) = serde_json::to_string_pretty(services) else { return };
    if access::write(&tmp, text.as_bytes()).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(TABLE));
    }
}

/// Publishes a state change to every watcher: queued, never written here (this runs under the
/// table's lock), so a watcher that stops reading holds up nothing.
fn publish(shared: &Shared, event: &str, s: &Service) {
    let e = Event {
        event: event.to_owned(),
        service: s.name.clone(),
        status: s.state.status,
        exit_status: s.state.exit_status.clone().filter(|_| event == "exited"),
    };
    let Ok(line) = serde_json::to_string(&e) else { return };
    shared.watchers.publish(&line);
}

fn lock(shared: &Shared) -> MutexGuard<'_, Table> {
    shared.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Re-adopts the services a previous daemon left running; marks the vanished ones `failed`.
fn adopt(shared: &Shared) {
    let mut t = lock(shared);
    let mut adopted = Vec::new();
    for s in &mut t.services {
        let st = &mut s.state;
        if !matches!(st.status, Status::Running | Status::Starting | Status::Stopping) {
            continue;
        }
        match (st.pid, st.started) {
            (Some(pid), Some(started)) if proc::same_process(pid, started) => {
                st.status = Status::Running;
                adopted.push(pid);
            }
            _ => {
                st.status = Status::Failed;
                st.pid = None;
                st.started = None;
                st.exit_status = Some("exit status unknown: it ended while the supervisor was down".into());
            }
        }
    }
    t.adopted.extend(adopted);
    persist(&shared.dir, &t.services);
}

/// Reaps every child as it exits and records how it ended.
fn reap(shared: &Shared) {
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) => ended(shared, pid.as_raw(), format!("exit {code}")),
            Ok(WaitStatus::Signaled(pid, sig, _)) => {
                ended(shared, pid.as_raw(), format!("killed by signal {}", sig as i32));
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => {
                let t = lock(shared);
                if t.live_children == 0 {
                    let _ = shared.children.wait_timeout(t, Duration::from_millis(500));
                }
            }
        }
    }
}

fn ended(shared: &Shared, pid: i32, how: String) {
    let mut t = lock(shared);
    t.live_children = t.live_children.saturating_sub(1);
    if let Some(s) = t.services.iter_mut().find(|s| s.state.pid == Some(pid)) {
        s.state.status = if s.state.status == Status::Stopping { Status::Stopped } else { Status::Failed };
        s.state.pid = None;
        s.state.started = None;
        s.state.exit_status = Some(how);
        let event = if s.state.status == Status::Failed { "exited" } else { "stopped" };
        publish(shared, event, s);
    }
    persist(&shared.dir, &t.services);
}

/// Polls the adopted services (not children, so never reaped here) and marks the gone ones;
/// returns once none is left (none is adopted after the daemon's start).
fn watch_adopted(shared: &Shared) {
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let mut t = lock(shared);
        if t.adopted.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        for s in &mut t.services {
            let (Some(pid), Some(started)) = (s.state.pid, s.state.started) else { continue };
            if proc::same_process(pid, started) {
                continue;
            }
            gone.push(pid);
            s.state.status = if s.state.status == Status::Stopping { Status::Stopped } else { Status::Failed };
            s.state.pid = None;
            s.state.started = None;
            s.state.exit_status = Some("exit status unknown: an adopted service is not the supervisor's child".into());
            publish(shared, "exited", s);
        }
        if !gone.is_empty() {
            for pid in gone {
                t.adopted.remove(&pid);
            }
            persist(&shared.dir, &t.services);
        }
    }
}

/// The longest request line read, in bytes.
const MAX_REQUEST: u64 = 1024 * 1024;

fn handle(shared: &Shared, conn: UnixStream) {
    let mut line = String::new();
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(reader) = conn.try_clone() else { return };
    if BufReader::new(reader.take(MAX_REQUEST)).read_line(&mut line).is_err() {
        return;
    }
    // Read before refusing, so the caller's write never meets a closed socket.
    let peer = access::check_peer(&conn);
    let (response, exit) = match serde_json::from_str::<Request>(&line) {
        _ if peer.is_err() => (Response { error: peer.err().map(|e| chain(&e)), ..Response::default() }, false),
        Err(e) => (Response { error: Some(format!("bad request: {e}")), ..Response::default() }, false),
        Ok(Request::Watch) => {
            let mut conn = conn;
            let _ = conn.set_write_timeout(Some(super::watchers::WRITE_TIMEOUT));
            if writeln!(conn, "{{}}").and_then(|()| conn.flush()).is_ok() {
                shared.watchers.serve(conn);
            }
            return;
        }
        Ok(Request::Shutdown { stop_services }) => {
            if stop_services {
                let names: Vec<String> = lock(shared).services.iter().map(|s| s.name.clone()).collect();
                for n in names {
                    let _ = stop(shared, &n);
                }
            }
            (Response::default(), true)
        }
        Ok(req) => (answer(shared, req), false),
    };
    let mut conn = conn;
    if let Ok(text) = serde_json::to_string(&response) {
        let _ = writeln!(conn, "{text}");
    }
    let _ = conn.flush();
    if exit {
        let _ = std::fs::remove_file(shared.dir.join(SOCKET));
        let _ = std::fs::remove_file(shared.dir.join(PID_FILE));
        std::process::exit(0);
    }
}

fn answer(shared: &Shared, req: Request) -> Response {
    // Checked here, where every client's request arrives: a name is a path under `logs/`.
    if let Some(e) = req.names().into_iter().find_map(|n| super::check_name(n).err()) {
        return Response { error: Some(chain(&e)), ..Response::default() };
    }
    // Where the log stands before anything starts: a caller streaming it sees the first line.
    let target = match &req {
        Request::Create { name, .. } | Request::Start { name, .. } | Request::Restart { name, .. } => {
            Some(name.clone())
        }
        _ => None,
    };
    let log_offset = target.map(|n| std::fs::metadata(log_path(&shared.dir, &n)).map(|m| m.len()).unwrap_or(0));
    let result = match req {
        Request::List => Ok(lock(shared).services.clone()),
        Request::Create { name, cmd, args, needs, http_port, dir, values } => {
            let mut t = lock(shared);
            if t.services.iter().any(|s| s.name == name) {
                Err(Error::Exists(name))
            } else if let Some(n) = needs.iter().find(|n| !t.services.iter().any(|s| &s.name == *n)) {
                Err(Error::Undefined { need: n.clone(), name })
            } else {
                let state = State::stopped(&name);
                t.services.push(Service { name: name.clone(), cmd, args, needs, http_port, dir, state, values });
                persist(&shared.dir, &t.services);
                drop(t);
                start(shared, &name, &mut BTreeSet::new())
            }
        }
        Request::Delete { name } => stop(shared, &name).inspect(|gone| {
            let mut t = lock(shared);
            t.services.retain(|x| x.name != name);
            persist(&shared.dir, &t.services);
            if let Some(s) = gone.first() {
                publish(shared, "deleted", s);
            }
        }),
        Request::Start { name, values } => {
            remember(shared, &values);
            start(shared, &name, &mut BTreeSet::new())
        }
        Request::Stop { name } => stop(shared, &name),
        Request::Restart { name, values } => {
            remember(shared, &values);
            stop(shared, &name).and_then(|_| start(shared, &name, &mut BTreeSet::new()))
        }
        Request::Shutdown { .. } | Request::Watch => Ok(Vec::new()),
    };
    match result {
        Ok(services) => {
            let log = log_offset.and(services.first()).map(|s| log_path(&shared.dir, &s.name).display().to_string());
            Response { error: None, services, log, log_offset }
        }
        Err(e) => Response { error: Some(chain(&e)), ..Response::default() },
    }
}

/// Keeps, in memory, each of `values` for every service whose program or arguments name it: what
/// a start or restart sent is what the next spawn of those services expands.
fn remember(shared: &Shared, values: &super::Values) {
    if values.is_empty() {
        return;
    }
    let mut t = lock(shared);
    for s in &mut t.services {
        for var in std::iter::once(&s.cmd).chain(&s.args).flat_map(|w| super::referenced(w)) {
            if let Some(v) = values.get(&var) {
                s.values.insert(var, v.clone());
            }
        }
    }
}

fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("logs").join(format!("{name}.log"))
}

/// Starts `name` (after the services it needs) unless it runs; returns it.
fn start(shared: &Shared, name: &str, path: &mut BTreeSet<String>) -> Result<Vec<Service>, Error> {
    // `path` holds the services being started above this one: meeting one again is a cycle.
    if !path.insert(name.to_owned()) {
        return Err(Error::Cycle(name.to_owned()));
    }
    let needs = {
        let t = lock(shared);
        let Some(s) = t.services.iter().find(|s| s.name == name) else { return Err(Error::NoService(name.to_owned())) };
        s.needs.clone()
    };
    for n in &needs {
        start(shared, n, path)?;
    }
    path.remove(name);
    let mut t = lock(shared);
    let Some(idx) = t.services.iter().position(|s| s.name == name) else {
        return Err(Error::NoService(name.to_owned()));
    };
    if matches!(t.services[idx].state.status, Status::Running | Status::Starting) {
        return Ok(vec![t.services[idx].clone()]);
    }
    let svc = t.services[idx].clone();
    // Expanded here, for this spawn only: the table keeps `${VAR}` as it was given.
    let (program, args) = match super::expanded(&svc) {
        Ok(expanded) => expanded,
        Err(why) => {
            let st = &mut t.services[idx].state;
            st.status = Status::Failed;
            st.pid = None;
            st.exit_status = Some(why.clone());
            persist(&shared.dir, &t.services);
            return Err(Error::Expand(why));
        }
    };
    let log = open_log(&shared.dir, name)?;
    let err = log.try_clone().map_err(|source| Error::Log { name: name.to_owned(), source })?;
    let mut cmd = process::command(&program);
    cmd.args(&args).own_group().stdin(Stdio::null()).stdout(log).stderr(err);
    if let Some(d) = svc.dir.as_deref().filter(|d| Path::new(d).is_dir()) {
        cmd.current_dir(d);
    }
    let st = &mut t.services[idx].state;
    // Spawned under the table's lock: the reaper cannot record this pid's end before it is known.
    let result = match cmd.spawn() {
        Ok(child) => {
            let pid = child.id() as i32;
            st.status = Status::Running;
            st.pid = Some(pid);
            st.started = proc::start_time(pid);
            st.exit_status = None;
            if st.started_at.is_some() {
                st.restarts = st.restarts.saturating_add(1);
            }
            st.started_at = Some(chant_store::clock::format(jiff::Timestamp::now()));
            t.live_children += 1;
            shared.children.notify_all();
            publish(shared, "started", &t.services[idx]);
            Ok(vec![t.services[idx].clone()])
        }
        Err(e) => {
            st.status = Status::Failed;
            st.pid = None;
            st.exit_status = Some(format!("cannot start {}: {e}", svc.cmd));
            Err(Error::Start { name: name.to_owned(), cmd: svc.cmd.clone(), source: e })
        }
    };
    persist(&shared.dir, &t.services);
    result
}

fn open_log(dir: &Path, name: &str) -> Result<File, Error> {
    access::append(&log_path(dir, name)).map_err(|source| Error::Log { name: name.to_owned(), source })
}

/// Stops `name`'s whole process group ([`Group::stop`]: SIGTERM, SIGKILL after the grace
/// period), waiting until no process of the group is left. Returns the service.
fn stop(shared: &Shared, name: &str) -> Result<Vec<Service>, Error> {
    let pgid = {
        let mut t = lock(shared);
        let Some(s) = t.services.iter_mut().find(|s| s.name == name) else {
            return Err(Error::NoService(name.to_owned()));
        };
        match s.state.pid {
            Some(pid) if matches!(s.state.status, Status::Running | Status::Starting | Status::Stopping) => {
                s.state.status = Status::Stopping;
                pid
            }
            _ => {
                if s.state.status != Status::Failed {
                    s.state.status = Status::Stopped;
                }
                return Ok(vec![s.clone()]);
            }
        }
    };
    // Not pinned: the reaper may reap the leader at any time, so the group counts as over as
    // soon as no member is left.
    let group = Group::with_id(pgid);
    if group.stop(shared.grace, |deadline| gone_by(group, deadline)) == Stopped::Survived {
        return Err(Error::Survived { name: name.to_owned(), pgid });
    }
    let mut t = lock(shared);
    let adopted = t.adopted.remove(&pgid);
    let Some(s) = t.services.iter_mut().find(|s| s.name == name) else {
        return Err(Error::NoService(name.to_owned()));
    };
    if s.state.pid == Some(pgid) || adopted {
        s.state.pid = None;
        s.state.started = None;
    }
    s.state.status = Status::Stopped;
    let out = vec![s.clone()];
    publish(shared, "stopped", s);
    persist(&shared.dir, &t.services);
    Ok(out)
}

/// Waits until no process of `group` is left (true) or `deadline` passes (false).
fn gone_by(group: Group, deadline: Instant) -> bool {
    loop {
        if !group.alive() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
