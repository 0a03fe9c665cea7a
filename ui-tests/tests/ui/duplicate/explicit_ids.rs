use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "drifted") => report("a"), id = "drift", why = "first"),
        when!(eq(status, "stale") => report("b"), id = "drift", why = "second"),
    ],
}

fn main() {}
