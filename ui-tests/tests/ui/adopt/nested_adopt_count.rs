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
        when!(any_of(eq(status, "drifted"), all_of(gt(adopt_count, 0))) => run("staging-apply"), id = "mixed", why = "nested reads count too"),
    ],
}

fn main() {}
