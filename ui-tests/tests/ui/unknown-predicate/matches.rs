use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(matches(status, ".*") => report("?"), why = "regexes are not evaluable"),
    ],
}

fn main() {}
