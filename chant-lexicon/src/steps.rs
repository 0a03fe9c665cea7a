//! Step kinds a lexicon registers: a step of its own in an Op's phases or as a ConvergeOp's
//! observer (`sprite_apply_services(box = true)`), run by the runtime without the runtime naming
//! the lexicon.
//!
//! A lexicon submits one [`StepKind`] per step with `inventory::submit!`: its name (op.json's
//! `kind`), its class (what the dial allows), its runner, the line its run record carries, and,
//! for an observer whose substrate has a change stream, how the operator subscribes to it. The
//! runner, the resource-mode observer and the operator look a step up here by its kind
//! ([`find`]); a kind nobody registered is a step this binary cannot run, said in those words.
//!
//! The registration runs the step; what lets an op be written with it is the lexicon's step
//! macro, which declares the kind's class and arguments to `op!` and `converge_op!` at compile
//! time (`docs/architecture.md`, "Write a lexicon with its own steps").
//!
//! ```
//! use chant_lexicon::steps::{StepInput, StepKind};
//!
//! fn touch(input: &StepInput<'_>) -> Result<serde_json::Value, chant_lexicon::steps::StepRunError> {
//!     let path = input.args.get("path").and_then(|v| v.as_str()).ok_or("`path` is required")?;
//!     std::fs::write(input.root.join(path), b"")?;
//!     Ok(serde_json::json!({ "touched": path }))
//! }
//!
//! chant_lexicon::inventory::submit! {
//!     StepKind::new("docs_touch", chant_lexicon::model::ClassKind::Mutating, touch)
//! }
//!
//! assert!(chant_lexicon::steps::find("docs_touch").is_some());
//! assert!(chant_lexicon::steps::find("no_such_step").is_none());
//! ```

use std::path::Path;

use serde_json::{Map, Value};

use crate::model::ClassKind;
use crate::observe::{ChangeSink, SubscribeError, Subscription};

/// Why a registered step's run failed: any error, rendered with its causes in the run record.
pub type StepRunError = Box<dyn std::error::Error + Send + Sync>;

/// What a registered step is given when it runs.
#[derive(Clone, Copy)]
pub struct StepInput<'a> {
    /// The step's kind (op.json's `kind`).
    pub kind: &'a str,
    /// Its arguments, with `${VAR}` already expanded.
    pub args: &'a Map<String, Value>,
    /// The project's root (the directory holding `chant.toml`).
    pub root: &'a Path,
    /// The workspace member of the op, when the project has members.
    pub member: Option<&'a str>,
    /// The resource a resource-mode dispatch is for (`CHANT_CONVERGE_RESOURCE`).
    pub resource: Option<&'a str>,
    /// Looks a variable up (the process environment, or the tick's hand-off in a dispatch).
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

impl std::fmt::Debug for StepInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepInput")
            .field("kind", &self.kind)
            .field("args", &self.args)
            .field("root", &self.root)
            .field("member", &self.member)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// Runs a registered step; its value is recorded on the step's record.
pub type RunFn = fn(&StepInput<'_>) -> Result<Value, StepRunError>;

/// Says in one line what a run returned, for the run record (`2 in-sync, 1 drifted, 0 unknown`).
pub type DescribeFn = fn(&StepInput<'_>, &Value) -> String;

/// Subscribes to the changes of what an observer step of this kind reads, for the operator:
/// given the project root, the member and the variable lookup, it calls the sink on every change.
pub type ChangesFn =
    fn(&Path, Option<&str>, &dyn Fn(&str) -> Option<String>, ChangeSink) -> Result<Subscription, SubscribeError>;

/// One step kind a lexicon registers (see the module docs).
#[derive(Debug)]
pub struct StepKind {
    /// The step's name: its `kind` in op.json and in the run record.
    pub kind: &'static str,
    /// Its class: read-only steps may observe; the dial decides which classes a tick may run.
    pub class: ClassKind,
    /// Runs it.
    pub run: RunFn,
    /// The one line its run record carries (`None`: no line).
    pub describe: Option<DescribeFn>,
    /// How the operator subscribes to what it observes (`None`: the operator polls on its timer).
    pub changes: Option<Changes>,
}

/// A step kind's change stream, as the operator names and opens it.
#[derive(Debug, Clone, Copy)]
pub struct Changes {
    /// What the operator calls the stream in its lines (`sprite-env`; `sprite-env(<member>)` for a
    /// member).
    pub label: &'static str,
    /// Opens it.
    pub subscribe: ChangesFn,
}

impl StepKind {
    /// A step kind of this name and class, run by `run`, with no run-record line and no change
    /// stream.
    pub const fn new(kind: &'static str, class: ClassKind, run: RunFn) -> StepKind {
        StepKind { kind, class, run, describe: None, changes: None }
    }

    /// The same kind, whose run record carries the line `describe` makes.
    #[must_use]
    pub const fn with_describe(mut self, describe: DescribeFn) -> StepKind {
        self.describe = Some(describe);
        self
    }

    /// The same kind, whose observations the operator can be woken by (`label` names the stream).
    #[must_use]
    pub const fn with_changes(mut self, label: &'static str, subscribe: ChangesFn) -> StepKind {
        self.changes = Some(Changes { label, subscribe });
        self
    }
}

inventory::collect!(StepKind);

/// Returns the step kind registered under `kind`, if any lexicon linked into this binary
/// registers one.
pub fn find(kind: &str) -> Option<&'static StepKind> {
    inventory::iter::<StepKind>.into_iter().find(|k| k.kind == kind)
}

/// Returns every registered step kind, sorted by kind.
pub fn all() -> Vec<&'static StepKind> {
    let mut kinds: Vec<&'static StepKind> = inventory::iter::<StepKind>.into_iter().collect();
    kinds.sort_by_key(|k| k.kind);
    kinds
}

/// What a run of a step whose kind no linked lexicon registers fails with.
pub fn unregistered(kind: &str) -> String {
    format!(
        "step `{kind}` is run by a lexicon this binary does not link; link the lexicon's crate (chant's own \
         box steps need its `box` feature)"
    )
}
