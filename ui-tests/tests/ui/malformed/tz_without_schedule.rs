use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    tz: "Europe/Berlin",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
