//! Names: the one rule for the names of ops, envs, gates and rule ids, `[a-z][a-z0-9-]*`.
//!
//! The rule makes each name map to one Rust identifier (the macros upper-case it and turn `-` into
//! `_`, which is injective on this alphabet) and to one ledger path segment. [`Name`] is a string
//! that passed the rule; it serialises as the plain string, so op.json and ledger bytes are the
//! same as for a `String`, and deserialising checks the rule.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A name that does not match `[a-z][a-z0-9-]*`. Returned by [`Name::new`] and [`Name::parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} `{name}` must match [a-z][a-z0-9-]* (lowercase letters, digits and `-`, starting with a letter), so it maps to one identifier and one ledger path"
)]
pub struct InvalidName {
    /// What the name names (`op name`, `env name`, `rule id`, ...).
    pub what: String,
    /// The name as given.
    pub name: String,
}

/// The name of an op, env, gate or rule: `[a-z][a-z0-9-]*`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(String);

impl Name {
    /// Returns true when `name` matches `[a-z][a-z0-9-]*`.
    pub fn is_valid(name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    }

    /// Checks `name` against the rule; `what` says what it names, for the message.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidName`] naming `what`, the name and the allowed form.
    pub fn parse(what: &str, name: impl Into<String>) -> Result<Self, InvalidName> {
        let name = name.into();
        if Self::is_valid(&name) { Ok(Name(name)) } else { Err(InvalidName { what: what.to_owned(), name }) }
    }

    /// Checks `name` against the rule.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidName`] for a name outside `[a-z][a-z0-9-]*`.
    pub fn new(name: impl Into<String>) -> Result<Self, InvalidName> {
        Self::parse("name", name)
    }

    /// Returns the name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Returns the name as a `String`.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        *self == other.0
    }
}

impl From<Name> for String {
    fn from(name: Name) -> String {
        name.0
    }
}

impl TryFrom<String> for Name {
    type Error = InvalidName;

    fn try_from(name: String) -> Result<Self, InvalidName> {
        Name::new(name)
    }
}

impl TryFrom<&str> for Name {
    type Error = InvalidName;

    fn try_from(name: &str) -> Result<Self, InvalidName> {
        Name::new(name)
    }
}

impl std::str::FromStr for Name {
    type Err = InvalidName;

    fn from_str(name: &str) -> Result<Self, InvalidName> {
        Name::new(name)
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Name::new(s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_case_by_case() {
        for ok in ["a", "staging", "staging-apply", "a1", "x-1-y", "a--b", "a-"] {
            assert!(Name::is_valid(ok), "{ok}");
            assert_eq!(Name::new(ok).unwrap().as_str(), ok);
        }
        for bad in ["", "1a", "-a", "Staging", "staging_apply", "a b", "ä", "a.b", "a/b"] {
            assert!(!Name::is_valid(bad), "{bad}");
            assert!(Name::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_error_names_what_and_the_rule() {
        let e = Name::parse("op name", "Staging_Converge").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("op name `Staging_Converge` must match [a-z][a-z0-9-]*"), "{text}");
    }

    #[test]
    fn serialises_as_the_plain_string_and_checks_on_the_way_in() {
        let n = Name::new("staging-apply").unwrap();
        assert_eq!(serde_json::to_string(&n).unwrap(), "\"staging-apply\"");
        assert_eq!(serde_json::from_str::<Name>("\"staging-apply\"").unwrap(), n);
        let e = serde_json::from_str::<Name>("\"Staging\"").unwrap_err().to_string();
        assert!(e.contains("[a-z][a-z0-9-]*"), "{e}");
        assert!(n == "staging-apply");
        assert!("staging-apply" == n);
    }
}
