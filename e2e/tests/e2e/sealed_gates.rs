//! Sealed approvals through the real binaries and real `ssh-keygen`: `site-force` stops at
//! `gate("force", sealed = true)`, which opens only on an approval signed (`approve --sign`) by a
//! key the project's allowed-signers file lists for the approval's signer. Keys are fresh
//! ed25519 keys generated in the sandbox.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::original_gates::commit_ledger_file;
use super::support::{Sandbox, config_with_roots, gate_key};

const OP: &str = "site-force";

fn at(minutes: i64) -> String {
    format!("2026-03-01T10:{minutes:02}:00.000Z")
}

/// Generates an ed25519 key pair `name` (comment `name`) in `dir`; returns the private key path.
fn keypair(sandbox: &Sandbox, dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    let out = sandbox.run_in(
        "ssh-keygen",
        dir,
        &["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.code, 0, "ssh-keygen: {}", out.stderr);
    key
}

fn public(key: &Path) -> String {
    let text = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// Commits the work tree's `allowed_signers`: seals are verified against HEAD's copy.
fn commit_signers(sandbox: &Sandbox) {
    sandbox.git(&sandbox.dir, &["add", "allowed_signers"]);
    sandbox.git(&sandbox.dir, &["commit", "-q", "-m", "allowed signers"]);
}

fn run(sandbox: &Sandbox, minutes: i64) -> super::support::Out {
    sandbox.project(&["run", OP, "--json"], &[("CHANT_NOW", &at(minutes))])
}

fn approve(sandbox: &Sandbox, minutes: i64, extra: &[&str]) {
    let mut args = vec!["approve", OP, "force"];
    args.extend_from_slice(extra);
    sandbox.stock(&args, &[("CHANT_NOW", &at(minutes))]).code(0);
}

#[test]
fn a_sealed_gate_opens_only_on_a_seal_from_an_allowed_signer_over_the_unedited_line() {
    let config = format!("{}\n[gates]\nallowed_signers = \"allowed_signers\"\n", config_with_roots(&["site"]));
    let sandbox = Sandbox::new(&config);
    let keys = sandbox.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let alex = keypair(&sandbox, &keys, "alex");
    let eve = keypair(&sandbox, &keys, "eve");
    std::fs::write(sandbox.dir.join("allowed_signers"), format!("alex {}\n", public(&alex))).unwrap();
    commit_signers(&sandbox);

    run(&sandbox, 0).code(3);
    let refused = |minutes: i64, why: &str| {
        let out = run(&sandbox, minutes);
        out.code(3);
        let record = out.json();
        let reason = record["gate"]["refused"].as_str().unwrap_or_default().to_owned();
        assert!(reason.contains("opens only on a sealed approval"), "{record}");
        assert!(reason.contains(why), "{why:?} in {reason}");
        let human = sandbox.project(&["run", OP], &[("CHANT_NOW", &at(minutes))]);
        assert!(human.stderr.contains("refused : gate \"force\" opens only on a sealed approval"), "{}", human.stderr);
    };

    // An unsealed approval leaves it standing, and says why.
    approve(&sandbox, 1, &["--actor", "alex"]);
    refused(2, "the approval by alex at 2026-03-01T10:01:00.000Z: the approval carries no seal");
    assert_eq!(sandbox.values(&gate_key(OP)).len(), 2, "no new pending fact: the gate stands as it was");
    assert_eq!(sandbox.values(&gate_key(OP))[0]["sealed"], true, "the pending fact says the gate needs a seal");
    let status = sandbox.stock(&["operator", "status", "--json"], &[("CHANT_NOW", &at(2))]).code(0).json();
    let standing: Vec<&Value> = status["pendingGates"].as_array().unwrap().iter().filter(|g| g["op"] == OP).collect();
    assert_eq!(standing.len(), 1, "an unsealed approval leaves a sealed gate pending in status: {status}");

    // A key the file does not list, and alex's name on eve's key.
    approve(&sandbox, 3, &["--actor", "eve", "--sign", "--key", eve.to_str().unwrap()]);
    approve(&sandbox, 4, &["--actor", "alex", "--sign", "--key", eve.to_str().unwrap()]);
    refused(5, "the approval by eve at 2026-03-01T10:03:00.000Z: ssh-keygen -Y verify:");
    let facts = sandbox.values(&gate_key(OP));
    let seal = &facts[2]["seal"];
    assert_eq!(seal["signer"], "eve");
    assert!(seal["signature"].as_str().unwrap().starts_with("-----BEGIN SSH SIGNATURE-----"), "{seal}");

    // alex's real seal, on a line edited after signing.
    approve(&sandbox, 6, &["--actor", "alex", "--sign", "--key", alex.to_str().unwrap()]);
    let shard = format!("{}/0/0.jsonl", gate_key(OP).dir());
    let text = sandbox.git(&sandbox.dir, &["show", &format!("{}:{shard}", super::support::BRANCH)]);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.pop().unwrap();
    let mut edited: Value = serde_json::from_str(&last).unwrap();
    edited["note"] = Value::from("slipped in after signing");
    lines.push(serde_json::to_string(&edited).unwrap());
    commit_ledger_file(&sandbox, &shard, &(lines.join("\n") + "\n"), &[]);
    refused(7, "the approval by alex at 2026-03-01T10:06:00.000Z: ssh-keygen -Y verify:");

    // alex's seal over the line as written opens it.
    approve(&sandbox, 8, &["--actor", "alex", "--sign", "--key", alex.to_str().unwrap()]);
    let ok = run(&sandbox, 9);
    ok.code(0);
    let record = ok.json();
    let detail = record["outcomes"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("[approved] alex at 2026-03-01T10:08:00.000Z [sealed by alex]"), "{detail}");

    // The audit names each approval's seal; the edit is a revocation of the line as signed and a
    // new line. The request says its gate needs a seal, so even the stock binary (which knows no
    // op) finds the unsealed approval a gap; the project binary knows it from the op too.
    let audit = sandbox.stock(&["operator", "audit", "--json", "--op", OP], &[]).code(1).json();
    let stock_gaps: Vec<&str> = audit["gaps"].as_array().unwrap().iter().map(|g| g["kind"].as_str().unwrap()).collect();
    assert_eq!(stock_gaps, ["unsealed"], "{audit}");
    let entries = audit["entries"].as_array().unwrap();
    let seals: Vec<&str> =
        entries.iter().filter(|e| e["kind"] == "approved").map(|e| e["seal"].as_str().unwrap()).collect();
    assert_eq!(seals, ["unsigned", "sealed", "sealed", "sealed", "sealed", "sealed"]);
    let revoked: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "revoked").collect();
    assert_eq!(revoked.len(), 1, "the line as signed, removed by the edit");
    assert_eq!(revoked[0]["source"]["text"], last.as_str());
    let audit = sandbox.project(&["operator", "audit", "--json", "--op", OP], &[]).code(1).json();
    let gaps: Vec<&str> = audit["gaps"].as_array().unwrap().iter().map(|g| g["kind"].as_str().unwrap()).collect();
    assert_eq!(gaps, ["unsealed"], "{audit}");
}

#[test]
fn a_sealed_gate_without_an_allowed_signers_file_stays_closed_and_says_so() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let keys = sandbox.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let alex = keypair(&sandbox, &keys, "alex");
    run(&sandbox, 0).code(3);
    approve(&sandbox, 1, &["--actor", "alex", "--sign", "--key", alex.to_str().unwrap()]);
    let out = run(&sandbox, 2);
    out.code(3);
    let reason = out.json()["gate"]["refused"].as_str().unwrap().to_owned();
    assert!(reason.contains("[gates] allowed_signers"), "{reason}");
    // A key that does not exist cannot seal: nothing is recorded.
    let before = sandbox.values(&gate_key(OP)).len();
    let bad = sandbox.stock(&["approve", OP, "force", "--sign", "--key", "/nonexistent/key"], &[("CHANT_NOW", &at(3))]);
    bad.code(1);
    assert!(bad.stderr.contains("cannot seal the approval with /nonexistent/key"), "{}", bad.stderr);
    assert_eq!(sandbox.values(&gate_key(OP)).len(), before);
}

#[test]
fn a_replayed_seal_of_an_earlier_request_opens_nothing_and_the_audit_names_it() {
    let config = format!("{}\n[gates]\nallowed_signers = \"allowed_signers\"\n", config_with_roots(&["site"]));
    let sandbox = Sandbox::new(&config);
    let keys = sandbox.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let alex = keypair(&sandbox, &keys, "alex");
    std::fs::write(sandbox.dir.join("allowed_signers"), format!("alex {}\n", public(&alex))).unwrap();
    commit_signers(&sandbox);

    // alex seals the first request, and the run walks through.
    run(&sandbox, 0).code(3);
    approve(&sandbox, 1, &["--actor", "alex", "--sign", "--key", alex.to_str().unwrap()]);
    run(&sandbox, 2).code(0);
    let shard = format!("{}/0/0.jsonl", gate_key(OP).dir());
    let text = sandbox.git(&sandbox.dir, &["show", &format!("{}:{shard}", super::support::BRANCH)]);
    let sealed_line =
        text.lines().find(|l| l.contains("\"seal\"")).expect("alex's sealed approval is on the ledger").to_owned();

    // A new request; mallory approves it unsigned and appends alex's old sealed line unchanged.
    run(&sandbox, 3).code(3);
    let facts = sandbox.values(&gate_key(OP));
    let (first, second) = (facts[0]["runId"].as_str().unwrap().to_owned(), facts[3]["runId"].as_str().unwrap());
    assert_ne!(first, second);
    approve(&sandbox, 4, &["--actor", "mallory"]);
    super::support::plant(&sandbox, &shard, &sealed_line);

    let out = run(&sandbox, 5);
    out.code(3);
    let record = out.json();
    let reason = record["gate"]["refused"].as_str().unwrap_or_default().to_owned();
    assert!(
        reason.contains("the approval by mallory at 2026-03-01T10:04:00.000Z: the approval carries no seal"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("the approval by alex at 2026-03-01T10:01:00.000Z: the seal covers run {first}")),
        "{reason}"
    );
    assert!(reason.contains(&format!("not the standing request run {second}")), "{reason}");
    let passes = sandbox.values(&gate_key(OP)).iter().filter(|f| f["kind"] == "passed").count();
    assert_eq!(passes, 1, "only the first request was passed");

    let audit = sandbox.project(&["operator", "audit", "--json", "--op", OP], &[]).code(1).json();
    let gaps: Vec<&str> = audit["gaps"].as_array().unwrap().iter().map(|g| g["kind"].as_str().unwrap()).collect();
    assert_eq!(gaps, ["unsealed", "misplaced-seal"], "{audit}");
    let misplaced = &audit["gaps"][1]["message"];
    assert!(misplaced.as_str().unwrap().contains("it repeats an earlier sealed approval line"), "{misplaced}");
}

#[test]
fn an_uncommitted_edit_of_the_allowed_signers_file_is_not_honoured() {
    let config = format!("{}\n[gates]\nallowed_signers = \"allowed_signers\"\n", config_with_roots(&["site"]));
    let sandbox = Sandbox::new(&config);
    let keys = sandbox.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (alex, eve) = (keypair(&sandbox, &keys, "alex"), keypair(&sandbox, &keys, "eve"));
    let signers = sandbox.dir.join("allowed_signers");

    // A file nobody committed opens nothing, and the run says why.
    std::fs::write(&signers, format!("eve {}\n", public(&eve))).unwrap();
    run(&sandbox, 0).code(3);
    approve(&sandbox, 1, &["--actor", "eve", "--sign", "--key", eve.to_str().unwrap()]);
    let out = run(&sandbox, 2);
    out.code(3);
    let reason = out.json()["gate"]["refused"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains("the allowed-signers file"), "{reason}");
    assert!(reason.contains("is not committed"), "{reason}");

    // alex is committed; eve adds herself in the work tree only: still closed to her.
    std::fs::write(&signers, format!("alex {}\n", public(&alex))).unwrap();
    commit_signers(&sandbox);
    std::fs::write(&signers, format!("alex {}\neve {}\n", public(&alex), public(&eve))).unwrap();
    let out = run(&sandbox, 3);
    out.code(3);
    let reason = out.json()["gate"]["refused"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains("the approval by eve at 2026-03-01T10:01:00.000Z: ssh-keygen -Y verify:"), "{reason}");

    // Once committed, her seal opens it.
    commit_signers(&sandbox);
    let ok = run(&sandbox, 4);
    ok.code(0);
    assert!(ok.json()["outcomes"][0]["detail"].as_str().unwrap().contains("[sealed by eve]"), "{}", ok.stdout);
}
