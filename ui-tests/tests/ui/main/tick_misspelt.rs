use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(status, "unknown") => report("environment could not be fully observed"), why = "unknown never remediates."),
    ],
}

chant::main!(default = tick("staging-converg"));
