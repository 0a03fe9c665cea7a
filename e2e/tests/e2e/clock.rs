//! A clock the test moves, across processes: the operator daemon runs with `CHANT_NOW=@<file>`
//! (a [`ClockFile`]), and every round reads the file again. Its timer runs on that clock, so the
//! test advances the clock instead of waiting: a scheduled op fires once the clock passes its
//! fire time, and a foreign lease expires once the clock passes its `expiresAt`, with no real
//! wait for either (the rounds come when the clock moves on by the interval, not before).

use std::time::Duration;

use chant::clock::ClockFile;

use super::operator::Running;
use crate::support::{PROJECT, Sandbox, config_with_roots, converge_key};

/// The test's start: `night-converge` (daily at 03:00) fires seventeen hours on.
const TEN_AM: &str = "2026-03-01T10:00:00Z";

/// A clock file under the sandbox, standing at `start`.
fn clock_at(sandbox: &Sandbox, start: &str) -> ClockFile {
    ClockFile::create(sandbox.root().join("clock"), chant::clock::parse(start).unwrap()).unwrap()
}

#[test]
fn a_scheduled_op_fires_when_the_test_advances_the_clock_past_its_fire_time() {
    let sandbox = Sandbox::new(&config_with_roots(&["night"]));
    let clock = clock_at(&sandbox, TEN_AM);
    let now = clock.var();
    let args = ["operator", "-v", "--env", "night", "--interval", "1m"];
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &[("CHANT_NOW", now.as_str())]);
    daemon.wait_for("the first tick", |l| l.starts_with("operator: night-converge@night ticked=1"));

    // A minute on: a round, and the op is not due (its next fire is at 03:00).
    clock.advance(Duration::from_secs(60)).unwrap();
    daemon.wait_for("a round that keeps the cron", |l| {
        l == "operator: night-converge@night skipped=1(not-due:0 3 * * *)"
    });

    // Past the fire time: the next round ticks it.
    clock.set(chant::clock::parse("2026-03-02T03:00:01Z").unwrap()).unwrap();
    daemon.wait_for("the scheduled tick", |l| l.starts_with("operator: night-converge@night ticked=1"));
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let rounds = lines.iter().filter(|l| l.starts_with("operator: night-converge@night ")).count();
    assert_eq!(rounds, 3, "one round at the start and one per move of the clock:\n{}", lines.join("\n"));
    let ticks = sandbox.values(&converge_key("night", "night-converge"));
    let started: Vec<&str> = ticks.iter().map(|t| t["startedAt"].as_str().unwrap()).collect();
    assert_eq!(started, ["2026-03-01T10:00:00.000Z", "2026-03-02T03:00:01.000Z"], "dated by the test's clock");
}

/// Points `op`'s lease ref at a foreign holder's blob claiming it until `expires_at`, through
/// `git` processes of its own.
fn foreign_lease_until(sandbox: &Sandbox, op: &str, expires_at: &str) {
    let record = format!(
        r#"{{"op":"{op}","holder":"thief:1:00000000","token":"stolen","acquiredAt":"2026-03-01T09:55:00.000Z","expiresAt":"{expires_at}"}}"#
    );
    let blob_file = sandbox.root().join("lease.json");
    std::fs::write(&blob_file, record).unwrap();
    let blob = sandbox.git(&sandbox.dir, &["hash-object", "-w", blob_file.to_str().unwrap()]);
    sandbox.git(&sandbox.dir, &["update-ref", &format!("refs/chant/lease/{op}"), blob.trim()]);
}

#[test]
fn a_foreign_lease_expires_when_the_test_advances_the_clock_past_its_expiry() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let clock = clock_at(&sandbox, TEN_AM);
    foreign_lease_until(&sandbox, "site-converge", "2026-03-01T10:10:00.000Z");
    let now = clock.var();
    let args = ["operator", "-v", "--env", "site", "--interval", "1m", "--lease-ttl", "5m"];
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &[("CHANT_NOW", now.as_str())]);
    let held = |l: &str| l.starts_with("operator: site-converge@site skipped=1(lease-held");
    daemon.wait_for("the lease held at 10:00", held);

    // At 10:05 the thief's lease is still live.
    clock.advance(Duration::from_secs(300)).unwrap();
    daemon.wait_for("the lease held at 10:05", held);
    // At 10:11 it has expired: the daemon takes it and ticks.
    clock.advance(Duration::from_secs(360)).unwrap();
    daemon.wait_for("the tick once it expired", |l| l.starts_with("operator: site-converge@site ticked=1"));
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let ticks = sandbox.values(&converge_key("site", "site-converge"));
    assert_eq!(ticks.len(), 1, "{}", lines.join("\n"));
    assert_eq!(ticks[0]["startedAt"], "2026-03-01T10:11:00.000Z", "{}", ticks[0]);
    assert_ne!(ticks[0]["lease"]["holder"], "thief:1:00000000", "{}", ticks[0]);
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "", "released at the stop");
}
