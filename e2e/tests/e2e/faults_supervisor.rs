//! kill -9 of supervisor commands (issue #19, fault campaign), through the real `sprite-env`
//! binary: in each trial a `services create` or `services restart` is started and, after a
//! pseudo-random delay, killed with SIGKILL; in every other trial the daemon is killed with it.
//! After every trial `services.json` is one JSON array, the next command works (starting a new
//! daemon that re-adopts the table when the old one died), no service is lost and none is listed
//! twice; a create that was killed either landed (and a second create is refused) or did not
//! (and a second create lands).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_e2e-sprite-env");

/// A state directory (short, under /tmp: it holds a socket); dropping it kills the daemon and
/// every service group it recorded.
struct Sv {
    dir: tempfile::TempDir,
}

impl Sv {
    fn state(&self) -> PathBuf {
        self.dir.path().join("s")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("SPRITE_ENV_STATE_DIR", self.state())
            .env("SPRITE_ENV_STOP_GRACE", "1s")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    fn create(&self, name: &str) -> Output {
        self.run(&["services", "create", name, "--cmd", "sleep", "--args", "600", "--no-stream"])
    }

    /// The names `services list --json` shows, in order.
    fn names(&self) -> Vec<String> {
        let listed: Vec<Value> = serde_json::from_str(&self.ok(&["services", "list", "--json"])).unwrap();
        listed.iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
    }

    fn daemon_pid(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.state().join("daemon.pid")).ok()?;
        text.split_whitespace().next().map(str::to_owned)
    }

    /// The table on disk, which must be one JSON array whenever it exists.
    #[track_caller]
    fn table(&self, trial: usize) -> Vec<Value> {
        match std::fs::read_to_string(self.state().join("services.json")) {
            Ok(text) => serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("trial {trial}: services.json is not parseable ({e}):\n{text}")),
            Err(_) => Vec::new(),
        }
    }
}

fn kill9(target: &str) {
    let _ = Command::new("kill").args(["-KILL", "--", target]).stderr(Stdio::null()).status();
}

impl Drop for Sv {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            kill9(&pid);
        }
        for s in self.table(usize::MAX) {
            if let Some(pid) = s["state"]["pid"].as_i64() {
                kill9(&format!("-{pid}"));
            }
        }
    }
}

/// Waits (bounded) until process `pid` is a zombie or gone, as its parent would see it: its last
/// threads may still hold the socket then, which the next client must cope with.
fn gone(pid: &str) {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while proc.exists() && !std::fs::read_to_string(proc.join("stat")).unwrap_or_default().contains(") Z ") {
        assert!(std::time::Instant::now() < deadline, "the killed daemon {pid} is still alive after 30 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn lcg(seed: u64) -> u64 {
    seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407) >> 33
}

#[test]
fn kill_9_of_supervisor_commands_loses_no_service_and_duplicates_none() {
    let sv = Sv { dir: tempfile::Builder::new().prefix("svk").tempdir_in("/tmp").unwrap() };
    let mut want: BTreeSet<String> = BTreeSet::new();
    for name in ["base-a", "base-b"] {
        let out = sv.create(name);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        want.insert(name.to_owned());
    }
    // CI runs 8 trials; a campaign sets CHANT_FAULT_TRIALS.
    let trials: usize = std::env::var("CHANT_FAULT_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    for n in 0..trials {
        let created = format!("t{n}");
        let args: Vec<&str> = if n % 2 == 0 {
            vec!["services", "create", &created, "--cmd", "sleep", "--args", "600", "--no-stream"]
        } else {
            vec!["services", "restart", if n % 4 == 1 { "base-a" } else { "base-b" }]
        };
        let daemon = sv.daemon_pid();
        let mut victim = sv.command(&args).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(lcg(n as u64) % 150));
        let _ = victim.kill();
        if n % 4 >= 2
            && let Some(pid) = &daemon
        {
            kill9(pid);
        }
        let _ = victim.wait();
        if n % 4 >= 2
            && let Some(pid) = &daemon
        {
            gone(pid);
        }

        sv.table(n);
        // The first command after the daemon's death starts a new one and gets its answer, even
        // when it connects while the old daemon's last threads still hold the socket (a reset,
        // which the client retries: issue #19).
        let first = sv.run(&["services", "list", "--json"]);
        assert!(
            first.status.success(),
            "trial {n}: the next command failed: {}",
            String::from_utf8_lossy(&first.stderr)
        );
        let names = sv.names();
        let distinct: BTreeSet<String> = names.iter().cloned().collect();
        assert_eq!(distinct.len(), names.len(), "trial {n}: a service is listed twice: {names:?}");
        assert!(want.is_subset(&distinct), "trial {n}: a service was lost: {want:?} vs {names:?}");
        if n % 2 == 0 {
            let again = sv.create(&created);
            assert_eq!(
                again.status.success(),
                !distinct.contains(&created),
                "trial {n}: a second create of {created} (listed before: {}): {}",
                distinct.contains(&created),
                String::from_utf8_lossy(&again.stderr)
            );
            want.insert(created.clone());
        }
        let names: BTreeSet<String> = sv.names().into_iter().collect();
        assert_eq!(names, want, "trial {n}: the services after the trial");
        assert!(sv.state().is_dir(), "trial {n}: the state directory is gone");
    }
    // The next commands work on every service.
    for name in &want {
        sv.ok(&["services", "restart", name]);
    }
    let listed: Vec<Value> = serde_json::from_str(&sv.ok(&["services", "list", "--json"])).unwrap();
    assert_eq!(listed.len(), want.len());
    eprintln!("supervisor faults: {trials} trials, {} services, every first command after a kill answered", want.len());
    for s in &listed {
        assert_eq!(s["state"]["status"], "running", "{s}");
    }
}
