//! A user's own step: a Rust function linked into the project binary and named in an Op with
//! `step("purge-cache", class = destructive, run = path::to_fn)`.

use std::collections::BTreeMap;

/// What a user step is given when it runs.
#[derive(Debug, Clone, Copy)]
pub struct StepContext<'a> {
    /// The Op being run.
    pub op: &'a str,
    /// The env it runs in, if any.
    pub env: Option<&'a str>,
    /// The resource a resource-mode dispatch is for (`CHANT_CONVERGE_RESOURCE`).
    pub resource: Option<&'a str>,
    /// The step's arguments, with `${VAR}` already expanded.
    pub args: &'a BTreeMap<String, serde_json::Value>,
}

/// The failure of a user step: one line saying what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StepError(pub String);

impl StepError {
    /// Creates a step error from any message.
    pub fn new(message: impl Into<String>) -> Self {
        StepError(message.into())
    }
}

/// What a user step returns: a JSON value recorded on the step's record, or an error.
pub type StepResult = Result<serde_json::Value, StepError>;

/// The signature of a user step function.
pub type StepFn = fn(&StepContext<'_>) -> StepResult;
