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
//!   `adopt`;
//! - **markers**: every surfaced marker is well-formed (a non-blank `stack`, and `env` non-blank
//!   when set); `expect_marker` names carry exactly that marker, `expect_no_marker` names none;
//! - **ownership totality against the declared channel** (a suite built with
//!   [`Suite::for_lexicon`], which also refuses a channel naming a read path the lexicon does
//!   not implement): when the channel reads on `describeResources`, a marker-carrying resource is
//!   never `unknown`, and an `owned` scenario answers `owned` or `foreign` for every resource;
//!   when the lexicon declares no channel (or one not read on this path), an `owned` scenario
//!   answers `unknown` for every resource. A suite built with [`Suite::new`] was given no channel
//!   and checks only that each verdict is one of the three.
//!
//! A `run` that returns `Err` is a whole-lexicon failure and is read the way the core reads it
//! ([`normalize`]): every declared entity `read-failed`.

use std::collections::BTreeSet;
use std::fmt;

use super::change_set::{ChangeAction, LastApply, build_change_set};
use super::observation::{
    ChannelError, DeclaredEntity, Lexicon, LexiconError, Marker, Observation, Ownership, OwnershipChannel, ReadPath,
    check_lexicon, normalize,
};
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
    /// The scenario ran with the owned filter on (`owned: true`), so every verdict is held to
    /// the declared ownership channel.
    pub owned: bool,
    /// Per entity, the exact marker the read must surface.
    pub expect_marker: Vec<(String, Marker)>,
    /// Names whose live model carries no marker, so the field must stay absent.
    pub expect_no_marker: Vec<String>,
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("declared", &self.declared)
            .field("expect_present", &self.expect_present)
            .field("expect_absent", &self.expect_absent)
            .field("expect_unobserved", &self.expect_unobserved)
            .field("owned", &self.owned)
            .field("expect_marker", &self.expect_marker)
            .field("expect_no_marker", &self.expect_no_marker)
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
            owned: false,
            expect_marker: Vec::new(),
            expect_no_marker: Vec::new(),
        }
    }

    /// Says the scenario ran with the owned filter on.
    #[must_use]
    pub fn owned(mut self) -> Self {
        self.owned = true;
        self
    }

    /// Expects exactly this marker on `name`.
    #[must_use]
    pub fn expect_marker(mut self, name: impl Into<String>, marker: Marker) -> Self {
        self.expect_marker.push((name.into(), marker));
        self
    }

    /// Expects no marker on these names.
    #[must_use]
    pub fn expect_no_marker<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.expect_no_marker.extend(names.into_iter().map(Into::into));
        self
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

/// What the suite knows of the lexicon's ownership channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelClaim {
    /// Not given: only the totality of each verdict is checked.
    NotGiven,
    /// The lexicon declares no channel: its owned reads must answer `unknown`.
    None,
    /// The lexicon's declared (and checked) channel.
    Declared(OwnershipChannel),
}

/// A set of scenarios for one lexicon.
#[derive(Debug)]
pub struct Suite {
    /// The lexicon's name.
    pub lexicon: String,
    /// What the suite holds ownership verdicts to.
    pub channel: ChannelClaim,
    /// The scenarios, run in order.
    pub scenarios: Vec<Scenario>,
}

impl Suite {
    /// Creates an empty suite for the named lexicon, given no ownership channel.
    pub fn new(lexicon: impl Into<String>) -> Self {
        Suite { lexicon: lexicon.into(), channel: ChannelClaim::NotGiven, scenarios: Vec::new() }
    }

    /// Creates an empty suite for `lexicon`, holding it to the ownership channel it declares.
    ///
    /// # Errors
    ///
    /// The channel names a read path the lexicon does not implement, or its keys are incomplete
    /// ([`check_lexicon`]).
    pub fn for_lexicon(lexicon: &dyn Lexicon) -> Result<Self, ChannelError> {
        check_lexicon(lexicon)?;
        let channel = match lexicon.ownership_channel() {
            Some(channel) => ChannelClaim::Declared(channel),
            None => ChannelClaim::None,
        };
        Ok(Suite { lexicon: lexicon.name().to_owned(), channel, scenarios: Vec::new() })
    }

    /// Holds the suite to `channel`, as if the lexicon declared it.
    #[must_use]
    pub fn with_channel(mut self, channel: ChannelClaim) -> Self {
        self.channel = channel;
        self
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
        let violations: Vec<Violation> =
            self.scenarios.iter().flat_map(|s| check_scenario_with(s, &self.channel)).collect();
        if violations.is_empty() { Ok(()) } else { Err(ConformanceError { lexicon: self.lexicon.clone(), violations }) }
    }
}

/// Runs one scenario, given no ownership channel, and returns every violation.
pub fn check_scenario(scenario: &Scenario) -> Vec<Violation> {
    check_scenario_with(scenario, &ChannelClaim::NotGiven)
}

/// Runs one scenario against an ownership-channel claim and returns every violation.
pub fn check_scenario_with(scenario: &Scenario, channel: &ChannelClaim) -> Vec<Violation> {
    let observation = normalize((scenario.run)(&scenario.declared), &scenario.declared);
    let mut out = check_observation(scenario, &observation);
    out.extend(check_ownership(scenario, &observation, channel));
    out
}

/// Checks the markers and ownership verdicts of an observation against a channel claim.
pub fn check_ownership(scenario: &Scenario, observation: &Observation, channel: &ChannelClaim) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut fail = |rule: &'static str, detail: String| {
        out.push(Violation { scenario: scenario.name.clone(), rule, detail });
    };
    for (name, resource) in &observation.resources {
        if let Some(marker) = &resource.marker
            && (marker.stack.trim().is_empty() || marker.env.as_deref().is_some_and(|e| e.trim().is_empty()))
        {
            fail("marker-shape", format!("{name} carries a malformed marker {marker:?}"));
        }
    }
    for (name, want) in &scenario.expect_marker {
        match observation.resources.get(name).map(|r| r.marker.as_ref()) {
            Some(Some(got)) if got == want => {}
            Some(got) => fail("expect-marker", format!("{name} carries marker {got:?}, expected {want:?}")),
            None => fail("expect-marker", format!("{name} is not in resources ({})", where_is(observation, name))),
        }
    }
    for name in &scenario.expect_no_marker {
        if let Some(marker) = observation.resources.get(name).and_then(|r| r.marker.as_ref()) {
            fail("expect-no-marker", format!("{name} carries marker {marker:?}, expected none"));
        }
    }
    let reads_here = match channel {
        ChannelClaim::NotGiven => return out,
        ChannelClaim::None => false,
        ChannelClaim::Declared(c) => c.reads_on(ReadPath::DescribeResources),
    };
    for (name, resource) in &observation.resources {
        if reads_here && resource.marker.is_some() && resource.ownership == Ownership::Unknown {
            fail("ownership-channel", format!("{name} carries a marker read on a declared path but is unknown"));
        }
        if scenario.owned {
            let ok = if reads_here {
                resource.ownership != Ownership::Unknown
            } else {
                resource.ownership == Ownership::Unknown
            };
            if !ok {
                let want = if reads_here { "owned or foreign" } else { "unknown (no channel on describeResources)" };
                fail(
                    "ownership-channel",
                    format!("{name} is {} on an owned read; expected {want}", resource.ownership.as_str()),
                );
            }
        }
    }
    out
}

/// Checks an observation already produced for a scenario (shape, totality, expectations and the
/// change-set classification; ownership against a channel is [`check_ownership`]).
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
