use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    observe: shell(cmd = "./list-services.sh"),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "resource mode"),
    ],
}

fn main() {}
