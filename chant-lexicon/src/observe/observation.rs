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
//!
//! The **bare-map form** ([`Observation::from_resources`], or a JSON object of name -> resource
//! read by [`Observation::from_json`]) means "everything I was asked about, I looked at": every
//! name it leaves out is absent. Use it only when that is true.
//!
//! A lexicon that stamps an ownership **marker** declares its [`OwnershipChannel`]: the marker's
//! keys and the read paths on which it can read them back; everywhere else it answers
//! `unknown`. [`check_channel`] refuses a channel that names a read path the lexicon does not
//! implement, or whose keys are incomplete.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::properties::{Properties, PropertyName};
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

/// The ownership marker a read surfaced on a live resource: the identity chant stamped on it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Marker {
    /// The project (stack) that stamped it.
    pub stack: String,
    /// The env it was stamped for, when the marker names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
}

impl Marker {
    /// Creates a marker naming a stack and an env.
    pub fn new(stack: impl Into<String>, env: impl Into<String>) -> Self {
        Marker { stack: stack.into(), env: Some(env.into()) }
    }
}

/// A read path of a lexicon: one way it can be asked about live state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReadPath {
    /// [`Lexicon::describe_resources`]: the declared estate, thin.
    DescribeResources,
    /// [`Lexicon::observe_resources_deep`]: property trees, with optional field owners.
    ObserveResourcesDeep,
    /// Live export of full configuration (not in this version).
    ExportResources,
}

impl ReadPath {
    /// Returns the path's name as written in a channel declaration (`describeResources`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReadPath::DescribeResources => "describeResources",
            ReadPath::ObserveResourcesDeep => "observeResourcesDeep",
            ReadPath::ExportResources => "exportResources",
        }
    }
}

/// The keys of an ownership marker, as the substrate spells them (for the PostgreSQL COMMENT
/// trailer: `managed-by`, `stack`, `env`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelKeys {
    /// The key naming the manager (`managed-by`).
    pub managed_by: String,
    /// The key naming the project (`stack`).
    pub stack: String,
    /// The key naming the env (`env`).
    pub env: String,
}

/// Where a lexicon can read its ownership marker: the keys, and the read paths that read them.
///
/// A lexicon with no marker anywhere declares no channel, and must then answer `unknown` on
/// every owned read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnershipChannel {
    /// The marker's keys.
    pub keys: ChannelKeys,
    /// The read paths on which the marker is read back.
    pub reads: Vec<ReadPath>,
}

impl OwnershipChannel {
    /// Returns true when the marker is read on `path`.
    pub fn reads_on(&self, path: ReadPath) -> bool {
        self.reads.contains(&path)
    }
}

/// A refused ownership-channel declaration. Returned by [`check_channel`] and [`check_lexicon`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The channel names a read path the lexicon does not implement.
    #[error(
        "lexicon {lexicon} declares its ownership marker on {path}, a read path it does not implement (it implements: {implemented})"
    )]
    UnimplementedPath {
        /// The lexicon.
        lexicon: String,
        /// The path named.
        path: &'static str,
        /// The paths it implements, comma-separated.
        implemented: String,
    },
    /// A key of the channel is blank.
    #[error("lexicon {lexicon} declares an incomplete ownership channel: the {key} key is blank")]
    IncompleteKeys {
        /// The lexicon.
        lexicon: String,
        /// Which key (`managedBy`, `stack`, `env`).
        key: &'static str,
    },
    /// The channel names no read path at all.
    #[error("lexicon {lexicon} declares an ownership channel with no read path; omit the channel instead")]
    NoReadPath {
        /// The lexicon.
        lexicon: String,
    },
}

/// Checks an ownership-channel declaration against the read paths a lexicon implements.
///
/// # Errors
///
/// [`ChannelError`] when the channel names a path not in `implemented`, has a blank key, or
/// names no path.
pub fn check_channel(lexicon: &str, channel: &OwnershipChannel, implemented: &[ReadPath]) -> Result<(), ChannelError> {
    for (key, value) in
        [("managedBy", &channel.keys.managed_by), ("stack", &channel.keys.stack), ("env", &channel.keys.env)]
    {
        if value.trim().is_empty() {
            return Err(ChannelError::IncompleteKeys { lexicon: lexicon.to_owned(), key });
        }
    }
    if channel.reads.is_empty() {
        return Err(ChannelError::NoReadPath { lexicon: lexicon.to_owned() });
    }
    for path in &channel.reads {
        if !implemented.contains(path) {
            return Err(ChannelError::UnimplementedPath {
                lexicon: lexicon.to_owned(),
                path: path.as_str(),
                implemented: implemented.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(())
}

/// Checks a lexicon's declared ownership channel (if any) against the read paths it implements.
///
/// # Errors
///
/// As [`check_channel`].
pub fn check_lexicon(lexicon: &dyn Lexicon) -> Result<(), ChannelError> {
    match lexicon.ownership_channel() {
        Some(channel) => check_channel(lexicon.name(), &channel, lexicon.read_paths()),
        None => Ok(()),
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
    pub kind: Option<PropertyName>,
    /// The declared values compared with the observed ones.
    #[serde(default)]
    pub properties: Properties,
}

impl DeclaredEntity {
    /// Creates a declared entity with no kind and no properties.
    pub fn new(name: impl Into<String>) -> Self {
        DeclaredEntity { name: name.into(), kind: None, properties: Properties::new() }
    }

    /// Sets the entity's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<PropertyName>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Adds one declared property.
    #[must_use]
    pub fn property(mut self, key: impl Into<PropertyName>, value: impl Into<String>) -> Self {
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
    pub kind: Option<PropertyName>,
    /// Whose it is.
    pub ownership: Ownership,
    /// The observed values, keyed like [`DeclaredEntity::properties`].
    #[serde(default)]
    pub properties: Properties,
    /// The declared entity this one belongs to (an index of a declared table), which makes an
    /// undeclared resource `runtime` rather than `delete` or `adopt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_owner: Option<String>,
    /// The ownership marker the read surfaced, when the live model carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Marker>,
}

impl PresentResource {
    /// Creates a present resource with the given ownership and no properties.
    pub fn new(ownership: Ownership) -> Self {
        PresentResource { kind: None, ownership, properties: Properties::new(), runtime_owner: None, marker: None }
    }

    /// Sets the resource's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<PropertyName>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Adds one observed property.
    #[must_use]
    pub fn property(mut self, key: impl Into<PropertyName>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Marks the resource as belonging to the declared entity `owner`.
    #[must_use]
    pub fn runtime_of(mut self, owner: impl Into<String>) -> Self {
        self.runtime_owner = Some(owner.into());
        self
    }

    /// Sets the marker the read surfaced.
    #[must_use]
    pub fn marker(mut self, marker: Marker) -> Self {
        self.marker = Some(marker);
        self
    }
}

/// An entity the lexicon could not look at, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Unobserved {
    /// Its kind, when known.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PropertyName>,
    /// Why it was not observed.
    pub reason: UnobservedReason,
    /// What went wrong, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The address the failed read was issued against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queried: Option<Arc<str>>,
}

impl Unobserved {
    /// Creates an unobserved verdict with only a reason.
    pub fn new(reason: UnobservedReason) -> Self {
        Unobserved { kind: None, reason, detail: None, queried: None }
    }

    /// Sets the entity's kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<PropertyName>) -> Self {
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
    pub fn queried(mut self, address: impl Into<Arc<str>>) -> Self {
        self.queried = Some(address.into());
        self
    }

    /// Renders the verdict in words:
    /// `<name>[ (<type>)] — <reason text>[: <detail>][ [queried <address>]]`, the address with
    /// any URL password removed (`postgres://app@127.0.0.1:55432/app`, never `app:pw@`).
    pub fn describe(&self, name: &str) -> String {
        let mut out = String::from(name);
        if let Some(kind) = &self.kind {
            out.push_str(&format!(" ({kind})"));
        }
        out.push_str(" — ");
        out.push_str(&self.cause());
        out
    }

    /// Why it was not observed, without the entity's name: the reason in words, its detail and
    /// the address asked (never a password). Entities with the same cause are reported together.
    pub fn cause(&self) -> String {
        let mut out = String::from(self.reason.text());
        if let Some(detail) = &self.detail {
            out.push_str(": ");
            out.push_str(detail);
        }
        if let Some(address) = &self.queried {
            out.push_str(&format!(" [queried {}]", crate::redact::strip_url_password(address)));
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
    /// The address each read was issued against, by name (present, absent or unobserved): one
    /// address, shared by every name read from it.
    #[serde(default)]
    pub queried: BTreeMap<String, Arc<str>>,
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

    /// Reads an observation from JSON in either form a lexicon may return: the envelope
    /// (`{"observation": "v1", "resources": ..., "unobserved": ..., "queried": ...}`, detected
    /// by that literal), or the bare map of name -> present resource ("looked at everything").
    ///
    /// # Errors
    ///
    /// The JSON is neither form.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, serde_json::Error> {
        if value.get("observation").and_then(serde_json::Value::as_str) == Some("v1") {
            let mut envelope = value.clone();
            if let Some(map) = envelope.as_object_mut() {
                map.remove("observation");
            }
            serde_json::from_value(envelope)
        } else {
            serde_json::from_value::<BTreeMap<String, PresentResource>>(value.clone()).map(Observation::from_resources)
        }
    }

    /// Returns the observation as the JSON envelope (`"observation": "v1"` and the three maps).
    pub fn to_envelope_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.insert("observation".into(), serde_json::Value::String("v1".into()));
        }
        value
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
    pub fn insert_queried(&mut self, name: impl Into<String>, address: impl Into<Arc<str>>) {
        self.queried.insert(name.into(), address.into());
    }

    /// Returns true when `name` is in neither map.
    pub fn is_absent(&self, name: &str) -> bool {
        !self.resources.contains_key(name) && !self.unobserved.contains_key(name)
    }
}

impl From<BTreeMap<String, PresentResource>> for Observation {
    /// The bare-map form: "everything I was asked about, I looked at".
    fn from(resources: BTreeMap<String, PresentResource>) -> Self {
        Observation::from_resources(resources)
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
        chant_store::error::chain(self)
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

    /// Returns the read paths this lexicon implements (by default only
    /// [`ReadPath::DescribeResources`]).
    fn read_paths(&self) -> &[ReadPath] {
        &[ReadPath::DescribeResources]
    }

    /// Returns where this lexicon reads its ownership marker, or `None` when it stamps none
    /// (its owned reads must then answer `unknown`). Checked by [`check_lexicon`].
    fn ownership_channel(&self) -> Option<OwnershipChannel> {
        None
    }

    /// Subscribes to the substrate's change stream, if the lexicon offers one: `sink` is told
    /// that *something* moved (a trigger that carries no data, never a fact) or that the stream
    /// was lost. Dropping the [`Subscription`] closes it.
    ///
    /// # Errors
    ///
    /// [`SubscribeError::NotImplemented`] (the default) when the lexicon has no change stream;
    /// [`SubscribeError::Failed`] when it has one but could not open it.
    fn subscribe_changes(&self, sink: ChangeSink) -> Result<Subscription, SubscribeError> {
        let _ = sink;
        Err(SubscribeError::NotImplemented { lexicon: self.name().to_owned() })
    }

    /// Returns the declared content of the entity `name` and its content read now, for a
    /// person's diff of an entity that differs (`lifecycle diff`), or `None` (the default) when
    /// the lexicon keeps no content worth showing as text. Read-only, like every observation.
    fn texts(&self, name: &str) -> Option<EntityTexts> {
        let _ = name;
        None
    }

    // --- deep read hooks ---

    /// Reads, per declared entity found present, its declared and normalised live property trees
    /// and, where the substrate records writers, its field owners: the `observeResourcesDeep`
    /// read path ([`crate::observe::deep`]). Read-only, like every observation; core classifies
    /// the trees, so a lexicon only reads.
    ///
    /// # Errors
    ///
    /// [`DeepError::NotImplemented`](crate::observe::deep::DeepError) (the default): the lexicon
    /// has whole-entity verdicts only, and behaves exactly as without the hook;
    /// [`DeepError::Failed`](crate::observe::deep::DeepError) when the read failed as a whole.
    fn observe_resources_deep(
        &self,
        declared: &[DeclaredEntity],
    ) -> Result<crate::observe::deep::DeepObservation, crate::observe::deep::DeepError> {
        let _ = declared;
        Err(crate::observe::deep::DeepError::NotImplemented { lexicon: self.name().to_owned() })
    }

    /// Returns this lexicon's deep verdict already classified, when it can tell it without
    /// building every property tree (for a file that is exactly as declared, nothing to
    /// report), or `None` (the default): core then classifies [`Lexicon::observe_resources_deep`].
    /// When it answers, the answer must equal what [`crate::observe::deep::classify_all`] makes
    /// of that read with [`Lexicon::substrate_written_paths`]: a shortcut, never another verdict.
    fn observe_deep_classified(
        &self,
        declared: &[DeclaredEntity],
    ) -> Option<Result<crate::observe::deep::ComponentDeep, crate::observe::deep::DeepError>> {
        let _ = declared;
        None
    }

    /// Returns the paths the substrate writes on every object of a kind (server-minted
    /// metadata, status), in the pattern form of [`crate::observe::deep::path`]: the only live
    /// paths dropped before classifying, and never a declared one. Empty by default.
    fn substrate_written_paths(&self) -> &'static [&'static str] {
        &[]
    }

    // --- estate hooks (beyond the declared estate: `observe::estate`) ---

    /// Returns what the declared estate references and does not declare: depth one by
    /// reference (plus the chains the lexicon's reference catalog marks as meaningful), each
    /// resource naming the declared entities that pulled it in; an unreadable one is a hole.
    /// Read-only. Checked by [`check_dependencies`](super::estate::check_dependencies).
    ///
    /// # Errors
    ///
    /// [`EstateError::NotImplemented`](super::estate::EstateError) by default; `Failed` when
    /// nothing could be read.
    fn observe_dependencies(
        &self,
        declared: &[DeclaredEntity],
    ) -> Result<super::estate::Dependencies, super::estate::EstateError> {
        let _ = declared;
        Err(super::estate::EstateError::not_implemented(self.name(), super::estate::EstateHook::Dependencies))
    }

    /// Returns the kinds of which ambient resources are possible, without scanning (none by
    /// default).
    fn ambient_kinds(&self) -> Vec<String> {
        Vec::new()
    }

    /// Returns the resources of [`Lexicon::ambient_kinds`] that nothing declares and nothing
    /// references, excluding everything in `observed`. Read-only.
    ///
    /// # Errors
    ///
    /// As [`Lexicon::observe_dependencies`].
    fn observe_ambient(
        &self,
        declared: &[DeclaredEntity],
        observed: &Observation,
    ) -> Result<super::estate::Ambient, super::estate::EstateError> {
        let _ = (declared, observed);
        Err(super::estate::EstateError::not_implemented(self.name(), super::estate::EstateHook::Ambient))
    }

    /// Returns the would-delete set (every candidate read carrying this project's marker on this
    /// lexicon's channel) and its holes. Read-only. Without it the core plans from
    /// `describe_resources` filtered on the marker ([`teardown_plan`](super::estate::teardown_plan)).
    ///
    /// # Errors
    ///
    /// As [`Lexicon::observe_dependencies`].
    fn teardown_owned(
        &self,
        declared: &[DeclaredEntity],
    ) -> Result<super::estate::TeardownPlan, super::estate::EstateError> {
        let _ = declared;
        Err(super::estate::EstateError::not_implemented(self.name(), super::estate::EstateHook::TeardownOwned))
    }

    /// Returns the deployed names of the env's deploy units (none by default).
    fn stack_units(&self) -> Vec<String> {
        Vec::new()
    }

    /// Returns the status of one deploy unit by its deployed name: present (and healthy),
    /// [`StackStatus::Absent`](super::estate::StackStatus) when genuinely absent, `Unknown` when
    /// the read failed for any other reason.
    ///
    /// # Errors
    ///
    /// As [`Lexicon::observe_dependencies`]; the core reads an error as unknown.
    fn describe_stack_status(&self, unit: &str) -> Result<super::estate::StackStatus, super::estate::EstateError> {
        let _ = unit;
        Err(super::estate::EstateError::not_implemented(self.name(), super::estate::EstateHook::StackStatus))
    }

    /// Lists the runtime artifacts no declaration anchors (build outputs, uploads), for the
    /// two-way diff against the last snapshot. Read-only.
    ///
    /// # Errors
    ///
    /// As [`Lexicon::observe_dependencies`].
    fn list_artifacts(&self) -> Result<super::estate::ArtifactListing, super::estate::EstateError> {
        Err(super::estate::EstateError::not_implemented(self.name(), super::estate::EstateHook::Artifacts))
    }
}

/// An entity's declared and live content, returned by [`Lexicon::texts`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityTexts {
    /// The declared content.
    pub declared: Vec<u8>,
    /// The live content; `None` when the entity is absent or could not be read.
    pub live: Option<Vec<u8>>,
}

/// Why no change subscription was opened. Returned by [`Lexicon::subscribe_changes`].
#[derive(Debug, thiserror::Error)]
pub enum SubscribeError {
    /// The lexicon offers no change stream (the default): the operator polls on its timer.
    #[error("lexicon {lexicon} offers no change stream")]
    NotImplemented {
        /// The lexicon's name.
        lexicon: String,
    },
    /// The lexicon has a change stream, and it could not be opened.
    #[error(transparent)]
    Failed(#[from] LexiconError),
    /// The substrate offers no stream right now (a supervisor without one), for the reason given.
    #[error(transparent)]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

/// Where a lexicon's change stream reports: [`ChangeSink::changed`] carries no data, so a signal
/// can only wake an ordinary observation, never feed one; [`ChangeSink::lost`] says the stream
/// ended and why.
#[derive(Clone)]
pub struct ChangeSink {
    changed: std::sync::Arc<dyn Fn() + Send + Sync>,
    lost: std::sync::Arc<dyn Fn(String) + Send + Sync>,
}

impl ChangeSink {
    /// Creates a sink from its two callbacks.
    pub fn new(changed: impl Fn() + Send + Sync + 'static, lost: impl Fn(String) + Send + Sync + 'static) -> Self {
        ChangeSink { changed: std::sync::Arc::new(changed), lost: std::sync::Arc::new(lost) }
    }

    /// Reports that something in the substrate moved.
    pub fn changed(&self) {
        (self.changed)();
    }

    /// Reports that the stream ended, with the reason in one line.
    pub fn lost(&self, why: impl Into<String>) {
        (self.lost)(why.into());
    }
}

impl std::fmt::Debug for ChangeSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChangeSink")
    }
}

/// An open change subscription; dropping it closes the stream.
pub struct Subscription {
    _guard: Box<dyn Send>,
    settle: std::time::Duration,
}

impl Subscription {
    /// How long a change waits by default for the next one of its stream before it wakes a
    /// round ([`Subscription::with_settle`]): 50 ms, the burst of writes of an editor's save or
    /// a loop of edits.
    pub const DEFAULT_SETTLE: std::time::Duration = std::time::Duration::from_millis(50);

    /// Wraps whatever keeps the stream open (a watcher, a connection); it is dropped on close.
    /// Its changes settle in [`Subscription::DEFAULT_SETTLE`].
    pub fn new(guard: impl Send + 'static) -> Self {
        Subscription { _guard: Box::new(guard), settle: Self::DEFAULT_SETTLE }
    }

    /// Sets how long one of this stream's changes waits for the next before it wakes a round:
    /// a stream whose every event is a whole change (a supervisor's "exited") settles sooner
    /// than one whose changes come as bursts of writes (a file saved).
    #[must_use]
    pub fn with_settle(mut self, settle: std::time::Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Returns how long one of this stream's changes waits for the next before it wakes a round.
    pub fn settle(&self) -> std::time::Duration {
        self.settle
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("settle", &self.settle).finish_non_exhaustive()
    }
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
    fn describe_never_renders_a_password() {
        let verdict = Unobserved::new(UnobservedReason::NoCredentials)
            .kind("table")
            .queried("postgres://app:hunter2-secret@127.0.0.1:55432/app");
        let words = verdict.describe("public.users");
        assert_eq!(words, "public.users (table) — no credentials [queried postgres://app@127.0.0.1:55432/app]");
        assert!(!words.contains("hunter2"));
    }

    #[test]
    fn bare_map_and_envelope_json() {
        let bare = serde_json::json!({"a": {"ownership": "owned"}});
        let o = Observation::from_json(&bare).unwrap();
        assert_eq!(o.resources.len(), 1);
        assert!(o.unobserved.is_empty() && o.queried.is_empty(), "the bare map looked at everything");
        assert!(o.is_absent("b"));
        let mut full = Observation::new();
        full.insert_unobserved("x", Unobserved::new(UnobservedReason::Filtered));
        full.insert_present("y", PresentResource::new(Ownership::Owned).marker(Marker::new("p", "e")));
        let json = full.to_envelope_json();
        assert_eq!(json["observation"], "v1");
        assert_eq!(Observation::from_json(&json).unwrap(), full);
        assert!(Observation::from_json(&serde_json::json!({"a": 1})).is_err());
        let from: Observation = BTreeMap::from([("z".to_owned(), PresentResource::new(Ownership::Unknown))]).into();
        assert_eq!(from.resources.len(), 1);
    }

    fn channel(reads: Vec<ReadPath>) -> OwnershipChannel {
        OwnershipChannel {
            keys: ChannelKeys { managed_by: "managed-by".into(), stack: "stack".into(), env: "env".into() },
            reads,
        }
    }

    #[test]
    fn a_channel_naming_an_unimplemented_path_is_refused() {
        let implemented = [ReadPath::DescribeResources];
        assert_eq!(check_channel("sql", &channel(vec![ReadPath::DescribeResources]), &implemented), Ok(()));
        let err =
            check_channel("sql", &channel(vec![ReadPath::DescribeResources, ReadPath::ExportResources]), &implemented)
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "lexicon sql declares its ownership marker on exportResources, a read path it does not implement (it implements: describeResources)"
        );
        let mut blank = channel(vec![ReadPath::DescribeResources]);
        blank.keys.stack = " ".into();
        assert_eq!(
            check_channel("sql", &blank, &implemented),
            Err(ChannelError::IncompleteKeys { lexicon: "sql".into(), key: "stack" })
        );
        assert!(matches!(check_channel("sql", &channel(vec![]), &implemented), Err(ChannelError::NoReadPath { .. })));
        assert_eq!(check_lexicon(&Broken), Ok(()), "no channel is a real answer");
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
