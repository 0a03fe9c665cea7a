//! chant's ownership marker in a PostgreSQL COMMENT: `[chant managed-by=chant stack=<project>
//! env=<env>]`, after the declared comment (separated by one space when there is one).
//!
//! [`split`] reads a live comment back into the declared part and the marker; [`stamp`] writes
//! one. A comment whose trailer is not a well-formed chant marker carries no marker.

use chant_lexicon::observe::{ChannelKeys, Marker, OwnershipChannel, ReadPath};

/// The manager name chant writes under `managed-by`.
pub const MANAGED_BY: &str = "chant";

/// The identity chant stamps: the project (stack) and the env.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The project's name (`[project] name` in chant.toml).
    pub stack: String,
    /// The env.
    pub env: String,
}

impl Identity {
    /// Returns this identity's marker trailer.
    pub fn trailer(&self) -> String {
        format!("[chant managed-by={MANAGED_BY} stack={} env={}]", self.stack, self.env)
    }

    /// Returns true when `marker` is this identity's.
    pub fn owns(&self, marker: &Marker) -> bool {
        marker.stack == self.stack && marker.env.as_deref() == Some(self.env.as_str())
    }
}

/// The ownership channel of the postgres lexicon: the COMMENT trailer, read on `describeResources`.
pub fn channel() -> OwnershipChannel {
    OwnershipChannel {
        keys: ChannelKeys { managed_by: "managed-by".into(), stack: "stack".into(), env: "env".into() },
        reads: vec![ReadPath::DescribeResources],
    }
}

/// Returns `declared` with `identity`'s marker after it.
pub fn stamp(declared: &str, identity: &Identity) -> String {
    if declared.is_empty() { identity.trailer() } else { format!("{declared} {}", identity.trailer()) }
}

/// Splits a live comment into its declared part and chant's marker, when it ends with one.
pub fn split(comment: &str) -> (String, Option<Marker>) {
    let trimmed = comment.trim_end();
    let Some(start) = trimmed.rfind("[chant ") else { return (comment.to_owned(), None) };
    let Some(body) = trimmed[start + 7..].strip_suffix(']') else { return (comment.to_owned(), None) };
    let mut managed_by = None;
    let mut stack = None;
    let mut env = None;
    for pair in body.split_whitespace() {
        match pair.split_once('=') {
            Some(("managed-by", v)) => managed_by = Some(v),
            Some(("stack", v)) => stack = Some(v),
            Some(("env", v)) => env = Some(v),
            _ => return (comment.to_owned(), None),
        }
    }
    match (managed_by, stack) {
        (Some(MANAGED_BY), Some(stack)) if !stack.is_empty() && env.is_none_or(|e| !e.is_empty()) => {
            let declared = trimmed[..start].trim_end().to_owned();
            (declared, Some(Marker { stack: stack.to_owned(), env: env.map(str::to_owned) }))
        }
        _ => (comment.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_and_split_round_trip() {
        let id = Identity { stack: "chant-examples".into(), env: "prod-db".into() };
        let c = stamp("Users of the app", &id);
        assert_eq!(c, "Users of the app [chant managed-by=chant stack=chant-examples env=prod-db]");
        let (declared, marker) = split(&c);
        assert_eq!(declared, "Users of the app");
        let marker = marker.unwrap();
        assert!(id.owns(&marker));
        assert_eq!(split(&stamp("", &id)), (String::new(), Some(Marker::new("chant-examples", "prod-db"))));
        assert_eq!(split("plain"), ("plain".into(), None));
        assert_eq!(split("x [chant managed-by=other stack=s env=e]").1, None);
        assert_eq!(split("x [chant managed-by=chant stack=s env=e] trailing").1, None);
        let other = split("[chant managed-by=chant stack=s env=other]").1.unwrap();
        assert!(!id.owns(&other));
    }
}
