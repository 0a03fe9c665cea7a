//! The dashboard's fixture ops (`chant serve`): env `dash`, a resource-mode ConvergeOp whose
//! observer reports one drifted resource `web` and one in-sync resource whose name is markup
//! (`<script>alert(1)</script>`), and whose one rule, with markup in its `why`, dispatches an op
//! that stops at a gate nobody approves in the tests. So every tick records a `gated` outcome,
//! a pending gate stands with its approve command, and the pages must show the markup as text.
//! Once a test approves the gate, the op ships: it leaves `dash-shipped` in the project root,
//! and the observer reads `web` in sync from then on, so the tick after it verifies the repair.

use chant::prelude::*;

op! {
    name: "dash-guarded",
    overview: "Stops at a gate until a human approves it.",
    phases: [
        phase("Approve", [ gate("ship-web", description = "Shipping <b>web</b> needs a human.", timeout = "48h") ]),
        phase("Ship", [ shell(cmd = "touch dash-shipped", class = read_only) ]),
    ],
}

converge_op! {
    name: "dash-converge",
    env: "dash",
    observe: shell(cmd = r#"if [ -e dash-shipped ]; then web=in-sync; else web=drifted; fi; printf '{"resources":[{"name":"web","status":"%s"},{"name":"<script>alert(1)</script>","status":"in-sync"}]}\n' "$web""#, class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("dash-guarded"), id = "ship-drifted",
              why = "A drifted service ships only after a human approves: <script>document.title='pwned'</script>"),
    ],
}
