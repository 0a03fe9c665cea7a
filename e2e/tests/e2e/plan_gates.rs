//! Approvals bound to the plan, and approval links from CI jobs, through the real binaries:
//! `site-guarded-apply` stops at its gate `rollout` before applying `site`, whose declaration
//! drops `old.conf` when `E2E_SITE_DROP` is set, which is how a test changes the plan between
//! approval and run.

use std::os::unix::fs::PermissionsExt as _;

use serde_json::Value;

use super::support::{Sandbox, config_with_roots, gate_key};

const OP: &str = "site-guarded-apply";

fn at(minutes: i64) -> String {
    format!("2026-03-01T10:{minutes:02}:00.000Z")
}

fn is_digest(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| s.strip_prefix("sha256:"))
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn a_gate_records_the_plan_it_guards_and_a_changed_plan_refuses_the_approval() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));

    // The run stops at the gate and records the plan: what the apply after it would do.
    let first = sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(0))]);
    first.code(3);
    let record = first.json();
    let digest = record["gate"]["planDigest"].clone();
    assert!(is_digest(&digest), "{record}");
    let changes = record["gate"]["plan"]["changes"].as_array().unwrap().clone();
    assert!(changes.contains(&Value::from("create files/old.conf")), "{changes:?}");
    assert!(changes.contains(&Value::from("create files/app.conf")), "{changes:?}");
    assert_eq!(record["gate"]["expiresAt"], "2026-03-01T11:00:00.000Z");
    let pending = &sandbox.values(&gate_key(OP))[0];
    assert_eq!(pending["planDigest"], digest);
    assert_eq!(pending["plan"]["changes"], Value::Array(changes.clone()));
    assert!(!sandbox.dir.join("estates/site/app.conf").exists(), "nothing applied before the approval");

    // The human form: description, time to reach it, approve, expires, the plan.
    let human = sandbox.project(&["run", OP], &[("CHANT_NOW", &at(1))]);
    human.code(3);
    let err = &human.stderr;
    assert!(err.contains(&format!("Op \"{OP}\" is gated on \"rollout\" after ")), "{err}");
    for want in [
        "  Applying the site needs a human.\n",
        "  approve : chant approve site-guarded-apply rollout\n",
        "  expires : 2026-03-01T11:00:00.000Z\n",
        &format!("  plan    : {}\n", digest.as_str().unwrap()),
        "      create files/old.conf\n",
    ] {
        assert!(err.contains(want), "{want:?} in\n{err}");
    }

    // operator status and approve --show print the plan being approved.
    let status = sandbox.stock(&["operator", "status"], &[("CHANT_NOW", &at(2))]).code(0).stdout.clone();
    assert!(status.contains(&format!("plan: {}", digest.as_str().unwrap())), "{status}");
    assert!(status.contains("create files/old.conf"), "{status}");
    let json = sandbox.stock(&["operator", "status", "--json"], &[("CHANT_NOW", &at(2))]).code(0).json();
    assert_eq!(json["pendingGates"][0]["planDigest"], digest);
    let show = sandbox.stock(&["approve", OP, "rollout", "--show"], &[("CHANT_NOW", &at(2))]);
    show.code(0);
    assert!(show.stdout.contains(&format!("plan {}", digest.as_str().unwrap())), "{}", show.all());
    assert!(show.stdout.contains("create files/old.conf"), "{}", show.stdout);
    assert_eq!(sandbox.values(&gate_key(OP)).len(), 1, "--show records nothing");

    // approve copies the digest.
    let approve = sandbox.stock(&["approve", OP, "rollout", "--actor", "alex"], &[("CHANT_NOW", &at(3))]);
    approve.code(0);
    assert!(approve.stdout.contains("this approves the plan sha256:"), "{}", approve.all());
    let facts = sandbox.values(&gate_key(OP));
    assert_eq!(facts[1]["planDigest"], digest);

    // The declaration changes: the fresh plan differs, so the approval is refused with both digests.
    let drop = [("CHANT_NOW", at(4)), ("E2E_SITE_DROP", "1".to_owned())];
    let drop: Vec<(&str, &str)> = drop.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = sandbox.project(&["run", OP, "--json"], &drop);
    refused.code(3);
    let record = refused.json();
    let why = record["gate"]["refused"].as_str().unwrap();
    let fresh = record["gate"]["planDigest"].clone();
    assert!(is_digest(&fresh) && fresh != digest, "{record}");
    assert!(why.contains(&format!("approved {}, now {}", digest.as_str().unwrap(), fresh.as_str().unwrap())), "{why}");
    assert!(why.contains("- create files/old.conf"), "{why}");
    let facts = sandbox.values(&gate_key(OP));
    assert_eq!(facts.len(), 3, "a new pending fact for the new plan");
    assert_eq!((&facts[2]["kind"], &facts[2]["planDigest"]), (&Value::from("pending"), &fresh));
    assert!(!sandbox.dir.join("estates/site/app.conf").exists(), "the refused run applied nothing");
    let human = sandbox.project(&["run", OP], &drop);
    human.code(3);

    // Approving the new plan lets the run through, and it applies.
    let later = at(6);
    sandbox.stock(&["approve", OP, "rollout", "--actor", "alex"], &[("CHANT_NOW", &later)]).code(0);
    let done = [("CHANT_NOW", at(7)), ("E2E_SITE_DROP", "1".to_owned())];
    let done: Vec<(&str, &str)> = done.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let ok = sandbox.project(&["run", OP, "--json"], &done);
    ok.code(0);
    assert!(sandbox.dir.join("estates/site/app.conf").exists());
    assert!(!sandbox.dir.join("estates/site/old.conf").exists());
}

/// A job's variables.
type Vars<'a> = &'a [(&'a str, &'a str)];

#[test]
fn pull_and_merge_request_jobs_record_their_link_and_nothing_else_does() {
    let cases: [(Vars, Option<&str>); 4] = [
        (
            &[
                ("GITHUB_REF_NAME", "123/merge"),
                ("GITHUB_REPOSITORY", "org/repo"),
                ("GITHUB_SERVER_URL", "https://github.com"),
            ],
            Some("https://github.com/org/repo/pull/123"),
        ),
        (
            &[("CI_MERGE_REQUEST_PROJECT_URL", "https://gitlab.example.org/g/p"), ("CI_MERGE_REQUEST_IID", "42")],
            Some("https://gitlab.example.org/g/p/-/merge_requests/42"),
        ),
        (&[("GITHUB_REF_NAME", "main"), ("GITHUB_REPOSITORY", "org/repo")], None),
        (&[], None),
    ];
    for (vars, want) in cases {
        let sandbox = Sandbox::new(&config_with_roots(&["site"]));
        let mut with_now = vars.to_vec();
        with_now.push(("CHANT_NOW", "2026-03-01T10:00:00.000Z"));
        let out = sandbox.project(&["run", "site-release", "--json"], &with_now);
        out.code(3);
        assert_eq!(out.json()["url"].as_str(), want, "{vars:?}");
        let pending = &sandbox.values(&gate_key("site-release"))[0];
        assert_eq!(pending["url"].as_str(), want, "{vars:?}");
        // approve without --url inside the same job uses the job's link.
        let mut later = vars.to_vec();
        later.push(("CHANT_NOW", "2026-03-01T10:05:00.000Z"));
        sandbox.stock(&["approve", "site-release", "release"], &later).code(0);
        let resolution = &sandbox.values(&gate_key("site-release"))[1];
        assert_eq!(resolution["url"].as_str(), want, "{vars:?}");
    }
}

#[test]
fn a_request_whose_plan_does_not_hash_to_its_digest_is_refused_before_it_is_shown_or_approved() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(0))]).code(3);
    let pending = sandbox.values(&gate_key(OP))[0].clone();
    let recorded = pending["planDigest"].as_str().unwrap().to_owned();

    // Someone rewrites the request: a harmless plan beside the digest of the real one.
    let mut forged = pending.clone();
    forged["plan"]["changes"] = serde_json::json!(["create files/harmless.txt"]);
    let shard = format!("{}/0/0.jsonl", gate_key(OP).dir());
    super::original_gates::commit_ledger_file(&sandbox, &shard, &format!("{forged}\n"), &[]);
    let harmless = chant::gate::plan::GatePlan {
        verb: chant::gate::plan::PlanVerb::Apply,
        env: "site".into(),
        changes: vec!["create files/harmless.txt".into()],
    }
    .digest();

    let show = sandbox.stock(&["approve", OP, "rollout", "--show"], &[("CHANT_NOW", &at(1))]);
    show.code(1);
    assert!(!show.stdout.contains("harmless"), "the forged plan is not shown: {}", show.stdout);
    for want in [
        format!("gate \"rollout\" of {OP} (run {})", pending["runId"].as_str().unwrap()),
        format!("digest is {harmless}"),
        format!("records the digest {recorded}"),
    ] {
        assert!(show.stderr.contains(&want), "{want:?} in {}", show.stderr);
    }
    let approve = sandbox.stock(&["approve", OP, "rollout", "--actor", "alex"], &[("CHANT_NOW", &at(2))]);
    approve.code(1);
    assert!(approve.stderr.contains("its plan and digest disagree; nothing recorded"), "{}", approve.stderr);
    assert_eq!(sandbox.values(&gate_key(OP)).len(), 1, "nothing recorded");
    let status = sandbox.stock(&["operator", "status"], &[("CHANT_NOW", &at(2))]).code(0).stdout.clone();
    assert!(!status.contains("harmless"), "{status}");
    assert!(status.contains(&format!("the plan listed hashes to {harmless}, not to the recorded digest")), "{status}");
    // Clearing the forged request stays possible.
    sandbox.stock(&["approve", OP, "rollout", "--expire"], &[("CHANT_NOW", &at(3))]).code(0);
}

#[test]
fn an_approval_binds_the_values_it_changes_from_and_a_run_that_finds_others_asks_again() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[("CHANT_NOW", &at(0))]).code(0);
    let app = sandbox.path("estates/site/app.conf");
    let set_mode = |mode: u32| {
        std::fs::set_permissions(&app, <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(mode))
            .unwrap()
    };

    // Approved while app.conf was 0600: the plan says so.
    set_mode(0o600);
    let asked = sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(1))]);
    asked.code(3);
    let approved = asked.json()["gate"]["planDigest"].clone();
    let changes = asked.json()["gate"]["plan"]["changes"].clone();
    let update: Vec<&str> = changes.as_array().unwrap().iter().filter_map(|c| c.as_str()).collect();
    assert!(update.iter().any(|c| c.starts_with("update files/app.conf (") && c.contains("600")), "{changes}");
    sandbox.stock(&["approve", OP, "rollout", "--actor", "alex"], &[("CHANT_NOW", &at(2))]).code(0);

    // The same property, another value by the time the run comes: refused, asked again.
    set_mode(0o700);
    let refused = sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(3))]);
    refused.code(3);
    let record = refused.json();
    let why = record["gate"]["refused"].as_str().unwrap_or_default();
    assert!(why.contains(&format!("approved {}", approved.as_str().unwrap())), "{record}");
    assert!(why.contains("700"), "the change names the value it now changes from: {why}");
    assert_eq!(std::fs::metadata(&app).unwrap().permissions().mode() & 0o777, 0o700, "nothing applied");
}
