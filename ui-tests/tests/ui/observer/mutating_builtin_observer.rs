use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    observe: sprite_service_restart(box = true),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "resource mode"),
    ],
}

fn main() {}
