//! The box's self-healing loop end to end, with the box example's own op.json documents (its
//! golden files), the `sprite-env` stand-in and real HTTP services on 127.0.0.1: `services`
//! applies the box block, a tick observes it, a killed service is restarted by the dispatched
//! `restart-service` run and answers its health URL again, and the next tick is all in sync.
//!
//! Each tick and each run happens in a worker process (this test binary rerun on one test, with
//! the supervisor's variables in its environment), because the steps read their settings from the
//! environment, which a test must not change in its own process. The tick dispatches
//! `restart-service` through a script that reruns this binary the same way.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chant::catalog::Catalog;
use chant::project::{Project, RunServices};
use chant::runner::{Environment, RunSettings};
use chant::tick::{Dispatcher, TickOptions};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::supervisor::{BIN, Sv, answers, eventually, free_port, http_service};

const TASK: &str = "CHANT_SPRITE_HEAL_TASK";
const WORKER: &str = "sprite_heal::worker_runs_a_tick_or_an_op_when_asked";
const OPS: [(&str, &str); 3] = [
    ("converge.json", include_str!("../../../examples/box/tests/golden/converge.json")),
    ("restart-service.json", include_str!("../../../examples/box/tests/golden/restart-service.json")),
    ("services.json", include_str!("../../../examples/box/tests/golden/services.json")),
];

/// Does nothing in a normal run. As a worker (`TASK` = `<dir>|tick` or `<dir>|<op>`), ticks the
/// box's ConvergeOp or runs one of its ops in the project at `<dir>`, printing the record.
#[test]
fn worker_runs_a_tick_or_an_op_when_asked() {
    let Ok(task) = std::env::var(TASK) else { return };
    let (dir, what) = task.split_once('|').unwrap();
    std::env::set_current_dir(dir).unwrap();
    let mut project = Project::open(Path::new(dir)).unwrap();
    project.catalog = Catalog::from_texts(OPS).unwrap();
    if what == "tick" {
        let doc = project.catalog.get("converge").unwrap().clone();
        let mut dispatcher = Dispatcher::current().unwrap();
        dispatcher.program = Path::new(dir).join("dispatch.sh");
        let options = TickOptions { dispatcher, fence: None };
        let tick = chant::tick::execute(&project, &doc, &options).unwrap();
        println!("RECORD={}", tick.record.to_line().unwrap());
        return;
    }
    let doc = project.catalog.get(what).unwrap().clone();
    let mut settings = RunSettings::new(doc.env.as_deref().unwrap_or("box"));
    settings.resource = std::env::var(chant::tick::RESOURCE_VAR).ok();
    let services = RunServices { project: &project, member: doc.member.as_deref() };
    let now = || chant::clock::now().unwrap();
    let var = |n: &str| std::env::var(n).ok();
    let environment = Environment { now: &now, var: &var };
    let record = chant::runner::run(&doc, &BTreeMap::new(), &settings, &services, &environment);
    println!("RECORD={}", record.to_line().unwrap());
    assert_eq!(serde_json::to_value(record.status).unwrap(), "ok", "{}", record.to_line().unwrap());
}

struct BoxProject {
    dir: tempfile::TempDir,
    sv: Sv,
    sprite_env: String,
    wait: &'static str,
}

impl BoxProject {
    fn new(services: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("chant.toml"), "[project]\nname = \"box-heal\"\n").unwrap();
        let ws = json!({"members": [{"name": "box", "dir": ".", "kind": "other", "because": "the box under test",
                                      "box": {"services": services}}]});
        std::fs::write(d.join("chant.workspace.json"), serde_json::to_string_pretty(&ws).unwrap()).unwrap();
        let me = std::env::current_exe().unwrap();
        let script = format!(
            "#!/bin/sh\n{TASK}=\"{}|$2\" exec {} --exact {WORKER} --nocapture --test-threads=1\n",
            d.display(),
            me.display()
        );
        let path = d.join("dispatch.sh");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        for args in [&["init", "-q", "-b", "main"][..], &["add", "chant.toml"], &["commit", "-q", "-m", "init"]] {
            let out = Command::new("git")
                .args(args)
                .current_dir(d)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        BoxProject { dir, sv: Sv::new(), sprite_env: BIN.to_owned(), wait: "20s" }
    }

    /// Runs `what` (`tick` or an op) in a worker; returns its record and whether it succeeded.
    fn work(&self, what: &str) -> (Value, bool) {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", WORKER, "--nocapture", "--test-threads=1"])
            .env(TASK, format!("{}|{what}", self.dir.path().display()))
            .env("SPRITE_ENV_STATE_DIR", self.sv.state())
            .env("SPRITE_ENV_STOP_GRACE", "2s")
            .env("CHANT_SPRITE_ENV", &self.sprite_env)
            .env("CHANT_SPRITE_PROBES", "2")
            .env("CHANT_SPRITE_PROBE_INTERVAL", "100ms")
            .env("CHANT_SPRITE_PROBE_TIMEOUT", "1s")
            .env("CHANT_SPRITE_WAIT", self.wait)
            .env("CHANT_SPRITE_WAIT_INTERVAL", "50ms")
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("RECORD=").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("no record from {what}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        (serde_json::from_str(line).unwrap(), out.status.success())
    }

    fn tick(&self) -> Value {
        let (record, ok) = self.work("tick");
        assert!(ok, "{record}");
        record
    }
}

fn app_and_hud(dir: &Path, port: u16) -> Value {
    let script = http_service(dir, "app");
    json!([
        {"name": "hud", "cmd": "sleep 600", "needs": ["app"]},
        {"name": "app", "cmd": format!("python3 {} {port}", script.display()), "httpPort": port,
         "health": format!("http://127.0.0.1:{port}/health")},
        {"name": "site", "cmd": "sleep 600", "optional": true, "health": "http://127.0.0.1:1/health"}
    ])
}

fn actions(result: &Value) -> Vec<(String, String)> {
    result["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s["action"].as_str().unwrap().to_owned()))
        .collect()
}

fn apply_output(record: &Value) -> Value {
    record["outcomes"].as_array().unwrap().iter().find(|o| o["step"] == "sprite_apply_services").unwrap()["output"]
        .clone()
}

#[test]
fn a_killed_service_is_restarted_by_the_next_tick_and_answers_again() {
    let scratch = tempfile::tempdir().unwrap();
    let port = free_port();
    let p = BoxProject::new(app_and_hud(scratch.path(), port));

    // Provision: created in dependency order (app before hud), the optional site left out.
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    let applied = apply_output(&record);
    let created = [("app".to_owned(), "created".to_owned()), ("hud".to_owned(), "created".to_owned())];
    assert_eq!(actions(&applied), created);
    eventually(Duration::from_secs(20), "app to answer", || answers(port));

    let first = p.tick();
    assert_eq!(first["firedRuleIds"], json!([]), "{first}");
    assert_eq!(first["resources"][0]["name"], "hud");
    assert_eq!(first["resources"][1]["status"], "in-sync");
    assert_eq!(first["resources"].as_array().unwrap().len(), 2, "the optional site is skipped until listed");

    let pid = p.sv.pid("app");
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(10), "the supervisor to list app failed", || p.sv.status("app") == "failed");

    let heal = p.tick();
    assert_eq!(heal["firedRuleIds"], json!(["restart-drifted"]), "{heal}");
    let app = heal["resources"].as_array().unwrap().iter().find(|r| r["name"] == "app").unwrap().clone();
    assert_eq!(app, json!({"name": "app", "status": "drifted", "detail": "failed"}));
    let outcomes = heal["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 1, "{heal}");
    assert_eq!(outcomes[0]["action"], "ran");
    assert_eq!(outcomes[0]["op"], "restart-service");
    assert_eq!(outcomes[0]["resource"], "app");
    assert_eq!(heal["summary"]["drifted"], 1);
    assert_eq!(heal["summary"]["remediated"], 1);
    // The dispatched run waited for the health URL: it answers as soon as the tick is over.
    assert!(answers(port));
    assert_ne!(p.sv.pid("app"), pid);
    assert_eq!(p.sv.status("app"), "running");

    let after = p.tick();
    assert_eq!(after["firedRuleIds"], json!([]), "{after}");
    assert_eq!(after["outcomes"], json!([]));
    assert_eq!(after["summary"]["drifted"], 0);

    // Applying again changes nothing.
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    let left = [("app".to_owned(), "left".to_owned()), ("hud".to_owned(), "left".to_owned())];
    assert_eq!(actions(&apply_output(&record)), left);

    // A stopped service the apply starts is reported `started`, not `left`.
    p.sv.ok(&["services", "stop", "hud"]);
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    let output = apply_output(&record);
    let got = [("app".to_owned(), "left".to_owned()), ("hud".to_owned(), "started".to_owned())];
    assert_eq!(actions(&output), got, "{output}");
    assert_eq!(output["started"], json!(["hud"]), "{output}");
}

#[test]
fn a_missing_supervisor_makes_every_service_unknown_and_dispatches_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let mut p = BoxProject::new(app_and_hud(scratch.path(), free_port()));
    p.sprite_env = "/nonexistent/sprite-env".into();
    let record = p.tick();
    let resources = record["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 2, "{record}");
    for r in resources {
        assert_eq!(r["status"], "unknown");
        assert!(r["detail"].as_str().unwrap().starts_with("the supervisor could not be read: "), "{r}");
    }
    let outcomes = record["outcomes"].as_array().unwrap();
    assert!(outcomes.iter().all(|o| o["action"] == "reported" && o["ruleId"] == "report-unknown"), "{record}");
    assert_eq!(record["summary"]["unobserved"], 2);
    assert_eq!(record["summary"]["remediated"], 0);
}

#[test]
fn an_unset_variable_in_a_cmd_fails_the_apply_before_anything_changes() {
    let p = BoxProject::new(json!([
        {"name": "app", "cmd": "sleep 600"},
        {"name": "hud", "cmd": "${CHANT_SPRITE_HEAL_NEVER_SET}/run.sh", "needs": ["app"]}
    ]));
    let (record, ok) = p.work("services");
    assert!(!ok);
    let line = record.to_string();
    assert!(
        line.contains(
            "service hud's cmd names ${CHANT_SPRITE_HEAL_NEVER_SET}, which is not set in this process's environment"
        ),
        "{line}"
    );
    // app, which would have come first, was not created: nothing changed.
    assert_eq!(p.sv.list(), Vec::<Value>::new());
}

#[test]
fn a_service_whose_health_never_answers_is_damped_after_the_flap_threshold() {
    let dead = free_port();
    let mut p = BoxProject::new(json!([
        {"name": "mute", "cmd": "sleep 600", "health": format!("http://127.0.0.1:{dead}/health")}
    ]));
    p.wait = "300ms";
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    let mut actions = Vec::new();
    for _ in 0..4 {
        let record = p.tick();
        assert_eq!(record["resources"][0]["status"], "drifted", "{record}");
        let o = &record["outcomes"][0];
        actions.push((o["action"].as_str().unwrap().to_owned(), o["dispatchFailed"].as_bool().unwrap_or(false)));
    }
    let failed = ("reported".to_owned(), true);
    assert_eq!(actions[..3], [failed.clone(), failed.clone(), failed], "{actions:?}");
    assert_eq!(actions[3].0, "skipped-flap");
}

#[test]
fn apply_replaces_a_changed_service_and_never_deletes_an_undeclared_one() {
    let p = BoxProject::new(json!([
        {"name": "app", "cmd": "sleep 600"},
        {"name": "hud", "cmd": "sleep 601", "needs": ["app"]}
    ]));
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    p.sv.ok(&["services", "create", "stray", "--cmd", "sleep", "--args", "602", "--no-stream"]);
    let hud = p.sv.pid("hud");
    let ws = json!({"members": [{"name": "box", "dir": ".", "kind": "other", "because": "the box under test",
        "box": {"services": [{"name": "app", "cmd": "sleep 600"}, {"name": "hud", "cmd": "sleep 603", "needs": ["app"]}]}}]});
    std::fs::write(p.dir.path().join("chant.workspace.json"), ws.to_string()).unwrap();
    // The block is read on every run: the second apply sees the new cmd.
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    let got = actions(&apply_output(&record));
    assert_eq!(got, [("app".to_owned(), "left".to_owned()), ("hud".to_owned(), "replaced".to_owned())]);
    assert_eq!(p.sv.service("hud")["args"], json!(["603"]));
    assert_ne!(p.sv.pid("hud"), hud);
    assert_eq!(p.sv.status("stray"), "running", "an undeclared service is left alone");
}

/// A supervisor that answers everything through the stand-in, except that `services list` first
/// runs `list_prefix` (a shell snippet: a warning line, or `exit 0` for empty output).
fn noisy_supervisor(dir: &Path, name: &str, list_prefix: &str) -> String {
    let path = dir.join(format!("{name}.sh"));
    let script =
        format!("#!/bin/sh\nif [ \"$1 $2\" = \"services list\" ]; then {list_prefix}; fi\nexec '{BIN}' \"$@\"\n");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn a_listing_that_cannot_be_read_makes_healthy_services_unknown_and_restarts_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut p = BoxProject::new(app_and_hud(scratch.path(), port));
    let (record, ok) = p.work("services");
    assert!(ok, "{record}");
    eventually(Duration::from_secs(20), "app to answer", || answers(port));
    let (app, hud) = (p.sv.pid("app"), p.sv.pid("hud"));

    // A warning line before the JSON, then empty output with exit 0: neither is "nothing runs".
    let warning = noisy_supervisor(scratch.path(), "warns", "echo 'sprite-env: warning: config is old'");
    let silent = noisy_supervisor(scratch.path(), "silent", "exit 0");
    for (supervisor, why) in [(warning, "line 1 is not a row of the table"), (silent, "it printed nothing")] {
        p.sprite_env = supervisor;
        let record = p.tick();
        let resources = record["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 2, "{record}");
        for r in resources {
            assert_eq!(r["status"], "unknown", "{record}");
            let detail = r["detail"].as_str().unwrap();
            assert!(detail.starts_with("the supervisor could not be read: "), "{detail}");
            assert!(detail.contains(why), "{detail}");
        }
        let outcomes = record["outcomes"].as_array().unwrap();
        assert!(outcomes.iter().all(|o| o["action"] == "reported"), "{record}");
        assert_eq!(record["summary"]["remediated"], 0, "{record}");
    }
    // Nothing was restarted: the same processes still serve.
    assert_eq!((p.sv.pid("app"), p.sv.pid("hud")), (app, hud));
    assert!(answers(port));
}
