//! Behaviour requests built from an env's estate: one [`Ask`] per lexicon, from a
//! [`Graph`] of the declaration or of what was observed.
//!
//! Each node becomes an entity (its name, its kind, its properties as they were declared or
//! observed); the graph's edges between nodes of the lexicon become the request's edges, and
//! only when the graph computed them: a lexicon without a reference catalog, or whose live
//! enrichment failed, sends `edges` absent, never an empty list. An entity the live read could
//! not observe is asked about and withheld, with the verdict the contract allows
//! ([`withheld_reason`]), so the report still accounts for it. The properties are sent as they
//! are, so the screen ([`super::screen`]) sees exactly what would travel: a DSN in a column
//! default refuses the whole request before any engine is named.

use std::collections::BTreeMap;

use super::report::{Unpredicted, UnpredictedReason};
use super::request::{Ask, Edge, EdgeRelation, Request, RequestEntity, TrafficLevel};
use crate::graph::Graph;
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::references::Relation;

/// The verdict of an entity the live read did not observe. The behaviour contract has no
/// `no-credentials` (a prediction is handed no credential to miss), so an entity whose read had
/// none is `no-binding`: the environment resolved to nothing chant could read, which the detail
/// says in full.
pub fn withheld_reason(reason: UnobservedReason) -> UnpredictedReason {
    match reason {
        UnobservedReason::ReadFailed => UnpredictedReason::ReadFailed,
        UnobservedReason::UnsupportedKind => UnpredictedReason::UnsupportedKind,
        UnobservedReason::Filtered => UnpredictedReason::Filtered,
        UnobservedReason::NoBinding | UnobservedReason::NoCredentials => UnpredictedReason::NoBinding,
    }
}

/// Builds one ask per lexicon of `graph`, at `traffic`, asking for a verdict under `failure`
/// when one is named. Lexicons are in the graph's order; one with nothing to ask is left out.
pub fn asks_from_graph(graph: &Graph, traffic: TrafficLevel, failure: Option<&str>) -> Vec<Ask> {
    let mut out = Vec::new();
    for lexicon in &graph.lexicons {
        let mut request = Request::new(lexicon.name.clone(), traffic);
        if let Some(failure) = failure {
            request = request.failure(failure);
        }
        let mut names: BTreeMap<&str, &str> = BTreeMap::new();
        for node in graph.nodes.iter().filter(|n| n.lexicon == lexicon.name) {
            names.insert(node.id.as_str(), node.name.as_str());
            let mut entity =
                RequestEntity::new(node.name.clone(), node.kind.clone().unwrap_or_else(|| lexicon.name.clone()));
            for (key, value) in &node.properties {
                entity = entity.prop(key.clone(), value.clone());
            }
            request = request.entity(entity);
        }
        if lexicon.edges_computed {
            let edges = graph
                .edges
                .iter()
                .filter_map(|e| {
                    let (from, to) = (names.get(e.from.as_str())?, names.get(e.to.as_str())?);
                    let relation = match e.relation {
                        Relation::Reference => EdgeRelation::Reference,
                        Relation::Containment => EdgeRelation::Containment,
                    };
                    Some(Edge { from: (*from).to_owned(), to: (*to).to_owned(), relation })
                })
                .collect();
            request = request.edges(edges);
        }
        let mut ask = Ask::new(request);
        for u in graph.unobserved.iter().filter(|u| u.lexicon == lexicon.name) {
            if names.values().any(|n| *n == u.name) {
                continue;
            }
            let detail = match &u.detail {
                Some(d) => format!("not observed ({}): {d}", u.reason.as_str()),
                None => format!("not observed ({})", u.reason.as_str()),
            };
            ask = ask.withhold(u.name.clone(), Unpredicted::new(withheld_reason(u.reason)).detail(detail));
        }
        if !ask.request.entities.is_empty() || !ask.withheld.is_empty() {
            out.push(ask);
        }
    }
    out
}

/// Returns the entity a screen's JSON pointer (`/entities/3/props/default`) points into, and the
/// property, for a message that names them.
pub fn pointed_entity<'a>(request: &'a Request, pointer: &'a str) -> Option<(&'a str, Option<&'a str>)> {
    let mut parts = pointer.trim_start_matches('/').split('/');
    if parts.next()? != "entities" {
        return None;
    }
    let index: usize = parts.next()?.parse().ok()?;
    let entity = request.entities.get(index)?;
    let property = match parts.next() {
        Some("props") => parts.next(),
        _ => None,
    };
    Some((entity.name.as_str(), property))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphEdge, LexiconGraph, Node, Source, UnobservedNode};

    fn graph(edges_computed: bool) -> Graph {
        let props = |k: &str, v: &str| [(k.to_owned(), v.to_owned())].into_iter().collect();
        Graph {
            version: 1,
            env: "prod".into(),
            source: Source::Live,
            lexicons: vec![LexiconGraph { name: "pg".into(), catalog: true, edges_computed, note: None }],
            nodes: vec![
                Node::new("pg", "app.a", Some("table".into()), props("comment", "A")),
                Node::new("pg", "app.b", Some("table".into()), BTreeMap::new()),
            ],
            edges: vec![GraphEdge {
                from: "pg:app.a".into(),
                to: "pg:app.b".into(),
                relation: Relation::Reference,
                label: "foreign key".into(),
                via_attr: None,
            }],
            dangling: Vec::new(),
            unobserved: vec![UnobservedNode {
                lexicon: "pg".into(),
                name: "app.c".into(),
                reason: UnobservedReason::NoCredentials,
                detail: Some("password rejected".into()),
            }],
        }
    }

    #[test]
    fn nodes_become_entities_and_edges_are_sent_only_when_computed() {
        let traffic = TrafficLevel::rps(50.0).unwrap();
        let asks = asks_from_graph(&graph(true), traffic, Some("one zone lost"));
        assert_eq!(asks.len(), 1);
        let ask = &asks[0];
        assert_eq!(ask.request.lexicon, "pg");
        assert_eq!(ask.request.failure.as_deref(), Some("one zone lost"));
        assert_eq!(ask.request.entities[0].props["comment"], "A");
        assert_eq!(ask.request.edges, Some(vec![Edge::reference("app.a", "app.b")]));
        assert_eq!(ask.withheld["app.c"].reason, UnpredictedReason::NoBinding);
        assert!(ask.withheld["app.c"].detail.as_deref().unwrap().contains("no-credentials"));
        ask.validate().unwrap();
        let asks = asks_from_graph(&graph(false), traffic, None);
        assert_eq!(asks[0].request.edges, None, "edges not computed are absent, never empty");
    }

    #[test]
    fn a_screen_pointer_names_the_entity_and_property() {
        let asks = asks_from_graph(&graph(true), TrafficLevel::rps(1.0).unwrap(), None);
        let request = &asks[0].request;
        assert_eq!(pointed_entity(request, "/entities/0/props/comment"), Some(("app.a", Some("comment"))));
        assert_eq!(pointed_entity(request, "/entities/1"), Some(("app.b", None)));
        assert_eq!(pointed_entity(request, "/entities/9/props/x"), None);
        assert_eq!(pointed_entity(request, "/traffic"), None);
    }
}
