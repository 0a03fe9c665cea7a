//! Deep observation of the files lexicon and the accepted baseline, through the project binary:
//! a declared JSON key changed by hand is drift, a key added is unclaimed (never drift), a mode
//! changed is drift; the tick decides on the same answer `lifecycle diff --deep` prints, keeps
//! the drifted paths in its record (shown by `operator log`) and applies it back; an accepted value stops alerting and a further change alerts again with all
//! three values; a `--path` naming nothing is a usage error; a baseline that does not parse is
//! reported with its path and ignored for the run.

use serde_json::{Value, json};

use super::support::{Sandbox, config_with_roots};

const DOC: (&str, &str) = ("E2E_SITE_DOC", "1");

fn deep_json(sandbox: &Sandbox) -> Value {
    sandbox.project(&["lifecycle", "diff", "site", "--live", "--deep", "--json"], &[DOC]).code(0).json()
}

fn app_json(doc: &Value) -> Value {
    let files = doc["deep"].as_array().unwrap().iter().find(|c| c["component"] == "files").unwrap();
    files["entities"].as_array().unwrap().iter().find(|e| e["entity"] == "app.json").unwrap().clone()
}

fn paths(rows: &Value) -> Vec<String> {
    rows.as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn json_keys_drift_or_are_unclaimed_and_the_tick_agrees_and_converges() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[DOC]).code(0);
    let doc = deep_json(&sandbox);
    assert_eq!(doc["status"], "reconciled", "{doc}");
    let app = app_json(&doc);
    assert_eq!((app["drift"].clone(), app["unclaimed"].clone()), (json!([]), json!([])), "uid/gid are pruned: {doc}");
    // Files record no writers: no owner anywhere.
    assert!(!doc.to_string().contains("\"owner\""), "{doc}");

    std::fs::write(
        sandbox.path("estates/site/app.json"),
        "{\"port\": 9090, \"log\": {\"level\": \"info\"}, \"extra\": true}\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(sandbox.path("estates/site/app.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let doc = deep_json(&sandbox);
    let app = app_json(&doc);
    assert_eq!(paths(&app["drift"]), ["document.port", "mode"], "{doc}");
    assert_eq!((app["drift"][0]["declared"].clone(), app["drift"][0]["live"].clone()), (json!(8080), json!(9090)));
    assert_eq!(app["drift"][1]["live"], "0600", "{doc}");
    assert_eq!(paths(&app["unclaimed"]), ["document.extra"], "{doc}");
    assert_eq!(app["unclaimed"][0]["source"], "claimed-fields", "{doc}");
    assert!(app["unclaimed"][0].get("heldBy").is_none(), "{doc}");
    assert_eq!(doc["status"], "drifted", "{doc}");
    let text = sandbox.project(&["lifecycle", "diff", "site", "--live", "--deep"], &[DOC]).code(0).stdout.clone();
    assert!(text.contains("    drift files/app.json document.port: 8080 -> 9090\n"), "{text}");
    assert!(text.contains("    unclaimed files/app.json document.extra = true (claimed-fields)\n"), "{text}");
    let update = text.lines().find(|l| l.contains("update files/app.json")).unwrap_or_default();
    assert!(update.contains("mode: 0600 -> 0644") && update.contains("document.port: 9090 -> 8080"), "{text}");

    // The tick reads the same answer, and applies it back.
    let tick = sandbox.tick("site-converge", &[DOC]);
    let row = &tick["components"][0];
    assert_eq!(row["reconciliation"], "drifted", "{tick}");
    assert!(row["detail"].as_str().unwrap().contains("1 update (app.json)"), "{tick}");
    assert_eq!(tick["summary"]["remediated"], 1, "{tick}");
    // The record keeps the drifted paths, and `operator log` shows them.
    let kept: Vec<(String, String)> = tick["driftedPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["entity"].as_str().unwrap().to_owned(), d["path"].as_str().unwrap().to_owned()))
        .collect();
    assert!(kept.contains(&("app.json".into(), "document.port".into())), "{tick}");
    assert!(kept.contains(&("app.json".into(), "mode".into())), "{tick}");
    let log = sandbox.project(&["operator", "log"], &[DOC]).code(0).stdout.clone();
    assert!(log.contains("    drifted  files/app.json document.port: 9090 -> 8080\n"), "live -> declared: {log}");
    assert_eq!(sandbox.mode("estates/site/app.json"), 0o644);
    let doc = deep_json(&sandbox);
    assert_eq!(doc["status"], "reconciled", "{doc}");
    assert!(app_json(&doc)["unclaimed"].as_array().unwrap().is_empty(), "{doc}");
}

#[test]
fn an_accepted_value_stops_alerting_and_a_further_change_alerts_with_three_values() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[DOC]).code(0);
    let write_port = |port: u32| {
        let text = format!("{{\"port\": {port}, \"log\": {{\"level\": \"info\"}}}}\n");
        std::fs::write(sandbox.path("estates/site/app.json"), text).unwrap();
    };
    write_port(9090);

    // A path that names nothing reported is a usage error, and nothing is written.
    let tip = sandbox.tip();
    let out = sandbox.project(
        &["lifecycle", "diff", "site", "--live", "--update-baseline", "--path", "app.json.document.nope"],
        &[DOC],
    );
    out.code(2);
    assert!(out.stderr.contains("--path app.json.document.nope names nothing this run reported"), "{}", out.all());
    assert!(out.stderr.contains("app.json.document.port"), "the reported paths are listed: {}", out.all());
    assert_eq!(sandbox.tip(), tip);

    let out = sandbox.project(
        &["lifecycle", "diff", "site", "--live", "--update-baseline", "--path", "app.json.document.port"],
        &[DOC],
    );
    out.code(0);
    assert!(out.stdout.contains("accepted app.json.document.port = 9090"), "{}", out.all());
    let subject = sandbox.git(&sandbox.dir, &["log", "-1", "--format=%s", "chant/lifecycle"]);
    assert_eq!(subject.trim(), "chant: baseline site: accept 1 path(s)");
    let stored = sandbox.git(&sandbox.dir, &["show", "chant/lifecycle:site/observation-baseline.json"]);
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!((stored["version"].clone(), stored["env"].clone()), (json!(1), json!("site")));
    assert_eq!(stored["accepted"][0]["value"], 9090, "{stored}");

    let doc = deep_json(&sandbox);
    assert_eq!(doc["status"], "reconciled", "the accepted value stops alerting: {doc}");
    let app = app_json(&doc);
    assert_eq!(paths(&app["baselined"]), ["document.port"], "{doc}");
    assert_eq!(doc["baseline"]["accepted"], 1, "{doc}");
    // The tick agrees: nothing to do.
    let tick = sandbox.tick("site-converge", &[DOC]);
    assert_eq!(tick["components"][0]["reconciliation"], "reconciled", "{tick}");

    write_port(9091);
    let doc = deep_json(&sandbox);
    let drift = &app_json(&doc)["drift"][0];
    assert_eq!(
        (drift["path"].clone(), drift["declared"].clone(), drift["live"].clone(), drift["baseline"].clone()),
        (json!("document.port"), json!(8080), json!(9091), json!(9090)),
        "{doc}"
    );
    assert_eq!(doc["status"], "drifted", "{doc}");

    // The dashboard's env page shows the same path with its three values side by side.
    let served = super::serve::Served::start_with(&sandbox, super::support::PROJECT, &[DOC]);
    let page = served.json("/envs/site");
    let row = page["resources"].as_array().unwrap().iter().find(|r| r["name"] == "app.json").unwrap();
    assert_eq!(
        row["paths"],
        json!([{"path": "document.port", "state": "drift", "declared": "8080", "live": "9091", "baseline": "9090"}]),
        "{page}"
    );
    let html = served.html("/envs/site");
    let path_row = html.split(r#"<tr data-path="document.port" data-state="drift">"#).nth(1).unwrap_or_default();
    let path_row = path_row.split("</tr>").next().unwrap_or_default();
    assert_eq!(
        path_row,
        "<td><code>document.port</code></td><td><code>8080</code></td><td><code>9091</code></td><td><code>9090</code></td>",
        "{html}"
    );
    // The diff page lists the same path under app.json's line, from the same observation.
    let diff = served.html("/envs/site/diff");
    let line = diff.split(r#"<td id="d-files~app.json">"#).nth(1).unwrap_or_default();
    let line = line.split(r#"<tr data-kind="#).next().unwrap_or_default();
    assert!(line.contains(&format!(r#"<tr data-path="document.port" data-state="drift">{path_row}</tr>"#)), "{diff}");
    drop(served);

    let shown = sandbox.project(&["lifecycle", "baseline", "site", "--json"], &[DOC]).code(0).json();
    assert_eq!(shown["path"], "chant/lifecycle:site/observation-baseline.json", "{shown}");
    assert_eq!(shown["accepted"][0]["path"], "document.port", "{shown}");
    let out = sandbox.project(&["lifecycle", "baseline", "site", "--clear", "app.json.document.nope"], &[DOC]);
    out.code(2);
    sandbox.project(&["lifecycle", "baseline", "site", "--clear", "app.json.document.port"], &[DOC]).code(0);
    let shown = sandbox.project(&["lifecycle", "baseline", "site", "--json"], &[DOC]).code(0).json();
    assert_eq!(shown["accepted"], json!([]), "{shown}");
}

#[test]
fn a_baseline_that_does_not_parse_is_reported_with_its_path_and_ignored() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[DOC]).code(0);
    std::fs::write(sandbox.path("estates/site/app.json"), "{\"port\": 9090, \"log\": {\"level\": \"info\"}}\n")
        .unwrap();
    let ledger = sandbox.ledger_of(&sandbox.dir);
    ledger.write_document("site/observation-baseline.json", b"{not a baseline", "hand edit").unwrap();

    let out = sandbox.project(&["lifecycle", "diff", "site", "--live", "--deep"], &[DOC]);
    out.code(0);
    assert!(
        out.stdout.contains("warning: chant/lifecycle:site/observation-baseline.json: not an observation baseline"),
        "{}",
        out.all()
    );
    // Ignored, never read as empty-and-fine: the drift is still there.
    assert!(out.stdout.contains("drift files/app.json document.port: 8080 -> 9090"), "{}", out.all());
    let doc = deep_json(&sandbox);
    assert!(doc["baseline"]["error"].as_str().unwrap().contains("observation-baseline.json"), "{doc}");
    // Accepting into a baseline that cannot be read refuses rather than overwrite it.
    let out = sandbox.project(&["lifecycle", "diff", "site", "--live", "--update-baseline", "--yes"], &[DOC]);
    out.code(1);
    assert!(out.stderr.contains("not updating a baseline that cannot be read"), "{}", out.all());
    let tick = sandbox.project(&["tick", "site-converge", "--json"], &[DOC]);
    assert!(tick.stderr.contains("observation-baseline.json: not an observation baseline"), "{}", tick.all());
}

#[test]
fn a_baseline_chant_did_not_write_is_reported_and_not_honoured_and_baselined_paths_are_counted() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[DOC]).code(0);
    std::fs::write(sandbox.path("estates/site/app.json"), "{\"port\": 9090, \"log\": {\"level\": \"info\"}}\n")
        .unwrap();
    let forged = |env: &str| {
        format!(
            "{{\"version\":1,\"env\":\"{env}\",\"accepted\":[{{\"entity\":\"app.json\",\"path\":\"document.port\",\"value\":9090,\"acceptedAt\":\"2026-03-01T10:00:00.000Z\",\"acceptedBy\":\"mallory\"}}]}}\n"
        )
    };

    // Written straight onto the ledger: reported, ignored, the drift still drift.
    let commit =
        super::original_gates::commit_ledger_file(&sandbox, "site/observation-baseline.json", &forged("site"), &[]);
    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live"], &[DOC]);
    diff.code(0);
    assert!(diff.stderr.contains(&format!("not written by chant (commit {commit} by E2E Author")), "{}", diff.all());
    assert!(diff.stdout.contains("lifecycle diff site (live): drifted"), "{}", diff.all());
    let tick = sandbox.tick("site-converge", &[DOC]);
    assert_eq!(tick["components"][0]["reconciliation"], "drifted", "{tick}");
    // The tick applied the declaration back; the hand edit again.
    std::fs::write(sandbox.path("estates/site/app.json"), "{\"port\": 9090, \"log\": {\"level\": \"info\"}}\n")
        .unwrap();
    let audit = sandbox.project(&["operator", "audit", "--json"], &[]).code(1).json();
    assert_eq!(audit["baselines"][0]["commit"], commit.as_str(), "{audit}");
    assert_eq!(audit["baselines"][0]["committedBy"], "E2E Author", "{audit}");
    assert_eq!(audit["baselines"][0]["byChant"], false, "{audit}");
    assert_eq!(audit["gaps"][0]["kind"], "foreign-baseline", "{audit}");

    // Written through chant's document path but naming another env: not honoured either.
    sandbox
        .ledger_of(&sandbox.dir)
        .write_document("site/observation-baseline.json", forged("prod").as_bytes(), "x")
        .unwrap();
    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live"], &[DOC]);
    assert!(diff.stderr.contains("the baseline names env \"prod\", not \"site\""), "{}", diff.all());
    assert!(diff.stdout.contains("drifted"), "{}", diff.all());

    // Reset, then accepted through chant: honoured, and counted wherever it is not drift.
    sandbox.project(&["lifecycle", "baseline", "site", "--reset"], &[DOC]).code(0);
    sandbox
        .project(
            &["lifecycle", "diff", "site", "--live", "--update-baseline", "--path", "app.json.document.port"],
            &[DOC],
        )
        .code(0);
    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live"], &[DOC]);
    diff.code(0);
    assert!(!diff.stderr.contains("not written by chant"), "{}", diff.all());
    assert!(diff.stdout.contains("  baselined=1: path(s) that differ from the declaration"), "{}", diff.all());
    let json = sandbox.project(&["lifecycle", "diff", "site", "--live", "--json"], &[DOC]).code(0).json();
    assert_eq!(json["symptom"]["baselinedCount"], 1, "{json}");
    let tick = sandbox.tick("site-converge", &[DOC]);
    assert_eq!(tick["components"][0]["reconciliation"], "reconciled", "{tick}");
    assert!(tick["log"].as_str().unwrap().ends_with(" baselined=1"), "{tick}");
    let status = sandbox.project(&["operator", "status"], &[DOC]).code(0).stdout.clone();
    assert!(status.contains(" baselined=1"), "status shows the last tick's count: {status}");
    let audit = sandbox.project(&["operator", "audit", "--json"], &[]).json();
    let by_chant: Vec<bool> = audit["baselines"].as_array().unwrap().iter().map(|b| b["byChant"] == true).collect();
    assert_eq!(by_chant, [false, true, true, true], "{audit}");
}
