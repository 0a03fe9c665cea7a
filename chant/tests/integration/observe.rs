//! The observation conformance suite, run on the files lexicon over real files: present, absent,
//! and every unobserved case the files lexicon can produce, each made for real.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use chant::lexicon::files::{FilesDeclaration, FilesLexicon};
use chant::model::UnobservedReason;
use chant::observe::conformance::{Scenario, Suite};
use chant::observe::{DeclaredEntity, LastApply, Lexicon};

fn declaration() -> FilesDeclaration {
    FilesDeclaration::new()
        .file("present.conf", "x\n", 0o644)
        .file("missing.conf", "x\n", 0o644)
        .file("dir.conf", "x\n", 0o644)
        .file("loop.conf", "x\n", 0o644)
        .file("escape/inner.conf", "x\n", 0o644)
        .file("nested/missing/deep.conf", "x\n", 0o644)
}

/// A root holding one present file, one directory where a file is declared, a symlink loop and
/// a symlink out of the root.
fn estate(tmp: &Path) -> PathBuf {
    let root = tmp.join("root");
    fs::create_dir_all(root.join("dir.conf")).unwrap();
    fs::create_dir_all(tmp.join("outside")).unwrap();
    fs::write(root.join("present.conf"), "old\n").unwrap();
    symlink("loop.conf", root.join("loop.conf")).unwrap();
    symlink(tmp.join("outside"), root.join("escape")).unwrap();
    root
}

fn scenario(name: &str, root: Option<PathBuf>, last: LastApply) -> Scenario {
    let lexicon = FilesLexicon::new("staging", root, declaration()).with_last_apply(last);
    let declared: Vec<DeclaredEntity> = lexicon.declared().unwrap();
    Scenario::new(name, declared, move |declared| lexicon.describe_resources(declared))
}

#[test]
fn the_files_lexicon_keeps_the_observation_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let root = estate(tmp.path());
    let missing_root = tmp.path().join("no-such-root");
    let file_root = tmp.path().join("file-root");
    fs::write(&file_root, "").unwrap();

    let suite = Suite::new("files")
        .scenario(
            scenario("a mixed estate", Some(root.clone()), LastApply::none())
                .expect_present(["present.conf"])
                .expect_absent(["missing.conf", "nested/missing/deep.conf"])
                .expect_unobserved_because("dir.conf", UnobservedReason::ReadFailed)
                .expect_unobserved_because("loop.conf", UnobservedReason::ReadFailed)
                .expect_unobserved_because("escape/inner.conf", UnobservedReason::ReadFailed),
        )
        .scenario(
            scenario("an owned leftover of the last apply", Some(root.clone()), LastApply::recorded(["gone.conf"]))
                .expect_present(["present.conf"])
                .expect_absent(["missing.conf"]),
        )
        .scenario(scenario("the root does not exist", Some(missing_root), LastApply::none()).expect_absent([
            "present.conf",
            "missing.conf",
            "dir.conf",
            "loop.conf",
        ]))
        .scenario(
            scenario("no root bound", None, LastApply::none())
                .expect_unobserved_because("present.conf", UnobservedReason::NoBinding)
                .expect_unobserved_because("missing.conf", UnobservedReason::NoBinding),
        )
        .scenario(
            scenario("the root is a file (whole-lexicon failure)", Some(file_root), LastApply::none())
                .expect_unobserved_because("present.conf", UnobservedReason::ReadFailed)
                .expect_unobserved_because("missing.conf", UnobservedReason::ReadFailed),
        );
    if let Err(e) = suite.run() {
        panic!("{e}");
    }
}

#[test]
fn the_suite_catches_a_reader_that_reports_an_unreadable_file_as_absent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = estate(tmp.path());
    let lexicon = FilesLexicon::new("staging", Some(root), declaration());
    let declared = lexicon.declared().unwrap();
    // A broken reader: drops every unobserved verdict, so unreadable files look absent.
    let suite = Suite::new("files-broken").scenario(
        Scenario::new("lies about holes", declared, move |declared| {
            let mut observation = lexicon.describe_resources(declared)?;
            observation.unobserved.clear();
            Ok(observation)
        })
        .expect_unobserved(["dir.conf", "loop.conf"]),
    );
    let err = suite.run().unwrap_err();
    assert_eq!(err.violations.len(), 2, "{err}");
    assert!(err.violations.iter().all(|v| v.rule == "expect-unobserved"));
}
