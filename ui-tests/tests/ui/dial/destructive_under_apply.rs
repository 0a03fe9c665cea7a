use chant::prelude::*;

op! {
    name: "staging-teardown",
    overview: "Tear the staging env down.",
    env: "staging",
    phases: [ phase("Teardown", [ teardown(env = "staging") ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: apply,
    rules: [
        when!(eq(status, "stale") => run("staging-teardown"), id = "stale-teardown", why = "never unattended"),
    ],
}

fn main() {}
