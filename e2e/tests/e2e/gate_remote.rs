//! Gates across clones (issue #19, defect 1): two clones of one project share a real bare remote.
//! A resolution answers only the pending fact whose `runId` it copied, `approve` syncs with the
//! remote before it decides, and a stale resolution re-appended after a newer pending fact does
//! not admit the run that asked it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::support::{Out, PROJECT, Sandbox, config_with_roots, gate_key, with_bare_remote};

const OP: &str = "site-release";
const GATE: &str = "release";

/// The instant `minutes` after 2026-03-01T10:00:00Z (within the hour the gate's facts stand).
fn at(minutes: i64) -> String {
    format!("2026-03-01T10:{minutes:02}:00.000Z")
}

/// A project whose `chant.toml` names `origin`, a bare repository, and its clones.
pub(crate) struct Shared {
    pub(crate) sandbox: Sandbox,
    pub(crate) bare: PathBuf,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        let (sandbox, bare) = with_bare_remote(&["site"]);
        Shared { sandbox, bare }
    }

    fn clone(&self, name: &str) -> PathBuf {
        self.sandbox.git(self.sandbox.root(), &["clone", "-q", self.bare.to_str().unwrap(), name]);
        self.sandbox.root().join(name)
    }

    fn chant(&self, dir: &Path, minutes: i64, args: &[&str]) -> Out {
        self.sandbox.run_in(PROJECT, dir, args, &[("CHANT_NOW", &at(minutes))])
    }

    fn run(&self, dir: &Path, minutes: i64) -> Out {
        self.chant(dir, minutes, &["run", OP, "--json"])
    }

    fn approve(&self, dir: &Path, minutes: i64, extra: &[&str]) -> Out {
        let mut args = vec!["approve", OP, GATE];
        args.extend_from_slice(extra);
        self.chant(dir, minutes, &args)
    }

    /// Fetches and integrates the remote's ledger into `dir`'s, as any reader with `--fetch` does.
    fn fetch(&self, dir: &Path, minutes: i64) {
        self.chant(dir, minutes, &["operator", "status", "--fetch"]).code(0);
    }

    /// The gate facts on the remote, oldest first.
    fn remote_facts(&self) -> Vec<Value> {
        let prefix = format!("{}/", gate_key(OP).dir());
        self.sandbox
            .ledger_lines_of(&self.bare)
            .into_iter()
            .filter(|(path, _)| path.starts_with(&prefix))
            .map(|(_, line)| serde_json::from_str(&line).unwrap())
            .collect()
    }
}

fn kinds(facts: &[Value]) -> Vec<&str> {
    facts.iter().map(|f| f["kind"].as_str().unwrap()).collect()
}

#[test]
fn a_stale_approval_answers_only_the_request_it_saw() {
    let shared = Shared::new();
    let (a, b) = (shared.clone("a"), shared.clone("b"));

    // B's run reaches the gate (P1); A reads the ledger while P1 is the request standing.
    let first = shared.run(&b, 0);
    first.code(3);
    let p1 = first.json()["id"].as_str().unwrap().to_owned();
    shared.fetch(&a, 1);

    // B clears P1 and reaches the gate again (P2); A does not see it: the remote is away while A
    // approves, so A decides on its own copy (saying so) and keeps its resolution locally.
    shared.approve(&b, 2, &["--expire", "--actor", "bea"]).code(0);
    let second = shared.run(&b, 3);
    second.code(3);
    let p2 = second.json()["id"].as_str().unwrap().to_owned();
    let away = shared.bare.with_extension("away");
    std::fs::rename(&shared.bare, &away).unwrap();
    let stale = shared.approve(&a, 4, &["--actor", "alex"]);
    std::fs::rename(&away, &shared.bare).unwrap();
    stale.code(0);
    assert!(stale.stderr.contains("could not be synchronised"), "approve says it decided offline: {}", stale.all());
    assert!(stale.stdout.contains(&format!("run {p1}")), "{}", stale.all());

    // A's next sync re-appends its resolution after P2 on the remote.
    shared.fetch(&a, 5);
    let facts = shared.remote_facts();
    assert_eq!(kinds(&facts), ["pending", "expired", "pending", "resolution"]);
    assert_eq!((facts[0]["runId"].as_str(), facts[2]["runId"].as_str()), (Some(p1.as_str()), Some(p2.as_str())));
    assert_eq!(facts[3]["runId"], p1.as_str(), "the resolution carries the run it answered");

    // B sees the resolution, and its run still stops: nobody approved P2.
    shared.fetch(&b, 6);
    let blocked = shared.run(&b, 7);
    blocked.code(3);
    assert_eq!(blocked.json()["gate"]["since"], at(3), "P2 still stands, unanswered");
    let status = shared.chant(&b, 7, &["operator", "status"]);
    assert!(status.all().contains(GATE), "the gate is still shown pending: {}", status.all());

    // A clone that never read the ledger approves: approve syncs first, so it answers P2.
    let c = shared.clone("c");
    let fresh = shared.approve(&c, 8, &["--actor", "cyd"]);
    fresh.code(0);
    assert!(fresh.stdout.contains(&format!("run {p2}")), "{}", fresh.all());
    shared.fetch(&b, 9);
    let through = shared.run(&b, 10);
    through.code(0);
    assert_eq!(through.json()["outcomes"][0]["approvedBy"], "cyd");
}

/// `operator suspend` (issue #35, item 8): a fact on the ledger, honoured by every operator that
/// shares the remote. Clone A suspends `site-converge`; clone B's operator skips it, saying why
/// and who, and B's `operator status` shows it; a lapsed `--until` or `operator resume` (from
/// either clone) lets it tick again; a tick by hand still runs.
#[test]
fn a_suspension_recorded_in_one_clone_stops_the_operator_of_another() {
    let shared = Shared::new();
    let (a, b) = (shared.clone("a"), shared.clone("b"));
    let once = |dir: &Path, minutes: i64| shared.chant(dir, minutes, &["operator", "--once", "--env", "site"]);

    let out =
        shared.chant(&a, 0, &["operator", "suspend", "site-converge", "--reason", "db migration", "--actor", "ana"]);
    out.code(0);
    assert!(out.stdout.contains("suspended site-converge by ana (until `operator resume`)"), "{}", out.all());
    let skipped = once(&b, 1);
    skipped.code(0);
    assert!(
        skipped.stdout.contains("operator: site-converge@site skipped=1(suspended:db migration by ana)"),
        "{}",
        skipped.all()
    );
    let status = shared.chant(&b, 1, &["operator", "status"]);
    assert!(status.stdout.contains("  suspended : db migration (by ana at "), "{}", status.all());
    let site = |dir: &Path, minutes: i64| {
        let json = shared.chant(dir, minutes, &["operator", "status", "--json"]).code(0).json();
        json["ops"].as_array().unwrap().iter().find(|r| r["op"] == "site-converge").unwrap().clone()
    };
    assert_eq!(site(&b, 1)["suspended"]["reason"], "db migration");
    // The operator's log shows the decision, with who made it.
    let log = shared.chant(&b, 1, &["operator", "log", "--op", "site-converge"]);
    assert!(log.stdout.contains("site-converge@site  suspended: db migration by ana"), "{}", log.all());
    // A person's tick by hand still runs.
    shared.chant(&b, 2, &["tick", "site-converge"]).code(0);

    // Resumed from B: A's operator ticks it again.
    shared.chant(&b, 3, &["operator", "resume", "site-converge", "--actor", "bea"]).code(0);
    let ticked = once(&a, 4);
    ticked.code(0);
    assert!(ticked.stdout.contains("operator: site-converge@site ticked=1"), "{}", ticked.all());
    assert!(site(&a, 4).get("suspended").is_none());

    // A suspension with --until lapses by itself.
    shared.chant(&a, 5, &["operator", "suspend", "site-converge", "--reason", "freeze", "--until", "10m"]).code(0);
    assert!(once(&b, 6).stdout.contains("skipped=1(suspended:freeze, until 2026-03-01T10:15:00.000Z by "));
    assert!(once(&b, 16).stdout.contains("operator: site-converge@site ticked=1"));

    // Bad input: no such op, an empty reason, an --until in the past.
    let typo = shared.chant(&a, 17, &["operator", "suspend", "site-convrge", "--reason", "x"]);
    typo.code(2);
    assert!(typo.stderr.contains("did you mean site-converge?"), "{}", typo.all());
    shared.chant(&a, 17, &["operator", "suspend", "site-converge", "--reason", " "]).code(2);
    shared
        .chant(&a, 17, &["operator", "suspend", "site-converge", "--reason", "x", "--until", "2026-03-01T09:00:00Z"])
        .code(2);
}

#[test]
fn a_run_syncs_the_gate_ledger_before_deciding_and_says_once_when_it_cannot() {
    let shared = Shared::new();
    let (ci, laptop) = (shared.clone("ci"), shared.clone("laptop"));

    // CI's run reaches the gate; the laptop approves (approve syncs first and pushes).
    let asked = shared.run(&ci, 0);
    asked.code(3);
    assert!(!asked.stderr.contains("synchronised"), "a reachable remote is silent: {}", asked.stderr);
    shared.approve(&laptop, 1, &["--actor", "lee"]).code(0);

    // CI's next run, with no fetch in between, walks through on the laptop's approval.
    let through = shared.run(&ci, 2);
    through.code(0);
    assert_eq!(through.json()["outcomes"][0]["approvedBy"], "lee");
    assert_eq!(kinds(&shared.remote_facts()), ["pending", "resolution", "passed"], "no second request beside it");

    // The remote refuses the ledger branch (the lease still lands): the run decides on its own
    // copy and says so, once, however many records it could not push.
    let hook = shared.bare.join("hooks/update");
    std::fs::write(&hook, "#!/bin/sh\n[ \"$1\" != refs/heads/chant/lifecycle ] || { echo frozen >&2; exit 1; }\n")
        .unwrap();
    std::fs::set_permissions(&hook, <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755))
        .unwrap();
    let refused = shared.run(&ci, 3);
    refused.code(3);
    assert!(
        refused.stderr.contains("so the lease lapses on its own at 2026-03-01T10:08:00.000Z"),
        "{}",
        refused.stderr
    );
    // After that lease lapses, the next run finds the record it could not push still local.
    let offline = shared.run(&ci, 9);
    offline.code(3);
    let said = offline.stderr.matches("the gate ledger could not be synchronised with origin before deciding").count();
    assert_eq!(said, 1, "{}", offline.stderr);
}

#[test]
fn a_run_without_a_remote_decides_silently() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(0))]);
    out.code(3);
    assert!(!out.stderr.contains("synchronised"), "{}", out.stderr);
}
