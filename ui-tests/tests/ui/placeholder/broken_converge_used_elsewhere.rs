use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: aply,
    rules: [
        when!(eq(status, "drifted") => report("drifted")),
    ],
}

converge_op! {
    name: "staging-watch",
    env: "staging",
    rules: [
        when!(eq(status, "unknown") => run("staging-converge"), why = "tick the broken op from another"),
    ],
}

chant::main!(default = tick("staging-converge"));
