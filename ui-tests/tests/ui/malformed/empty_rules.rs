use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [],
}

fn main() {}
