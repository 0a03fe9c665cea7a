//! The op registry: every Op and ConvergeOp the macros compiled into this binary, and what a
//! bare invocation of the binary does.
//!
//! Each `op!` / `converge_op!` submits one [`RegisteredOp`] through `inventory`; the project
//! binary discovers its ops by asking this registry, never by reading files on disk, so a stale
//! or foreign op.json can never be ticked. `chant::main!` passes a [`DefaultCommand`] to the
//! command line.

use crate::step::StepFn;
use chant_lexicon::model::VerbClass;

/// One op compiled into this binary.
#[derive(Debug)]
pub struct RegisteredOp {
    /// The op's name.
    pub name: &'static str,
    /// Its verb class, as the macro folded it.
    pub class: VerbClass,
    /// Its op.json, as embedded at compile time.
    pub json: &'static str,
    /// The user step functions it names, by step name.
    pub steps: &'static [(&'static str, StepFn)],
    /// The crate that declared it.
    pub krate: &'static str,
}

inventory::collect!(RegisteredOp);

/// What a bare invocation of a project binary does (`chant::main!(default = tick("x"))`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultCommand {
    /// Print help.
    Help,
    /// Run one tick of the named ConvergeOp.
    Tick(&'static str),
}

/// Returns every registered op, sorted by name.
pub fn ops() -> Vec<&'static RegisteredOp> {
    let mut v: Vec<&'static RegisteredOp> = inventory::iter::<RegisteredOp>.into_iter().collect();
    v.sort_by(|a, b| a.name.cmp(b.name).then(a.krate.cmp(b.krate)));
    v
}

/// Returns the registered op named `name`.
pub fn find(name: &str) -> Option<&'static RegisteredOp> {
    inventory::iter::<RegisteredOp>.into_iter().find(|o| o.name == name)
}
