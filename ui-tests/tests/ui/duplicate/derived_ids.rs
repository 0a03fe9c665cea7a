use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "first"),
        when!(eq(status, "drifted") => report("drifted"), why = "the same rule twice"),
    ],
}

fn main() {}
