use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
}

op! {
    name: "staging-check",
    overview: "Check the staging site answers.",
    env: "staging",
    phases: [ phase("Check", [ http_check(url = "http://127.0.0.1:8080/") ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: observe,
    rules: [
        when!(eq(status, "drifted") => propose("staging-apply"), id = "drift-propose", why = "observe only reports"),
    ],
}

converge_op! {
    name: "staging-review",
    env: "staging",
    dial: reconcile,
    rules: [
        when!(eq(status, "drifted") => propose("staging-check"), id = "check-propose", why = "a check changes nothing"),
        when!(eq(status, "unrecorded") => propose("staging-aply"), id = "first-propose", why = "a typo"),
    ],
}

fn main() {}
