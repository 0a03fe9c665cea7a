use chant::prelude::*;

op! {
    name: "release",
    overview: "Staging, then production on the staging approval.",
    phases: [
        phase("Staging", [ gate("deploy-staging") ]),
        phase("Production", [ gate("deploy-prod", carries = "deploy-stagign", within = "24h") ]),
    ],
}

fn main() {}
