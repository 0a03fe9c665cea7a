use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), id = "Drift Report", why = "w"),
    ],
}

fn main() {}
