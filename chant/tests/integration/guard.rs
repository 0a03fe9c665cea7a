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
