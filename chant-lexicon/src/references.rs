//! The reference catalog: a lexicon's declaration, as data, of how its resources refer to each
//! other, so that a graph can be rebuilt from what was observed (or declared) without any code
//! of the lexicon running.
//!
//! A live resource has no declared references; it names others by identifier, inside its
//! attributes (a table's foreign key names the table it points at). A [`ReferenceCatalog`] says
//! two things: [`identities`](ReferenceCatalog::identities), which attribute paths identify a
//! resource of each kind (every node is also identified by its own name), and
//! [`refs`](ReferenceCatalog::refs), for each kind and attribute path, that the value there names
//! a resource of a target kind, either as a [`Relation::Reference`] (a line on a graph) or a
//! [`Relation::Containment`] (a boundary: a table inside its schema). `via_attr` is the
//! provider's own name for the attribute (`confrelid`), since the label is for people.
//!
//! Paths are `a.b` (a field of an object) and `a[].b` (every element of an array); a path that
//! leads to no string yields nothing. [`values_at`] is the one resolver, pure and total: no
//! attribute value, however malformed, makes it fail.
//!
//! [`Attrs`] are what a lexicon's `enrich_live_attrs` (and `declared_attrs`) hook returns: node
//! name -> a JSON object of attributes, with references already resolved to the referenced
//! node's name, merged into the nodes before the graph is rebuilt.

use std::collections::BTreeMap;

use serde::Serialize;

/// Node name -> a JSON object of attributes, as the enrichment hooks return them.
pub type Attrs = BTreeMap<String, serde_json::Map<String, serde_json::Value>>;

/// How a reference relates its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// `from` uses `to`: an edge drawn as a line.
    Reference,
    /// `from` sits inside `to`: a boundary drawn as a box around `from`.
    Containment,
}

impl Relation {
    /// Returns the relation's word (`reference`, `containment`).
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Reference => "reference",
            Relation::Containment => "containment",
        }
    }
}

/// Which attribute paths identify a resource of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IdentityRule {
    /// The kind (`table`).
    pub kind: &'static str,
    /// Attribute paths whose values identify it, besides its name.
    pub ids: &'static [&'static str],
}

/// One reference rule: the value at `path` of a resource of kind `from` names a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefRule {
    /// The referencing kind.
    pub from: &'static str,
    /// The attribute path holding the identifier (`foreign_keys[].table`).
    pub path: &'static str,
    /// The kind the identifier must name; disambiguates identifiers shared across kinds.
    pub target_kind: &'static str,
    /// A line or a boundary.
    pub relation: Relation,
    /// The label people read (`foreign key`).
    pub label: &'static str,
    /// The provider's own name for the attribute (`confrelid`), when it has one.
    pub via_attr: Option<&'static str>,
}

/// A lexicon's reference catalog: identities and reference rules, both plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReferenceCatalog {
    /// Which attribute paths identify each kind.
    pub identities: &'static [IdentityRule],
    /// How each kind refers to others.
    pub refs: &'static [RefRule],
}

impl ReferenceCatalog {
    /// The catalog of a lexicon that declares no references: nodes, no edges.
    pub const EMPTY: ReferenceCatalog = ReferenceCatalog { identities: &[], refs: &[] };

    /// Returns the identity paths of `kind`.
    pub fn identity_paths<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'static str> + 'a {
        self.identities.iter().filter(move |i| i.kind == kind).flat_map(|i| i.ids.iter().copied())
    }

    /// Returns the rules whose referencing kind is `kind`.
    pub fn rules_from<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a RefRule> + 'a {
        self.refs.iter().filter(move |r| r.from == kind)
    }
}

/// A reference rule a lexicon marks as a meaningful chain for its dependencies: past depth one,
/// a resource reached through the rule of kind `from` labelled `label` is followed through that
/// rule again (a table a foreign key reaches, the tables its own foreign keys reach, and so on),
/// so the dependencies are the closure of the chain, not its first link only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Chain {
    /// The referencing kind of the rule (`table`).
    pub from: &'static str,
    /// The rule's label (`foreign key`).
    pub label: &'static str,
}

impl Chain {
    /// Returns true when `rule` is this chain's rule.
    pub fn follows(&self, rule: &RefRule) -> bool {
        rule.from == self.from && rule.label == self.label
    }
}

/// Returns the rules of `catalog` that `chains` marks as meaningful, in catalog order.
pub fn chained<'a>(catalog: &'a ReferenceCatalog, chains: &'a [Chain]) -> impl Iterator<Item = &'a RefRule> + 'a {
    catalog.refs.iter().filter(move |r| chains.iter().any(|c| c.follows(r)))
}

/// Returns every string at `path` in `attrs`, in order: `a.b` walks objects, `a[]` walks every
/// element of an array; numbers are rendered as text; anything else yields nothing.
pub fn values_at(attrs: &serde_json::Map<String, serde_json::Value>, path: &str) -> Vec<String> {
    let mut current: Vec<&serde_json::Value> = Vec::new();
    let mut segments = path.split('.');
    let Some(first) = segments.next() else { return Vec::new() };
    let (key, each) = split_segment(first);
    if let Some(v) = attrs.get(key) {
        push(&mut current, v, each);
    }
    for segment in segments {
        let (key, each) = split_segment(segment);
        let mut next = Vec::new();
        for v in current {
            if let Some(child) = v.as_object().and_then(|o| o.get(key)) {
                push(&mut next, child, each);
            }
        }
        current = next;
    }
    current
        .into_iter()
        .filter_map(|v| match v {
            serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

fn split_segment(segment: &str) -> (&str, bool) {
    match segment.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (segment, false),
    }
}

fn push<'a>(out: &mut Vec<&'a serde_json::Value>, value: &'a serde_json::Value, each: bool) {
    match (each, value) {
        (true, serde_json::Value::Array(items)) => out.extend(items.iter()),
        (true, _) => {}
        (false, v) => out.push(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attrs(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn paths_walk_objects_and_arrays_and_ignore_what_is_not_an_identifier() {
        let a = attrs(json!({
            "schema": "app",
            "vpc": {"id": "vpc-1"},
            "foreign_keys": [{"table": "app.a"}, {"table": "app.b"}, {"table": 7}, {"other": "x"}, "loose"],
            "empty": "",
            "flag": true,
        }));
        assert_eq!(values_at(&a, "schema"), ["app"]);
        assert_eq!(values_at(&a, "vpc.id"), ["vpc-1"]);
        assert_eq!(values_at(&a, "foreign_keys[].table"), ["app.a", "app.b", "7"]);
        assert!(values_at(&a, "foreign_keys.table").is_empty());
        assert!(values_at(&a, "schema[]").is_empty());
        assert!(values_at(&a, "empty").is_empty());
        assert!(values_at(&a, "flag").is_empty());
        assert!(values_at(&a, "missing.deeper[].x").is_empty());
        assert!(values_at(&a, "").is_empty());
    }

    #[test]
    fn the_catalog_answers_by_kind() {
        const CATALOG: ReferenceCatalog = ReferenceCatalog {
            identities: &[IdentityRule { kind: "table", ids: &["oid"] }],
            refs: &[RefRule {
                from: "table",
                path: "schema",
                target_kind: "schema",
                relation: Relation::Containment,
                label: "in schema",
                via_attr: Some("relnamespace"),
            }],
        };
        assert_eq!(CATALOG.identity_paths("table").collect::<Vec<_>>(), ["oid"]);
        assert_eq!(CATALOG.identity_paths("schema").count(), 0);
        assert_eq!(CATALOG.rules_from("table").count(), 1);
        assert_eq!(ReferenceCatalog::EMPTY.rules_from("table").count(), 0);
        assert_eq!(serde_json::to_value(CATALOG.refs[0]).unwrap()["viaAttr"], "relnamespace");
    }
}
