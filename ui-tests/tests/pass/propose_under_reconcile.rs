//! `propose()` of a mutating or destructive Op compiles under `reconcile` and `apply`, and its
//! table embeds the action as `{"kind": "propose", "op": ...}`.

use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
}

op! {
    name: "staging-teardown",
    overview: "Tear staging down.",
    env: "staging",
    phases: [ phase("Teardown", [ teardown(env = "staging") ]) ],
}

converge_op! {
    name: "staging-review",
    env: "staging",
    dial: reconcile,
    rules: [
        when!(eq(status, "drifted") => propose("staging-apply"), id = "drift-propose", why = "A person reviews every change."),
        when!(gt(delete_count, 0) => propose("staging-teardown"), id = "teardown-propose", why = "Tearing down is proposed, never done."),
    ],
}

converge_op! {
    name: "staging-mixed",
    env: "staging",
    dial: apply,
    rules: [ when!(eq(status, "drifted") => propose("staging-apply"), why = "Apply may still ask first.") ],
}

fn main() {
    let op = chant::registry::find("staging-review").unwrap();
    let doc: serde_json::Value = serde_json::from_str(op.json).unwrap();
    assert_eq!(doc["converge"]["rules"][0]["then"], serde_json::json!({"kind": "propose", "op": "staging-apply"}));
}
