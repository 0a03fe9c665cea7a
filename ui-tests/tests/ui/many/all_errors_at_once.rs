use chant::prelude::*;

converge_op! {
    name: "staging-converge",
    env: "staging",
    budget: "3",
    scheduel: "*/10 * * * *",
    rules: [
        when!(eq(stauts, "drifted") => report("drifted"), id = "typo-field", why = "one"),
        when!(eq(status, "unrecorded") => report("first")),
        when!(gt(adoptCount, 0) => report("unowned"), id = "camel", why = "two"),
        when!(eq(status, "drifed") => report("typo"), id = "typo-value", why = "three"),
        when!(gt(status, 1) => report("string"), id = "ordering", why = "four"),
        when!(eq(status, "stale") => report("stale"), id = "flap", why = "five", flap_treshold = 2),
    ],
}

fn main() {}
