use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w", flap_treshold = 2),
    ],
}

fn main() {}
