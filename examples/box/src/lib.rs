//! The box example: a workspace member whose services run under a supervisor (`sprite-env`, or
//! chant's stand-in). Its services are declared in the `box` block of its member entry in
//! `chant.workspace.json` at the repository root; these ops read that list on every run.
//!
//! - `converge` observes each declared service (resource mode: one ResourceSymptom per service)
//!   and restarts a drifted one. It is unscheduled, so `chant operator` ticks it every round: at
//!   `--interval`, and at once (at most once per 5 s floor) when the supervisor's change stream
//!   reports a service that exited, started or stopped;
//! - `restart-service` restarts the service the rule fired for (`CHANT_CONVERGE_RESOURCE`);
//! - `services` defines the declared services and starts them, when the box is provisioned.

use chant::prelude::*;

converge_op! {
    name: "converge",
    env: "box",
    dial: apply,
    observe: sprite_services_observe(box = true),
    rules: [
        when!(eq(status, "drifted") => run("restart-service"), id = "restart-drifted",
              why = "A declared service that stopped, or stopped answering its health URL, is restarted through its supervisor."),
        when!(eq(status, "unknown") => report("a service could not be observed"), id = "report-unknown",
              why = "unknown never remediates."),
    ],
}

op! {
    name: "restart-service",
    overview: "Restart the service a converge rule names, and wait for its health URL.",
    phases: [ phase("Restart", [ sprite_service_restart(box = true) ]) ],
}

op! {
    name: "services",
    overview: "Create or replace the box's declared services through sprite-env, and start them.",
    phases: [ phase("Apply", [ sprite_apply_services(box = true, start = true) ]) ],
}

mod listed;
