use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => rnu("staging-apply"), why = "w"),
    ],
}

fn main() {}
