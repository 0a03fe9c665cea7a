//! Rebuilding edges from identifiers: pure, one lexicon's nodes and its catalog in, edges and
//! dangling references out.
//!
//! Every node is indexed by its own name and by the values at its kind's identity paths. For each
//! node and each catalog rule from its kind, every identifier at the rule's path is looked up
//! among the nodes of the rule's target kind: exactly one match is an edge; none is a
//! [`Dangling`] reference (`not-observed`); several are `ambiguous`. Neither of the last two is
//! ever drawn, so a graph shows no edge the estate does not have.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::Node;
use chant_lexicon::references::{ReferenceCatalog, Relation, values_at};

/// An edge between two nodes of the graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphEdge {
    /// The referencing node's id.
    pub from: String,
    /// The referenced (or containing) node's id.
    pub to: String,
    /// A line or a boundary.
    pub relation: Relation,
    /// The rule's label.
    pub label: String,
    /// The provider's attribute the rule reads, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via_attr: Option<String>,
}

/// Why a reference has no edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DanglingReason {
    /// No observed node of the target kind answers to the identifier.
    NotObserved,
    /// Several do, so no one of them can be drawn.
    Ambiguous,
}

impl DanglingReason {
    /// Returns the reason's code.
    pub fn as_str(self) -> &'static str {
        match self {
            DanglingReason::NotObserved => "not-observed",
            DanglingReason::Ambiguous => "ambiguous",
        }
    }
}

/// A reference the graph does not draw.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dangling {
    /// The referencing node's id.
    pub from: String,
    /// The identifier it holds.
    pub target: String,
    /// The kind the identifier should name.
    pub target_kind: String,
    /// A line or a boundary.
    pub relation: Relation,
    /// The rule's label.
    pub label: String,
    /// The attribute path the identifier was read at.
    pub path: String,
    /// Why it is not drawn.
    pub reason: DanglingReason,
}

/// Rebuilds the edges between `nodes` (of one lexicon) through `catalog`.
pub fn reconstruct(nodes: &[Node], catalog: &ReferenceCatalog) -> (Vec<GraphEdge>, Vec<Dangling>) {
    // identifier -> indexes of the nodes answering to it.
    let mut index: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, node) in nodes.iter().enumerate() {
        index.entry(node.name.clone()).or_default().insert(i);
        let Some(kind) = node.kind.as_deref() else { continue };
        for path in catalog.identity_paths(kind) {
            for value in values_at(&node.attrs, path) {
                index.entry(value).or_default().insert(i);
            }
        }
    }
    let mut edges = BTreeSet::new();
    let mut dangling = BTreeSet::new();
    for node in nodes {
        let Some(kind) = node.kind.as_deref() else { continue };
        for rule in catalog.rules_from(kind) {
            for target in values_at(&node.attrs, rule.path) {
                let matches: Vec<&Node> = index
                    .get(&target)
                    .into_iter()
                    .flatten()
                    .map(|&i| &nodes[i])
                    .filter(|n| n.kind.as_deref() == Some(rule.target_kind))
                    .collect();
                match matches.as_slice() {
                    [one] => {
                        edges.insert(GraphEdge {
                            from: node.id.clone(),
                            to: one.id.clone(),
                            relation: rule.relation,
                            label: rule.label.to_owned(),
                            via_attr: rule.via_attr.map(str::to_owned),
                        });
                    }
                    found => {
                        dangling.insert(Dangling {
                            from: node.id.clone(),
                            target,
                            target_kind: rule.target_kind.to_owned(),
                            relation: rule.relation,
                            label: rule.label.to_owned(),
                            path: rule.path.to_owned(),
                            reason: if found.is_empty() {
                                DanglingReason::NotObserved
                            } else {
                                DanglingReason::Ambiguous
                            },
                        });
                    }
                }
            }
        }
    }
    (edges.into_iter().collect(), dangling.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lexicon::references::{IdentityRule, RefRule};
    use serde_json::json;

    const CATALOG: ReferenceCatalog = ReferenceCatalog {
        identities: &[IdentityRule { kind: "net", ids: &["net_id"] }],
        refs: &[
            RefRule {
                from: "subnet",
                path: "net",
                target_kind: "net",
                relation: Relation::Containment,
                label: "in net",
                via_attr: Some("VpcId"),
            },
            RefRule {
                from: "vm",
                path: "uses[]",
                target_kind: "subnet",
                relation: Relation::Reference,
                label: "uses",
                via_attr: None,
            },
        ],
    };

    fn node(name: &str, kind: &str, attrs: serde_json::Value) -> Node {
        let mut n = Node::new("x", name, Some(kind.to_owned()), BTreeMap::new());
        n.attrs = attrs.as_object().unwrap().clone();
        n
    }

    #[test]
    fn identifiers_become_edges_only_when_exactly_one_node_of_the_target_kind_answers() {
        let nodes = vec![
            node("n1", "net", json!({"net_id": "vpc-1"})),
            node("s1", "subnet", json!({"net": "vpc-1"})),
            node("s2", "subnet", json!({"net": "vpc-9"})),
            // `s1` is also the name of a vm's disk; the kind disambiguates.
            node("vm", "vm", json!({"uses": ["s1", "s2", "gone"]})),
            node("dup-a", "subnet", json!({"net": "n1", "subnet_alias": "x"})),
        ];
        let (edges, dangling) = reconstruct(&nodes, &CATALOG);
        let drawn: Vec<(&str, &str, Relation)> =
            edges.iter().map(|e| (e.from.as_str(), e.to.as_str(), e.relation)).collect();
        assert_eq!(
            drawn,
            [
                ("x:dup-a", "x:n1", Relation::Containment),
                ("x:s1", "x:n1", Relation::Containment),
                ("x:vm", "x:s1", Relation::Reference),
                ("x:vm", "x:s2", Relation::Reference),
            ]
        );
        assert_eq!(edges[1].via_attr.as_deref(), Some("VpcId"));
        let missing: Vec<(&str, &str, DanglingReason)> =
            dangling.iter().map(|d| (d.from.as_str(), d.target.as_str(), d.reason)).collect();
        assert_eq!(
            missing,
            [("x:s2", "vpc-9", DanglingReason::NotObserved), ("x:vm", "gone", DanglingReason::NotObserved)]
        );
    }

    #[test]
    fn an_identifier_two_nodes_answer_to_is_ambiguous_never_an_edge() {
        let nodes = vec![
            node("a", "net", json!({"net_id": "shared"})),
            node("b", "net", json!({"net_id": "shared"})),
            node("s", "subnet", json!({"net": "shared"})),
        ];
        let (edges, dangling) = reconstruct(&nodes, &CATALOG);
        assert!(edges.is_empty(), "{edges:?}");
        assert_eq!(dangling.len(), 1);
        assert_eq!(dangling[0].reason, DanglingReason::Ambiguous);
        assert_eq!(dangling[0].reason.as_str(), "ambiguous");
    }

    #[test]
    fn a_node_without_a_kind_or_rules_draws_nothing() {
        let mut loose = Node::new("x", "loose", None, BTreeMap::new());
        loose.attrs.insert("net".into(), json!("n"));
        let nodes = vec![loose, node("n", "net", json!({}))];
        let (edges, dangling) = reconstruct(&nodes, &CATALOG);
        assert!(edges.is_empty() && dangling.is_empty());
        let (edges, _) = reconstruct(&nodes, &ReferenceCatalog::EMPTY);
        assert!(edges.is_empty());
    }
}
