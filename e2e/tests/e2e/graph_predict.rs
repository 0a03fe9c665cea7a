//! `graph` and `lifecycle predict` through the fixture project's real binary: the declared and
//! live graphs of the `site` env as text, JSON, DOT (rendered by Graphviz's `dot`) and Mermaid;
//! a prediction with no engine refuses in red naming the variable, a command engine's partial
//! answer prints amber, and `--compare declared,live` prints both and the delta marked on the
//! axis the two answers differ on; the declared files are asked about by size and mode only; the
//! stock binary points `graph` and `predict` at the project's own binary.

use std::io::Write;
use std::process::{Command, Stdio};

use super::support::{Sandbox, config_with_roots};

fn graphviz(dot: &str) -> String {
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Graphviz `dot` runs (install graphviz; .ci/run does)");
    child.stdin.take().unwrap().write_all(dot.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "dot refused the graph: {}\n{dot}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn graph_draws_the_declared_and_the_live_estate_in_every_format() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let declared = sandbox.project(&["graph", "site"], &[]);
    declared.code(0);
    assert!(
        declared.stdout.starts_with("graph site (declared): 4 node(s), 0 edge(s), 0 dangling\n"),
        "{}",
        declared.all()
    );
    assert!(declared.stdout.contains("  node files:bin/start.sh (file)\n"), "{}", declared.all());

    // Nothing applied: the live graph has no node, since an absent file is no resource.
    let live = sandbox.project(&["graph", "site", "--live", "--json"], &[]).json();
    assert_eq!(live["source"], "live");
    assert_eq!(live["nodes"].as_array().unwrap().len(), 0, "{live}");
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let live = sandbox.project(&["graph", "site", "--live", "--json"], &[]).json();
    let names: Vec<&str> = live["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["app.conf", "bin/start.sh", "motd.txt", "old.conf"], "{live}");
    assert_eq!(live["lexicons"][0]["edgesComputed"], true, "files declare a catalog without references: {live}");
    assert_eq!(live["edges"], serde_json::json!([]));

    let dot = sandbox.project(&["graph", "site", "--live", "--dot"], &[]);
    dot.code(0);
    assert!(dot.stdout.starts_with("digraph \"chant graph site (live)\" {"), "{}", dot.all());
    let svg = graphviz(&dot.stdout);
    assert!(svg.contains("bin/start.sh"), "{svg}");
    let mermaid = sandbox.project(&["graph", "site", "--live", "--mermaid"], &[]);
    assert!(mermaid.stdout.starts_with("flowchart LR\n"), "{}", mermaid.all());

    // Usage errors: an env nobody declares, two formats at once.
    let unknown = sandbox.project(&["graph", "stie"], &[]);
    unknown.code(2);
    assert!(unknown.stderr.contains("env `stie` has no declaration in this binary"), "{}", unknown.all());
    sandbox.project(&["graph", "site", "--json", "--dot"], &[]).code(2);
}

/// A command engine that answers for `app.conf` only, `modeled` on its first call and
/// `validated` on every later one, so a declared-then-live comparison crosses a basis.
fn engine(sandbox: &Sandbox) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = sandbox.root().join("engine");
    std::fs::create_dir_all(&dir).unwrap();
    let answer = |basis: &str| {
        serde_json::json!({
            "version": "chant-behaviour/1",
            "entities": {"app.conf": {
                "at": {"rps": 100.0},
                "provenance": {"engine": {"name": "files-model", "version": "1"}, "basis": basis},
                "cost": {"rate": "per-hour", "perHour": 0.25, "currency": "USD"},
                "headroom": {"cpu": 0.5, "latency": 0.5},
                "errorRate": 0.0
            }}
        })
        .to_string()
    };
    std::fs::write(dir.join("first.json"), answer("modeled")).unwrap();
    std::fs::write(dir.join("later.json"), answer("validated")).unwrap();
    let script = dir.join("files-engine");
    let d = dir.display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > '{d}/request.json'\nif [ -e '{d}/called' ]; then cat '{d}/later.json'; else touch '{d}/called'; cat '{d}/first.json'; fi\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

#[test]
fn predict_refuses_in_red_without_an_engine_and_compares_declared_with_live() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["lifecycle", "predict", "site", "--traffic", "100", "--color", "always"], &[]);
    out.code(1);
    assert!(out.stdout.starts_with("\x1b[31mbehaviour refused for files (no-engine)"), "{}", out.all());
    assert!(out.stdout.contains("remedy: set CHANT_BEHAVIOUR_ENGINE_FILES"), "{}", out.all());

    let engine = engine(&sandbox);
    let vars = [("CHANT_BEHAVIOUR_ENGINE", engine.as_str())];
    let out = sandbox.project(
        &["lifecycle", "predict", "site", "--traffic", "100", "--failure", "disk lost", "--color", "always"],
        &vars,
    );
    out.code(0);
    assert!(
        out.stdout.starts_with("\x1b[33mbehaviour of files at 100 rps: 1 of 4 predicted (partial answer)"),
        "{}",
        out.all()
    );
    let sent: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.root().join("engine/request.json")).unwrap()).unwrap();
    assert_eq!(sent["failure"], "disk lost");
    assert_eq!(sent["edges"], serde_json::json!([]), "files' edges are computed, and there are none: {sent}");
    // The files lexicon's own request: each file's mode and size, never its content or digest.
    let conf = sent["entities"].as_array().unwrap().iter().find(|e| e["name"] == "app.conf").unwrap();
    assert!(conf["props"]["bytes"].as_u64().is_some_and(|b| b > 0), "{sent}");
    assert!(conf["props"].get("content").is_none(), "{sent}");

    std::fs::remove_file(sandbox.root().join("engine/called")).unwrap();
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let out =
        sandbox.project(&["lifecycle", "predict", "site", "--traffic", "100", "--compare", "declared,live"], &vars);
    out.code(0);
    assert!(out.stdout.starts_with("declared:\nbehaviour of files at 100 rps: 1 of 4 predicted"), "{}", out.all());
    assert!(out.stdout.contains("\nlive:\nbehaviour of files at 100 rps"), "{}", out.all());
    assert!(out.stdout.contains("delta (live minus declared):\nfiles:\n  app.conf: cost +0 USD/hour"), "{}", out.all());
    assert!(out.stdout.contains("[NOT COMPARABLE: mixed-basis]"), "{}", out.all());

    std::fs::remove_file(sandbox.root().join("engine/called")).unwrap();
    let json = sandbox
        .project(&["lifecycle", "predict", "site", "--traffic", "100", "--compare", "live,declared", "--json"], &vars)
        .json();
    assert_eq!(json["sources"][0]["source"], "live");
    assert_eq!(json["sources"][1]["source"], "declared");
    assert_eq!(json["deltas"][0]["delta"]["entities"][0]["axes"], serde_json::json!(["mixed-basis"]), "{json}");

    // Usage errors: a level that is not a number, a pair the command does not know.
    sandbox.project(&["lifecycle", "predict", "site", "--traffic", "lots"], &vars).code(2);
    sandbox.project(&["lifecycle", "predict", "site", "--traffic", "-1"], &vars).code(2);
    sandbox.project(&["lifecycle", "predict", "site", "--traffic", "1", "--compare", "a,b"], &vars).code(2);
}

#[test]
fn the_stock_binary_points_graph_and_predict_at_the_project_binary() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.run_in(super::support::STOCK, &sandbox.dir, &["graph", "site", "--live"], &[]);
    out.code(2);
    assert!(out.stderr.contains("the stock chant binary carries no env declarations"), "{}", out.all());
    assert!(out.stderr.contains("`cargo run --bin <project-bin> -- graph site --live`"), "{}", out.all());
    assert!(!out.stderr.contains("lifecycle diff"), "{}", out.all());
    let out =
        sandbox.run_in(super::support::STOCK, &sandbox.dir, &["lifecycle", "predict", "site", "--traffic", "5"], &[]);
    out.code(2);
    assert!(out.stderr.contains("-- lifecycle predict site --traffic 5`"), "{}", out.all());
}
