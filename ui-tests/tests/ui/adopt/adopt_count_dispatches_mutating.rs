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
    dial: apply,
    rules: [
        when!(gt(adopt_count, 0) => run("staging-apply"), id = "adopt-apply", why = "never auto-claim"),
    ],
}

fn main() {}
