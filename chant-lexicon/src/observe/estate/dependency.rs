//! Dependencies: what the declared estate references and does not declare.
//!
//! The closure rule is depth one by reference, plus the chains the lexicon's reference catalog
//! marks as meaningful. Every returned resource carries `referencedBy`, the declared nodes that
//! pulled it in: a dependency with no referrer is unbounded discovery, and [`check_dependencies`]
//! refuses it. A referenced resource the lexicon could not read is a [`DependencyHole`] with a
//! total reason, never an absence.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{EstateError, Reading};
use crate::model::UnobservedReason;
use crate::observe::{DeclaredEntity, Lexicon};

/// A resource the estate references and does not declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dependency {
    /// Its kind (`table`, `schema`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The declared entities that reference it (never empty once checked), sorted.
    pub referenced_by: Vec<String>,
    /// What was read of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

impl Dependency {
    /// Creates a dependency of `kind` referenced by `referrers`.
    pub fn new(kind: impl Into<String>, referrers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut referenced_by: Vec<String> = referrers.into_iter().map(Into::into).collect();
        referenced_by.sort();
        referenced_by.dedup();
        Dependency { kind: kind.into(), referenced_by, properties: BTreeMap::new() }
    }

    /// Adds one property read of it.
    #[must_use]
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }
}

/// A referenced resource the lexicon could not read: not "absent", "unknown".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DependencyHole {
    /// Its kind, when known.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The declared entities that reference it, sorted.
    pub referenced_by: Vec<String>,
    /// Why it was not read.
    pub reason: UnobservedReason,
    /// What went wrong, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What [`Lexicon::observe_dependencies`] answers: dependencies read, and holes, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dependencies {
    /// The dependencies read, by name.
    #[serde(default)]
    pub resources: BTreeMap<String, Dependency>,
    /// The referenced resources that could not be read, by name.
    #[serde(default)]
    pub holes: BTreeMap<String, DependencyHole>,
}

impl Dependencies {
    /// Returns how many dependencies could not be read (`dependencyUnobservedCount`).
    pub fn unobserved_count(&self) -> usize {
        self.holes.len()
    }
}

/// Checks a lexicon's dependencies against the declaration: each resource and hole must name at
/// least one declared referrer (referrers the env does not declare are dropped from it), and a
/// declared entity is never its own dependency (it is dropped: it is already observed).
///
/// # Errors
///
/// [`EstateError::NoReferrer`] for the first resource or hole left with no declared referrer.
pub fn check_dependencies(
    lexicon: &str,
    declared: &[DeclaredEntity],
    mut dependencies: Dependencies,
) -> Result<Dependencies, EstateError> {
    let names: BTreeSet<&str> = declared.iter().map(|d| d.name.as_str()).collect();
    let keep = |resource: &str, referrers: &mut Vec<String>| -> Result<(), EstateError> {
        let named = std::mem::take(referrers);
        let (inside, outside): (Vec<String>, Vec<String>) = named.into_iter().partition(|r| names.contains(r.as_str()));
        if inside.is_empty() {
            return Err(EstateError::NoReferrer {
                lexicon: lexicon.to_owned(),
                resource: resource.to_owned(),
                named: outside,
            });
        }
        *referrers = inside;
        referrers.sort();
        referrers.dedup();
        Ok(())
    };
    dependencies.resources.retain(|name, _| !names.contains(name.as_str()));
    dependencies.holes.retain(|name, _| !names.contains(name.as_str()));
    for (name, dependency) in &mut dependencies.resources {
        keep(name, &mut dependency.referenced_by)?;
    }
    for (name, hole) in &mut dependencies.holes {
        keep(name, &mut hole.referenced_by)?;
    }
    Ok(dependencies)
}

/// Asks `lexicon` for the dependencies of `declared` and checks them ([`check_dependencies`]); a
/// refused answer is a failed reading, never a partial one.
pub fn dependencies_of(lexicon: &dyn Lexicon, declared: &[DeclaredEntity]) -> Reading<Dependencies> {
    Reading::from_result(
        lexicon.observe_dependencies(declared).and_then(|d| check_dependencies(lexicon.name(), declared, d)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Vec<DeclaredEntity> {
        vec![DeclaredEntity::new("app.orders").kind("table"), DeclaredEntity::new("app").kind("schema")]
    }

    #[test]
    fn a_dependency_keeps_only_declared_referrers() {
        let mut deps = Dependencies::default();
        deps.resources.insert("public.accounts".into(), Dependency::new("table", ["app.orders", "other.x"]));
        deps.resources.insert("app.orders".into(), Dependency::new("table", ["app.orders"]));
        let checked = check_dependencies("postgres", &declared(), deps).unwrap();
        assert_eq!(checked.resources.len(), 1, "a declared entity is not its own dependency");
        assert_eq!(checked.resources["public.accounts"].referenced_by, ["app.orders"]);
    }

    #[test]
    fn a_dependency_or_hole_with_no_referrer_is_refused() {
        let mut deps = Dependencies::default();
        deps.resources.insert("public.accounts".into(), Dependency::new("table", ["other.x"]));
        let err = check_dependencies("postgres", &declared(), deps).unwrap_err();
        assert_eq!(
            err.to_string(),
            "lexicon postgres returned dependency public.accounts with no referrer among the declared entities (it names other.x)"
        );
        let mut deps = Dependencies::default();
        deps.holes.insert(
            "secret.t".into(),
            DependencyHole { kind: None, referenced_by: vec![], reason: UnobservedReason::ReadFailed, detail: None },
        );
        let err = check_dependencies("postgres", &declared(), deps).unwrap_err();
        assert_eq!(
            err.to_string(),
            "lexicon postgres returned dependency secret.t with no referrer among the declared entities"
        );
    }

    struct Unbounded;

    impl Lexicon for Unbounded {
        fn name(&self) -> &str {
            "unbounded"
        }

        fn describe_resources(
            &self,
            _: &[DeclaredEntity],
        ) -> Result<crate::observe::Observation, crate::observe::LexiconError> {
            Ok(crate::observe::Observation::new())
        }

        fn observe_dependencies(&self, _: &[DeclaredEntity]) -> Result<Dependencies, EstateError> {
            let mut deps = Dependencies::default();
            deps.resources.insert("vpc".into(), Dependency::new("network", Vec::<String>::new()));
            Ok(deps)
        }
    }

    #[test]
    fn the_core_refuses_an_unbounded_answer_and_reads_a_missing_hook_as_not_implemented() {
        match dependencies_of(&Unbounded, &declared()) {
            Reading::Failed(e) => assert!(e.contains("vpc with no referrer"), "{e}"),
            other => panic!("{other:?}"),
        }
        struct Plain;
        impl Lexicon for Plain {
            fn name(&self) -> &str {
                "plain"
            }
            fn describe_resources(
                &self,
                _: &[DeclaredEntity],
            ) -> Result<crate::observe::Observation, crate::observe::LexiconError> {
                Ok(crate::observe::Observation::new())
            }
        }
        assert_eq!(dependencies_of(&Plain, &declared()), Reading::NotImplemented);
    }
}
