//! An op's health: its newest tick rolled up into one word of one vocabulary, the way Argo CD
//! and Flux roll a resource up, shown by the operator's per-op line, `operator status` and
//! `workspace status`, and named the same in `lifecycle diff`.
//!
//! | health | when (first that holds) |
//! |---|---|
//! | `never-ticked` | no tick is recorded |
//! | `failing` | the tick failed, or a dispatch it made failed |
//! | `given-up` | a rule reached its restart limit for a resource and stopped, until a person records `operator undamp` or `operator resume` |
//! | `degraded` | a dispatch succeeded and the observation after it found its symptom still there (`ineffective`) |
//! | `unknown` | something could not be observed (the detail gives the count and the first reason) |
//! | `gated` | a dispatch stopped at a gate with no resolution |
//! | `damped` | a rule was stopped by flap damping |
//! | `healed` | the observation differed, and every dispatch the tick made was verified to remove its symptom (the detail says what ran) |
//! | `drifted` | the observation differed from the declaration (the detail says what ran) |
//! | `in-sync` | everything observed was as declared |
//!
//! The rules' `status` field keeps the seed's words; they map onto health as: `reconciled` ->
//! `in-sync`; `drifted`, `stale` and `unrecorded` -> `drifted`; `unknown` -> `unknown`. A
//! resource's `in-sync | drifted | unknown` are already health words. Health describes what the
//! tick observed and what its verification backed: an op whose tick found drift and whose every
//! dispatch the observation after it backed (`ran`) is `healed`; with a dispatch left unverified,
//! or nothing dispatched, it is `drifted`. An op whose env could not be observed is never
//! `in-sync`.

use std::fmt;

use serde::Serialize;

use super::record::{Action, PlannedSymptom, TickRecord};
use chant_lexicon::model::{EnvStatus, ResourceStatus};

/// One word of the health vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthState {
    /// Everything observed was as declared.
    InSync,
    /// Drift was found, and every dispatch made for it was verified to remove its symptom.
    Healed,
    /// The observation differed from the declaration.
    Drifted,
    /// Something could not be observed.
    Unknown,
    /// A dispatch stopped at a gate with no resolution.
    Gated,
    /// A rule was stopped by flap damping.
    Damped,
    /// A dispatch succeeded and the observation after it found its symptom still there.
    Degraded,
    /// A rule reached its restart limit for a resource and gave up.
    GivenUp,
    /// The tick, or a dispatch it made, failed.
    Failing,
    /// No tick is recorded.
    NeverTicked,
}

impl HealthState {
    /// The word as shown (`in-sync`).
    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::InSync => "in-sync",
            HealthState::Healed => "healed",
            HealthState::Drifted => "drifted",
            HealthState::Unknown => "unknown",
            HealthState::Gated => "gated",
            HealthState::Damped => "damped",
            HealthState::Degraded => "degraded",
            HealthState::GivenUp => "given-up",
            HealthState::Failing => "failing",
            HealthState::NeverTicked => "never-ticked",
        }
    }

    /// Reads a word back (`in-sync` -> [`HealthState::InSync`]).
    pub fn parse(word: &str) -> Option<Self> {
        [
            HealthState::InSync,
            HealthState::Healed,
            HealthState::Drifted,
            HealthState::Unknown,
            HealthState::Gated,
            HealthState::Damped,
            HealthState::Degraded,
            HealthState::GivenUp,
            HealthState::Failing,
            HealthState::NeverTicked,
        ]
        .into_iter()
        .find(|s| s.as_str() == word)
    }

    /// The health word of an env status (the rules' `status` field, in the seed's words).
    pub fn of_env_status(status: EnvStatus) -> Self {
        match status {
            EnvStatus::Reconciled => HealthState::InSync,
            EnvStatus::Drifted | EnvStatus::Stale | EnvStatus::Unrecorded => HealthState::Drifted,
            EnvStatus::Unknown => HealthState::Unknown,
        }
    }

    /// The health word of a resource status.
    pub fn of_resource_status(status: ResourceStatus) -> Self {
        match status {
            ResourceStatus::InSync => HealthState::InSync,
            ResourceStatus::Drifted => HealthState::Drifted,
            ResourceStatus::Unknown => HealthState::Unknown,
        }
    }
}

impl fmt::Display for HealthState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An op's health and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// The word.
    pub state: HealthState,
    /// Why, in one line (`2 unobserved, first: read-failed`), when there is more to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl fmt::Display for Health {
    /// `unknown (2 unobserved, first: read failed)`, or the bare word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{} ({d})", self.state),
            None => write!(f, "{}", self.state),
        }
    }
}

impl Health {
    fn new(state: HealthState, detail: Option<String>) -> Self {
        Health { state, detail }
    }

    /// Rolls the newest tick of an op up into its health (`None`: never ticked).
    pub fn of_tick(record: Option<&TickRecord>) -> Health {
        let Some(t) = record else { return Health::new(HealthState::NeverTicked, None) };
        if let Some(e) = &t.error {
            return Health::new(HealthState::Failing, Some(format!("tick failed: {e}")));
        }
        if let Some(o) = t.outcomes.iter().find(|o| o.dispatch_failed == Some(true)) {
            let op = o.op.as_deref().unwrap_or("?");
            let why = o.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
            return Health::new(HealthState::Failing, Some(format!("{} -> {op} failed{why}", o.rule_id)));
        }
        if let Some(e) = t.restarts.iter().find(|e| e.given_up_at.is_some()) {
            let since = e.given_up_at.as_deref().unwrap_or_default();
            return Health::new(
                HealthState::GivenUp,
                Some(format!(
                    "{} gave up at {since}: restart limit reached; `chant operator undamp {}` restarts it",
                    e.label(),
                    t.op
                )),
            );
        }
        if let Some(o) = t.outcomes.iter().find(|o| o.action == Action::Ineffective) {
            let op = o.op.as_deref().unwrap_or("?");
            let resource = o.resource.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
            return Health::new(
                HealthState::Degraded,
                Some(format!("{}{resource} -> {op} ran and did not remove its symptom", o.rule_id)),
            );
        }
        if let Some(detail) = unobserved(t) {
            return Health::new(HealthState::Unknown, Some(detail));
        }
        if let Some(o) = t.outcomes.iter().find(|o| o.action == Action::Gated) {
            let gate = o.gate_name.as_deref().unwrap_or("?");
            let op = o.op.as_deref().unwrap_or("?");
            return Health::new(HealthState::Gated, Some(format!("{op} waits at gate {gate}")));
        }
        if let Some(o) = t.outcomes.iter().find(|o| o.action == Action::SkippedFlap) {
            return Health::new(HealthState::Damped, Some(format!("rule {} stopped by flap damping", o.rule_id)));
        }
        if drifted(t) {
            let ran: Vec<String> = t
                .outcomes
                .iter()
                .filter(|o| o.is_dispatch())
                .map(|o| {
                    let resource = o.resource.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
                    format!("ran {}{resource} -> {}", o.rule_id, o.op.as_deref().unwrap_or("?"))
                })
                .collect();
            let verified = t.verified
                && !ran.is_empty()
                && t.outcomes.iter().all(|o| !o.is_dispatch() || o.action == Action::Ran)
                && t.outcomes.iter().all(|o| o.action != Action::SkippedBudget);
            let state = if verified { HealthState::Healed } else { HealthState::Drifted };
            let detail = match (ran.is_empty(), &t.held) {
                (true, Some(held)) => Some(held.line()),
                _ => Some(ran.join(", ")).filter(|r| !r.is_empty()),
            };
            return Health::new(state, detail);
        }
        Health::new(HealthState::InSync, None)
    }
}

/// How many names a tick's headline gives before `+N more`.
const ABOUT: usize = 3;

/// The line a tick prints: its health first, what it is about, then its counters:
/// `healed (ran drift-apply -> staging-apply) [files/app.conf]: converge(staging): drifted=1 ...`.
pub fn headline(record: &TickRecord) -> String {
    let health = Health::of_tick(Some(record));
    let about = about(record);
    let about = if about.is_empty() { String::new() } else { format!(" [{about}]") };
    format!("{health}{about}: {}", record.log)
}

/// The first few things a tick is about, then `+N more`: in env mode the entities whose
/// properties drifted and those an adopt rule named; in resource mode the resources not in sync.
/// Empty when it is about nothing in particular (an in-sync tick).
pub fn about(record: &TickRecord) -> String {
    names(record, true)
}

/// As [`about`], without the entities and resources a rule's outcome names (the operator's line
/// names those after the rule that reported them).
pub fn drifted_names(record: &TickRecord) -> String {
    names(record, false)
}

fn names(record: &TickRecord, with_outcomes: bool) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !names.contains(&n) {
            names.push(n);
        }
    };
    match &record.symptom {
        Some(PlannedSymptom::Resources(rs)) => {
            let named = |r: &str| record.outcomes.iter().any(|o| o.resource.as_deref() == Some(r));
            rs.iter()
                .filter(|r| r.status != ResourceStatus::InSync && (with_outcomes || !named(&r.resource)))
                .for_each(|r| push(r.resource.clone()));
        }
        _ => {
            record.drifted_paths.iter().flatten().for_each(|d| push(format!("{}/{}", d.component, d.entity)));
            if with_outcomes {
                record.outcomes.iter().flat_map(|o| o.entities.iter()).for_each(|e| push(e.clone()));
            }
        }
    }
    let more = names.len().saturating_sub(ABOUT);
    names.truncate(ABOUT);
    if more > 0 {
        names.push(format!("+{more} more"));
    }
    names.join(", ")
}

/// `<n> unobserved, first: <reason>` when the tick could not observe everything.
fn unobserved(t: &TickRecord) -> Option<String> {
    match &t.symptom {
        Some(PlannedSymptom::Env(s)) if s.status == EnvStatus::Unknown || s.unobserved_count > 0 => {
            let first = s.unobserved_reasons.first().map(|r| format!(", first: {}", r.as_str())).unwrap_or_default();
            Some(format!("{} unobserved{first}", s.unobserved_count))
        }
        Some(PlannedSymptom::Resources(rs)) => {
            let unknown: Vec<_> = rs.iter().filter(|r| r.status == ResourceStatus::Unknown).collect();
            let first = unknown.first()?;
            let why = if first.detail.is_empty() { String::new() } else { format!(": {}", first.detail) };
            Some(format!("{} unobserved, first: {}{why}", unknown.len(), first.resource))
        }
        Some(PlannedSymptom::Env(_)) => None,
        None => {
            // Records without a symptom: the rows and resources they carry, then the summary.
            let rows = t.components.iter().flatten().filter(|r| r.reconciliation == EnvStatus::Unknown);
            let resources = t.resources.iter().flatten().filter(|r| r.status == ResourceStatus::Unknown);
            let first = rows
                .map(|r| format!("{}: {}", r.component, r.detail.split("; ").next().unwrap_or_default()))
                .chain(resources.map(|r| r.name.clone()))
                .next();
            match (t.summary.unobserved, first) {
                (0, None) => None,
                (n, first) => {
                    Some(format!("{n} unobserved{}", first.map(|f| format!(", first: {f}")).unwrap_or_default()))
                }
            }
        }
    }
}

/// True when what the tick observed differed from the declaration.
fn drifted(t: &TickRecord) -> bool {
    match &t.symptom {
        Some(PlannedSymptom::Env(s)) => HealthState::of_env_status(s.status) == HealthState::Drifted,
        Some(PlannedSymptom::Resources(rs)) => rs.iter().any(|r| r.status == ResourceStatus::Drifted),
        None => {
            t.summary.drifted > 0
                || t.components
                    .iter()
                    .flatten()
                    .any(|r| HealthState::of_env_status(r.reconciliation) == HealthState::Drifted)
                || t.resources.iter().flatten().any(|r| r.status == ResourceStatus::Drifted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(json: serde_json::Value) -> TickRecord {
        serde_json::from_value(json).unwrap()
    }

    fn env_symptom(status: &str, unobserved: u64, reasons: &[&str]) -> serde_json::Value {
        serde_json::json!({"env": "e", "status": status, "components": [], "createCount": 0,
            "updateCount": 0, "deleteCount": 0, "adoptCount": 0, "runtimeCount": 0,
            "unobservedCount": unobserved, "unobservedReasons": reasons, "totalCount": 1})
    }

    fn state(json: serde_json::Value) -> Health {
        Health::of_tick(Some(&tick(json)))
    }

    #[test]
    fn a_ticks_headline_leads_with_its_health_and_names_what_it_is_about() {
        let ran = serde_json::json!({"ruleId": "drift-apply", "action": "ran", "op": "site-apply"});
        let path = |e: &str| serde_json::json!({"component": "files", "entity": e, "path": "content", "declared": "d"});
        let record = tick(serde_json::json!({
            "symptom": env_symptom("drifted", 0, &[]), "outcomes": [ran], "verified": true,
            "driftedPaths": [path("a.conf"), path("a.conf"), path("b.conf"), path("c.conf"), path("d.conf")],
            "log": "converge(e): drifted=4 remediated=1"}));
        assert_eq!(
            headline(&record),
            "healed (ran drift-apply -> site-apply) [files/a.conf, files/b.conf, files/c.conf, +1 more]: converge(e): drifted=4 remediated=1"
        );
        let calm =
            tick(serde_json::json!({"symptom": env_symptom("reconciled", 0, &[]), "log": "converge(e): drifted=0"}));
        assert_eq!(headline(&calm), "in-sync: converge(e): drifted=0");
    }

    #[test]
    fn each_word_of_the_vocabulary_comes_from_the_tick_it_describes() {
        assert_eq!(Health::of_tick(None).to_string(), "never-ticked");
        assert_eq!(state(serde_json::json!({"symptom": env_symptom("reconciled", 0, &[])})).to_string(), "in-sync");
        let unknown = state(serde_json::json!({"symptom": env_symptom("unknown", 2, &["read-failed", "no-binding"])}));
        assert_eq!(unknown.to_string(), "unknown (2 unobserved, first: read-failed)");
        let ran = serde_json::json!({"ruleId": "drift-apply", "action": "ran", "op": "site-apply"});
        let drifted =
            state(serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [ran], "verified": true}));
        assert_eq!(drifted.to_string(), "healed (ran drift-apply -> site-apply)", "the dispatch was verified");
        let older = state(serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [ran]}));
        assert_eq!(
            older.to_string(),
            "drifted (ran drift-apply -> site-apply)",
            "a record from before verification claims no healing"
        );
        let unverified = serde_json::json!({"ruleId": "drift-apply", "action": "unverified", "op": "site-apply"});
        let still = state(
            serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [unverified], "verified": true}),
        );
        assert_eq!(still.to_string(), "drifted (ran drift-apply -> site-apply)");
        assert_eq!(
            state(serde_json::json!({"symptom": env_symptom("unrecorded", 0, &[])})).state,
            HealthState::Drifted
        );
        let gated = serde_json::json!({"ruleId": "g", "action": "gated", "op": "x", "gateName": "hold"});
        assert_eq!(
            state(serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [gated]})).to_string(),
            "gated (x waits at gate hold)"
        );
        let flap = serde_json::json!({"ruleId": "r", "action": "skipped-flap", "op": "x"});
        assert_eq!(
            state(serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [flap]})).state,
            HealthState::Damped
        );
        let failed = serde_json::json!({"ruleId": "r", "action": "reported", "op": "x", "dispatchFailed": true, "reason": "exit 1"});
        assert_eq!(
            state(serde_json::json!({"symptom": env_symptom("drifted", 0, &[]), "outcomes": [failed]})).to_string(),
            "failing (r -> x failed: exit 1)"
        );
        assert_eq!(state(serde_json::json!({"error": "boom"})).to_string(), "failing (tick failed: boom)");
        let given_up = serde_json::json!({"op": "converge", "symptom": env_symptom("reconciled", 0, &[]),
            "restarts": [{"ruleId": "restart", "resource": "app", "givenUpAt": "2026-03-02T10:02:00.000Z"}]});
        assert_eq!(
            state(given_up.clone()).to_string(),
            "given-up (restart [app] gave up at 2026-03-02T10:02:00.000Z: restart limit reached; `chant operator undamp converge` restarts it)",
            "it stays given up whatever the tick observed"
        );
        let mut flagged = given_up;
        flagged["outcomes"] = serde_json::json!([{"ruleId": "r", "action": "ineffective", "op": "x"}]);
        assert_eq!(state(flagged).state, HealthState::GivenUp, "given-up outranks degraded");
        let counting = serde_json::json!({"symptom": env_symptom("reconciled", 0, &[]),
            "restarts": [{"ruleId": "restart", "at": ["2026-03-02T10:02:00.000Z"]}]});
        assert_eq!(state(counting).state, HealthState::InSync, "a count below the limit is no health of its own");
        let held = serde_json::json!({"symptom": env_symptom("drifted", 0, &[]),
            "outcomes": [{"ruleId": "a", "action": "skipped-window", "op": "x"}],
            "held": {"window": "deny \"0 9 * * 1-5\" for 8h", "until": "2026-03-02T17:00:00.000Z"}});
        assert_eq!(
            state(held).to_string(),
            "drifted (held(window: deny \"0 9 * * 1-5\" for 8h until 2026-03-02T17:00:00.000Z))"
        );
        assert_eq!(HealthState::parse("given-up"), Some(HealthState::GivenUp));
    }

    #[test]
    fn an_env_that_could_not_be_observed_is_never_in_sync_even_in_an_old_record() {
        // A record written before symptoms were recorded: the summary and rows still say so.
        let old = state(
            serde_json::json!({"summary": {"adopted": 0, "drifted": 0, "gated": 0, "remediated": 0, "reported": 0,
            "skippedBudget": 0, "skippedFlap": 0, "unobserved": 3}, "components": [{"component": "files",
            "env": "e", "recorded": true, "live": true, "reconciliation": "unknown", "detail": "3 unobserved: a; b"}]}),
        );
        assert_eq!(old.to_string(), "unknown (3 unobserved, first: files: 3 unobserved: a)");
        let resources = state(serde_json::json!({"symptom": [
            {"env": "b", "resource": "app", "status": "in-sync", "detail": ""},
            {"env": "b", "resource": "db", "status": "unknown", "detail": "supervisor unreachable"}]}));
        assert_eq!(resources.to_string(), "unknown (1 unobserved, first: db: supervisor unreachable)");
        for s in ["reconciled", "drifted", "stale", "unrecorded"] {
            let h = state(serde_json::json!({"symptom": env_symptom(s, 1, &["filtered"])}));
            assert_eq!(h.state, HealthState::Unknown, "{s} with an unobserved entity");
        }
    }
}
