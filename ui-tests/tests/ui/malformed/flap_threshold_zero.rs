use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w", flap_threshold = 0),
    ],
}

fn main() {}
