//! Fails when a file under `tests/integration/` is not declared as a module of the one test
//! binary, so no test file is silently skipped.

#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem == "main" {
            continue;
        }
        let declared = format!("mod {stem};");
        assert!(main.contains(&declared), "tests/integration/{stem} is not declared in main.rs: add `{declared}`");
    }
}

/// The project layer holds an env's lexicons as a list and knows none by name: no registered
/// lexicon's name (nor the box's module, `sprite`) appears in `project.rs`, code or prose.
#[test]
fn the_project_layer_names_no_lexicon() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../chant-runtime/src/project.rs");
    let source = std::fs::read_to_string(&path).unwrap().to_lowercase();
    let registered = chant::lexicon::registry::registrations().unwrap();
    assert!(registered.len() >= 2, "{registered:?}");
    for name in registered.iter().map(|r| r.lexicon).chain(["sprite"]) {
        assert!(!source.contains(name), "chant-runtime/src/project.rs names the lexicon {name}");
    }
}
