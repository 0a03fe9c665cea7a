use chant::prelude::*;

op! {
    name: "release",
    overview: "Every way a carry or a component is refused, reported at once.",
    phases: [
        phase("Early", [ gate("early", carries = "late", within = "1h") ]),
        phase("Late", [ gate("late") ]),
        phase("Sealed", [ gate("force", sealed = true, carries = "late", within = "1h") ]),
        phase("Window", [ gate("loose", within = "1h") ]),
        phase("Nowindow", [ gate("open", carries = "late") ]),
        phase("Api", [ gate("api-go", carries = "late", within = "1h") ], component = "api"),
        phase("Self", [ shell(cmd = "true") ], component = "release"),
    ],
}

fn main() {}
