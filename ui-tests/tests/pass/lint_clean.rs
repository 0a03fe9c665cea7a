//! Generated code is warning-free under strict lints.

#![deny(warnings, unused_qualifications, unused_results, missing_debug_implementations)]
#![forbid(unsafe_code)]

use chant::prelude::*;

fn purge(_cx: &StepContext<'_>) -> StepResult {
    Err(StepError::new("not run in this test"))
}

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo apply failed") ]) ],
}

op! {
    name: "staging-purge",
    overview: "Purge the cache behind a gate.",
    phases: [ phase("Purge", [ gate("purge"), step("purge-cache", class = destructive, run = purge) ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: apply,
    budget: 3,
    schedule: "*/10 * * * *",
    tz: "Europe/Berlin",
    rules: [
        when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(gt(adopt_count, 0) => report("unowned resources present"), id = "adopt-report",
              why = "An unowned resource is reported for a human, never auto-claimed.", flap_threshold = 2),
    ],
}

fn main() {}
