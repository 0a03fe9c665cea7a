//! An observation: what one lexicon saw when asked about the entities an env declares.
//!
//! Every entity a lexicon was asked about lands in exactly one of three verdicts. **Present**: a
//! key in [`Observation::resources`], carrying its ownership (`owned | foreign | unknown`) and the
//! properties the change set compares with the declaration. **Unobserved**: a key in
//! [`Observation::unobserved`] with a total [`UnobservedReason`] — the lexicon could not look, so
//! nothing may be concluded (never a `create`, never a `delete`). **Absent**: in neither map — the
//! lexicon asked and the substrate said "not there"; this is the only verdict that may become a
//! `create`. [`Observation::queried`] records, per entity, the address the read was actually
//! issued against; it never changes a verdict and is the only record an absence gets.
//!
//! A [`Lexicon`] produces an observation. An `Err` from [`Lexicon::describe_resources`] is a
//! whole-lexicon failure, which [`observe_component`] turns into every declared entity
//! `read-failed`, so a broken read never arrives downstream as an empty environment.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::UnobservedReason;

/// Whose a present resource is, as far as the lexicon's ownership channel can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ownership {
    /// chant put it there (its marker, or its last recorded apply, says so).
    Owned,
    /// Someone else's: the channel was read and names no chant ownership.
    Foreign,
    /// The channel was not read on this path; never escalated to a `delete`.
    Unknown,
}

impl Ownership {
    /// Every verdict, in declaration order.
    pub const ALL: [Ownership; 3] = [Ownership::Owned, Ownership::Foreign, Ownership::Unknown];

    /// Returns the verdict as written in records (`owned`).
    pub fn as_str(self) -> &'static str {
        match self {
            Ownership::Owned => "owned",
            Ownership::Foreign => "foreign",
            Ownership::Unknown => "unknown",
        }
    }
}

/// One entity an env declares, as handed to a lexicon and to the change-set builder.
///
/// `properties` are the values the change set compares with what the lexicon observed (for a
/// file: its type, mode and content digest). Only declared properties are compared; a live
/// property the declaration does not name is never drift.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeclaredEntity {
    /// The entity's name, unique within its component (for a file: its path under the root).
    pub name: String,
    /// Its kind (`file`, `table`), when the lexicon has more than one.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The declared values compared with the observed ones.
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
}

impl DeclaredEntity {
    /// Creates a declared entity with no kind and no properties.
    pub fn new(name: impl Into<String>) -> Self {
        DeclaredEntity { name: name.into(), kind: None, properties: BTreeMap::new() }
    }

    /// Sets the entity's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Adds one declared property.
    #[must_use]
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }
}

/// A resource the lexicon observed present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PresentResource {
    /// Its kind, when the lexicon has more than one.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Whose it is.
    pub ownership: Ownership,
    /// The observed values, keyed like [`DeclaredEntity::properties`].
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// The declared entity this one belongs to (an index of a declared table), which makes an
    /// undeclared resource `runtime` rather than `delete` or `adopt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_owner: Option<String>,
}

impl PresentResource {
    /// Creates a present resource with the given ownership and no properties.
    pub fn new(ownership: Ownership) -> Self {
        PresentResource { kind: None, ownership, properties: BTreeMap::new(), runtime_owner: None }
    }

    /// Sets the resource's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Adds one observed property.
    #[must_use]
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Marks the resource as belonging to the declared entity `owner`.
    #[must_use]
    pub fn runtime_of(mut self, owner: impl Into<String>) -> Self {
        self.runtime_owner = Some(owner.into());
        self
    }
}

/// An entity the lexicon could not look at, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Unobserved {
    /// Its kind, when known.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Why it was not observed.
    pub reason: UnobservedReason,
    /// What went wrong, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The address the failed read was issued against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queried: Option<String>,
}

impl Unobserved {
    /// Creates an unobserved verdict with only a reason.
    pub fn new(reason: UnobservedReason) -> Self {
        Unobserved { kind: None, reason, detail: None, queried: None }
    }

    /// Sets the entity's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Sets the one-line detail.
    #[must_use]
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Sets the address the read was issued against.
    #[must_use]
    pub fn queried(mut self, address: impl Into<String>) -> Self {
        self.queried = Some(address.into());
        self
    }

    /// Renders the verdict in words:
    /// `<name>[ (<type>)] — <reason text>[: <detail>][ [queried <address>]]`.
    pub fn describe(&self, name: &str) -> String {
        let mut out = String::from(name);
        if let Some(kind) = &self.kind {
            out.push_str(&format!(" ({kind})"));
        }
        out.push_str(" — ");
        out.push_str(self.reason.text());
        if let Some(detail) = &self.detail {
            out.push_str(": ");
            out.push_str(detail);
        }
        if let Some(address) = &self.queried {
            out.push_str(&format!(" [queried {address}]"));
        }
        out
    }
}

/// What one lexicon saw: present resources, unobserved entities, and the addresses it asked.
///
/// An entity in neither map is absent. A name must not be in both maps; the change-set builder
/// treats such a name as unobserved (the cautious reading) and the conformance suite refuses it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observation {
    /// Entities observed present, by name.
    #[serde(default)]
    pub resources: BTreeMap<String, PresentResource>,
    /// Entities not observed, by name.
    #[serde(default)]
    pub unobserved: BTreeMap<String, Unobserved>,
    /// The address each read was issued against, by name (present, absent or unobserved).
    #[serde(default)]
    pub queried: BTreeMap<String, String>,
}

impl Observation {
    /// Creates an empty observation (everything asked about is absent).
    pub fn new() -> Self {
        Observation::default()
    }

    /// Creates the bare-map form: "everything I was asked about, I looked at".
    pub fn from_resources(resources: BTreeMap<String, PresentResource>) -> Self {
        Observation { resources, unobserved: BTreeMap::new(), queried: BTreeMap::new() }
    }

    /// Marks every named entity unobserved for the same reason and detail.
    pub fn unobserved_all<'a>(
        names: impl IntoIterator<Item = &'a DeclaredEntity>,
        reason: UnobservedReason,
        detail: Option<&str>,
    ) -> Self {
        let mut observation = Observation::new();
        for entity in names {
            let mut verdict = Unobserved::new(reason);
            verdict.kind = entity.kind.clone();
            verdict.detail = detail.map(str::to_owned);
            observation.unobserved.insert(entity.name.clone(), verdict);
        }
        observation
    }

    /// Records `name` as present.
    pub fn insert_present(&mut self, name: impl Into<String>, resource: PresentResource) {
        self.resources.insert(name.into(), resource);
    }

    /// Records `name` as unobserved.
    pub fn insert_unobserved(&mut self, name: impl Into<String>, verdict: Unobserved) {
        self.unobserved.insert(name.into(), verdict);
    }

    /// Records the address the read of `name` was issued against.
    pub fn insert_queried(&mut self, name: impl Into<String>, address: impl Into<String>) {
        self.queried.insert(name.into(), address.into());
    }

    /// Returns true when `name` is in neither map.
    pub fn is_absent(&self, name: &str) -> bool {
        !self.resources.contains_key(name) && !self.unobserved.contains_key(name)
    }
}

/// A whole-lexicon failure: the lexicon could not read anything it was asked about.
///
/// Returned by [`Lexicon::describe_resources`]; [`observe_component`] turns it into every
/// declared entity `read-failed`, with this error's message (and its causes) as the detail.
#[derive(Debug, thiserror::Error)]
pub enum LexiconError {
    /// The substrate was reached, or should have been, and the read failed as a whole.
    #[error("{lexicon} could not be read: {detail}")]
    ReadFailed {
        /// The lexicon's name.
        lexicon: String,
        /// What failed, in one line.
        detail: String,
        /// The underlying error, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The declaration handed to the lexicon cannot be read by it.
    #[error("invalid declaration for {lexicon}: {detail}")]
    InvalidDeclaration {
        /// The lexicon's name.
        lexicon: String,
        /// What is wrong, naming the entity.
        detail: String,
    },
}

impl LexiconError {
    /// Creates a [`LexiconError::ReadFailed`] with an underlying cause.
    pub fn read_failed(
        lexicon: impl Into<String>,
        detail: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        LexiconError::ReadFailed { lexicon: lexicon.into(), detail: detail.into(), source: Some(source.into()) }
    }

    /// Returns the message with every cause appended, as one line (`a: b: c`).
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            source = cause.source();
        }
        out
    }
}

/// A reader of one kind of substrate: tells, for the entities an env declares, which are present
/// (and whose), which are absent, and which it could not look at.
///
/// Implementations must never report as absent an entity they could not read: a failed read is
/// an [`Unobserved`] entry with a reason, or, when nothing could be read, an `Err`.
pub trait Lexicon {
    /// Returns the lexicon's component name (`files`), used for status rows.
    fn name(&self) -> &str;

    /// Observes the declared entities (and any undeclared ones the lexicon knows to look at,
    /// such as those of its last recorded apply).
    ///
    /// # Errors
    ///
    /// A whole-lexicon failure: nothing could be read. The core marks every declared entity
    /// `read-failed`.
    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError>;
}

/// Observes one component: asks the lexicon, and turns a whole-lexicon failure into every
/// declared entity `read-failed` (keeping the failure's message as the detail).
pub fn observe_component(lexicon: &dyn Lexicon, declared: &[DeclaredEntity]) -> Observation {
    normalize(lexicon.describe_resources(declared), declared)
}

/// Turns the result of a `describe_resources` call into an observation: `Ok` as is, `Err` as
/// every declared entity `read-failed`.
pub fn normalize(result: Result<Observation, LexiconError>, declared: &[DeclaredEntity]) -> Observation {
    match result {
        Ok(observation) => observation,
        Err(error) => Observation::unobserved_all(declared, UnobservedReason::ReadFailed, Some(error.chain().as_str())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken;

    impl Lexicon for Broken {
        fn name(&self) -> &str {
            "broken"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            Err(LexiconError::read_failed("broken", "server down", std::io::Error::other("connection refused")))
        }
    }

    #[test]
    fn whole_lexicon_failure_marks_every_declared_entity_read_failed() {
        let declared = vec![DeclaredEntity::new("a").kind("file"), DeclaredEntity::new("b")];
        let observation = observe_component(&Broken, &declared);
        assert!(observation.resources.is_empty());
        assert_eq!(observation.unobserved.len(), 2);
        let a = &observation.unobserved["a"];
        assert_eq!(a.reason, UnobservedReason::ReadFailed);
        assert_eq!(a.kind.as_deref(), Some("file"));
        assert_eq!(a.detail.as_deref(), Some("broken could not be read: server down: connection refused"));
        assert_eq!(observation.unobserved["b"].kind, None);
    }

    #[test]
    fn absent_means_in_neither_map() {
        let mut observation = Observation::new();
        observation.insert_present("p", PresentResource::new(Ownership::Owned));
        observation.insert_unobserved("u", Unobserved::new(UnobservedReason::Filtered));
        observation.insert_queried("a", "/root/a");
        assert!(!observation.is_absent("p"));
        assert!(!observation.is_absent("u"));
        assert!(observation.is_absent("a"), "queried never changes a verdict");
    }

    #[test]
    fn describe_renders_kind_reason_detail_and_address() {
        let verdict = Unobserved::new(UnobservedReason::NoCredentials)
            .kind("table")
            .detail("password authentication failed")
            .queried("postgres://app@127.0.0.1:55432/app");
        assert_eq!(
            verdict.describe("public.users"),
            "public.users (table) — no credentials: password authentication failed \
             [queried postgres://app@127.0.0.1:55432/app]"
        );
        assert_eq!(Unobserved::new(UnobservedReason::ReadFailed).describe("x"), "x — read failed");
    }

    #[test]
    fn observation_json_shape() {
        let mut observation = Observation::new();
        observation.insert_present(
            "a",
            PresentResource::new(Ownership::Foreign).kind("file").property("mode", "0644").runtime_of("t"),
        );
        observation.insert_unobserved(
            "b",
            Unobserved::new(UnobservedReason::ReadFailed).detail("is a directory").queried("/r/b"),
        );
        observation.insert_queried("c", "/r/c");
        let json = serde_json::to_string(&observation).unwrap();
        assert_eq!(
            json,
            r#"{"resources":{"a":{"type":"file","ownership":"foreign","properties":{"mode":"0644"},"runtimeOwner":"t"}},"unobserved":{"b":{"reason":"read-failed","detail":"is a directory","queried":"/r/b"}},"queried":{"c":"/r/c"}}"#
        );
        let back: Observation = serde_json::from_str(&json).unwrap();
        assert_eq!(back, observation);
        let bare: Observation = serde_json::from_str(r#"{"resources":{}}"#).unwrap();
        assert_eq!(bare, Observation::new());
    }

    #[test]
    fn ownership_codes() {
        let codes: Vec<&str> = Ownership::ALL.iter().map(|o| o.as_str()).collect();
        assert_eq!(codes, ["owned", "foreign", "unknown"]);
        for o in Ownership::ALL {
            assert_eq!(serde_json::to_string(&o).unwrap(), format!("\"{}\"", o.as_str()));
        }
    }
}
