use chant::prelude::*;

op! {
    name: "staging-prune",
    overview: "Apply staging and delete what it owns but no longer declares.",
    phases: [ phase("Apply", [ apply(env = "staging", delete_mode = "owned-only") ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: apply,
    rules: [
        when!(eq(status, "drifted") => run("staging-prune"), id = "drift-prune", why = "owned-only deletes"),
    ],
}

fn main() {}
