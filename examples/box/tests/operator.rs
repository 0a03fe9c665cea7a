//! The supervisor as a change source, end to end with real processes: the box's project binary
//! (`box`) runs `chant operator` over a temporary project whose `box` block declares a real HTTP
//! service supervised by the `sprite-env` stand-in. A `kill -9` of the service makes the
//! supervisor publish the exit; the operator wakes a round early (`woken by a change signal`),
//! the converge rule restarts the service, and all of it happens long before `--interval`.
//! Without a supervisor stream the operator says so once and keeps its timer. `workspace status`
//! shows the same box: the declaration beside the supervisor's listing, and the newest tick.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

const BOX: &str = env!("CARGO_BIN_EXE_box");
const SPRITE_ENV: &str = env!("CARGO_BIN_EXE_box-sprite-env");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn answers(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// Polls `cond` every 20 ms until it holds or `within` passes.
fn eventually(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A project in a temporary git repository, with the example's `app` service script, and a
/// supervisor state directory; dropping it kills the supervisor and every service group.
struct Box {
    project: tempfile::TempDir,
    state: tempfile::TempDir,
    port: u16,
}

impl Box {
    fn new() -> Self {
        let project = tempfile::tempdir().unwrap();
        let state = tempfile::Builder::new().prefix("sv").tempdir_in("/tmp").unwrap();
        let d = project.path();
        let port = free_port();
        let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("services/app.py");
        std::fs::copy(app, d.join("app.py")).unwrap();
        std::fs::write(d.join("chant.toml"), "[project]\nname = \"box-operator\"\n").unwrap();
        let services = json!([
            {"name": "app", "cmd": format!("python3 ${{CHANT_PROJECT_DIR}}/app.py {port}"), "httpPort": port,
             "health": format!("http://127.0.0.1:{port}/health")},
            {"name": "worker", "cmd": "sleep 600", "needs": ["app"]}
        ]);
        let ws = json!({"members": [{"name": "box", "dir": ".", "kind": "other", "because": "the box under test",
                                      "box": {"services": services}}]});
        std::fs::write(d.join("chant.workspace.json"), serde_json::to_string_pretty(&ws).unwrap()).unwrap();
        for args in [&["init", "-q", "-b", "main"][..], &["add", "."], &["commit", "-q", "-m", "init"]] {
            let out = git(d).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Box { project, state, port }
    }

    fn command(&self, program: &str) -> Command {
        let mut c = git_env(Command::new(program));
        c.current_dir(self.project.path())
            .env("SPRITE_ENV_STATE_DIR", self.state.path())
            .env("SPRITE_ENV_STOP_GRACE", "2s")
            .env("CHANT_SPRITE_ENV", SPRITE_ENV)
            .env("CHANT_SPRITE_PROBES", "2")
            .env("CHANT_SPRITE_PROBE_INTERVAL", "100ms")
            .env("CHANT_SPRITE_PROBE_TIMEOUT", "1s")
            .env("CHANT_SPRITE_WAIT", "20s")
            .env("CHANT_SPRITE_WAIT_INTERVAL", "50ms")
            .stdin(Stdio::null());
        c
    }

    fn list(&self) -> Vec<Value> {
        let out = self.command(SPRITE_ENV).args(["services", "list"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn service(&self, name: &str) -> Value {
        self.list().into_iter().find(|s| s["name"] == name).unwrap()
    }

    fn box_json(&self, args: &[&str]) -> Value {
        let out = self.command(BOX).args(args).output().unwrap();
        assert!(out.status.success(), "box {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Box {
    fn drop(&mut self) {
        let pid = std::fs::read_to_string(self.state.path().join("daemon.pid")).unwrap_or_default();
        if let Some(pid) = pid.split_whitespace().next().and_then(|p| p.parse::<i32>().ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let table = std::fs::read_to_string(self.state.path().join("services.json")).unwrap_or_default();
        let services: Vec<Value> = serde_json::from_str(&table).unwrap_or_default();
        for s in services {
            if let Some(pid) = s["state"]["pid"].as_i64() {
                let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

fn git_env(mut c: Command) -> Command {
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
    c
}

fn git(dir: &Path) -> Command {
    let mut c = git_env(Command::new("git"));
    c.current_dir(dir);
    c
}

/// A running `box operator`, its stdout lines on a channel; dropping it stops it.
struct Operator {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Operator {
    fn start(b: &Box, interval: &str) -> Self {
        Operator::spawn(b.command(BOX), interval)
    }

    fn spawn(mut command: Command, interval: &str) -> Self {
        let mut child = command
            .args(["operator", "-v", "--interval", interval])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let err_tx = tx.clone();
        std::thread::spawn(move || forward(stdout, &tx));
        std::thread::spawn(move || forward(stderr, &err_tx));
        Operator { child, lines, seen: Vec::new() }
    }

    /// Waits up to `within` for a line containing `text`; returns it.
    fn expect(&mut self, within: Duration, text: &str) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    panic!("no line with {text:?} within {within:?}; seen:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    /// Like [`Operator::expect`], but a line already seen counts: op lines (stdout) and notes
    /// (stderr) come through two pipes, so their order between the streams is not fixed.
    fn seen_or_expect(&mut self, within: Duration, text: &str) -> String {
        match self.seen.iter().find(|l| l.contains(text)) {
            Some(line) => line.clone(),
            None => self.expect(within, text),
        }
    }

    /// Stops it with SIGTERM and waits for it to exit; returns every line it printed.
    fn stop(mut self) -> Vec<String> {
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        // The readers end with the process's pipes; collect what is left.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        std::mem::take(&mut self.seen)
    }
}

/// Sends each line read from `from` to `to`, until either end closes.
fn forward(from: impl std::io::Read, to: &std::sync::mpsc::Sender<String>) {
    for line in BufReader::new(from).lines().map_while(Result::ok) {
        if to.send(line).is_err() {
            break;
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_killed_service_wakes_the_operator_which_restarts_it_long_before_the_interval() {
    let b = Box::new();
    let applied = b.command(BOX).args(["run", "services"]).output().unwrap();
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    eventually(Duration::from_secs(20), "app to answer", || answers(b.port));

    // An hour's interval: every round after the first is woken by the supervisor's stream.
    let mut op = Operator::start(&b, "1h");
    op.expect(Duration::from_secs(60), "operator: converge@box ticked=1 status=in-sync");
    op.seen_or_expect(
        Duration::from_secs(10),
        "operator: sprite-env(box) change signal subscribed (the timer still runs)",
    );

    let pid = b.service("app")["state"]["pid"].as_i64().unwrap() as i32;
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    op.expect(Duration::from_secs(60), "operator: woken by a change signal");
    op.expect(
        Duration::from_secs(60),
        "operator: converge@box ticked=1 status=healed(ran restart-drifted [app] -> restart-service)",
    );
    // The dispatched restart waited for the health URL, so the app answers once the tick is over.
    assert!(answers(b.port));
    let app = b.service("app");
    assert_eq!(app["state"]["status"], "running");
    assert_ne!(app["state"]["pid"].as_i64().unwrap() as i32, pid);
    // The supervisor counted the restart, and `workspace status` shows it.
    assert_eq!(app["state"]["restarts"], 1, "{app}");
    let view = b.box_json(&["workspace", "status", "--json"]);
    let shown = &view["members"][0]["box"]["services"][0];
    assert_eq!((&shown["name"], &shown["listed"]["restarts"]), (&json!("app"), &json!(1)), "{view}");
    let lines = op.stop();
    assert_eq!(lines.iter().filter(|l| l.contains("sprite-env(box) change signal")).count(), 1, "{lines:#?}");

    // The ledger holds the heal: the newest tick drifted on app and ran restart-service for it.
    let log = b.box_json(&["operator", "log", "--json"]);
    let entries = log["entries"].as_array().unwrap_or_else(|| panic!("{log}"));
    let healed = entries.iter().filter(|e| e["kind"] == "tick").any(|t| {
        t["record"]["outcomes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|o| o["action"] == "ran" && o["op"] == "restart-service" && o["resource"] == "app")
    });
    assert!(healed, "{log:#}");
}

#[test]
fn without_a_supervisor_stream_the_operator_says_so_once_and_keeps_its_timer() {
    let b = Box::new();
    // A supervisor with the command line but no stream, as a sprite's own `sprite-env` is (this
    // one cannot even list, so every service is unknown and nothing is dispatched), and no
    // stand-in daemon serves the state directory.
    let fake = b.project.path().join("sprite-env");
    std::fs::write(&fake, "#!/bin/sh\necho 'sprite-env: not on this machine' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut command = b.command(BOX);
    command.env("CHANT_SPRITE_ENV", &fake);
    let mut op = Operator::spawn(command, "1s");
    for _ in 0..3 {
        // Nothing could be listed: every service is unknown, which is never `ok`.
        op.expect(Duration::from_secs(60), "operator: converge@box ticked=1 status=unknown(2 unobserved, first: ");
    }
    let lines = op.stop();
    let said: Vec<&String> = lines.iter().filter(|l| l.contains("sprite-env(box) change signal")).collect();
    assert_eq!(said.len(), 1, "{lines:#?}");
    assert!(said[0].contains("change signal unavailable, polling on the timer"), "{}", said[0]);
    assert!(!lines.iter().any(|l| l.contains("woken by a change signal")), "{lines:#?}");
    assert!(!lines.iter().any(|l| l.contains("restart-service")), "{lines:#?}");
    assert!(!b.state.path().join("daemon.pid").exists());
}

#[test]
fn workspace_status_shows_the_declared_and_listed_services_and_the_newest_tick() {
    let b = Box::new();
    let before = b.box_json(&["workspace", "status", "--json"]);
    assert_eq!(
        before["members"][0]["converge"],
        json!([{"op": "converge", "env": "box", "health": {"state": "never-ticked"}, "lastTick": null, "error": null}])
    );

    let applied = b.command(BOX).args(["run", "services"]).output().unwrap();
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    eventually(Duration::from_secs(20), "app to answer", || answers(b.port));
    let once = b.command(BOX).args(["operator", "--once"]).output().unwrap();
    assert!(once.status.success(), "{}", String::from_utf8_lossy(&once.stderr));

    let view = b.box_json(&["workspace", "status", "--json"]);
    assert_eq!(view["version"], 1);
    let members = view["members"].as_array().unwrap();
    assert_eq!(members.len(), 1);
    let m = &members[0];
    assert_eq!((&m["name"], &m["dir"]), (&json!("box"), &json!(".")));
    assert_eq!(m["box"]["error"], Value::Null);
    assert_eq!(m["box"]["supervisor"], json!({"error": null}));
    let services = m["box"]["services"].as_array().unwrap();
    let app = &services[0];
    assert_eq!(app["name"], "app");
    assert_eq!(
        app["declared"],
        json!({"cmd": format!("python3 ${{CHANT_PROJECT_DIR}}/app.py {}", b.port), "needs": [], "httpPort": b.port,
               "duration": null, "health": format!("http://127.0.0.1:{}/health", b.port), "optional": false})
    );
    // The supervisor (chant's stand-in) lists the command line as declared: it expands
    // `${CHANT_PROJECT_DIR}` only into what it spawns.
    let listed = app["listed"].as_object().unwrap();
    let known: serde_json::Map<String, Value> =
        ["status", "cmd", "needs", "httpPort"].into_iter().map(|k| (k.to_owned(), listed[k].clone())).collect();
    assert_eq!(
        Value::Object(known),
        json!({"status": "running", "cmd": format!("python3 ${{CHANT_PROJECT_DIR}}/app.py {}", b.port),
               "needs": [], "httpPort": b.port})
    );
    // The supervisor's process facts, and a health probe made now with its latency.
    assert_eq!(app["listed"]["pid"], b.service("app")["state"]["pid"], "{app}");
    assert!(app["listed"]["startedAt"].is_string() && app["listed"]["uptimeSeconds"].is_u64(), "{app}");
    assert_eq!(app["listed"]["restarts"], 0, "{app}");
    assert_eq!((&app["probe"]["ok"], &app["probe"]["status"]), (&json!(true), &json!(200)), "{app}");
    assert!(app["probe"]["latencyMs"].is_u64(), "{app}");
    assert_eq!(services[1]["name"], "worker");
    assert_eq!(services[1]["declared"]["needs"], json!(["app"]));
    assert_eq!(services[1]["listed"]["needs"], json!(["app"]));
    assert_eq!(services[1]["listed"]["status"], "running");

    let converge = m["converge"].as_array().unwrap();
    assert_eq!(converge.len(), 1);
    assert_eq!(
        (&converge[0]["op"], &converge[0]["env"], &converge[0]["error"]),
        (&json!("converge"), &json!("box"), &Value::Null)
    );
    let tick = &converge[0]["lastTick"];
    assert_eq!(tick["op"], "converge");
    assert_eq!(tick["firedRuleIds"], json!([]));
    assert_eq!(tick["resources"].as_array().unwrap().len(), 2);
    assert!(tick["resources"].as_array().unwrap().iter().all(|r| r["status"] == "in-sync"), "{tick}");

    let text = b.command(BOX).args(["workspace", "status"]).output().unwrap();
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("box (.)\n"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("app")
            && l.contains("running")
            && l.contains("  pid ")
            && l.contains("  restarts 0  health http://")
            && l.contains(" ok in ")),
        "{text}"
    );
    // The health word and how old it is; the counts are in the JSON.
    assert!(text.contains("converge@box: in-sync, observed "), "{text}");
    assert!(!text.contains("drifted 0"), "no counters on the line: {text}");
}

#[test]
fn services_start_stop_and_restart_a_declared_service_through_the_project_binary() {
    let b = Box::new();
    let applied = b.command(BOX).args(["run", "services"]).output().unwrap();
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    eventually(Duration::from_secs(20), "app to answer", || answers(b.port));

    let stopped = b.box_json(&["services", "stop", "worker", "--json"]);
    assert_eq!(
        (&stopped["member"], &stopped["name"], &stopped["action"], &stopped["healthy"]),
        (&json!("box"), &json!("worker"), &json!("stop"), &Value::Null),
        "{stopped}"
    );
    assert_eq!(stopped["listed"]["status"], "stopped", "{stopped}");
    assert_eq!(b.service("worker")["state"]["status"], "stopped");

    let before = b.service("app")["state"]["pid"].as_i64().unwrap();
    let restarted = b.box_json(&["services", "restart", "app", "--json"]);
    assert_eq!((&restarted["action"], &restarted["healthy"]), (&json!("restart"), &json!(true)), "{restarted}");
    assert_eq!((&restarted["listed"]["status"], &restarted["listed"]["restarts"]), (&json!("running"), &json!(1)));
    assert_ne!(restarted["listed"]["pid"].as_i64().unwrap(), before, "a new process");
    assert!(answers(b.port), "a restart waits for the health URL");

    let started = b.command(BOX).args(["services", "start", "worker"]).output().unwrap();
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let text = String::from_utf8(started.stdout).unwrap();
    assert!(text.starts_with("started worker (box): running, pid "), "{text}");
    assert_eq!(b.service("worker")["state"]["restarts"], 1, "started again after it ran");

    let unknown = b.command(BOX).args(["services", "restart", "nope"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(err.contains("declares a service \"nope\" (declared: app, worker)"), "{err}");
}

#[test]
fn the_observer_and_the_restart_read_their_services_inline_and_from_a_file() {
    let b = Box::new();
    let applied = b.command(BOX).args(["run", "services"]).output().unwrap();
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    eventually(Duration::from_secs(20), "app to answer", || answers(b.port));

    // Inline names: judged by the supervisor's state alone (no health URL to probe).
    let checked = b.box_json(&["run", "check-listed", "--json"]);
    assert_eq!(checked["status"], "ok", "{checked}");
    assert_eq!(checked["outcomes"][0]["detail"], "2 in-sync, 0 drifted, 0 unknown", "{checked}");
    b.box_json(&["services", "stop", "worker", "--json"]);
    let checked = b.box_json(&["run", "check-listed", "--json"]);
    assert_eq!(checked["outcomes"][0]["detail"], "1 in-sync, 1 drifted, 0 unknown", "{checked}");

    // A services file relative to the project root: its health URL is what the restart waits for.
    let missing = b.command(BOX).args(["run", "restart-app", "--json"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1), "{}", String::from_utf8_lossy(&missing.stderr));
    let record: Value = serde_json::from_slice(&missing.stdout).unwrap();
    let why = record.to_string();
    assert!(
        why.contains("services_file `examples/box/services.json` of sprite_service_restart (")
            && why.contains("cannot be read"),
        "names the file and the field: {why}"
    );
    let before = b.service("app")["state"]["pid"].as_i64().unwrap();
    let list = json!({"services": [{"name": "app", "cmd": "unused", "health": format!("http://127.0.0.1:{}/health", b.port)}]});
    std::fs::create_dir_all(b.project.path().join("examples/box")).unwrap();
    std::fs::write(b.project.path().join("examples/box/services.json"), list.to_string()).unwrap();
    let restarted = b.box_json(&["run", "restart-app", "--json"]);
    assert_eq!(restarted["status"], "ok", "{restarted}");
    assert_eq!(restarted["outcomes"][0]["detail"], "restarted: app", "{restarted}");
    assert!(answers(b.port), "the restart waited for the file's health URL");
    assert_ne!(b.service("app")["state"]["pid"].as_i64().unwrap(), before, "a new process");
    assert_eq!(b.service("app")["state"]["restarts"], 1);

    // A file that is not a box block is refused the same way, and nothing is restarted.
    std::fs::write(b.project.path().join("examples/box/services.json"), r#"{"services": [{"name": "App"}]}"#).unwrap();
    let invalid = b.command(BOX).args(["run", "restart-app", "--json"]).output().unwrap();
    assert_eq!(invalid.status.code(), Some(1));
    let why = String::from_utf8_lossy(&invalid.stdout);
    assert!(why.contains("examples/box/services.json") && why.contains("is not a valid box block"), "{why}");
    assert_eq!(b.service("app")["state"]["restarts"], 1);
}
