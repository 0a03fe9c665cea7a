//! Folding a deep verdict into the change set, so that what a tick decides on and what
//! `lifecycle diff` prints are one answer.
//!
//! Deep drift on a declared, present entity makes its entry an `update`, one [`Delta`] per
//! drifting path (the path as the property, values as text: a string as is, anything else as
//! compact JSON), so the component row turns `drifted` and apply is asked to converge it. An
//! accepted drift (a baselined path whose live value is the accepted one) also removes the
//! whole-entity delta of the same name (`mode`), so an accepted deviation stops alerting on both
//! layers. Unclaimed paths never change an entry.

use serde_json::Value;

use super::ComponentDeep;
use crate::observe::change_set::{ChangeAction, ChangeSet, Delta, build_change_set};
use crate::observe::status::{ComponentInput, EnvAssessment, derive_symptom, status_row};

/// Renders a tree value as a delta's text: a string as is, anything else as compact JSON.
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Folds one component's deep verdict into its change set.
pub fn fold(change_set: &mut ChangeSet, deep: &ComponentDeep) {
    for report in &deep.entities {
        let Some(entry) = change_set.entries.iter_mut().find(|e| e.name == report.entity) else { continue };
        if !(entry.evidence.declared && entry.evidence.live)
            || !matches!(entry.action, ChangeAction::Noop | ChangeAction::Update)
        {
            continue;
        }
        let accepted: Vec<&str> =
            report.baselined.iter().filter(|b| b.declared.is_some()).map(|b| b.path.as_str()).collect();
        entry.deltas.retain(|d| !accepted.contains(&d.property.as_str()));
        for drift in &report.drift {
            if entry.deltas.iter().any(|d| d.property == drift.path) {
                continue;
            }
            entry.deltas.push(Delta {
                property: drift.path.clone(),
                declared: text(&drift.declared),
                live: drift.live.as_ref().map(text),
            });
        }
        entry.action = if entry.deltas.is_empty() { ChangeAction::Noop } else { ChangeAction::Update };
    }
}

/// Assesses an env as [`assess`](crate::observe::assess) does, with each component's deep
/// verdict (matched by component name) folded into its change set before its row is derived.
pub fn assess_with_deep(env: &str, inputs: &[ComponentInput], deep: &[ComponentDeep]) -> EnvAssessment {
    let mut assessed: Vec<_> = inputs
        .iter()
        .map(|input| {
            let mut change_set =
                build_change_set(&input.component, &input.declared, &input.observation, &input.last_apply);
            if let Some(d) = deep.iter().find(|d| d.component == input.component) {
                fold(&mut change_set, d);
            }
            let row = status_row(env, &change_set, input.last_apply.recorded, input.delete_counts_as_drift);
            (change_set, row)
        })
        .collect();
    assessed.sort_by(|a, b| a.1.component.cmp(&b.1.component));
    let (change_sets, rows): (Vec<ChangeSet>, Vec<_>) = assessed.into_iter().unzip();
    EnvAssessment { symptom: derive_symptom(env, rows, &change_sets), change_sets }
}
