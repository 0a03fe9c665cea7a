//! A behaviour report, and the result a prediction returns: a report or a refusal, never both.
//!
//! A [`Report`] keeps the tri-state discipline on a stricter total: every entity the caller asked
//! about lands in `entities` (predicted, with [`Figures`]) or in `unpredicted` (with an
//! [`UnpredictedReason`]), never in both and never in neither. The reasons are the observation
//! contract's minus `no-credentials` (a prediction is handed no credential, so it has none to be
//! missing), spelt exactly as [`UnobservedReason`] spells them. Reports are built only by a
//! [`ReportBuilder`], which takes `meta.at` from the request and refuses a block predicted at any
//! other level, so one run means one level. A [`Prediction`] is the result union: a report, or a
//! [`Refusal`] that carries no figures at all, so an engine that did not answer and an estate
//! priced at nothing are different objects.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::figure::Figures;
use super::refusal::Refusal;
use super::request::{Ask, TrafficLevel};
use chant_lexicon::model::UnobservedReason;

/// Why an asked entity has no figures. The set is total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnpredictedReason {
    /// The engine was reached and the prediction errored.
    ReadFailed,
    /// The environment resolves to no concrete target to predict.
    NoBinding,
    /// The engine has no model for this kind: it may cost money, and this engine cannot say how
    /// much, so it returns no figure rather than a zero.
    UnsupportedKind,
    /// Reached, but withheld by the owned-only filter.
    Filtered,
}

impl UnpredictedReason {
    /// Every reason.
    pub const ALL: [UnpredictedReason; 4] = [
        UnpredictedReason::ReadFailed,
        UnpredictedReason::NoBinding,
        UnpredictedReason::UnsupportedKind,
        UnpredictedReason::Filtered,
    ];

    /// Returns the reason's code, as the observation contract spells it (`read-failed`).
    pub fn as_str(self) -> &'static str {
        UnobservedReason::from(self).as_str()
    }

    /// Returns the reason in words.
    pub fn text(self) -> &'static str {
        match self {
            UnpredictedReason::ReadFailed => "the engine was reached and the prediction failed",
            UnpredictedReason::NoBinding => "no binding for this environment",
            UnpredictedReason::UnsupportedKind => "the engine has no model for this kind",
            UnpredictedReason::Filtered => "withheld by the owned filter",
        }
    }
}

impl From<UnpredictedReason> for UnobservedReason {
    fn from(reason: UnpredictedReason) -> Self {
        match reason {
            UnpredictedReason::ReadFailed => UnobservedReason::ReadFailed,
            UnpredictedReason::NoBinding => UnobservedReason::NoBinding,
            UnpredictedReason::UnsupportedKind => UnobservedReason::UnsupportedKind,
            UnpredictedReason::Filtered => UnobservedReason::Filtered,
        }
    }
}

/// The one observation reason a prediction cannot have. Returned by the `TryFrom` conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no-credentials is not a behaviour reason: a prediction is handed no credential")]
pub struct NoCredentialsReason;

impl TryFrom<UnobservedReason> for UnpredictedReason {
    type Error = NoCredentialsReason;
    fn try_from(reason: UnobservedReason) -> Result<Self, NoCredentialsReason> {
        match reason {
            UnobservedReason::ReadFailed => Ok(UnpredictedReason::ReadFailed),
            UnobservedReason::NoBinding => Ok(UnpredictedReason::NoBinding),
            UnobservedReason::UnsupportedKind => Ok(UnpredictedReason::UnsupportedKind),
            UnobservedReason::Filtered => Ok(UnpredictedReason::Filtered),
            UnobservedReason::NoCredentials => Err(NoCredentialsReason),
        }
    }
}

/// An asked entity without figures, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unpredicted {
    /// Why.
    pub reason: UnpredictedReason,
    /// What went wrong, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Unpredicted {
    /// Creates a verdict with only a reason.
    pub fn new(reason: UnpredictedReason) -> Self {
        Unpredicted { reason, detail: None }
    }

    /// Sets the one-line detail.
    #[must_use]
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// Whether the request carried edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeCoverage {
    /// No edges were computed: the engine priced each entity on its own.
    NotComputed,
    /// Edges were computed and sent (possibly none, which is a claim).
    Computed,
}

/// What one report is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportMeta {
    /// The lexicon.
    pub lexicon: String,
    /// The level every figure in the report was predicted at.
    pub at: TrafficLevel,
    /// Whether edges were sent.
    pub edges: EdgeCoverage,
}

/// A behaviour report: every asked entity in exactly one of `entities` and `unpredicted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ReportRepr", into = "ReportRepr")]
pub struct Report {
    meta: ReportMeta,
    entities: BTreeMap<String, Figures>,
    unpredicted: BTreeMap<String, Unpredicted>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportRepr {
    meta: ReportMeta,
    entities: BTreeMap<String, Figures>,
    unpredicted: BTreeMap<String, Unpredicted>,
}

impl TryFrom<ReportRepr> for Report {
    type Error = ReportError;
    fn try_from(repr: ReportRepr) -> Result<Self, ReportError> {
        if let Some(name) = repr.entities.keys().find(|n| repr.unpredicted.contains_key(*n)) {
            return Err(ReportError::AlreadyAccounted(name.clone()));
        }
        for (name, figures) in &repr.entities {
            check_level(name, repr.meta.at, figures)?;
        }
        Ok(Report { meta: repr.meta, entities: repr.entities, unpredicted: repr.unpredicted })
    }
}

impl From<Report> for ReportRepr {
    fn from(r: Report) -> Self {
        ReportRepr { meta: r.meta, entities: r.entities, unpredicted: r.unpredicted }
    }
}

impl Report {
    /// Returns what the report is about.
    pub fn meta(&self) -> &ReportMeta {
        &self.meta
    }

    /// Returns the predicted entities.
    pub fn entities(&self) -> &BTreeMap<String, Figures> {
        &self.entities
    }

    /// Returns the asked entities without figures.
    pub fn unpredicted(&self) -> &BTreeMap<String, Unpredicted> {
        &self.unpredicted
    }

    /// Returns true when some asked entity has no figures: a partial answer.
    pub fn is_partial(&self) -> bool {
        !self.unpredicted.is_empty()
    }
}

/// The errors of building a report. Returned by [`ReportBuilder`]'s methods and when a report is
/// read from JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    /// A block for an entity the request did not ask about.
    #[error("{0} was not asked about")]
    NotAsked(String),
    /// A second verdict for one entity.
    #[error("{0} is already accounted for")]
    AlreadyAccounted(String),
    /// A block predicted at a level other than the request's.
    #[error("the figures for {name} were predicted at {got}, the request asked at {expected}")]
    LevelMismatch {
        /// The entity.
        name: String,
        /// The request's level.
        expected: TrafficLevel,
        /// The block's level.
        got: TrafficLevel,
    },
    /// Asked entities without a verdict when the report was finished.
    #[error("asked entities with no verdict: {}", .0.join(", "))]
    Unaccounted(Vec<String>),
}

fn check_level(name: &str, expected: TrafficLevel, figures: &Figures) -> Result<(), ReportError> {
    if figures.at == expected {
        Ok(())
    } else {
        Err(ReportError::LevelMismatch { name: name.to_owned(), expected, got: figures.at })
    }
}

/// Builds a [`Report`] for one [`Ask`]: the level and edge coverage come from the request, the
/// withheld entities are accounted for from the start, and every other asked entity needs exactly
/// one verdict before [`ReportBuilder::finish`].
#[derive(Debug, Clone)]
pub struct ReportBuilder {
    meta: ReportMeta,
    asked: BTreeSet<String>,
    entities: BTreeMap<String, Figures>,
    unpredicted: BTreeMap<String, Unpredicted>,
}

impl ReportBuilder {
    /// Starts a report for `ask`.
    pub fn new(ask: &Ask) -> Self {
        let request = &ask.request;
        ReportBuilder {
            meta: ReportMeta {
                lexicon: request.lexicon.clone(),
                at: request.traffic,
                edges: if request.edges.is_some() { EdgeCoverage::Computed } else { EdgeCoverage::NotComputed },
            },
            asked: ask.asked().into_iter().map(str::to_owned).collect(),
            entities: BTreeMap::new(),
            unpredicted: ask.withheld.clone(),
        }
    }

    /// Returns the level every block must be predicted at.
    pub fn at(&self) -> TrafficLevel {
        self.meta.at
    }

    fn check_new(&self, name: &str) -> Result<(), ReportError> {
        if !self.asked.contains(name) {
            return Err(ReportError::NotAsked(name.to_owned()));
        }
        if self.entities.contains_key(name) || self.unpredicted.contains_key(name) {
            return Err(ReportError::AlreadyAccounted(name.to_owned()));
        }
        Ok(())
    }

    /// Records figures for `name`.
    ///
    /// # Errors
    ///
    /// [`ReportError::NotAsked`], [`ReportError::AlreadyAccounted`], or
    /// [`ReportError::LevelMismatch`] for a block whose `at` is not the request's level.
    pub fn predicted(&mut self, name: &str, figures: Figures) -> Result<&mut Self, ReportError> {
        self.check_new(name)?;
        check_level(name, self.meta.at, &figures)?;
        self.entities.insert(name.to_owned(), figures);
        Ok(self)
    }

    /// Records that `name` has no figures, and why.
    ///
    /// # Errors
    ///
    /// [`ReportError::NotAsked`] or [`ReportError::AlreadyAccounted`].
    pub fn unpredicted(&mut self, name: &str, verdict: Unpredicted) -> Result<&mut Self, ReportError> {
        self.check_new(name)?;
        self.unpredicted.insert(name.to_owned(), verdict);
        Ok(self)
    }

    /// Returns the asked names that have no verdict yet, sorted.
    pub fn pending(&self) -> Vec<String> {
        self.asked
            .iter()
            .filter(|n| !self.entities.contains_key(*n) && !self.unpredicted.contains_key(*n))
            .cloned()
            .collect()
    }

    /// Finishes the report.
    ///
    /// # Errors
    ///
    /// [`ReportError::Unaccounted`] naming every asked entity with no verdict.
    pub fn finish(self) -> Result<Report, ReportError> {
        let pending = self.pending();
        if !pending.is_empty() {
            return Err(ReportError::Unaccounted(pending));
        }
        Ok(Report { meta: self.meta, entities: self.entities, unpredicted: self.unpredicted })
    }
}

/// The result of a prediction: a report, or a refusal with no figures on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prediction {
    /// The engine answered: figures per entity, and the entities it could not predict.
    Report(Report),
    /// No figures at all, with the cause and its remedy.
    Refusal(Refusal),
}

impl Prediction {
    /// Returns the report, if this is one.
    pub fn report(&self) -> Option<&Report> {
        match self {
            Prediction::Report(r) => Some(r),
            Prediction::Refusal(_) => None,
        }
    }

    /// Returns the refusal, if this is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Prediction::Refusal(r) => Some(r),
            Prediction::Report(_) => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::behaviour::figure::{Basis, Currency, EngineIdentity, Headroom, PredictedRate, Provenance};
    use crate::behaviour::request::{Request, RequestEntity};

    pub(crate) fn figures(rps: f64) -> Figures {
        Figures {
            at: TrafficLevel::rps(rps).unwrap(),
            provenance: Provenance {
                engine: EngineIdentity { name: "e".into(), version: "1".into(), tolerance: None },
                basis: Basis::Modeled,
            },
            cost: PredictedRate::per_hour(1.0, Currency::new("USD").unwrap()).unwrap(),
            headroom: Headroom::new(0.5, 0.5).unwrap(),
            error_rate: 0.0,
            resilience: None,
            right_size: None,
        }
    }

    fn ask() -> Ask {
        let request = Request::new("acme", TrafficLevel::rps(100.0).unwrap())
            .entity(RequestEntity::new("web", "svc"))
            .entity(RequestEntity::new("db", "table"));
        Ask::new(request).withhold("cache", Unpredicted::new(UnpredictedReason::NoBinding))
    }

    #[test]
    fn reasons_keep_the_observation_spelling_and_exclude_no_credentials() {
        for reason in UnpredictedReason::ALL {
            let unobserved = UnobservedReason::from(reason);
            assert_eq!(reason.as_str(), unobserved.as_str());
            assert_eq!(UnpredictedReason::try_from(unobserved), Ok(reason));
            let json = serde_json::to_value(reason).unwrap();
            assert_eq!(json, serde_json::to_value(unobserved).unwrap());
        }
        assert_eq!(UnpredictedReason::try_from(UnobservedReason::NoCredentials), Err(NoCredentialsReason));
        assert!(serde_json::from_str::<UnpredictedReason>("\"no-credentials\"").is_err());
        // Every observation reason but one maps.
        let mapped = UnobservedReason::ALL.iter().filter(|r| UnpredictedReason::try_from(**r).is_ok()).count();
        assert_eq!(mapped, UnpredictedReason::ALL.len());
    }

    #[test]
    fn every_asked_entity_is_accounted_for_exactly_once() {
        let mut b = ReportBuilder::new(&ask());
        assert_eq!(b.pending(), ["db", "web"]);
        b.predicted("web", figures(100.0)).unwrap();
        assert_eq!(b.predicted("web", figures(100.0)).unwrap_err(), ReportError::AlreadyAccounted("web".into()));
        assert_eq!(
            b.unpredicted("web", Unpredicted::new(UnpredictedReason::ReadFailed)).unwrap_err(),
            ReportError::AlreadyAccounted("web".into())
        );
        assert_eq!(
            b.unpredicted("cache", Unpredicted::new(UnpredictedReason::ReadFailed)).unwrap_err(),
            ReportError::AlreadyAccounted("cache".into())
        );
        assert_eq!(b.predicted("queue", figures(100.0)).unwrap_err(), ReportError::NotAsked("queue".into()));
        assert_eq!(b.clone().finish().unwrap_err(), ReportError::Unaccounted(vec!["db".into()]));
        b.unpredicted("db", Unpredicted::new(UnpredictedReason::UnsupportedKind)).unwrap();
        let report = b.finish().unwrap();
        let predicted: Vec<&str> = report.entities().keys().map(String::as_str).collect();
        let unpredicted: Vec<&str> = report.unpredicted().keys().map(String::as_str).collect();
        assert_eq!(predicted, ["web"]);
        assert_eq!(unpredicted, ["cache", "db"]);
        assert!(report.is_partial());
    }

    #[test]
    fn a_block_at_another_level_is_refused() {
        let mut b = ReportBuilder::new(&ask());
        let err = b.predicted("web", figures(1000.0)).unwrap_err();
        assert!(matches!(err, ReportError::LevelMismatch { .. }));
        assert_eq!(err.to_string(), "the figures for web were predicted at 1000 rps, the request asked at 100 rps");
        assert_eq!(b.pending(), ["db", "web"]);
    }

    #[test]
    fn a_report_survives_json_and_a_bad_one_does_not_read_back() {
        let mut b = ReportBuilder::new(&ask());
        b.predicted("web", figures(100.0)).unwrap();
        b.unpredicted("db", Unpredicted::new(UnpredictedReason::ReadFailed).detail("boom")).unwrap();
        let prediction = Prediction::Report(b.finish().unwrap());
        let json = serde_json::to_value(&prediction).unwrap();
        assert_eq!(json["report"]["meta"]["edges"], "not-computed");
        assert_eq!(serde_json::from_value::<Prediction>(json.clone()).unwrap(), prediction);
        let mut both = json.clone();
        both["report"]["unpredicted"]["web"] = serde_json::json!({"reason": "filtered"});
        assert!(serde_json::from_value::<Prediction>(both).is_err());
        let mut other_level = json;
        other_level["report"]["entities"]["web"]["at"] = serde_json::json!({"rps": 5});
        assert!(serde_json::from_value::<Prediction>(other_level).is_err());
    }
}
