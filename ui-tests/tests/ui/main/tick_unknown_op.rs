use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    env: "staging",
    phases: [ phase("Apply", [ apply(env = "staging") ]) ],
}

chant::main!(default = tick("staging-converg"));
