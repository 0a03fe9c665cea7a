//! Durations as users write them: `90s`, `5m`, `1h30m`, `48h`, `250ms`. Parsing is strict: a
//! fraction (`1.5h`), a bare number or an unknown unit is an error that says how to write it.
//!
//! [`Timeout`] is a step argument of this kind (`gate(timeout = "48h")`, `shell(timeout = "5m")`):
//! parsed when the op is declared or loaded, and kept as written, so op.json holds the text the
//! author wrote.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a duration: {why}; write whole numbers with units, e.g. 90s, 5m, 1h30m, 250ms")]
pub struct ParseError {
    /// What was given.
    pub input: String,
    /// What is wrong.
    pub why: &'static str,
}

/// Parses a strict duration (`d`, `h`, `m`, `s`, `ms`, largest first, each at most once).
///
/// # Errors
///
/// Returns a [`ParseError`] naming the input and the accepted form.
pub fn parse(input: &str) -> Result<Duration, ParseError> {
    let err = |why| ParseError { input: input.to_owned(), why };
    let s = input.trim();
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    let units: [(&str, u64); 5] = [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)];
    let mut total: u64 = 0;
    let mut last_rank = None;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return Err(err(if rest.starts_with('.') {
                "fractions are not allowed"
            } else {
                "a unit must follow a number"
            }));
        }
        let n: u64 = rest[..digits].parse().map_err(|_| err("the number is too large"))?;
        rest = &rest[digits..];
        if rest.starts_with('.') {
            return Err(err("fractions are not allowed"));
        }
        let unit_len = rest.chars().take_while(char::is_ascii_alphabetic).count();
        if unit_len == 0 {
            return Err(err("a number needs a unit"));
        }
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let Some(rank) = units.iter().position(|(u, _)| *u == unit) else {
            return Err(err("the unit is not one of d, h, m, s, ms"));
        };
        if last_rank.is_some_and(|l| rank <= l) {
            return Err(err("units must go from largest to smallest, each once"));
        }
        last_rank = Some(rank);
        total =
            n.checked_mul(units[rank].1).and_then(|v| total.checked_add(v)).ok_or_else(|| err("it is too large"))?;
    }
    Ok(Duration::from_millis(total))
}

/// Formats a duration the way [`parse`] reads it (`1h30m`, `250ms`, `0s`).
pub fn format(d: Duration) -> String {
    let mut ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    for (u, size) in [("d", 86_400_000u64), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
        if ms >= size {
            out.push_str(&format!("{}{u}", ms / size));
            ms %= size;
        }
    }
    out
}

/// A duration argument of a step: the text as written and the duration it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeout {
    text: String,
    value: Duration,
}

impl Timeout {
    /// Parses a duration argument strictly.
    ///
    /// # Errors
    ///
    /// Returns a [`ParseError`] naming the input and the accepted form.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        Ok(Timeout { text: text.to_owned(), value: parse(text)? })
    }

    /// Returns the duration.
    pub fn duration(&self) -> Duration {
        self.value
    }

    /// Returns the text as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Timeout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timeout::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_accepted_forms() {
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("48h").unwrap(), Duration::from_secs(172_800));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("1m500ms").unwrap(), Duration::from_millis(60_500));
    }

    #[test]
    fn refuses_everything_else() {
        for bad in ["1.5h", "", "90", "5x", "m", "30m1h", "5m5m", "-5s", "1 h"] {
            let e = parse(bad).unwrap_err();
            assert!(e.to_string().contains("90s, 5m, 1h30m"), "{bad}: {e}");
        }
        assert!(parse("1.5h").unwrap_err().why.contains("fractions"));
    }

    #[test]
    fn a_timeout_keeps_its_text() {
        let t: Timeout = serde_json::from_str("\"90m\"").unwrap();
        assert_eq!(t.duration(), Duration::from_secs(5400));
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"90m\"");
        assert!(serde_json::from_str::<Timeout>("\"1.5h\"").unwrap_err().to_string().contains("fractions"));
    }

    #[test]
    fn formats_round_trip() {
        for s in ["1h30m", "250ms", "2d", "5m", "1m500ms"] {
            assert_eq!(format(parse(s).unwrap()), s);
        }
        assert_eq!(format(Duration::ZERO), "0s");
    }
}
