//! The box's services named in place of the member's box block: inline (`services = [...]`, the
//! names alone, so the observer judges each by the supervisor's state) and from a JSON file
//! (`services_file`, a box block relative to the project root, read on every run).
//!
//! - `check-listed` observes the app and the worker, named inline;
//! - `restart-app` restarts the app from the list in `examples/box/services.json` and waits for
//!   the health URL that file declares.

use chant::prelude::*;

op! {
    name: "check-listed",
    overview: "Observe the app and the worker, named inline, through the supervisor.",
    phases: [ phase("Observe", [ sprite_services_observe(services = ["app", "worker"]) ]) ],
}

op! {
    name: "restart-app",
    overview: "Restart the app, listed in examples/box/services.json, and wait for its health URL.",
    phases: [ phase("Restart", [
        sprite_service_restart(services_file = "examples/box/services.json", name = "app"),
    ]) ],
}
