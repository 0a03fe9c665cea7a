use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    scheduel: "*/10 * * * *",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
