//! The pending-gates page.

use maud::{Markup, html};

use super::{copyable, layout, op_url, safe_link};
use crate::serve::view::GatesView;

/// Renders every standing gate, with its approve command.
pub fn gates(view: &GatesView) -> Markup {
    let body = html! {
        h1 { "Pending gates" }
        p.muted {
            "Approving is a recorded act outside this page: run the command shown, where the ledger lives."
        }
        @if view.gates.is_empty() { p { "No gate is waiting." } }
        @else {
            table {
                thead { tr {
                    th { "op" } th { "gate" } th { "env" } th { "resource" } th { "reached by" }
                    th { "description" } th { "expires" } th { "plan" } th { "approve with" }
                } }
                tbody { @for row in &view.gates {
                    @let g = &row.gate;
                    tr data-gate=(g.gate) {
                        td { code { (g.op) } } td { code { (g.gate) } } td { (g.env) }
                        td { (g.resource.as_deref().unwrap_or("")) }
                        td {
                            @if let Some(c) = &row.converge_op {
                                a href=(op_url(row.member.as_deref(), &g.env, c)) { (c) }
                                @if let Some(r) = &g.rule { " rule " code { (r) } }
                            } @else { span.muted { "a hand run" } }
                        }
                        td { (g.description.as_deref().unwrap_or("")) }
                        td { (g.expires_at.as_deref().unwrap_or("")) }
                        td.plan {
                            @if let Some(d) = &g.plan_digest { code { (d) } }
                            // A plan that does not hash to the recorded digest is not what an
                            // approval binds: it is not shown (as `operator status` and `approve`).
                            @if let Some(plan) = g.plan.as_ref().filter(|p| g.plan_digest.as_deref() != Some(p.digest().as_str())) {
                                p.err { "the plan listed hashes to " code { (plan.digest()) } ", not to the recorded digest: not shown (see " code { "approve --show" } ")" }
                            } @else if let Some(plan) = &g.plan {
                                ul { @for line in plan.lines() { li { code { (line) } } } }
                            }
                        }
                        td.approve {
                            (copyable(&g.approve))
                            @if let Some(u) = &g.url {
                                br;
                                @match safe_link(u) {
                                    Some(link) => { a href=(link) rel="noreferrer" { (u) } }
                                    None => { code { (u) } }
                                }
                            }
                        }
                    }
                } }
            }
        }
        @if view.malformed.total() > 0 {
            p.err { (view.malformed.warning("page").unwrap_or_default()) }
        }
    };
    layout("Pending gates", &view.generated_at, false, body)
}
