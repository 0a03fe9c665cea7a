use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging_1",
    phases: [ phase("Apply", [ apply(env = "staging_1") ]) ],
}

fn main() {}
