//! Unit tests of the runner's order and gate handling. Services are an in-memory stand-in here;
//! the integration suite runs the same paths over the real ledger and files lexicon.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::gate::FactKind;

#[derive(Default)]
struct Memory {
    facts: RefCell<Vec<GateFact>>,
    applies: RefCell<Vec<String>>,
    /// The plan of a teardown, as the services would compute it now.
    teardown_plan: RefCell<Option<GatePlan>>,
    /// The approved digest each teardown was handed.
    teardowns: RefCell<Vec<Option<String>>>,
    /// The plan of an apply, as the services would compute it now.
    apply_plan: RefCell<Option<GatePlan>>,
    /// The approved plan each apply was handed.
    approved_applies: RefCell<Vec<Option<GatePlan>>>,
}

impl Services for Memory {
    fn apply(&self, env: &str, mode: DeleteMode, approved: Option<&GatePlan>) -> Result<String, ServiceError> {
        self.applies.borrow_mut().push(format!("{env}:{mode}"));
        self.approved_applies.borrow_mut().push(approved.cloned());
        Ok("1 file written".into())
    }
    fn teardown(&self, _env: &str, _allow_holes: bool, approved: Option<&str>) -> Result<String, ServiceError> {
        self.teardowns.borrow_mut().push(approved.map(str::to_owned));
        Ok("torn down".into())
    }
    fn plan(&self, verb: PlanVerb, _env: &str) -> Result<Option<GatePlan>, ServiceError> {
        Ok(match verb {
            PlanVerb::Teardown => self.teardown_plan.borrow().clone(),
            PlanVerb::Apply => self.apply_plan.borrow().clone(),
        })
    }
    fn gate_facts(&self, _op: &str) -> Result<Vec<GateFact>, ServiceError> {
        Ok(self.facts.borrow().clone())
    }
    fn append_gate_fact(&self, fact: &GateFact) -> Result<(), ServiceError> {
        self.facts.borrow_mut().push(fact.clone());
        Ok(())
    }
}

fn doc(phases: serde_json::Value, on_failure: serde_json::Value) -> OpDocument {
    serde_json::from_value(json!({
        "version": 1, "name": "prod-apply", "overview": "o", "class": "mutating",
        "phases": phases, "onFailure": on_failure
    }))
    .unwrap()
}

fn shell(cmd: &str) -> serde_json::Value {
    json!({"kind": "shell", "class": "mutating", "args": {"cmd": cmd}})
}

fn gate(name: &str) -> serde_json::Value {
    json!({"kind": "gate", "name": name, "class": "read-only", "args": {"description": "release manager signs off"}})
}

fn now() -> Timestamp {
    "2026-09-05T12:00:00Z".parse().unwrap()
}

fn vars(name: &str) -> Option<String> {
    (name == "GREETING").then(|| "hello".to_owned())
}

fn go(d: &OpDocument, services: &Memory) -> RunRecord {
    let settings = RunSettings::new("prod");
    let env = Environment { now: &now, var: &vars };
    run(d, &BTreeMap::new(), &settings, services, &env)
}

#[test]
fn phases_run_in_order_and_record_each_step() {
    let d = doc(
        json!([{"name": "A", "steps": [shell("echo ${GREETING}"), shell("true")]}, {"name": "B", "steps": [shell("true")]}]),
        json!([]),
    );
    let r = go(&d, &Memory::default());
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.outcomes.len(), 3);
    assert_eq!(r.outcomes[0].detail.as_deref(), Some("hello"));
    assert_eq!(r.phases.iter().map(|p| p.status).collect::<Vec<_>>(), [Status::Ok, Status::Ok]);
}

#[test]
fn a_failure_stops_the_run_and_runs_the_failure_phases() {
    let d = doc(
        json!([{"name": "A", "steps": [shell("echo boom >&2; exit 4"), shell("true")]}, {"name": "B", "steps": [shell("true")]}]),
        json!([{"name": "Report", "steps": [shell("echo reported")]}]),
    );
    let r = go(&d, &Memory::default());
    assert_eq!(r.status, Status::Failed);
    let statuses: Vec<Status> = r.outcomes.iter().map(|o| o.status).collect();
    assert_eq!(statuses, [Status::Failed, Status::Skipped, Status::Skipped, Status::Ok]);
    assert_eq!(r.error.as_deref(), Some("shell: exit 4: boom"));
    assert!(r.phases.last().unwrap().on_failure);
}

#[test]
fn an_unset_variable_fails_the_step_naming_it() {
    let d = doc(json!([{"name": "A", "steps": [shell("echo ${MISSING_VAR}")]}]), json!([]));
    let r = go(&d, &Memory::default());
    assert_eq!(r.status, Status::Failed);
    assert!(r.error.unwrap().contains("MISSING_VAR is not set"));
}

#[test]
fn a_gate_without_resolution_records_a_pending_fact_and_stops() {
    let d = doc(
        json!([{"name": "Plan", "steps": [shell("true"), gate("rollout"), shell("echo after")]}]),
        json!([{"name": "F", "steps": [shell("true")]}]),
    );
    let m = Memory::default();
    let r = go(&d, &m);
    assert_eq!(r.status, Status::Gated);
    assert_eq!(r.approve.as_deref(), Some("chant approve prod-apply rollout"));
    assert_eq!(r.outcomes.iter().map(|o| o.status).collect::<Vec<_>>(), [Status::Ok, Status::Gated, Status::Skipped]);
    // No failure phase ran.
    assert!(r.phases.iter().all(|p| !p.on_failure));
    let facts = m.facts.borrow();
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].kind, FactKind::Pending);
    assert_eq!(facts[0].expires_at.as_deref(), Some("2026-09-07T12:00:00.000Z"));
    assert_eq!(facts[0].description.as_deref(), Some("release manager signs off"));
    drop(facts);
    // Running again before expiry reuses the fact.
    let again = go(&d, &m);
    assert_eq!(again.status, Status::Gated);
    assert_eq!(m.facts.borrow().len(), 1);
}

#[test]
fn an_approved_gate_is_walked_through_once() {
    let d = doc(json!([{"name": "Plan", "steps": [gate("rollout"), shell("echo applied")]}]), json!([]));
    let m = Memory::default();
    assert_eq!(go(&d, &m).status, Status::Gated);
    let pending = m.facts.borrow()[0].clone();
    m.facts.borrow_mut().push(GateFact {
        kind: FactKind::Resolution,
        resolved_by: Some("alex".into()),
        timestamp: "2026-09-05T13:04:00.000Z".into(),
        expires_at: None,
        ..pending
    });
    let r = go(&d, &m);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.outcomes[0].approved_by.as_deref(), Some("alex"));
    assert!(r.outcomes[0].detail.as_deref().unwrap().starts_with("[approved] alex"));
    assert_eq!(m.facts.borrow().last().unwrap().kind, FactKind::Passed);
    // The approval admitted one run; the next asks again.
    assert_eq!(go(&d, &m).status, Status::Gated);
}

#[test]
fn a_teardown_behind_a_plan_bound_gate_is_handed_the_approved_digest() {
    let teardown = json!({"kind": "teardown", "class": "destructive", "args": {"env": "staging"}});
    let d = doc(json!([{"name": "Down", "steps": [gate("down"), teardown.clone()]}]), json!([]));
    let m = Memory::default();
    let plan = GatePlan { verb: PlanVerb::Teardown, env: "staging".into(), changes: vec!["drop files/a".into()] };
    *m.teardown_plan.borrow_mut() = Some(plan.clone());
    assert_eq!(go(&d, &m).status, Status::Gated);
    let pending = m.facts.borrow()[0].clone();
    assert_eq!(pending.plan_digest.as_deref(), Some(plan.digest().as_str()));
    m.facts.borrow_mut().push(GateFact {
        kind: FactKind::Resolution,
        resolved_by: Some("alex".into()),
        timestamp: "2026-09-05T13:04:00.000Z".into(),
        expires_at: None,
        ..pending
    });
    assert_eq!(go(&d, &m).status, Status::Ok);
    assert_eq!(*m.teardowns.borrow(), [Some(plan.digest())], "the step executes the plan the gate approved");
    // Without a gate there is no approved plan to hold the step to.
    let bare = doc(json!([{"name": "Down", "steps": [teardown]}]), json!([]));
    assert_eq!(go(&bare, &m).status, Status::Ok);
    assert_eq!(m.teardowns.borrow().last(), Some(&None));
}

#[test]
fn the_first_apply_behind_a_plan_bound_gate_is_handed_the_approved_plan() {
    let apply = json!({"kind": "apply", "class": "mutating", "args": {"env": "db"}});
    let d = doc(json!([{"name": "Up", "steps": [gate("up"), apply.clone(), apply]}]), json!([]));
    let m = Memory::default();
    let line = "update postgres/app.users.bio (type: character varying(200) -> character varying(100))";
    let plan = GatePlan { verb: PlanVerb::Apply, env: "db".into(), changes: vec![line.into()] };
    *m.apply_plan.borrow_mut() = Some(plan.clone());
    assert_eq!(go(&d, &m).status, Status::Gated);
    let pending = m.facts.borrow()[0].clone();
    m.facts.borrow_mut().push(GateFact {
        kind: FactKind::Resolution,
        resolved_by: Some("alex".into()),
        timestamp: "2026-09-05T13:04:00.000Z".into(),
        expires_at: None,
        ..pending
    });
    assert_eq!(go(&d, &m).status, Status::Ok);
    assert_eq!(
        *m.approved_applies.borrow(),
        [Some(plan), None],
        "the apply the gate guards re-checks the approved plan; the next one is not held to it"
    );
}

#[test]
fn apply_goes_through_the_services() {
    let d = doc(
        json!([{"name": "Apply", "steps": [{"kind": "apply", "class": "mutating", "args": {"env": "staging"}}]}]),
        json!([]),
    );
    let m = Memory::default();
    let r = go(&d, &m);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(*m.applies.borrow(), ["staging:never"]);
}

fn purge(ctx: &crate::step::StepContext<'_>) -> crate::step::StepResult {
    Ok(json!({"purged": ctx.args.get("what").cloned().unwrap_or_default(), "env": ctx.env}))
}

fn refuse(_: &crate::step::StepContext<'_>) -> crate::step::StepResult {
    Err(crate::step::StepError::new("cache is locked"))
}

#[test]
fn user_steps_run_their_function() {
    let d = doc(
        json!([{"name": "A", "steps": [
            {"kind": "step", "name": "purge-cache", "class": "destructive", "run": "purge", "args": {"what": "${GREETING}"}},
            {"kind": "step", "name": "refuse", "class": "mutating", "run": "refuse"}
        ]}]),
        json!([]),
    );
    let mut steps: BTreeMap<&str, StepFn> = BTreeMap::new();
    steps.insert("purge-cache", purge);
    steps.insert("refuse", refuse);
    let env = Environment { now: &now, var: &vars };
    let r = run(&d, &steps, &RunSettings::new("prod"), &Memory::default(), &env);
    assert_eq!(r.outcomes[0].output, Some(json!({"purged": "hello", "env": "prod"})));
    assert_eq!(r.error.as_deref(), Some("step `refuse`: cache is locked"));
}

#[test]
fn shell_timeouts_fail_the_step() {
    let d = doc(
        json!([{"name": "A", "steps": [{"kind": "shell", "class": "mutating", "args": {"cmd": "sleep 5", "timeout": "100ms"}}]}]),
        json!([]),
    );
    let mut settings = RunSettings::new("prod");
    settings.kill_grace = Duration::from_millis(100);
    let env = Environment { now: &now, var: &vars };
    let r = run(&d, &BTreeMap::new(), &settings, &Memory::default(), &env);
    assert_eq!(r.error.as_deref(), Some("shell: timed out after 100ms"));
}

/// Serves `responses` (one per connection) on 127.0.0.1 and returns the base URL.
fn serve(responses: Vec<&'static str>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for resp in responses {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(resp.as_bytes());
        }
    });
    format!("http://{addr}")
}

#[test]
fn http_check_passes_only_2xx_and_follows_no_redirect() {
    let base = serve(vec![
        "HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n",
        "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n",
        "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/\r\ncontent-length: 0\r\n\r\n",
    ]);
    assert_eq!(http::check(&format!("{base}/health"), Duration::from_secs(5)), Ok(204));
    assert!(matches!(
        http::check(&format!("{base}/health"), Duration::from_secs(5)),
        Err(http::CheckError::Status { status: 503, .. })
    ));
    assert!(matches!(
        http::check(&format!("{base}/health"), Duration::from_secs(5)),
        Err(http::CheckError::Status { status: 302, .. })
    ));
    // Nothing listens on port 1.
    assert!(matches!(
        http::check("http://127.0.0.1:1/", Duration::from_secs(5)),
        Err(http::CheckError::Transport { .. })
    ));
}

#[test]
fn a_components_gate_stops_that_component_while_the_others_go_on() {
    let d = doc(
        json!([
            {"name": "Prepare", "steps": [shell("echo prepared")]},
            {"name": "Api", "component": "api", "steps": [shell("echo api"), gate("rollout"), shell("echo api-after")]},
            {"name": "Web", "component": "web", "steps": [shell("echo web")]},
            {"name": "Api more", "component": "api", "steps": [shell("echo api-more")]},
            {"name": "Verify", "steps": [shell("echo verified")]},
        ]),
        json!([{"name": "Report", "steps": [shell("echo reported")]}]),
    );
    let m = Memory::default();
    let r = go(&d, &m);
    assert_eq!(r.status, Status::Gated);
    let seen: Vec<(Option<&str>, Status)> = r.outcomes.iter().map(|o| (o.detail.as_deref(), o.status)).collect();
    assert_eq!(
        seen,
        [
            (Some("prepared"), Status::Ok),
            (Some("api"), Status::Ok),
            (None, Status::Gated),
            (None, Status::Skipped),
            (Some("web"), Status::Ok),
            (None, Status::Skipped),
            (None, Status::Skipped),
        ],
        "no failure phase runs after a gate"
    );
    let stop = r.gate.as_ref().unwrap();
    assert_eq!((stop.name.as_str(), stop.component.as_deref()), ("rollout", Some("api")));
    assert_eq!(r.approve.as_deref(), Some("chant approve api rollout"));
    // The gate's facts are the component's.
    assert_eq!(m.facts.borrow()[0].op, "api");

    // Selecting only the web component skips the api's phases, its gate included.
    let m = Memory::default();
    let settings =
        RunSettings { components: Some(["web".to_owned()].into_iter().collect()), ..RunSettings::new("prod") };
    let env = Environment { now: &now, var: &vars };
    let r = run(&d, &BTreeMap::new(), &settings, &m, &env);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.components.as_deref(), Some(["web".to_owned()].as_slice()));
    let ran: Vec<&str> = r.outcomes.iter().filter_map(|o| o.detail.as_deref()).collect();
    assert_eq!(ran, ["prepared", "web", "verified"]);
    assert!(m.facts.borrow().is_empty());

    // A failure in one component stops every other and runs the failure phases.
    let failing = doc(
        json!([
            {"name": "Api", "component": "api", "steps": [shell("exit 1")]},
            {"name": "Web", "component": "web", "steps": [shell("echo web")]},
        ]),
        json!([{"name": "Report", "steps": [shell("echo reported")]}]),
    );
    let r = go(&failing, &Memory::default());
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.outcomes[1].status, Status::Skipped);
    assert_eq!(r.outcomes[2].detail.as_deref(), Some("reported"));
}

#[test]
fn a_carried_approval_opens_the_carrying_gate_and_hands_its_plan_to_the_apply() {
    let apply = json!({"kind": "apply", "class": "mutating", "args": {"env": "db"}});
    let carrying =
        json!({"kind": "gate", "name": "prod", "class": "read-only", "args": {"carries": "staging", "within": "1h"}});
    let d = doc(json!([{"name": "Go", "steps": [gate("staging"), apply.clone(), carrying, apply]}]), json!([]));
    let m = Memory::default();
    let plan = GatePlan { verb: PlanVerb::Apply, env: "db".into(), changes: vec!["create files/a".into()] };
    *m.apply_plan.borrow_mut() = Some(plan.clone());
    assert_eq!(go(&d, &m).status, Status::Gated);
    let pending = m.facts.borrow()[0].clone();
    m.facts.borrow_mut().push(GateFact {
        kind: FactKind::Resolution,
        resolved_by: Some("alex".into()),
        timestamp: "2026-09-05T11:30:00.000Z".into(),
        expires_at: None,
        ..pending
    });
    let r = go(&d, &m);
    assert_eq!(r.status, Status::Ok, "{r:?}");
    let prod = &r.outcomes[2];
    assert_eq!(prod.approved_by.as_deref(), Some("alex"));
    let from = prod.carried_from.as_ref().unwrap();
    assert_eq!((from.gate.as_str(), from.within.as_deref()), ("staging", Some("1h")));
    assert_eq!(*m.approved_applies.borrow(), [Some(plan.clone()), Some(plan)], "both applies re-check the plan");
    let kinds: Vec<(String, FactKind)> = m.facts.borrow().iter().map(|f| (f.gate.clone(), f.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("staging".into(), FactKind::Pending),
            ("staging".into(), FactKind::Resolution),
            ("staging".into(), FactKind::Passed),
            ("prod".into(), FactKind::Resolution),
            ("prod".into(), FactKind::Passed),
        ]
    );
    // The next run asks for staging again (its approval was spent), and reaching prod through a
    // fresh staging approval works once more; the spent carry does not.
    assert_eq!(go(&d, &m).status, Status::Gated);
}
