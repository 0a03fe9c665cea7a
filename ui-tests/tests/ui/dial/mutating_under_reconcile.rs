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
    dial: reconcile,
    rules: [
        when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply", why = "reconcile proposes"),
    ],
}

fn main() {}
