//! Nothing acts that could not be recorded (issue #19, defect 6), through the real binaries: with
//! a stale lock on the ledger branch's ref, a tick dispatches nothing (the estate stays as it was)
//! and keeps its record outside the ledger, a hand run of a mutating op refuses to start, and once
//! the lock is removed the next write appends the kept record before its own.

use std::time::{Duration, SystemTime};

use super::support::{Sandbox, config_with_roots, converge_key, outcome};

#[test]
fn a_stale_ledger_lock_stops_every_dispatch_and_the_tick_record_is_kept_for_the_next_write() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let lock = sandbox.path(".git/refs/heads/chant/lifecycle.lock");
    std::fs::File::create(&lock).unwrap().set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
    let tip = sandbox.tip();
    let kept_dir = sandbox.path(".git/chant/pending");

    // The tick finds the env drifted, but the ledger cannot take a record: nothing is applied,
    // and the tick says where its record is kept and how to clear the lock.
    let blocked = sandbox.project(&["tick", "site-converge"], &[]);
    blocked.code(1);
    assert_eq!(sandbox.read("estates/site/app.conf"), "port = 1\n", "nothing was applied: {}", blocked.all());
    assert!(blocked.stderr.contains("it is kept in"), "{}", blocked.all());
    assert!(blocked.stderr.contains(&format!("rm {}", lock.display())), "{}", blocked.all());
    assert_eq!(sandbox.tip(), tip, "the branch did not move");
    assert_eq!(std::fs::read_dir(&kept_dir).unwrap().count(), 1, "one record kept");

    // A hand run of the mutating op refuses before it runs anything.
    let run = sandbox.project(&["run", "site-apply"], &[]);
    run.code(1);
    assert!(run.stderr.contains("nothing ran: the ledger cannot be written"), "{}", run.all());
    assert_eq!(sandbox.read("estates/site/app.conf"), "port = 1\n");

    // Once the lock is gone, the next tick appends the kept record first, then its own.
    std::fs::remove_file(&lock).unwrap();
    let next = sandbox.project(&["tick", "site-converge", "--json"], &[]);
    next.code(0);
    assert_eq!(sandbox.read("estates/site/app.conf"), chant_e2e::declaration::SITE_APP_CONF);
    let ticks = sandbox.values(&converge_key("site", "site-converge"));
    assert_eq!(ticks.len(), 3, "{ticks:?}");
    let kept = outcome(&ticks[1], "drift-apply");
    assert_eq!(kept["action"], "reported", "{kept}");
    assert!(kept["reason"].as_str().unwrap().contains("not dispatched: the ledger cannot be written"), "{kept}");
    assert_eq!(ticks[2]["id"], next.json()["id"]);
    assert_eq!(outcome(&ticks[2], "drift-apply")["action"], "ran");
    assert_eq!(std::fs::read_dir(&kept_dir).unwrap().count(), 0, "nothing left kept");
}
