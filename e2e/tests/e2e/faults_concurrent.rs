//! Sixteen at once on one repository (issue #19, fault campaign): sixteen `operator --once`
//! rounds started together at each fire time tick every op exactly once, and sixteen hand ticks
//! started together each leave their record exactly once or say they met the lease held (a hand
//! tick is not held to the schedule, so several may tick the same instant one after another); the
//! repository stays sound (`git fsck --strict`) and every lease is released.

use std::collections::BTreeMap;
use std::path::Path;

use std::process::Stdio;

use super::operator::{assert_once_each, fire_time, mark_lines, marks_sandbox, once_together, ticks};
use super::support::{PROJECT, Sandbox};

const N: usize = 16;

fn sound(sandbox: &Sandbox) {
    sandbox.git(&sandbox.dir, &["fsck", "--strict", "--no-dangling", "--no-progress"]);
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "", "a lease was left held");
}

#[test]
fn sixteen_once_rounds_at_once_tick_each_op_exactly_once_per_fire_time() {
    let (sandbox, marks) = marks_sandbox();
    let dirs: Vec<&Path> = vec![&sandbox.dir; N];
    let rounds = 3;
    for i in 0..rounds {
        let now = fire_time(i);
        let results = once_together(&sandbox, &dirs, &now, &marks);
        assert_once_each(&results, &now);
    }
    for (op, hit) in [("mark-sched", "mark-sched-hit"), ("mark-loop", "mark-loop-hit")] {
        let records = ticks(&sandbox, &sandbox.dir, op);
        let started: Vec<&str> = records.iter().map(|r| r["startedAt"].as_str().unwrap()).collect();
        assert_eq!(started, (0..rounds).map(fire_time).collect::<Vec<_>>(), "{op}: one record per fire time");
        assert_eq!(mark_lines(&marks, hit).len(), rounds, "{op}: one dispatch per fire time");
    }
    sound(&sandbox);
}

#[test]
fn sixteen_hand_ticks_at_once_each_leave_their_record_exactly_once() {
    let (sandbox, marks) = marks_sandbox();
    let now = fire_time(0);
    let vars = [("CHANT_NOW", now.as_str()), ("E2E_MARKS", marks.as_str())];
    // All sixteen are started before any is waited for.
    let children: Vec<std::process::Child> = (0..N)
        .map(|_| {
            let mut cmd = sandbox.command(PROJECT, &sandbox.dir, &["tick", "mark-loop"], &vars);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let results: Vec<(i32, Vec<String>)> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            (out.status.code().unwrap_or(-1), text.lines().map(str::to_owned).collect())
        })
        .collect();
    let skipped = |lines: &[String]| lines.iter().any(|l| l.starts_with("skipped (lease held by "));
    let ticked = results.iter().filter(|(code, lines)| *code == 0 && !skipped(lines)).count();
    for (code, lines) in &results {
        // One that met the lease held says so and exits 0; nothing fails.
        assert_eq!(*code, 0, "a hand tick failed:\n{}", lines.join("\n"));
    }
    assert!(ticked >= 1, "no hand tick took the lease");
    let records = ticks(&sandbox, &sandbox.dir, "mark-loop");
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &records {
        *ids.entry(r["id"].as_str().unwrap()).or_default() += 1;
    }
    assert!(ids.values().all(|&n| n == 1), "a record is on the ledger twice: {ids:?}");
    assert_eq!(records.len(), ticked, "one record per hand tick that exited 0");
    assert_eq!(mark_lines(&marks, "mark-loop-hit").len(), ticked, "one dispatch per tick");
    sound(&sandbox);
}
