//! The graph page: the drawing, then every edge, dangling reference and unobserved entity as text.

use maud::{Markup, html};

use super::{encode, layout};
use crate::serve::graph::GraphPage;
use crate::serve::graph_svg;

/// Renders the graph page of `page`.
pub fn graph(page: &GraphPage) -> Markup {
    let g = &page.graph;
    let base = format!("/envs/{}/graph", encode(&g.env));
    let live = g.source == crate::graph::Source::Live;
    let body = html! {
        h1 { "Graph of env " (g.env) ": " code { (g.source.as_str()) } }
        p {
            @if live { a href=(base) { "declared" } " · " strong { "live" } }
            @else { strong { "declared" } " · " a href={ (base) "?live=1" } title="Observes the env live when opened" { "live" } }
            " · " a href={ "/envs/" (encode(&g.env)) "/diff" } { "live diff" }
        }
        p.muted data-counts="" {
            (g.nodes.len()) " resource(s), " (g.edges.len()) " edge(s), " (g.dangling.len()) " dangling reference(s)"
            @if live { ", " (g.unobserved.len()) " not observed" }
            @if let Some(l) = &page.layout { ". Laid out by " span data-layout=(layout_word(l)) { (l.engine.describe()) } }
            ". References are solid arrows, containment is a dashed line."
        }
        @for l in g.lexicons.iter().filter(|l| l.note.is_some()) {
            p.muted { code { (l.name) } ": " (l.note.as_deref().unwrap_or_default()) }
        }
        @if g.nodes.is_empty() {
            p { "Nothing to draw: the env " (if live { "has no observed resource" } else { "declares nothing" }) " in this binary." }
        } @else if let Some(l) = &page.layout {
            div.graph style="overflow:auto;background:#fff;border:1px solid #dde1e8;margin-bottom:12px;max-height:80vh" { (graph_svg::svg(g, l)) }
        }
        h2 { "Edges" }
        @if g.edges.is_empty() { p.muted { "none" } }
        @else {
            table.edges {
                thead { tr { th { "from" } th { "relation" } th { "to" } th { "label" } } }
                tbody { @for e in &g.edges { tr data-relation=(e.relation.as_str()) {
                    td { code { (e.from) } } td { (e.relation.as_str()) } td { code { (e.to) } } td { (e.label) }
                } } }
            }
        }
        h2 { "Dangling references" }
        @if g.dangling.is_empty() { p.muted { "none" } }
        @else {
            p.muted { "References no single node answers to: listed, never drawn (a wrong edge is worse than a missing one)." }
            table.dangling {
                thead { tr { th { "from" } th { "label" } th { "target" } th { "target kind" } th { "why" } th { "read at" } } }
                tbody { @for d in &g.dangling { tr data-reason=(d.reason.as_str()) {
                    td { code { (d.from) } } td { (d.label) } td { code { (d.target) } } td { (d.target_kind) }
                    td { strong { (d.reason.as_str()) } } td { code { (d.path) } }
                } } }
            }
        }
        @if live {
            h2 { "Not observed" }
            @if g.unobserved.is_empty() { p.muted { "none" } }
            @else {
                table.unobserved {
                    thead { tr { th { "lexicon" } th { "name" } th { "why" } th { "detail" } } }
                    tbody { @for u in &g.unobserved { tr {
                        td { (u.lexicon) } td { code { (u.name) } } td { (u.reason.as_str()) }
                        td { (u.detail.as_deref().unwrap_or("")) }
                    } } }
                }
            }
        }
    };
    layout(&format!("graph {}", g.env), &page.generated_at, false, body)
}

/// `graphviz` or `built-in`, for the page's `data-layout`.
fn layout_word(l: &crate::serve::layout::Layout) -> &'static str {
    match l.engine {
        crate::serve::layout::Engine::Graphviz => "graphviz",
        crate::serve::layout::Engine::BuiltIn { .. } => "built-in",
    }
}
