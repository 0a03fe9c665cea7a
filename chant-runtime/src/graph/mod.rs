//! The estate as a graph: nodes from what an env observes (or declares), edges rebuilt from
//! identifiers through each lexicon's [reference catalog](chant_lexicon::references).
//!
//! The live graph's nodes are the resources each lexicon's describe returned present; entities
//! it could not observe are listed as such, never drawn. Each lexicon's enrichment hook
//! (`enrich_live_attrs`) adds the reference attributes a thin describe does not carry, and
//! [`reconstruct()`] turns every identifier a catalog rule finds into an edge when exactly one
//! node of the target kind answers to it. An identifier no node answers to is [`Dangling`]
//! (`not-observed`), one that several answer to is `ambiguous`: listed, never drawn as an edge,
//! because a wrong edge is worse than a missing one. The declared graph is built the same way
//! from the declared entities and the `declared_attrs` hook, so the two can be set side by side.
//!
//! [`LexiconGraph::edges_computed`] says whether a lexicon's edges mean anything: a lexicon with
//! no catalog, or whose enrichment failed, has nodes and no computed edges, which a behaviour
//! request must send as "not computed", never as an empty list. [`render`] draws a graph as
//! Graphviz DOT, Mermaid or text; containment is drawn as boxes (DOT clusters, Mermaid
//! subgraphs), references as arrows.

pub mod reconstruct;
pub mod render;

use std::collections::BTreeMap;

use serde::Serialize;

pub use self::reconstruct::{Dangling, DanglingReason, GraphEdge, reconstruct};
pub use self::render::{render_dot, render_mermaid, render_text};
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::{LexiconError, observe_component};
use chant_lexicon::references::{Attrs, ReferenceCatalog, Relation};
use chant_lexicon::{BoundLexicon, HookError};

/// The errors of building a graph: only a declaration that cannot be listed. Everything about
/// the substrate is in the graph itself (unobserved entities, notes).
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A lexicon's declared entities cannot be listed.
    #[error("cannot list the entities {lexicon} declares")]
    Declaration {
        /// The lexicon.
        lexicon: String,
        /// Why.
        #[source]
        source: LexiconError,
    },
}

/// Where a graph's nodes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The resources the env's lexicons observed.
    Live,
    /// The entities the env declares.
    Declared,
}

impl Source {
    /// Returns the source's word (`live`, `declared`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Live => "live",
            Source::Declared => "declared",
        }
    }
}

/// One node: a resource of one lexicon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// The node's id in the graph: `<lexicon>:<name>`.
    pub id: String,
    /// The lexicon.
    pub lexicon: String,
    /// The resource's name in its lexicon.
    pub name: String,
    /// Its kind, when the lexicon has more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The observed (or declared) properties.
    pub properties: BTreeMap<String, String>,
    /// The attributes references are read from: the properties, then the enrichment on top.
    #[serde(skip)]
    pub attrs: serde_json::Map<String, serde_json::Value>,
}

impl Node {
    /// Creates a node of `lexicon` named `name`, its attributes its properties.
    pub fn new(lexicon: &str, name: &str, kind: Option<String>, properties: BTreeMap<String, String>) -> Self {
        let attrs = properties.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
        Node { id: node_id(lexicon, name), lexicon: lexicon.to_owned(), name: name.to_owned(), kind, properties, attrs }
    }
}

/// Returns the graph id of `name` in `lexicon`.
pub fn node_id(lexicon: &str, name: &str) -> String {
    format!("{lexicon}:{name}")
}

/// An entity the live graph has no node for, because it was not observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnobservedNode {
    /// The lexicon.
    pub lexicon: String,
    /// The entity.
    pub name: String,
    /// Why it was not observed.
    pub reason: UnobservedReason,
    /// What went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What the graph knows of one lexicon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LexiconGraph {
    /// The lexicon.
    pub name: String,
    /// Whether it declares a reference catalog.
    pub catalog: bool,
    /// Whether its edges were computed: a catalog, and (live) an enrichment that did not fail.
    pub edges_computed: bool,
    /// Why not, when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// An env's graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    /// The document's version.
    pub version: u32,
    /// The env.
    pub env: String,
    /// Live or declared.
    pub source: Source,
    /// Per lexicon, whether its edges were computed.
    pub lexicons: Vec<LexiconGraph>,
    /// The nodes, by lexicon then name.
    pub nodes: Vec<Node>,
    /// The edges, references and containments, sorted.
    pub edges: Vec<GraphEdge>,
    /// The references no single node answers to.
    pub dangling: Vec<Dangling>,
    /// The entities not observed (live only).
    pub unobserved: Vec<UnobservedNode>,
}

impl Graph {
    /// Returns the node with id `id`.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// Returns the edges of one relation.
    pub fn edges_of(&self, relation: Relation) -> impl Iterator<Item = &GraphEdge> + '_ {
        self.edges.iter().filter(move |e| e.relation == relation)
    }

    /// Returns the lexicon's entry.
    pub fn lexicon(&self, name: &str) -> Option<&LexiconGraph> {
        self.lexicons.iter().find(|l| l.name == name)
    }
}

/// The nodes and catalog of one lexicon, before edges are rebuilt.
struct Part {
    entry: LexiconGraph,
    nodes: Vec<Node>,
    catalog: Option<&'static ReferenceCatalog>,
}

fn merge(nodes: &mut [Node], attrs: Attrs) {
    let mut attrs = attrs;
    for node in nodes {
        if let Some(extra) = attrs.remove(&node.name) {
            node.attrs.extend(extra);
        }
    }
}

fn assemble(env: &str, source: Source, parts: Vec<Part>, unobserved: Vec<UnobservedNode>) -> Graph {
    let mut graph = Graph {
        version: 1,
        env: env.to_owned(),
        source,
        lexicons: Vec::new(),
        nodes: Vec::new(),
        edges: Vec::new(),
        dangling: Vec::new(),
        unobserved,
    };
    for part in parts {
        if let (Some(catalog), true) = (part.catalog, part.entry.edges_computed) {
            let (edges, dangling) = reconstruct(&part.nodes, catalog);
            graph.edges.extend(edges);
            graph.dangling.extend(dangling);
        }
        graph.nodes.extend(part.nodes);
        graph.lexicons.push(part.entry);
    }
    graph.nodes.sort_by(|a, b| a.id.cmp(&b.id));
    graph.edges.sort();
    graph.dangling.sort();
    graph
}

fn entry(lexicon: &BoundLexicon) -> LexiconGraph {
    let catalog = lexicon.reference_catalog().is_some();
    LexiconGraph {
        name: lexicon.name().to_owned(),
        catalog,
        edges_computed: catalog,
        note: (!catalog).then(|| "the lexicon declares no reference catalog".to_owned()),
    }
}

/// Builds the live graph of `env` from its bound lexicons: describe for the nodes, the
/// enrichment hook for the reference attributes, the catalog for the edges.
///
/// # Errors
///
/// [`GraphError::Declaration`] when a lexicon cannot list its declared entities.
pub fn live(env: &str, lexicons: &[BoundLexicon]) -> Result<Graph, GraphError> {
    let mut parts = Vec::new();
    let mut unobserved = Vec::new();
    for lexicon in lexicons {
        let declared = lexicon
            .declared_entities()
            .map_err(|source| GraphError::Declaration { lexicon: lexicon.name().to_owned(), source })?;
        let observation = observe_component(lexicon.lexicon(), &declared);
        let mut nodes: Vec<Node> = observation
            .resources
            .iter()
            .map(|(name, r)| {
                Node::new(lexicon.name(), name, r.kind.as_deref().map(str::to_owned), r.properties.clone().into())
            })
            .collect();
        unobserved.extend(observation.unobserved.iter().map(|(name, u)| UnobservedNode {
            lexicon: lexicon.name().to_owned(),
            name: name.clone(),
            reason: u.reason,
            detail: u.detail.clone(),
        }));
        let mut entry = entry(lexicon);
        if entry.catalog {
            match lexicon.enrich_live_attrs() {
                Ok(attrs) => merge(&mut nodes, attrs),
                Err(e @ HookError::NotImplemented { .. }) => drop(e),
                Err(e) => {
                    entry.edges_computed = false;
                    entry.note = Some(format!("edges not computed: {}", chant_store::error::chain(&e)));
                }
            }
        }
        parts.push(Part { entry, nodes, catalog: lexicon.reference_catalog() });
    }
    Ok(assemble(env, Source::Live, parts, unobserved))
}

/// Builds the declared graph of `env`: the declared entities as nodes, the `declared_attrs` hook
/// for their reference attributes, the catalog for the edges.
///
/// # Errors
///
/// [`GraphError::Declaration`] when a lexicon cannot list its declared entities.
pub fn declared(env: &str, lexicons: &[BoundLexicon]) -> Result<Graph, GraphError> {
    let mut parts = Vec::new();
    for lexicon in lexicons {
        let declared = lexicon
            .declared_entities()
            .map_err(|source| GraphError::Declaration { lexicon: lexicon.name().to_owned(), source })?;
        let mut nodes: Vec<Node> = declared
            .iter()
            .map(|e| {
                Node::new(lexicon.name(), &e.name, e.kind.as_deref().map(str::to_owned), e.properties.clone().into())
            })
            .collect();
        let mut entry = entry(lexicon);
        if entry.catalog {
            match lexicon.declared_attrs() {
                Ok(attrs) => merge(&mut nodes, attrs),
                Err(e @ HookError::NotImplemented { .. }) => drop(e),
                Err(e) => {
                    entry.edges_computed = false;
                    entry.note = Some(format!("edges not computed: {}", chant_store::error::chain(&e)));
                }
            }
        }
        parts.push(Part { entry, nodes, catalog: lexicon.reference_catalog() });
    }
    Ok(assemble(env, Source::Declared, parts, Vec::new()))
}
