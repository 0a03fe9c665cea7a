//! One health vocabulary in every view: an op whose env cannot be fully observed is `unknown`
//! (with the count and the first reason) on the operator's line, in `operator status` (text and
//! JSON) and in `lifecycle diff`, never `status=ok`; a `[env.NAME]` that nothing declares is an
//! error naming the declared envs.

use super::support::{Sandbox, config_with_roots};

#[test]
fn an_env_that_cannot_be_observed_is_unknown_in_every_view() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    std::fs::remove_file(sandbox.path("estates/site/motd.txt")).unwrap();
    std::fs::create_dir(sandbox.path("estates/site/motd.txt")).unwrap();

    let out = sandbox.project(&["operator", "--once", "--env", "site"], &[]);
    let line = out.all().lines().find(|l| l.starts_with("operator: site-converge@site")).unwrap_or_default().to_owned();
    assert!(line.contains("ticked=1 status=unknown(1 unobserved, first: read-failed)"), "{}", out.all());
    assert!(!out.all().contains("status=ok"), "{}", out.all());

    let text = sandbox.project(&["operator", "status", "--env", "site"], &[]);
    text.code(0);
    assert!(
        text.stdout.contains(
            "site-converge (site)\n  health    : unknown, observed just now (1 unobserved, first: read-failed)\n"
        ),
        "{}",
        text.all()
    );
    let json = sandbox.project(&["operator", "status", "--env", "site", "--json"], &[]);
    let doc = json.code(0).json();
    let row = doc["ops"].as_array().unwrap().iter().find(|r| r["op"] == "site-converge").unwrap();
    assert_eq!(row["health"]["state"], "unknown", "{doc}");
    assert_eq!(row["health"]["detail"], "1 unobserved, first: read-failed", "{doc}");

    let diff = sandbox.project(&["lifecycle", "diff", "site", "--live", "--json"], &[]);
    assert_eq!(diff.code(0).json()["health"], "unknown");

    // Restored: the next tick observes everything and the views say in-sync... after the apply.
    std::fs::remove_dir(sandbox.path("estates/site/motd.txt")).unwrap();
    sandbox.project(&["run", "site-apply"], &[]).code(0);
    let out = sandbox.project(&["operator", "--once", "--env", "site"], &[]);
    assert!(out.all().contains("operator: site-converge@site ticked=1 status=in-sync"), "{}", out.all());
    let text = sandbox.project(&["operator", "status", "--env", "site"], &[]);
    assert!(text.stdout.contains("  health    : in-sync, observed just now\n"), "{}", text.all());
}

#[test]
fn a_binding_no_declaration_uses_is_an_error_naming_the_declared_envs() {
    let sandbox = Sandbox::new(&config_with_roots(&["site", "stie"]));
    let out = sandbox.project(&["lifecycle", "diff", "site", "--live"], &[]);
    out.code(2);
    assert!(out.stderr.contains("[env.stie] binds an env no declaration uses (declared envs: "), "{}", out.all());
    assert!(out.stderr.contains("site"), "{}", out.all());
}

#[test]
fn a_tick_of_an_unbound_env_says_what_it_could_not_read_and_which_key_to_set() {
    // No `[env.blind]`: every declared file is unobserved with `no-binding`.
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let out = sandbox.project(&["tick", "blind-converge"], &[]);
    out.code(0);
    assert!(out.stdout.starts_with("unknown (2 unobserved, first: no-binding)"), "{}", out.all());
    // The headline has the count and the first reason; the lines above it say why, per
    // component, with the key to set.
    let line = out.stderr.lines().find(|l| l.trim_start().starts_with("files unknown:")).unwrap_or_default();
    assert!(line.contains("2 unobserved"), "{}", out.all());
    assert!(line.contains("set `files_root` under `[env.blind]` in chant.toml"), "{}", out.all());
}
