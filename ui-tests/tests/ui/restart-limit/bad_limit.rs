use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    restart_limit: limit(0, within = "10 minutes"),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

converge_op! {
    name: "docs-converge",
    env: "docs",
    restart_limit: limt(3, within = "10m"),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

converge_op! {
    name: "box-converge",
    env: "box",
    restart_limit: limit(3, inside = "10m"),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

converge_op! {
    name: "web-converge",
    env: "web",
    restart_limit: limit(3),
    rules: [
        when!(eq(status, "drifted") => report("drifted"), why = "w"),
    ],
}

fn main() {}
