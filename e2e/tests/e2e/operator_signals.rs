//! Change signals end to end: the operator watches the `site` env's files root with inotify.
//! A file edit wakes an ordinary round long before a 300 s timer; a storm of edits costs one
//! early round; removing the watched root degrades to the timer with one line; a round woken by a
//! signal reaches exactly the verdicts a round woken by the timer reaches; and a scheduled op
//! (`night-converge`, daily at 03:00) is due in the round a signal from its files root wakes,
//! whatever its cron, reaching the verdict its timer reaches at its fire time.

use serde_json::Value;

use super::operator::Running;
use crate::support::{PROJECT, Sandbox, config_with_roots, converge_key};

/// Starts `operator --env site` with `interval` and `vars`, and waits until it ticked once and
/// subscribed.
fn watching(sandbox: &Sandbox, interval: &str, vars: &[(&str, &str)]) -> Running {
    let mut daemon = Running::start(
        sandbox,
        PROJECT,
        &sandbox.dir,
        &["operator", "-v", "--env", "site", "--interval", interval],
        vars,
    );
    daemon.wait_for("the first tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    daemon.seen_or_wait_for("the subscription", |l| {
        l == "operator: files(site) change signal subscribed (the timer still runs)"
    });
    daemon
}

fn is_woken(line: &str) -> bool {
    line.starts_with("operator: woken by a change signal after ") && line.ends_with("ms, running an ordinary round")
}

fn count(lines: &[String], want: impl Fn(&str) -> bool) -> usize {
    lines.iter().filter(|l| want(l)).count()
}

#[test]
fn an_edit_wakes_an_ordinary_round_and_a_storm_costs_one() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let mut daemon = watching(&sandbox, "300s", &[]);
    let conf = sandbox.path("estates/site/app.conf");
    for n in 0..100 {
        std::fs::write(&conf, format!("port = {n}\n")).unwrap();
    }
    daemon.wait_for("the wake", is_woken);
    daemon.wait_for("the woken tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    assert_eq!(sandbox.read("estates/site/app.conf"), chant_e2e::declaration::SITE_APP_CONF, "converged");
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert_eq!(count(&lines, is_woken), 1, "100 edits, one early round:\n{}", lines.join("\n"));
    // The apply's own writes woke nothing: two ticks in all, the first and the woken one.
    assert_eq!(count(&lines, |l| l.starts_with("operator: site-converge@site ticked=1")), 2, "{}", lines.join("\n"));
    let ticks = sandbox.values(&converge_key("site", "site-converge"));
    assert!(ticks[1]["log"].as_str().unwrap().contains("drifted=1 remediated=1"), "{}", ticks[1]);
}

#[test]
fn removing_the_watched_root_degrades_to_the_timer_with_one_line() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    // The timer runs on a clock the test moves: each move of an interval is a timer round.
    let clock = clock_file(&sandbox);
    let now = clock.var();
    let mut daemon = watching(&sandbox, "2s", &[("CHANT_NOW", &now)]);
    std::fs::remove_dir_all(sandbox.path("estates/site")).unwrap();
    daemon
        .wait_for("the lost line", |l| l.starts_with("operator: files(site) change signal lost, polling on the timer"));
    // The timer keeps ticking: the next round restores the root and re-subscribes.
    clock.advance(std::time::Duration::from_secs(2)).unwrap();
    daemon.wait_for("a tick after the loss", |l| l.starts_with("operator: site-converge@site ticked=1"));
    clock.advance(std::time::Duration::from_secs(2)).unwrap();
    daemon.wait_for("another tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert_eq!(count(&lines, |l| l.contains("change signal lost")), 1, "{}", lines.join("\n"));
    assert!(sandbox.path("estates/site/app.conf").is_file());
}

/// What a tick concluded, without what differs between any two ticks (ids, times, lease).
fn verdict(tick: &Value) -> Value {
    let mut v = tick.clone();
    for k in ["id", "startedAt", "timestamp", "lease", "gitSha"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn a_round_woken_by_a_signal_and_one_woken_by_the_timer_reach_identical_verdicts() {
    let by_signal = Sandbox::new(&config_with_roots(&["site"]));
    let by_timer = Sandbox::new(&config_with_roots(&["site"]));
    let mut signalled = watching(&by_signal, "300s", &[]);
    // A signal wakes a round at once under any timer, so the round no signal woke is an
    // ordinary `--once` round, the one a timer starts: a first one in sync, then one after the edit.
    let once = ["operator", "--once", "--env", "site"];
    by_timer.project(&once, &[]).code(0);
    for sandbox in [&by_signal, &by_timer] {
        std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    }
    signalled.wait_for("the wake", is_woken);
    signalled.wait_for("the woken tick", |l| l.starts_with("operator: site-converge@site ticked=1"));
    by_timer.project(&once, &[]).code(0);
    signalled.signal(&by_signal, "TERM");
    let (code, lines) = signalled.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let key = converge_key("site", "site-converge");
    let signal_tick = by_signal.values(&key)[1].clone();
    let timer_tick = by_timer.values(&key)[1].clone();
    assert_eq!(verdict(&signal_tick), verdict(&timer_tick));
    assert!(signal_tick["log"].as_str().unwrap().contains("drifted=1 remediated=1"), "{signal_tick}");
}

/// The fixed clock of the scheduled-op tests: `night-converge` fires at 03:00, seventeen hours on.
const TEN_AM: &str = "2026-03-01T10:00:00.000Z";

/// A clock file under the sandbox standing at 10:00, for a daemon whose timer the test moves.
fn clock_file(sandbox: &Sandbox) -> chant::clock::ClockFile {
    chant::clock::ClockFile::create(sandbox.root().join("clock"), chant::clock::parse(TEN_AM).unwrap()).unwrap()
}

/// Starts `operator --env night` with `CHANT_NOW` at `now` (10:00, or a clock file standing at
/// 10:00) and waits until it ticked once and subscribed.
fn watching_night(sandbox: &Sandbox, interval: &str, now: &str) -> Running {
    let args = ["operator", "-v", "--env", "night", "--interval", interval];
    let mut daemon = Running::start(sandbox, PROJECT, &sandbox.dir, &args, &[("CHANT_NOW", now)]);
    daemon.wait_for("the first tick", |l| l.starts_with("operator: night-converge@night ticked=1"));
    daemon.seen_or_wait_for("the subscription", |l| {
        l == "operator: files(night) change signal subscribed (the timer still runs)"
    });
    daemon
}

#[test]
fn a_scheduled_op_woken_by_a_file_edit_ticks_before_its_fire_time() {
    let sandbox = Sandbox::new(&config_with_roots(&["night"]));
    // A 2 s timer on a clock the test moves: its rounds find the op not due (the next fire is at
    // 03:00), until the edit.
    let clock = clock_file(&sandbox);
    let mut daemon = watching_night(&sandbox, "2s", &clock.var());
    clock.advance(std::time::Duration::from_secs(2)).unwrap();
    daemon.wait_for("a timer round that keeps the cron", |l| {
        l == "operator: night-converge@night skipped=1(not-due:0 3 * * *)"
    });
    std::fs::write(sandbox.path("estates/night/night.conf"), "mode = \"loud\"\n").unwrap();
    daemon.wait_for("the woken tick", |l| l.starts_with("operator: night-converge@night ticked=1"));
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert_eq!(sandbox.read("estates/night/night.conf"), "mode = \"quiet\"\n", "restored at 10:00, not 03:00");
    let ticks = sandbox.values(&converge_key("night", "night-converge"));
    assert_eq!(ticks.len(), 2, "the first tick and the woken one:\n{}", lines.join("\n"));
    assert!(ticks[1]["log"].as_str().unwrap().contains("drifted=1 remediated=1"), "{}", ticks[1]);
    assert_eq!(ticks[1]["startedAt"], "2026-03-01T10:00:02.000Z", "long before the fire time");
}

#[test]
fn a_scheduled_op_woken_by_a_signal_reaches_the_verdict_its_timer_reaches_at_its_fire_time() {
    let by_signal = Sandbox::new(&config_with_roots(&["night"]));
    let by_timer = Sandbox::new(&config_with_roots(&["night"]));
    let mut signalled = watching_night(&by_signal, "300s", TEN_AM);
    // The timer's rounds: one at 10:00, and one past the next fire (03:00 the next day).
    by_timer.project(&["operator", "--once", "--env", "night"], &[("CHANT_NOW", TEN_AM)]).code(0);
    for sandbox in [&by_signal, &by_timer] {
        std::fs::write(sandbox.path("estates/night/night.conf"), "mode = \"loud\"\n").unwrap();
    }
    signalled.wait_for("the wake", is_woken);
    signalled.wait_for("the woken tick", |l| l.starts_with("operator: night-converge@night ticked=1"));
    signalled.signal(&by_signal, "TERM");
    let (code, lines) = signalled.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let fired =
        by_timer.project(&["operator", "--once", "--env", "night"], &[("CHANT_NOW", "2026-03-02T03:00:01.000Z")]);
    fired.code(0);
    assert!(fired.stdout.contains("operator: night-converge@night ticked=1"), "{}", fired.all());
    let key = converge_key("night", "night-converge");
    let (signal_tick, timer_tick) = (by_signal.values(&key)[1].clone(), by_timer.values(&key)[1].clone());
    assert_eq!(verdict(&signal_tick), verdict(&timer_tick));
    assert!(signal_tick["log"].as_str().unwrap().contains("drifted=1 remediated=1"), "{signal_tick}");
}
