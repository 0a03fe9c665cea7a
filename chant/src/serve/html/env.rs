//! The env page: the header (the last tick's health and age, from the ledger), the verdict
//! filters with their counts, and one row per resource; and the progress page shown while the
//! first observation runs.

use maud::{Markup, html};

use super::{age, badge, encode, layout_every, op_url, paths, progress};
use crate::serve::env::{EnvPage, EnvTicks, PROGRESS_REFRESH_SECS, REFRESH_SECS, Verdict};

/// The header: the env's last ticks, as the ledger has them, and a row per ConvergeOp with its
/// health and the strip of its last ticks.
fn ticks_header(env: &str, ticks: &EnvTicks) -> Markup {
    html! {
        p.ticks {
            "Last tick: "
            @match (ticks.health, ticks.age_seconds) {
                (Some(h), Some(a)) => { (badge(h)) " " (age(a)) " ago" }
                (Some(h), None) => { (badge(h)) }
                (None, _) => { span.muted { "no ConvergeOp of this env is recorded or carried" } }
            }
        }
        @if !ticks.ops.is_empty() {
            table.strips {
                tbody { @for op in &ticks.ops {
                    tr data-op=(op.op) {
                        td { a href=(op_url(op.member.as_deref(), env, &op.op)) { (op.op) } }
                        td { (badge(op.health)) }
                        td {
                            @if op.history.is_empty() { span.muted { "no tick recorded" } }
                            @else {
                                (crate::serve::chart::mini_strip(&op.history))
                                span.muted { " the last " (op.history.len()) " tick(s), oldest on the left" }
                            }
                        }
                    }
                } }
            }
        }
    }
}

/// The URL of the env page with `verdict` as its filter.
fn filtered(env: &str, verdict: Option<Verdict>) -> String {
    match verdict {
        Some(v) => format!("/envs/{}?verdict={}", encode(env), v.as_str()),
        None => format!("/envs/{}", encode(env)),
    }
}

/// Renders the env page.
pub fn env(page: &EnvPage) -> Markup {
    let env = page.env.as_str();
    let diff = format!("/envs/{}/diff", encode(env));
    let one = page.filter.as_ref().filter(|f| f.len() == 1).map(|f| f[0]);
    let total: usize = page.counts.values().sum();
    let body = html! {
        h1 { "env " (env) ": " code { (page.status) } }
        (ticks_header(env, &page.ticks))
        p.muted {
            "Observed live " (age(i64::try_from(page.observed_age_seconds).unwrap_or(i64::MAX))) " ago (at "
            (page.observed_at) ", in " (page.observe_millis) " ms), by the code "
            code { "lifecycle diff " (env) " --live" } " runs; kept " (crate::serve::env::FRESH_FOR.as_secs())
            " s, then observed again when asked. "
            a href=(diff) { "The live diff" }
            @if let Some(s) = page.observing_seconds { strong { " A new observation is running since " (s) " s." } }
        }
        p.filters {
            a class=[one.is_none().then_some("on")] href=(filtered(env, None)) { "all (" (total) ")" }
            @for v in Verdict::ALL {
                @if let Some(n) = page.counts.get(&v) {
                    a class=[(one == Some(v)).then_some("on")] href=(filtered(env, Some(v))) { (v.as_str()) " (" (n) ")" }
                }
            }
        }
        @for note in &page.notes { p.err { (note) } }
        @if page.resources.is_empty() {
            p { @if page.filter.is_some() { "No resource has this verdict." } @else { "env " (env) " has no resource." } }
        } @else {
            table {
                thead { tr {
                    th { "verdict" } th { "lexicon" } th { "kind" } th { "name" } th { "owner" } th { "what differs" }
                } }
                tbody { @for r in &page.resources {
                    tr data-verdict=(r.verdict.as_str()) data-name=(r.name) {
                        td { span class={ "verdict v-" (r.verdict.as_str()) } { (r.verdict.as_str()) } }
                        td { code { (r.lexicon) } }
                        td { (r.kind.as_deref().unwrap_or("")) }
                        td { code { (r.name) } }
                        td { (r.owner.as_deref().unwrap_or("")) }
                        td {
                            @if let Some(reason) = &r.reason { span.err { (reason) } }
                            @for d in &r.differs { div { (d) } }
                            (paths(&r.paths))
                            @if let Some(a) = &r.anchor { a href={ (diff) "#" (a) } { "diff" } }
                        }
                    }
                } }
            }
        }
    };
    layout_every(&format!("env {env}"), &page.generated_at, Some(REFRESH_SECS), body)
}

/// Renders the page shown while the env's first observation runs: reloaded every
/// [`PROGRESS_REFRESH_SECS`] s until the observation has ended.
pub fn env_progress(env: &str, since: u64, ticks: &EnvTicks, generated_at: &str) -> Markup {
    let body = html! {
        h1 { "env " (env) }
        (ticks_header(env, ticks))
        (progress(env, since))
    };
    layout_every(&format!("env {env}"), generated_at, Some(PROGRESS_REFRESH_SECS), body)
}
