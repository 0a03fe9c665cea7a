//! The live-diff page: the status rows and every entry that differs, an edited text file with its
//! unified diff; and the progress page shown while the env's first observation runs.

use std::collections::HashMap;

use maud::{Markup, html};

use super::{age, encode, layout, layout_every, paths, progress};
use crate::serve::diff::DiffLine;
use crate::serve::env::{FRESH_FOR, PROGRESS_REFRESH_SECS, PathRow, ResourceRow};

/// When the observation a diff page shows was made.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// When it ended.
    pub at: &'a str,
    /// Seconds since then.
    pub age_seconds: u64,
    /// How long it took, in milliseconds.
    pub millis: u64,
    /// Seconds a newer observation has been running for, when one is.
    pub observing_seconds: Option<u64>,
}

/// A unified diff as text, one line each, marked by what it is: removed (live, `-`), added
/// (declared, `+`), a hunk header, or context; the sign stays, so it reads without colour.
fn unified(diff: &str) -> Markup {
    html! {
        pre.udiff { @for line in diff.lines() {
            @let class = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => "add",
                Some('-') if !line.starts_with("---") => "del",
                Some('@') => "hunk",
                _ => "ctx",
            };
            span class=(class) { (line) } "\n"
        } }
    }
}

/// Renders the live diff of `env` whose status is `status`, from the observation `when`; a line
/// whose resource deep observation reports paths of (`rows`, the env page's) lists them with
/// their declared, live and accepted values.
pub fn diff(
    env: &str,
    status: &str,
    lines: &[DiffLine],
    rows: &[ResourceRow],
    when: &Observation<'_>,
    generated_at: &str,
) -> Markup {
    let deep: HashMap<&str, &[PathRow]> = rows
        .iter()
        .filter(|r| !r.paths.is_empty())
        .filter_map(|r| Some((r.anchor.as_deref()?, r.paths.as_slice())))
        .collect();
    let body = html! {
        h1 { "Live diff of env " (env) ": " code { (status) } }
        p.muted {
            "Observed live " (age(i64::try_from(when.age_seconds).unwrap_or(i64::MAX))) " ago (at " (when.at)
            ", in " (when.millis) " ms), by the code a tick derives its symptom from; the "
            a href={ "/envs/" (encode(env)) } { "env page" } " shows the same observation. Kept "
            (FRESH_FOR.as_secs()) " s, then observed again when asked."
            @if let Some(s) = when.observing_seconds { strong { " A new observation is running since " (s) " s." } }
        }
        @if lines.is_empty() { p { "env " (env) " declares nothing in this binary." } }
        @else {
            table {
                thead { tr { th { "what" } th { "component" } th { "detail" } } }
                tbody { @for l in lines { tr data-kind=(l.kind) {
                    td id=[l.anchor.as_deref()] { strong { (l.kind) } } td { code { (l.component) } }
                    td {
                        (l.text)
                        @if let Some(u) = &l.unified { (unified(u)) }
                        @if let Some(p) = l.anchor.as_deref().and_then(|a| deep.get(a)) { (paths(p)) }
                    }
                } } }
            }
        }
    };
    layout(&format!("diff {env}"), generated_at, false, body)
}

/// Renders the page shown while `env`'s first observation runs, `since` seconds so far: reloaded
/// every [`PROGRESS_REFRESH_SECS`] s until the observation has ended.
pub fn diff_progress(env: &str, since: u64, generated_at: &str) -> Markup {
    let body = html! {
        h1 { "Live diff of env " (env) }
        (progress(env, since))
    };
    layout_every(&format!("diff {env}"), generated_at, Some(PROGRESS_REFRESH_SECS), body)
}
