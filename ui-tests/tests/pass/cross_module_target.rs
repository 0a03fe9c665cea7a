//! A `run()` target declared in another module, declared after its user, with nothing imported.

mod converge {
    chant::converge_op! {
        name: "staging-converge",
        env: "staging",
        dial: apply,
        rules: [
            chant::when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply",
                  why = "Live state drifted from its declaration; re-applying converges it."),
        ],
    }
}

mod deep {
    pub mod nested {
        chant::op! {
            name: "staging-apply",
            overview: "Apply the staging declaration.",
            env: "staging",
            phases: [ phase("Apply", [ apply(env = "staging") ]) ],
        }
    }
}

fn main() {
    let names: Vec<&str> = chant::registry::ops().iter().map(|o| o.name).collect();
    assert_eq!(names, ["staging-apply", "staging-converge"]);
}
