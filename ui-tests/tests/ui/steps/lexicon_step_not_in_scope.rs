use chant::prelude::*;

// `docs_touch` is no built-in step and no step macro of that name is in scope: the lexicon that
// provides it is not imported.
op! {
    name: "touch-docs",
    overview: "Touch a document.",
    phases: [ phase("Touch", [ docs_touch(path = "a.md") ]) ],
}

fn main() {}
