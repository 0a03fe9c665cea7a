//! Golden copies of this example's op.json: any change to the bytes the macros emit for its ops
//! (a field, an order, a line number) shows up in review as a diff of `tests/golden/`.
//!
//! After an intended change, refresh them from the build's exports:
//! `cp target/chant/ops/chant-examples/*.json examples/staging/tests/golden/`.

use chant_examples as _;

#[test]
fn embedded_op_json_matches_the_golden_copies() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let ops = chant::registry::ops().into_iter().filter(|o| o.krate == "chant-examples").map(|o| (o.name, o.json));
    chant_testkit::golden::assert_ops_match(&dir, "chant-examples", ops);
}
