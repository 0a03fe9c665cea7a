//! The box services lexicon through the plugin interface, against the `sprite-env` stand-in and a
//! real HTTP service on 127.0.0.1: describe holds to the conformance suite before and after its
//! own `apply` defines the services, a killed service reads as drifted (an `update`), and an
//! unreachable supervisor is a whole-lexicon failure (every service `read-failed`, its units
//! unknown); the stack status of a running, a stopped and an undeclared service; a service the
//! supervisor runs and nothing declares read as ambient.

use std::path::Path;
use std::time::Duration;

use chant::lexicon::sprite::{BoxDeclaration, BoxLexicon, BoxService};
use chant::lexicon::{DeleteMode, EnvLexicon};
use chant::model::UnobservedReason;
use chant::observe::conformance::{Scenario, Suite};
use chant::observe::estate::{Reading, StackStatus, ambient_of, stack_status, teardown_plan};
use chant::observe::{ChangeAction, ComponentInput, LastApply, Lexicon, assess};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::supervisor::{BIN, Sv, answers, eventually, free_port, http_service};

fn service(name: &str, cmd: String, needs: &[&str], health: Option<String>) -> BoxService {
    BoxService {
        name: name.to_owned(),
        cmd,
        needs: needs.iter().map(|n| (*n).to_owned()).collect(),
        http_port: None,
        duration: None,
        health,
        optional: false,
        checks: None,
    }
}

/// The variables the lexicon reads, with the supervisor behind a wrapper that points it at the
/// test's own state directory (the lexicon's children inherit this process's environment, which
/// a test must not change).
fn settings(wrapper: &Path) -> &'static dyn Fn(&str) -> Option<String> {
    let wrapper = wrapper.display().to_string();
    Box::leak(Box::new(move |k: &str| match k {
        "CHANT_SPRITE_ENV" => Some(wrapper.clone()),
        "CHANT_SPRITE_PROBES" => Some("2".into()),
        "CHANT_SPRITE_PROBE_INTERVAL" => Some("100ms".into()),
        "CHANT_SPRITE_PROBE_TIMEOUT" => Some("1s".into()),
        _ => None,
    }))
}

fn scenario_of(name: &str, lexicon: BoxLexicon<'static>) -> Scenario {
    let declared = lexicon.declared_entities().unwrap();
    Scenario::new(name, declared, move |d| lexicon.describe_resources(d))
}

#[test]
fn the_box_lexicon_keeps_the_observation_contract_and_applies_through_the_interface() {
    let sv = Sv::new();
    let wrapper = sv.state().join("sprite-env.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nSPRITE_ENV_STATE_DIR='{}' SPRITE_ENV_STOP_GRACE=2s exec '{BIN}' \"$@\"\n",
            sv.state().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let port = free_port();
    let script = http_service(sv.state(), "app");
    let decl = BoxDeclaration::new(vec![
        service(
            "app",
            format!("python3 {} {port}", script.display()),
            &[],
            Some(format!("http://127.0.0.1:{port}/health")),
        ),
        service("worker", "sleep 600".into(), &["app"], None),
    ])
    .unwrap();
    let var = settings(&wrapper);
    let lexicon = || BoxLexicon::new(sv.state(), Some("box"), decl.clone(), var);

    // Nothing defined: the supervisor was read and lists neither service.
    Suite::for_lexicon(&lexicon())
        .unwrap()
        .scenario(scenario_of("nothing defined", lexicon()).expect_absent(["app", "worker"]))
        .run()
        .unwrap();

    // The lexicon's own apply defines and starts both, in dependency order.
    let applied = EnvLexicon::apply(&lexicon(), DeleteMode::Never).unwrap();
    assert_eq!(applied.record.applied, ["app", "worker"]);
    assert_eq!(applied.said, ["app created, worker created"]);
    eventually(Duration::from_secs(20), "the app to answer", || answers(port));
    Suite::for_lexicon(&lexicon())
        .unwrap()
        .scenario(scenario_of("applied", lexicon()).owned().expect_present(["app", "worker"]))
        .run()
        .unwrap();
    let input = |l: BoxLexicon<'static>| ComponentInput {
        component: "box-services".into(),
        declared: l.declared_entities().unwrap(),
        observation: l.describe_resources(&l.declared_entities().unwrap()).unwrap(),
        last_apply: LastApply::recorded(applied.record.owned.clone()),
        delete_counts_as_drift: false,
    };
    let in_sync = assess("box", &[input(lexicon())]);
    assert!(in_sync.change_sets[0].entries.iter().all(|e| e.action == ChangeAction::Noop), "{in_sync:?}");

    // A killed service is listed failed: present, drifted, an update.
    let pid = sv.pid("app");
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually(Duration::from_secs(20), "the exit to be listed", || sv.status("app") != "running");
    let drifted = assess("box", &[input(lexicon())]);
    let app = drifted.change_sets[0].entry("app").unwrap();
    assert_eq!(app.action, ChangeAction::Update, "{app:?}");
    assert_eq!(app.deltas[0].live.as_deref(), Some("drifted"));

    // Stack status: the running service healthy, the stopped one present and unhealthy, an
    // undeclared one absent; the teardown plan is empty and complete (the lexicon removes nothing).
    let units = lexicon();
    assert_eq!(units.stack_units(), ["app", "worker"]);
    assert!(matches!(stack_status(&units, "worker").status, StackStatus::Present { healthy: true, .. }));
    let stopped = stack_status(&units, "app");
    assert!(matches!(stopped.status, StackStatus::Present { healthy: false, .. }), "{stopped:?}");
    assert_eq!(stack_status(&units, "ghost").status, StackStatus::Absent);
    assert_eq!(serde_json::to_string(&stack_status(&units, "ghost").status).unwrap(), r#"{"present":false}"#);
    let plan = teardown_plan(&units, &units.declared_entities().unwrap());
    assert!(plan.candidates.is_empty() && plan.is_complete());

    // A service the supervisor runs and no box block declares is ambient (kind `service`), with
    // its listed status; the declared ones never are. The lexicon passes `dev check-lexicon`'s
    // checks, ambient included.
    sv.ok(&["services", "create", "stray", "--cmd", "sleep", "--args", "600", "--no-stream"]);
    eventually(Duration::from_secs(20), "stray to run", || sv.status("stray") == "running");
    let l = lexicon();
    let declared = l.declared_entities().unwrap();
    assert_eq!(l.ambient_kinds(), ["service"]);
    let observed = chant::observe::observe_component(&l, &declared);
    let ambient = ambient_of(&l, &declared, &observed, None);
    let ambient = ambient.read().unwrap_or_else(|| panic!("{ambient:?}"));
    assert_eq!(ambient.resources.keys().collect::<Vec<_>>(), ["stray"]);
    assert_eq!(ambient.resources["stray"].properties.get("status").unwrap(), "running");
    let checks = chant::observe::check::check_bound(&l, &declared, &|| chant::observe::check::Served::No);
    assert!(checks.iter().all(|c| !c.failed()), "{checks:#?}");
    let ambient_check = checks.iter().find(|c| c.check == "ambient").unwrap();
    assert_eq!(ambient_check.to_string(), "pass  ambient: 1 ambient of service");

    // No supervisor at all: every service read-failed, never absent.
    let nowhere = settings(Path::new("/nonexistent/sprite-env"));
    let blind = || BoxLexicon::new(sv.state(), Some("box"), decl.clone(), nowhere);
    Suite::for_lexicon(&blind())
        .unwrap()
        .scenario(
            scenario_of("no supervisor", blind())
                .expect_unobserved_because("app", UnobservedReason::ReadFailed)
                .expect_unobserved_because("worker", UnobservedReason::ReadFailed),
        )
        .run()
        .unwrap();
    let blind_declared = blind().declared_entities().unwrap();
    let unread = ambient_of(&blind(), &blind_declared, &chant::observe::Observation::new(), None);
    assert!(matches!(unread, Reading::Failed(_)), "an unreadable supervisor has no ambient answer: {unread:?}");
    let unknown = stack_status(&blind(), "app");
    assert!(matches!(unknown.status, StackStatus::Unknown { .. }), "an unreadable supervisor is unknown, never absent");
}

/// A service's declared resource checks (issue #35, item 12), read from `/proc` for the real
/// process trees the stand-in supervises: over a limit is `drifted` with the reading and the
/// limit, a reading that fails is `unknown` (never `drifted`), and the readings ride along for
/// the rules.
#[test]
fn declared_resource_checks_read_the_process_tree_and_unknown_never_remediates() {
    use chant::lexicon::sprite::usage::{Checks, FileCheck};
    let sv = Sv::new();
    let wrapper = sv.state().join("sprite-env.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nSPRITE_ENV_STATE_DIR='{}' SPRITE_ENV_STOP_GRACE=2s exec '{BIN}' \"$@\"\n",
            sv.state().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The memory is held by a child of the service's shell: the tree, not the leader, is read.
    let hog = sv.state().join("hog.sh");
    std::fs::write(&hog, "python3 -c 'b = bytearray(48 * 1024 * 1024); import time; time.sleep(600)' &\nwait\n")
        .unwrap();
    let spin = sv.state().join("spin.sh");
    std::fs::write(&spin, "while :; do :; done\n").unwrap();
    let checked =
        |name: &str, cmd: String, checks: Checks| BoxService { checks: Some(checks), ..service(name, cmd, &[], None) };
    let none = Checks { mem_mb: None, cpu_percent: None, file: None };
    let decl = BoxDeclaration::new(vec![
        checked("hog", format!("sh {}", hog.display()), Checks { mem_mb: Some(20), ..none.clone() }),
        checked("spin", format!("sh {}", spin.display()), Checks { cpu_percent: Some(5), ..none.clone() }),
        checked(
            "beat",
            "sleep 600".into(),
            Checks { file: Some(FileCheck { path: "beat".into(), max_age: "1h".into() }), ..none.clone() },
        ),
        checked("calm", "sleep 600".into(), Checks { mem_mb: Some(500), cpu_percent: Some(90), file: None }),
    ])
    .unwrap();
    let wrapper_text = wrapper.display().to_string();
    let var: &'static dyn Fn(&str) -> Option<String> = Box::leak(Box::new(move |k: &str| match k {
        "CHANT_SPRITE_ENV" => Some(wrapper_text.clone()),
        "CHANT_SPRITE_CPU_SAMPLE" => Some("300ms".into()),
        _ => None,
    }));
    let lexicon = || BoxLexicon::new(sv.state(), Some("box"), decl.clone(), var);
    EnvLexicon::apply(&lexicon(), DeleteMode::Never).unwrap();
    for name in ["hog", "spin", "beat", "calm"] {
        eventually(Duration::from_secs(20), "the services to run", || sv.status(name) == "running");
    }
    // The hog's child allocates after it starts: wait until the tree holds the memory.
    let read = |name: &str| -> serde_json::Value {
        let reading = lexicon().reading();
        reading["resources"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone()
    };
    eventually(Duration::from_secs(20), "the hog's memory", || read("hog")["readings"]["memMb"].as_u64() >= Some(40));

    let reading = lexicon().reading();
    let by = |name: &str| reading["resources"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone();
    let hog = by("hog");
    assert_eq!(hog["status"], "drifted", "{hog}");
    let mb = hog["readings"]["memMb"].as_u64().unwrap();
    assert!(hog["detail"].as_str().unwrap().ends_with(&format!("memory {mb} MB over its limit of 20 MB")), "{hog}");
    let spin = by("spin");
    assert_eq!(spin["status"], "drifted", "{spin}");
    assert!(spin["detail"].as_str().unwrap().contains("over its limit of 5%"), "{spin}");
    assert!(spin["readings"]["cpuPercent"].as_u64().unwrap() > 5, "{spin}");
    // The heartbeat file is missing: the reading failed, so the service is unknown, not drifted.
    let beat = by("beat");
    assert_eq!(beat["status"], "unknown", "{beat}");
    assert!(beat["detail"].as_str().unwrap().contains("file age could not be read"), "{beat}");
    assert_eq!(beat["readings"], serde_json::json!({}));
    let calm = by("calm");
    assert_eq!(calm["status"], "in-sync", "{calm}");
    assert!(calm["readings"]["memMb"].as_u64().unwrap() < 500 && calm["readings"]["cpuPercent"].as_u64().is_some());

    // The resource symptoms carry the readings for the rules.
    let symptoms = chant::tick::parse_observation(&reading.to_string(), "box").unwrap();
    let hog_symptom = symptoms.iter().find(|s| s.resource == "hog").unwrap();
    assert_eq!(hog_symptom.mem_mb, Some(mb));
    assert_eq!(symptoms.iter().find(|s| s.resource == "beat").unwrap().file_age_secs, None);

    // A fresh heartbeat is in sync; one two hours old is drifted.
    let beat_file = sv.state().join("beat");
    std::fs::write(&beat_file, "alive\n").unwrap();
    let fresh = read("beat");
    assert_eq!(fresh["status"], "in-sync", "{fresh}");
    assert!(fresh["readings"]["fileAgeSecs"].as_u64().unwrap() < 60, "{fresh}");
    let old = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    std::fs::File::options().write(true).open(&beat_file).unwrap().set_modified(old).unwrap();
    let stale = read("beat");
    assert_eq!(stale["status"], "drifted", "{stale}");
    assert!(stale["detail"].as_str().unwrap().contains("beat is 72"), "{stale}");

    // The spinner is stopped: a service that is not running is drifted by its state, unread.
    sv.ok(&["services", "stop", "spin"]);
    let stopped = read("spin");
    assert_eq!(stopped["status"], "drifted", "{stopped}");
    assert!(stopped.get("readings").is_none(), "{stopped}");
}
