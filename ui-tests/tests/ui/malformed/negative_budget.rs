use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    budget: -1,
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
