//! Drawing a graph: Graphviz DOT, Mermaid, and text for a terminal.
//!
//! Containment is drawn as boxes: a node that contains others becomes a DOT cluster (a Mermaid
//! subgraph) holding its own node, so references can still point at it, and its members; a node
//! contained in two places is drawn in the first and the second containment is kept in the JSON
//! only. A containment cycle is broken, never followed. References are arrows labelled with the
//! catalog's label. Dangling references are listed as comments (`// dangling: ...`, `%%
//! dangling: ...`), never drawn, since there is no node to point at. Every label is escaped for
//! its format, whatever a resource is called.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{Graph, Node};
use chant_lexicon::references::Relation;

/// The containment tree: each node's chosen parent, cycles broken.
fn parents(graph: &Graph) -> BTreeMap<&str, &str> {
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    for edge in graph.edges_of(Relation::Containment) {
        if edge.from != edge.to {
            parent.entry(edge.from.as_str()).or_insert(edge.to.as_str());
        }
    }
    let ids: Vec<&str> = parent.keys().copied().collect();
    for id in ids {
        let mut seen = BTreeSet::from([id]);
        let mut at = id;
        while let Some(&up) = parent.get(at) {
            if !seen.insert(up) {
                parent.remove(id);
                break;
            }
            at = up;
        }
    }
    parent
}

fn children<'a>(graph: &'a Graph, parent: &BTreeMap<&'a str, &'a str>) -> BTreeMap<&'a str, Vec<&'a Node>> {
    let mut out: BTreeMap<&str, Vec<&Node>> = BTreeMap::new();
    for node in &graph.nodes {
        if let Some(&p) = parent.get(node.id.as_str()) {
            out.entry(p).or_default().push(node);
        }
    }
    out
}

fn label(node: &Node) -> String {
    match &node.kind {
        Some(kind) => format!("{}\n({kind})", node.name),
        None => node.name.clone(),
    }
}

fn dot_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn comment_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Renders the graph as Graphviz DOT.
pub fn render_dot(graph: &Graph) -> String {
    let parent = parents(graph);
    let kids = children(graph, &parent);
    let mut out = String::new();
    let title = format!("chant graph {} ({})", graph.env, graph.source.as_str());
    let _ = writeln!(out, "digraph {} {{", dot_quote(&title));
    out.push_str("  rankdir=LR;\n  node [shape=box];\n");
    let mut cluster = 0usize;
    for node in graph.nodes.iter().filter(|n| !parent.contains_key(n.id.as_str())) {
        dot_node(&mut out, node, &kids, &mut cluster, 1);
    }
    for edge in graph.edges_of(Relation::Reference) {
        let _ =
            writeln!(out, "  {} -> {} [label={}];", dot_quote(&edge.from), dot_quote(&edge.to), dot_quote(&edge.label));
    }
    for d in &graph.dangling {
        let _ = writeln!(
            out,
            "  // dangling: {} {} {} ({}, {})",
            comment_safe(&d.from),
            comment_safe(&d.label),
            comment_safe(&d.target),
            d.target_kind,
            d.reason.as_str()
        );
    }
    out.push_str("}\n");
    out
}

fn dot_node(out: &mut String, node: &Node, kids: &BTreeMap<&str, Vec<&Node>>, cluster: &mut usize, depth: usize) {
    let pad = "  ".repeat(depth);
    match kids.get(node.id.as_str()) {
        None => {
            let _ = writeln!(out, "{pad}{} [label={}];", dot_quote(&node.id), dot_quote(&label(node)));
        }
        Some(members) => {
            let _ = writeln!(out, "{pad}subgraph cluster_{cluster} {{");
            *cluster += 1;
            let _ = writeln!(out, "{pad}  label={};", dot_quote(&label(node)));
            let _ = writeln!(out, "{pad}  {} [label={}, style=bold];", dot_quote(&node.id), dot_quote(&label(node)));
            for member in members {
                dot_node(out, member, kids, cluster, depth + 1);
            }
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

fn mermaid_text(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '\n' => out.push_str("<br/>"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Renders the graph as a Mermaid flowchart. Node ids are `n<index>`, so no resource name can
/// break the syntax; the names are in the labels.
pub fn render_mermaid(graph: &Graph) -> String {
    let parent = parents(graph);
    let kids = children(graph, &parent);
    let ids: BTreeMap<&str, String> =
        graph.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), format!("n{i}"))).collect();
    let mut out = String::from("flowchart LR\n");
    for node in graph.nodes.iter().filter(|n| !parent.contains_key(n.id.as_str())) {
        mermaid_node(&mut out, node, &kids, &ids, 1);
    }
    for edge in graph.edges_of(Relation::Reference) {
        if let (Some(from), Some(to)) = (ids.get(edge.from.as_str()), ids.get(edge.to.as_str())) {
            let _ = writeln!(out, "  {from} -->|\"{}\"| {to}", mermaid_text(&edge.label));
        }
    }
    for d in &graph.dangling {
        let _ = writeln!(
            out,
            "  %% dangling: {} {} {} ({}, {})",
            comment_safe(&d.from),
            comment_safe(&d.label),
            comment_safe(&d.target),
            d.target_kind,
            d.reason.as_str()
        );
    }
    out
}

fn mermaid_node(
    out: &mut String,
    node: &Node,
    kids: &BTreeMap<&str, Vec<&Node>>,
    ids: &BTreeMap<&str, String>,
    depth: usize,
) {
    let pad = "  ".repeat(depth);
    let Some(id) = ids.get(node.id.as_str()) else { return };
    let text = mermaid_text(&label(node));
    match kids.get(node.id.as_str()) {
        None => {
            let _ = writeln!(out, "{pad}{id}[\"{text}\"]");
        }
        Some(members) => {
            let _ = writeln!(out, "{pad}subgraph {id}_box[\"{text}\"]");
            let _ = writeln!(out, "{pad}  {id}[\"{text}\"]");
            for member in members {
                mermaid_node(out, member, kids, ids, depth + 1);
            }
            let _ = writeln!(out, "{pad}end");
        }
    }
}

/// Renders the graph for a person: a headline, then the nodes, edges, dangling references and
/// unobserved entities, one per line.
pub fn render_text(graph: &Graph) -> Vec<String> {
    let mut out = vec![format!(
        "graph {} ({}): {} node(s), {} edge(s), {} dangling",
        graph.env,
        graph.source.as_str(),
        graph.nodes.len(),
        graph.edges.len(),
        graph.dangling.len()
    )];
    for l in &graph.lexicons {
        if let Some(note) = &l.note {
            out.push(format!("  {}: {note}", l.name));
        }
    }
    for node in &graph.nodes {
        let kind = node.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
        out.push(format!("  node {}{kind}", node.id));
    }
    for edge in &graph.edges {
        let arrow = if edge.relation == Relation::Containment { "in" } else { "->" };
        out.push(format!("  edge {} {arrow} {} [{}]", edge.from, edge.to, edge.label));
    }
    for d in &graph.dangling {
        out.push(format!(
            "  dangling {} {} {} ({} {}): {}",
            d.from,
            d.label,
            d.target,
            d.target_kind,
            d.relation.as_str(),
            d.reason.as_str()
        ));
    }
    for u in &graph.unobserved {
        let detail = u.detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
        out.push(format!("  unobserved {}:{} ({}){detail}", u.lexicon, u.name, u.reason.as_str()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphEdge, Source};

    fn graph() -> Graph {
        let node = |name: &str, kind: &str| Node::new("pg", name, Some(kind.to_owned()), BTreeMap::new());
        let edge = |from: &str, to: &str, relation| GraphEdge {
            from: format!("pg:{from}"),
            to: format!("pg:{to}"),
            relation,
            label: if relation == Relation::Reference { "foreign \"key\"".into() } else { "in schema".into() },
            via_attr: None,
        };
        Graph {
            version: 1,
            env: "prod".into(),
            source: Source::Live,
            lexicons: Vec::new(),
            nodes: vec![node("app", "schema"), node("app.a", "table"), node("app.b", "table"), node("x\"y", "table")],
            edges: vec![
                edge("app.a", "app.b", Relation::Reference),
                edge("app.a", "app", Relation::Containment),
                edge("app.b", "app", Relation::Containment),
                // A cycle is broken, not followed.
                edge("app", "app.a", Relation::Containment),
            ],
            dangling: Vec::new(),
            unobserved: Vec::new(),
        }
    }

    #[test]
    fn containment_is_a_cluster_and_references_are_arrows() {
        let dot = render_dot(&graph());
        assert!(dot.contains("subgraph cluster_0 {"), "{dot}");
        assert!(dot.contains("\"pg:app.a\" -> \"pg:app.b\" [label=\"foreign \\\"key\\\"\"];"), "{dot}");
        assert!(dot.contains("\"pg:x\\\"y\""), "{dot}");
        assert!(!dot.contains("-> \"pg:app\" "), "containment is not drawn as an arrow: {dot}");
        let mermaid = render_mermaid(&graph());
        assert!(mermaid.contains("subgraph n0_box[\"app<br/>(schema)\"]"), "{mermaid}");
        assert!(mermaid.contains("n1 -->|\"foreign #quot;key#quot;\"| n2"), "{mermaid}");
        assert_eq!(mermaid.matches("subgraph").count(), mermaid.matches("\n  end").count(), "{mermaid}");
    }
}
