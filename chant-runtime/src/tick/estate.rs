//! The symptom's estate counts (`ambientCount`, `dependencyUnobservedCount`,
//! `artifactChangedCount`), read for a tick only when one of its rules reads them: the estate
//! readers scan past the declaration, and a ConvergeOp that never asks pays nothing.
//!
//! A reader a rule depends on that fails makes the tick's observation fail (recorded with its
//! error) rather than count zero: "I could not look" is never "there is none".

use crate::project::Project;
use chant_lexicon::estate::{LexiconEstate, env_estate};
use chant_lexicon::model::{ConvergeSpec, ConvergeSymptom};
use chant_lexicon::observe::estate::Reading;

use super::observer::ObserveError;

/// The estate fields, camelCase.
const FIELDS: [&str; 3] = ["ambientCount", "dependencyUnobservedCount", "artifactChangedCount"];

/// Returns which estate fields the rules of `spec` read.
fn read_fields(spec: &ConvergeSpec) -> [bool; 3] {
    FIELDS.map(|f| spec.rules.iter().any(|r| r.when.references(f)))
}

/// Fills the estate counts of `symptom` that the rules of `spec` read.
///
/// # Errors
///
/// [`ObserveError::Estate`] when a reader a rule depends on failed, or the estate could not be read.
pub(super) fn add_counts(
    project: &Project,
    spec: &ConvergeSpec,
    member: Option<&str>,
    env: &str,
    symptom: &mut ConvergeSymptom,
) -> Result<(), ObserveError> {
    let wanted = read_fields(spec);
    if !wanted.iter().any(|w| *w) {
        return Ok(());
    }
    let lexicons = project.lexicons(member, env).map_err(ObserveError::Assess)?;
    let estate = env_estate(&project.ledger, member, env, &lexicons)
        .map_err(|e| ObserveError::Estate(format!("the estate of env {env} could not be read: {}", e.chain())))?;
    for (name, lexicon) in &estate.lexicons {
        check(name, lexicon, wanted)?;
        let (ambient, holes, artifacts) = lexicon.counts();
        symptom.ambient_count += ambient as u64;
        symptom.dependency_unobserved_count += holes as u64;
        symptom.artifact_changed_count += artifacts as u64;
    }
    Ok(())
}

fn check(name: &str, lexicon: &LexiconEstate, wanted: [bool; 3]) -> Result<(), ObserveError> {
    let failures = [
        (wanted[0], failure(&lexicon.ambient), "ambient resources"),
        (wanted[1], failure(&lexicon.dependencies), "dependencies"),
        (wanted[2], failure(&lexicon.artifacts), "artifacts"),
    ];
    for (want, failed, what) in failures {
        if want && let Some(e) = failed {
            return Err(ObserveError::Estate(format!("the {what} of {name} could not be read: {e}")));
        }
    }
    Ok(())
}

fn failure<T>(reading: &Reading<T>) -> Option<&str> {
    match reading {
        Reading::Failed(e) => Some(e),
        _ => None,
    }
}
