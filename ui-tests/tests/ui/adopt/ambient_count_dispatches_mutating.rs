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
        when!(gt(ambient_count, 0) => run("staging-apply"), id = "ambient-apply", why = "an ambient resource is never claimed"),
    ],
}

fn main() {}
