use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    windows: [
        deny("*/61 * * * *", "8h"),
        allow("0 22 * * *", "1.5h"),
        deny("0 9 * * 1-5", "0s"),
        permit("0 9 * * 1-5", "8h"),
    ],
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
