//! The fence of a hand tick, through real processes: `tick` runs as a child whose first dispatch
//! blocks; while it waits, other processes (`git hash-object` and `git update-ref`, as a peer
//! that took over after this holder stalled) overwrite the ConvergeOp's lease; then the
//! dispatch is let go. The tick must check its lease before its next dispatch, make none, and
//! record `fenced: true`, leaving the peer's lease alone.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::operator::{Running, foreign_lease, sandbox_with_marks};
use crate::support::{PROJECT, converge_key, run_key};

/// The bound on waiting for the blocked dispatch to start.
const BOUND: Duration = Duration::from_secs(120);

#[test]
fn a_hand_tick_whose_lease_is_stolen_mid_tick_dispatches_nothing_after_the_theft() {
    let (sandbox, marks) = sandbox_with_marks();
    let marks_dir = Path::new(&marks);
    let vars = [("E2E_MARKS", marks.as_str())];
    let tick = Running::start(&sandbox, PROJECT, &sandbox.dir, &["tick", "relay-converge", "--json"], &vars);

    // The first dispatch runs (and blocks) under the tick's own lease.
    let deadline = Instant::now() + BOUND;
    while !marks_dir.join("relay-started").exists() {
        assert!(Instant::now() < deadline, "the first dispatch never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let lease_ref = "refs/chant/lease/relay-converge";
    let ours = sandbox.git(&sandbox.dir, &["cat-file", "-p", lease_ref]);
    assert!(!ours.contains("thief"), "{ours}");

    // Another process takes the lease; then the blocked dispatch is let go.
    foreign_lease(&sandbox, "relay-converge");
    std::fs::write(marks_dir.join("relay-go"), "").unwrap();
    let (code, lines) = tick.finish();
    let stderr = lines.join("\n");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("fenced: the lease was lost mid-tick (now held by thief:1:00000000)"), "{stderr}");

    assert!(!marks_dir.join("relay-after").exists(), "the dispatch after the theft ran");
    assert_eq!(sandbox.values(&run_key("relay", "relay-after")).len(), 0, "no run of relay-after was recorded");
    assert_eq!(sandbox.values(&run_key("relay", "relay-wait")).len(), 1);

    let records = sandbox.values(&converge_key("relay", "relay-converge"));
    assert_eq!(records.len(), 1, "the fenced tick is still recorded");
    let record = &records[0];
    assert_eq!(record["fenced"], true, "{record}");
    assert_ne!(record["lease"]["holder"], "thief:1:00000000", "the record carries the lease it ran under");
    let outcomes = record["outcomes"].as_array().unwrap();
    assert_eq!((outcomes[0]["ruleId"].as_str(), outcomes[0]["action"].as_str()), (Some("wait"), Some("ineffective")));
    assert_eq!((outcomes[1]["ruleId"].as_str(), outcomes[1]["action"].as_str()), (Some("after"), Some("reported")));
    let reason = outcomes[1]["reason"].as_str().unwrap();
    assert!(reason.contains("\"relay-after\" was not dispatched") && reason.contains("thief:1:00000000"), "{reason}");
    assert!(outcomes[1].get("dispatchFailed").is_none(), "a fenced dispatch is not a failed one: {record}");
    assert!(record["log"].as_str().unwrap().contains("remediated=0 ineffective=1 reported=1"), "{record}");

    // The peer's lease is not the fenced tick's to release.
    let theirs = sandbox.git(&sandbox.dir, &["cat-file", "-p", lease_ref]);
    assert!(theirs.contains("\"token\":\"stolen\""), "{theirs}");
}
