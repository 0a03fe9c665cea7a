//! Deep observation: property-level drift, unclaimed fields and field owners, below the
//! whole-entity verdicts of [`describe_resources`](super::Lexicon::describe_resources).
//!
//! A lexicon that implements the optional deep-read hook
//! ([`Lexicon::observe_resources_deep`]) returns, per
//! declared entity it found present, the declared property tree (the declaration as that lexicon
//! maps it), the **normalised live tree**, and optionally **field owners**: a map from path to
//! the manager that wrote it. A lexicon that does not implement it behaves exactly as before.
//!
//! The **claimed-field set** is core's, and substrate-independent ([`classify`]): both trees are
//! flattened into one path grammar ([`path`]: `a.b` for object keys, `arr[<id>]` for an element
//! of an array of named objects, whose pattern form is `arr[]`), and every live value is
//! classified three ways:
//!
//! | live value | result |
//! |---|---|
//! | declared and equal | nothing to report |
//! | declared and different | [`PathDrift`], with `owner` where field owners cover the path — the only case that may become an update |
//! | undeclared | [`UnclaimedPath`], never drift: `held_by` + `source: field-manager` where field owners cover it, `source: claimed-fields` otherwise |
//!
//! Field owners label; they never filter. The only paths dropped before classifying are those the
//! substrate writes on every object of a kind, named by the lexicon in one table
//! ([`Lexicon::substrate_written_paths`]); a declared path
//! is never pruned, even when a pattern of that table matches it.
//!
//! The accepted baseline ([`baseline`]) is subtracted after classifying, by core, above the reader;
//! [`fold`] then turns what still drifts into `update` entries of the change set.

pub mod baseline;
pub mod conformance;
pub mod fold;
pub mod path;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::path::Pattern;
use super::observation::{DeclaredEntity, Lexicon, LexiconError};

/// What one lexicon's deep read returned: per declared entity it found present, its trees.
///
/// An entity the thin read found absent or could not read is simply not here: presence is the
/// describe read's verdict, and the deep read never changes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeepObservation {
    /// Per entity name, its declared and live trees.
    #[serde(default)]
    pub entities: BTreeMap<String, DeepEntity>,
}

/// One entity's trees, as a deep read returns them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeepEntity {
    /// Its kind, when the lexicon has more than one.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The declared property tree: what the declaration says, in the live tree's shape.
    pub declared: Value,
    /// The normalised live property tree.
    pub live: Value,
    /// Path -> the manager that wrote it, when the substrate records writers. A path covers
    /// itself and everything under it; the empty path `""` covers the whole entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_owners: Option<BTreeMap<String, String>>,
    /// Path -> the declared entity of the whole-entity read whose properties sit under it
    /// (`columns.email` -> `app.users.email`): a drift at `columns.email.default` is that
    /// entity's `default`, and accepting it clears that entity's delta too.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub subentities: BTreeMap<String, String>,
}

/// Why a deep read gave no answer. Returned by
/// [`Lexicon::observe_resources_deep`].
#[derive(Debug, thiserror::Error)]
pub enum DeepError {
    /// The lexicon has no deep read (the default): only whole-entity verdicts exist for it.
    #[error("lexicon {lexicon} does not implement the deep read")]
    NotImplemented {
        /// The lexicon's name.
        lexicon: String,
    },
    /// The deep read ran and failed as a whole.
    #[error(transparent)]
    Failed(#[from] LexiconError),
}

/// One declared path whose live value differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathDrift {
    /// The path, in the grammar of [`path`].
    pub path: String,
    /// The declared value.
    pub declared: Value,
    /// The live value; `None` when the live tree has nothing at the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<Value>,
    /// The manager that wrote the live value, where field owners cover the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The accepted value, when the path is baselined and the live value moved away from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Value>,
}

/// Where an unclaimed path's holder comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimSource {
    /// The substrate's field owners cover the path; `held_by` names the manager.
    FieldManager,
    /// No field owner covers the path: the declaration's claimed-field set is the only answer.
    ClaimedFields,
}

impl ClaimSource {
    /// Returns the source as written in reports (`field-manager`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimSource::FieldManager => "field-manager",
            ClaimSource::ClaimedFields => "claimed-fields",
        }
    }
}

/// One live path the declaration does not claim. Never drift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnclaimedPath {
    /// The path.
    pub path: String,
    /// The live value.
    pub value: Value,
    /// The manager that holds it, where field owners cover the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<String>,
    /// Where `held_by` comes from.
    pub source: ClaimSource,
    /// The accepted value, when the path is baselined and the live value moved away from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Value>,
}

/// One path whose live value is the accepted one: it no longer alerts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BaselinedPath {
    /// The path.
    pub path: String,
    /// The accepted (and live) value.
    pub value: Value,
    /// The declared value, when the path is declared (an accepted drift).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<Value>,
}

/// One entity's deep verdict: drift, unclaimed and baselined paths, each sorted by path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntityDeep {
    /// The entity's name.
    pub entity: String,
    /// Its kind.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Declared paths whose live value differs.
    #[serde(default)]
    pub drift: Vec<PathDrift>,
    /// Live paths nobody declared.
    #[serde(default)]
    pub unclaimed: Vec<UnclaimedPath>,
    /// Paths at their accepted value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baselined: Vec<BaselinedPath>,
    /// The deep read's sub-entities (see [`DeepEntity::subentities`]), for folding.
    #[serde(skip)]
    pub subentities: BTreeMap<String, String>,
}

impl EntityDeep {
    /// Returns true when nothing is reported (baselined paths aside).
    pub fn is_clean(&self) -> bool {
        self.drift.is_empty() && self.unclaimed.is_empty()
    }
}

/// The deep verdict of one component, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentDeep {
    /// The component (lexicon) name.
    pub component: String,
    /// Per entity the deep read returned, sorted by name.
    #[serde(default)]
    pub entities: Vec<EntityDeep>,
    /// Why the deep read gave no answer (`does not implement the deep read`, a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl ComponentDeep {
    /// Returns the number of drifting paths across all entities.
    pub fn drift_count(&self) -> usize {
        self.entities.iter().map(|e| e.drift.len()).sum()
    }
}

/// Classifies one entity's live tree against its declared tree (the claimed-field set), pruning
/// only undeclared paths matching `prune` (the lexicon's substrate-written patterns).
pub fn classify(name: &str, entity: &DeepEntity, prune: &[Pattern]) -> EntityDeep {
    let declared = path::leaves(&entity.declared);
    let live = path::leaves(&entity.live);
    let owners = entity.field_owners.as_ref();
    let mut drift = Vec::new();
    for (segs, value) in &declared {
        let found = path::lookup(&entity.live, segs);
        if found != Some(value) {
            let rendered = path::render(segs);
            drift.push(PathDrift {
                owner: owners.and_then(|o| owner_of(o, &rendered)),
                path: rendered,
                declared: value.clone(),
                live: found.cloned(),
                baseline: None,
            });
        }
    }
    let mut unclaimed = Vec::new();
    for (segs, value) in &live {
        if declared.iter().any(|(d, _)| path::covers(d, segs)) {
            continue;
        }
        if prune.iter().any(|p| p.matches(segs)) {
            continue;
        }
        let rendered = path::render(segs);
        let held_by = owners.and_then(|o| owner_of(o, &rendered));
        let source = if held_by.is_some() { ClaimSource::FieldManager } else { ClaimSource::ClaimedFields };
        unclaimed.push(UnclaimedPath { path: rendered, value: value.clone(), held_by, source, baseline: None });
    }
    drift.sort_by(|a, b| a.path.cmp(&b.path));
    unclaimed.sort_by(|a, b| a.path.cmp(&b.path));
    EntityDeep {
        entity: name.to_owned(),
        kind: entity.kind.clone(),
        drift,
        unclaimed,
        baselined: Vec::new(),
        subentities: entity.subentities.clone(),
    }
}

/// Returns the manager of the longest field-owner path covering `rendered`.
fn owner_of(owners: &BTreeMap<String, String>, rendered: &str) -> Option<String> {
    owners
        .iter()
        .filter(|(key, _)| path::rendered_covers(key, rendered))
        .max_by_key(|(key, _)| key.len())
        .map(|(_, manager)| manager.clone())
}

/// Classifies every entity of a deep observation.
pub fn classify_all(component: &str, observation: &DeepObservation, prune: &[&str]) -> ComponentDeep {
    let patterns: Vec<Pattern> = prune.iter().map(|p| Pattern::parse(p)).collect();
    let entities =
        observation.entities.iter().map(|(name, entity)| classify(name, entity, &patterns)).collect::<Vec<_>>();
    ComponentDeep { component: component.to_owned(), entities, unavailable: None }
}

/// Deep-reads one component and classifies it; `None` when the lexicon has no deep read (so a
/// lexicon without the hook adds nothing anywhere), a [`ComponentDeep`] saying why when the read
/// failed.
pub fn observe_deep(lexicon: &dyn Lexicon, declared: &[DeclaredEntity]) -> Option<ComponentDeep> {
    let read = match lexicon.observe_deep_classified(declared) {
        Some(classified) => classified,
        None => lexicon
            .observe_resources_deep(declared)
            .map(|observation| classify_all(lexicon.name(), &observation, lexicon.substrate_written_paths())),
    };
    match read {
        Ok(classified) => Some(classified),
        Err(DeepError::NotImplemented { .. }) => None,
        Err(DeepError::Failed(e)) => Some(ComponentDeep {
            component: lexicon.name().to_owned(),
            entities: Vec::new(),
            unavailable: Some(e.chain()),
        }),
    }
}

#[cfg(test)]
mod tests;
