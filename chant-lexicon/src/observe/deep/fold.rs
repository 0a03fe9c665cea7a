//! Folding a deep verdict into the change set, so that what a tick decides on and what
//! `lifecycle diff` prints are one answer.
//!
//! Deep drift on a declared, present entity makes its entry an `update`, one [`Delta`] per
//! drifting path (the path as the property, values as text: a string as is, anything else as
//! compact JSON), so the component row turns `drifted` and apply is asked to converge it. An
//! accepted drift (a baselined path whose live value is the accepted one) also removes the
//! whole-entity delta of the same name (`mode`), so an accepted deviation stops alerting on both
//! layers. Unclaimed paths never change an entry.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{ComponentDeep, EntityDeep};
use crate::observe::change_set::{ChangeAction, ChangeEntry, ChangeSet, Delta, build_change_set};
use crate::observe::status::{ComponentInput, EnvAssessment, derive_symptom, status_row};

/// Renders a tree value as a delta's text: a string as is, anything else as compact JSON.
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Returns the entry and property a drifting path lands on: the sub-entity whose path covers
/// it and the one key below (`columns.email.default` -> `app.users.email`, `default`), else the
/// entity itself and the whole path. The dashboard's env page places a baselined path on its
/// entry with it too.
pub fn target<'a>(report: &'a EntityDeep, path: &'a str) -> (&'a str, &'a str) {
    for (prefix, sub) in &report.subentities {
        if let Some(rest) = path.strip_prefix(prefix.as_str()).and_then(|r| r.strip_prefix('.'))
            && !rest.contains(['.', '['])
        {
            return (sub.as_str(), rest);
        }
    }
    (report.entity.as_str(), path)
}

/// Folds one component's deep verdict into its change set.
pub fn fold(change_set: &mut ChangeSet, deep: &ComponentDeep) {
    let mut touched = BTreeSet::new();
    for report in &deep.entities {
        for accepted in report.baselined.iter().filter(|b| b.declared.is_some()) {
            let (name, property) = target(report, &accepted.path);
            if let Some(entry) = foldable(change_set, name) {
                entry.deltas.retain(|d| d.property != property);
                touched.insert(name.to_owned());
            }
        }
        for drift in &report.drift {
            let (name, property) = target(report, &drift.path);
            let Some(entry) = foldable(change_set, name) else { continue };
            touched.insert(name.to_owned());
            if entry.deltas.iter().any(|d| d.property == property) {
                continue;
            }
            entry.deltas.push(Delta {
                property: property.to_owned(),
                declared: text(&drift.declared),
                live: drift.live.as_ref().map(text),
            });
        }
    }
    for entry in change_set.entries.iter_mut().filter(|e| touched.contains(&e.name)) {
        entry.action = if entry.deltas.is_empty() { ChangeAction::Noop } else { ChangeAction::Update };
    }
}

/// Returns the entry `name` when a deep verdict may change it: declared, present, `noop` or
/// `update`.
fn foldable<'a>(change_set: &'a mut ChangeSet, name: &str) -> Option<&'a mut ChangeEntry> {
    change_set.entries.iter_mut().find(|e| {
        e.name == name
            && e.evidence.declared
            && e.evidence.live
            && matches!(e.action, ChangeAction::Noop | ChangeAction::Update)
    })
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
