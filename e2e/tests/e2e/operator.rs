//! The operator end to end: `operator --once` processes started together (in one clone and
//! across two clones of one bare remote), daemons killed with SIGKILL at random moments and
//! stopped with SIGTERM, leftover lock files, a lease stolen mid-tick, and the hand tick and
//! run leases. Every child is a real process; every wait is bounded; nothing sleeps to let
//! something happen (a kill at a random moment is the one deliberate pause).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::support::{PROJECT, Sandbox, config_with_roots, converge_key};

/// The generous bound on anything that could hang.
const BOUND: Duration = Duration::from_secs(120);

/// A child whose stdout and stderr are read line by line as it runs, into one sequence (the
/// operator's op lines and heartbeats on stdout, its notes on stderr).
pub(crate) struct Running {
    child: Child,
    lines: Receiver<(bool, String)>,
    /// Every line seen so far, of either stream.
    pub(crate) seen: Vec<String>,
    /// The lines of `seen` that came on stdout.
    pub(crate) stdout: Vec<String>,
}

impl Running {
    /// Starts `program` in `dir` with `args` and `vars`.
    pub(crate) fn start(sandbox: &Sandbox, program: &str, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Running {
        let mut cmd = sandbox.command(program, dir, args, vars);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let stderr: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for (is_stdout, stream) in [(true, stdout), (false, stderr)] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send((is_stdout, line)).is_err() {
                        break;
                    }
                }
            });
        }
        Running { child, lines, seen: Vec::new(), stdout: Vec::new() }
    }

    /// Waits (bounded) for a line matching `want` and returns it.
    #[track_caller]
    pub(crate) fn wait_for(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = want(&line.1);
                    let text = line.1.clone();
                    self.keep(line);
                    if hit {
                        return text;
                    }
                }
                Err(_) => panic!("no line {what} within {BOUND:?}; seen:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Returns a line already seen that matches `want`, or waits (bounded) for one. For a line of
    /// one stream awaited after a line of the other: the two pipes are read by two threads, so a
    /// stderr note printed after a stdout line may be read before it.
    #[track_caller]
    pub(crate) fn seen_or_wait_for(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        match self.seen.iter().find(|l| want(l)) {
            Some(line) => line.clone(),
            None => self.wait_for(what, want),
        }
    }

    /// Sends `signal` (`TERM`, `INT`) through the `kill` program.
    pub(crate) fn signal(&self, sandbox: &Sandbox, signal: &str) {
        let pid = self.child.id().to_string();
        let out = sandbox.run_in("kill", sandbox.root(), &[&format!("-{signal}"), &pid], &[]);
        assert_eq!(out.code, 0, "kill -{signal} {pid}: {}", out.stderr);
    }

    /// Kills the child with SIGKILL and reaps it.
    pub(crate) fn kill9(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.drain();
        self.seen
    }

    /// Waits (bounded) for the child to exit; returns its exit code and every line.
    #[track_caller]
    pub(crate) fn finish(mut self) -> (i32, Vec<String>) {
        let deadline = Instant::now() + BOUND;
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code().unwrap_or(-1);
            }
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => self.keep(line),
                Err(_) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("the child did not exit within {BOUND:?}; seen:\n{}", self.seen.join("\n"));
                }
                Err(_) => {}
            }
        };
        self.drain();
        (code, self.seen)
    }

    fn drain(&mut self) {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.keep(line);
        }
    }

    fn keep(&mut self, (is_stdout, line): (bool, String)) {
        if is_stdout {
            self.stdout.push(line.clone());
        }
        self.seen.push(line);
    }
}

/// The `marks` sandbox: a project whose `E2E_MARKS` directory collects dispatch side effects.
pub(crate) fn marks_sandbox() -> (Sandbox, String) {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let marks = sandbox.root().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let marks = marks.display().to_string();
    (sandbox, marks)
}

/// The lines of a side-effect file (empty when it does not exist).
pub(crate) fn mark_lines(marks: &str, op: &str) -> Vec<String> {
    std::fs::read_to_string(Path::new(marks).join(op)).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// The fire time `i` steps of ten minutes after a fixed base.
pub(crate) fn fire_time(i: usize) -> String {
    assert!(i < 144, "one day of fire times");
    format!("2026-03-02T{:02}:{:02}:00.000Z", (10 * i) / 60, (10 * i) % 60)
}

/// Counts, per op of `marks`, the `ticked=1` lines and the lines of any other outcome.
fn outcome_lines(lines: &[String], op: &str) -> (usize, Vec<String>) {
    let prefix = format!("operator: {op}@marks ");
    // Warnings (a record kept locally until the next push) are not outcomes.
    let mine: Vec<&String> = lines.iter().filter(|l| l.starts_with(&prefix) && !l.contains(" warning: ")).collect();
    // A mark op's tick always finds its marker drifted and runs its hit op.
    let ticked_line = |l: &str| {
        l.ends_with(&format!("ticked=1 status=degraded(mark [r] -> {op}-hit ran and did not remove its symptom)"))
    };
    let ticked = mine.iter().filter(|l| ticked_line(l)).count();
    let other = mine.iter().filter(|l| !ticked_line(l)).map(|l| (*l).clone()).collect();
    (ticked, other)
}

/// Starts `n` `operator --once --env marks` processes in `dir` at once and returns each one's
/// exit code and stderr.
pub(crate) fn once_together(sandbox: &Sandbox, dirs: &[&Path], now: &str, marks: &str) -> Vec<(i32, Vec<String>)> {
    let vars = [("CHANT_NOW", now), ("E2E_MARKS", marks)];
    let running: Vec<Running> = dirs
        .iter()
        .map(|d| Running::start(sandbox, PROJECT, d, &["operator", "--once", "--env", "marks"], &vars))
        .collect();
    running.into_iter().map(Running::finish).collect()
}

/// Checks one fire time's processes: each op ticked exactly once, every other process skipped.
#[track_caller]
pub(crate) fn assert_once_each(results: &[(i32, Vec<String>)], now: &str) {
    let all: Vec<String> = results.iter().flat_map(|(_, l)| l.iter().cloned()).collect();
    for (code, lines) in results {
        assert_eq!(*code, 0, "at {now}:\n{}", lines.join("\n"));
    }
    for op in ["mark-sched", "mark-loop"] {
        let (ticked, other) = outcome_lines(&all, op);
        assert_eq!(ticked, 1, "{op} at {now} ticked {ticked} times:\n{}", all.join("\n"));
        assert_eq!(other.len(), results.len() - 1, "{op} at {now}:\n{}", all.join("\n"));
        for line in other {
            assert!(line.contains(" skipped=1("), "{op} at {now}: {line}");
        }
    }
}

/// The tick records of `op` in `marks`, read from the ledger of `dir`.
pub(crate) fn ticks(sandbox: &Sandbox, dir: &Path, op: &str) -> Vec<Value> {
    sandbox.ledger_of(dir).read(&converge_key("marks", op)).unwrap().records.into_iter().map(|r| r.value).collect()
}

/// Gives `sandbox`'s project a real bare remote (`origin`, holding its `main`) and a second
/// clone of it with `config` as its `chant.toml`; returns the remote and the clone.
fn second_clone_of_a_bare_remote(sandbox: &Sandbox, config: &str) -> (PathBuf, PathBuf) {
    let bare = sandbox.root().join("remote.git");
    sandbox.git(sandbox.root(), &["init", "-q", "--bare", bare.to_str().unwrap()]);
    sandbox.git(&sandbox.dir, &["remote", "add", "origin", bare.to_str().unwrap()]);
    sandbox.git(&sandbox.dir, &["push", "-q", "origin", "main"]);
    let other = sandbox.root().join("other");
    sandbox.git(sandbox.root(), &["clone", "-q", bare.to_str().unwrap(), other.to_str().unwrap()]);
    std::fs::write(other.join("chant.toml"), config).unwrap();
    (bare, other)
}

#[test]
fn eight_once_processes_tick_each_op_exactly_once_per_fire_time() {
    let (sandbox, marks) = marks_sandbox();
    let dirs: Vec<&Path> = vec![&sandbox.dir; 8];
    let rounds = 50;
    for i in 0..rounds {
        let now = fire_time(i);
        let results = once_together(&sandbox, &dirs, &now, &marks);
        assert_once_each(&results, &now);
    }
    for (op, hit) in [("mark-sched", "mark-sched-hit"), ("mark-loop", "mark-loop-hit")] {
        let records = ticks(&sandbox, &sandbox.dir, op);
        assert_eq!(records.len(), rounds, "{op}: one record per fire time");
        let started: Vec<String> = records.iter().map(|r| r["startedAt"].as_str().unwrap().to_owned()).collect();
        assert_eq!(started, (0..rounds).map(fire_time).collect::<Vec<_>>(), "{op}: in fire-time order");
        let tokens: BTreeSet<&str> = records.iter().map(|r| r["lease"]["token"].as_str().unwrap()).collect();
        assert_eq!(tokens.len(), rounds, "{op}: every tick under its own acquisition's token");
        let side: Vec<String> =
            mark_lines(&marks, hit).iter().map(|l| l.split(' ').next().unwrap().to_owned()).collect();
        assert_eq!(side, (0..rounds).map(|i| format!("now={}", fire_time(i))).collect::<Vec<_>>(), "{op}");
    }
    // Every --once released what it held.
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "");
}

#[test]
fn once_processes_in_two_clones_of_one_remote_tick_each_op_exactly_once_per_fire_time() {
    let (sandbox, marks) = marks_sandbox();
    let config = format!("{}\n[ledger]\nremote = \"origin\"\n", config_with_roots(&["site"]));
    sandbox.write_config(&config);
    let (bare, other) = second_clone_of_a_bare_remote(&sandbox, &config);

    let dirs: Vec<&Path> = vec![&sandbox.dir, &other, &sandbox.dir, &other, &sandbox.dir, &other, &sandbox.dir, &other];
    let rounds = 15;
    for i in 0..rounds {
        let now = fire_time(i);
        let results = once_together(&sandbox, &dirs, &now, &marks);
        assert_once_each(&results, &now);
    }
    // Whatever a clone could not push yet, its next sync pushes; then the remote holds every tick.
    for dir in [&sandbox.dir, &other] {
        sandbox.ledger_of(dir);
        let ledger = chant::ledger::Ledger::open(
            dir,
            chant::ledger::LedgerConfig { remote: Some("origin".into()), ..sandbox.ledger_of(dir).config().clone() },
        )
        .unwrap();
        ledger.sync().unwrap();
    }
    for (op, hit) in [("mark-sched", "mark-sched-hit"), ("mark-loop", "mark-loop-hit")] {
        let records = ticks(&sandbox, &bare, op);
        assert_eq!(records.len(), rounds, "{op}: one record per fire time on the remote");
        let tokens: BTreeSet<&str> = records.iter().map(|r| r["lease"]["token"].as_str().unwrap()).collect();
        assert_eq!(tokens.len(), rounds, "{op}: every tick under its own acquisition");
        assert_eq!(mark_lines(&marks, hit).len(), rounds, "{op}: one dispatch per fire time");
    }
}

/// Every `*.lock` file under the repository's git directory.
fn lock_files(git_dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![git_dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "lock") {
                found.push(path);
            }
        }
    }
    found
}

/// Ages a file by a minute, as if the process that left it died long ago.
fn age(path: &Path) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
}

#[test]
fn a_daemon_killed_at_random_moments_leaves_a_sound_repository_and_is_taken_over() {
    // A campaign sets CHANT_FAULT_TRIALS.
    let trials = std::env::var("CHANT_FAULT_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let mut stale_locks_seen = 0;
    for trial in 0..trials {
        let (sandbox, marks) = marks_sandbox();
        let vars = [("E2E_MARKS", marks.as_str())];
        let daemon = Running::start(
            &sandbox,
            PROJECT,
            &sandbox.dir,
            &["operator", "--env", "marks", "--interval", "5ms", "--lease-ttl", "5m"],
            &vars,
        );
        // A pseudo-random moment between 0 and 600 ms: the kill lands during startup, lease
        // acquisition and renewal, dispatches and ledger appends, in different trials.
        let delay = (trial as u64 * 7919 + 13) % 600;
        std::thread::sleep(Duration::from_millis(delay));
        let lines = daemon.kill9();
        // The run it dispatched may still be finishing an append (it ends when its stdin pipe
        // closes): the repository is judged once no chant process of it is alive.
        crate::faults_liveness::quiesce(&sandbox.dir.join(".git"));

        let fsck = sandbox.git_out(&sandbox.dir, &["fsck", "--strict", "--no-progress"]);
        assert_eq!(fsck.code, 0, "trial {trial}: git fsck\n{}", fsck.all());
        let mut old_tokens = BTreeSet::new();
        for (op, hit) in [("mark-sched", "mark-sched-hit"), ("mark-loop", "mark-loop-hit")] {
            let records = ticks(&sandbox, &sandbox.dir, op);
            let (reported, _) = outcome_lines(&lines, op);
            assert!(
                records.len() >= reported,
                "trial {trial}: {op} printed {reported} ticks, recorded {}",
                records.len()
            );
            assert!(
                mark_lines(&marks, hit).len() >= records.len(),
                "trial {trial}: {op}: a record without its dispatch"
            );
            old_tokens.extend(records.iter().filter_map(|r| r["lease"]["token"].as_str().map(str::to_owned)));
        }
        for name in ["mark-sched", "mark-loop"] {
            let out = sandbox.git_out(&sandbox.dir, &["cat-file", "-p", &format!("refs/chant/lease/{name}")]);
            if out.code == 0 {
                let record: Value = serde_json::from_str(&out.stdout).unwrap();
                old_tokens.insert(record["token"].as_str().unwrap().to_owned());
            }
        }

        // The next operator runs long after the TTL has passed.
        let later = "2099-01-01T00:00:00.000Z";
        let vars = [("E2E_MARKS", marks.as_str()), ("CHANT_NOW", later)];
        let locks = lock_files(&sandbox.dir.join(".git"));
        // A round that reports a lock file may still tick the op the lock does not block; that op
        // is then taken over by this round (the next one, at the same fixed clock, finds it ticked).
        let mut lock_round = String::new();
        if !locks.is_empty() {
            stale_locks_seen += 1;
            for lock in &locks {
                age(lock);
            }
            let out = sandbox.project(&["operator", "--once", "--env", "marks"], &vars);
            for lock in &locks {
                let shown = lock.display().to_string();
                assert!(
                    out.all().contains(&format!("rm {shown}")),
                    "trial {trial}: {shown} not reported:\n{}",
                    out.all()
                );
                std::fs::remove_file(lock).unwrap();
            }
            lock_round = out.stdout.clone();
        }
        let out = sandbox.project(&["operator", "--once", "--env", "marks"], &vars);
        out.code(0);
        for op in ["mark-sched", "mark-loop"] {
            let ticked = format!(
                "operator: {op}@marks ticked=1 status=degraded(mark [r] -> {op}-hit ran and did not remove its symptom)"
            );
            assert!(
                out.stdout.contains(&ticked) || lock_round.contains(&ticked),
                "trial {trial}: {op} not taken over:\n{lock_round}\n{}",
                out.all()
            );
            let last = ticks(&sandbox, &sandbox.dir, op).pop().unwrap();
            let token = last["lease"]["token"].as_str().unwrap();
            assert!(!old_tokens.contains(token), "trial {trial}: {op} kept a killed holder's token");
        }
    }
    eprintln!("kill -9 trials: {trials}, with a lock file left behind: {stale_locks_seen}");
}

#[test]
fn sigterm_releases_the_leases_and_a_restart_ticks_at_once() {
    let (sandbox, marks) = marks_sandbox();
    let vars = [("E2E_MARKS", marks.as_str())];
    let mut daemon =
        Running::start(&sandbox, PROJECT, &sandbox.dir, &["operator", "--env", "marks", "--interval", "1h"], &vars);
    // Ops run in name order.
    daemon.wait_for("mark-loop ticked", |l| l.starts_with("operator: mark-loop@marks ticked=1"));
    daemon.wait_for("mark-sched ticked", |l| l.starts_with("operator: mark-sched@marks ticked=1"));
    assert_ne!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "", "the daemon holds its leases");
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert!(lines.iter().any(|l| l.contains("SIGTERM received")), "{}", lines.join("\n"));
    assert!(lines.iter().any(|l| l == "operator: stopped; released 2 lease(s)"), "{}", lines.join("\n"));
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "");

    let out = sandbox.project(&["operator", "--once", "--env", "marks"], &vars);
    out.code(0);
    assert!(
        out.stdout.contains("operator: mark-loop@marks ticked=1 status=degraded(mark [r] -> mark-loop-hit ran and did not remove its symptom)"),
        "{}",
        out.all()
    );
    assert!(!out.all().contains("lease-held"), "{}", out.all());
}

/// The command lines of the live processes whose command line mentions `needle`.
pub(crate) fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let zombie = stat.rfind(')').is_some_and(|at| stat[at + 1..].trim_start().starts_with('Z'));
        if cmdline.contains(needle) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

/// Starts a daemon (or `--once`) on `hold`, waits for its dispatch to block, stops it with
/// SIGTERM, and returns how it ended. The dispatch must end once the operator has exited: its
/// shell step (a loop that waits for a release file) is checked before the file is written.
fn stop_mid_tick(once: bool) -> (Sandbox, i32, Vec<String>) {
    let (sandbox, marks) = marks_sandbox();
    let vars = [("E2E_MARKS", marks.as_str())];
    let mut args = vec!["operator", "--env", "hold", "--grace", "1s", "--interval", "1h"];
    if once {
        args.push("--once");
    }
    let daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &vars);
    let started = Path::new(&marks).join("hold-started");
    let deadline = Instant::now() + BOUND;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the dispatch never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let needle = format!("{marks}/release");
    assert!(!processes_mentioning(&needle).is_empty(), "the dispatch's loop is not found by its command line");
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    // The dispatched run reads EOF once the operator is gone and stops its step's group (SIGTERM,
    // a grace, SIGKILL) before it exits: the loop ends without its release file.
    let deadline = Instant::now() + BOUND;
    let mut left = processes_mentioning(&needle);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = processes_mentioning(&needle);
    }
    std::fs::write(Path::new(&marks).join("release"), "").unwrap();
    assert_eq!(left, Vec::<String>::new(), "once={once}: the dispatch outlived the operator\n{}", lines.join("\n"));
    (sandbox, code, lines)
}

#[test]
fn a_stop_mid_tick_records_an_interrupted_tick_and_releases_the_lease() {
    for once in [false, true] {
        let (sandbox, code, lines) = stop_mid_tick(once);
        let text = lines.join("\n");
        assert_eq!(code, if once { 1 } else { 0 }, "once={once}\n{text}");
        assert!(text.contains("operator: hold-converge@hold interrupted=1("), "{text}");
        assert!(text.contains("released 1 lease(s)"), "{text}");
        let records = sandbox.values(&converge_key("hold", "hold-converge"));
        assert_eq!(records.len(), 1, "{records:?}");
        let error = records[0]["error"].as_str().unwrap();
        assert!(error.starts_with("interrupted: the operator was stopped (SIGTERM received)"), "{error}");
        assert!(records[0]["lease"]["token"].is_string());
        assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "");
    }
}

#[test]
fn a_second_stop_signal_ends_the_grace_at_once_and_stops_the_dispatch() {
    // A grace of an hour: only the second SIGTERM can end this stop in time.
    let (sandbox, marks) = marks_sandbox();
    let vars = [("E2E_MARKS", marks.as_str())];
    let args = ["operator", "--env", "hold", "--grace", "1h", "--interval", "1h"];
    let mut daemon = Running::start(&sandbox, PROJECT, &sandbox.dir, &args, &vars);
    let started = Path::new(&marks).join("hold-started");
    let deadline = Instant::now() + BOUND;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the dispatch never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let needle = format!("{marks}/release");
    daemon.signal(&sandbox, "TERM");
    daemon.wait_for("the stopping line", |l| l.contains("SIGTERM received — stopping: no new tick starts"));
    let again = Instant::now();
    daemon.signal(&sandbox, "TERM");
    let (code, lines) = daemon.finish();
    let took = again.elapsed();
    let text = lines.join("\n");
    assert!(took < Duration::from_secs(60), "the second SIGTERM took {took:?} to stop the operator:\n{text}");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("operator: SIGTERM received again — not waiting for the running tick any longer"), "{text}");
    assert!(text.contains("operator: hold-converge@hold interrupted=1("), "{text}");
    assert!(text.contains("released 1 lease(s)"), "{text}");
    let records = sandbox.values(&converge_key("hold", "hold-converge"));
    assert_eq!(records.len(), 1, "{records:?}");
    let error = records[0]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "interrupted: the operator was stopped (SIGTERM received) while this tick ran, and stopped again (SIGTERM \
         received) before it finished"
    );
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "");
    // The dispatch and its step end (SIGTERM to the groups the tick waited on), without the release file.
    let deadline = Instant::now() + BOUND;
    let mut left = processes_mentioning(&needle);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = processes_mentioning(&needle);
    }
    std::fs::write(Path::new(&marks).join("release"), "").unwrap();
    assert_eq!(left, Vec::<String>::new(), "the dispatch outlived the operator\n{text}");
}

#[test]
fn a_leftover_lock_is_reported_by_path_while_the_other_ops_tick() {
    let (sandbox, marks) = marks_sandbox();
    let lease_dir = sandbox.dir.join(".git/refs/chant/lease");
    std::fs::create_dir_all(&lease_dir).unwrap();
    let lock = lease_dir.join("mark-loop.lock");
    std::fs::write(&lock, "").unwrap();
    age(&lock);
    let vars = |now: &'static str| [("E2E_MARKS", marks.clone()), ("CHANT_NOW", now.to_owned())];
    let run = |now: &'static str| {
        let v = vars(now);
        let v: Vec<(&str, &str)> = v.iter().map(|(k, x)| (*k, x.as_str())).collect();
        sandbox.project(&["operator", "--once", "--env", "marks"], &v)
    };

    // A stale lease lock is an `error=` line: cron and CI see exit 1 (#15.4).
    let out = run("2026-03-02T00:00:00Z");
    out.code(1);
    let shown = lock.display().to_string();
    let line = out.stdout.lines().find(|l| l.starts_with("operator: mark-loop@marks ")).unwrap();
    assert!(line.starts_with("operator: mark-loop@marks error=1(lease acquire failed — "), "{line}");
    assert!(line.contains(&format!("stale lock file at {shown}")) && line.contains(&format!("rm {shown}")), "{line}");
    assert!(
        out.stdout.contains("operator: mark-sched@marks ticked=1 status=degraded(mark [r] -> mark-sched-hit ran and did not remove its symptom)"),
        "{}",
        out.all()
    );

    // A young lock is a lost race, not a stale lock.
    std::fs::OpenOptions::new().write(true).open(&lock).unwrap().set_modified(SystemTime::now()).unwrap();
    let out = run("2026-03-02T00:10:00Z");
    assert!(out.stdout.contains("operator: mark-loop@marks skipped=1(lease-held"), "{}", out.all());

    // After the human's rm, the next round acquires normally.
    std::fs::remove_file(&lock).unwrap();
    let out = run("2026-03-02T00:20:00Z");
    assert!(
        out.stdout.contains("operator: mark-loop@marks ticked=1 status=degraded(mark [r] -> mark-loop-hit ran and did not remove its symptom)"),
        "{}",
        out.all()
    );

    // A stale lock on the ledger branch fails the ticks (nothing could be recorded), naming it.
    let ledger_lock = sandbox.dir.join(".git/refs/heads/chant/lifecycle.lock");
    std::fs::write(&ledger_lock, "").unwrap();
    age(&ledger_lock);
    let out = run("2026-03-02T00:30:00Z");
    out.code(1);
    assert!(out.all().contains(&format!("rm {}", ledger_lock.display())), "{}", out.all());
    assert!(out.stdout.contains("operator: mark-loop@marks failed=1"), "{}", out.all());
    std::fs::remove_file(&ledger_lock).unwrap();
    run("2026-03-02T00:40:00Z").code(0);
}

#[test]
fn a_lease_stolen_mid_tick_is_fenced_and_the_record_still_written() {
    let (sandbox, marks) = marks_sandbox();
    let out = sandbox.project(&["operator", "--once", "--env", "steal"], &[("E2E_MARKS", &marks)]);
    out.code(0);
    assert!(
        out.stdout
            .contains("operator: steal-converge@steal fenced=1(lease lost mid-tick — ledger record still written)"),
        "{}",
        out.all()
    );
    let records = sandbox.values(&converge_key("steal", "steal-converge"));
    assert_eq!(records.len(), 1);
    assert_ne!(records[0]["lease"]["token"], "stolen");
    assert_eq!(records[0]["fenced"], true, "the fence before the append found the lease lost");
    // The thief's lease is not ours to release.
    let lease = sandbox.git(&sandbox.dir, &["cat-file", "-p", "refs/chant/lease/steal-converge"]);
    assert!(lease.contains("\"token\":\"stolen\""), "{lease}");
}

/// Writes a live foreign lease for `op`, as another machine's holder would (through `git`
/// processes of its own, never through this process's chant). It expires an hour from now: one
/// dated further ahead than the maximum lease TTL (24h) would be stale, and taken over.
pub(crate) fn foreign_lease(sandbox: &Sandbox, op: &str) {
    let until = chant::clock::now().unwrap().checked_add(std::time::Duration::from_secs(3600)).unwrap();
    let until = chant::clock::format(until);
    let record = format!(
        r#"{{"op":"{op}","holder":"thief:1:00000000","token":"stolen","acquiredAt":"2020-01-01T00:00:00.000Z","expiresAt":"{until}"}}"#
    );
    let blob_file = sandbox.root().join("lease.json");
    std::fs::write(&blob_file, record).unwrap();
    let blob = sandbox.git(&sandbox.dir, &["hash-object", "-w", blob_file.to_str().unwrap()]);
    sandbox.git(&sandbox.dir, &["update-ref", &format!("refs/chant/lease/{op}"), blob.trim()]);
}

#[test]
fn hand_ticks_and_runs_of_mutating_ops_take_the_lease() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    // Free: the tick takes the lease, records it, and releases it.
    let tick = sandbox.tick("site-converge", &[]);
    assert!(tick["lease"]["token"].is_string(), "{tick}");
    assert!(tick.get("fenced").is_none(), "`fenced` is absent while the lease holds: {tick}");
    assert_eq!(sandbox.git(&sandbox.dir, &["for-each-ref", "refs/chant/lease/"]), "");

    foreign_lease(&sandbox, "site-converge");
    let out = sandbox.project(&["tick", "site-converge"], &[]);
    out.code(0);
    assert_eq!(out.stdout.trim(), "skipped (lease held by thief:1:00000000)");
    assert_eq!(sandbox.values(&converge_key("site", "site-converge")).len(), 1, "nothing recorded");
    let out = sandbox.project(&["tick", "site-converge", "--no-lease", "--json"], &[]);
    out.code(0);
    assert!(out.json().get("lease").is_none());

    foreign_lease(&sandbox, "site-apply");
    let out = sandbox.project(&["run", "site-apply"], &[]);
    out.code(1);
    assert!(out.stderr.contains("lease held by thief:1:00000000"), "{}", out.all());
    // A read-only op takes no lease.
    sandbox.project(&["run", "site-ping"], &[]).code(0);
}

#[test]
fn the_stock_binary_refuses_to_run_the_operator() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.stock(&["operator", "--once"], &[]);
    out.code(2);
    assert!(out.stderr.contains("use the project's own binary"), "{}", out.all());
    for bad in [["--interval", "1.5h"], ["--lease-ttl", "5"], ["--interval", "0s"]] {
        let out = sandbox.project(&["operator", "--once", bad[0], bad[1]], &[]);
        out.code(2);
        assert!(out.stderr.contains(bad[0]), "{}", out.all());
    }
}

/// Runs the named ops' `--once` rounds at successive fire times and returns nothing; used to
/// put history on a ledger.
pub(crate) fn history(sandbox: &Sandbox, marks: &str, times: usize) -> BTreeMap<usize, String> {
    (0..times)
        .map(|i| {
            let now = fire_time(i);
            sandbox
                .project(&["operator", "--once", "--env", "marks"], &[("CHANT_NOW", &now), ("E2E_MARKS", marks)])
                .code(0);
            (i, now)
        })
        .collect()
}

/// A fresh marks sandbox, for the sibling modules.
pub(crate) fn sandbox_with_marks() -> (Sandbox, String) {
    marks_sandbox()
}

/// The project binary of the 200 trivial, unscheduled ConvergeOps of `e2e/src/bench_ops.rs`
/// (env `opbench`).
const BENCH_OPERATOR: &str = env!("CARGO_BIN_EXE_e2e-bench-operator");

/// The ops of `lines` with a line of a tick that wrote its record (`ticked=1`, or `fenced=1` and
/// `interrupted=1`, whose records are written too), and how many each.
fn ticked_ops(lines: &[String]) -> BTreeMap<String, usize> {
    let mut ticked = BTreeMap::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("operator: ")
            && let Some((op, outcome)) = rest.split_once("@opbench ")
            && ["ticked=1", "fenced=1", "interrupted=1"].iter().any(|o| outcome.starts_with(o))
        {
            *ticked.entry(op.to_owned()).or_insert(0) += 1;
        }
    }
    ticked
}

/// The op of a `given-back` line, with the peer it went to.
fn given_back(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("operator: ")?;
    let (op, outcome) = rest.split_once("@opbench ")?;
    let peer = outcome.strip_prefix("skipped=1(given-back:")?.strip_suffix(')')?;
    Some((op.to_owned(), peer.to_owned()))
}

#[test]
fn a_daemon_started_later_gets_its_share_from_one_holding_every_op_which_takes_it_back_at_its_stop() {
    let config = "[project]\nname = \"opbench\"\n\n[ledger]\nremote = \"origin\"\n";
    let sandbox = Sandbox::new(config);
    let (bare, other) = second_clone_of_a_bare_remote(&sandbox, config);
    let args = ["operator", "-v", "--interval", "1s"];
    let all = 200;

    // A starts alone and takes every op.
    let mut a = Running::start(&sandbox, BENCH_OPERATOR, &sandbox.dir, &args, &[]);
    while ticked_ops(&a.stdout).len() < all {
        a.wait_for("A's ticks of every op", |l| l.contains(" ticked=1"));
    }

    // B starts in the other clone: it sees every op held by A, announces itself, and A gives
    // B its share back; B claims and ticks it.
    let mut b = Running::start(&sandbox, BENCH_OPERATOR, &other, &args, &[]);
    b.wait_for("B's first tick", |l| l.contains(" ticked=1"));
    let line = a.seen_or_wait_for("A giving an op back", |l| given_back(l).is_some());
    let (op, peer) = given_back(&line).unwrap();
    assert!(peer.contains(':'), "given back to a holder id: {line}");

    // B stops and releases what it holds; A takes the ops back.
    b.signal(&sandbox, "TERM");
    let (code, b_lines) = b.finish();
    assert_eq!(code, 0, "{}", b_lines.join("\n"));
    assert!(
        b_lines.iter().any(|l| l.starts_with("operator: stopped; released ") && !l.contains("released 0 ")),
        "{}",
        b_lines.join("\n")
    );
    let ticked_again = |l: &str| l.starts_with(&format!("operator: {op}@opbench ticked=1"));
    let given_at = a.seen.iter().rposition(|l| l.starts_with(&format!("operator: {op}@opbench skipped=1(given-back:")));
    let already = given_at.is_some_and(|i| a.seen[i..].iter().any(|l| ticked_again(l)));
    if !already {
        a.wait_for("A ticking a given-back op again", ticked_again);
    }
    a.signal(&sandbox, "TERM");
    let (code, a_lines) = a.finish();
    assert_eq!(code, 0, "{}", a_lines.join("\n"));

    // Nothing was lost: after each clone's last sync, the remote holds one record per tick line
    // of either operator, and no lease (nor presence) is left anywhere.
    for dir in [&sandbox.dir, &other] {
        let ledger = chant::ledger::Ledger::open(
            dir,
            chant::ledger::LedgerConfig { remote: Some("origin".into()), ..sandbox.ledger_of(dir).config().clone() },
        )
        .unwrap();
        ledger.sync().unwrap();
    }
    // B ticked only what A gave it (A's leases never lapsed), and A said whom it gave them to.
    let given: BTreeSet<String> = a_lines.iter().filter_map(|l| given_back(l)).map(|(op, _)| op).collect();
    let b_ticked = ticked_ops(&b_lines);
    assert!(!b_ticked.is_empty() && b_ticked.keys().all(|op| given.contains(op)), "{b_ticked:?} vs {given:?}");
    for line in a_lines.iter().chain(&b_lines) {
        assert!(!line.contains(" failed=1 ") && !line.contains(" error=1("), "{line}");
    }
    let mut ticks = ticked_ops(&a_lines);
    for (op, n) in ticked_ops(&b_lines) {
        *ticks.entry(op).or_insert(0) += n;
    }
    assert_eq!(ticks.len(), all);
    for (op, n) in &ticks {
        let records = sandbox.ledger_of(&bare).read(&converge_key("opbench", op)).unwrap().records;
        assert_eq!(records.len(), *n, "{op}: one record on the remote per tick");
    }
    for dir in [&bare, &sandbox.dir, &other] {
        assert_eq!(sandbox.git(dir, &["for-each-ref", "refs/chant/lease/"]), "", "{}", dir.display());
    }
}

#[test]
fn an_operator_that_finds_every_op_ticked_at_this_fire_time_claims_no_lease() {
    let config = "[project]\nname = \"opbench\"\n\n[ledger]\nremote = \"origin\"\n";
    let sandbox = Sandbox::new(config);
    let (bare, other) = second_clone_of_a_bare_remote(&sandbox, config);
    // The remote logs every ref it commits, as `<old> <new> <ref>` lines.
    let updates = sandbox.root().join("ref-updates.log");
    let hook = bare.join("hooks/reference-transaction");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, format!("#!/bin/sh\n[ \"$1\" = committed ] || exit 0\ncat >> '{}'\n", updates.display()))
        .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let lease_updates = || -> Vec<String> {
        std::fs::read_to_string(&updates)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" refs/chant/lease/opb-"))
            .map(str::to_owned)
            .collect()
    };
    let now = [("CHANT_NOW", "2026-03-02T00:01:00.000Z")];
    let once = ["operator", "--once"];

    // A ticks every op at this fire time, pushes the records and releases the leases.
    let (code, a_lines) = Running::start(&sandbox, BENCH_OPERATOR, &sandbox.dir, &once, &now).finish();
    assert_eq!(code, 0, "{}", a_lines.join("\n"));
    assert_eq!(ticked_ops(&a_lines).len(), 200, "{}", a_lines.join("\n"));
    let after_a = lease_updates();
    assert!(after_a.len() >= 400, "A's claims and releases reached the remote: {after_a:?}");

    // B, in the other clone at the same fire time, reads from the ledger that every op ran: each
    // is not due, and B takes no lease to find that out.
    let (code, b_lines) = Running::start(&sandbox, BENCH_OPERATOR, &other, &once, &now).finish();
    assert_eq!(code, 0, "{}", b_lines.join("\n"));
    let skipped = b_lines.iter().filter(|l| l.contains(" skipped=1(not-due:")).count();
    assert_eq!(skipped, 200, "{}", b_lines.join("\n"));
    assert!(ticked_ops(&b_lines).is_empty(), "{}", b_lines.join("\n"));
    assert_eq!(lease_updates(), after_a, "B moved no op's lease on the remote");
}
