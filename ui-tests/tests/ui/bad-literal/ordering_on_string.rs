use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(gt(status, 1) => report("?"), why = "status is a string"),
    ],
}

fn main() {}
