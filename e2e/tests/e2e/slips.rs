//! Small slips of issue #35 (item 7), through the project binary and the real git ledger: a
//! baseline acceptance records who accepted (`--actor`, else the repository's git identity), and
//! `operator log` shows an edited text file's change as text, the lines `lifecycle diff` shows.

use serde_json::Value;

use super::support::{Sandbox, config_with_roots};

const DOC: (&str, &str) = ("E2E_SITE_DOC", "1");

fn accepted(sandbox: &Sandbox) -> Vec<(String, String)> {
    let stored = sandbox.git(&sandbox.dir, &["show", "chant/lifecycle:site/observation-baseline.json"]);
    let stored: Value = serde_json::from_str(&stored).unwrap();
    stored["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["path"].as_str().unwrap().to_owned(), a["acceptedBy"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn a_baseline_acceptance_records_the_actor_or_the_git_identity() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[DOC]).code(0);
    sandbox.git(&sandbox.dir, &["config", "user.name", "Robin Ops"]);
    let doc = sandbox.path("estates/site/app.json");
    std::fs::write(&doc, "{\"port\": 9090, \"log\": {\"level\": \"info\"}}\n").unwrap();
    let accept = |extra: &[&str]| {
        let mut args =
            vec!["lifecycle", "diff", "site", "--live", "--update-baseline", "--path", "app.json.document.port"];
        args.extend_from_slice(extra);
        sandbox.project(&args, &[DOC])
    };

    // Without --actor: the git identity (not $USER, which is e2e-user here).
    accept(&[]).code(0);
    assert_eq!(accepted(&sandbox), [("document.port".to_owned(), "Robin Ops".to_owned())]);
    let shown = sandbox.project(&["lifecycle", "baseline", "site"], &[DOC]).code(0).stdout.clone();
    assert!(shown.contains("by Robin Ops)"), "{shown}");

    // With --actor: that name; a name that is no printable one-line name is refused, nothing written.
    std::fs::write(&doc, "{\"port\": 9091, \"log\": {\"level\": \"info\"}}\n").unwrap();
    let tip = sandbox.tip();
    let bad = accept(&["--actor", "bob\nmallory"]);
    bad.code(2);
    assert!(bad.stderr.contains("--actor"), "{}", bad.all());
    assert_eq!(sandbox.tip(), tip);
    accept(&["--actor", "alice"]).code(0);
    assert_eq!(accepted(&sandbox), [("document.port".to_owned(), "alice".to_owned())]);
    // --actor means nothing without --update-baseline.
    sandbox.project(&["lifecycle", "diff", "site", "--live", "--actor", "alice"], &[DOC]).code(2);
}

#[test]
fn operator_log_shows_an_edited_text_file_as_text() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 9999\nlog_level = \"info\"\n").unwrap();

    // `lifecycle diff` shows the change as text ...
    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live"], &[]).code(0).stdout.clone();
    assert!(diff.contains("-port = 9999") && diff.contains("+port = 8080"), "{diff}");

    // ... the tick records it, and `operator log` shows the same lines.
    let tick = sandbox.tick("site-converge", &[]);
    let texts = tick["textChanges"].as_array().unwrap_or_else(|| panic!("no textChanges: {tick}"));
    assert_eq!(
        (texts[0]["component"].clone(), texts[0]["name"].clone()),
        (Value::from("files"), Value::from("app.conf"))
    );
    let log = sandbox.project(&["operator", "log"], &[]).code(0).stdout.clone();
    assert!(log.contains("    text  files/app.conf\n"), "{log}");
    assert!(log.contains("      --- live/app.conf\n"), "{log}");
    assert!(log.contains("      -port = 9999\n"), "the removed line: {log}");
    assert!(log.contains("      +port = 8080\n"), "the added line: {log}");
    assert!(log.contains("       log_level = \"info\"\n"), "the context line: {log}");
    // Its content is said by the text, not by two digests.
    assert!(!log.contains("files/app.conf content: sha1:"), "{log}");
    // The tick converged it: the next tick has no change to show.
    let next = sandbox.tick("site-converge", &[]);
    assert!(next.get("textChanges").is_none(), "{next}");
}

/// A misspelt subcommand is answered with the one meant, by the project binary and the stock
/// `chant` alike (exit 2, nothing run).
#[test]
fn a_misspelt_subcommand_names_the_one_meant() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    for out in
        [sandbox.project(&["lifecylce", "diff", "site"], &[]), sandbox.stock(&["lifecylce", "diff", "site"], &[])]
    {
        out.code(2);
        assert!(out.stderr.contains("a similar subcommand exists: 'lifecycle'"), "{}", out.all());
    }
    let out = sandbox.project(&["operator", "stauts"], &[]);
    out.code(2);
    assert!(out.stderr.contains("'status'"), "{}", out.all());
    assert_eq!(sandbox.tip(), None, "nothing ran");
}
