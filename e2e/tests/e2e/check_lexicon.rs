//! `dev check-lexicon`: the conformance suite and the ownership-channel check from the command
//! line. The files lexicon, bound to a real root, passes every check; the deliberately broken
//! `liar` lexicon of `e2e-broken-lexicon` fails, each failure naming its check and what broke.

use super::support::{Sandbox, config_with_roots};

/// The project binary with the broken `liar` lexicon (and a files env `site`).
const BROKEN: &str = env!("CARGO_BIN_EXE_e2e-broken-lexicon");

#[test]
fn the_files_lexicon_passes_every_check_on_a_real_root() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.tick("site-converge", &[]);
    let out = sandbox.project(&["dev", "check-lexicon", "files", "--env", "site"], &[]);
    out.code(0);
    assert!(out.stdout.starts_with("check-lexicon files (env site): 6 checks, 0 failed\n"), "{}", out.all());
    for check in ["read-paths", "ownership-channel", "observation", "probe-absent", "deep", "ambient"] {
        assert!(out.stdout.contains(&format!("  pass  {check}: ")), "{check}\n{}", out.all());
    }
    assert!(out.stdout.contains("pass  observation: 4 declared: 4 present, 0 unobserved, 0 absent"), "{}", out.all());
    let doc = sandbox.project(&["dev", "check-lexicon", "--env", "site", "--json"], &[]).code(0).json();
    assert_eq!(doc["failed"], 0, "{doc}");
    assert_eq!(doc["lexicons"][0]["checks"][0]["outcome"], "pass", "{doc}");
}

#[test]
fn a_broken_lexicon_fails_with_each_check_named() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.run_in(BROKEN, &sandbox.dir, &["dev", "check-lexicon", "liar"], &[]);
    out.code(1);
    let said = &out.stdout;
    assert!(said.starts_with("check-lexicon liar (env liar): 6 checks, 5 failed\n"), "{}", out.all());
    assert!(
        said.contains("FAIL  read-paths: lists observeResourcesDeep among its read paths, and no hook serves it"),
        "{}",
        out.all()
    );
    assert!(
        said.contains(
            "FAIL  ownership-channel: lexicon liar declares its ownership marker on observeResourcesDeep, which no hook serves"
        ),
        "{}",
        out.all()
    );
    assert!(said.contains("FAIL  probe-absent: chant-check-lexicon-probe-"), "{}", out.all());
    assert!(said.contains("FAIL  deep: lists observeResourcesDeep among its read paths but does not implement it"));
    assert!(
        said.contains("FAIL  ambient: reports ambient widget possible (ambientKinds) but implements no ambient read")
    );
    assert!(said.contains("pass  observation: "), "{}", out.all());

    // The same binary's files env is conformant; both at once fail as a whole.
    sandbox.run_in(BROKEN, &sandbox.dir, &["dev", "check-lexicon", "files"], &[]).code(0);
    let doc = sandbox.run_in(BROKEN, &sandbox.dir, &["dev", "check-lexicon", "--json"], &[]).code(1).json();
    assert_eq!(doc["failed"], 5, "{doc}");
}

#[test]
fn an_unknown_or_undeclared_lexicon_is_a_usage_error() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.project(&["dev", "check-lexicon", "filez"], &[]);
    assert!(
        out.code(2).stderr.contains("lexicon `filez` is not registered in this binary; did you mean `files`?"),
        "{}",
        out.all()
    );
    let out = sandbox.project(&["dev", "check-lexicon", "postgres", "--env", "site"], &[]);
    assert!(
        out.code(2).stderr.contains("nothing to check: env site does not declare lexicon `postgres`"),
        "{}",
        out.all()
    );
}
