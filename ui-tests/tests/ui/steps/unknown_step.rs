use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    phases: [ phase("Apply", [ aply(env = "staging") ]) ],
}

fn main() {}
