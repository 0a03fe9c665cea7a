//! The estate page: one section per member and env, one row per ConvergeOp.

use maud::{Markup, html};

use super::{age, badge, copyable, layout, op_url};
use crate::operator::status::PendingGateView;
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
                        " " a href={ "/envs/" (super::encode(&env.env)) } title="Every resource, observed live" { "resources" }
                        " " a href={ "/envs/" (super::encode(&env.env)) "/diff" }
                            title="Observes the env live when opened" { "live diff" }
                        " " a href={ "/envs/" (super::encode(&env.env)) "/graph" } { "graph" }
                    }
                }
                table {
                    thead { tr {
                        th { "health" } th { "ConvergeOp" } th { "what" } th { "lease" } th { "gates" }
                    } }
                    tbody { @for row in &env.ops { (op_row(row, &env_gates(view, &env.env))) } }
                }
            }
        }
        @if !view.pending_gates.is_empty() {
            h2 { "Pending gates no tick reached" }
            ul { @for g in &view.pending_gates {
                li { code { (g.op) } " gate " code { (g.gate) } " (env " (g.env) ") " (copyable(&g.approve)) }
            } }
        }
        @if view.malformed.total() > 0 {
            p.err { (view.malformed.warning("estate").unwrap_or_default()) }
        }
    };
    layout("Estate", &view.generated_at, true, body)
}

/// The gates of `env` that wait and that no tick reached (a run by hand stopped at them): they
/// belong on the env's rows too, not only at the foot of the page.
fn env_gates<'a>(view: &'a EstateView, env: &str) -> Vec<&'a PendingGateView> {
    view.pending_gates.iter().filter(|g| g.env == env).collect()
}

/// One ConvergeOp: its health word and how old it is first, then what it is about; the tick's
/// counters are on hover (the cell's title) and in the JSON.
fn op_row(row: &OpRow, env_gates: &[&PendingGateView]) -> Markup {
    let s = &row.status;
    let counters = s.last_tick.as_ref().map(|t| format!("{} (tick at {})", t.log, t.timestamp));
    html! {
        tr data-op=(s.op) data-health=(row.health.as_str()) {
            td title=[counters] {
                (badge(row.health))
                @match (&s.last_tick, row.age_seconds) {
                    (Some(_), Some(a)) => { br; span.muted { "observed " (age(a)) " ago" } }
                    (Some(_), None) => {}
                    (None, _) => { br; span.muted { "never ticked" } }
                }
            }
            td { a href=(op_url(s.member.as_deref(), &s.env, &s.op)) { (s.op) } }
            td {
                @if let Some(sus) = &s.suspended {
                    div.err { "suspended: " (sus.describe()) " (by " (sus.by) "; " code { "operator resume " (s.op) } ")" }
                }
                @if let Some(d) = &s.health.detail { (d) }
                @if let Some(h) = s.last_tick.as_ref().and_then(|t| t.held.as_ref()).filter(|h| s.health.detail.as_deref() != Some(h.line().as_str())) { div.muted { (h.line()) } }
                @if let Some(e) = s.last_tick.as_ref().and_then(|t| t.error.as_ref()) { div.err { (e) } }
            }
            td {
                @match &s.lease {
                    Some(l) if l.live => { "held by " code { (l.holder) } br; span.muted { "expires " (l.expires_at) } }
                    Some(l) => { span.muted { "free (last " (l.holder) ", expired " (l.expires_at) ")" } }
                    None => { span.muted { "free" } }
                }
            }
            td {
                @if s.pending_gates.is_empty() && env_gates.is_empty() { span.muted { "none" } }
                @if !s.pending_gates.is_empty() { a href="/gates" { (s.pending_gates.len()) " pending" } }
                @for g in env_gates {
                    div { a href="/gates" { code { (g.op) } " waits at " code { (g.gate) } } (copyable(&g.approve)) }
                }
            }
        }
    }
}
