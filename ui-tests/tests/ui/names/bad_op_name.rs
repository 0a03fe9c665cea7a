use chant::prelude::*;

converge_op! {
    name: "Staging_Converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
