//! Durations as users write them (`90s`, `5m`, `1h30m`, `48h`, `250ms`): the model's strict
//! parser and formatter, re-exported from `chant-core` so the CLI, the operator and the step
//! arguments all read durations one way.

pub use chant_core::duration::{ParseError, Timeout, format, parse};
