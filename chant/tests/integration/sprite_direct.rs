//! The listing asked of chant's stand-in through its socket, without a process
//! (`lexicon::sprite::direct`), against the real stand-in and a real HTTP service on 127.0.0.1:
//! the binary is asked what it is once, every later observation reads the daemon directly (no
//! process) and sees each change; `CHANT_SPRITE_DIRECT=0`, a script and an executable that is not
//! the stand-in run the command line for every listing; a direct request that fails falls back to
//! the command line, whose failure is the reading (unknown, never a listing).

use std::path::Path;
use std::time::Duration;

use chant::lexicon::sprite::{BoxDeclaration, BoxLexicon, BoxService};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use super::supervisor::{BIN, Sv, answers, eventually, free_port, http_service};

const TASK: &str = "CHANT_SPRITE_DIRECT_TASK";
const WORKER: &str = "sprite_direct::worker_reads_the_stand_in_when_asked";

fn calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_owned).collect()
}

fn vars(wrapper: &Path, direct: Option<&str>) -> &'static dyn Fn(&str) -> Option<String> {
    let wrapper = wrapper.display().to_string();
    let direct = direct.map(str::to_owned);
    Box::leak(Box::new(move |k: &str| match k {
        "CHANT_SPRITE_ENV" => Some(wrapper.clone()),
        "CHANT_SPRITE_PROBES" => Some("1".into()),
        "CHANT_SPRITE_PROBE_TIMEOUT" => Some("1s".into()),
        "CHANT_SPRITE_DIRECT" => direct.clone(),
        _ => None,
    }))
}

fn app(port: u16, script: &Path) -> BoxDeclaration {
    BoxDeclaration::new(vec![BoxService {
        name: "app".into(),
        cmd: format!("python3 {} {port}", script.display()),
        needs: Vec::new(),
        http_port: None,
        duration: None,
        health: Some(format!("http://127.0.0.1:{port}/health")),
        optional: false,
        checks: None,
    }])
    .unwrap()
}

/// The one resource of a reading: (status, detail).
fn verdict(reading: &Value) -> (String, String) {
    let r = &reading["resources"][0];
    (r["status"].as_str().unwrap().to_owned(), r["detail"].as_str().unwrap().to_owned())
}

/// Does nothing in a normal run. As a worker (`TASK` = `<port>|<script>`, its own process, so the
/// children it starts can be counted and its environment names the stand-in and its state
/// directory), reads one service through the stand-in and asserts what each reading costs.
#[test]
fn worker_reads_the_stand_in_when_asked() {
    let Ok(task) = std::env::var(TASK) else { return };
    let (port, script) = task.split_once('|').unwrap();
    let port: u16 = port.parse().unwrap();
    let decl = app(port, Path::new(script));
    let root = std::env::current_dir().unwrap();
    let env: &'static dyn Fn(&str) -> Option<String> = Box::leak(Box::new(|k: &str| std::env::var(k).ok()));
    let lexicon = || BoxLexicon::new(&root, Some("box"), decl.clone(), env);

    // A state directory no daemon can be started in: the direct request fails, the command line
    // is run and fails too, and the reading is unknown with the command line's words.
    if std::env::var("SPRITE_ENV_STATE_DIR").unwrap().ends_with("/blocked/sv") {
        let before = chant::process::started();
        let (status, detail) = verdict(&lexicon().reading());
        assert_eq!(status, "unknown", "{detail}");
        assert!(detail.contains("cannot start the sprite-env daemon"), "{detail}");
        assert_eq!(chant::process::started() - before, 2, "the identification, then the command line");
        println!("WORKER=ok");
        return;
    }
    // Nothing defined yet: read (the daemon started on first use, as the command line does), absent.
    let first = chant::process::started();
    let (status, detail) = verdict(&lexicon().reading());
    assert_eq!(status, "drifted", "{detail}");
    assert!(detail.contains("no such service"), "{detail}");
    let identified = chant::process::started();
    assert!(identified - first >= 1, "the binary was asked what it is");
    lexicon().apply_services(&Default::default()).unwrap();
    eventually(Duration::from_secs(20), "the app to answer", || answers(port));
    let direct = chant::process::started();
    for _ in 0..5 {
        assert_eq!(verdict(&lexicon().reading()).0, "in-sync");
    }
    // A kill is seen by the very next reading, as the command line lists it.
    let pid = listed_pid();
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(20), "the exit to be listed", || listed_pid() != pid);
    assert_eq!(verdict(&lexicon().reading()), ("drifted".to_owned(), "failed".to_owned()));
    assert_eq!(chant::process::started(), direct, "a reading through the socket started a process");

    // Turned off: every listing is a process again, and reads the same.
    let off: &'static dyn Fn(&str) -> Option<String> =
        Box::leak(Box::new(
            |k: &str| if k == "CHANT_SPRITE_DIRECT" { Some("0".into()) } else { std::env::var(k).ok() },
        ));
    lexicon().restart("app").unwrap();
    let restarted = chant::process::started();
    for _ in 0..3 {
        let reading = BoxLexicon::new(&root, Some("box"), decl.clone(), off).reading();
        assert_eq!(verdict(&reading).0, "in-sync", "{reading}");
    }
    assert_eq!(chant::process::started() - restarted, 3, "one `services list` per reading");
    println!("WORKER=ok");
}

/// The app's pid as the command line lists it (0 while it runs not).
fn listed_pid() -> i32 {
    let out = std::process::Command::new(BIN).args(["services", "list"]).output().unwrap();
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    listed.iter().find(|s| s["name"] == "app").and_then(|s| s["state"]["pid"].as_i64()).unwrap_or(0) as i32
}

/// Runs the worker over `state` (the stand-in's state directory) and the service on `port`.
fn work(state: &Path, port: u16, script: &Path) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", WORKER, "--nocapture", "--test-threads=1"])
        .env(TASK, format!("{port}|{}", script.display()))
        .env("SPRITE_ENV_STATE_DIR", state)
        .env("SPRITE_ENV_STOP_GRACE", "2s")
        .env("CHANT_SPRITE_ENV", BIN)
        .env("CHANT_SPRITE_PROBES", "1")
        .env("CHANT_SPRITE_PROBE_TIMEOUT", "1s")
        .env("CHANT_SPRITE_WAIT", "20s")
        .env("CHANT_SPRITE_WAIT_INTERVAL", "50ms")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("WORKER=ok"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_stand_in_is_asked_what_it_is_once_and_then_read_through_its_socket() {
    let sv = Sv::new();
    let port = free_port();
    work(sv.state(), port, &http_service(sv.state(), "app"));
    let blocked = sv.state().join("blocked");
    std::fs::write(&blocked, "a file where a directory should be").unwrap();
    work(&blocked.join("sv"), free_port(), Path::new("/nonexistent/app.py"));
}

#[test]
fn a_supervisor_that_is_not_the_stand_in_runs_the_command_line_for_every_listing() {
    let dir = tempfile::Builder::new().prefix("svd").tempdir_in("/tmp").unwrap();
    let log = dir.path().join("calls.log");
    let listing = r#"[{"name":"app","cmd":"x","state":{"name":"app","status":"stopped"}}]"#;
    // A script, even one that claims to be the stand-in for a state directory: never asked,
    // never bypassed (a wrapper in front of the stand-in may change what it lists).
    let liar = dir.path().join("liar.sh");
    std::fs::write(
        &liar,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nif [ \"$1\" = __stand-in ]; then echo '{{\"standIn\":\"chant\",\"protocol\":1,\"stateDir\":\"/tmp\"}}'; exit 0; fi\necho '{listing}'\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&liar, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let decl = app(free_port(), Path::new("/nonexistent/app.py"));
    let var = vars(&liar, None);
    for _ in 0..2 {
        let reading = BoxLexicon::new(dir.path(), Some("box"), decl.clone(), var).reading();
        assert_eq!(verdict(&reading), ("drifted".to_owned(), "stopped".to_owned()), "{reading}");
    }
    assert_eq!(calls(&log), ["services list", "services list"]);

    // An executable that is not the stand-in (it prints nothing for the word): its command line
    // is run, and printing nothing is no listing.
    let reading = BoxLexicon::new(dir.path(), Some("box"), decl, vars(Path::new("/bin/true"), None)).reading();
    let (status, detail) = verdict(&reading);
    assert_eq!(status, "unknown", "{reading}");
    assert!(detail.contains("printed nothing"), "{reading}");
}
