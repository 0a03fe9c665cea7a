use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifed") => report("?"), why = "typo in the value"),
    ],
}

fn main() {}
