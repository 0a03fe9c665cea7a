use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    phases: [ phase("Apply", [ apply(env = "staging", delete = "owned-only") ]) ],
}

fn main() {}
