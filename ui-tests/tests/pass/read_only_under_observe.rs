//! A read-only target may be dispatched under every dial, `observe` included, even when the
//! predicate reads `adopt_count`.

use chant::prelude::*;

op! {
    name: "staging-smoke",
    overview: "Probe staging's health URL.",
    phases: [ phase("Probe", [ http_check(url = "http://127.0.0.1:${PORT}/health"), gate("looked-at", description = "a human looked") ]) ],
}

converge_op! {
    name: "staging-watch",
    env: "staging",
    rules: [
        when!(eq(status, "unknown") => run("staging-smoke"), why = "Probing is read-only, so observe may run it."),
        when!(gt(adopt_count, 0) => run("staging-smoke"), why = "A read-only op may act on the adopt signal."),
    ],
}

converge_op! {
    name: "staging-reconcile",
    env: "staging",
    dial: reconcile,
    rules: [ when!(eq(status, "drifted") => run("staging-smoke"), why = "Read-only under reconcile.") ],
}

fn main() {
    let op = chant::registry::find("staging-smoke").unwrap();
    assert_eq!(op.class, chant::model::ClassKind::ReadOnly);
}
