//! The box lexicon's step kinds, registered through the plugin interface
//! ([`crate::lexicon::steps`]) like any lexicon's: `sprite_services_observe` (read-only, an
//! observer whose supervisor's change stream wakes the operator), `sprite_service_restart` and
//! `sprite_apply_services` (mutating). The runtime runs them by kind and names no box type.

use std::path::Path;

use serde_json::{Value, json};

use super::{BoxLexicon, describe, run_step};
use crate::lexicon::steps::{StepInput, StepKind, StepRunError};
use crate::model::{ClassKind, Step};
use crate::observe::{ChangeSink, Lexicon as _, SubscribeError, Subscription};

/// What the operator calls the supervisor's change stream.
const STREAM: &str = "sprite-env";

inventory::submit! {
    StepKind::new("sprite_services_observe", ClassKind::ReadOnly, run)
        .with_describe(describe_run)
        .with_changes(STREAM, subscribe)
}

inventory::submit! {
    StepKind::new("sprite_service_restart", ClassKind::Mutating, run).with_describe(describe_run)
}

inventory::submit! {
    StepKind::new("sprite_apply_services", ClassKind::Mutating, run).with_describe(describe_run)
}

/// The typed step the arguments spell (its class is the kind's, which the loader checked).
fn typed(input: &StepInput<'_>) -> Result<Step, StepRunError> {
    let class = crate::lexicon::steps::find(input.kind).map_or(ClassKind::Mutating, |k| k.class);
    let step = json!({"kind": input.kind, "class": class.as_str(), "args": input.args});
    Ok(serde_json::from_value(step)?)
}

fn run(input: &StepInput<'_>) -> Result<Value, StepRunError> {
    let step = typed(input)?;
    Ok(run_step(&step, input.root, input.member, input.resource, input.var)?)
}

fn describe_run(input: &StepInput<'_>, result: &Value) -> String {
    typed(input).map(|step| describe(&step, result)).unwrap_or_default()
}

/// Opens the supervisor's change stream for a member whose box block reads.
fn subscribe(
    root: &Path,
    member: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
    sink: ChangeSink,
) -> Result<Subscription, SubscribeError> {
    let lexicon = BoxLexicon::open(root, member, var).map_err(|e| SubscribeError::Unavailable(Box::new(e)))?;
    lexicon.subscribe_changes(sink)
}
