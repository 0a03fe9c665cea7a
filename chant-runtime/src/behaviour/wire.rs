//! chant's own wire version, `chant-behaviour/1`: the bytes a request becomes and the answer an
//! engine gives back.
//!
//! The request is the [`Request`] as JSON with a `version` field. The answer is
//! `{"version": "chant-behaviour/1", "entities": {name: Figures}, "unpredicted": {name:
//! {"reason", "detail"?}}}`: every figure block carries its own `at` and `provenance`. An answer
//! that does not parse (including a reason the contract does not have, such as
//! `no-credentials`, or a figure without its level) is a wire condition, so it becomes
//! `engine-unreachable`. [`report_from_answer`] folds an answer into a report for the [`Ask`]: a
//! block predicted at another level, and an entity the answer does not mention, become
//! `read-failed` for that entity alone; names the request did not carry are ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::figure::Figures;
use super::report::{Report, ReportBuilder, ReportError, Unpredicted, UnpredictedReason};
use super::request::{Ask, Request};
use chant_lexicon::redact::Redactor;

/// The wire version this module speaks.
pub const WIRE_VERSION: &str = "chant-behaviour/1";

#[derive(Serialize)]
struct WireRequest<'a> {
    version: &'static str,
    #[serde(flatten)]
    request: &'a Request,
}

/// Renders a request as the bytes sent to an engine.
///
/// # Errors
///
/// A JSON error, which a well-formed request never produces.
pub fn render_request(request: &Request) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&WireRequest { version: WIRE_VERSION, request })
}

/// The version tag of an answer: only [`WIRE_VERSION`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnswerVersion {
    /// `chant-behaviour/1`.
    #[serde(rename = "chant-behaviour/1")]
    V1,
}

/// An engine's answer in this wire version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The wire version.
    pub version: AnswerVersion,
    /// Figures per entity.
    #[serde(default)]
    pub entities: BTreeMap<String, Figures>,
    /// Entities the engine could not predict, and why.
    #[serde(default)]
    pub unpredicted: BTreeMap<String, Unpredicted>,
}

/// Parses an answer.
///
/// # Errors
///
/// The JSON error, to be reported as [`super::transport::WireCondition::Unparseable`].
pub fn parse_answer(text: &str) -> Result<Answer, serde_json::Error> {
    serde_json::from_str(text)
}

/// Folds an answer into the report for `ask`.
///
/// # Errors
///
/// A [`ReportError`] only if `ask` itself is invalid (see [`Ask::validate`]).
pub fn report_from_answer(ask: &Ask, mut answer: Answer) -> Result<Report, ReportError> {
    let redactor = Redactor::default();
    let mut builder = ReportBuilder::new(ask);
    for entity in &ask.request.entities {
        let name = entity.name.as_str();
        if let Some(mut verdict) = answer.unpredicted.remove(name) {
            verdict.detail = verdict.detail.map(|d| redactor.record(&d));
            builder.unpredicted(name, verdict)?;
        } else if let Some(figures) = answer.entities.remove(name) {
            match builder.predicted(name, figures) {
                Ok(_) => {}
                Err(mismatch @ ReportError::LevelMismatch { .. }) => {
                    builder.unpredicted(
                        name,
                        Unpredicted::new(UnpredictedReason::ReadFailed).detail(mismatch.to_string()),
                    )?;
                }
                Err(other) => return Err(other),
            }
        } else {
            let verdict =
                Unpredicted::new(UnpredictedReason::ReadFailed).detail("the engine's answer does not mention it");
            builder.unpredicted(name, verdict)?;
        }
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::report::tests::figures;
    use crate::behaviour::request::{RequestEntity, TrafficLevel};

    fn ask() -> Ask {
        let request = Request::new("acme", TrafficLevel::rps(100.0).unwrap())
            .entity(RequestEntity::new("web", "svc").prop("replicas", 3))
            .entity(RequestEntity::new("db", "table"))
            .entity(RequestEntity::new("queue", "svc"))
            .entity(RequestEntity::new("old", "svc"));
        Ask::new(request).withhold("cache", Unpredicted::new(UnpredictedReason::Filtered))
    }

    #[test]
    fn the_request_is_rendered_with_its_version() {
        let json: serde_json::Value = serde_json::from_slice(&render_request(&ask().request).unwrap()).unwrap();
        assert_eq!(json["version"], WIRE_VERSION);
        assert_eq!(json["entities"][0]["props"]["replicas"], 3);
        assert_eq!(json["traffic"]["rps"], 100.0);
    }

    #[test]
    fn an_answer_folds_into_a_report_that_accounts_for_everyone() {
        let answer = Answer {
            version: AnswerVersion::V1,
            entities: [
                ("web".to_owned(), figures(100.0)),
                ("old".to_owned(), figures(5.0)),
                ("zzz".to_owned(), figures(100.0)),
            ]
            .into(),
            unpredicted: [("db".to_owned(), Unpredicted::new(UnpredictedReason::UnsupportedKind))].into(),
        };
        let report = report_from_answer(&ask(), answer).unwrap();
        assert_eq!(report.entities().keys().collect::<Vec<_>>(), ["web"]);
        let reasons: Vec<(&str, &str)> =
            report.unpredicted().iter().map(|(n, u)| (n.as_str(), u.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [("cache", "filtered"), ("db", "unsupported-kind"), ("old", "read-failed"), ("queue", "read-failed")]
        );
        assert!(report.unpredicted()["old"].detail.as_deref().unwrap().contains("predicted at 5 rps"));
    }

    #[test]
    fn an_answer_with_a_reason_the_contract_lacks_does_not_parse() {
        let text = r#"{"version":"chant-behaviour/1","unpredicted":{"web":{"reason":"no-credentials"}}}"#;
        assert!(parse_answer(text).is_err());
        let text = r#"{"version":"chant-behaviour/2"}"#;
        assert!(parse_answer(text).is_err());
        let text = r#"{"version":"chant-behaviour/1","unpredicted":{"web":{"reason":"filtered"}}}"#;
        assert!(parse_answer(text).is_ok());
    }
}
