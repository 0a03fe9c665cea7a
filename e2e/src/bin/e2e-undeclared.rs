//! A project binary whose ConvergeOp reads an env nobody declared (`nowhere`), for the suite's
//! check that such a catalog is refused when it loads, naming the op and the env, while a
//! resource-mode ConvergeOp on another undeclared env (`elsewhere`) is accepted: its `observe:`
//! step supplies the verdicts. It does not link the `chant_e2e` library.

use chant::prelude::*;

converge_op! {
    name: "ghost-converge",
    env: "nowhere",
    rules: [
        when!(eq(status, "reconciled") => report("all is well"), id = "calm",
              why = "Without a declaration this would always hold: the catalog refuses it."),
    ],
}

converge_op! {
    name: "watch-converge",
    env: "elsewhere",
    observe: shell(cmd = "echo '{\"resources\":[]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => report("a resource drifted"), id = "drifted",
              why = "The observer supplies the verdicts, so no declaration is needed."),
    ],
}

chant::main!();
