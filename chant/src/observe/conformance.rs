//! The observation conformance suite: scenarios a lexicon author runs against their own reader to
//! prove it keeps the observation contract.
//!
//! A [`Scenario`] names the entities the lexicon is asked about (`declared`), a `run` closure that
//! calls the lexicon's `describe_resources` against a real or faked substrate, and what the
//! author expects: names that must be present, absent, or unobserved. [`Suite::run`] checks, per
//! scenario and collecting every violation rather than stopping at the first:
//!
//! - **shape**: no name is both present and unobserved; the observation survives a JSON round
//!   trip unchanged; every `queried` address is non-blank;
//! - **reason totality**: every unobserved reason is one of [`UnobservedReason::ALL`], and every
//!   ownership verdict one of [`Ownership::ALL`], as written in JSON;
//! - **expectations**: `expect_present` names are in `resources`; `expect_unobserved` names are in
//!   `unobserved` and not in `resources`; `expect_absent` names are in neither map;
//! - **through the real change-set builder** ([`build_change_set`]): every unobserved name
//!   classifies `unobserved` with `observed: false` (never `create`), every `expect_absent` name
//!   classifies `create` with `observed: true`, and no declared name classifies `delete` or
//!   `adopt`.
//!
//! A `run` that returns `Err` is a whole-lexicon failure and is read the way the core reads it
//! ([`normalize`]): every declared entity `read-failed`.

use std::collections::BTreeSet;
use std::fmt;

use super::change_set::{ChangeAction, LastApply, build_change_set};
use super::observation::{DeclaredEntity, LexiconError, Observation, Ownership, normalize};
use crate::model::UnobservedReason;

/// What a scenario's `run` closure does: observe the declared entities.
pub type RunFn = Box<dyn Fn(&[DeclaredEntity]) -> Result<Observation, LexiconError>>;

/// One conformance scenario.
pub struct Scenario {
    /// The test title.
    pub name: String,
    /// The entities the lexicon is asked about: the declared axis fed to the change-set builder.
    pub declared: Vec<DeclaredEntity>,
    /// Calls the lexicon's `describe_resources` with the declared entities.
    pub run: RunFn,
    /// Names that must land in `resources`.
    pub expect_present: Vec<String>,
    /// Names that must be in neither map, and must classify `create`.
    pub expect_absent: Vec<String>,
    /// Names that must land in `unobserved` (with the reason, when given), and must classify
    /// `unobserved` rather than `create`.
    pub expect_unobserved: Vec<(String, Option<UnobservedReason>)>,
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("declared", &self.declared)
            .field("expect_present", &self.expect_present)
            .field("expect_absent", &self.expect_absent)
            .field("expect_unobserved", &self.expect_unobserved)
            .finish_non_exhaustive()
    }
}

impl Scenario {
    /// Creates a scenario with no expectations.
    pub fn new(
        name: impl Into<String>,
        declared: Vec<DeclaredEntity>,
        run: impl Fn(&[DeclaredEntity]) -> Result<Observation, LexiconError> + 'static,
    ) -> Self {
        Scenario {
            name: name.into(),
            declared,
            run: Box::new(run),
            expect_present: Vec::new(),
            expect_absent: Vec::new(),
            expect_unobserved: Vec::new(),
        }
    }

    /// Expects these names in `resources`.
    #[must_use]
    pub fn expect_present<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.expect_present.extend(names.into_iter().map(Into::into));
        self
    }

    /// Expects these names in neither map.
    #[must_use]
    pub fn expect_absent<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.expect_absent.extend(names.into_iter().map(Into::into));
        self
    }

    /// Expects these names in `unobserved`, with any reason.
    #[must_use]
    pub fn expect_unobserved<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.expect_unobserved.extend(names.into_iter().map(|n| (n.into(), None)));
        self
    }

    /// Expects this name in `unobserved` with exactly this reason.
    #[must_use]
    pub fn expect_unobserved_because(mut self, name: impl Into<String>, reason: UnobservedReason) -> Self {
        self.expect_unobserved.push((name.into(), Some(reason)));
        self
    }
}

/// One broken rule: which scenario, which rule, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The scenario's name.
    pub scenario: String,
    /// The rule broken (`shape`, `reason-totality`, `expect-absent`, ...).
    pub rule: &'static str,
    /// What was seen, naming the entity.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.scenario, self.rule, self.detail)
    }
}

/// A failed conformance run: every violation found, in scenario order.
///
/// Returned by [`Suite::run`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lexicon {lexicon} breaks the observation contract ({} violations):\n{}", violations.len(), render(violations))]
pub struct ConformanceError {
    /// The lexicon's name.
    pub lexicon: String,
    /// Every violation found.
    pub violations: Vec<Violation>,
}

fn render(violations: &[Violation]) -> String {
    violations.iter().map(|v| format!("  {v}")).collect::<Vec<_>>().join("\n")
}

/// A set of scenarios for one lexicon.
#[derive(Debug)]
pub struct Suite {
    /// The lexicon's name.
    pub lexicon: String,
    /// The scenarios, run in order.
    pub scenarios: Vec<Scenario>,
}

impl Suite {
    /// Creates an empty suite for the named lexicon.
    pub fn new(lexicon: impl Into<String>) -> Self {
        Suite { lexicon: lexicon.into(), scenarios: Vec::new() }
    }

    /// Adds a scenario.
    #[must_use]
    pub fn scenario(mut self, scenario: Scenario) -> Self {
        self.scenarios.push(scenario);
        self
    }

    /// Runs every scenario and checks every rule.
    ///
    /// # Errors
    ///
    /// Every violation found, across all scenarios.
    pub fn run(&self) -> Result<(), ConformanceError> {
        let violations: Vec<Violation> = self.scenarios.iter().flat_map(check_scenario).collect();
        if violations.is_empty() { Ok(()) } else { Err(ConformanceError { lexicon: self.lexicon.clone(), violations }) }
    }
}

/// Runs one scenario and returns every violation.
pub fn check_scenario(scenario: &Scenario) -> Vec<Violation> {
    let observation = normalize((scenario.run)(&scenario.declared), &scenario.declared);
    check_observation(scenario, &observation)
}

/// Checks an observation already produced for a scenario.
pub fn check_observation(scenario: &Scenario, observation: &Observation) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut fail = |rule: &'static str, detail: String| {
        out.push(Violation { scenario: scenario.name.clone(), rule, detail });
    };

    // Shape.
    for name in observation.resources.keys().filter(|n| observation.unobserved.contains_key(*n)) {
        fail("shape", format!("{name} is both present and unobserved"));
    }
    for (name, address) in observation
        .queried
        .iter()
        .chain(observation.unobserved.iter().filter_map(|(n, u)| u.queried.as_ref().map(|q| (n, q))))
    {
        if address.trim().is_empty() {
            fail("shape", format!("{name} has a blank queried address"));
        }
    }
    match serde_json::to_value(observation) {
        Ok(json) => {
            check_json_totality(&json, &mut fail);
            match serde_json::from_value::<Observation>(json) {
                Ok(back) if &back == observation => {}
                Ok(_) => fail("shape", "the observation does not survive a JSON round trip".into()),
                Err(e) => fail("shape", format!("the observation's JSON does not read back: {e}")),
            }
        }
        Err(e) => fail("shape", format!("the observation does not serialise: {e}")),
    }

    // Expectations.
    for name in &scenario.expect_present {
        if !observation.resources.contains_key(name) {
            fail("expect-present", format!("{name} is not in resources ({})", where_is(observation, name)));
        }
    }
    for (name, reason) in &scenario.expect_unobserved {
        match observation.unobserved.get(name) {
            None => fail("expect-unobserved", format!("{name} is not in unobserved ({})", where_is(observation, name))),
            Some(verdict) => {
                if let Some(reason) = reason
                    && verdict.reason != *reason
                {
                    fail(
                        "expect-unobserved",
                        format!("{name} is unobserved as {}, expected {}", verdict.reason.as_str(), reason.as_str()),
                    );
                }
            }
        }
    }
    for name in &scenario.expect_absent {
        if !observation.is_absent(name) {
            fail("expect-absent", format!("{name} is not absent ({})", where_is(observation, name)));
        }
    }

    // Through the real change-set builder.
    let change_set = build_change_set("conformance", &scenario.declared, observation, &LastApply::none());
    let declared: BTreeSet<&str> = scenario.declared.iter().map(|d| d.name.as_str()).collect();
    for entry in &change_set.entries {
        let unobserved = observation.unobserved.contains_key(&entry.name);
        if unobserved && (entry.action != ChangeAction::Unobserved || entry.evidence.observed) {
            fail(
                "unobserved-never-create",
                format!("{} is unobserved but classifies {}", entry.name, entry.action.as_str()),
            );
        }
        if declared.contains(entry.name.as_str()) && matches!(entry.action, ChangeAction::Delete | ChangeAction::Adopt)
        {
            fail(
                "declared-never-delete",
                format!("{} is declared but classifies {}", entry.name, entry.action.as_str()),
            );
        }
    }
    for name in &scenario.expect_absent {
        match change_set.entry(name) {
            Some(entry) if entry.action == ChangeAction::Create && entry.evidence.observed => {}
            Some(entry) => {
                fail("absent-is-create", format!("{name} is expected absent but classifies {}", entry.action.as_str()))
            }
            None => fail("absent-is-create", format!("{name} is expected absent but is not declared")),
        }
    }
    out
}

fn where_is(observation: &Observation, name: &str) -> &'static str {
    match (observation.resources.contains_key(name), observation.unobserved.contains_key(name)) {
        (true, true) => "present and unobserved",
        (true, false) => "present",
        (false, true) => "unobserved",
        (false, false) => "absent",
    }
}

fn check_json_totality(json: &serde_json::Value, fail: &mut impl FnMut(&'static str, String)) {
    let reasons: Vec<&str> = UnobservedReason::ALL.iter().map(|r| r.as_str()).collect();
    let ownerships: Vec<&str> = Ownership::ALL.iter().map(|o| o.as_str()).collect();
    if let Some(unobserved) = json.get("unobserved").and_then(|u| u.as_object()) {
        for (name, verdict) in unobserved {
            let reason = verdict.get("reason").and_then(|r| r.as_str()).unwrap_or("");
            if !reasons.contains(&reason) {
                fail("reason-totality", format!("{name} has reason {reason:?}, not one of {}", reasons.join(", ")));
            }
        }
    }
    if let Some(resources) = json.get("resources").and_then(|u| u.as_object()) {
        for (name, resource) in resources {
            let ownership = resource.get("ownership").and_then(|r| r.as_str()).unwrap_or("");
            if !ownerships.contains(&ownership) {
                fail("ownership-totality", format!("{name} has ownership {ownership:?}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::observation::{PresentResource, Unobserved};

    fn declared() -> Vec<DeclaredEntity> {
        vec![DeclaredEntity::new("a"), DeclaredEntity::new("b"), DeclaredEntity::new("c")]
    }

    #[test]
    fn a_well_behaved_reader_passes() {
        let suite = Suite::new("fake").scenario(
            Scenario::new("mixed", declared(), |_| {
                let mut o = Observation::new();
                o.insert_present("a", PresentResource::new(Ownership::Owned));
                o.insert_unobserved("b", Unobserved::new(UnobservedReason::ReadFailed));
                o.insert_queried("c", "/r/c");
                Ok(o)
            })
            .expect_present(["a"])
            .expect_unobserved_because("b", UnobservedReason::ReadFailed)
            .expect_absent(["c"]),
        );
        suite.run().unwrap();
    }

    #[test]
    fn whole_lexicon_failure_reads_as_every_entity_read_failed() {
        let suite = Suite::new("fake").scenario(
            Scenario::new("down", declared(), |_| {
                Err(LexiconError::read_failed("fake", "down", std::io::Error::other("refused")))
            })
            .expect_unobserved_because("a", UnobservedReason::ReadFailed)
            .expect_unobserved(["b", "c"]),
        );
        suite.run().unwrap();
    }

    #[test]
    fn a_reader_that_hides_a_failed_read_as_absent_is_caught() {
        // The classic bug: a read failed, and the reader left the entity out.
        let suite = Suite::new("liar").scenario(
            Scenario::new("failed read dropped", declared(), |_| Ok(Observation::new()))
                .expect_unobserved(["b"])
                .expect_present(["a"]),
        );
        let err = suite.run().unwrap_err();
        let rules: Vec<&str> = err.violations.iter().map(|v| v.rule).collect();
        assert_eq!(rules, ["expect-present", "expect-unobserved"]);
        assert!(err.to_string().contains("[failed read dropped] expect-unobserved: b is not in unobserved (absent)"));
    }

    #[test]
    fn shape_and_classification_violations_are_all_reported() {
        let suite = Suite::new("broken").scenario(
            Scenario::new("both maps", declared(), |_| {
                let mut o = Observation::new();
                o.insert_present("a", PresentResource::new(Ownership::Owned));
                o.insert_unobserved("a", Unobserved::new(UnobservedReason::Filtered).queried(" "));
                o.insert_unobserved("b", Unobserved::new(UnobservedReason::Filtered));
                Ok(o)
            })
            .expect_absent(["a", "zzz"])
            .expect_unobserved_because("b", UnobservedReason::NoCredentials),
        );
        let err = suite.run().unwrap_err();
        let rules: Vec<&str> = err.violations.iter().map(|v| v.rule).collect();
        assert_eq!(
            rules,
            ["shape", "shape", "expect-unobserved", "expect-absent", "absent-is-create", "absent-is-create"]
        );
    }
}
