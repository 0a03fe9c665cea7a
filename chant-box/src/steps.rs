//! The box lexicon's step kinds, registered through the plugin interface
//! ([`chant_lexicon::steps`]) like any lexicon's: `sprite_services_observe` (read-only, an
//! observer whose supervisor's change stream wakes the operator), `sprite_service_restart` and
//! `sprite_apply_services` (mutating). The runtime runs them by kind and names no box type.

use std::path::Path;

use serde_json::Value;

use super::{BoxLexicon, BoxStep, describe, run_step};
use chant_lexicon::model::ClassKind;
use chant_lexicon::observe::{ChangeSink, Lexicon as _, SubscribeError, Subscription};
use chant_lexicon::steps::{StepInput, StepKind, StepRunError};

/// What the operator calls the supervisor's change stream.
const STREAM: &str = "sprite-env";

inventory::submit! {
    StepKind::new(BoxStep::OBSERVE, ClassKind::ReadOnly, run)
        .with_describe(describe_run)
        .with_changes(STREAM, subscribe)
}

inventory::submit! {
    StepKind::new(BoxStep::RESTART, ClassKind::Mutating, run).with_describe(describe_run)
}

inventory::submit! {
    StepKind::new(BoxStep::APPLY, ClassKind::Mutating, run).with_describe(describe_run)
}

/// The typed step the arguments spell.
fn typed(input: &StepInput<'_>) -> Result<BoxStep, StepRunError> {
    Ok(BoxStep::parse(input.kind, input.args)?)
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
