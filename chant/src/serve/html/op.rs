//! One ConvergeOp's page: its status, its standing gates, and its ticks as a timeline.

use maud::{Markup, html};

use super::{age, badge, layout, safe_link};
use crate::serve::timeline::{OpView, OutcomeView, TickView};

/// Renders one ConvergeOp's page.
pub fn op(view: &OpView) -> Markup {
    let s = &view.row.status;
    let title = format!("{}@{}", s.op, s.env);
    let body = html! {
        h1 { (title) " " (badge(view.row.health)) }
        p {
            @if let Some(m) = &s.member { "member " code { (m) } " · " }
            @match &s.lease {
                Some(l) if l.live => { "lease held by " code { (l.holder) } " until " (l.expires_at) }
                _ => { "lease free" }
            }
            @if let (Some(t), Some(a)) = (&s.last_tick, view.row.age_seconds) {
                " · last tick " (t.timestamp) " (" (age(a)) " ago)"
            }
        }
        @if !s.pending_gates.is_empty() {
            h2 { "Pending gates" }
            table {
                thead { tr { th { "op" } th { "gate" } th { "resource" } th { "rule" } th { "expires" } th { "approve with" } } }
                tbody { @for g in &s.pending_gates { tr {
                    td { (g.op) } td { (g.gate) } td { (g.resource.as_deref().unwrap_or("")) }
                    td { (g.rule.as_deref().unwrap_or("")) } td { (g.expires_at.as_deref().unwrap_or("")) }
                    td.approve { (super::copyable(&g.approve))
                        @if let Some(u) = &g.url { br; (url(u)) } }
                } } }
            }
        }
        (crate::serve::chart::history(&view.history))
        h2 { "Ticks " span.muted { "(newest " (view.ticks.len()) " of " (view.total_ticks) ")" } }
        @if view.ticks.is_empty() { p.muted { "No tick is recorded yet." } }
        @for t in &view.ticks { (tick(t)) }
        @if view.malformed.total() > 0 {
            p.err { (view.malformed.warning("page").unwrap_or_default()) }
        }
    };
    layout(&title, &view.generated_at, false, body)
}

fn url(u: &str) -> Markup {
    html! {
        @match safe_link(u) {
            Some(link) => { a href=(link) rel="noreferrer" { (u) } }
            None => { code { (u) } }
        }
    }
}

fn tick(t: &TickView) -> Markup {
    html! {
        div.tick id={ "tick-" (t.id) } {
            div {
                strong { (t.timestamp) } " "
                span.muted { "tick " code { (t.id) } }
            }
            @if let Some(log) = &t.log { div { code { (log) } } }
            @if let Some(e) = &t.error { div.err { "error: " (e) } }
            @if !t.resources.is_empty() {
                div.muted {
                    "resources: "
                    @for (i, r) in t.resources.iter().enumerate() {
                        @if i > 0 { ", " }
                        code { (r.name) } " " (r.status.as_str())
                    }
                }
            }
            @if !t.outcomes.is_empty() {
                table {
                    thead { tr {
                        th { "outcome" } th { "rule" } th { "why" } th { "source" } th { "target" } th { "run" }
                    } }
                    tbody { @for o in &t.outcomes { (outcome(o)) } }
                }
            }
        }
    }
}

fn outcome(o: &OutcomeView) -> Markup {
    let out = &o.outcome;
    html! {
        tr data-action=(out.action.as_str()) {
            td {
                strong { (out.action.as_str()) }
                @if out.dispatch_failed == Some(true) { " " span.err { "(dispatch failed)" } }
                @if let Some(r) = &out.resource { div { "resource " code { (r) } } }
            }
            td { code { (out.rule_id) } }
            td.why {
                @match &o.why {
                    Some(w) => { (w) }
                    None => { span.muted { "(in the project binary's op.json)" } }
                }
                @if let Some(reason) = &out.reason { div.muted { (reason) } }
            }
            td { @if let Some(src) = &out.source { code { (src.file) ":" (src.line) } } }
            td {
                @if let Some(op) = &out.op { code { (op) } }
                @if let Some(g) = &out.gate_name { div { "gate " code { (g) } } }
                @if let Some(a) = &o.approve { div.approve { "approve with " (super::copyable(a)) } }
                @if let Some(u) = &out.url { div { (url(u)) } }
            }
            td {
                @if let Some(run) = &o.run {
                    code { (run.id.chars().take(8).collect::<String>()) } " " (run.status)
                    div.muted { (run.ended_at) }
                }
            }
        }
    }
}
