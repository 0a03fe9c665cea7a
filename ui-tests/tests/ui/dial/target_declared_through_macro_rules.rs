//! The macro cannot see an op declared through a `macro_rules!` wrapper, so the registry refuses
//! the dispatch in const evaluation (the one refusal that still reads `evaluation panicked`).
use chant::prelude::*;

macro_rules! declare {
    ($($body:tt)*) => { chant::op! { $($body)* } };
}

declare! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
}

converge_op! {
    name: "staging-converge",
    env: "staging",
    dial: observe,
    rules: [
        when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply", why = "observe only reports"),
    ],
}

fn main() {}
