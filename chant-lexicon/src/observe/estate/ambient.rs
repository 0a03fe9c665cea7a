//! Ambient resources: of the kinds the project declares, what nothing declares and nothing
//! references — simply there.
//!
//! [`Lexicon::ambient_kinds`] answers without a scan which kinds may hold ambient resources, so a
//! caller knows an answer can be incomplete without paying for the scan;
//! [`Lexicon::observe_ambient`] scans only those kinds. [`ambient_of`] holds the answer to the
//! contract: each resource is of an announced kind, marked `ambient: true`, and nothing already
//! observed (declared, present, unobserved or a dependency) is ambient — that is managed, not
//! ambient. A scope the lexicon could not scan is a hole, never an empty answer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Dependencies, Reading};
use crate::observe::{DeclaredEntity, Lexicon, Observation, Unobserved};

/// A resource nothing declares and nothing references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AmbientResource {
    /// Its kind, one of [`Lexicon::ambient_kinds`].
    #[serde(rename = "type")]
    pub kind: String,
    /// Always true: the marker the seed's contract asks for.
    pub ambient: bool,
    /// What was read of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

impl AmbientResource {
    /// Creates an ambient resource of `kind`.
    pub fn new(kind: impl Into<String>) -> Self {
        AmbientResource { kind: kind.into(), ambient: true, properties: BTreeMap::new() }
    }

    /// Adds one property read of it.
    #[must_use]
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }
}

/// What [`Lexicon::observe_ambient`] answers: ambient resources by name, and the scopes (a schema,
/// a directory) it could not scan, by scope name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ambient {
    /// The ambient resources, by name.
    #[serde(default)]
    pub resources: BTreeMap<String, AmbientResource>,
    /// The scopes that could not be scanned, by scope.
    #[serde(default)]
    pub holes: BTreeMap<String, Unobserved>,
}

impl Ambient {
    /// Returns how many ambient resources were found (`ambientCount`).
    pub fn count(&self) -> usize {
        self.resources.len()
    }
}

/// Asks `lexicon` for its ambient resources and holds the answer to the contract: only the kinds
/// it announced, every one marked ambient, nothing declared, observed or depended on.
pub fn ambient_of(
    lexicon: &dyn Lexicon,
    declared: &[DeclaredEntity],
    observed: &Observation,
    dependencies: Option<&Dependencies>,
) -> Reading<Ambient> {
    let kinds = lexicon.ambient_kinds();
    let result = lexicon.observe_ambient(declared, observed).map(|mut ambient| {
        ambient.resources.retain(|name, resource| {
            kinds.iter().any(|k| k == &resource.kind)
                && !declared.iter().any(|d| &d.name == name)
                && !observed.resources.contains_key(name)
                && !observed.unobserved.contains_key(name)
                && !dependencies.is_some_and(|d| d.resources.contains_key(name) || d.holes.contains_key(name))
        });
        for resource in ambient.resources.values_mut() {
            resource.ambient = true;
        }
        ambient
    });
    Reading::from_result(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{EstateError, LexiconError, Ownership, PresentResource};

    struct Scan;

    impl Lexicon for Scan {
        fn name(&self) -> &str {
            "scan"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            Ok(Observation::new())
        }

        fn ambient_kinds(&self) -> Vec<String> {
            vec!["table".into(), "view".into()]
        }

        fn observe_ambient(&self, _: &[DeclaredEntity], _: &Observation) -> Result<Ambient, EstateError> {
            let mut a = Ambient::default();
            for (name, kind) in
                [("s.declared", "table"), ("s.seen", "table"), ("s.dep", "table"), ("s.v", "view"), ("s.f", "function")]
            {
                let mut r = AmbientResource::new(kind);
                r.ambient = false;
                a.resources.insert(name.into(), r);
            }
            Ok(a)
        }
    }

    #[test]
    fn only_announced_kinds_and_nothing_already_observed_is_ambient() {
        let declared = vec![DeclaredEntity::new("s.declared")];
        let mut observed = Observation::new();
        observed.insert_present("s.seen", PresentResource::new(Ownership::Foreign));
        let mut deps = Dependencies::default();
        deps.resources.insert("s.dep".into(), super::super::Dependency::new("table", ["s.declared"]));
        let ambient = ambient_of(&Scan, &declared, &observed, Some(&deps));
        let ambient = ambient.read().unwrap();
        assert_eq!(ambient.resources.keys().collect::<Vec<_>>(), ["s.v"]);
        assert!(ambient.resources["s.v"].ambient);
        assert_eq!(
            serde_json::to_string(ambient).unwrap(),
            r#"{"resources":{"s.v":{"type":"view","ambient":true}},"holes":{}}"#
        );
    }
}
