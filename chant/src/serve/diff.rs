//! The live diff of an env, on request only: the project binary observes the env through
//! [`Project::assess`], the same code a tick derives its symptom from and `lifecycle diff --live`
//! prints, and the page shows the status rows and every entry that is not `noop`, an edited text
//! file with the unified diff the command prints under it.
//!
//! The document is `lifecycle diff <env> --live --json`'s, built by the same library code
//! ([`crate::diff`]: health, resources, text changes and the estate sections included), redacted
//! with the project's redactor exactly as that command redacts its line. Only the project binary
//! carries declarations; the stock binary answers that it cannot.

use serde::Serialize;
use serde_json::Value;

use crate::observe::{ChangeAction, some_names, unobserved_by_cause};
use crate::project::{self, Project};

/// The diff page's document, as `lifecycle diff --live --json` prints it, after redaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffView(pub Value);

/// One line of the diff for a person: a status row or a change entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// `row` for a status row, else the change action (`create`, `update`, `unobserved`, ...).
    pub kind: String,
    /// The component (lexicon binding) it belongs to.
    pub component: String,
    /// What it says.
    pub text: String,
    /// For an edited text file, the unified diff `lifecycle diff` prints under it (live `-`,
    /// declared `+`), redacted; the content digests it replaces are left out of `text`.
    pub unified: Option<String>,
}

/// Observes `env` live and returns its document and its lines for a person, both redacted.
///
/// # Errors
///
/// Declaration and ledger errors, and a document that cannot be serialised.
pub fn live(project: &Project, env: &str) -> Result<(DiffView, Vec<DiffLine>), project::Error> {
    let member = crate::diff::member_of(project, env);
    let doc = crate::diff::diff(project, member.as_deref(), env)?;
    let redacted = project.redactor.redact(&serde_json::to_string(&doc)?);
    let value: Value = serde_json::from_str(&redacted)?;
    let mut lines = Vec::new();
    for row in &doc.components {
        lines.push(DiffLine {
            kind: "row".into(),
            component: row.component.clone(),
            text: project.redactor.redact(&format!("{}: {}", row.reconciliation.as_str(), row.detail)),
            unified: None,
        });
    }
    for cs in &doc.change_sets {
        // What could not be read, one line per cause (as `lifecycle diff` says it).
        for (cause, names) in unobserved_by_cause(&cs.entries) {
            lines.push(DiffLine {
                kind: ChangeAction::Unobserved.as_str().to_owned(),
                component: cs.component.clone(),
                text: project.redactor.redact(&format!("{} — {cause}", some_names(&names))),
                unified: None,
            });
        }
        for entry in cs.entries.iter().filter(|e| !matches!(e.action, ChangeAction::Noop | ChangeAction::Unobserved)) {
            let texts = doc.text_changes.iter().find(|t| t.component == cs.component && t.name == entry.name);
            let kind = entry.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
            // The text diff below says more than the content digests it replaces (as the CLI).
            let deltas: Vec<String> = entry
                .deltas
                .iter()
                .filter(|d| texts.is_none() || d.property != "content")
                .map(|d| format!("{}: {} -> {}", d.property, d.live.as_deref().unwrap_or("(none)"), d.declared))
                .collect();
            let deltas = if deltas.is_empty() { String::new() } else { format!(" [{}]", deltas.join("; ")) };
            lines.push(DiffLine {
                kind: entry.action.as_str().to_owned(),
                component: cs.component.clone(),
                text: project.redactor.redact(&format!("{}{kind}{deltas}", entry.name)),
                unified: texts.map(|t| project.redactor.redact(&t.diff)),
            });
        }
    }
    Ok((DiffView(value), lines))
}
