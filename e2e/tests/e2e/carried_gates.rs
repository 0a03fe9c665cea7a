//! Gates that carry an approval (`gate("deploy-prod", carries = "deploy-staging", within = "1h")`),
//! through the real binaries and the real git ledger: one staging approval opens production in
//! the run that walks through staging, is recorded as `carriedFrom`, carries once, never past its
//! window; `operator audit` checks the cited request and approval and reports a carry whose
//! source is missing or expired as `carried-without-source`.

use serde_json::Value;

use super::support::{Out, Sandbox, config_with_roots, gate_key, plant, shard};

const OP: &str = "site-promote";

/// The instant `minutes` after 2026-03-01T10:00:00Z, as records write it.
fn at(minutes: i64) -> String {
    let total = 10 * 60 + minutes;
    format!("2026-03-01T{:02}:{:02}:00.000Z", total / 60, total % 60)
}

fn run(sandbox: &Sandbox, minutes: i64) -> Out {
    sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(minutes))])
}

fn approve(sandbox: &Sandbox, gate: &str, minutes: i64) -> Out {
    sandbox.stock(&["approve", OP, gate, "--actor", "alice"], &[("CHANT_NOW", &at(minutes))])
}

fn step<'a>(record: &'a Value, gate: &str) -> &'a Value {
    record["outcomes"].as_array().unwrap().iter().find(|o| o["name"] == gate).unwrap()
}

fn facts(sandbox: &Sandbox) -> Vec<(String, String)> {
    sandbox
        .values(&gate_key(OP))
        .iter()
        .map(|f| (f["gate"].as_str().unwrap().to_owned(), f["kind"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn a_staging_approval_carries_into_production_once_and_never_past_its_window() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));

    // The first run stops at staging; alice approves it.
    let first = run(&sandbox, 0);
    first.code(3);
    assert_eq!(first.json()["gate"]["name"], "deploy-staging");
    let asked_by = first.json()["id"].as_str().unwrap().to_owned();
    approve(&sandbox, "deploy-staging", 5).code(0);

    // The next run walks through staging and, on the same approval, through production.
    let through = run(&sandbox, 10);
    through.code(0);
    let record = through.json();
    assert_eq!(record["status"], "ok", "{record}");
    let prod = step(&record, "deploy-prod");
    assert_eq!(prod["approvedBy"], "alice", "{record}");
    let from = &prod["carriedFrom"];
    assert_eq!(from["op"], OP);
    assert_eq!(from["gate"], "deploy-staging");
    assert_eq!(from["at"], at(0), "the request the approval answered");
    assert_eq!(from["approvedBy"], "alice");
    assert_eq!(from["approvedAt"], at(5));
    assert_eq!(from["runId"], asked_by.as_str());
    assert_eq!(from["within"], "1h");
    assert!(prod["detail"].as_str().unwrap().contains("carried from \"deploy-staging\", within 1h"), "{prod}");
    assert!(record["outcomes"].as_array().unwrap().iter().any(|o| o["detail"] == "promoted"), "{record}");

    // On the ledger: the carried resolution with its `carriedFrom`, then the pass.
    assert_eq!(
        facts(&sandbox),
        [
            ("deploy-staging".into(), "pending".into()),
            ("deploy-staging".into(), "resolution".into()),
            ("deploy-staging".into(), "passed".into()),
            ("deploy-prod".into(), "resolution".into()),
            ("deploy-prod".into(), "passed".into()),
        ]
    );
    let lines = sandbox.values(&gate_key(OP));
    assert_eq!(lines[3]["carriedFrom"], *from, "{}", lines[3]);
    assert_eq!(lines[3]["resolvedBy"], "alice");

    // The audit finds every carry backed by its request and approval, within its window.
    let audit = sandbox.stock(&["operator", "audit", "--json", "--op", OP], &[]).code(0).json();
    assert_eq!(audit["gaps"], serde_json::json!([]), "{audit}");
    let carried: Vec<&Value> =
        audit["entries"].as_array().unwrap().iter().filter(|e| e.get("carriedFrom").is_some()).collect();
    assert_eq!(carried.len(), 1, "{audit}");
    assert_eq!(carried[0]["kind"], "approved");

    // The staging approval was spent; the next run asks again. Approved at 25, the run at 100
    // walks through staging, but the approval is 75 minutes old: production asks a human.
    run(&sandbox, 20).code(3);
    approve(&sandbox, "deploy-staging", 25).code(0);
    let late = run(&sandbox, 100);
    late.code(3);
    let record = late.json();
    assert_eq!(step(&record, "deploy-staging")["status"], "ok", "{record}");
    assert_eq!(record["gate"]["name"], "deploy-prod", "{record}");
    let refused = record["gate"]["refused"].as_str().unwrap();
    assert!(refused.contains("older than the 1h window"), "{refused}");
    assert_eq!(record["approve"], "chant approve site-promote deploy-prod");
    assert!(!record["outcomes"].as_array().unwrap().iter().any(|o| o["detail"] == "promoted"), "{record}");
    // A human approval of production answers the request that run left standing.
    let approved = approve(&sandbox, "deploy-prod", 102);
    approved.code(0);
    assert!(approved.stdout.contains("approved gate \"deploy-prod\" of site-promote as alice"), "{}", approved.all());
}

#[test]
fn the_audit_reports_a_carry_whose_source_is_missing_or_expired() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    run(&sandbox, 0).code(3);
    approve(&sandbox, "deploy-staging", 5).code(0);
    run(&sandbox, 10).code(0);
    let path = shard(&sandbox, &format!("_gates/{OP}"));
    let lines = sandbox.values(&gate_key(OP));
    let carried = lines[3].clone();
    assert!(carried.get("carriedFrom").is_some(), "{carried}");

    // A carry citing an approval the ledger never held.
    let mut missing = carried.clone();
    missing["carriedFrom"]["approvedAt"] = Value::from(at(7));
    missing["timestamp"] = Value::from(at(30));
    plant(&sandbox, &path, &missing.to_string());
    // A carry two hours after the approval it cites, past its 1h window.
    let mut expired = carried.clone();
    expired["timestamp"] = Value::from(at(125));
    plant(&sandbox, &path, &expired.to_string());

    let audit = sandbox.stock(&["operator", "audit", "--json", "--op", OP], &[]).code(1).json();
    let gaps: Vec<&Value> = audit["gaps"].as_array().unwrap().iter().collect();
    assert_eq!(gaps.len(), 2, "{audit}");
    assert!(gaps.iter().all(|g| g["kind"] == "carried-without-source"), "{audit}");
    let message = |i: usize| gaps[i]["message"].as_str().unwrap();
    assert!(message(0).contains(&format!("approved at {}, an approval that ledger does not hold", at(7))), "{audit}");
    assert!(message(1).contains("past its 1h window: expired"), "{audit}");
    let human = sandbox.stock(&["operator", "audit", "--op", OP], &[]);
    human.code(1);
    assert!(human.stdout.contains("carried-without-source"), "{}", human.all());
}
