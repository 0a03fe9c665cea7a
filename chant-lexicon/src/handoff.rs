//! The handoff: the variables a tick sets for the run it dispatches (`current_exe() run <op>
//! --json`), which the runner and the lexicons' steps read. They live below both, so neither the
//! runner nor a lexicon needs the tick to know their names.

/// The variable a dispatched run reads its resource from (resource mode).
pub const RESOURCE_VAR: &str = "CHANT_CONVERGE_RESOURCE";

/// The variable a dispatched run reads the dispatching tick's env from.
pub const ENV_VAR: &str = "CHANT_CONVERGE_ENV";
