//! Gates as facts (DESIGN.md section 7), through the real binaries: `site-release` stops at the
//! gate `release` (its pending facts stand for 1h), and `approve` records resolutions. `CHANT_NOW`
//! fixes every clock read, so expiry and ordering are exact.

use serde_json::Value;

use super::support::{Out, Sandbox, config_with_roots, gate_key, run_key};

const OP: &str = "site-release";
const GATE: &str = "release";

/// The instant `minutes` after 2026-03-01T10:00:00Z, as records write it (and `CHANT_NOW` takes).
fn at(minutes: i64) -> String {
    let total = 10 * 60 + minutes;
    assert!((0..28 * 24 * 60).contains(&total), "stay within March");
    let (day, rest) = (1 + total / (24 * 60), total % (24 * 60));
    format!("2026-03-{day:02}T{:02}:{:02}:00.000Z", rest / 60, rest % 60)
}

/// Runs `site-release --json` at `minutes`.
fn run(sandbox: &Sandbox, minutes: i64) -> Out {
    sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(minutes))])
}

/// Runs `approve` with `bin` (the project or the stock binary) at `minutes`.
fn approve(sandbox: &Sandbox, stock: bool, minutes: i64, extra: &[&str]) -> Out {
    let mut args = vec!["approve", OP, GATE];
    args.extend_from_slice(extra);
    let now = at(minutes);
    let vars = [("CHANT_NOW", now.as_str())];
    if stock { sandbox.stock(&args, &vars) } else { sandbox.project(&args, &vars) }
}

fn facts(sandbox: &Sandbox) -> Vec<Value> {
    sandbox.values(&gate_key(OP))
}

fn kinds(sandbox: &Sandbox) -> Vec<String> {
    facts(sandbox).iter().map(|f| f["kind"].as_str().unwrap().to_owned()).collect()
}

fn head(sandbox: &Sandbox) -> String {
    sandbox.git(&sandbox.dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

#[test]
fn a_gate_is_a_fact_reused_approved_out_of_band_and_carried_onto_the_next_run() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let sha_at_gate = head(&sandbox);

    // The run stops at the gate: exit 3, the gate and the approve command; one pending fact.
    let first = run(&sandbox, 0);
    first.code(3);
    let record = first.json();
    assert_eq!(record["status"], "gated");
    assert_eq!(record["gate"]["name"], GATE);
    assert_eq!(record["gate"]["since"], at(0));
    assert_eq!(record["approve"], "chant approve site-release release");
    assert_eq!(record["phases"][1]["status"], "skipped", "nothing after the gate ran: {record}");
    let pending = facts(&sandbox);
    assert_eq!(pending.len(), 1);
    let pending = &pending[0];
    assert_eq!(pending["kind"], "pending");
    assert_eq!(
        (&pending["op"], &pending["gate"], &pending["env"]),
        (&Value::from(OP), &Value::from(GATE), &Value::from("site"))
    );
    assert_eq!(pending["runId"], record["id"]);
    assert_eq!(pending["gitSha"], sha_at_gate.as_str());
    assert_eq!(pending["expiresAt"], at(60));
    assert_eq!(pending["description"], "Shipping the site needs a human.");

    // The human form names the approve command.
    let human = sandbox.project(&["run", OP], &[("CHANT_NOW", &at(5))]);
    human.code(3);
    assert!(human.stderr.contains("is gated on \"release\""), "{}", human.all());
    assert!(human.stderr.contains("chant approve site-release release"), "{}", human.all());

    // Running again while it stands reuses the fact: the gate ledger grew by one line, not two.
    let again = run(&sandbox, 10);
    again.code(3);
    assert_eq!(again.json()["gate"]["since"], at(0));
    assert_eq!(kinds(&sandbox), ["pending"]);

    // The project moves on before the approval, so copying runId and gitSha is observable.
    std::fs::write(sandbox.path("CHANGELOG"), "next\n").unwrap();
    sandbox.git(&sandbox.dir, &["add", "CHANGELOG"]);
    sandbox.git(&sandbox.dir, &["commit", "-q", "-m", "next"]);
    assert_ne!(head(&sandbox), sha_at_gate);

    // Approved out of band with the stock binary, which knows no op and needs none: it records
    // without a warning (the stock binary never carries ops; approving from it is the way).
    let approved = approve(
        &sandbox,
        true,
        20,
        &["--actor", "alice", "--url", "https://review.example/pr/7", "--note", "looks good"],
    );
    approved.code(0);
    assert!(!approved.stderr.contains("warning"), "{}", approved.all());
    assert!(approved.stdout.contains("approved gate \"release\" of site-release as alice"), "{}", approved.all());
    let all = facts(&sandbox);
    assert_eq!(kinds(&sandbox), ["pending", "resolution"]);
    let resolution = &all[1];
    assert_eq!(resolution["resolvedBy"], "alice");
    assert_eq!(resolution["url"], "https://review.example/pr/7");
    assert_eq!(resolution["note"], "looks good");
    assert_eq!(resolution["timestamp"], at(20));
    assert_eq!(resolution["env"], "site");
    assert_eq!(resolution["runId"], all[0]["runId"], "copied from the pending fact");
    assert_eq!(resolution["gitSha"], sha_at_gate.as_str(), "copied from the pending fact, not today's HEAD");

    // The next run walks through and carries the approver onto its step record.
    let through = run(&sandbox, 30);
    through.code(0);
    let record = through.json();
    assert_eq!(record["status"], "ok");
    let gate_step = record["outcomes"].as_array().unwrap().iter().find(|o| o["step"] == "gate").unwrap();
    assert_eq!(gate_step["approvedBy"], "alice");
    assert!(gate_step["detail"].as_str().unwrap().contains("https://review.example/pr/7"), "{gate_step}");
    let ship = record["outcomes"].as_array().unwrap().iter().find(|o| o["phase"] == "Ship").unwrap();
    assert_eq!((&ship["status"], &ship["detail"]), (&Value::from("ok"), &Value::from("shipped")));
    let runs = sandbox.values(&run_key("site", OP));
    assert_eq!(runs.last().unwrap(), &record, "the run record on the ledger is the one printed");
    assert_eq!(kinds(&sandbox), ["pending", "resolution", "passed"]);
    assert_eq!(facts(&sandbox)[2]["resolvedBy"], "alice");

    // One approval admits one run: the next one asks again.
    run(&sandbox, 40).code(3);
    assert_eq!(kinds(&sandbox), ["pending", "resolution", "passed", "pending"]);
}

#[test]
fn a_resolution_answers_by_ledger_order_not_by_timestamp() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    run(&sandbox, 0).code(3);
    // The approver's clock is an hour behind: the resolution's timestamp is before the pending
    // fact's, but it comes after it on the ledger, so it answers it.
    let approved = approve(&sandbox, false, -60, &["--actor", "bob"]);
    approved.code(0);
    assert!(!approved.stderr.contains("warning"), "the project binary knows its op: {}", approved.all());
    let all = facts(&sandbox);
    assert!(all[1]["timestamp"].as_str().unwrap() < all[0]["timestamp"].as_str().unwrap(), "{all:?}");
    let through = run(&sandbox, 5);
    through.code(0);
    assert_eq!(through.json()["outcomes"][0]["approvedBy"], "bob");
}

#[test]
fn expire_clears_the_standing_fact_and_a_lapsed_one_is_asked_again() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    run(&sandbox, 0).code(3);
    let cleared = approve(&sandbox, false, 5, &["--expire", "--actor", "carol"]);
    cleared.code(0);
    assert!(cleared.stdout.contains("cleared gate \"release\" of site-release"), "{}", cleared.all());
    assert_eq!(kinds(&sandbox), ["pending", "expired"]);
    assert_eq!(facts(&sandbox)[1]["resolvedBy"], "carol");

    // Cleared, not approved: the next run asks again with a new pending fact.
    let asked = run(&sandbox, 6);
    asked.code(3);
    assert_eq!(asked.json()["gate"]["since"], at(6));
    assert_eq!(kinds(&sandbox), ["pending", "expired", "pending"]);

    // A pending fact stands for the gate's timeout (1h), then lapses: the run after asks again.
    run(&sandbox, 65).code(3);
    assert_eq!(kinds(&sandbox).len(), 3, "still standing at 65 minutes");
    let lapsed = run(&sandbox, 67);
    lapsed.code(3);
    assert_eq!(lapsed.json()["gate"]["since"], at(67));
    assert_eq!(kinds(&sandbox), ["pending", "expired", "pending", "pending"]);

    // An approval after the last fact lapsed finds nothing to approve, and records nothing.
    let tip = sandbox.tip();
    let late = approve(&sandbox, false, 200, &["--actor", "dave"]);
    late.code(2);
    assert!(late.stderr.contains("no standing pending fact"), "{}", late.all());
    assert_eq!(sandbox.tip(), tip);
}

#[test]
fn approving_a_gate_with_no_pending_fact_changes_nothing() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    // No ledger at all, with the project binary (which knows the op) and the stock binary.
    let out = approve(&sandbox, false, 0, &[]);
    out.code(2);
    assert!(out.stderr.contains("gate \"release\" of site-release has no standing pending fact"), "{}", out.all());
    assert!(out.stderr.contains("Run the op to reach the gate first"), "{}", out.all());
    let out = approve(&sandbox, true, 0, &[]);
    out.code(2);
    assert!(out.stderr.contains("no gate facts for op `site-release`"), "{}", out.all());
    assert_eq!(sandbox.tip(), None, "no ledger branch was created");

    // With a ledger that has other records, and with a gate that was used up: still nothing.
    sandbox.tick("site-converge", &[]);
    run(&sandbox, 0).code(3);
    approve(&sandbox, false, 1, &[]).code(0);
    run(&sandbox, 2).code(0);
    let tip = sandbox.tip();
    let lines = sandbox.ledger_lines_of(&sandbox.dir);
    let out = approve(&sandbox, false, 3, &[]);
    out.code(2);
    assert!(out.stderr.contains("already used"), "{}", out.all());
    assert_eq!(sandbox.tip(), tip);
    assert_eq!(sandbox.ledger_lines_of(&sandbox.dir), lines);
}

#[test]
fn a_non_http_url_is_refused_and_changes_nothing() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    run(&sandbox, 0).code(3);
    let tip = sandbox.tip();
    for url in ["ftp://review.example/7", "javascript:alert(1)", "review.example/pr/7"] {
        for stock in [false, true] {
            let out = approve(&sandbox, stock, 1, &["--url", url]);
            out.code(2);
            assert!(out.stderr.contains(url) && out.stderr.contains("http:// or https://"), "{}", out.all());
            assert_eq!(sandbox.tip(), tip);
        }
    }
    assert_eq!(kinds(&sandbox), ["pending"]);
    run(&sandbox, 2).code(3);
}

#[test]
fn ledger_commits_carry_the_acting_identity_and_the_audit_compares_it_with_the_record() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let shard = format!("{}/0/0.jsonl", gate_key(OP).dir());
    let who = |what: &str| {
        let branch = super::support::BRANCH;
        sandbox.git(&sandbox.dir, &["log", "-1", &format!("--format={what}"), branch]).trim().to_owned()
    };

    // No git identity configured: chant's own, the documented default.
    run(&sandbox, 0).code(3);
    assert_eq!(who("%an <%ae> / %cn <%ce>"), "chant <chant@localhost> / chant <chant@localhost>");

    // The repository's identity writes the run's commits; approve --actor authors its own.
    sandbox.git(&sandbox.dir, &["config", "user.name", "Lee Laptop"]);
    sandbox.git(&sandbox.dir, &["config", "user.email", "lee@example.org"]);
    approve(&sandbox, true, 1, &["--actor", "alex"]).code(0);
    assert_eq!(who("%an <%ae> / %cn <%ce>"), "alex <lee@example.org> / Lee Laptop <lee@example.org>");
    run(&sandbox, 2).code(0);
    assert_eq!(who("%an <%ae> / %cn <%ce>"), "Lee Laptop <lee@example.org> / Lee Laptop <lee@example.org>");

    // A resolution pushed by hand in alex's name: the audit names the committer and the mismatch.
    run(&sandbox, 3).code(3);
    let facts = sandbox.values(&gate_key(OP));
    let mut forged = facts[1].clone();
    forged["runId"] = facts[3]["runId"].clone();
    forged["timestamp"] = Value::from(at(4));
    super::support::plant(&sandbox, &shard, &forged.to_string());
    let audit = sandbox.stock(&["operator", "audit", "--json", "--op", OP], &[]).code(0).json();
    let approved: Vec<&Value> =
        audit["entries"].as_array().unwrap().iter().filter(|e| e["kind"] == "approved").collect();
    assert_eq!(approved.len(), 2, "{audit}");
    assert_eq!(approved[0]["committedBy"], "alex");
    assert!(approved[0].get("committerMismatch").is_none(), "{audit}");
    assert_eq!(approved[1]["committedBy"], "E2E Author");
    assert_eq!(approved[1]["committerMismatch"], true, "{audit}");
    let human = sandbox.stock(&["operator", "audit", "--op", OP], &[]).code(0).stdout.clone();
    assert!(human.contains("by alex [unsigned] committed by E2E Author (not the approver)"), "{human}");
}
