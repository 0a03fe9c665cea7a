//! The staging project's ops: apply the declaration, probe it, tear it down by hand, and a
//! ConvergeOp that keeps it converged.
//!
//! `staging-converge` is the table of DESIGN.md section 2, verbatim. `staging-teardown` is
//! destructive, so no rule may target it (the macro would refuse); it runs only by hand, behind
//! its gate. `staging-smoke` is read-only, so a rule may run it under any dial.

use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",                                   // optional; see section 4
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo apply failed") ]) ],   // optional
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: apply,              // observe | reconcile | apply; default observe
    budget: 3,                // max run() dispatches per tick; default 3
    schedule: "*/10 * * * *", // optional 5-field cron, UTC unless `tz: "Europe/Berlin"`
    rules: [
        when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(eq(status, "unrecorded") => run("staging-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply establishes the estate."),
        when!(gt(adopt_count, 0) => report("unowned resources present"), id = "adopt-report",
              why = "An unowned resource is reported for a human, never auto-claimed."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "staging-smoke",
    overview: "Probe the staging estate's health URL.",
    env: "staging",
    phases: [ phase("Probe", [ http_check(url = "http://127.0.0.1:${STAGING_PORT}/health", timeout = "5s") ]) ],
}

op! {
    name: "staging-teardown",
    overview: "Tear the staging estate down, after a human approves.",
    env: "staging",
    phases: [
        phase("Approve", [ gate("teardown", description = "Tearing staging down deletes everything chant owns there.") ]),
        phase("Teardown", [ teardown(env = "staging") ]),
    ],
}
