//! The estate page: one section per member and env, one row per ConvergeOp.

use maud::{Markup, html};

use super::{age, badge, layout, op_url};
use crate::serve::view::{EstateView, OpRow};

/// Renders the estate; each env of `diffable` gets its live-diff link (project binary only).
pub fn estate(view: &EstateView, diffable: &[&str]) -> Markup {
    let body = html! {
        h1 {
            "Estate "
            @if let Some(h) = view.health { (badge(h)) }
        }
        @if let Some(r) = view.remote.as_ref().filter(|r| !r.reachable) {
            p.err {
                "remote " code { (r.name) } ": unreachable"
                @if let Some(since) = &r.unreachable_since { " since " (since) }
                @if let Some(e) = &r.error { " (" (e) ")" }
            }
        }
        @if view.members.is_empty() {
            p.muted { "No ConvergeOp is recorded on the ledger or carried by this binary yet." }
        }
        @for member in &view.members {
            @if let Some(name) = &member.member {
                h2 { "Member " (name) " " (badge(member.health)) }
            }
            @for env in &member.envs {
                h3 {
                    "env " (env.env) " " (badge(env.health))
                    @if diffable.contains(&env.env.as_str()) {
                        " " a href={ "/envs/" (super::encode(&env.env)) "/diff" }
                            title="Observes the env live when opened" { "live diff" }
                    }
                }
                table {
                    thead { tr {
                        th { "ConvergeOp" } th { "health" } th { "last tick" } th { "age" }
                        th { "summary" } th { "lease" } th { "gates" }
                    } }
                    tbody { @for row in &env.ops { (op_row(row)) } }
                }
            }
        }
        @if !view.pending_gates.is_empty() {
            h2 { "Pending gates no tick reached" }
            ul { @for g in &view.pending_gates {
                li { code { (g.op) } " gate " code { (g.gate) } " — " code { (g.approve) } }
            } }
        }
        @if view.malformed.total() > 0 {
            p.err { (view.malformed.warning("estate").unwrap_or_default()) }
        }
    };
    layout("Estate", &view.generated_at, true, body)
}

fn op_row(row: &OpRow) -> Markup {
    let s = &row.status;
    html! {
        tr data-op=(s.op) data-health=(row.health.as_str()) {
            td { a href=(op_url(s.member.as_deref(), &s.env, &s.op)) { (s.op) } }
            td { (badge(row.health)) }
            @match &s.last_tick {
                Some(t) => {
                    td { (t.timestamp) }
                    td { @if let Some(a) = row.age_seconds { (age(a)) " ago" } }
                    td {
                        code { (t.log) }
                        @if let Some(e) = &t.error { div.err { (e) } }
                    }
                }
                None => { td.muted { "never" } td {} td {} }
            }
            td {
                @match &s.lease {
                    Some(l) if l.live => { "held by " code { (l.holder) } br; span.muted { "expires " (l.expires_at) } }
                    Some(l) => { span.muted { "free (last " (l.holder) ", expired " (l.expires_at) ")" } }
                    None => { span.muted { "free" } }
                }
            }
            td {
                @if s.pending_gates.is_empty() { span.muted { "none" } }
                @else { a href="/gates" { (s.pending_gates.len()) " pending" } }
            }
        }
    }
}
