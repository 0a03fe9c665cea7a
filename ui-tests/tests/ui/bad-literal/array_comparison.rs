use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(eq(components, "files") => report("?"), why = "an array is only truthy or falsy"),
    ],
}

fn main() {}
