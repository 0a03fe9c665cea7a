use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    observe: sprite_services_observe(box = true),
    rules: [
        when!(gt(adopt_count, 0) => report("unowned"), why = "resource mode has no adopt_count"),
    ],
}

fn main() {}
