use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;

fn db() -> EnvDeclaration {
    EnvDeclaration::new()
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("db", db) }

op! {
    name: "db-apply",
    overview: "Apply the db declaration.",
    phases: [ phase("Apply", [ apply(env = "bd") ]) ],
}

converge_op! {
    name: "db-converge",
    env: "dbb",
    dial: apply,
    rules: [
        when!(eq(status, "drifted") => run("db-apply"), why = "the column drifted"),
    ],
}

fn main() {}
