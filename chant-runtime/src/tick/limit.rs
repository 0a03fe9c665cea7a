//! Restart limits at work: counting each rule's remediations of each resource within the op's
//! window ([`chant_lexicon::model::limit`]), and giving up.
//!
//! Every tick record of an op with a `restart_limit` carries, per (rule, resource), the start
//! times of the ticks that dispatched it within the window (`restarts`), so the count reads only
//! the newest record and survives restarts, as flap runs do. A dispatch of a mutating target counts
//! (`ran`, `ineffective`, `unverified`, or a dispatch that failed); read-only targets never do.
//! When a rule's predicate holds and its count has reached the limit, the planner records
//! `given-up` instead of dispatching, and the entry keeps `givenUpAt` (the tick that gave up) from
//! then on, whatever the predicate does: the op's health is `given-up` until a person records
//! `operator undamp <op> [<rule>]` or `operator resume <op>` after the op's newest tick
//! ([`cleared`]), which starts the count afresh.

use serde::{Deserialize, Serialize};

use chant_lexicon::model::contract::ClassKind;
use chant_lexicon::model::{RestartLimit, Rule};

use super::control::ControlFact;
use super::record::{Action, Outcome};

/// One rule's (and resource's) remediations within the window, as a tick record keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartEntry {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
    /// The start times of the ticks that dispatched it, oldest first, within the window.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub at: Vec<String>,
    /// When the rule gave up on the resource (the tick's start); absent while it has not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub given_up_at: Option<String>,
}

impl RestartEntry {
    /// `restart-app [app]`, for reasons and health details.
    pub fn label(&self) -> String {
        match &self.resource {
            Some(r) => format!("{} [{r}]", self.rule_id),
            None => self.rule_id.clone(),
        }
    }
}

/// The entries a tick at `now` plans with: counts older than the window dropped (a given-up entry
/// stays given up), entries of rules that no longer exist dropped. Pure.
pub fn current(
    previous: &[RestartEntry],
    limit: Option<&RestartLimit>,
    rules: &[Rule],
    now: jiff::Timestamp,
) -> Vec<RestartEntry> {
    let Some(window) = limit.and_then(|l| l.check().ok()).and_then(|w| jiff::SignedDuration::try_from(w).ok()) else {
        return Vec::new();
    };
    let from = now.checked_sub(window).ok();
    previous
        .iter()
        .filter(|e| rules.iter().any(|r| r.id.as_str() == e.rule_id))
        .map(|e| RestartEntry {
            at: e
                .at
                .iter()
                .filter(|t| match (chant_store::clock::parse(t), from) {
                    (Some(t), Some(from)) => t > from,
                    _ => false,
                })
                .cloned()
                .collect(),
            ..e.clone()
        })
        .filter(|e| !e.at.is_empty() || e.given_up_at.is_some())
        .collect()
}

/// Why a rule that reached `limit` for `entry` does not dispatch.
pub fn reason(entry_label: &str, limit: &RestartLimit, given_up_at: Option<&str>, op: &str) -> String {
    let since = given_up_at.map(|t| format!(" since {t}")).unwrap_or_default();
    format!(
        "{entry_label} gave up{since}: {} remediations within {} reached its restart limit; it dispatches nothing more until `chant operator undamp {op}` or `chant operator resume {op}`",
        limit.count, limit.within
    )
}

/// Returns true when `entry` stops its rule: it gave up, or its count reached `limit`.
pub fn reached(entry: Option<&RestartEntry>, limit: &RestartLimit) -> bool {
    entry.is_some_and(|e| e.given_up_at.is_some() || e.at.len() as u64 >= limit.count)
}

/// The entries after a tick started at `now`: each counting dispatch of a mutating target adds
/// `now` to its entry, each `given-up` outcome stamps its entry with `now` (once). Pure.
pub fn next(
    current: &[RestartEntry],
    outcomes: &[Outcome],
    limit: Option<&RestartLimit>,
    class_of: &dyn Fn(&str) -> Option<ClassKind>,
    now: &str,
) -> Vec<RestartEntry> {
    if limit.is_none() {
        return Vec::new();
    }
    let mut out = current.to_vec();
    for o in outcomes {
        let counts =
            o.counts_for_flap() && o.op.as_deref().and_then(class_of).is_some_and(|c| c != ClassKind::ReadOnly);
        let gives_up = o.action == Action::GivenUp;
        if !counts && !gives_up {
            continue;
        }
        let i = match out.iter().position(|e| e.rule_id == o.rule_id && e.resource == o.resource) {
            Some(i) => i,
            None => {
                out.push(RestartEntry {
                    rule_id: o.rule_id.clone(),
                    resource: o.resource.clone(),
                    at: Vec::new(),
                    given_up_at: None,
                });
                out.len() - 1
            }
        };
        if counts {
            out[i].at.push(now.to_owned());
        }
        if gives_up && out[i].given_up_at.is_none() {
            out[i].given_up_at = Some(now.to_owned());
        }
    }
    out
}

/// The entries once a person's facts are taken into account: an `undamp` fact (of the entry's
/// rule, or of every rule) or a `resume` fact newer than the op's newest tick (`last_tick`)
/// clears the entries it covers, so the rule counts afresh. Pure.
pub fn cleared(previous: &[RestartEntry], facts: &[ControlFact], last_tick: Option<&str>) -> Vec<RestartEntry> {
    let facts: Vec<&ControlFact> = facts.iter().filter(|f| f.is_newer_than(last_tick)).collect();
    previous
        .iter()
        .filter(|e| {
            !facts.iter().any(|f| match f.kind.as_str() {
                super::undamp::UNDAMP => f.rule.as_deref().is_none_or(|r| r == e.rule_id),
                super::control::RESUME => true,
                _ => false,
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit() -> RestartLimit {
        RestartLimit { count: 2, within: "10m".into() }
    }

    fn entry(at: &[&str], given_up: Option<&str>) -> RestartEntry {
        RestartEntry {
            rule_id: "restart".into(),
            resource: Some("app".into()),
            at: at.iter().map(|s| (*s).to_owned()).collect(),
            given_up_at: given_up.map(str::to_owned),
        }
    }

    fn rules() -> Vec<Rule> {
        serde_json::from_value(serde_json::json!([{"id": "restart", "why": "w",
            "when": {"kind": "field-comparison", "field": "status", "op": "eq", "value": "drifted"},
            "then": {"kind": "run", "op": "restart-service"}}]))
        .unwrap()
    }

    fn outcome(action: Action) -> Outcome {
        Outcome {
            rule_id: "restart".into(),
            action,
            source: None,
            op: Some("restart-service".into()),
            resource: Some("app".into()),
            gate_name: None,
            reason: None,
            url: None,
            branch: None,
            gate_owner: None,
            dispatch_failed: None,
            entities: Vec::new(),
        }
    }

    #[test]
    fn counts_age_out_of_the_window_and_a_given_up_entry_stays() {
        let now = chant_store::clock::parse("2026-03-01T10:30:00.000Z").unwrap();
        let old = entry(&["2026-03-01T10:10:00.000Z", "2026-03-01T10:25:00.000Z"], None);
        let cur = current(&[old], Some(&limit()), &rules(), now);
        assert_eq!(cur[0].at, ["2026-03-01T10:25:00.000Z"]);
        assert!(!reached(cur.first(), &limit()));
        let gone = entry(&["2026-03-01T09:00:00.000Z"], None);
        assert!(current(&[gone], Some(&limit()), &rules(), now).is_empty());
        let given = entry(&[], Some("2026-03-01T09:00:00.000Z"));
        assert!(reached(current(std::slice::from_ref(&given), Some(&limit()), &rules(), now).first(), &limit()));
        assert!(current(&[given], None, &rules(), now).is_empty(), "no limit, nothing kept");
    }

    #[test]
    fn mutating_dispatches_count_and_a_given_up_outcome_stamps_once() {
        let mutating = |_: &str| Some(ClassKind::Mutating);
        let read_only = |_: &str| Some(ClassKind::ReadOnly);
        let t = "2026-03-01T10:30:00.000Z";
        let after = next(&[], &[outcome(Action::Ineffective)], Some(&limit()), &mutating, t);
        assert_eq!(after, [entry(&[t], None)]);
        assert!(next(&[], &[outcome(Action::Ran)], Some(&limit()), &read_only, t).is_empty());
        assert!(next(&[], &[outcome(Action::SkippedBudget)], Some(&limit()), &mutating, t).is_empty());
        let given = next(&after, &[outcome(Action::GivenUp)], Some(&limit()), &mutating, "2026-03-01T10:31:00.000Z");
        assert_eq!(given[0].given_up_at.as_deref(), Some("2026-03-01T10:31:00.000Z"));
        let again = next(&given, &[outcome(Action::GivenUp)], Some(&limit()), &mutating, "2026-03-01T10:32:00.000Z");
        assert_eq!(again[0].given_up_at.as_deref(), Some("2026-03-01T10:31:00.000Z"), "the first give-up stays");
    }

    #[test]
    fn an_undamp_or_resume_newer_than_the_last_tick_clears() {
        let fact = |kind: &str, rule: Option<&str>, at: &str| ControlFact {
            version: 1,
            kind: kind.into(),
            op: "c".into(),
            env: "e".into(),
            rule: rule.map(str::to_owned),
            reason: None,
            until: None,
            by: "ana".into(),
            timestamp: at.into(),
        };
        let given = [entry(&[], Some("2026-03-01T10:00:00.000Z"))];
        let tick = Some("2026-03-01T10:05:00.000Z");
        assert!(cleared(&given, &[fact("undamp", None, "2026-03-01T10:06:00.000Z")], tick).is_empty());
        assert!(cleared(&given, &[fact("undamp", Some("restart"), "2026-03-01T10:06:00.000Z")], tick).is_empty());
        assert_eq!(cleared(&given, &[fact("undamp", Some("other"), "2026-03-01T10:06:00.000Z")], tick), given);
        assert!(cleared(&given, &[fact("resume", None, "2026-03-01T10:06:00.000Z")], tick).is_empty());
        assert_eq!(cleared(&given, &[fact("resume", None, "2026-03-01T10:04:00.000Z")], tick), given, "already seen");
        assert_eq!(cleared(&given, &[fact("suspend", None, "2026-03-01T10:06:00.000Z")], tick), given);
    }
}
