//! `tick <converge-op> --plan [--json]`: what the next tick would do, written nowhere.
//!
//! Prints the symptom, then every rule (per resource in resource mode) with whether it fired and
//! what it would do: `would run <op>`, `reported`, `refused` by the dial (with the reason),
//! `skipped-budget`, `skipped-flap`; then the summary line the tick would record. `--json`
//! prints the [`Preview`] on one line. Exit 0, or 1 when the observation fails (as the tick
//! would).

use std::fmt::Write as _;

use super::error::{print, println};
use super::{CommandError, Exit};
use crate::model::OpDocument;
use crate::project::Project;
use crate::tick::{PlannedSymptom, Preview, preview};

/// Runs `tick --plan`.
///
/// # Errors
///
/// A [`CommandError`] when the newest tick record cannot be read, or stdout cannot be written.
pub fn cmd_plan(project: &Project, doc: &OpDocument, json: bool) -> Result<Exit, CommandError> {
    let preview = preview(project, doc)?;
    if json {
        let line = super::error::to_json(&preview, "the plan")?;
        println(&project.redactor.redact(&line))?;
    } else {
        print(&project.redactor.redact(&render(&preview)))?;
    }
    for u in &preview.unreadable {
        eprintln!("warning: unreadable ledger line {}:{} ({}), skipped", u.path, u.line, u.reason);
    }
    if let Some(e) = &preview.error {
        eprintln!("error: the tick would fail: {e}");
        return Ok(Exit::Failed);
    }
    Ok(Exit::Done)
}

/// Renders a preview for a person.
pub fn render(p: &Preview) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "plan {}@{} (dial {}, budget {}): nothing is recorded, dispatched or leased",
        p.op, p.env, p.dial, p.budget
    );
    match &p.symptom {
        Some(PlannedSymptom::Env(sym)) => {
            let _ = writeln!(
                s,
                "symptom: status={} create={} update={} delete={} adopt={} runtime={} unobserved={} total={}",
                sym.status.as_str(),
                sym.create_count,
                sym.update_count,
                sym.delete_count,
                sym.adopt_count,
                sym.runtime_count,
                sym.unobserved_count,
                sym.total_count
            );
            for row in &sym.components {
                let _ = writeln!(s, "  {}", super::lifecycle::row_line(row));
            }
        }
        Some(PlannedSymptom::Resources(rs)) => {
            let _ = writeln!(s, "symptom: {} resource(s)", rs.len());
            for r in rs {
                let detail = if r.detail.is_empty() { String::new() } else { format!(": {}", r.detail) };
                let _ = writeln!(s, "  {} {}{detail}", r.resource, r.status.as_str());
            }
        }
        None => {
            let _ = writeln!(s, "symptom: none (the observation failed)");
        }
    }
    if !p.rules.is_empty() {
        let _ = writeln!(s, "rules:");
    }
    let width = p.rules.iter().map(|r| label(r).chars().count()).max().unwrap_or(0);
    let when_width = p.rules.iter().map(|r| r.when.chars().count()).max().unwrap_or(0);
    for r in &p.rules {
        let what = match (r.verdict, &r.op) {
            ("not-fired", _) => "not fired".to_owned(),
            ("ran", Some(op)) => format!("fired → would run {op}"),
            ("proposed", Some(op)) => {
                format!("fired → would propose {op} on branch chant/proposals/{}/{}", p.env, r.rule_id)
            }
            (verdict, Some(op)) => format!("fired → {verdict} (run {op})"),
            (verdict, None) => format!("fired → {verdict}"),
        };
        let why = r.reason.as_deref().map(|x| format!(": {x}")).unwrap_or_default();
        let _ = writeln!(s, "  {:<width$}  {:<when_width$}  {what}{why}", label(r), r.when);
    }
    // Nothing was dispatched, so nothing is remediated yet: what the tick would run is counted as
    // such (the tick verifies each dispatch before it counts it remediated).
    let _ = writeln!(
        s,
        "plan: {}",
        p.log.replacen(" remediated=", " would-run=", 1).replacen(" proposed=", " would-propose=", 1)
    );
    s
}

fn label(r: &crate::tick::RuleVerdict) -> String {
    match &r.resource {
        Some(res) => format!("{} [{res}]", r.rule_id),
        None => r.rule_id.clone(),
    }
}
