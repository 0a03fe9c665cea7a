use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(adopt_count, "1") => report("?"), why = "a count is a number"),
    ],
}

fn main() {}
