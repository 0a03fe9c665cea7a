//! A resource-mode ConvergeOp (`observe:`), as in the box example: its rules read ResourceSymptom.

use chant::prelude::*;

op! {
    name: "restart-service",
    overview: "Restart the service a converge rule names, and wait for its health URL.",
    phases: [ phase("Restart", [ sprite_service_restart(box = true) ]) ],
}

converge_op! {
    name: "converge",
    env: "box",
    dial: apply,
    schedule: "* * * * *",
    observe: sprite_services_observe(box = true),
    rules: [
        when!(eq(status, "drifted") => run("restart-service"), id = "restart-drifted",
              why = "A declared service that stopped, or stopped answering its health URL, is restarted."),
        when!(eq(status, "unknown") => report("a service could not be observed"), id = "report-unknown",
              why = "unknown never remediates."),
        when!(all_of(eq(resource, "app"), truthy(detail)) => report("app has details"), why = "resource and detail are fields too"),
    ],
}

converge_op! {
    name: "converge-shell",
    env: "box",
    observe: shell(cmd = "./list-services.sh", class = read_only),
    rules: [ when!(neq(status, "in-sync") => report("not in sync"), why = "A read-only shell step may observe.") ],
}

fn main() {
    let json = chant::registry::find("converge").unwrap().json;
    assert!(json.contains("\"observe\""));
}
