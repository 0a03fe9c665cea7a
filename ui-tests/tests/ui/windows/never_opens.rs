use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    windows: [allow("0 0 30 2 *", "1h")],
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
