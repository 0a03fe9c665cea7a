//! Hostile ledger content, through the real binaries (issue #19, defect 13): text a foreign
//! writer planted in tick records and gate facts reaches no terminal raw (`operator status`,
//! `operator log`, `approve`), and `approve` refuses an approver or a URL that would carry it
//! there.

use serde_json::json;

use super::support::{Out, Sandbox, config_with_roots, converge_key, gate_key, plant, shard};

const OP: &str = "site-release";
const AT: &str = "2026-03-01T10:00:00.000Z";
const LATER: &str = "2026-03-01T10:05:00.000Z";

/// Asserts that `out` carries no byte a terminal acts on (ESC, BEL, CSI, a bidi override).
#[track_caller]
fn no_raw_escapes(what: &str, out: &Out) {
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(!out.stdout.contains(c) && !out.stderr.contains(c), "{what} printed {c:?} raw:\n{}", out.all());
    }
}

/// A sandbox whose `site-release` run stopped at its gate; returns it and the run's id.
fn gated() -> (Sandbox, String) {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let gated = sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", AT)]);
    gated.code(3);
    let run_id = gated.json()["id"].as_str().unwrap().to_owned();
    (sandbox, run_id)
}

#[test]
fn approve_refuses_an_approver_or_a_url_that_would_carry_escapes_to_the_next_reader() {
    let (sandbox, _) = gated();
    let now = [("CHANT_NOW", LATER)];
    let before = sandbox.tip();

    // An approver or a URL holding escape sequences, a newline or credentials is refused (exit 2)
    // before anything is recorded, by the stock binary as by the project's.
    let refused: [&[&str]; 5] = [
        &["--actor", "alice\u{1b}]0;owned\u{7}\u{1b}[2J"],
        &["--actor", "bob\nforged line"],
        &["--actor", &"x".repeat(65)],
        &["--url", "https://review.example/\u{1b}[31mred"],
        &["--url", "https://user:hunter2@review.example/pr/7"],
    ];
    for extra in refused {
        for stock in [false, true] {
            let mut args = vec!["approve", OP, "release"];
            args.extend_from_slice(extra);
            let out = if stock { sandbox.stock(&args, &now) } else { sandbox.project(&args, &now) };
            out.code(2);
            assert!(out.stderr.contains(&format!("error: {}:", extra[0])), "{}", out.all());
            no_raw_escapes("a refused approve", &out);
        }
    }
    assert_eq!(sandbox.tip(), before, "a refused approve recorded something");
}

#[test]
fn ledger_text_is_shown_escaped_by_every_human_view() {
    let (sandbox, run_id) = gated();
    let now = [("CHANT_NOW", LATER)];
    let tick = sandbox.tick("site-converge", &[("CHANT_NOW", AT)]);

    // A foreign writer plants facts whose text would drive the next reader's terminal.
    let path = shard(&sandbox, &gate_key(OP).dir());
    let evil = "mallory\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\nop: site-release ok\u{202e}";
    let pending = json!({"version": 1, "kind": "pending", "op": OP, "gate": "audit", "env": "site", "runId": "r-evil",
        "description": evil, "url": format!("https://x.example/{evil}"), "timestamp": AT,
        "expiresAt": "2026-03-01T11:00:00.000Z"});
    plant(&sandbox, &path, &pending.to_string());
    let resolution = json!({"version": 1, "kind": "resolution", "op": OP, "gate": "release", "env": "site",
        "runId": run_id, "resolvedBy": evil, "url": format!("https://x.example/{evil}"), "timestamp": LATER});
    plant(&sandbox, &path, &resolution.to_string());
    let mut forged = tick.clone();
    forged["id"] = json!("e0000001");
    forged["timestamp"] = json!(LATER);
    forged["log"] = json!(evil);
    forged["error"] = json!(evil);
    forged["outcomes"] = json!([{"action": "reported", "ruleId": "drift-apply", "reason": evil, "op": evil}]);
    plant(&sandbox, &shard(&sandbox, &converge_key("site", "site-converge").dir()), &forged.to_string());

    for stock in [false, true] {
        let run = |args: &[&str]| if stock { sandbox.stock(args, &now) } else { sandbox.project(args, &now) };
        let shown = r"mallory\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{a}op: site-release ok\u{202e}";
        let log = run(&["operator", "log"]);
        log.code(0);
        no_raw_escapes("operator log", &log);
        assert!(log.stdout.contains(&format!("[e0000001]  {shown}\n    error  {shown}\n")), "{}", log.all());
        assert!(log.stdout.contains(&format!("reported  drift-apply → {shown}: {shown}")), "{}", log.all());
        let status = run(&["operator", "status"]);
        status.code(0);
        no_raw_escapes("operator status", &status);
        assert!(status.stdout.contains(r#"gate "audit""#), "{}", status.all());
        assert!(status.stdout.contains(&format!("  {shown}\n  error     : {shown}\n")), "{}", status.all());
        assert!(status.stdout.contains(&format!("    {shown}\n")), "{}", status.all());
        assert!(status.stdout.contains(&format!("approve at: https://x.example/{shown}\n")), "{}", status.all());
        // The next approver is told who approved, escaped.
        let again = run(&["approve", OP, "release", "--actor", "erin"]);
        again.code(0);
        no_raw_escapes("approve", &again);
        assert!(again.stderr.contains(r"already approved by mallory\u{1b}]0;pwned"), "{}", again.all());
    }
}

/// Points `op`'s lease ref at a blob claiming the lease until `expires_at`, through `git`.
fn plant_lease(sandbox: &Sandbox, op: &str, expires_at: &str) {
    let record = format!(
        r#"{{"op":"{op}","holder":"thief:1:00000000","token":"stolen","acquiredAt":"2020-01-01T00:00:00.000Z","expiresAt":"{expires_at}"}}"#
    );
    let blob_file = sandbox.root().join("lease.json");
    std::fs::write(&blob_file, record).unwrap();
    let blob = sandbox.git(&sandbox.dir, &["hash-object", "-w", blob_file.to_str().unwrap()]);
    sandbox.git(&sandbox.dir, &["update-ref", &format!("refs/chant/lease/{op}"), blob.trim()]);
}

#[test]
fn a_lease_dated_beyond_the_maximum_ttl_is_shown_stale_and_taken_over_with_a_warning() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    // One blob dated in the year 2999 used to lock the op out for ever.
    plant_lease(&sandbox, "site-converge", "2999-01-01T00:00:00.000Z");
    let status = sandbox.stock(&["operator", "status"], &[]);
    status.code(0);
    let stale = "lease     : stale (held by thief:1:00000000 until 2999-01-01T00:00:00.000Z, further ahead than the \
                 24h maximum TTL; the next acquire takes it over)";
    assert!(status.stdout.contains(stale), "{}", status.all());
    let json = sandbox.stock(&["operator", "status", "--json"], &[]).code(0).json();
    let lease = &json["ops"][0]["lease"];
    assert_eq!((&lease["live"], &lease["stale"]), (&json!(false), &json!(true)), "{json}");

    let out = sandbox.project(&["tick", "site-converge", "--json"], &[]);
    out.code(0);
    assert!(
        out.stderr.contains(
            "warning: took over the lease of site-converge from thief:1:00000000: it claimed to run until \
             2999-01-01T00:00:00.000Z, further ahead than the maximum lease TTL of 24h"
        ),
        "{}",
        out.all()
    );
    let tick = out.json();
    assert!(tick["lease"]["token"].is_string() && tick["lease"]["token"] != "stolen", "{tick}");
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "", "released after the tick");
}

#[test]
fn a_lease_ttl_past_24h_is_a_usage_error() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    for ttl in ["25h", "1d1s", "18446744073709551615ms", "18446744073709551616ms"] {
        let out = sandbox.project(&["operator", "--once", "--lease-ttl", ttl], &[]);
        out.code(2);
        assert!(out.stderr.contains("--lease-ttl"), "{ttl}: {}", out.all());
    }
    assert_eq!(sandbox.tip(), None, "nothing ticked");
    sandbox.project(&["operator", "--once", "--lease-ttl", "24h", "--env", "site"], &[]).code(0);
}
