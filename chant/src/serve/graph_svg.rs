//! The graph page's drawing: an env's reference graph as inline SVG, written here with `maud`
//! (which escapes every name) from a [`Layout`] that holds positions only.
//! No markup from Graphviz reaches the page, no script, and nothing is linked from elsewhere (the
//! one `url(#arrow)` is the arrowhead defined in the same `<svg>`).
//!
//! Each resource is a box (`<g class="node" data-id=...>`) with its name and kind as text and a
//! `<title>` tooltip; a reference is a solid line with an arrowhead and its label
//! (`<g class="edge" data-relation="reference" data-from=... data-to=...>`), a containment a dashed
//! line without one (labelled `in`), so the drawing reads without colour. The `<svg>`'s `<title>`
//! and `<desc>` say what it shows, and the page lists every edge as text as well.

use std::fmt::Write as _;

use maud::{Markup, html};

use super::layout::{self, Layout, Point, Size};
use crate::graph::{Graph, Node};
use crate::lexicon::references::Relation;

/// The text size the boxes are measured for, in pixels per character (12px monospace).
const CHAR_W: f64 = 7.3;

/// The size of `node`'s box: wide enough for its name and its kind.
pub fn size(node: &Node) -> Size {
    let name = node.name.chars().count();
    let kind = node.kind.as_ref().map_or(0, |k| k.chars().count() + 2);
    let w = (name.max(kind) as f64 * CHAR_W + 20.0).max(60.0);
    Size { w, h: if node.kind.is_some() { 36.0 } else { 24.0 } }
}

/// The edges of `graph` as indexes into its nodes (an edge to no node is left out).
fn indexed(graph: &Graph) -> Vec<(usize, usize, usize)> {
    let index: std::collections::HashMap<&str, usize> =
        graph.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    graph
        .edges
        .iter()
        .enumerate()
        .filter_map(|(e, edge)| Some((e, *index.get(edge.from.as_str())?, *index.get(edge.to.as_str())?)))
        .collect()
}

/// Lays `graph` out ([`layout::layout`]: `dot` when it runs, else the built-in layout).
pub fn lay_out(graph: &Graph) -> Layout {
    let sizes: Vec<Size> = graph.nodes.iter().map(size).collect();
    let edges: Vec<(usize, usize)> = indexed(graph).into_iter().map(|(_, a, b)| (a, b)).collect();
    layout::layout(&sizes, &edges)
}

fn num(v: f64) -> String {
    let mut s = format!("{v:.1}");
    if s.ends_with(".0") {
        s.truncate(s.len() - 2);
    }
    s
}

/// The SVG path of an edge's line.
fn path_data(points: &[Point], spline: bool) -> String {
    let mut d = String::new();
    let Some(first) = points.first() else { return d };
    let _ = write!(d, "M{},{}", num(first.0), num(first.1));
    if spline {
        for c in points[1..].chunks(3) {
            if let [a, b, e] = c {
                let _ = write!(d, " C{},{} {},{} {},{}", num(a.0), num(a.1), num(b.0), num(b.1), num(e.0), num(e.1));
            }
        }
    } else {
        for p in &points[1..] {
            let _ = write!(d, " L{},{}", num(p.0), num(p.1));
        }
    }
    d
}

/// Where an edge's label goes: the middle of its line.
fn middle(points: &[Point]) -> Option<Point> {
    let n = points.len();
    match n {
        0 => None,
        _ if n.is_multiple_of(2) => {
            Some(((points[n / 2 - 1].0 + points[n / 2].0) / 2.0, (points[n / 2 - 1].1 + points[n / 2].1) / 2.0))
        }
        _ => Some(points[n / 2]),
    }
}

/// Draws `graph` placed by `layout` as an inline `<svg>`.
pub fn svg(graph: &Graph, layout: &Layout) -> Markup {
    let sizes: Vec<Size> = graph.nodes.iter().map(size).collect();
    let edges = indexed(graph);
    let references = graph.edges_of(Relation::Reference).count();
    let title = format!("The {} graph of env {}", graph.source.as_str(), graph.env);
    let desc = format!(
        "{} resource(s) as boxes, {} reference(s) as solid arrows, {} containment(s) as dashed lines; every edge is listed as text below the drawing.",
        graph.nodes.len(),
        references,
        graph.edges.len() - references
    );
    html! {
        svg.graph xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="graph-title graph-desc"
            viewBox={ "0 0 " (num(layout.width)) " " (num(layout.height)) }
            width=(num(layout.width)) height=(num(layout.height))
            font-family="ui-monospace,Menlo,monospace" font-size="12" {
            title id="graph-title" { (title) }
            desc id="graph-desc" { (desc) }
            defs {
                marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8"
                    orient="auto-start-reverse" {
                    path d="M0,0 L10,5 L0,10 z" fill="#1d2330" {}
                }
            }
            @for (k, &(e, _, _)) in edges.iter().enumerate() {
                @let edge = &graph.edges[e];
                @let line = layout.edges.get(k);
                @let reference = edge.relation == Relation::Reference;
                @if let Some(line) = line.filter(|l| !l.points.is_empty()) {
                    g.edge data-relation=(edge.relation.as_str()) data-from=(edge.from) data-to=(edge.to) {
                        title { (edge.from) (if reference { " → " } else { " in " }) (edge.to) ": " (edge.label) }
                        @if reference {
                            path d=(path_data(&line.points, line.spline)) fill="none" stroke="#1d2330"
                                stroke-width="1.3" marker-end="url(#arrow)" {}
                        } @else {
                            path d=(path_data(&line.points, line.spline)) fill="none" stroke="#8a93a6"
                                stroke-width="1" stroke-dasharray="5 4" {}
                        }
                        @if let Some((x, y)) = middle(&line.points) {
                            text x=(num(x)) y=(num(y - 4.0)) text-anchor="middle" font-size="10" fill="#4a5366" {
                                (if reference { edge.label.as_str() } else { "in" })
                            }
                        }
                    }
                }
            }
            @for (i, node) in graph.nodes.iter().enumerate() {
                @if let (Some(&(cx, cy)), Some(s)) = (layout.centres.get(i), sizes.get(i)) {
                    g.node data-id=(node.id) {
                        title { (node.id) @if let Some(k) = &node.kind { " (" (k) ")" } }
                        rect x=(num(cx - s.w / 2.0)) y=(num(cy - s.h / 2.0)) width=(num(s.w)) height=(num(s.h))
                            rx="3" fill="#fff" stroke="#1d2330" {}
                        @if let Some(k) = &node.kind {
                            text x=(num(cx)) y=(num(cy - 2.0)) text-anchor="middle" fill="#1d2330" { (node.name) }
                            text x=(num(cx)) y=(num(cy + 12.0)) text-anchor="middle" font-size="10" fill="#6b7487" { "(" (k) ")" }
                        } @else {
                            text x=(num(cx)) y=(num(cy + 4.0)) text-anchor="middle" fill="#1d2330" { (node.name) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::graph::{GraphEdge, Source};

    fn graph(names: &[&str], edges: &[(usize, usize, Relation)]) -> Graph {
        let nodes: Vec<Node> =
            names.iter().map(|n| Node::new("postgres", n, Some("table".into()), BTreeMap::new())).collect();
        let edges = edges
            .iter()
            .map(|&(a, b, relation)| GraphEdge {
                from: nodes[a].id.clone(),
                to: nodes[b].id.clone(),
                relation,
                label: "foreign <key>".into(),
                via_attr: None,
            })
            .collect();
        Graph {
            version: 1,
            env: "e\"nv".into(),
            source: Source::Declared,
            lexicons: Vec::new(),
            nodes,
            edges,
            dangling: Vec::new(),
            unobserved: Vec::new(),
        }
    }

    #[test]
    fn hostile_names_are_text_in_the_svg_never_markup() {
        let g = graph(
            &["public.<script>alert(1)</script>", "public.\"quoted\" & <b>bold</b>", "public.ok"],
            &[(0, 1, Relation::Reference), (1, 2, Relation::Containment)],
        );
        let l = layout::built_in(&g.nodes.iter().map(size).collect::<Vec<_>>(), &[(0, 1), (1, 2)], "t".into());
        let svg = svg(&g, &l).into_string();
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains("<b>"), "{svg}");
        assert!(svg.contains("public.&lt;script&gt;alert(1)&lt;/script&gt;"), "{svg}");
        assert!(svg.contains(r#"data-from="postgres:public.&lt;script&gt;alert(1)&lt;/script&gt;""#), "{svg}");
        assert!(svg.contains("public.&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"), "{svg}");
        assert!(svg.contains("foreign &lt;key&gt;"), "{svg}");
        assert!(svg.contains("The declared graph of env e&quot;nv"), "{svg}");
        // Only elements this writer makes: no foreign object, no link, no external reference.
        for banned in ["<foreignObject", "<a ", "href", "<image", "<use", "http://", "https://"] {
            let outside_ns = svg.replace(r#"xmlns="http://www.w3.org/2000/svg""#, "");
            assert!(!outside_ns.contains(banned), "{banned}: {svg}");
        }
    }

    #[test]
    fn every_edge_and_node_is_drawn_references_with_arrows_containments_dashed() {
        let g = graph(
            &["a", "b", "c", "s"],
            &[(0, 1, Relation::Reference), (2, 1, Relation::Reference), (0, 3, Relation::Containment)],
        );
        let l = layout::built_in(&g.nodes.iter().map(size).collect::<Vec<_>>(), &[(0, 1), (2, 1), (0, 3)], "t".into());
        let svg = svg(&g, &l).into_string();
        assert_eq!(svg.matches(r#"<g class="node""#).count(), 4, "{svg}");
        assert_eq!(svg.matches(r#"<g class="edge" data-relation="reference""#).count(), 2, "{svg}");
        assert_eq!(svg.matches(r#"<g class="edge" data-relation="containment""#).count(), 1, "{svg}");
        assert_eq!(svg.matches(r#"marker-end="url(#arrow)""#).count(), 2, "{svg}");
        assert_eq!(svg.matches("stroke-dasharray").count(), 1, "{svg}");
        assert!(svg.contains("<title>postgres:a → postgres:b: foreign &lt;key&gt;</title>"), "{svg}");
        assert!(svg.contains(r#"<desc id="graph-desc">4 resource(s) as boxes, 2 reference(s)"#), "{svg}");
    }

    #[test]
    fn spline_and_polyline_paths() {
        assert_eq!(path_data(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (3.5, 3.0)], true), "M0,0 C1,1 2,2 3.5,3");
        assert_eq!(path_data(&[(0.0, 0.0), (10.25, 4.0)], false), "M0,0 L10.2,4");
        assert_eq!(path_data(&[], false), "");
        assert_eq!(middle(&[(0.0, 0.0), (10.0, 4.0)]), Some((5.0, 2.0)));
    }
}
