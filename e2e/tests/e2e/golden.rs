//! A ledger written before a change reads back identically after it: the golden fixture
//! `fixtures/ledger-golden/ledger.bundle` (made once by `make_ledger.sh` with the binaries of the
//! commit that added it) is fetched into a fresh repository and read by today's chant: the stock
//! binary's `operator status` and `operator log` (JSON and human), and the typed reads a tick,
//! a round, a run and an apply make. Each is compared byte for byte with what the chant that
//! wrote the ledger read from it (`fixtures/ledger-golden/expected/`). Every record chant wrote
//! also decodes into its type and encodes back to the very bytes on the ledger.
//!
//! After an intended change of a view, regenerate with
//! `CHANT_GOLDEN_REGEN=1 cargo test -p chant-e2e golden` and review the diff.

use std::path::PathBuf;

use chant::ledger::{RecordKind, ShardKey};
use serde_json::{Value, json};

use crate::support::{BRANCH, Out, Sandbox};

/// The instant every view is read at: after the fixture's last record, before its gates expire.
const NOW: &str = "2026-03-01T10:45:00Z";

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ledger-golden")
}

/// Compares `actual` with the stored expectation `name`, or stores it under `CHANT_GOLDEN_REGEN`.
#[track_caller]
fn check(name: &str, actual: &str) {
    let path = fixture_dir().join("expected").join(name);
    if std::env::var_os("CHANT_GOLDEN_REGEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if expected != actual {
        let first = expected.lines().zip(actual.lines()).position(|(a, b)| a != b);
        panic!(
            "{name} differs from what the chant that wrote the ledger read (first differing line: {first:?})\n--- expected\n{expected}\n--- actual\n{actual}"
        );
    }
}

/// A sandbox whose repository holds the fixture's ledger branch and nothing else of chant's.
fn golden_sandbox() -> Sandbox {
    let sandbox = Sandbox::new("[project]\nname = \"golden\"\n");
    let bundle = fixture_dir().join("ledger.bundle");
    let refspec = format!("{BRANCH}:{BRANCH}");
    sandbox.git(&sandbox.dir, &["fetch", "-q", bundle.to_str().unwrap(), &refspec]);
    sandbox
}

fn transcript(out: &Out) -> String {
    format!("exit {}\n--- stdout\n{}--- stderr\n{}", out.code, out.stdout, out.stderr)
}

#[test]
fn a_ledger_written_before_reads_back_identically_through_status_and_log() {
    let sandbox = golden_sandbox();
    let now = [("CHANT_NOW", NOW)];
    for (args, name) in [
        (&["operator", "status", "--json"][..], "status.json.txt"),
        (&["operator", "status"][..], "status.txt"),
        (&["operator", "log", "--json"][..], "log.json.txt"),
        (&["operator", "log"][..], "log.txt"),
        (&["operator", "log", "--op", "site-converge", "--limit", "3"][..], "log-site-limit.txt"),
    ] {
        let out = sandbox.stock(args, &now);
        out.code(0);
        check(name, &transcript(&out));
    }
}

/// The file a shard line's key kind is read from, by path: `None` for the original's files.
fn kind_of(path: &str) -> Option<RecordKind> {
    if path.ends_with("/converge.jsonl") || path.contains("runs__") {
        None
    } else if path.contains("/converge/") {
        Some(RecordKind::Converge)
    } else if path.contains("/runs/") {
        Some(RecordKind::Run)
    } else if path.starts_with("_gates/") {
        Some(RecordKind::Gate)
    } else if path.contains("/_apply/") {
        Some(RecordKind::Apply)
    } else if path.contains("/control/") {
        Some(RecordKind::Control)
    } else {
        None
    }
}

/// Decodes `line` as the record type of `kind` and encodes it again as chant writes it.
fn round_trip(kind: RecordKind, line: &str) -> String {
    fn again<R: chant::ledger::Record>(line: &str) -> String {
        chant::ledger::encode(&serde_json::from_str::<R>(line).unwrap()).unwrap()
    }
    match kind {
        RecordKind::Converge => again::<chant::tick::TickRecord>(line),
        RecordKind::Run => again::<chant::runner::RunRecord>(line),
        RecordKind::Gate => again::<chant::gate::GateFact>(line),
        RecordKind::Apply => again::<chant::lexicon::files::ApplyRecord>(line),
        RecordKind::Notify => again::<chant::notify::NotifyRecord>(line),
        RecordKind::Control => again::<chant::tick::undamp::UndampFact>(line),
    }
}

#[test]
fn every_record_chant_wrote_decodes_and_encodes_back_to_its_bytes() {
    let sandbox = golden_sandbox();
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (path, line) in sandbox.ledger_lines_of(&sandbox.dir) {
        let Some(kind) = kind_of(&path) else { continue };
        assert_eq!(round_trip(kind, &line), line, "{path}");
        *seen.entry(format!("{kind:?}")).or_default() += 1;
    }
    let kinds: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(kinds, ["Apply", "Converge", "Gate", "Run"], "every kind of record is in the fixture");
}

/// The typed reads a tick (its flap runs), a round (its last tick), a run (its gate facts) and an
/// apply (the last recorded apply) make, per key, as one JSON document.
fn typed_reads(sandbox: &Sandbox) -> Value {
    let ledger = sandbox.ledger_of(&sandbox.dir);
    let now = chant::clock::parse(NOW).unwrap();
    let mut keys = Vec::new();
    for key in ledger.keys().unwrap() {
        let records = ledger.read(&key).unwrap();
        let latest = ledger.latest(&key).unwrap();
        let read = match key.kind() {
            RecordKind::Converge => {
                let latest = ledger.latest_typed::<chant::tick::TickRecord>(&key).unwrap();
                let tick = latest.record.map(|stored| stored.record);
                let flap = tick.as_ref().map(|t| t.flap.clone()).unwrap_or_default();
                let last =
                    tick.as_ref().and_then(|t| chant::schedule::LastTick::from_stamps(&t.started_at, &t.timestamp));
                json!({
                    "flap": flap,
                    "lastTick": last.map(|l| json!({"startedAt": l.started_at.to_string(), "recordedAt": l.recorded_at.to_string()})),
                })
            }
            RecordKind::Run => {
                let runs = ledger.read_typed::<chant::runner::RunRecord>(&key).unwrap().records;
                let runs: Vec<Value> = runs
                    .iter()
                    .map(|s| &s.record)
                    .map(|r| json!({"id": r.id, "status": r.status, "gate": r.gate}))
                    .collect();
                json!({ "runs": runs })
            }
            RecordKind::Gate => {
                let facts: Vec<chant::gate::GateFact> =
                    ledger.read_typed(&key).unwrap().records.into_iter().map(|s| s.record).collect();
                let pending: Vec<Value> = chant::gate::pending(&facts, now)
                    .into_iter()
                    .map(|p| json!({"op": p.fact.op, "gate": p.fact.gate, "runId": p.fact.run_id}))
                    .collect();
                json!({ "facts": facts, "pending": pending })
            }
            RecordKind::Apply => {
                let last = ledger
                    .latest_typed::<chant::lexicon::files::ApplyRecord>(&key)
                    .unwrap()
                    .record
                    .map(|stored| stored.record);
                let applied = last.as_ref().map(|r| r.last_apply_for(&r.binding));
                json!({ "last": last, "lastApply": applied })
            }
            RecordKind::Notify => {
                let sent = ledger.read_typed::<chant::notify::NotifyRecord>(&key).unwrap().records;
                json!({ "notifications": sent.into_iter().map(|s| s.record).collect::<Vec<_>>() })
            }
            RecordKind::Control => {
                let facts = ledger.read_typed::<chant::tick::undamp::UndampFact>(&key).unwrap().records;
                json!({ "undamp": facts.into_iter().map(|s| s.record).collect::<Vec<_>>() })
            }
        };
        keys.push(json!({
            "key": key.label(),
            "records": records.records.len(),
            "seqs": records.records.iter().map(|r| r.seq).collect::<Vec<_>>(),
            "unreadable": records.unreadable.iter().map(|u| json!({"path": u.path, "line": u.line, "reason": u.reason})).collect::<Vec<_>>(),
            "latestUnreadable": latest.unreadable.len(),
            "read": read,
        }));
    }
    json!({ "keys": keys })
}

#[test]
fn the_typed_reads_of_a_ledger_written_before_are_unchanged() {
    let sandbox = golden_sandbox();
    let reads = typed_reads(&sandbox);
    check("reads.json", &(serde_json::to_string_pretty(&reads).unwrap() + "\n"));
    // A key the keys listing must keep finding: the original's shared converge file.
    assert!(ShardKey::converge(None, "old", "old-converge").is_ok());
    let labels: Vec<&str> = reads["keys"].as_array().unwrap().iter().map(|k| k["key"].as_str().unwrap()).collect();
    assert!(labels.contains(&"converge old/old-converge/converge"), "{labels:?}");
}
