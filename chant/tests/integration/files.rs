//! The files lexicon on a real filesystem: confinement, the tri-state (including unreadable paths
//! produced for real even as root), drift on content and mode, atomic never-deleting apply, and
//! re-apply convergence.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use chant::lexicon::files::{FilesDeclaration, FilesError, FilesLexicon};
use chant::model::{EnvStatus, UnobservedReason};
use chant::observe::{ChangeAction, ChangeSet, EnvAssessment, LastApply, Ownership, assess};

fn declaration() -> FilesDeclaration {
    FilesDeclaration::new()
        .file("app.conf", "port = 8080\n", 0o640)
        .file("conf.d/extra.conf", "debug = false\n", 0o600)
        .file("bin/deep/start.sh", "#!/bin/sh\nexec app\n", 0o775)
}

fn lexicon(root: &Path, last: LastApply) -> FilesLexicon {
    FilesLexicon::new("staging", Some(root.to_path_buf()), declaration()).with_last_apply(last)
}

fn assess_files(lex: &FilesLexicon, delete_counts_as_drift: bool) -> EnvAssessment {
    assess("staging", &[lex.component_input(delete_counts_as_drift).unwrap()])
}

fn actions(cs: &ChangeSet) -> Vec<(String, ChangeAction)> {
    cs.entries.iter().map(|e| (e.name.clone(), e.action)).collect()
}

fn action(cs: &ChangeSet, name: &str) -> ChangeAction {
    cs.entry(name).unwrap_or_else(|| panic!("no entry {name} in {cs:#?}")).action
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Applies the declaration and returns the lexicon that knows about that apply.
fn applied(root: &Path) -> FilesLexicon {
    let record = lexicon(root, LastApply::none()).apply().unwrap();
    lexicon(root, record.last_apply())
}

#[test]
fn missing_root_is_absent_and_first_apply_converges() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("estate/staging");

    let before = assess_files(&lexicon(&root, LastApply::none()), false);
    assert_eq!(before.symptom.status, EnvStatus::Unrecorded);
    assert_eq!(before.symptom.create_count, 3);
    let cs = &before.change_sets[0];
    assert!(cs.entries.iter().all(|e| e.action == ChangeAction::Create && e.evidence.observed));
    assert_eq!(
        cs.entry("app.conf").unwrap().queried.as_deref(),
        Some(root.join("app.conf").display().to_string().as_str()),
        "an absence says where it looked"
    );

    let record = lexicon(&root, LastApply::none()).apply().unwrap();
    assert_eq!(record.env, "staging");
    assert_eq!(record.component, "files");
    assert_eq!(record.binding, root.display().to_string());
    assert_eq!(record.owned, ["app.conf", "bin/deep/start.sh", "conf.d/extra.conf"]);
    assert_eq!(record.written, record.owned);
    assert_eq!(record.digest, declaration().digest().unwrap());

    assert_eq!(fs::read_to_string(root.join("app.conf")).unwrap(), "port = 8080\n");
    assert_eq!(fs::read_to_string(root.join("bin/deep/start.sh")).unwrap(), "#!/bin/sh\nexec app\n");
    // Explicit modes, whatever the umask.
    assert_eq!(mode(&root.join("app.conf")), 0o640);
    assert_eq!(mode(&root.join("conf.d/extra.conf")), 0o600);
    assert_eq!(mode(&root.join("bin/deep/start.sh")), 0o775);
    // No temporary file is left behind.
    for dir in [root.clone(), root.join("conf.d"), root.join("bin/deep")] {
        for entry in fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.contains("chant-tmp"), "temporary file left in {}: {name}", dir.display());
        }
    }

    // Re-apply converges: the second observation is all noop and the env reconciled.
    let after = assess_files(&lexicon(&root, record.last_apply()), false);
    assert_eq!(after.symptom.status, EnvStatus::Reconciled, "{:#?}", after.symptom);
    assert!(after.change_sets[0].entries.iter().all(|e| e.action == ChangeAction::Noop));
    assert!(after.change_sets[0].entries.iter().all(|e| e.ownership == Some(Ownership::Owned)));
    assert_eq!(after.symptom.total_count, 3);
    // And a second apply writes nothing.
    let again = lexicon(&root, record.last_apply()).apply().unwrap();
    assert!(again.written.is_empty(), "{:?}", again.written);
    assert_eq!(again.owned, record.owned);
}

#[test]
fn an_edited_file_is_an_update_and_apply_restores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lex = applied(root);

    fs::write(root.join("app.conf"), "port = 9999\n").unwrap();
    let drifted = assess_files(&lex, false);
    assert_eq!(drifted.symptom.status, EnvStatus::Drifted);
    assert_eq!(drifted.symptom.update_count, 1);
    let entry = drifted.change_sets[0].entry("app.conf").unwrap();
    assert_eq!(entry.action, ChangeAction::Update);
    assert_eq!(entry.deltas.len(), 1);
    assert_eq!(entry.deltas[0].property, "content");

    let record = lex.apply().unwrap();
    assert_eq!(record.written, ["app.conf"]);
    assert_eq!(fs::read_to_string(root.join("app.conf")).unwrap(), "port = 8080\n");
    assert_eq!(assess_files(&lex, false).symptom.status, EnvStatus::Reconciled);
}

#[test]
fn a_mode_change_alone_is_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lex = applied(root);

    fs::set_permissions(root.join("bin/deep/start.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let drifted = assess_files(&lex, false);
    let entry = drifted.change_sets[0].entry("bin/deep/start.sh").unwrap();
    assert_eq!(entry.action, ChangeAction::Update);
    assert_eq!(
        (entry.deltas[0].property.as_str(), entry.deltas[0].declared.as_str(), entry.deltas[0].live.as_deref()),
        ("mode", "0775", Some("0644"))
    );
    assert_eq!(lex.apply().unwrap().written, ["bin/deep/start.sh"]);
    assert_eq!(mode(&root.join("bin/deep/start.sh")), 0o775);
}

#[test]
fn a_deleted_file_is_a_create_and_apply_restores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lex = applied(root);
    fs::remove_dir_all(root.join("conf.d")).unwrap();

    let drifted = assess_files(&lex, false);
    assert_eq!(drifted.symptom.status, EnvStatus::Drifted, "create makes a recorded component drifted");
    assert_eq!(action(&drifted.change_sets[0], "conf.d/extra.conf"), ChangeAction::Create);
    lex.apply().unwrap();
    assert_eq!(fs::read_to_string(root.join("conf.d/extra.conf")).unwrap(), "debug = false\n");
}

#[test]
fn apply_is_a_rename_not_an_in_place_write() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lex = applied(root);
    fs::write(root.join("app.conf"), "edited\n").unwrap();
    // A hard link to the edited inode: an in-place write would change it too.
    fs::hard_link(root.join("app.conf"), tmp.path().join("old-inode")).unwrap();
    let before = fs::metadata(root.join("app.conf")).unwrap().ino();

    lex.apply().unwrap();
    assert_ne!(fs::metadata(root.join("app.conf")).unwrap().ino(), before);
    assert_eq!(fs::read_to_string(tmp.path().join("old-inode")).unwrap(), "edited\n");
    assert_eq!(fs::read_to_string(root.join("app.conf")).unwrap(), "port = 8080\n");
}

#[test]
fn apply_never_deletes_and_an_undeclared_owned_file_is_a_delete_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let record = lexicon(root, LastApply::none()).apply().unwrap();

    // The declaration drops conf.d/extra.conf.
    let smaller = FilesDeclaration::new().file("app.conf", "port = 8080\n", 0o640).file(
        "bin/deep/start.sh",
        "#!/bin/sh\nexec app\n",
        0o775,
    );
    let lex = FilesLexicon::new("staging", Some(root.to_path_buf()), smaller).with_last_apply(record.last_apply());
    let assessed = assess_files(&lex, false);
    let entry = assessed.change_sets[0].entry("conf.d/extra.conf").unwrap();
    assert_eq!((entry.action, entry.ownership), (ChangeAction::Delete, Some(Ownership::Owned)));
    assert!(!entry.evidence.declared && entry.evidence.in_last_apply);
    assert_eq!(assessed.symptom.delete_count, 1);
    assert_eq!(assessed.symptom.status, EnvStatus::Reconciled, "a delete is drift only in owned-only mode");
    assert_eq!(assess_files(&lex, true).symptom.status, EnvStatus::Drifted);

    let second = lex.apply().unwrap();
    assert!(root.join("conf.d/extra.conf").exists(), "default-mode apply deletes nothing");
    assert_eq!(second.owned, ["app.conf", "bin/deep/start.sh"]);

    // After that apply, the leftover is no longer owned: adopt, never delete.
    let lex = lex.with_last_apply(second.last_apply());
    // Not in the last apply and not declared: the lexicon is not told about it at all.
    assert!(assess_files(&lex, false).change_sets[0].entry("conf.d/extra.conf").is_none());
}

#[test]
fn a_declared_file_that_predates_chant_is_foreign() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("app.conf"), "port = 8080\n").unwrap();
    fs::set_permissions(root.join("app.conf"), fs::Permissions::from_mode(0o640)).unwrap();
    let assessed = assess_files(&lexicon(root, LastApply::none()), false);
    let entry = assessed.change_sets[0].entry("app.conf").unwrap();
    assert_eq!((entry.action, entry.ownership), (ChangeAction::Noop, Some(Ownership::Foreign)));
    assert!(assessed.symptom.components[0].live);
    assert_eq!(assessed.symptom.status, EnvStatus::Unrecorded);
}

#[test]
fn recorded_but_nothing_present_is_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("gone");
    let lex = lexicon(&root, LastApply::recorded(["app.conf"]));
    let assessed = assess_files(&lex, false);
    // Every declared file is missing: creates, so drifted outranks stale.
    assert_eq!(assessed.symptom.status, EnvStatus::Drifted);
    let empty = FilesLexicon::new("staging", Some(root), FilesDeclaration::new())
        .with_last_apply(LastApply::recorded(Vec::<String>::new()));
    assert_eq!(assess_files(&empty, false).symptom.status, EnvStatus::Stale);
}

fn unobserved_detail(lex: &FilesLexicon, name: &str) -> String {
    let observation = lex.observe().unwrap();
    assert!(!observation.resources.contains_key(name), "{name} must not be present");
    let verdict =
        observation.unobserved.get(name).unwrap_or_else(|| panic!("{name} is not unobserved: {observation:#?}"));
    assert_eq!(verdict.reason, UnobservedReason::ReadFailed);
    verdict.detail.clone().unwrap()
}

#[test]
fn a_directory_where_a_file_is_declared_is_read_failed_and_apply_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::create_dir_all(root.join("app.conf/inner")).unwrap();
    let lex = lexicon(root, LastApply::none());

    let detail = unobserved_detail(&lex, "app.conf");
    assert!(detail.contains("is a directory"), "{detail}");
    let assessed = assess_files(&lex, false);
    assert_eq!(assessed.symptom.status, EnvStatus::Unknown);
    assert_eq!(assessed.symptom.unobserved_reasons, [UnobservedReason::ReadFailed]);
    assert_eq!(action(&assessed.change_sets[0], "app.conf"), ChangeAction::Unobserved);
    assert_eq!(action(&assessed.change_sets[0], "conf.d/extra.conf"), ChangeAction::Create);

    let err = lex.apply().unwrap_err();
    assert!(matches!(&err, FilesError::Refused { path, .. } if path == "app.conf"), "{err}");
    assert!(!root.join("conf.d").exists(), "a refused apply writes nothing");
    assert!(root.join("app.conf/inner").is_dir(), "and deletes nothing");
}

#[test]
fn a_symlink_loop_is_read_failed_not_absent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // A self loop at the file, and a two-link loop where a directory is expected.
    symlink("app.conf", root.join("app.conf")).unwrap();
    symlink("b", root.join("conf.d")).unwrap();
    symlink("conf.d", root.join("b")).unwrap();
    let lex = lexicon(root, LastApply::none());

    let detail = unobserved_detail(&lex, "app.conf");
    assert!(detail.contains("symbolic links") || detail.contains("loop"), "{detail}");
    let detail = unobserved_detail(&lex, "conf.d/extra.conf");
    assert!(detail.contains("conf.d"), "{detail}");
    let assessed = assess_files(&lex, false);
    assert_eq!(assessed.symptom.status, EnvStatus::Unknown);
    assert_eq!(assessed.symptom.unobserved_count, 2);
    assert_eq!(assessed.symptom.create_count, 1, "only bin/deep/start.sh is really absent");
    assert!(lex.apply().is_err());
    assert!(fs::symlink_metadata(root.join("app.conf")).unwrap().file_type().is_symlink());
}

#[test]
fn escapes_through_dotdot_and_absolute_paths_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    fs::write(tmp.path().join("secret"), "outside\n").unwrap();

    for bad in ["../secret", "/etc/passwd", "a/../../secret", "./app.conf", "a//b"] {
        let decl = FilesDeclaration::new().file("ok.conf", "x", 0o644).file(bad, "pwned\n", 0o644);
        let lex = FilesLexicon::new("staging", Some(root.clone()), decl);
        let observation = lex.observe().unwrap();
        let verdict = &observation.unobserved[bad];
        assert_eq!(verdict.reason, UnobservedReason::ReadFailed);
        assert!(verdict.detail.as_deref().unwrap().contains("not confined"), "{bad}: {verdict:?}");
        let err = lex.apply().unwrap_err();
        assert!(matches!(&err, FilesError::InvalidPath { path, .. } if path == bad), "{bad}: {err}");
        assert!(!root.join("ok.conf").exists(), "{bad}: an invalid declaration writes nothing");
    }
    assert_eq!(fs::read_to_string(tmp.path().join("secret")).unwrap(), "outside\n");
}

#[test]
fn escapes_through_symlinks_are_read_failed_and_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("extra.conf"), "outside\n").unwrap();
    fs::write(outside.join("app.conf"), "outside\n").unwrap();
    // A directory component and a file that both lead out of the root.
    symlink(&outside, root.join("conf.d")).unwrap();
    symlink("../outside/app.conf", root.join("app.conf")).unwrap();
    let lex = lexicon(&root, LastApply::none());

    let detail = unobserved_detail(&lex, "conf.d/extra.conf");
    assert!(detail.contains("outside the root"), "{detail}");
    let detail = unobserved_detail(&lex, "app.conf");
    assert!(detail.contains("outside the root"), "{detail}");

    let err = lex.apply().unwrap_err();
    assert!(matches!(err, FilesError::Refused { .. }), "{err}");
    assert_eq!(fs::read_to_string(outside.join("extra.conf")).unwrap(), "outside\n");
    assert_eq!(fs::read_to_string(outside.join("app.conf")).unwrap(), "outside\n");
    assert!(!root.join("bin").exists(), "nothing written");
}

#[test]
fn symlinks_inside_the_root_are_followed_for_directories_and_replaced_for_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::create_dir_all(root.join("real-conf")).unwrap();
    symlink("real-conf", root.join("conf.d")).unwrap();
    fs::write(root.join("target.conf"), "port = 8080\n").unwrap();
    symlink("target.conf", root.join("app.conf")).unwrap();
    let lex = lexicon(root, LastApply::none());

    let observation = lex.observe().unwrap();
    assert_eq!(observation.resources["app.conf"].properties.get("type").unwrap(), "symlink");
    assert_eq!(
        &*observation.queried["conf.d/extra.conf"],
        fs::canonicalize(root).unwrap().join("real-conf/extra.conf").display().to_string(),
        "the queried address is where the read really went"
    );
    let assessed = assess_files(&lex, false);
    assert_eq!(action(&assessed.change_sets[0], "app.conf"), ChangeAction::Update);

    let record = lex.apply().unwrap();
    assert!(fs::symlink_metadata(root.join("app.conf")).unwrap().is_file(), "the link itself is replaced");
    assert_eq!(fs::read_to_string(root.join("target.conf")).unwrap(), "port = 8080\n");
    assert_eq!(fs::read_to_string(root.join("real-conf/extra.conf")).unwrap(), "debug = false\n");
    let lex = lexicon(root, record.last_apply());
    assert_eq!(assess_files(&lex, false).symptom.status, EnvStatus::Reconciled);
}

#[test]
fn a_socket_where_a_file_is_declared_is_read_failed_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let _listener = std::os::unix::net::UnixListener::bind(root.join("app.conf")).unwrap();
    let detail = unobserved_detail(&lexicon(root, LastApply::none()), "app.conf");
    assert!(detail.contains("not a regular file"), "{detail}");
}

#[test]
fn a_file_in_place_of_a_directory_is_read_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("conf.d"), "i am a file").unwrap();
    let detail = unobserved_detail(&lexicon(root, LastApply::none()), "conf.d/extra.conf");
    assert!(detail.contains("conf.d is not a directory"), "{detail}");
}

#[test]
fn an_unset_root_is_no_binding_for_every_entity_and_status_unknown() {
    let lex = FilesLexicon::new("staging", None, declaration()).with_last_apply(LastApply::recorded(["app.conf"]));
    let assessed = assess_files(&lex, false);
    assert_eq!(assessed.symptom.status, EnvStatus::Unknown);
    assert_eq!(assessed.symptom.unobserved_count, 3);
    assert_eq!(assessed.symptom.total_count, 3);
    assert_eq!(assessed.symptom.unobserved_reasons, [UnobservedReason::NoBinding]);
    for entry in &assessed.change_sets[0].entries {
        assert_eq!(entry.unobserved_reason, Some(UnobservedReason::NoBinding), "{}", entry.name);
        assert!(entry.unobserved_detail.as_deref().unwrap().contains("files_root"));
    }
    assert_eq!(
        actions(&assessed.change_sets[0]).into_iter().map(|(_, a)| a).collect::<Vec<_>>(),
        [ChangeAction::Unobserved; 3]
    );
    let err = lex.apply().unwrap_err();
    assert!(matches!(err, FilesError::NoBinding { .. }));
    assert!(err.to_string().contains("[env.staging]"), "{err}");
}

#[test]
fn a_root_that_is_a_file_makes_every_entity_read_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::write(&root, "not a dir").unwrap();
    let assessed = assess_files(&lexicon(&root, LastApply::none()), false);
    assert_eq!(assessed.symptom.status, EnvStatus::Unknown);
    assert_eq!(assessed.symptom.unobserved_count, 3);
    assert_eq!(assessed.symptom.create_count, 0, "never absent for anything that could not be read");
    let entry = assessed.change_sets[0].entry("app.conf").unwrap();
    assert!(entry.unobserved_detail.as_deref().unwrap().contains("not a directory"), "{entry:?}");
    assert!(lexicon(&root, LastApply::none()).apply().is_err());
}

#[test]
fn an_unreadable_previously_owned_file_is_unobserved_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let record = lexicon(root, LastApply::none()).apply().unwrap();
    let lex = FilesLexicon::new("staging", Some(root.to_path_buf()), FilesDeclaration::new())
        .with_last_apply(record.last_apply());
    fs::remove_file(root.join("app.conf")).unwrap();
    fs::create_dir(root.join("app.conf")).unwrap();
    let assessed = assess_files(&lex, false);
    let entry = assessed.change_sets[0].entry("app.conf").unwrap();
    assert_eq!(entry.action, ChangeAction::Unobserved);
    assert!(!entry.evidence.declared);
    assert_eq!(action(&assessed.change_sets[0], "conf.d/extra.conf"), ChangeAction::Delete);
}

#[test]
fn the_apply_record_carries_the_configured_binding_and_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("examples/estates/staging");
    let lex = lexicon(&root, LastApply::none()).with_binding("examples/estates/staging");
    let record = lex.apply().unwrap();
    assert_eq!(record.binding, "examples/estates/staging");

    let json = serde_json::to_string(&record).unwrap();
    assert!(
        json.starts_with(r#"{"env":"staging","component":"files","binding":"examples/estates/staging","written":["#)
    );
    let back: chant::lexicon::files::ApplyRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, record);

    assert_eq!(back.last_apply_for("examples/estates/staging"), record.last_apply());
    assert_eq!(back.last_apply_for("elsewhere"), LastApply::none(), "a re-bound root is not recorded");
}

#[test]
fn the_deep_read_after_a_thin_read_reports_that_read_and_the_next_one_reads_again() {
    use chant::observe::Lexicon;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("estate");
    let lex = applied(&root);
    let declared = lex.declared().unwrap();
    let content = |deep: &chant::observe::deep::DeepObservation, name: &str| {
        deep.entities[name].live["content"].as_str().unwrap().to_owned()
    };
    let alone = lex.observe_resources_deep(&declared).unwrap();
    let in_sync = content(&alone, "app.conf");
    assert_eq!(in_sync, alone.entities["app.conf"].declared["content"].as_str().unwrap());

    // The thin read sees the file in sync; an edit lands between it and the deep read, which
    // reports what the thin read saw: one reading of the estate, each file opened once.
    let thin = lex.describe_resources(&declared).unwrap();
    assert_eq!(thin.resources["app.conf"].properties.get("content").unwrap(), &in_sync);
    fs::write(root.join("app.conf"), "port = 1\n").unwrap();
    fs::remove_file(root.join("conf.d/extra.conf")).unwrap();
    let after_thin = lex.observe_resources_deep(&declared).unwrap();
    assert_eq!(content(&after_thin, "app.conf"), in_sync);
    assert!(after_thin.entities.contains_key("conf.d/extra.conf"));
    assert_eq!(after_thin.entities["bin/deep/start.sh"].live["mode"], "0775");

    // What the thin read kept is taken once: the next deep read looks at the files again.
    let again = lex.observe_resources_deep(&declared).unwrap();
    assert_ne!(content(&again, "app.conf"), in_sync);
    assert!(!again.entities.contains_key("conf.d/extra.conf"), "removed: not present");
    // A fresh thin read sees the edit too, and so does the deep read after it.
    let thin = lex.describe_resources(&declared).unwrap();
    assert_eq!(thin.resources["app.conf"].properties.get("content").unwrap(), &content(&again, "app.conf"));
    assert!(!thin.resources.contains_key("conf.d/extra.conf"));
    assert_eq!(content(&lex.observe_resources_deep(&declared).unwrap(), "app.conf"), content(&again, "app.conf"));
}

#[test]
fn teardown_removes_exactly_its_plan_and_keeps_an_owned_file_the_plan_did_not_list() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let lex = applied(root);
    fs::remove_file(root.join("conf.d/extra.conf")).unwrap();
    let plan = chant::observe::estate::teardown_plan(&lex, &[]);
    assert_eq!(plan.candidates.keys().collect::<Vec<_>>(), ["app.conf", "bin/deep/start.sh"]);
    // Between the plan and its execution an owned path is written again: not in the plan, kept.
    fs::write(root.join("conf.d/extra.conf"), "debug = true\n").unwrap();
    let (removal, record) = lex.teardown(&plan).unwrap();
    assert_eq!(removal.removed, ["app.conf", "bin/deep/start.sh"]);
    assert_eq!(removal.kept, ["conf.d/extra.conf: owned, and not in the plan"]);
    assert!(root.join("conf.d/extra.conf").exists(), "what the plan did not list stays");
    assert_eq!(record.last_apply_for(&root.display().to_string()), LastApply::none());
}

/// Stat-first reads (a long-running process does not read again a file whose `lstat` is
/// unchanged) stay honest: an edit that keeps the size and sets the modification time back, as
/// `touch -d` would, is found by the next observation, whether it is a full read (`0s`) or one
/// that trusts what it remembers (an hour between full reads): the edit moved the status change
/// time, which nobody can set back. What a stat cannot see at all is left to the full read, which
/// a unit test of `stat_first` holds.
#[test]
fn a_same_size_edit_with_its_modification_time_set_back_is_still_found() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("estate");
    let settled = applied(&root);
    let file = root.join("app.conf");
    // Older than the racy window, so the reads below remember the file's digest.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    for every in [std::time::Duration::from_secs(3_600), std::time::Duration::ZERO] {
        let lex = settled.clone().with_full_read_every(every);
        assert_eq!(assess_files(&lex, false).symptom.status, EnvStatus::Reconciled, "{every:?}");
        assert_eq!(assess_files(&lex, false).symptom.status, EnvStatus::Reconciled, "{every:?}: remembered");

        let before = fs::metadata(&file).unwrap();
        fs::write(&file, "port = 9090\n").unwrap();
        let edited = fs::File::options().write(true).open(&file).unwrap();
        edited.set_modified(before.modified().unwrap()).unwrap();
        drop(edited);
        let after = fs::metadata(&file).unwrap();
        assert_eq!(
            (after.len(), after.mtime(), after.mtime_nsec()),
            (before.len(), before.mtime(), before.mtime_nsec())
        );

        let found = assess_files(&lex, false);
        assert_eq!(found.symptom.status, EnvStatus::Drifted, "{every:?}");
        assert_eq!(action(&found.change_sets[0], "app.conf"), ChangeAction::Update);
        // Put back (the next round starts in sync again), past the racy window again.
        fs::write(&file, "port = 8080\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2_100));
    }
}

#[test]
fn files_full_read_must_be_a_duration() {
    use chant::lexicon::{Binding, Declaration};
    let values = std::collections::BTreeMap::from([
        ("files_root".to_owned(), "estate".to_owned()),
        ("files_full_read".to_owned(), "1.5h".to_owned()),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let binding = Binding::new("staging", "p", tmp.path(), &values);
    let err = declaration().bind(&binding, None).unwrap_err().to_string();
    assert!(err.contains("files_full_read") && err.contains("[env.staging]"), "{err}");
    let values = std::collections::BTreeMap::from([("files_full_read".to_owned(), "90s".to_owned())]);
    let binding = Binding::new("staging", "p", tmp.path(), &values);
    let lex = declaration().bind(&binding, None).unwrap();
    assert_eq!(lex.full_read_every(), std::time::Duration::from_secs(90));
    assert_eq!(FilesLexicon::new("e", None, declaration()).full_read_every(), chant::lexicon::files::DEFAULT_FULL_READ);
}
