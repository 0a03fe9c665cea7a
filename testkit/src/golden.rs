//! Golden copies of a crate's op.json: one file per registered op under `tests/golden/`, each
//! byte-equal to the op.json the macros embedded, so any change to the bytes (a field, an order,
//! a line number) shows up in review as a diff.

use std::path::Path;

/// Asserts that `dir` holds exactly one `<name>.json` per op of `ops` (name, embedded op.json),
/// each byte-equal to it; the message says to refresh from `target/chant/ops/<krate>/`.
pub fn assert_ops_match<'a>(dir: &Path, krate: &str, ops: impl IntoIterator<Item = (&'a str, &'a str)>) {
    let mut ops: Vec<(&str, &str)> = ops.into_iter().collect();
    ops.sort_by_key(|(name, _)| *name);
    let mut golden: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    golden.sort();
    let expected: Vec<String> = ops.iter().map(|(name, _)| format!("{name}.json")).collect();
    assert_eq!(golden, expected, "one golden file per registered op");
    for (name, json) in ops {
        let path = dir.join(format!("{name}.json"));
        let want = std::fs::read_to_string(&path).unwrap();
        assert!(
            want == json,
            "{} differs from the embedded op.json; if the change is intended, refresh it from target/chant/ops/{krate}/",
            path.display()
        );
    }
}
