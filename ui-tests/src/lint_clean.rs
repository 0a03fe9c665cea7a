//! Every macro form under `clippy::pedantic`, `unused_qualifications` and `deny(warnings)`.

#![deny(warnings, clippy::pedantic, unused_qualifications, unused_results)]

use chant::prelude::*;

fn purge(_cx: &StepContext<'_>) -> StepResult {
    Err(StepError::new("not run in this crate"))
}

op! {
    name: "lint-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo ${OP} failed", class = read_only) ]) ],
}

op! {
    name: "lint-purge",
    overview: "Purge the cache behind a gate.",
    phases: [ phase("Purge", [ gate("purge", timeout = "1h"), step("purge-cache", class = destructive, run = purge) ]) ],
}

op! {
    name: "lint-smoke",
    overview: "Probe the health URL.",
    phases: [ phase("Probe", [ http_check(url = "http://127.0.0.1:8080/health") ]) ],
}

converge_op! {
    name: "lint-converge",
    env: "staging",
    dial: apply,
    budget: 3,
    schedule: "*/10 * * * *",
    tz: "Europe/Berlin",
    rules: [
        when!(eq(status, "drifted") => run("lint-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(gt(adopt_count, 0) => run("lint-smoke"), why = "A read-only probe may follow the adopt signal."),
        when!(all_of(truthy(components), lte(total_count, -1)) => report("impossible"), why = "Negative literals parse."),
    ],
}

converge_op! {
    name: "lint-observe",
    env: "box",
    observe: sprite_services_observe(box = true),
    rules: [ when!(eq(status, "drifted") => run("lint-smoke"), why = "Read-only under observe.", flap_threshold = 1) ],
}
