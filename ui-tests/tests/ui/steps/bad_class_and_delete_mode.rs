use chant::prelude::*;

op! {
    name: "staging-apply",
    overview: "Apply the staging declaration.",
    phases: [ phase("Apply", [
        apply(env = "staging", delete_mode = "owned"),
        shell(cmd = "make deploy", class = destrutive),
        step("purge-cache", class = mutating),
    ]) ],
}

fn main() {}
