use chant::prelude::*;

macro_rules! docs_touch {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step { kind: "docs_touch", class: mutating, args: [path: str required, mode: str] }
            $($input)*
        }
    };
}

// A lexicon's step is checked against its declaration, each problem at its token.
op! {
    name: "touch-docs",
    overview: "Touch a document.",
    phases: [ phase("Touch", [ docs_touch(paht = "a.md", mode = true) ]) ],
}

fn main() {}
