// A lexicon's own step kind, declared by its step macro (here in the same file; a lexicon crate
// exports it with #[macro_export]), checked by `op!` like a built-in and recorded in op.json.
use chant::prelude::*;

macro_rules! docs_touch {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step { kind: "docs_touch", class: mutating, args: [path: str required, mode: str] }
            $($input)*
        }
    };
}

macro_rules! docs_list {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step { kind: "docs_list", class: read_only, args: [under: str] }
            $($input)*
        }
    };
}

op! {
    name: "touch-docs",
    overview: "Touch a document.",
    phases: [ phase("Touch", [ docs_list(), docs_touch(path = "${DOC}", mode = "0644") ]) ],
}

converge_op! {
    name: "docs-converge",
    env: "docs",
    dial: apply,
    observe: docs_list(under = "docs"),
    rules: [ when!(eq(status, "drifted") => run("touch-docs"), id = "touch", why = "A drifted doc is touched again.") ],
}

fn main() {
    let touch = chant::registry::find("touch-docs").expect("touch-docs is registered");
    let doc: chant::model::OpDocument = serde_json::from_str(touch.json).expect("its op.json reads back");
    let step = &doc.phases[0].steps[1];
    let chant::model::Step::Lexicon(step) = step else { panic!("{step:?}") };
    assert_eq!((step.kind.as_str(), step.class), ("docs_touch", chant::model::ClassKind::Mutating));
    assert_eq!(step.args["path"], "${DOC}");
    assert_eq!(doc.class, chant::model::ClassKind::Mutating, "the op's class folds the lexicon step's");
}
