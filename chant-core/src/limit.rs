//! Restart limits: after `count` remediations of the same resource within `within`, a rule gives
//! up on that resource (Monit's "N restarts within M cycles, then unmonitor").
//!
//! `restart_limit: limit(3, within = "10m")` on a `converge_op!` applies to every `run()` rule of
//! the op, counted per rule and resource (the env in environment mode): each dispatch the tick
//! makes (`ran`, `ineffective`, `unverified`, or one that failed) counts. When a rule's predicate
//! holds and its count within the window has reached `count`, the rule is `given-up` for that
//! resource: it dispatches nothing more, the op's health is `given-up` and a notification goes
//! out, until a person records `chant operator undamp` (or `operator resume`). Pure data and its
//! check; the counting is the runtime's (`chant_runtime::tick::limit`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A ConvergeOp's restart limit, as op.json holds it (`converge.restartLimit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartLimit {
    /// How many remediations of one resource by one rule the window holds (at least 1).
    pub count: u64,
    /// The window, as written (`10m`).
    pub within: String,
}

/// Why a restart limit is refused ([`RestartLimit::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The count is zero.
    #[error(
        "a restart limit of 0 would give up before the first remediation; give at least 1, e.g. limit(3, within = \"10m\")"
    )]
    ZeroCount,
    /// The window does not parse.
    #[error("restart limit window: {0}")]
    Within(#[from] crate::duration::ParseError),
    /// The window is zero.
    #[error("restart limit window `{0}` is zero, so nothing would ever count; give a window such as \"10m\"")]
    ZeroWithin(String),
}

/// Checks a restart limit's window and returns it: strict, and more than zero.
///
/// # Errors
///
/// [`Error::Within`] or [`Error::ZeroWithin`].
pub fn check_within(text: &str) -> Result<Duration, Error> {
    let d = crate::duration::parse(text)?;
    if d.is_zero() {
        return Err(Error::ZeroWithin(text.to_owned()));
    }
    Ok(d)
}

impl RestartLimit {
    /// Checks the count and the window, and returns the window.
    ///
    /// # Errors
    ///
    /// The first [`Error`] found.
    pub fn check(&self) -> Result<Duration, Error> {
        if self.count == 0 {
            return Err(Error::ZeroCount);
        }
        check_within(&self.within)
    }

    /// `3 within 10m`.
    pub fn describe(&self) -> String {
        format!("{} within {}", self.count, self.within)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_needs_a_count_and_a_window() {
        let l = RestartLimit { count: 3, within: "10m".into() };
        assert_eq!(l.check().unwrap(), Duration::from_secs(600));
        assert_eq!(l.describe(), "3 within 10m");
        assert_eq!(serde_json::to_string(&l).unwrap(), r#"{"count":3,"within":"10m"}"#);
        assert_eq!(RestartLimit { count: 0, ..l.clone() }.check(), Err(Error::ZeroCount));
        assert!(matches!(RestartLimit { within: "ten".into(), ..l.clone() }.check(), Err(Error::Within(_))));
        assert!(matches!(RestartLimit { within: "0m".into(), ..l }.check(), Err(Error::ZeroWithin(_))));
    }
}
