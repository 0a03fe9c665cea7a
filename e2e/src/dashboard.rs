//! The dashboard's fixture ops (`chant serve`): env `dash`, a resource-mode ConvergeOp whose
//! observer reports one drifted resource `web` and one in-sync resource whose name is markup
//! (`<script>alert(1)</script>`), and whose one rule, with markup in its `why`, dispatches an op
//! that stops at a gate nobody approves in the tests. So every tick records a `gated` outcome,
//! a pending gate stands with its approve command, and the pages must show the markup as text.

use chant::prelude::*;

op! {
    name: "dash-guarded",
    overview: "Stops at a gate until a human approves it.",
    phases: [
        phase("Approve", [ gate("ship-web", description = "Shipping <b>web</b> needs a human.", timeout = "48h") ]),
        phase("Ship", [ shell(cmd = "echo shipped", class = read_only) ]),
    ],
}

converge_op! {
    name: "dash-converge",
    env: "dash",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"web\",\"status\":\"drifted\"},{\"name\":\"<script>alert(1)</script>\",\"status\":\"in-sync\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("dash-guarded"), id = "ship-drifted",
              why = "A drifted service ships only after a human approves: <script>document.title='pwned'</script>"),
    ],
}
