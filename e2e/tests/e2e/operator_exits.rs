//! Cron and CI notice trouble: `operator --once` exits 1 when any op's line is `failed=` or
//! `error=`, and a configured remote that cannot be reached is said once per round and shown by
//! `operator status` (`remote: unreachable since <time> (<first line of the error>)`) until it
//! answers again.

use super::support::{Sandbox, config_with_roots};

const TEN: &str = "2026-03-01T10:00:00.000Z";
const ELEVEN: &str = "2026-03-01T11:00:00.000Z";

/// The lines of `text` that start with `prefix`.
fn lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn an_unreachable_remote_fails_once_is_said_once_per_round_and_shown_by_status_until_it_answers() {
    let sandbox = Sandbox::new(&format!("{}\n[ledger]\nremote = \"origin\"\n", config_with_roots(&["site"])));
    let bare = sandbox.root().join("remote.git");
    sandbox.git(&sandbox.dir, &["remote", "add", "origin", bare.to_str().unwrap()]);

    for now in [TEN, ELEVEN] {
        let out = sandbox.project(&["operator", "--once", "--env", "site"], &[("CHANT_NOW", now)]);
        out.code(1);
        let op = lines(&out.stdout, "operator: site-converge@site ");
        assert_eq!(op.len(), 1, "{}", out.all());
        assert!(op[0].starts_with("operator: site-converge@site error=1(lease acquire failed — "), "{}", out.all());
        let said = lines(&out.stderr, "operator: remote origin: unreachable since ");
        assert_eq!(said.len(), 1, "once per round:\n{}", out.all());
        assert!(said[0].starts_with(&format!("operator: remote origin: unreachable since {TEN} (")), "{}", said[0]);
        assert!(said[0].contains("does not appear to be a git repository"), "{}", said[0]);
    }
    let status = sandbox.project(&["operator", "status"], &[("CHANT_NOW", ELEVEN)]);
    status.code(0);
    let first = status.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("remote: unreachable since {TEN} (")), "{}", status.all());
    let json = sandbox.project(&["operator", "status", "--json"], &[]).code(0).json();
    assert_eq!(json["remote"]["name"], "origin");
    assert_eq!(json["remote"]["reachable"], false);
    assert_eq!(json["remote"]["unreachableSince"], TEN);

    // The remote appears: the next round ticks, says nothing of it, and status shows it reachable.
    sandbox.git(sandbox.root(), &["init", "-q", "--bare", bare.to_str().unwrap()]);
    let out = sandbox.project(&["operator", "--once", "--env", "site"], &[("CHANT_NOW", "2026-03-01T12:00:00.000Z")]);
    out.code(0);
    assert!(
        out.stdout.contains("operator: site-converge@site ticked=1 status=healed(ran first-apply -> site-apply)"),
        "{}",
        out.all()
    );
    assert!(lines(&out.stderr, "operator: remote ").is_empty(), "{}", out.all());
    let json = sandbox.project(&["operator", "status", "--json"], &[]).code(0).json();
    assert_eq!(json["remote"]["reachable"], true, "{json}");
    assert!(!sandbox.project(&["operator", "status"], &[]).stdout.contains("remote: unreachable"));
}

#[test]
fn without_a_remote_status_says_nothing_of_one() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["operator", "--once", "--env", "site"], &[]).code(0);
    let json = sandbox.project(&["operator", "status", "--json"], &[]).code(0).json();
    assert!(json.get("remote").is_none(), "{json}");
}

#[test]
fn an_env_no_converge_op_ticks_is_a_usage_error_naming_the_envs_that_have_them() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["operator", "--once", "--env", "stie"], &[]);
    out.code(2);
    assert!(
        out.stderr.contains("no ConvergeOp of this binary ticks env `stie`; did you mean `site`?"),
        "{}",
        out.all()
    );
    assert!(out.stderr.contains("envs with ConvergeOps: ") && out.stderr.contains("site"), "{}", out.all());
    assert_eq!(sandbox.tip(), None, "nothing was recorded");
}
