use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(|s| s.status == "drifted" => report("?"), why = "closures cannot survive into op.json"),
    ],
}

fn main() {}
