use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: observe,
    rules: [
        when!(eq(stauts, "drifted") => run("staging-apply"), id = "typo-field", why = "a local error"),
        when!(eq(status, "drifted") => run("staging-aply"), id = "unknown-target", why = "no such op"),
        when!(eq(status, "stale") => run("staging-apply"), id = "drift-apply", why = "mutating under observe"),
    ],
}

fn main() {}
