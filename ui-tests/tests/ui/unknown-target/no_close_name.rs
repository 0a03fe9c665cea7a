use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: apply,
    rules: [
        when!(eq(status, "drifted") => run("rebuild-everything"), why = "nothing is called that"),
    ],
}

fn main() {}
