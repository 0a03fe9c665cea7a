//! A behaviour request: what a lexicon hands an engine to predict, which is the declared entities,
//! optionally the edges between them, and the traffic level the caller names, and nothing else.
//!
//! The typed part has no field that could hold a credential: an entity is a name, a kind and its
//! declared properties, an edge is two names and a relation, the traffic level is a number. The
//! properties are JSON straight out of the declaration, which no type can see into, so
//! [`crate::behaviour::screen`] walks the whole request before it is sent. `edges` is either
//! absent (not computed) or a claim: an empty list says the entities reference nothing of each
//! other, so never pass one for edges you have not computed.
//!
//! An [`Ask`] is the request plus the entities the lexicon asked about but did not send (no
//! binding, filtered, ...), each with its [`Unpredicted`] verdict: the report must account for
//! every asked entity, sent or withheld, exactly once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::report::Unpredicted;

/// The errors of building or validating a request. Returned by [`TrafficLevel::rps`] and
/// [`Ask::validate`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// A traffic level that is not a finite, non-negative number of requests per second.
    #[error("invalid traffic level {0}: a level is a finite, non-negative number of requests per second")]
    Traffic(String),
    /// Two entities (sent or withheld) share a name.
    #[error("entity {0} is asked about twice: every entity name in a behaviour request is unique")]
    Duplicate(String),
    /// An entity with an empty name.
    #[error("an entity has an empty name")]
    EmptyName,
    /// An edge names an entity the request does not carry.
    #[error("edge {from} -> {to} names {missing}, which the request does not carry")]
    DanglingEdge {
        /// The edge's source.
        from: String,
        /// The edge's target.
        to: String,
        /// The endpoint that is not in the request.
        missing: String,
    },
}

/// A traffic level, in requests per second: the world a prediction is made for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TrafficRepr", into = "TrafficRepr")]
pub struct TrafficLevel {
    rps: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrafficRepr {
    rps: f64,
}

impl TryFrom<TrafficRepr> for TrafficLevel {
    type Error = RequestError;
    fn try_from(repr: TrafficRepr) -> Result<Self, RequestError> {
        TrafficLevel::rps(repr.rps)
    }
}

impl From<TrafficLevel> for TrafficRepr {
    fn from(level: TrafficLevel) -> Self {
        TrafficRepr { rps: level.rps }
    }
}

impl TrafficLevel {
    /// Creates a level of `rps` requests per second.
    ///
    /// # Errors
    ///
    /// [`RequestError::Traffic`] for a negative, infinite or NaN level.
    pub fn rps(rps: f64) -> Result<Self, RequestError> {
        if rps.is_finite() && rps >= 0.0 {
            Ok(TrafficLevel { rps })
        } else {
            Err(RequestError::Traffic(rps.to_string()))
        }
    }

    /// Returns the level in requests per second.
    pub fn requests_per_second(self) -> f64 {
        self.rps
    }
}

impl fmt::Display for TrafficLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rps", self.rps)
    }
}

/// One declared entity as the engine sees it: a name, a kind and the declared properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestEntity {
    /// The entity's name, unique in the request.
    pub name: String,
    /// Its kind (`file`, `table`).
    pub kind: String,
    /// The declared properties, as JSON. Screened before sending; never put a credential here.
    #[serde(default)]
    pub props: serde_json::Map<String, serde_json::Value>,
}

impl RequestEntity {
    /// Creates an entity with no properties.
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        RequestEntity { name: name.into(), kind: kind.into(), props: serde_json::Map::new() }
    }

    /// Adds one declared property.
    #[must_use]
    pub fn prop(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.props.insert(key.into(), value.into());
        self
    }
}

/// How one entity relates to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeRelation {
    /// `from` uses `to` (a line on a graph; traffic flows along it).
    Reference,
    /// `from` sits inside `to` (a subnet in a network).
    Containment,
}

/// An edge between two entities of the request, built from declared references.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// The referencing entity.
    pub from: String,
    /// The referenced entity.
    pub to: String,
    /// How they relate.
    pub relation: EdgeRelation,
}

impl Edge {
    /// Creates a reference edge `from -> to`.
    pub fn reference(from: impl Into<String>, to: impl Into<String>) -> Self {
        Edge { from: from.into(), to: to.into(), relation: EdgeRelation::Reference }
    }
}

/// What an engine is handed: the entities, the edges when computed, and the traffic level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The lexicon asking.
    pub lexicon: String,
    /// The entities to predict.
    pub entities: Vec<RequestEntity>,
    /// The edges between them: `None` when not computed; an empty list is a claim that the
    /// entities reference nothing of each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<Vec<Edge>>,
    /// The level the prediction is for.
    pub traffic: TrafficLevel,
    /// The failure a resilience verdict is asked for (`one zone lost`), when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl Request {
    /// Creates a request with no entities and edges not computed.
    pub fn new(lexicon: impl Into<String>, traffic: TrafficLevel) -> Self {
        Request { lexicon: lexicon.into(), entities: Vec::new(), edges: None, traffic, failure: None }
    }

    /// Adds an entity.
    #[must_use]
    pub fn entity(mut self, entity: RequestEntity) -> Self {
        self.entities.push(entity);
        self
    }

    /// Sets the computed edges (an empty list claims there are none).
    #[must_use]
    pub fn edges(mut self, edges: Vec<Edge>) -> Self {
        self.edges = Some(edges);
        self
    }

    /// Asks for a resilience verdict under the named failure.
    #[must_use]
    pub fn failure(mut self, failure: impl Into<String>) -> Self {
        self.failure = Some(failure.into());
        self
    }
}

/// A request plus the entities asked about but withheld from the engine, each with its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    /// What is sent to the engine.
    pub request: Request,
    /// Asked about but not sent, by name.
    pub withheld: BTreeMap<String, Unpredicted>,
}

impl Ask {
    /// Creates an ask that withholds nothing.
    pub fn new(request: Request) -> Self {
        Ask { request, withheld: BTreeMap::new() }
    }

    /// Withholds an entity from the engine with the given verdict.
    #[must_use]
    pub fn withhold(mut self, name: impl Into<String>, verdict: Unpredicted) -> Self {
        self.withheld.insert(name.into(), verdict);
        self
    }

    /// Returns every asked name, sent or withheld, sorted.
    pub fn asked(&self) -> BTreeSet<&str> {
        self.request.entities.iter().map(|e| e.name.as_str()).chain(self.withheld.keys().map(String::as_str)).collect()
    }

    /// Checks that every name is non-empty and unique across sent and withheld entities, and that
    /// every edge joins two sent entities.
    ///
    /// # Errors
    ///
    /// The first problem found, as a [`RequestError`].
    pub fn validate(&self) -> Result<(), RequestError> {
        let mut seen = BTreeSet::new();
        let names =
            self.request.entities.iter().map(|e| e.name.as_str()).chain(self.withheld.keys().map(String::as_str));
        for name in names {
            if name.is_empty() {
                return Err(RequestError::EmptyName);
            }
            if !seen.insert(name) {
                return Err(RequestError::Duplicate(name.to_owned()));
            }
        }
        let sent: BTreeSet<&str> = self.request.entities.iter().map(|e| e.name.as_str()).collect();
        for edge in self.request.edges.iter().flatten() {
            for end in [&edge.from, &edge.to] {
                if !sent.contains(end.as_str()) {
                    return Err(RequestError::DanglingEdge {
                        from: edge.from.clone(),
                        to: edge.to.clone(),
                        missing: end.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::report::UnpredictedReason;

    fn level() -> TrafficLevel {
        TrafficLevel::rps(100.0).unwrap()
    }

    #[test]
    fn a_traffic_level_is_finite_and_non_negative() {
        assert!(TrafficLevel::rps(-1.0).is_err());
        assert!(TrafficLevel::rps(f64::NAN).is_err());
        assert!(TrafficLevel::rps(f64::INFINITY).is_err());
        assert_eq!(level().to_string(), "100 rps");
        assert!(serde_json::from_str::<TrafficLevel>(r#"{"rps": -5}"#).is_err());
        assert_eq!(serde_json::from_str::<TrafficLevel>(r#"{"rps": 100}"#).unwrap(), level());
    }

    #[test]
    fn edges_absent_and_edges_empty_are_different_claims() {
        let absent = Request::new("acme", level());
        let empty = Request::new("acme", level()).edges(Vec::new());
        let a = serde_json::to_value(&absent).unwrap();
        let e = serde_json::to_value(&empty).unwrap();
        assert!(a.get("edges").is_none());
        assert_eq!(e["edges"], serde_json::json!([]));
        assert_eq!(serde_json::from_value::<Request>(a).unwrap().edges, None);
        assert_eq!(serde_json::from_value::<Request>(e).unwrap().edges, Some(Vec::new()));
    }

    #[test]
    fn a_failure_is_sent_only_when_asked_for() {
        let plain = serde_json::to_value(Request::new("acme", level())).unwrap();
        assert!(plain.get("failure").is_none());
        let asked = Request::new("acme", level()).failure("one zone lost");
        let json = serde_json::to_value(&asked).unwrap();
        assert_eq!(json["failure"], "one zone lost");
        assert_eq!(serde_json::from_value::<Request>(json).unwrap(), asked);
    }

    #[test]
    fn the_typed_part_refuses_unknown_fields() {
        let json = r#"{"lexicon":"acme","entities":[],"traffic":{"rps":1},"token":"x"}"#;
        assert!(serde_json::from_str::<Request>(json).is_err());
    }

    #[test]
    fn validation_catches_duplicates_across_sent_and_withheld_and_dangling_edges() {
        let request = Request::new("acme", level()).entity(RequestEntity::new("web", "svc"));
        let ask = Ask::new(request.clone()).withhold("web", Unpredicted::new(UnpredictedReason::Filtered));
        assert_eq!(ask.validate(), Err(RequestError::Duplicate("web".into())));
        let ask = Ask::new(request.clone().edges(vec![Edge::reference("web", "db")]));
        assert!(matches!(ask.validate(), Err(RequestError::DanglingEdge { missing, .. }) if missing == "db"));
        let ask = Ask::new(request).withhold("db", Unpredicted::new(UnpredictedReason::NoBinding));
        assert_eq!(ask.validate(), Ok(()));
        assert_eq!(ask.asked().into_iter().collect::<Vec<_>>(), ["db", "web"]);
    }
}
