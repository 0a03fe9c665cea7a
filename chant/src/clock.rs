//! The clock: every time chant reads (tick start and end, gate expiry, lease expiry, schedules,
//! the commit time of ledger commits) comes from here, so `CHANT_NOW` can fix it in tests.
//!
//! `CHANT_NOW` is for tests only: when set to an RFC 3339 instant, [`now`] returns it, unchanged,
//! on every call. A [`Clock`] is the same choice made once and passed around as a value: the
//! ledger and the lease store are handed one when they are opened, so the commits and lease
//! blobs they write carry the time the rest of the process sees.

use jiff::Timestamp;

/// The variable that fixes the clock (tests only).
pub const NOW_VAR: &str = "CHANT_NOW";

/// A `CHANT_NOW` that does not parse.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{NOW_VAR}={value:?} is not an RFC 3339 instant such as 2026-08-25T10:00:00Z")]
pub struct BadNow {
    /// The value given.
    pub value: String,
}

/// Where a process reads the time from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    #[default]
    System,
    /// A fixed instant, returned unchanged on every read (`CHANT_NOW`, tests).
    Fixed(Timestamp),
}

impl Clock {
    /// Returns the clock the environment asks for: fixed at `CHANT_NOW` when it is set, else the
    /// system clock.
    ///
    /// # Errors
    ///
    /// Returns [`BadNow`] when `CHANT_NOW` is set but does not parse.
    pub fn from_env() -> Result<Clock, BadNow> {
        Clock::from_value(std::env::var(NOW_VAR).ok().as_deref())
    }

    /// Returns the clock a value of `CHANT_NOW` asks for (`None` or blank: the system clock).
    ///
    /// # Errors
    ///
    /// Returns [`BadNow`] when the value does not parse.
    pub fn from_value(value: Option<&str>) -> Result<Clock, BadNow> {
        match value {
            Some(v) if !v.trim().is_empty() => {
                v.trim().parse::<Timestamp>().map(Clock::Fixed).map_err(|_| BadNow { value: v.to_owned() })
            }
            _ => Ok(Clock::System),
        }
    }

    /// Returns the current instant of this clock.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::System => Timestamp::now(),
            Clock::Fixed(at) => *at,
        }
    }
}

/// Returns the current instant, or `CHANT_NOW` when set.
///
/// # Errors
///
/// Returns [`BadNow`] when `CHANT_NOW` is set but does not parse.
pub fn now() -> Result<Timestamp, BadNow> {
    Clock::from_env().map(|clock| clock.now())
}

/// Formats an instant as records write it: RFC 3339 UTC with milliseconds and `Z`.
pub fn format(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses a recorded instant.
pub fn parse(s: &str) -> Option<Timestamp> {
    s.parse::<Timestamp>().ok()
}

/// Parses a `--since` value: an RFC 3339 instant, or a time before `now` written as a
/// duration in jiff's friendly format (`1h`, `30m`, `2d`, `1h30m`; a day is 24 hours).
pub fn parse_since(s: &str, now: Timestamp) -> Option<Timestamp> {
    if let Some(t) = parse(s) {
        return Some(t);
    }
    let span: jiff::Span = s.trim().parse().ok()?;
    let ago = span.to_duration(jiff::SpanRelativeTo::days_are_24_hours()).ok()?;
    if ago.is_negative() {
        return None;
    }
    now.checked_sub(ago).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_an_instant_or_a_time_ago() {
        let now: Timestamp = "2026-03-02T12:00:00Z".parse().unwrap();
        let at = |s: &str| parse_since(s, now).map(|t| t.to_string());
        assert_eq!(at("2026-01-01T00:00:00Z").as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(at("1h").as_deref(), Some("2026-03-02T11:00:00Z"));
        assert_eq!(at("30m").as_deref(), Some("2026-03-02T11:30:00Z"));
        assert_eq!(at("2d").as_deref(), Some("2026-02-28T12:00:00Z"));
        assert_eq!(at("1h30m").as_deref(), Some("2026-03-02T10:30:00Z"));
        for bad in ["", "yesterday", "-1h", "1x"] {
            assert_eq!(at(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formats_with_milliseconds_and_z() {
        let t: Timestamp = "2026-08-25T10:04:00.5+02:00".parse().unwrap();
        assert_eq!(format(t), "2026-08-25T08:04:00.500Z");
        assert_eq!(parse("2026-08-25T08:04:00.500Z"), Some(t));
        assert_eq!(parse("yesterday"), None);
    }

    #[test]
    fn a_fixed_clock_never_moves() {
        let at: Timestamp = "2026-08-25T10:00:00Z".parse().unwrap();
        assert_eq!(Clock::Fixed(at).now(), at);
        assert_eq!(Clock::Fixed(at).now(), Clock::Fixed(at).now());
        assert!(Clock::System.now() > at.checked_sub(jiff::SignedDuration::from_hours(24 * 365 * 100)).unwrap());
    }
}
