//! The op.json export seen from cargo: `cargo build` writes `$CHANT_OPS_DIR/<crate>/<op>.json`,
//! writes it back after it is deleted or hand-edited, updates it when a rule changes, never makes
//! the next build dirty, and fails naming the path when it cannot write.
//!
//! Builds a scratch project with the real cargo (`chant_testkit::scratch`); the first run compiles the
//! macro crate's dependencies once into `target/tmp`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chant_testkit::scratch::Scratch;

fn source(budget: u32) -> String {
    format!(
        r#"
use chant::prelude::*;

op! {{
    name: "scratch-apply",
    overview: "Apply.",
    phases: [ phase("Apply", [ apply(env = "scratch") ]) ],
}}

converge_op! {{
    name: "scratch-converge",
    env: "scratch",
    dial: apply,
    budget: {budget},
    rules: [
        when!(eq(status, "drifted") => run("scratch-apply"), why = "re-apply on drift"),
    ],
}}
"#
    )
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn exports_are_written_kept_fresh_and_never_loop() {
    let s = Scratch::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), "export-freshness", &source(3));
    s.build_ok(&[]);
    let file = s.export("scratch-converge");
    let first = std::fs::read_to_string(&file).unwrap();
    assert!(first.contains("\"budget\": 3"), "{first}");
    assert!(s.export("scratch-apply").is_file());

    // A second build is fresh: the write did not dirty the crate.
    let out = s.build_ok(&["-v"]);
    assert!(stderr(&out).contains("Fresh user"), "{}", stderr(&out));

    // Deleted: the next build notices (the file is in the crate's dep-info) and writes it back.
    std::fs::remove_file(&file).unwrap();
    s.build_ok(&[]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // Hand-edited: rebuilt and overwritten.
    std::fs::write(&file, "{}\n").unwrap();
    s.build_ok(&[]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // A rule table edit updates the file, and the build after it is fresh again.
    s.set_source(&source(5));
    s.build_ok(&[]);
    assert!(std::fs::read_to_string(&file).unwrap().contains("\"budget\": 5"));
    let out = s.build_ok(&["-v"]);
    assert!(stderr(&out).contains("Fresh user"), "{}", stderr(&out));

    // Restore, so the next run of this test starts from the same state.
    s.set_source(&source(3));
    s.build_ok(&[]);
}

#[test]
fn an_unwritable_export_directory_fails_the_build_naming_the_path() {
    let s = Scratch::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), "export-blocked", &source(3));
    std::fs::create_dir_all(&s.ops_dir).unwrap();
    let blocker = s.ops_dir.join("user");
    let _ = std::fs::remove_dir_all(&blocker);
    std::fs::write(&blocker, "a file where the crate's export directory should be").unwrap();
    // Touch the source so the crate is rebuilt whatever a previous run left.
    s.set_source(&format!("{}\n// {:?}\n", source(3), std::time::SystemTime::now()));
    let out = s.build(&[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("cannot write the op.json export"), "{err}");
    assert!(err.contains(&s.export("scratch-converge").display().to_string()), "{err}");
    std::fs::remove_file(&blocker).unwrap();
}
