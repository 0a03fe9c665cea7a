//! Golden copies of the example's op.json: any change to the bytes the macros emit for these ops
//! shows up in review as a diff of `tests/golden/`.
//!
//! After an intended change, refresh them from the build's exports:
//! `cp target/chant/ops/chant-example-jsondocs/*.json examples/jsondocs/tests/golden/`.

#![allow(clippy::unwrap_used, clippy::panic)]

use chant_example_jsondocs as _;

#[test]
fn embedded_op_json_matches_the_golden_copies() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let ops: Vec<_> = chant::registry::ops().into_iter().filter(|o| o.krate == "chant-example-jsondocs").collect();
    let mut golden: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    golden.sort();
    let expected: Vec<String> = ops.iter().map(|o| format!("{}.json", o.name)).collect();
    assert_eq!(golden, expected, "one golden file per registered op");
    for op in ops {
        let path = dir.join(format!("{}.json", op.name));
        let want = std::fs::read_to_string(&path).unwrap();
        assert!(want == op.json, "{} differs from the embedded op.json", path.display());
    }
}
