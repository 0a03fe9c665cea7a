//! The `sprite-env` stand-in driven through its binary, with real services serving real HTTP on
//! 127.0.0.1: crash reporting without restarts, whole-group stops, re-adoption after the daemon's
//! own death, stdio never held by the caller, and the refusals.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_sprite-env");

/// A state directory with its daemon; dropping it kills the daemon and every service group.
pub(crate) struct Sv {
    /// Held for its removal on drop.
    _dir: tempfile::TempDir,
    state: PathBuf,
}

impl Sv {
    pub(crate) fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("sv").tempdir_in("/tmp").unwrap();
        Sv { state: dir.path().to_path_buf(), _dir: dir }
    }

    /// A state directory `rel` below a temporary one, which does not exist yet.
    pub(crate) fn nested(rel: &str) -> Self {
        let dir = tempfile::Builder::new().prefix("sv").tempdir_in("/tmp").unwrap();
        Sv { state: dir.path().join(rel), _dir: dir }
    }

    pub(crate) fn state(&self) -> &Path {
        &self.state
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env("SPRITE_ENV_STATE_DIR", self.state())
            .env("SPRITE_ENV_STOP_GRACE", "2s")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn list(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["services", "list"])).unwrap()
    }

    pub(crate) fn service(&self, name: &str) -> serde_json::Value {
        self.list().into_iter().find(|s| s["name"] == name).unwrap()
    }

    pub(crate) fn status(&self, name: &str) -> String {
        self.service(name)["state"]["status"].as_str().unwrap().to_owned()
    }

    pub(crate) fn pid(&self, name: &str) -> i32 {
        self.service(name)["state"]["pid"].as_i64().unwrap() as i32
    }

    fn daemon_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.state().join("daemon.pid")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }
}

impl Drop for Sv {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let table = std::fs::read_to_string(self.state().join("services.json")).unwrap_or_default();
        let services: Vec<serde_json::Value> = serde_json::from_str(&table).unwrap_or_default();
        for s in services {
            if let Some(pid) = s["state"]["pid"].as_i64() {
                let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

/// A free port on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Polls `cond` every 20 ms until it holds or `within` passes.
pub(crate) fn eventually(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn answers(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// A script serving HTTP 200 on `/health` at `port`, written under `dir`.
pub(crate) fn http_service(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.py"));
    std::fs::write(
        &path,
        "import http.server, sys\n\
         class H(http.server.BaseHTTPRequestHandler):\n\
         \x20   def do_GET(self):\n\
         \x20       self.send_response(200 if self.path == '/health' else 404)\n\
         \x20       self.end_headers()\n\
         \x20       self.wfile.write(b'ok')\n\
         \x20   def log_message(self, *a):\n\
         \x20       pass\n\
         http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n",
    )
    .unwrap();
    path
}

#[test]
fn a_killed_service_is_listed_failed_with_its_status_and_not_restarted() {
    let b = Sv::new();
    let port = free_port();
    let script = http_service(b.state(), "app");
    let p = port.to_string();
    let args = format!("{},{p}", script.display());
    b.ok(&["services", "create", "app", "--cmd", "python3", "--args", &args, "--http-port", &p, "--no-stream"]);
    eventually(Duration::from_secs(20), "the app to answer", || answers(port));
    let s = b.service("app");
    assert_eq!(s["state"]["status"], "running");
    assert_eq!(s["cmd"], "python3");
    assert_eq!(s["http_port"], port);
    assert_eq!(s["args"][1], p.as_str());

    let pid = b.pid("app");
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(10), "app to be failed", || b.status("app") == "failed");
    assert_eq!(b.service("app")["state"]["exit_status"], "killed by signal 9");
    // No restart policy: it stays down until asked (the port stays free, the status failed).
    assert!(!answers(port));
    assert_eq!(b.status("app"), "failed");

    let table = b.ok(&["services", "list", "--table"]);
    let cols: Vec<&str> = table.lines().next().unwrap().split('\t').collect();
    assert_eq!(&cols[..5], &["app", "failed", "-", p.as_str(), "python3"]);

    b.ok(&["services", "restart", "app"]);
    eventually(Duration::from_secs(20), "the app to answer again", || answers(port));
    assert_ne!(b.pid("app"), pid);
    b.ok(&["services", "stop", "app"]);
    assert_eq!(b.status("app"), "stopped");
    assert!(!answers(port));
}

#[test]
fn stop_ends_the_whole_group_of_a_service_that_forked() {
    let b = Sv::new();
    let port = free_port();
    let script = http_service(b.state(), "fork");
    // The leader is a shell that forks the server and waits: the server is a grandchild of the daemon.
    let sh = format!("python3 {} {port} & wait", script.display());
    b.ok(&["services", "create", "forker", "--cmd", "/bin/sh", "--args", &format!("-c,{sh}"), "--no-stream"]);
    eventually(Duration::from_secs(20), "the forked server to answer", || answers(port));
    let leader = b.pid("forker");
    b.ok(&["services", "stop", "forker"]);
    assert_eq!(b.status("forker"), "stopped");
    // The stop returned only once no process of the group was left: the port is free now.
    assert!(!answers(port), "the forked child survived the stop");
    assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
    assert!(kill(Pid::from_raw(leader), None).is_err());
}

#[test]
fn a_restarted_daemon_re_adopts_running_services() {
    let b = Sv::new();
    let port = free_port();
    let script = http_service(b.state(), "app");
    let args = format!("{},{port}", script.display());
    b.ok(&["services", "create", "app", "--cmd", "python3", "--args", &args, "--no-stream"]);
    eventually(Duration::from_secs(20), "the app to answer", || answers(port));
    b.ok(&["services", "create", "two", "--cmd", "sleep", "--args", "600", "--no-stream"]);
    let pid = b.pid("app");
    let daemon = b.daemon_pid().unwrap();
    kill(Pid::from_raw(daemon), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(10), "the daemon to die", || {
        std::fs::read_to_string(format!("/proc/{daemon}/stat")).map_or(true, |s| s.contains(") Z"))
    });
    // The next command starts a new daemon, which finds the service alive with its start time.
    let s = b.service("app");
    assert_ne!(b.daemon_pid().unwrap(), daemon);
    assert_eq!(s["state"]["status"], "running");
    assert_eq!(s["state"]["pid"], pid);
    assert!(answers(port));
    // An adopted service killed is noticed (through /proc: it is not the daemon's child).
    kill(Pid::from_raw(b.pid("two")), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(10), "the adopted service's end to be listed", || b.status("two") == "failed");
    assert!(b.service("two")["state"]["exit_status"].as_str().unwrap().contains("not the supervisor's child"));
    // An adopted service still stops whole, and its end is noticed without being a child.
    b.ok(&["services", "stop", "app"]);
    assert!(!answers(port));
    b.ok(&["services", "start", "app"]);
    eventually(Duration::from_secs(20), "the app to answer", || answers(port));
    b.ok(&["daemon", "stop", "--stop-services"]);
    assert!(!answers(port));
}

#[test]
fn the_caller_never_holds_the_daemon_or_a_service_by_its_stdio() {
    let b = Sv::new();
    let mut child = Command::new(BIN)
        .args(["services", "create", "sleeper", "--cmd", "sleep", "--args", "600", "--no-stream"])
        .env("SPRITE_ENV_STATE_DIR", b.state())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    // Both pipes reach EOF although the daemon and the service still run: neither inherited them.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut a, mut e) = (String::new(), String::new());
        stdout.read_to_string(&mut a).unwrap();
        stderr.read_to_string(&mut e).unwrap();
        tx.send((a, e)).unwrap();
    });
    let (out, err) = rx.recv_timeout(Duration::from_secs(30)).expect("a pipe of the caller is still held");
    assert!(child.wait().unwrap().success(), "{err}");
    assert_eq!(out.trim(), "sleeper\trunning");
    assert_eq!(b.status("sleeper"), "running");
}

/// The `SigBlk` mask of `pid`.
fn blocked_signals(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("SigBlk:")).unwrap();
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

#[test]
fn a_daemon_started_by_a_caller_that_blocks_sigterm_starts_with_an_empty_mask_and_stops_on_it() {
    let b = Sv::new();
    // The caller blocks SIGINT and SIGTERM, as the operator once did to wait for them; std's
    // Command hands that mask to the `sprite-env` it starts, which starts the daemon.
    let state = b.state().to_owned();
    std::thread::spawn(move || {
        let mut blocked = nix::sys::signal::SigSet::empty();
        blocked.add(Signal::SIGINT);
        blocked.add(Signal::SIGTERM);
        blocked.thread_block().unwrap();
        let out = Command::new(BIN)
            .args(["services", "create", "sleeper", "--cmd", "sleep", "--args", "600", "--no-stream"])
            .env("SPRITE_ENV_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    })
    .join()
    .unwrap();
    let daemon = b.daemon_pid().unwrap();
    assert_eq!(blocked_signals(daemon), 0, "the daemon inherited a blocked signal mask");
    assert_eq!(blocked_signals(b.pid("sleeper")), 0, "the service inherited a blocked signal mask");
    // And so SIGTERM stops it.
    kill(Pid::from_raw(daemon), Signal::SIGTERM).unwrap();
    eventually(Duration::from_secs(10), "the daemon to end on SIGTERM", || {
        std::fs::read_to_string(format!("/proc/{daemon}/stat")).map_or(true, |s| s.contains(") Z"))
    });
}

#[test]
fn refusals_are_one_line_and_exit_1() {
    let b = Sv::new();
    let out = b.run(&["services", "restart", "ghost"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "sprite-env: no service ghost");
    let out = b.run(&["services", "create", "x", "--cmd", "sleep", "--args", "60", "--needs", "ghost", "--no-stream"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs ghost, which is not defined"));
    b.ok(&["services", "create", "x", "--cmd", "sleep", "--args", "60", "--no-stream"]);
    let out = b.run(&["services", "create", "x", "--cmd", "sleep", "--args", "60", "--no-stream"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("service x already exists"));
    let out = b.run(&["services", "create", "y", "--cmd", "/nonexistent/prog", "--no-stream"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.status("y"), "failed");
    assert_eq!(b.run(&["services", "frobnicate"]).status.code(), Some(2));
    b.ok(&["services", "delete", "x"]);
    assert!(b.list().iter().all(|s| s["name"] != "x"));
}

#[test]
fn create_with_duration_streams_the_log() {
    let b = Sv::new();
    let out = b.ok(&[
        "services",
        "create",
        "talker",
        "--cmd",
        "/bin/sh",
        "--args",
        "-c,echo hello-from-talker; sleep 60",
        "--duration",
        "1s",
    ]);
    assert!(out.contains("hello-from-talker"), "{out}");
}

#[test]
fn every_state_change_is_published_to_a_change_subscription() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let b = Sv::new();
    let sink = || chant::observe::observation::ChangeSink::new(|| {}, |_| {});
    let refused = chant::lexicon::sprite::subscribe_changes_in(b.state(), sink()).unwrap_err().to_string();
    assert!(refused.contains("no change stream"), "{refused}");

    b.ok(&["services", "create", "sleeper", "--cmd", "sleep", "--args", "600", "--no-stream"]);
    let changes = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&changes);
    let sink = chant::observe::observation::ChangeSink::new(move || _ = seen.fetch_add(1, Ordering::SeqCst), |_| {});
    let subscription = chant::lexicon::sprite::subscribe_changes_in(b.state(), sink).unwrap();
    // A crash wakes the subscriber: no poll of the list needed.
    kill(Pid::from_raw(b.pid("sleeper")), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(10), "the exit to be published", || changes.load(Ordering::SeqCst) >= 1);
    b.ok(&["services", "start", "sleeper"]);
    eventually(Duration::from_secs(10), "the start to be published", || changes.load(Ordering::SeqCst) >= 2);
    drop(subscription);
}

#[test]
fn start_brings_up_what_a_service_needs_first_through_a_diamond() {
    let b = Sv::new();
    b.ok(&["services", "create", "d", "--cmd", "sleep", "--args", "600", "--no-stream"]);
    b.ok(&["services", "create", "b", "--cmd", "sleep", "--args", "600", "--needs", "d", "--no-stream"]);
    b.ok(&["services", "create", "c", "--cmd", "sleep", "--args", "600", "--needs", "d", "--no-stream"]);
    b.ok(&["services", "create", "a", "--cmd", "sleep", "--args", "600", "--needs", "b,c", "--no-stream"]);
    for s in ["a", "b", "c", "d"] {
        b.ok(&["services", "stop", s]);
    }
    b.ok(&["services", "start", "a"]);
    for s in ["a", "b", "c", "d"] {
        assert_eq!(b.status(s), "running", "{s}");
    }
    assert_eq!(b.service("a")["needs"], serde_json::json!(["b", "c"]));
}

/// The daemons alive (not zombies) serving `dir`.
fn daemons_of(dir: &Path) -> usize {
    let needle = format!("SPRITE_ENV_STATE_DIR={}", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("__daemon")
                && String::from_utf8_lossy(&env).split('\0').any(|v| v == needle)
                && !stat.contains(") Z")
        })
        .count()
}

#[test]
fn concurrent_first_commands_start_one_daemon() {
    let b = Sv::new();
    let clients: Vec<_> = (0..4)
        .map(|_| {
            Command::new(BIN)
                .args(["services", "list"])
                .env("SPRITE_ENV_STATE_DIR", b.state())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in clients {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    }
    eventually(Duration::from_secs(10), "the losing daemons to exit", || daemons_of(b.state()) == 1);
}

#[test]
fn a_service_name_outside_the_op_name_rule_is_refused_before_anything_is_written() {
    use chant::supervisor::{Client, Request};

    let b = Sv::new();
    let base = b.state().file_name().unwrap().to_string_lossy().into_owned();
    // `logs/<name>.log` with this name would be `/tmp/<base>-escape.log`, outside the state dir.
    let escape = format!("../../{base}-escape");
    let outside = b.state().parent().unwrap().join(format!("{base}-escape.log"));
    let out = b.run(&["services", "create", &escape, "--cmd", "sleep", "--args", "60", "--no-stream"]);
    let escaped = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!escaped, "the log was written outside the state directory");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must match [a-z][a-z0-9-]*"));
    let out = b.run(&["services", "create", "ok", "--cmd", "sleep", "--needs", "a\tb", "--no-stream"]);
    assert_eq!(out.status.code(), Some(2));

    // The daemon refuses them too, from any client that speaks its protocol: a tab or a newline
    // would forge rows of `services list --table`.
    b.ok(&["services", "list"]);
    let client = Client::new(b.state(), BIN);
    let create = |name: &str, needs: &[&str]| Request::Create {
        name: name.to_owned(),
        cmd: "sleep".into(),
        args: vec!["60".into()],
        needs: needs.iter().map(|n| (*n).to_owned()).collect(),
        http_port: None,
        dir: None,
        values: Default::default(),
    };
    for name in [escape.as_str(), "evil\trunning\t-\t-\tsleep", "a\nforged\trunning", "App", "", "-x"] {
        let refused = client.send(&create(name, &[])).unwrap_err().to_string();
        assert!(refused.contains("must match [a-z][a-z0-9-]*"), "{name:?}: {refused}");
    }
    b.ok(&["services", "create", "base", "--cmd", "sleep", "--args", "60", "--no-stream"]);
    let refused = client.send(&create("fine", &["../base"])).unwrap_err().to_string();
    assert!(refused.contains(r#""../base" must match"#), "{refused}");
    let refused =
        client.send(&Request::Restart { name: escape.clone(), values: Default::default() }).unwrap_err().to_string();
    assert!(refused.contains("must match"), "{refused}");
    let escaped = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!escaped, "the log was written outside the state directory");
    assert_eq!(b.ok(&["services", "list", "--table"]).lines().count(), 1, "only `base` is listed");
}

#[test]
fn the_state_is_private_to_its_user_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;

    // A state directory the first command creates, under a umask that would leave everything
    // group-writable; the daemon it starts inherits that umask.
    let b = Sv::nested("nested/state");
    let out = Command::new("/bin/sh")
        .args(["-c", &format!("umask 002; exec '{BIN}' services create app --cmd sleep --args 600 --no-stream")])
        .env("SPRITE_ENV_STATE_DIR", b.state())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = |rel: &str| std::fs::metadata(b.state().join(rel)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(""), 0o700, "the state directory");
    assert_eq!(mode("logs"), 0o700, "logs/");
    assert_eq!(mode("sprite-env.sock"), 0o600, "the socket");
    for file in ["services.json", "daemon.pid", "daemon.log", "logs/app.log"] {
        assert_eq!(mode(file), 0o600, "{file}");
    }
}

#[test]
fn a_caller_running_as_another_user_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can connect as another user");
        return;
    }
    let b = Sv::new();
    b.ok(&["services", "create", "app", "--cmd", "sleep", "--args", "600", "--no-stream"]);
    // Open the way to the socket as an older version left it under a loose umask: only the peer
    // check stands between another user and running commands as this one.
    for (path, mode) in [(b.state().to_path_buf(), 0o777), (b.state().join("sprite-env.sock"), 0o777)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let nobody = 65534;
    for args in [&["services", "list"][..], &["services", "create", "evil", "--cmd", "sleep", "--no-stream"]] {
        let out = Command::new(BIN)
            .args(args)
            .env("SPRITE_ENV_STATE_DIR", b.state())
            .current_dir("/")
            .uid(nobody)
            .gid(nobody)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} was answered: {}", String::from_utf8_lossy(&out.stdout));
        assert!(err.contains(&format!("refused: the caller runs as uid {nobody}, the supervisor as uid 0")), "{err}");
    }
    assert!(b.list().iter().all(|s| s["name"] != "evil"));
    assert_eq!(b.status("app"), "running");
}

#[test]
fn a_watcher_that_stops_reading_never_freezes_the_supervisor() {
    use std::io::BufRead;

    use chant::supervisor::{Client, Request};

    let b = Sv::new();
    b.ok(&["services", "create", "blip", "--cmd", "true", "--no-stream"]);
    let client = Client::new(b.state(), BIN);
    // A watcher that never reads again, like a `box operator` under Ctrl-Z.
    let stalled = client.watch().unwrap();
    // Each restart of a service that exits at once publishes `started` and `exited`: far more
    // events than the socket buffer holds. The old daemon blocked writing to the stalled watcher
    // while holding the service table, and every later command hung.
    let (done, finished) = std::sync::mpsc::channel();
    let flood = client.clone();
    std::thread::spawn(move || {
        for _ in 0..1500 {
            flood.send(&Request::Restart { name: "blip".into(), values: Default::default() }).unwrap();
        }
        done.send(()).unwrap();
    });
    finished.recv_timeout(Duration::from_secs(120)).expect("the supervisor froze behind a stalled watcher");
    // The last restart's `true` exits on its own time: the supervisor still reaps and lists it.
    eventually(Duration::from_secs(20), "a dead service to be reaped and listed", || b.status("blip") == "failed");

    // The stalled watcher was dropped: it reads what it was sent, then the end of its stream.
    let stream = stalled.get_ref();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let lines: Vec<String> = stalled.lines().collect::<Result<_, _>>().expect("the stalled watcher was never dropped");
    assert!(lines.len() < 3000, "it was sent every event: {}", lines.len());

    // A watcher that reconnects gets the next events.
    let mut fresh = client.watch().unwrap();
    client.send(&Request::Restart { name: "blip".into(), values: Default::default() }).unwrap();
    let mut event = String::new();
    fresh.read_line(&mut event).unwrap();
    assert!(event.contains("\"service\":\"blip\""), "{event}");
}
