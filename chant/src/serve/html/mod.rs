//! The dashboard's HTML: one function per page, built with `maud`, whose `html!` escapes every
//! interpolated value (the only pre-escaped text is the stylesheet below, a constant). Pages work
//! without JavaScript and link to nothing outside the dashboard.

mod diff;
mod env;
mod estate;
mod gates;
mod graph;
mod op;

pub use diff::{Observation, diff, diff_progress};
pub use env::{env, env_progress};
pub use estate::estate;
pub use gates::gates;
pub use graph::graph;
pub use op::op;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::Health;

/// The stylesheet, inline so no asset is fetched.
const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:baseline}
header a{color:#cfd8ea;text-decoration:none}header a:hover{color:#fff}header strong{font-size:16px}
main{padding:16px 24px;max-width:1200px}
h1{font-size:20px;margin:8px 0 12px}h2{font-size:16px;margin:20px 0 8px}h3{font-size:14px;margin:12px 0 6px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e8;margin-bottom:12px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{background:#f0f2f5;font-weight:600;font-size:12px;text-transform:uppercase;color:#4a5366}
code,pre{font:12px/1.4 ui-monospace,'SFMono-Regular',Menlo,monospace;background:#eef1f5;padding:1px 4px;border-radius:3px}
pre{padding:8px;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.h-in-sync{background:#2e8540}.h-never-ticked{background:#8a93a6}.h-drifted{background:#d98b0b}
.h-unknown{background:#6b5bb5}.h-gated{background:#1f6fd1}.h-failing{background:#c62f2f}.h-damped{background:#9a6b2f}.h-degraded{background:#b5482f}.h-given-up{background:#8a1f4f}.h-healed{background:#2f8a4f}
.muted{color:#6b7487}.tick{background:#fff;border:1px solid #dde1e8;padding:8px 12px;margin-bottom:10px}
.tick table{border:0;margin:6px 0 0}table.strips{width:auto;border:0;background:none;margin:0 0 8px}table.strips td{padding:2px 8px 2px 0;border:0}table.paths{width:auto;margin:4px 0 0;font-size:12px}table.paths th,table.paths td{padding:2px 6px}.err{color:#c62f2f}
footer{padding:12px 24px;color:#6b7487;font-size:12px}
.cmd code{white-space:pre-wrap;word-break:keep-all;overflow-wrap:normal;display:inline-block;max-width:100%}.cmd .w{white-space:nowrap}
pre.udiff{margin:6px 0 0;background:#fff;border:1px solid #dde1e8}.udiff .add{background:#e3f4e6;color:#1e5e2c}
.udiff .del{background:#fbe5e5;color:#8a1f1f}.udiff .hunk{color:#6b7487}
[hidden]{display:none!important}button.copy{margin-left:6px;font:12px system-ui,sans-serif;padding:0 6px;cursor:pointer}
td:target{background:#fff3c4}.filters a{margin-right:10px}.filters a.on{font-weight:700}
.verdict{font-weight:600}.v-drifted,.v-missing,.v-orphaned{color:#a85f00}.v-unobserved{color:#5b4bb0}.v-in-sync,.v-baselined{color:#2e8540}
";

/// Wraps `body` in the page layout with `title`; `refresh` asks the browser to reload every 30 s.
fn layout(title: &str, generated_at: &str, refresh: bool, body: Markup) -> Markup {
    layout_every(title, generated_at, refresh.then_some(30), body)
}

/// Wraps `body` in the page layout with `title`, reloaded by the browser every `refresh` seconds
/// (a `<meta http-equiv="refresh">`; the footer says the interval).
fn layout_every(title: &str, generated_at: &str, refresh: Option<u32>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(every) = refresh { meta http-equiv="refresh" content=(every); }
                title { (title) " · chant" }
                style { (PreEscaped(STYLE)) }
                script src=(super::assets::COPY_JS_PATH) defer {}
            }
            body {
                header {
                    strong { "chant" }
                    a href="/" { "Estate" }
                    a href="/gates" { "Pending gates" }
                    span.muted { "read-only" }
                }
                main { (body) }
                footer {
                    "Read from the ledger at " (generated_at)
                    ". The same data as JSON: send " code { "Accept: application/json" } "."
                    @if let Some(every) = refresh { " This page reloads itself every " (every) " s." }
                }
            }
        }
    }
}

/// A command to copy: shown as code that wraps only at its spaces (never inside a name), to
/// select and copy, and a copy button that stays hidden unless `/assets/copy.js` runs and the
/// browser has the Clipboard API.
fn copyable(command: &str) -> Markup {
    html! { span.cmd {
        code { @for (i, word) in command.split(' ').enumerate() { @if i > 0 { " " } span.w { (word) } } }
        button.copy type="button" hidden data-copy=(command) { "copy" }
    } }
}

/// A health badge.
fn badge(health: Health) -> Markup {
    html! { span class={ "badge h-" (health.as_str()) } { (health.as_str()) } }
}

/// Percent-encodes `s` for a path segment or a query value (names are `[a-z0-9-]` already;
/// anything else is encoded byte by byte).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The URL of a ConvergeOp's page.
pub fn op_url(member: Option<&str>, env: &str, op: &str) -> String {
    let member = member.map(|m| format!("?member={}", encode(m))).unwrap_or_default();
    format!("/ops/{}/{}{member}", encode(env), encode(op))
}

/// The paths deep observation reports of one resource, with the declared, live and accepted
/// (baseline) values side by side; nothing when there are none.
fn paths(rows: &[crate::serve::env::PathRow]) -> Markup {
    html! {
        @if !rows.is_empty() {
            table.paths {
                thead { tr { th { "path" } th { "declared" } th { "live" } th { "accepted" } } }
                tbody { @for p in rows {
                    tr data-path=(p.path) data-state=(p.state) {
                        td { code { (p.path) } @if p.state == "baselined" { " (accepted)" } }
                        td { code { (p.declared.as_deref().unwrap_or("—")) } }
                        td { code { (p.live.as_deref().unwrap_or("absent")) } }
                        td { code { (p.baseline.as_deref().unwrap_or("—")) } }
                    }
                } }
            }
        }
    }
}

/// Says that `env` has been observed live for `since` seconds and that the page reloads itself
/// until the observation has ended (the env and diff pages' progress note).
fn progress(env: &str, since: u64) -> Markup {
    html! {
        p.progress data-observing=(since) {
            "Observing env " (env) " live since " (since) " s: this page reloads itself every "
            (crate::serve::env::PROGRESS_REFRESH_SECS) " s until the observation has ended. Every other page answers meanwhile."
        }
    }
}

/// Renders an age in seconds for a person (`42s`, `5m 3s`, `2h 10m`, `3d 4h`).
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        3600..86400 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {}h", s / 86400, (s % 86400) / 3600),
    }
}

/// Returns `url` when it is an http(s) URL that may be a link target; anything else is shown
/// as text only (a `javascript:` URL on the ledger must never become a link).
fn safe_link(url: &str) -> Option<&str> {
    (url.starts_with("https://") || url.starts_with("http://")).then_some(url)
}

/// A page for an error: what went wrong, and where to go.
pub fn error(status: u16, message: &str, generated_at: &str) -> Markup {
    layout(
        "error",
        generated_at,
        false,
        html! {
            h1 { "Error " (status) }
            p { (message) }
            p { a href="/" { "Back to the estate" } }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_encoded_ages_read_and_only_http_urls_link() {
        assert_eq!(op_url(None, "site", "site-converge"), "/ops/site/site-converge");
        assert_eq!(op_url(Some("a b/<c>"), "e", "o"), "/ops/e/o?member=a%20b%2F%3Cc%3E");
        assert_eq!([age(-3), age(42), age(303), age(7800), age(273_600)], ["0s", "42s", "5m 3s", "2h 10m", "3d 4h"]);
        assert_eq!(safe_link("https://ci.invalid/1"), Some("https://ci.invalid/1"));
        assert_eq!(safe_link("javascript:alert(1)"), None);
    }

    #[test]
    fn a_gate_that_guards_a_plan_shows_its_digest_and_changes_escaped() {
        use crate::gate::plan::{GatePlan, PlanVerb};
        use crate::operator::status::{Malformed, PendingGateView};
        use crate::serve::view::{GateRow, GatesView};
        let plan = GatePlan { verb: PlanVerb::Apply, env: "site".into(), changes: vec!["create <app.conf>".into()] };
        let digest = plan.digest();
        let gate = PendingGateView {
            op: "site-guarded-apply".into(),
            gate: "ship".into(),
            env: "site".into(),
            resource: None,
            rule: None,
            description: None,
            expires_at: None,
            url: None,
            approve: "chant approve site-guarded-apply ship".into(),
            plan_digest: Some(digest.clone()),
            plan: Some(plan.clone()),
        };
        let page = |gate: PendingGateView| {
            let row = GateRow { converge_op: None, member: None, gate };
            let view =
                GatesView { version: 1, generated_at: "now".into(), gates: vec![row], malformed: Malformed::default() };
            gates::gates(&view).into_string()
        };
        let shown = page(gate.clone());
        assert!(shown.contains(&format!("<code>{digest}</code>")), "{shown}");
        let first = plan.lines().into_iter().find(|l| l.contains("app.conf")).expect("the plan names its change");
        let escaped = first.replace('<', "&lt;").replace('>', "&gt;");
        assert!(shown.contains(&escaped), "{shown}");
        assert!(!shown.contains("<app.conf>"), "{shown}");
        // A plan listed beside another plan's digest is not what an approval binds: not shown.
        let forged = page(PendingGateView { plan_digest: Some(format!("sha256:{}", "ab".repeat(32))), ..gate });
        assert!(!forged.contains(&escaped), "{forged}");
        assert!(forged.contains("not to the recorded digest: not shown"), "{forged}");
    }

    #[test]
    fn interpolated_text_is_escaped() {
        let page = error(404, "<script>alert(1)</script>", "now").into_string();
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
    }
}
