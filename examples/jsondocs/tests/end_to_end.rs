//! The JSON documents lexicon in ticks, end to end, through the real `docs` project binary in a
//! temporary git repository: the first tick applies, the second finds the env in sync, a hand
//! edit is drifted and restored, `lifecycle diff --live` shows the lexicon's entries (an unowned
//! document as `adopt`), and `docs-teardown` removes only what chant owns.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const DOCS: &str = env!("CARGO_BIN_EXE_docs");

/// A project in a temporary git repository whose `docs` env is bound to `estate/`.
struct Project {
    dir: tempfile::TempDir,
}

fn hermetic(mut c: Command) -> Command {
    for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "CHANT_NOW"] {
        c.env_remove(var);
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .stdin(Stdio::null());
    c
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("chant.toml"),
            "[project]\nname = \"docs-demo\"\n\n[env.docs]\njsondocs_root = \"estate\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".gitignore"), "estate/\n").unwrap();
        for args in [&["init", "-q", "-b", "main"][..], &["add", "."], &["commit", "-q", "-m", "init"]] {
            let mut git = hermetic(Command::new("git"));
            let out = git.current_dir(dir.path()).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Project { dir }
    }

    fn estate(&self) -> PathBuf {
        self.dir.path().join("estate")
    }

    fn document(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.estate().join(format!("{name}.json"))).unwrap()).unwrap()
    }

    fn docs(&self, args: &[&str]) -> Output {
        let mut c = hermetic(Command::new(DOCS));
        c.current_dir(self.dir.path()).args(args).output().unwrap()
    }

    /// Runs the binary, expecting exit 0, and parses its one line of JSON.
    fn json(&self, args: &[&str]) -> Value {
        let out = self.docs(args);
        assert!(
            out.status.success(),
            "docs {args:?} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("docs {args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn tick(&self) -> Value {
        self.json(&["tick", "docs-converge", "--json"])
    }

    fn diff(&self) -> Value {
        self.json(&["lifecycle", "diff", "docs", "--live", "--json"])
    }
}

fn entries(diff: &Value) -> Vec<(String, String)> {
    diff["changeSets"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_owned(), e["action"].as_str().unwrap().to_owned()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn a_tick_applies_then_finds_the_env_in_sync_then_restores_a_hand_edit() {
    let p = Project::new();

    let first = p.tick();
    assert_eq!(first["components"][0]["component"], "jsondocs");
    assert_eq!(first["components"][0]["reconciliation"], "unrecorded", "{first}");
    assert_eq!(first["summary"]["remediated"], 1, "{first}");
    assert_eq!(first["outcomes"][0]["ruleId"], "first-apply");
    assert_eq!(first["outcomes"][0]["action"], "ran");
    let service = p.document("service");
    assert_eq!(service["port"], 8080);
    assert_eq!(service["_chant"], serde_json::json!({"stack": "docs-demo", "env": "docs"}));
    assert_eq!(p.document("flags")["rollout_percent"], 25);
    // The lexicon's own step ran in the dispatched op, after the apply: a copy of each document.
    let copy = std::fs::read_to_string(p.dir.path().join("snapshots/service.json")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&copy).unwrap(), service);
    assert!(p.dir.path().join("snapshots/flags.json").is_file());

    let second = p.tick();
    assert_eq!(second["components"][0]["reconciliation"], "reconciled", "{second}");
    assert!(second["components"][0]["recorded"].as_bool().unwrap(), "the apply record is on the ledger");
    assert_eq!((second["summary"]["drifted"].as_u64(), second["summary"]["remediated"].as_u64()), (Some(0), Some(0)));

    // A hand edit keeps the marker and changes a value: drifted, re-applied, restored.
    let path = p.estate().join("service.json");
    let edited = std::fs::read_to_string(&path).unwrap().replace("8080", "9999");
    std::fs::write(&path, edited).unwrap();
    let third = p.tick();
    assert_eq!(third["components"][0]["reconciliation"], "drifted", "{third}");
    assert_eq!(third["summary"]["drifted"], 1);
    assert_eq!(third["summary"]["remediated"], 1);
    assert_eq!(third["outcomes"][0]["ruleId"], "drift-apply");
    assert_eq!(p.document("service")["port"], 8080, "the edit was reverted");

    let fourth = p.tick();
    assert_eq!(fourth["components"][0]["reconciliation"], "reconciled", "{fourth}");
}

#[test]
fn lifecycle_diff_shows_the_lexicons_entries_and_teardown_removes_only_what_chant_owns() {
    let p = Project::new();
    // Nothing applied: both declared documents are creates.
    let before = p.diff();
    assert_eq!(before["status"], "unrecorded");
    assert_eq!(entries(&before), pairs(&[("flags", "create"), ("service", "create")]));

    let applied = p.json(&["run", "docs-apply", "--json"]);
    assert_eq!(applied["status"], "ok", "{applied}");
    assert_eq!(applied["outcomes"][0]["detail"], "2 of 2 declared document(s) written");
    assert_eq!(applied["outcomes"][1]["step"], "docs_snapshot", "{applied}");
    assert_eq!(applied["outcomes"][1]["detail"], "2 document(s) copied to snapshots", "{applied}");

    // A hand edit and a document chant does not own.
    let path = p.estate().join("flags.json");
    std::fs::write(&path, std::fs::read_to_string(&path).unwrap().replace("25", "100")).unwrap();
    std::fs::write(p.estate().join("notes.json"), "{\"owner\": \"someone else\"}\n").unwrap();
    let after = p.diff();
    assert_eq!(after["status"], "drifted", "{after}");
    assert_eq!(entries(&after), pairs(&[("flags", "update"), ("notes", "adopt"), ("service", "noop")]));
    let update = &after["changeSets"][0]["entries"][0];
    assert_eq!(update["deltas"][0]["property"], "content");
    assert!(update["deltas"][0]["live"].as_str().unwrap().contains("\"rollout_percent\":100"), "{update}");
    assert_eq!(after["symptom"]["adoptCount"], 1);

    // The same diff for a person.
    let out = p.docs(&["lifecycle", "diff", "docs", "--live"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("jsondocs drifted:"), "{text}");
    assert!(text.contains("update jsondocs/flags (document) [content:"), "{text}");
    assert!(text.contains("adopt jsondocs/notes (document)"), "{text}");

    // Teardown removes what carries this project's marker, and nothing else.
    let torn = p.json(&["run", "docs-teardown", "--json"]);
    assert_eq!(torn["status"], "ok", "{torn}");
    assert_eq!(torn["outcomes"][0]["detail"], "2 owned document(s) removed");
    assert!(!p.estate().join("service.json").exists() && !p.estate().join("flags.json").exists());
    assert!(p.estate().join("notes.json").exists(), "a foreign document is never removed");
    let gone = p.diff();
    assert_eq!(gone["status"], "unrecorded", "a teardown record reads as never applied: {gone}");
}

#[test]
fn an_unknown_binding_key_is_refused_naming_the_lexicons_keys() {
    let p = Project::new();
    std::fs::write(
        p.dir.path().join("chant.toml"),
        "[project]\nname = \"docs-demo\"\n[env.docs]\njsondoc_root = \"x\"\n",
    )
    .unwrap();
    let out = p.docs(&["lifecycle", "diff", "docs", "--live"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown key `jsondoc_root`"), "{err}");
    assert!(err.contains("jsondocs_root (jsondocs)") && err.contains("files_root (files)"), "{err}");
}

#[test]
fn an_adopt_report_names_the_unowned_documents_in_the_record_the_operators_line_and_the_log() {
    let p = Project::new();
    let first = p.tick();
    assert_eq!(first["outcomes"][0]["ruleId"], "first-apply");
    assert!(first["outcomes"][0].get("entities").is_none(), "nothing to name, no key: {first}");
    std::fs::write(p.estate().join("notes.json"), "{\"owner\": \"someone else\"}\n").unwrap();
    let tick = p.tick();
    let report = tick["outcomes"].as_array().unwrap().iter().find(|o| o["ruleId"] == "adopt-report").unwrap();
    assert_eq!(report["action"], "reported", "{tick}");
    assert_eq!(report["entities"], serde_json::json!(["jsondocs/notes"]), "the record names them: {tick}");
    let once = p.docs(&["operator", "--once", "--env", "docs"]);
    let stdout = String::from_utf8_lossy(&once.stdout);
    assert!(once.status.success(), "{}", String::from_utf8_lossy(&once.stderr));
    assert!(
        stdout.contains("operator: docs-converge@docs ticked=1 status=in-sync; reported adopt-report [jsondocs/notes]"),
        "{stdout}"
    );
    let log = p.docs(&["operator", "log", "--op", "docs-converge"]);
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.contains("reported  adopt-report [jsondocs/notes]: unowned documents present"), "{log}");
}

#[test]
fn dev_check_lexicon_holds_the_lexicon_written_outside_chant_to_the_suite() {
    let p = Project::new();
    p.tick();
    let out = p.docs(&["dev", "check-lexicon", "jsondocs"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.starts_with("check-lexicon jsondocs (env docs): 6 checks, 0 failed\n"), "{said}");
    assert!(said.contains("pass  ownership-channel: keys "), "{said}");
    assert!(said.contains("pass  probe-absent: an undeclared name reads absent"), "{said}");
    assert!(said.contains("skip  deep: no deep read"), "{said}");
}
