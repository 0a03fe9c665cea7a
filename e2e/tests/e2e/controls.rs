//! Sync windows and restart limits (issue #35, items 9 and 10), seen from outside: each tick is
//! its own process of the fixture's project binary, on the fixed clock (`CHANT_NOW`), and the
//! test reads the files, the ledger and the views the stock binary prints.

use serde_json::Value;

use super::support::{Sandbox, actions, config_with_roots, log, outcome, run_key};

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

/// The held line of a tick inside `freeze-converge`'s deny window on Monday 2026-03-02.
const HELD: &str = r#"held(window: deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z)"#;

#[test]
fn a_deny_window_holds_mutating_dispatches_and_every_view_says_why() {
    let sandbox = Sandbox::new(&config_with_roots(&["freeze"]));
    // Monday 10:00 UTC: inside the window.
    let inside = [("CHANT_NOW", "2026-03-02T10:00:00.000Z")];
    let plan = sandbox.project(&["tick", "freeze-converge", "--plan", "--json"], &inside).code(0).json();
    assert_eq!(actions(&plan), pairs(&[("freeze-apply", "skipped-window"), ("freeze-probe", "ran")]), "{plan}");

    let held = sandbox.tick("freeze-converge", &inside);
    // The mutating apply is held and says why; the read-only probe still runs.
    assert_eq!(actions(&held), pairs(&[("freeze-apply", "skipped-window"), ("freeze-probe", "ineffective")]));
    let reason = outcome(&held, "freeze-apply")["reason"].as_str().unwrap();
    assert!(reason.contains(r#"deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z"#), "{reason}");
    assert_eq!(held["held"]["until"], "2026-03-02T17:00:00.000Z");
    assert_eq!(held["summary"]["skippedWindow"], 1);
    assert!(log(&held).contains("skipped-flap=0 skipped-window=1 gated=0") && log(&held).ends_with(HELD), "{held}");
    assert!(!sandbox.path("estates/freeze/freeze.conf").exists(), "nothing mutating ran");
    assert!(sandbox.values(&run_key("freeze", "freeze-apply")).is_empty());
    assert_eq!(sandbox.values(&run_key("freeze", "freeze-probe")).len(), 1);

    // Status (text and JSON) and the log show the hold, from the ledger alone.
    let status = sandbox.stock(&["operator", "status", "--env", "freeze"], &inside).code(0).stdout.clone();
    assert!(
        status.contains(r#"held      : window: deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z"#),
        "{status}"
    );
    let json = sandbox.stock(&["operator", "status", "--env", "freeze", "--json"], &inside).code(0).json();
    let row = json["ops"].as_array().unwrap().iter().find(|r| r["op"] == "freeze-converge").unwrap().clone();
    assert_eq!(row["lastTick"]["held"]["window"], r#"deny "0 9 * * 1-5" for 8h"#, "{row}");
    let log_out = sandbox.stock(&["operator", "log", "--op", "freeze-converge"], &inside).code(0).stdout.clone();
    assert!(log_out.contains(HELD), "{log_out}");

    // 17:00, the window has closed: the apply runs and the record carries no hold.
    let after = sandbox.tick("freeze-converge", &[("CHANT_NOW", "2026-03-02T17:00:00.000Z")]);
    assert_eq!(outcome(&after, "freeze-apply")["action"], "ran", "{after}");
    assert!(after.get("held").is_none(), "{after}");
    assert!(!log(&after).contains("held("), "{after}");
    assert_eq!(sandbox.read("estates/freeze/freeze.conf"), "frozen = false\n");
}

fn poke_runs(sandbox: &Sandbox) -> usize {
    sandbox.values(&run_key("giveup", "giveup-poke")).len()
}

fn at(minute: u32) -> [(&'static str, String); 1] {
    [("CHANT_NOW", format!("2026-03-02T10:{minute:02}:00.000Z"))]
}

fn tick_at(sandbox: &Sandbox, minute: u32) -> Value {
    let [(k, v)] = at(minute);
    sandbox.tick("giveup-converge", &[(k, v.as_str())])
}

#[test]
fn a_restart_limit_gives_up_until_a_person_undamps_it() {
    let sandbox = Sandbox::new(&config_with_roots(&["giveup"]));
    // Two remediations within ten minutes are allowed; each changes nothing.
    for minute in [0, 1] {
        let t = tick_at(&sandbox, minute);
        assert_eq!(actions(&t), pairs(&[("poke", "ineffective")]), "{t}");
    }
    let counted = tick_at(&sandbox, 2);
    assert_eq!(actions(&counted), pairs(&[("poke", "given-up")]), "the third within 10m gives up: {counted}");
    assert_eq!(poke_runs(&sandbox), 2);
    let reason = outcome(&counted, "poke")["reason"].as_str().unwrap();
    assert!(reason.contains("2 remediations within 10m reached its restart limit"), "{reason}");
    assert!(reason.contains("chant operator undamp giveup-converge"), "{reason}");
    let entry = &counted["restarts"][0];
    assert_eq!(entry["givenUpAt"], counted["startedAt"], "{counted}");
    assert!(log(&counted).contains("given-up=1"), "{counted}");

    // It stays given up, on later ticks and past the window, and dispatches nothing more.
    let later = tick_at(&sandbox, 30);
    assert_eq!(actions(&later), pairs(&[("poke", "given-up")]));
    assert_eq!(later["restarts"][0]["givenUpAt"], counted["startedAt"], "the first give-up is kept");
    assert_eq!(poke_runs(&sandbox), 2);
    let [(k, v)] = at(30);
    let status = sandbox.stock(&["operator", "status", "--env", "giveup"], &[(k, v.as_str())]).code(0).stdout.clone();
    assert!(status.contains("health    : given-up"), "{status}");
    assert!(status.contains("poke gave up at 2026-03-02T10:02:00.000Z"), "{status}");

    // `tick --plan` says what the next tick would do: still given up...
    let plan_at = |minute: u32| {
        let [(k, v)] = at(minute);
        sandbox.project(&["tick", "giveup-converge", "--plan", "--json"], &[(k, v.as_str())]).code(0).json()
    };
    assert_eq!(actions(&plan_at(31)), pairs(&[("poke", "given-up")]));

    // A person undamps the rule: the next tick counts afresh and dispatches again, and the plan
    // says so before it runs (the person's fact taken into account, as the tick takes it).
    let [(k, v)] = at(31);
    let undamp =
        sandbox.project(&["operator", "undamp", "giveup-converge", "poke", "--actor", "ana"], &[(k, v.as_str())]);
    undamp.code(0);
    assert_eq!(actions(&plan_at(32)), pairs(&[("poke", "ran")]), "the plan after the undamp");
    let again = tick_at(&sandbox, 32);
    assert_eq!(actions(&again), pairs(&[("poke", "ineffective")]), "{again}");
    assert_eq!(again["restarts"][0]["at"], serde_json::json!(["2026-03-02T10:32:00.000Z"]), "{again}");
    assert!(again["restarts"][0].get("givenUpAt").is_none(), "{again}");
    assert_eq!(poke_runs(&sandbox), 3);

    // Counts age out of the window: two ticks eleven minutes apart never reach the limit.
    let spaced = tick_at(&sandbox, 43);
    assert_eq!(actions(&spaced), pairs(&[("poke", "ineffective")]), "{spaced}");
    assert_eq!(spaced["restarts"][0]["at"], serde_json::json!(["2026-03-02T10:43:00.000Z"]), "{spaced}");

    // `operator resume` restarts a rule that gave up too.
    tick_at(&sandbox, 44);
    assert_eq!(actions(&tick_at(&sandbox, 45)), pairs(&[("poke", "given-up")]));
    let [(k, v)] = at(46);
    sandbox.project(&["operator", "resume", "giveup-converge"], &[(k, v.as_str())]).code(0);
    assert_eq!(actions(&tick_at(&sandbox, 47)), pairs(&[("poke", "ineffective")]));
}

/// Who a decision names when nobody said: `--actor`, else `$USER`, else the repository's git
/// identity (a shell without `$USER` no longer records "unknown").
#[test]
fn a_decision_without_actor_or_user_names_the_git_identity() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.run_in("git", &sandbox.dir, &["config", "user.name", "Dana Ops"], &[]).code(0);
    let no_user = [("USER", "")];
    let out = sandbox.project(&["operator", "suspend", "site-converge", "--reason", "freeze"], &no_user);
    assert!(out.code(0).stdout.contains("suspended site-converge by Dana Ops"), "{}", out.all());
    let out = sandbox.project(&["operator", "resume", "site-converge"], &[]);
    assert!(out.code(0).stdout.contains("resumed site-converge"), "{}", out.all());
    let log = sandbox.project(&["operator", "log", "--op", "site-converge"], &[]);
    let log = &log.code(0).stdout;
    assert!(log.contains("suspended: freeze by Dana Ops"), "{log}");
    assert!(log.contains("resumed by e2e-user"), "$USER comes before the git identity: {log}");
    let out = sandbox.project(&["operator", "suspend", "site-converge", "--reason", "x", "--actor", "ana"], &no_user);
    assert!(out.code(0).stdout.contains("by ana"), "--actor comes first: {}", out.all());
}
