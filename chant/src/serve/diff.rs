//! The live diff of an env, `/envs/{env}/diff`: the project binary observes the env through
//! [`Project::assess_deep`](crate::project::Project::assess_deep), the same code a tick derives
//! its symptom from and `lifecycle diff --live` prints, and the page shows the status rows and
//! every entry that is not `noop`, an edited text file with the unified diff the command prints
//! under it.
//!
//! The document is `lifecycle diff <env> --live --json`'s, built by the same library code
//! ([`crate::diff`]: health, resources, text changes and the estate sections included), redacted
//! with the project's redactor exactly as that command redacts its line. Only the project binary
//! carries declarations; the stock binary answers that it cannot.
//!
//! The diff page and the env page show one observation of the env ([`super::env::Observations`]):
//! at most one runs per env, on a thread of its own holding one of the live slots ([`Slots`],
//! at most [`MAX_LIVE_DIFFS`] at once with the live graphs; none free: 503), and its result is
//! kept for [`super::env::FRESH_FOR`]. A page asked while it runs waits at most
//! [`super::env::PAGE_WAIT`], then answers "observing since N s" and reloads itself until it
//! has ended (the previous observation below, when there is one); a JSON request waits at most
//! [`LIVE_DIFF_WAIT`] (then 504). The thread keeps its slot until its observation, bounded by
//! the lexicon's own timeouts, ends. The ledger reads of every other page keep the blocking pool
//! to themselves.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::env::Kept;
use super::routes::{error_response, html_response, json_text_response, now_text, wants_json};
use super::{Dashboard, html};

use crate::diff::Diff;
use crate::observe::{ChangeAction, some_names, unobserved_by_cause};
use crate::project::{self, Project};

/// How many live diffs run at once.
pub const MAX_LIVE_DIFFS: usize = 2;

/// How long a diff page waits for its diff before answering 504.
pub const LIVE_DIFF_WAIT: Duration = Duration::from_secs(120);

/// The live diffs running now, at most [`MAX_LIVE_DIFFS`].
#[derive(Debug, Default)]
pub struct Slots(Arc<AtomicUsize>);

/// One running live diff's place among the [`Slots`], given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Slots {
    /// Takes a slot, or `None` when [`MAX_LIVE_DIFFS`] diffs are running.
    pub fn take(&self) -> Option<Slot> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_LIVE_DIFFS).then_some(n + 1))
            .ok()
            .map(|_| Slot(Arc::clone(&self.0)))
    }

    /// Returns how many live diffs are running.
    pub fn running(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The diff page's document, as `lifecycle diff --live --json` prints it, after redaction: kept
/// as its JSON text, served as it is (a parsed document of a large env costs several times its
/// text in memory, for as long as the observation is kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffView(Bytes);

impl DiffView {
    /// Returns the document's JSON text (shared, not copied).
    pub fn json(&self) -> Bytes {
        self.0.clone()
    }
}

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
    /// The line's id on the page, which the env page links to ([`super::env::anchor`]).
    pub anchor: Option<String>,
}

/// Returns the diff page's document and its lines for a person from `doc`, both redacted.
///
/// # Errors
///
/// A document that cannot be serialised.
pub fn lines_of(project: &Project, doc: &Diff) -> Result<(DiffView, Vec<DiffLine>), project::Error> {
    let redacted = project.redactor.redact(&serde_json::to_string(doc)?);
    let mut lines = Vec::new();
    for row in &doc.components {
        lines.push(DiffLine {
            kind: "row".into(),
            component: row.component.clone(),
            text: project.redactor.redact(&row.status_line()),
            unified: None,
            anchor: None,
        });
    }
    for cs in &doc.change_sets {
        // What could not be read, one line per cause (as `lifecycle diff` says it).
        for (i, (cause, names)) in unobserved_by_cause(&cs.entries).into_iter().enumerate() {
            lines.push(DiffLine {
                kind: ChangeAction::Unobserved.as_str().to_owned(),
                component: cs.component.clone(),
                text: project.redactor.redact(&format!("{} — {cause}", some_names(&names))),
                unified: None,
                anchor: Some(super::env::unobserved_anchor(&cs.component, i)),
            });
        }
        for entry in cs.entries.iter().filter(|e| !matches!(e.action, ChangeAction::Noop | ChangeAction::Unobserved)) {
            let texts = doc.text_changes.iter().find(|t| t.component == cs.component && t.name == entry.name);
            lines.push(DiffLine {
                kind: entry.action.as_str().to_owned(),
                component: cs.component.clone(),
                text: project.redactor.redact(&entry.summary(texts.is_some())),
                unified: texts.map(|t| project.redactor.redact(&t.diff)),
                anchor: Some(super::env::anchor(&cs.component, &entry.name)),
            });
        }
    }
    Ok((DiffView(Bytes::from(redacted)), lines))
}

/// `GET /envs/{env}/diff`: the env's kept observation as `lifecycle diff --live --json`'s
/// document, or as lines for a person.
pub async fn page(State(d): State<Arc<Dashboard>>, Path(env): Path<String>, headers: HeaderMap) -> Response {
    let json = wants_json(&headers);
    if let Err(e) = d.check_env(&env) {
        return error_response(json, &d, &e);
    }
    let (outcome, observing) = match super::env::kept(&d, &env, json).await {
        Ok(Kept::Ended(outcome, observing)) => (outcome, observing),
        Ok(Kept::Observing(since)) => {
            return html_response(StatusCode::OK, html::diff_progress(&env, since, &now_text()));
        }
        Err(response) => return response,
    };
    let observed = match outcome.result() {
        Ok(o) => o,
        Err(message) => return super::env::observe_failed(json, &env, message),
    };
    if json {
        return json_text_response(StatusCode::OK, observed.diff.json());
    }
    let when = html::Observation {
        at: &observed.observed_at,
        age_seconds: outcome.age().as_secs(),
        millis: u64::try_from(observed.took.as_millis()).unwrap_or(u64::MAX),
        observing_seconds: observing.map(|s| s.elapsed().as_secs()),
    };
    html_response(
        StatusCode::OK,
        html::diff(&env, &observed.status, &observed.lines, &observed.rows, &when, &now_text()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_the_limit_of_slots_is_taken_and_a_dropped_one_comes_back() {
        let slots = Slots::default();
        let taken: Vec<Slot> = (0..MAX_LIVE_DIFFS).map(|_| slots.take().unwrap()).collect();
        assert!(slots.take().is_none());
        assert_eq!(slots.running(), MAX_LIVE_DIFFS);
        drop(taken);
        assert_eq!(slots.running(), 0);
        assert!(slots.take().is_some());
    }
}
