use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    rules: [
        when!(gt(adoptCount, 0) => report("unowned"), why = "fields are snake_case"),
    ],
}

fn main() {}
