//! `operator log --follow` (#16): after the timeline it prints each entry another process
//! appends, as it lands, and ends quietly with exit 0 on SIGINT or a closed stdout.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::operator::Running;
use crate::support::{PROJECT, STOCK, Sandbox, config_with_roots};

fn is_tick_line(line: &str) -> bool {
    line.contains("  site-converge@site  [") && line.contains("converge(site): ")
}

#[test]
fn follow_prints_an_entry_appended_by_another_process_and_ends_quietly_on_sigint() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    let mut follow = Running::start(&sandbox, STOCK, &sandbox.dir, &["operator", "log", "--follow"], &[]);
    follow.wait_for("the recorded tick", is_tick_line);
    // Another process appends a tick; the follower prints it without being asked again.
    let second = sandbox.tick("site-converge", &[]);
    let id = &second["id"].as_str().unwrap()[..8];
    follow.wait_for("the appended tick", |l| is_tick_line(l) && l.contains(&format!("[{id}]")));
    follow.signal(&sandbox, "INT");
    let (code, lines) = follow.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    let ticks: Vec<&String> = lines.iter().filter(|l| is_tick_line(l)).collect();
    assert_eq!(ticks.len(), 2, "each entry once:\n{}", lines.join("\n"));
    assert!(lines.iter().all(|l| !l.starts_with("error") && !l.contains("panicked")), "{}", lines.join("\n"));

    // --json: one entry per line, each a JSON object.
    let mut json = Running::start(&sandbox, PROJECT, &sandbox.dir, &["operator", "log", "-f", "--json"], &[]);
    json.wait_for("the second entry", |l| l.contains(&format!("\"id\":\"{}", second["id"].as_str().unwrap())));
    let third = sandbox.tick("site-converge", &[]);
    let line = json.wait_for("the third entry", |l| l.contains(third["id"].as_str().unwrap()));
    let entry: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!((&entry["kind"], &entry["op"]), (&serde_json::json!("tick"), &serde_json::json!("site-converge")));
    json.signal(&sandbox, "TERM");
    assert_eq!(json.finish().0, 0);
}

#[test]
fn follow_on_a_closed_stdout_ends_with_exit_0_and_says_nothing() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    let mut child = sandbox
        .command(STOCK, &sandbox.dir, &["operator", "log", "--follow"], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    // The first write (the recorded tick, or the next one appended) meets the closed pipe.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "follow kept running on a closed stdout");
        sandbox.tick("site-converge", &[]);
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "said something on a closed stdout");
}
