//! The deep-read conformance checks, run by a lexicon author beside the observation suite
//! ([`crate::observe::conformance`]) against their own deep reader on a real substrate.
//!
//! [`check`] reads deep and thin once each and collects every violation:
//!
//! - **read path**: a lexicon that answers the deep read lists `observeResourcesDeep` among its
//!   read paths, and one that lists it answers;
//! - **presence stays the describe read's**: every deep entity was declared and is present in
//!   the thin observation;
//! - **shape**: the deep observation survives a JSON round trip unchanged; every prune pattern
//!   is non-blank;
//! - **field owners only where declared**: a lexicon that declares no field owners returns none,
//!   and core then reports no `owner` and no `held_by`; one that declares them returns them for
//!   every entity, each manager non-blank, and every unclaimed row says `field-manager`;
//! - **no pruning of declared paths**: in a scenario the author says is converged
//!   (`converged`), the live tree carries every declared path, so nothing drifts.

use super::path::{leaves, lookup};
use super::{ClaimSource, DeepError, DeepObservation, classify_all};
use crate::observe::observation::{DeclaredEntity, Lexicon, ReadPath};

/// What the author says of the lexicon and the scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// The lexicon's substrate records writers, so it returns field owners.
    pub field_owners: bool,
    /// The substrate was just converged: nothing may drift.
    pub converged: bool,
}

/// Runs the deep checks against `lexicon` for `declared`.
///
/// # Errors
///
/// Every violation found, one line each.
pub fn check(lexicon: &dyn Lexicon, declared: &[DeclaredEntity], expect: Expect) -> Result<(), Vec<String>> {
    let mut bad = Vec::new();
    let lists = lexicon.read_paths().contains(&ReadPath::ObserveResourcesDeep);
    let observation = match lexicon.observe_resources_deep(declared) {
        Ok(o) => o,
        Err(DeepError::NotImplemented { .. }) => {
            if lists {
                bad.push("lists observeResourcesDeep among its read paths but does not implement it".to_owned());
            }
            return if bad.is_empty() { Ok(()) } else { Err(bad) };
        }
        Err(DeepError::Failed(e)) => return Err(vec![format!("the deep read failed: {}", e.chain())]),
    };
    if !lists {
        bad.push("answers the deep read but does not list observeResourcesDeep among its read paths".to_owned());
    }
    let thin = crate::observe::observe_component(lexicon, declared);
    for name in observation.entities.keys() {
        if !declared.iter().any(|d| &d.name == name) {
            bad.push(format!("{name}: returned by the deep read but not declared"));
        }
        if !thin.resources.contains_key(name) {
            bad.push(format!("{name}: returned by the deep read but not present in describe_resources"));
        }
    }
    match serde_json::to_string(&observation).map(|j| serde_json::from_str::<DeepObservation>(&j)) {
        Ok(Ok(back)) if back == observation => {}
        _ => bad.push("the deep observation does not survive a JSON round trip".to_owned()),
    }
    if lexicon.substrate_written_paths().iter().any(|p| p.trim().is_empty()) {
        bad.push("a substrate-written pattern is blank".to_owned());
    }
    for (name, entity) in &observation.entities {
        match (&entity.field_owners, expect.field_owners) {
            (Some(_), false) => bad.push(format!("{name}: field owners returned by a lexicon that declares none")),
            (None, true) => bad.push(format!("{name}: no field owners from a lexicon that declares them")),
            (Some(owners), true) if owners.values().any(|m| m.trim().is_empty()) => {
                bad.push(format!("{name}: a blank field manager"));
            }
            _ => {}
        }
        if expect.converged {
            for (segs, _) in leaves(&entity.declared) {
                if lookup(&entity.live, &segs).is_none() {
                    bad.push(format!(
                        "{name}: declared path {} is missing from the live tree",
                        super::path::render(&segs)
                    ));
                }
            }
        }
    }
    let verdict = classify_all(lexicon.name(), &observation, lexicon.substrate_written_paths());
    for entity in &verdict.entities {
        if expect.converged && !entity.drift.is_empty() {
            let paths: Vec<&str> = entity.drift.iter().map(|d| d.path.as_str()).collect();
            bad.push(format!("{}: drifts in a converged scenario: {}", entity.entity, paths.join(", ")));
        }
        if !expect.field_owners {
            if entity.drift.iter().any(|d| d.owner.is_some()) || entity.unclaimed.iter().any(|u| u.held_by.is_some()) {
                bad.push(format!("{}: an owner or holder without field owners", entity.entity));
            }
        } else if entity.unclaimed.iter().any(|u| u.source != ClaimSource::FieldManager) {
            bad.push(format!("{}: an unclaimed path not covered by the field owners", entity.entity));
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(bad) }
}
