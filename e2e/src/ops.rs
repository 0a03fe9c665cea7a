//! The fixture's ops, one group per env. Each group exists so that one rule of the runtime can be
//! observed from outside the process:
//!
//! - `site`: the README's flow (apply, in sync, restore), adopt safety, gates, an unset
//!   `${VAR}`, and a user step with no side effect (`site-ping`) for concurrent appends; a gate
//!   that carries another's approval (`site-promote`) and components (`site-parts`);
//! - `blind`: a `run()` rule that fires on an unknown env, which must be reported, never run;
//! - `busy`: four matching `run()` rules under a budget of two, behind a report rule;
//! - `flappy`: a dispatch that succeeds, one that fails and one that stops at a gate, every tick,
//!   plus a report, all with low flap thresholds;
//! - `leak`: a failing dispatch whose output carries a secret and a URL password, and an op whose
//!   output carries tokens known only by their shape;
//! - `bulk`: a thousand files, for the benchmark;
//! - `night`: a ConvergeOp scheduled once a day, which a change signal from its files root makes
//!   due at once whatever its cron;
//! - `review`: a ConvergeOp under the `reconcile` dial whose drift is proposed on a branch of the
//!   project repository, never applied by the tick;
//! - `freeze`: a ConvergeOp with a deny window (weekdays 09:00 for 8h), whose mutating apply is
//!   held inside it while a read-only probe still runs;
//! - `giveup`: a ConvergeOp whose mutating dispatch changes nothing, under a restart limit of 2
//!   within 10 minutes.

use chant::prelude::*;

/// `site-ping`'s step: records nothing but its own run.
///
/// # Errors
///
/// Never.
pub fn ping(_cx: &StepContext<'_>) -> StepResult {
    Ok(Default::default())
}

op! {
    name: "site-apply",
    overview: "Apply the site declaration.",
    env: "site",
    phases: [ phase("Apply", [ apply(env = "site") ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo site apply failed") ]) ],
}

converge_op! {
    name: "site-converge",
    env: "site",
    dial: apply,
    budget: 3,
    rules: [
        when!(eq(status, "drifted") => run("site-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(eq(status, "unrecorded") => run("site-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply establishes the estate."),
        when!(gt(delete_count, 0) => report("an owned file is no longer declared; the files lexicon never deletes"),
              id = "owned-dropped", why = "Deleting is a human's decision."),
        when!(gt(adopt_count, 0) => report("unowned resources present"), id = "adopt-report",
              why = "An unowned resource is reported for a human, never auto-claimed."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "site-release",
    overview: "Ship the site, after a human approves.",
    env: "site",
    phases: [
        phase("Approve", [ gate("release", description = "Shipping the site needs a human.", timeout = "1h") ]),
        phase("Ship", [ shell(cmd = "echo shipped") ]),
    ],
}

op! {
    name: "site-guarded-apply",
    overview: "Apply the site declaration, after a human approves the plan.",
    env: "site",
    phases: [
        phase("Approve", [ gate("rollout", description = "Applying the site needs a human.", timeout = "1h") ]),
        phase("Apply", [ apply(env = "site") ]),
    ],
}

op! {
    name: "site-force",
    overview: "Force the site, after a sealed approval.",
    env: "site",
    phases: [
        phase("Approve", [ gate("force", description = "Forcing needs a signed approval.", sealed = true) ]),
        phase("Force", [ shell(cmd = "echo forced") ]),
    ],
}

op! {
    name: "site-needs-var",
    overview: "Greets someone named by a variable that the tests leave unset.",
    env: "site",
    phases: [ phase("Greet", [ shell(cmd = "echo hello ${E2E_UNSET_VARIABLE}") ]) ],
}

op! {
    name: "site-ping",
    overview: "A user step that does nothing: each run appends exactly one run record.",
    env: "site",
    phases: [ phase("Ping", [ step("ping", class = read_only, run = ping) ]) ],
}

op! {
    name: "blind-apply",
    overview: "Apply the blind declaration.",
    env: "blind",
    phases: [ phase("Apply", [ apply(env = "blind") ]) ],
}

converge_op! {
    name: "blind-converge",
    env: "blind",
    dial: apply,
    rules: [
        when!(neq(status, "reconciled") => run("blind-apply"), id = "not-reconciled-apply",
              why = "Anything but reconciled is re-applied; unknown must still never remediate."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "busy-one",
    overview: "A read-only probe.",
    phases: [ phase("Probe", [ shell(cmd = "echo one", class = read_only) ]) ],
}

op! {
    name: "busy-two",
    overview: "A read-only probe.",
    phases: [ phase("Probe", [ shell(cmd = "echo two", class = read_only) ]) ],
}

op! {
    name: "busy-three",
    overview: "A read-only probe.",
    phases: [ phase("Probe", [ shell(cmd = "echo three", class = read_only) ]) ],
}

op! {
    name: "busy-four",
    overview: "A read-only probe.",
    phases: [ phase("Probe", [ shell(cmd = "echo four", class = read_only) ]) ],
}

converge_op! {
    name: "busy-converge",
    env: "busy",
    budget: 2,
    rules: [
        when!(neq(status, "reconciled") => report("busy is not reconciled"), id = "busy-report",
              why = "Reports use no budget."),
        when!(neq(status, "reconciled") => run("busy-one"), id = "probe-one", why = "Probe."),
        when!(neq(status, "reconciled") => run("busy-two"), id = "probe-two", why = "Probe."),
        when!(neq(status, "reconciled") => run("busy-three"), id = "probe-three", why = "Probe."),
        when!(neq(status, "reconciled") => run("busy-four"), id = "probe-four", why = "Probe."),
    ],
}

op! {
    name: "flappy-apply",
    overview: "Apply the flappy declaration (run by hand, to clear the predicates).",
    env: "flappy",
    phases: [ phase("Apply", [ apply(env = "flappy") ]) ],
}

op! {
    name: "flappy-probe",
    overview: "A probe that succeeds and changes nothing.",
    phases: [ phase("Probe", [ shell(cmd = "echo probed", class = read_only) ]) ],
}

op! {
    name: "flappy-fail",
    overview: "A probe that always fails.",
    phases: [ phase("Probe", [ shell(cmd = "echo 'the probe target refused the connection' >&2; exit 4", class = read_only) ]) ],
}

op! {
    name: "flappy-guarded",
    overview: "Stops at a gate nobody approves.",
    phases: [ phase("Hold", [ gate("hold", description = "Nobody approves this in the tests.") ]) ],
}

converge_op! {
    name: "flappy-converge",
    env: "flappy",
    dial: apply,
    budget: 3,
    rules: [
        when!(neq(status, "reconciled") => run("flappy-probe"), id = "probe", flap_threshold = 2,
              why = "A dispatch that succeeds without fixing anything flaps."),
        when!(neq(status, "reconciled") => run("flappy-fail"), id = "fail", flap_threshold = 2,
              why = "A dispatch that fails counts toward damping."),
        when!(neq(status, "reconciled") => run("flappy-guarded"), id = "guarded", flap_threshold = 1,
              why = "A gate waiting for approval is never damped."),
        when!(neq(status, "reconciled") => report("flappy is not reconciled"), id = "note", flap_threshold = 1,
              why = "Reports keep reporting."),
    ],
}

op! {
    name: "leak-shout",
    overview: "Fails, printing a secret token and a URL with a password.",
    phases: [ phase("Connect", [ shell(cmd = "echo \"connecting with token $E2E_TOKEN to postgres://admin:$E2E_DB_PASSWORD@db.invalid/app\" >&2; exit 1", class = read_only) ]) ],
    on_failure: [ phase("Report", [ shell(cmd = "echo \"gave up on token $E2E_TOKEN at postgres://admin:$E2E_DB_PASSWORD@db.invalid/app\"", class = read_only) ]) ],
}

op! {
    name: "leak-tokens",
    overview: "Fails, printing tokens that only their shape gives away: after `=`, and as a URL's userinfo, as git does.",
    phases: [ phase("Push", [ shell(cmd = "echo \"GITHUB_TOKEN=$E2E_GITHUB_TOKEN aws_access_key_id=$E2E_AWS_KEY\" >&2; echo \"fatal: unable to access 'https://$E2E_GITHUB_PAT@github.com/org/repo.git/': The requested URL returned error: 403\" >&2; exit 1", class = read_only) ]) ],
}

converge_op! {
    name: "leak-converge",
    env: "leak",
    rules: [
        when!(eq(status, "reconciled") => run("leak-shout"), id = "shout", why = "Dispatches the leaky op every tick."),
    ],
}

op! {
    name: "bulk-apply",
    overview: "Apply the bulk declaration.",
    env: "bulk",
    phases: [ phase("Apply", [ apply(env = "bulk") ]) ],
}

converge_op! {
    name: "bulk-converge",
    env: "bulk",
    dial: apply,
    rules: [
        when!(eq(status, "drifted") => run("bulk-apply"), id = "drift-apply", why = "Re-apply drift."),
        when!(eq(status, "unrecorded") => run("bulk-apply"), id = "first-apply", why = "First apply."),
    ],
}

op! {
    name: "night-apply",
    overview: "Apply the night declaration.",
    env: "night",
    phases: [ phase("Apply", [ apply(env = "night") ]) ],
}

converge_op! {
    name: "night-converge",
    env: "night",
    dial: apply,
    schedule: "0 3 * * *",
    rules: [
        when!(eq(status, "drifted") => run("night-apply"), id = "drift-apply",
              why = "Live state drifted from its declaration; re-applying converges it."),
        when!(eq(status, "unrecorded") => run("night-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply establishes the estate."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "site-promote",
    overview: "Promote the site: staging behind a gate, production behind one that carries a staging approval for an hour.",
    env: "site",
    phases: [
        phase("Staging", [
            gate("deploy-staging", description = "Staging needs a human.", timeout = "2h"),
            shell(cmd = "echo staged"),
        ]),
        phase("Production", [
            gate("deploy-prod", description = "Production needs a human, or a staging approval of the last hour.",
                 carries = "deploy-staging", within = "1h"),
            shell(cmd = "echo promoted"),
        ]),
    ],
}

op! {
    name: "site-parts",
    overview: "Ship the site's api and web components, the api behind its own gate, around shared steps.",
    env: "site",
    phases: [
        phase("Prepare", [ shell(cmd = "echo prepared", class = read_only) ]),
        phase("Api", [
            shell(cmd = "echo api-built"),
            gate("rollout", description = "The api rollout needs a human.", timeout = "1h"),
            shell(cmd = "echo api-shipped"),
        ], component = "site-api"),
        phase("Web", [ shell(cmd = "echo web-shipped") ], component = "site-web"),
        phase("Verify", [ shell(cmd = "echo verified", class = read_only) ]),
    ],
}

op! {
    name: "review-apply",
    overview: "Apply the review declaration.",
    env: "review",
    phases: [ phase("Apply", [ apply(env = "review") ]) ],
}

converge_op! {
    name: "review-converge",
    env: "review",
    dial: reconcile,
    rules: [
        when!(eq(status, "drifted") => propose("review-apply"), id = "drift-propose",
              why = "A change to the review estate is reviewed by a person before it is made."),
        when!(eq(status, "unknown") => report("environment could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}

op! {
    name: "freeze-apply",
    overview: "Apply the freeze declaration.",
    env: "freeze",
    phases: [ phase("Apply", [ apply(env = "freeze") ]) ],
}

op! {
    name: "freeze-probe",
    overview: "A read-only probe, which a held tick still dispatches.",
    phases: [ phase("Probe", [ shell(cmd = "echo probed", class = read_only) ]) ],
}

converge_op! {
    name: "freeze-converge",
    env: "freeze",
    dial: apply,
    windows: [deny("0 9 * * 1-5", "8h")],
    rules: [
        when!(neq(status, "reconciled") => run("freeze-apply"), id = "freeze-apply",
              why = "Apply outside office hours only."),
        when!(neq(status, "reconciled") => run("freeze-probe"), id = "freeze-probe", flap_threshold = 20,
              why = "A read-only dispatch is not held by a window."),
    ],
}

op! {
    name: "giveup-poke",
    overview: "A mutating op that changes nothing, so its symptom stays.",
    phases: [ phase("Poke", [ shell(cmd = "echo poked") ]) ],
}

converge_op! {
    name: "giveup-converge",
    env: "giveup",
    dial: apply,
    restart_limit: limit(2, within = "10m"),
    rules: [
        when!(neq(status, "reconciled") => run("giveup-poke"), id = "poke", flap_threshold = 20,
              why = "Poked until the restart limit gives up."),
    ],
}
