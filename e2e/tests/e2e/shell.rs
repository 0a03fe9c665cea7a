//! Shell habits and output discipline through the real binary: completions that bash loads,
//! man pages, `help <subcommand>` with examples and exit codes, `--version` naming the project and
//! its ops digest, one JSON object on stderr for an error under `--json`, JSON on stdout from
//! every read command, colour only when asked and never with `NO_COLOR`, and `| head -1` ending
//! every read command with status 0.

use super::support::{PROJECT, Sandbox, config_with_roots};

#[test]
fn completions_load_in_bash_man_pages_are_written_and_help_has_examples_and_exit_codes() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let script = format!("source <({PROJECT} completions bash) && complete -p e2e-project");
    let out = sandbox.run_in("bash", &sandbox.dir, &["-c", &script], &[]);
    out.code(0);
    assert!(out.stdout.contains("e2e-project"), "{}", out.all());
    for shell in ["zsh", "fish"] {
        let out = sandbox.project(&["completions", shell], &[]);
        assert!(out.code(0).stdout.contains("e2e-project"), "{shell}: {}", out.all());
    }

    let man = sandbox.root().join("man");
    let out = sandbox.project(&["man", "--out", man.to_str().unwrap()], &[]);
    out.code(0);
    let page = std::fs::read_to_string(man.join("e2e-project-operator-status.1")).unwrap();
    assert!(page.starts_with(".ie") || page.contains(".TH"), "{page}");
    assert!(man.join("e2e-project.1").is_file() && man.join("e2e-project-lifecycle-diff.1").is_file());

    let help = sandbox.project(&["help", "run"], &[]);
    help.code(0);
    // In the project binary's own words: its name, its first op and ConvergeOp, not the
    // README example project's.
    assert!(help.stdout.contains("Examples:\n  e2e-project run blind-apply\n"), "{}", help.all());
    assert!(help.stdout.contains("  e2e-project run blind-converge --json"), "{}", help.all());
    assert!(!help.stdout.contains("staging"), "{}", help.all());
    assert!(help.stdout.contains("Exit codes: 0 done, 1 failed"), "{}", help.all());
    let tick = sandbox.project(&["tick", "--help"], &[]);
    assert!(tick.code(0).stdout.contains("  e2e-project tick blind-converge --plan"), "{}", tick.all());
    // A command group without its subcommand shows its help in the same words (usage, exit 2).
    let group = sandbox.project(&["lifecycle"], &[]);
    assert!(group.code(2).stderr.contains("  e2e-project lifecycle diff "), "{}", group.all());
    assert!(!group.stderr.contains("staging"), "{}", group.all());
    // Nothing to do: the help, under the binary's name, not the package's (`chant-ops`).
    let bare = sandbox.stock(&[], &[]);
    assert!(bare.code(2).stdout.contains("Usage: e2e-stock-chant [OPTIONS] [COMMAND]"), "{}", bare.all());
    assert!(!bare.stdout.contains("chant-ops"), "{}", bare.all());
    // The stock chant (its e2e build) keeps the README's example project, in its own name.
    let stock = sandbox.stock(&["help", "run"], &[]);
    assert!(stock.code(0).stdout.contains("Examples:\n  e2e-stock-chant run staging-apply\n"), "{}", stock.all());

    let version = sandbox.project(&["--version"], &[]);
    version.code(0);
    assert!(version.stdout.starts_with("e2e-project (project e2e): chant "), "{}", version.all());
    assert!(version.stdout.contains("ops digest fnv1a64:"), "{}", version.all());
}

#[test]
fn json_everywhere_errors_as_one_json_object_colour_on_request_and_head_exits_0() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["tick", "site-converge"], &[]).code(0);

    for args in [
        &["ops", "--json"][..],
        &["operator", "status", "--json"],
        &["operator", "log", "--json"],
        &["lifecycle", "diff", "site", "--live", "--json"],
        &["tick", "site-converge", "--json"],
        &["tick", "site-converge", "--plan", "--json"],
        &["run", "site-apply", "--json"],
    ] {
        let out = sandbox.project(args, &[]);
        out.code(0);
        let _ = out.json();
    }
    // The record-writing approve: the pending fact (--show), the resolution recorded, then the
    // standing one (nothing recorded), each one JSON document.
    sandbox.project(&["run", "site-release"], &[]).code(3);
    let approve = ["approve", "site-release", "release", "--actor", "erin", "--json"];
    let shown = sandbox.stock(&[&approve[..], &["--show"]].concat(), &[]).code(0).json();
    let pick = |v: &serde_json::Value, keys: &[&str]| -> Vec<serde_json::Value> {
        keys.iter().map(|k| k.split('.').fold(v.clone(), |v, k| v[k].clone())).collect()
    };
    assert_eq!(
        pick(&shown, &["outcome", "recorded", "fact.kind"]),
        serde_json::json!(["pending", false, "pending"]).as_array().unwrap().clone(),
        "{shown}"
    );
    let approved = sandbox.stock(&approve, &[]).code(0).json();
    let want = serde_json::json!([1, "approved", true, "resolution", "erin"]);
    assert_eq!(
        pick(&approved, &["version", "outcome", "recorded", "fact.kind", "fact.resolvedBy"]),
        want.as_array().unwrap().clone(),
        "{approved}"
    );
    let again = sandbox.stock(&approve, &[]).code(0).json();
    assert_eq!(
        pick(&again, &["outcome", "recorded"]),
        serde_json::json!(["already-approved", false]).as_array().unwrap().clone(),
        "{again}"
    );
    assert_eq!(again["fact"], approved["fact"], "the standing resolution is the one recorded");

    let out = sandbox.project(&["tick", "no-such-op", "--json"], &[]);
    out.code(2);
    let err: serde_json::Value =
        serde_json::from_str(out.stderr.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.all()));
    assert_eq!(err["kind"], "usage");
    assert!(err["message"].as_str().unwrap().contains("no op named `no-such-op`"), "{err}");
    assert!(err["hints"].is_array(), "{err}");
    let out = sandbox.project(&["operator", "log", "--limit", "zero", "--json"], &[]);
    out.code(2);
    let err: serde_json::Value =
        serde_json::from_str(out.stderr.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.all()));
    assert_eq!(err["kind"], "usage", "{err}");
    assert!(out.stdout.is_empty(), "{}", out.all());

    let esc = "\u{1b}[";
    let coloured = sandbox.project(&["operator", "status", "--color", "always"], &[]);
    assert!(coloured.code(0).stdout.contains(esc), "{}", coloured.all());
    let plain = sandbox.project(&["operator", "status"], &[]);
    assert!(!plain.code(0).stdout.contains(esc), "piped: no colour\n{}", plain.all());
    let no_color = sandbox.project(&["operator", "status"], &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]);
    assert!(!no_color.code(0).stdout.contains(esc), "NO_COLOR\n{}", no_color.all());
    let never = sandbox.project(&["operator", "status", "--color", "never"], &[("CLICOLOR_FORCE", "1")]);
    assert!(!never.code(0).stdout.contains(esc), "--color never\n{}", never.all());

    for cmd in ["ops", "operator status", "operator log", "lifecycle diff site --live", "completions bash", "--help"] {
        let script = format!("set -o pipefail; {PROJECT} {cmd} | head -1");
        let out = sandbox.run_in("bash", &sandbox.dir, &["-c", &script], &[]);
        out.code(0);
        assert_eq!(out.stdout.lines().count(), 1, "{cmd}: {}", out.all());
        assert!(!out.stderr.contains("panicked") && !out.stderr.contains("Broken pipe"), "{cmd}: {}", out.all());
    }
}

#[test]
fn since_takes_a_relative_time() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["tick", "site-converge"], &[("CHANT_NOW", "2026-03-01T10:00:00.000Z")]).code(0);
    let entries = |now: &str, since: &str| {
        let out = sandbox.stock(&["operator", "log", "--since", since, "--json"], &[("CHANT_NOW", now)]);
        let doc = out.code(0).json();
        doc["entries"].as_array().map(Vec::len).unwrap_or_else(|| panic!("{doc}"))
    };
    assert!(entries("2026-03-01T10:30:00.000Z", "1h") > 0, "a tick 30 minutes ago is within 1h");
    assert_eq!(entries("2026-03-01T12:00:00.000Z", "1h"), 0, "a tick 2 hours ago is not");
    assert!(entries("2026-03-02T09:00:00.000Z", "2d") > 0);
    let out = sandbox.stock(&["operator", "log", "--since", "soon"], &[]);
    out.code(2);
    assert!(out.stderr.contains("or a time ago such as 1h, 30m, 2d"), "{}", out.all());
}
