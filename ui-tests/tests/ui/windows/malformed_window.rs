use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    windows: [deny("0 9 * * 1-5"), allow("0 22 * * *", 6)],
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

converge_op! {
    name: "docs-converge",
    env: "docs",
    windows: deny("0 9 * * 1-5", "8h"),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
