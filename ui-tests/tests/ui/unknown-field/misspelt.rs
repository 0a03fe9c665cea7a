use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(stauts, "drifted") => report("drifted"), why = "typo in the field"),
    ],
}

fn main() {}
