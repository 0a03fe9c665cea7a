//! Self-healing latency of a box service, side by side with Monit, through real binaries, real
//! processes and real HTTP on 127.0.0.1 (issue 6, "Benchmark, side by side with the incumbent").
//!
//! Run with `cargo bench -p chant-e2e --bench box_heal` (release build). `CHANT_BENCH_KILLS` sets
//! the kills per side (default 20), `CHANT_BENCH_IDLE_SECS` the healthy window over which CPU is
//! measured (default 600), `CHANT_BENCH_GAP_SECS` the least time between two kills (default 6).
//!
//! - **chant**: `e2e-bench-box operator --interval 1s` (mode a) over one resource-mode ConvergeOp
//!   (`e2e/fixtures/box-bench/box-heal.json`, member `box`: `sprite_services_observe(box = true)`, rule `restart-drifted`
//!   dispatching `restart-service`), the box's one service `app` (a Python HTTP server answering
//!   `/health`) supervised by the `sprite-env` stand-in, provisioned by the `services` op.
//!   Observe settings: `CHANT_SPRITE_PROBES=2`, `CHANT_SPRITE_PROBE_INTERVAL=100ms`,
//!   `CHANT_SPRITE_PROBE_TIMEOUT=1s`, `CHANT_SPRITE_WAIT_INTERVAL=50ms`.
//! - **Monit**: `tini -s -- monit -I -c monitrc` with `set daemon 1` and `check process mapp with
//!   pidfile ... start program ... if failed port N type tcp then restart`, over the same Python
//!   server on its own port. The start program backgrounds the server (stdio to /dev/null) and
//!   writes its pid, as Monit expects: Monit waits for a start program to exit, so one that
//!   `exec`s into the service blocks Monit for its 30 s start timeout. The orphaned server is
//!   reparented to tini (`-s`: a subreaper), which reaps it when it is killed. Without `monit` or
//!   `tini` on PATH that side is skipped with one line.
//! - **A heal** is timed from just before `kill -9` of the service's pid to the first `200` of its
//!   health URL, polled every 20 ms (each poll a fresh connection with a 200 ms timeout), after
//!   the killed process is gone. The two sides alternate kill by kill. A chant heal counts only if
//!   a tick recorded after the kill carries a `ran` outcome of `restart-service` for `app` under
//!   the rule `restart-drifted`; before the next kill, a later tick must be all in sync.
//! - **Mode b** (the operator at its default interval, woken by the supervisor's change signal)
//!   is measured only if the operator prints `sprite-env(box) change signal subscribed` within
//!   20 s. The operator holds signals to a 5 s floor from the last round that answered a fresh
//!   signal (an echo round that confirms a heal does not move it: docs/operator.md, "Decision:
//!   the floor runs from the last round that answered a fresh signal"), so a service killed again
//!   8 s after its previous heal is answered at once; kills are `CHANT_BENCH_GAP_SECS` apart.
//! - **The restart floor**, measured in the same run before mode b with no operator running:
//!   `kill -9`, then `sprite-env services restart app` issued the instant the process is gone,
//!   timed like a heal (kill to the first `200`). Mode b prints its ratio to it.
//! - **CPU while healthy**: utime+stime+cutime+cstime from `/proc/<pid>/stat` over the window,
//!   of the operator (its reaped children: `sprite-env services list` and the like) plus the
//!   stand-in's daemon, against tini plus monit; the services themselves are left out on both
//!   sides (they are the same program), and reported apart.
#![allow(clippy::disallowed_methods)] // a bench harness spawns its processes as it likes
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;
use support::{git, hermetic};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chant::ledger::{Ledger, LedgerConfig, ShardKey};
use serde_json::{Value, json};

const PROJECT: &str = env!("CARGO_BIN_EXE_e2e-bench-box");
const SPRITE_ENV: &str = env!("CARGO_BIN_EXE_e2e-sprite-env");
const OP: &str = "box-heal";
const POLL: Duration = Duration::from_millis(20);

fn main() {
    let kills: usize = env_num("CHANT_BENCH_KILLS", 20);
    let idle = Duration::from_secs(env_num("CHANT_BENCH_IDLE_SECS", 600) as u64);
    let gap = Duration::from_secs(env_num("CHANT_BENCH_GAP_SECS", 6) as u64);
    let modes = std::env::var("CHANT_BENCH_MODES").unwrap_or_else(|_| "ab".to_owned());
    // `$TMPDIR` (default /tmp), kept short: the supervisor's socket path lives under it.
    let tmp = tempfile::Builder::new().prefix("boxbench").tempdir_in(std::env::temp_dir()).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = health_server(tmp.path());

    // chant's side: the project, the box block, the stand-in's state directory.
    let port = free_port();
    let dir = tmp.path().join("project");
    let state = tmp.path().join("sv");
    std::fs::create_dir_all(&state).unwrap();
    let ws = json!({"members": [{"name": "box", "dir": ".", "kind": "other", "because": "the box under benchmark",
        "box": {"services": [{"name": "app", "cmd": format!("python3 {} {port}", script.display()), "httpPort": port,
                              "health": format!("http://127.0.0.1:{port}/health")}]}}]});
    project(&home, &dir, &serde_json::to_string_pretty(&ws).unwrap());
    let chant_env = ChantEnv { home: home.clone(), dir: dir.clone(), state: state.clone() };
    let _stand_in = StandIn(state.clone());
    let out = chant_env.cmd(PROJECT).args(["run", "services"]).output().unwrap();
    assert!(
        out.status.success(),
        "services: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(Duration::from_secs(20), "app to answer", || health(port));
    let sv_daemon = read_pid(&state.join("daemon.pid")).expect("the stand-in's daemon pid");

    // Monit's side.
    let monit = Monit::start(tmp.path(), &script);
    if let Some(m) = &monit {
        wait_for(Duration::from_secs(30), "monit's app to answer", || health(m.port));
    }

    println!("box_heal: {kills} kills per side, >= {}s apart, health polled every 20 ms", gap.as_secs());
    println!("  machine: {} CPUs, {}", cpus(), uname());
    println!("  temporary directory: {}", chant_testkit::filesystem::describe(tmp.path()));

    // Mode (a).
    let mut op = Operator::start(&chant_env, Some("1s"));
    let ledger = Ledger::open(&dir, LedgerConfig::default()).unwrap();
    let key = ShardKey::converge(Some("box"), "box", OP).unwrap();
    wait_in_sync(&ledger, &key, 0);
    let mut chant_a = Vec::new();
    let mut monit_a = Vec::new();
    let mut last_kill = Instant::now() - gap;
    let kills_a = if modes.contains('a') { kills } else { 0 };
    for _ in 0..kills_a {
        pause_until(last_kill + gap);
        last_kill = Instant::now();
        chant_a.push(chant_heal(&chant_env, &ledger, &key, port));
        if let Some(m) = &monit {
            pause_until(last_kill + gap);
            last_kill = Instant::now();
            monit_a.push(m.heal());
        }
    }
    op.drain();
    if kills_a == 0 {
        println!("mode (a): not run (CHANT_BENCH_MODES={modes})");
    } else {
        mode_a(&chant_a, &monit_a, monit.is_some());
        cpu_while_healthy(&op, sv_daemon, monit.as_ref(), &chant_env, &ledger, &key, idle);
    }
    op.stop();

    // Mode (b): the default interval, woken by the supervisor's change signal.
    if !modes.contains('b') {
        println!("mode (b): not run (CHANT_BENCH_MODES={modes})");
        return;
    }
    // The restart floor, with no operator running: kill -9, and the restart issued through the
    // supervisor the instant the process is gone. Nothing that reacts to a crash can beat it.
    let floor: Vec<Duration> = (0..kills)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(500));
            restart_floor(&chant_env, port)
        })
        .collect();
    let mut op = Operator::start(&chant_env, None);

    let subscribed =
        op.wait_for(Duration::from_secs(20), |l| l.contains("sprite-env") && l.contains("change signal subscribed"));
    if subscribed {
        wait_in_sync(&ledger, &key, ledger.read(&key).unwrap().records.len());
        let mut chant_b = Vec::new();
        let mut last = Instant::now();
        for _ in 0..kills {
            // `gap` apart: past the 5 s floor of the round that answered the previous kill.
            pause_until(last + gap);
            last = Instant::now();
            chant_b.push(chant_heal(&chant_env, &ledger, &key, port));
        }
        println!("mode (b): operator at its default interval, woken by the supervisor's change signal");
        row("chant operator (default interval + signal)", &chant_b);
        row("restart floor (restart issued at the death)", &floor);
        ratios("chant (b) / restart floor", &chant_b, &floor);
        println!("  goal (issue 37): <= 1.5x the restart floor, median and worst (anchor: the restart floor)");
        if !monit_a.is_empty() {
            ratios("chant (b) / monit (a)", &chant_b, &monit_a);
        }
    } else {
        op.drain();
        println!("mode (b): not measured: the operator printed no sprite-env change signal subscription in 20 s");
        for l in op.seen.iter().take(10) {
            println!("  operator said: {l}");
        }
    }
    op.stop();
    if let Some(m) = monit {
        m.stop();
    }
}

/// Stops the stand-in's daemon and its services when the bench ends, panicking or not.
struct StandIn(PathBuf);

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = Command::new(SPRITE_ENV)
            .args(["daemon", "stop", "--stop-services"])
            .env("SPRITE_ENV_STATE_DIR", &self.0)
            .stdin(Stdio::null())
            .output();
    }
}

fn mode_a(chant_a: &[Duration], monit_a: &[Duration], monit: bool) {
    println!("mode (a): operator --interval 1s vs Monit `set daemon 1`");
    row("chant operator --interval 1s", chant_a);
    if monit {
        row("monit (set daemon 1, under tini -s)", monit_a);
        ratios("chant / monit", chant_a, monit_a);
    }
}

/// CPU while healthy, both daemons running side by side, over `idle`.
fn cpu_while_healthy(
    op: &Operator,
    sv_daemon: i32,
    monit: Option<&Monit>,
    chant_env: &ChantEnv,
    ledger: &Ledger,
    key: &ShardKey,
    idle: Duration,
) {
    // CPU while healthy, both daemons running side by side.
    let app_pid = sv_pid(chant_env, "app");
    let roots_chant = [op.child.id() as i32, sv_daemon];
    let roots_monit: Vec<i32> = monit.map(|m| vec![m.tini.id() as i32, m.monit_pid()]).unwrap_or_default();
    let services: Vec<i32> = [Some(app_pid), monit.and_then(|m| read_pid(&m.pidfile))].into_iter().flatten().collect();
    let t0 = Instant::now();
    let c0 = cpu(&roots_chant);
    let m0 = cpu(&roots_monit);
    let s0 = cpu(&services);
    let ticks0 = ledger.read(key).unwrap().records.len();
    std::thread::sleep(idle);
    let span = t0.elapsed().as_secs_f64();
    let c1 = cpu(&roots_chant);
    let m1 = cpu(&roots_monit);
    let s1 = cpu(&services);
    let ticks = ledger.read(key).unwrap().records.len() - ticks0;
    let per_hour = |a: f64, b: f64| (b - a) * 3600.0 / span;
    println!("CPU while healthy over {span:.0} s ({ticks} chant ticks recorded in it):");
    println!("  chant (operator + its reaped children + sprite-env daemon)  {:>8.2} CPU s/hour", per_hour(c0, c1));
    if monit.is_some() {
        println!("  monit (tini + monit + reaped children)                      {:>8.2} CPU s/hour", per_hour(m0, m1));
        println!(
            "  ratio chant / monit                                         {:>8.2}x",
            (c1 - c0) / (m1 - m0).max(1e-9)
        );
    }
    println!("  the two services themselves (left out above)                {:>8.2} CPU s/hour", per_hour(s0, s1));
}

/// One chant heal: kill -9 the app, time until it answers again, then check the ledger.
fn chant_heal(env: &ChantEnv, ledger: &Ledger, key: &ShardKey, port: u16) -> Duration {
    let before = ledger.read(key).unwrap().records.len();
    let pid = sv_pid(env, "app");
    let took = kill_and_time(pid, port);
    // The heal must be a `ran` of the restart rule, recorded after the kill.
    let deadline = Instant::now() + Duration::from_secs(60);
    let ran_at = loop {
        let records = ledger.read(key).unwrap().records;
        if let Some(i) = records.iter().skip(before).position(|r| ran_restart(&r.value)) {
            break before + i;
        }
        assert!(Instant::now() < deadline, "no `ran` of restart-service for app after the kill at pid {pid}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_ne!(sv_pid(env, "app"), pid);
    wait_in_sync(ledger, key, ran_at + 1);
    took
}

fn ran_restart(record: &Value) -> bool {
    record["outcomes"].as_array().is_some_and(|outcomes| {
        outcomes.iter().any(|o| {
            o["action"] == "ran"
                && o["op"] == "restart-service"
                && o["resource"] == "app"
                && (o["ruleId"].is_null() || o["ruleId"] == "restart-drifted")
        })
    }) && record["firedRuleIds"].as_array().is_some_and(|f| f.iter().any(|r| r == "restart-drifted"))
}

/// Waits for a tick at index `from` or later with every resource in sync and no rule fired.
fn wait_in_sync(ledger: &Ledger, key: &ShardKey, from: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let records = ledger.read(key).unwrap().records;
        let ok = records.iter().skip(from).any(|r| {
            let v = &r.value;
            v["firedRuleIds"] == json!([])
                && v["resources"]
                    .as_array()
                    .is_some_and(|rs| !rs.is_empty() && rs.iter().all(|r| r["status"] == "in-sync"))
        });
        if ok {
            return;
        }
        assert!(Instant::now() < deadline, "no all-in-sync tick; newest: {:?}", records.last().map(|r| &r.value));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// kill -9 `pid`, wait for it to be gone, then poll the health URL every 20 ms until a 200.
fn kill_and_time(pid: i32, port: u16) -> Duration {
    let start = Instant::now();
    let st = Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(st.success(), "kill -9 {pid}");
    while alive(pid) {
        std::thread::sleep(Duration::from_millis(1));
        assert!(start.elapsed() < Duration::from_secs(10), "{pid} did not die");
    }
    loop {
        let poll = Instant::now();
        if health(port) {
            return start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(120), "port {port} never answered again");
        std::thread::sleep(POLL.saturating_sub(poll.elapsed()));
    }
}

/// The restart floor: kill -9 the app, issue `sprite-env services restart app` the instant the
/// process is gone, and time (from just before the kill, as a heal) until the health URL answers.
fn restart_floor(env: &ChantEnv, port: u16) -> Duration {
    let pid = sv_pid(env, "app");
    let start = Instant::now();
    let st = Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(st.success(), "kill -9 {pid}");
    while alive(pid) {
        std::thread::sleep(Duration::from_millis(1));
        assert!(start.elapsed() < Duration::from_secs(10), "{pid} did not die");
    }
    let restart = env
        .cmd(SPRITE_ENV)
        .args(["services", "restart", "app"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let took = loop {
        let poll = Instant::now();
        if health(port) {
            break start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(120), "port {port} never answered again");
        std::thread::sleep(POLL.saturating_sub(poll.elapsed()));
    };
    let out = restart.wait_with_output().unwrap();
    assert!(out.status.success(), "sprite-env services restart app: {}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(sv_pid(env, "app"), pid);
    took
}

/// Not gone and not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// `GET /health` answered `200`.
fn health(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    let mut got = 0;
    while got < 12 {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    got >= 12 && buf[9..12] == *b"200"
}

struct ChantEnv {
    home: PathBuf,
    dir: PathBuf,
    state: PathBuf,
}

impl ChantEnv {
    fn cmd(&self, program: &str) -> Command {
        let mut cmd = hermetic(program, &self.home, &self.dir);
        cmd.env("SPRITE_ENV_STATE_DIR", &self.state)
            .env("SPRITE_ENV_STOP_GRACE", "2s")
            .env("CHANT_SPRITE_ENV", SPRITE_ENV)
            .env("CHANT_SPRITE_PROBES", "2")
            .env("CHANT_SPRITE_PROBE_INTERVAL", "100ms")
            .env("CHANT_SPRITE_PROBE_TIMEOUT", "1s")
            .env("CHANT_SPRITE_WAIT", "20s")
            .env("CHANT_SPRITE_WAIT_INTERVAL", "50ms");
        cmd
    }
}

fn sv_pid(env: &ChantEnv, name: &str) -> i32 {
    let out = env.cmd(SPRITE_ENV).args(["services", "list", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = list.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap();
    s["state"]["pid"].as_i64().unwrap_or_else(|| panic!("{name} has no pid: {s}")) as i32
}

/// The operator daemon, its stdout and stderr lines arriving on one channel.
struct Operator {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Operator {
    fn start(env: &ChantEnv, interval: Option<&str>) -> Operator {
        let mut cmd = env.cmd(PROJECT);
        // `-v`: every round's line (the op lines on stdout, the notes on stderr).
        cmd.args(["operator", "-v"]);
        if let Some(i) = interval {
            cmd.args(["--interval", i]);
        }
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let stderr: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for stream in [stdout, stderr] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Operator { child, lines, seen: Vec::new() }
    }

    fn wait_for(&mut self, within: Duration, want: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = want(&line);
                    self.seen.push(line);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
    }

    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let status = self.child.wait().unwrap();
        self.drain();
        let failed: Vec<&String> =
            self.seen.iter().filter(|l| l.contains("failed=1") || l.contains("error=1")).collect();
        if !status.success() || !failed.is_empty() {
            println!("  note: operator exited {status}; failing lines: {failed:?}");
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            quiet_kill("-TERM", self.child.id() as i32);
            let _ = self.child.wait();
        }
    }
}

struct Monit {
    tini: Child,
    dir: PathBuf,
    pidfile: PathBuf,
    port: u16,
}

impl Monit {
    fn start(tmp: &Path, script: &Path) -> Option<Monit> {
        let found = |p: &str| {
            Command::new("sh").args(["-c", &format!("command -v {p}")]).output().is_ok_and(|o| o.status.success())
        };
        if !found("monit") || !found("tini") {
            println!("monit not installed: install with apt-get install monit tini (the Monit side is skipped)");
            return None;
        }
        let dir = tmp.join("monit");
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let pidfile = dir.join("mapp.pid");
        let d = dir.display();
        let rc = format!(
            "set daemon 1\nset logfile {d}/monit.log\nset pidfile {d}/monit.pid\nset idfile {d}/monit.id\nset statefile {d}/monit.state\n\
             check process mapp with pidfile {pf}\n  \
             start program = \"/bin/sh -c 'python3 {s} {port} >/dev/null 2>&1 </dev/null & echo $! > {pf}'\"\n  \
             stop program = \"/bin/sh -c 'kill -9 `cat {pf}`'\"\n  if failed port {port} type tcp then restart\n",
            pf = pidfile.display(),
            s = script.display()
        );
        let rcpath = dir.join("monitrc");
        std::fs::write(&rcpath, rc).unwrap();
        std::fs::set_permissions(&rcpath, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let tini = Command::new("tini")
            .args(["-s", "--", "monit", "-I", "-c"])
            .arg(&rcpath)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Some(Monit { tini, dir, pidfile, port })
    }

    fn monit_pid(&self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(p) = read_pid(&self.dir.join("monit.pid")) {
                return p;
            }
            assert!(Instant::now() < deadline, "monit wrote no pid file");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn heal(&self) -> Duration {
        let pid = read_pid(&self.pidfile).expect("monit's app pid");
        let took = kill_and_time(pid, self.port);
        assert_ne!(read_pid(&self.pidfile), Some(pid), "monit's app answered but its pid file is the old one");
        took
    }

    fn stop(self) {}
}

impl Drop for Monit {
    /// Stops monit (TERM to monit itself: tini is its parent) and kills its service.
    fn drop(&mut self) {
        let app = read_pid(&self.pidfile);
        if let Some(m) = read_pid(&self.dir.join("monit.pid")) {
            quiet_kill("-TERM", m);
        }
        quiet_kill("-TERM", self.tini.id() as i32);
        let _ = self.tini.wait();
        if let Some(p) = app {
            quiet_kill("-KILL", p);
        }
    }
}

fn quiet_kill(signal: &str, pid: i32) {
    let _ = Command::new("kill").args([signal, &pid.to_string()]).stderr(Stdio::null()).status();
}

/// The summed utime+stime+cutime+cstime of `pids`, in seconds.
fn cpu(pids: &[i32]) -> f64 {
    let hz: f64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0);
    pids.iter()
        .map(|p| {
            let s =
                std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_else(|e| panic!("/proc/{p}/stat: {e}"));
            let rest = s.rsplit_once(") ").unwrap().1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            // After the comm field: state is 0, utime 11, stime 12, cutime 13, cstime 14.
            (11..=14).map(|i| f[i].parse::<f64>().unwrap()).sum::<f64>() / hz
        })
        .sum()
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.split_whitespace().next()?.parse().ok()
}

fn health_server(dir: &Path) -> PathBuf {
    let path = dir.join("app.py");
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for(within: Duration, what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pause_until(t: Instant) {
    std::thread::sleep(t.saturating_duration_since(Instant::now()));
}

fn row(name: &str, samples: &[Duration]) {
    let mut s = samples.to_vec();
    s.sort();
    println!(
        "  {name:<44} median {:>7.3} s   worst {:>7.3} s   best {:>7.3} s   (n={})",
        s[s.len() / 2].as_secs_f64(),
        s[s.len() - 1].as_secs_f64(),
        s[0].as_secs_f64(),
        s.len()
    );
}

fn ratios(name: &str, a: &[Duration], b: &[Duration]) {
    let med = |x: &[Duration]| {
        let mut s = x.to_vec();
        s.sort();
        s[s.len() / 2].as_secs_f64()
    };
    let worst = |x: &[Duration]| x.iter().max().unwrap().as_secs_f64();
    println!("  ratio {name:<38} median {:>6.2}x   worst {:>6.2}x", med(a) / med(b), worst(a) / worst(b));
}

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn cpus() -> usize {
    std::thread::available_parallelism().map(usize::from).unwrap_or(0)
}

fn uname() -> String {
    Command::new("uname")
        .arg("-sr")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// A git repository at `dir` with `chant.toml` and `chant.workspace.json` committed.
fn project(home: &Path, dir: &Path, workspace: &str) {
    std::fs::create_dir_all(dir).unwrap();
    git(home, dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
    std::fs::write(dir.join("chant.toml"), "[project]\nname = \"boxbench\"\n").unwrap();
    std::fs::write(dir.join("chant.workspace.json"), workspace).unwrap();
    git(home, dir, &["add", "chant.toml", "chant.workspace.json"]);
    git(home, dir, &["commit", "-q", "-m", "initial"]);
}
