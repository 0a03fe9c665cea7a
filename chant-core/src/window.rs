//! Sync windows: when a ConvergeOp may act, declared as a cron expression (when a window opens)
//! and a duration (how long it stays open), as Argo CD's sync windows are.
//!
//! `windows: [deny("0 9 * * 1-5", "8h"), allow("0 22 * * *", "6h")]`. A `deny` window holds the
//! op while it is open; when the op declares any `allow` window, it may act only while one of
//! them is open; a `deny` window wins over an `allow` window open at the same time. A held tick
//! still observes and records; it dispatches nothing mutating. The cron is the same strict 5-field
//! cron a `schedule` takes ([`crate::cron::parse_cron`]), in the op's `tz` (UTC when absent); the
//! duration is strict ([`crate::duration::parse`]) and never zero. Pure: which window is open at
//! an instant is the runtime's question (`chant_runtime::tick::window`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Whether a window lets the op act or holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowKind {
    /// The op may act only while an `allow` window is open.
    Allow,
    /// The op acts on nothing mutating while a `deny` window is open.
    Deny,
}

impl WindowKind {
    /// Every kind, as the DSL spells it.
    pub const ALL: [WindowKind; 2] = [WindowKind::Allow, WindowKind::Deny];

    /// Returns the kind as written (`deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::Allow => "allow",
            WindowKind::Deny => "deny",
        }
    }

    /// Reads a kind as written.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

/// One sync window of a ConvergeOp, as op.json holds it (`converge.windows`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncWindow {
    /// `allow` or `deny`.
    pub kind: WindowKind,
    /// When the window opens: a strict 5-field cron expression.
    pub cron: String,
    /// How long it stays open, as written (`8h`).
    pub duration: String,
    /// The IANA time zone of the cron (the op's `tz`); UTC when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tz: Option<String>,
}

impl fmt::Display for SyncWindow {
    /// `deny "0 9 * * 1-5" for 8h` (with ` Europe/Berlin` after the cron when a zone is set).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tz = self.tz.as_deref().map(|t| format!(" {t}")).unwrap_or_default();
        write!(f, "{} \"{}\"{tz} for {}", self.kind.as_str(), self.cron, self.duration)
    }
}

/// Why a window is refused ([`check_cron`], [`check_duration`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The cron expression is not a valid schedule.
    #[error("window cron: {0}")]
    Cron(#[from] crate::cron::Error),
    /// The duration does not parse.
    #[error("window duration: {0}")]
    Duration(#[from] crate::duration::ParseError),
    /// The duration is zero: the window would never be open.
    #[error(
        "window duration `{0}` is zero, so the window would never be open; give how long it stays open, e.g. \"8h\""
    )]
    Zero(String),
}

/// Checks a window's cron expression (the strict schedule check).
///
/// # Errors
///
/// [`Error::Cron`].
pub fn check_cron(cron: &str) -> Result<(), Error> {
    crate::cron::parse_cron(cron).map(|_| ()).map_err(Error::from)
}

/// Checks a window's duration and returns it: strict, and more than zero.
///
/// # Errors
///
/// [`Error::Duration`] or [`Error::Zero`].
pub fn check_duration(text: &str) -> Result<Duration, Error> {
    let d = crate::duration::parse(text)?;
    if d.is_zero() {
        return Err(Error::Zero(text.to_owned()));
    }
    Ok(d)
}

impl SyncWindow {
    /// Checks the window's cron and duration.
    ///
    /// # Errors
    ///
    /// The first [`Error`] found.
    pub fn check(&self) -> Result<Duration, Error> {
        check_cron(&self.cron)?;
        check_duration(&self.duration)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_and_writes_as_declared_and_refuses_a_bad_cron_or_duration() {
        let w = SyncWindow { kind: WindowKind::Deny, cron: "0 9 * * 1-5".into(), duration: "8h".into(), tz: None };
        assert_eq!(w.to_string(), r#"deny "0 9 * * 1-5" for 8h"#);
        assert_eq!(w.check().unwrap(), Duration::from_secs(8 * 3600));
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, r#"{"kind":"deny","cron":"0 9 * * 1-5","duration":"8h"}"#);
        assert_eq!(serde_json::from_str::<SyncWindow>(&json).unwrap(), w);
        let bad = SyncWindow { cron: "*/61 * * * *".into(), ..w.clone() };
        assert!(matches!(bad.check(), Err(Error::Cron(_))));
        assert!(matches!(check_duration("1.5h"), Err(Error::Duration(_))));
        assert_eq!(
            check_duration("0s").unwrap_err().to_string().split(',').next().unwrap(),
            "window duration `0s` is zero"
        );
        assert_eq!(WindowKind::parse("allow"), Some(WindowKind::Allow));
        assert_eq!(WindowKind::parse("permit"), None);
    }
}
