use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    schedule: "0 0 30 2 *",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
