use chant::prelude::*;

op! {
    name: "restart-app",
    overview: "Restart the app.",
    phases: [ phase("Restart", [ sprite_service_restart(box = true, services = ["app"], name = "app") ]) ],
}

fn main() {}
