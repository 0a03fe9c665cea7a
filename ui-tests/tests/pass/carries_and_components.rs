//! A gate that carries an earlier gate's approval, and phases that belong to components.

use chant::prelude::*;

op! {
    name: "release",
    overview: "Staging, then production on the staging approval; the api and web components.",
    phases: [
        phase("Staging", [ gate("deploy-staging", description = "Staging needs a human.") ]),
        phase("Production", [ gate("deploy-prod", carries = "deploy-staging", within = "24h") ]),
        phase("Api", [ gate("rollout"), gate("switch", carries = "rollout", within = "30m") ], component = "api"),
        phase("Web", [ shell(cmd = "true") ], component = "web"),
    ],
}

fn main() {
    let doc: serde_json::Value = serde_json::from_str(chant::registry::find("release").unwrap().json).unwrap();
    assert_eq!(doc["phases"][1]["steps"][0]["args"]["carries"], "deploy-staging");
    assert_eq!(doc["phases"][2]["component"], "api");
}
