//! A quiet operator (#16): left running over an estate in sync it prints nothing on stdout but
//! heartbeats; an edit of a declared file gives one line naming what ran, and the recovery one
//! more. Its notes (the banner, the change-signal subscription) are on stderr.

use super::operator::Running;
use crate::support::{PROJECT, Sandbox, config_with_roots};

fn is_heartbeat(line: &str) -> bool {
    line.starts_with("operator: heartbeat: ") && line.contains(" round(s) in ")
}

#[test]
fn a_quiet_operator_prints_only_heartbeats_while_idle_and_a_line_when_a_declared_file_is_edited() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let args = ["operator", "--env", "site", "--interval", "200ms", "--heartbeat", "1s"];
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &[]);
    daemon
        .wait_for("the subscription", |l| l == "operator: files(site) change signal subscribed (the timer still runs)");
    // An idle period of three heartbeats: every round ticks the in-sync op, none says so.
    // (A heartbeat read while waiting for the stderr note above is kept in `stdout` too.)
    while daemon.stdout.len() < 3 {
        daemon.wait_for("a heartbeat", is_heartbeat);
    }
    let idle = daemon.stdout.clone();
    assert!(idle.len() >= 3, "only heartbeats on stdout while idle:\n{}", idle.join("\n"));
    assert!(idle.iter().all(|l| is_heartbeat(l) && l.ends_with("; 1 op(s): in-sync=1")), "{}", idle.join("\n"));
    assert!(
        daemon.seen.iter().any(|l| l.starts_with("chant operator: watching 1 ConvergeOp(s) every 200ms")),
        "{}",
        daemon.seen.join("\n")
    );
    let ticks = sandbox.values(&crate::support::converge_key("site", "site-converge"));
    assert!(ticks.len() >= 3, "the idle rounds did tick: {}", ticks.len());

    std::fs::write(sandbox.path("estates/site/motd.txt"), "edited by hand\n").unwrap();
    let drift = daemon.wait_for("the drift line", |l| l.starts_with("operator: site-converge@site "));
    assert_eq!(
        drift,
        "operator: site-converge@site ticked=1 status=healed(ran drift-apply -> site-apply) [files/motd.txt]"
    );
    let back = daemon.wait_for("the recovery line", |l| l.starts_with("operator: site-converge@site "));
    assert_eq!(back, "operator: site-converge@site ticked=1 status=in-sync");
    let stdout = daemon.stdout.clone();
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert!(stdout.iter().all(|l| is_heartbeat(l) || l.starts_with("operator: site-converge@site ")), "{stdout:?}");
}

#[test]
fn verbose_prints_every_round_and_once_prints_its_round() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let once = sandbox.project(&["operator", "--once", "--env", "site"], &[]);
    once.code(0);
    assert_eq!(once.stdout, "operator: site-converge@site ticked=1 status=in-sync\n", "{}", once.all());
    let args = ["operator", "-v", "--env", "site", "--interval", "100ms", "--heartbeat", "1h"];
    // The timer runs on a clock the test moves (starting now, after the `--once` tick above): a
    // round at the start, and one per move.
    let start = chant::clock::now().unwrap();
    let clock = chant::clock::ClockFile::create(sandbox.root().join("clock"), start).unwrap();
    let now = clock.var();
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &[("CHANT_NOW", &now)]);
    for n in 1..=3 {
        if n > 1 {
            clock.advance(std::time::Duration::from_millis(100)).unwrap();
        }
        daemon.wait_for(&format!("in-sync line {n}"), |l| l == "operator: site-converge@site ticked=1 status=in-sync");
    }
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let bad = sandbox.project(&["operator", "--heartbeat", "soon"], &[]);
    bad.code(2);
    assert!(bad.stderr.contains("--heartbeat"), "{}", bad.all());
}
