//! The operator's fixture ops, one env per behaviour the operator suite observes from outside:
//!
//! - `marks`: two ConvergeOps in resource mode whose observer always reports one drifted
//!   resource, so every tick dispatches: `mark-sched` on `*/10 * * * *` and `mark-loop`
//!   unscheduled. Each dispatch appends `now=<CHANT_NOW> pid=<pid>` to `$E2E_MARKS/<target op>`,
//!   the side effect the tests count ticks by. Flap damping is set out of reach.
//! - `hold`: a tick whose dispatch blocks until `$E2E_MARKS/release` exists (after writing
//!   `$E2E_MARKS/hold-started`), for stops that arrive mid-tick.
//! - `steal`: a tick whose dispatch overwrites the ConvergeOp's own lease with a foreign one,
//!   as a peer would after this holder stalled past its TTL.
//! - `relay`: a tick with two dispatches: the first blocks until `$E2E_MARKS/relay-go` exists
//!   (after writing `$E2E_MARKS/relay-started`), so another process can take the lease
//!   meanwhile; the second marks `$E2E_MARKS/relay-after`, which a fenced tick never reaches.

use chant::prelude::*;

op! {
    name: "mark-sched-hit",
    overview: "Appends one line per dispatch to $E2E_MARKS/mark-sched-hit.",
    phases: [ phase("Mark", [ shell(cmd = "echo \"now=$CHANT_NOW pid=$$\" >> \"${E2E_MARKS}/mark-sched-hit\"", class = read_only) ]) ],
}

op! {
    name: "mark-loop-hit",
    overview: "Appends one line per dispatch to $E2E_MARKS/mark-loop-hit.",
    phases: [ phase("Mark", [ shell(cmd = "echo \"now=$CHANT_NOW pid=$$\" >> \"${E2E_MARKS}/mark-loop-hit\"", class = read_only) ]) ],
}

converge_op! {
    name: "mark-sched",
    env: "marks",
    schedule: "*/10 * * * *",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"r\",\"status\":\"drifted\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("mark-sched-hit"), id = "mark", flap_threshold = 1000000,
              why = "Every tick dispatches once, so dispatches count ticks."),
    ],
}

converge_op! {
    name: "mark-loop",
    env: "marks",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"r\",\"status\":\"drifted\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("mark-loop-hit"), id = "mark", flap_threshold = 1000000,
              why = "Every tick dispatches once, so dispatches count ticks."),
    ],
}

op! {
    name: "hold-wait",
    overview: "Blocks until $E2E_MARKS/release exists.",
    phases: [ phase("Wait", [ shell(cmd = "touch \"${E2E_MARKS}/hold-started\"; while [ ! -e \"${E2E_MARKS}/release\" ]; do sleep 0.05; done", class = read_only) ]) ],
}

converge_op! {
    name: "hold-converge",
    env: "hold",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"r\",\"status\":\"drifted\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("hold-wait"), id = "hold", why = "A dispatch that outlives a stop."),
    ],
}

op! {
    name: "steal-it",
    overview: "Overwrites steal-converge's lease with a live foreign one.",
    phases: [ phase("Steal", [ shell(cmd = "printf '%s' '{\"op\":\"steal-converge\",\"holder\":\"thief:1:00000000\",\"token\":\"stolen\",\"acquiredAt\":\"2020-01-01T00:00:00.000Z\",\"expiresAt\":\"2999-01-01T00:00:00.000Z\"}' | git hash-object -w --stdin | xargs git update-ref refs/chant/lease/steal-converge", class = read_only) ]) ],
}

converge_op! {
    name: "steal-converge",
    env: "steal",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"r\",\"status\":\"drifted\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("steal-it"), id = "steal", why = "A peer takes the lease mid-tick."),
    ],
}

op! {
    name: "relay-wait",
    overview: "Blocks until $E2E_MARKS/relay-go exists, after writing $E2E_MARKS/relay-started.",
    phases: [ phase("Wait", [ shell(cmd = "touch \"${E2E_MARKS}/relay-started\"; while [ ! -e \"${E2E_MARKS}/relay-go\" ]; do sleep 0.05; done", class = read_only) ]) ],
}

op! {
    name: "relay-after",
    overview: "Marks $E2E_MARKS/relay-after: the dispatch a fenced tick must not make.",
    phases: [ phase("Mark", [ shell(cmd = "touch \"${E2E_MARKS}/relay-after\"", class = read_only) ]) ],
}

converge_op! {
    name: "relay-converge",
    env: "relay",
    observe: shell(cmd = "echo '{\"resources\":[{\"name\":\"r\",\"status\":\"drifted\"}]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => run("relay-wait"), id = "wait",
              why = "The first dispatch blocks while another process takes the lease."),
        when!(eq(status, "drifted") => run("relay-after"), id = "after",
              why = "The second dispatch comes after the theft: the fence stops it."),
    ],
}
