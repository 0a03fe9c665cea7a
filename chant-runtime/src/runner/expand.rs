//! `${VAR}` expansion in step arguments, done when the step runs (never at compile time): the
//! model's pure expander, and the lookup the runtime uses.

pub use chant_core::template::{ExpandError, expand};

/// Looks a variable up in the process environment.
pub fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
