//! Decision records: an op wave's record of every hook outcome, passed in by a caller with its
//! own reference and time (a record holds neither). Each outcome becomes a `hook` entry linked to
//! the wave's approval (`under`) and its applied entry (`applied`), matched on gate and digest.
//!
//! The record, as chant reads it: `{"gate": ..., "digest"?: ..., "wave"?: ..., "outcomes":
//! [{"moment", "name", "target"?, "outcome", "exit"?, "reason"?}]}` where `outcome` is `passed`,
//! `failed`, `held` or `skipped`; a record given as text is parsed first. A record of any other
//! shape is a `malformed-line` gap naming its reference.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Audit, Entry, EntryKind, GapKind, Input, gap, push};

/// A decision record a caller passes in.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The caller's reference (the record's path, a report).
    pub reference: String,
    /// When it was made (RFC 3339).
    pub at: String,
    /// The record: a JSON object, or its text as written.
    pub record: Value,
}

/// The outcome of one hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    /// The moment it ran at (`before-apply`, ...).
    pub moment: String,
    /// The hook's name.
    pub name: String,
    /// What it ran against.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<String>,
    /// `passed`, `failed`, `held` or `skipped`.
    pub outcome: String,
    /// The hook's exit code.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit: Option<i64>,
    /// Why it ended so.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Record {
    gate: String,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    wave: Option<String>,
    outcomes: Vec<Hook>,
}

const OUTCOMES: &[&str] = &["passed", "failed", "held", "skipped"];

/// Why a decision record is not one the audit can read.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("not a decision record: {0}")]
    NotDecision(#[source] serde_json::Error),
    #[error("hook {name:?} has outcome {outcome:?}, not one of {}", OUTCOMES.join(", "))]
    Outcome { name: String, outcome: String },
}

fn read(record: &Value) -> Result<Record, RecordError> {
    let value = match record {
        Value::String(text) => serde_json::from_str::<Value>(text).map_err(RecordError::NotJson)?,
        other => other.clone(),
    };
    let r: Record = serde_json::from_value(value).map_err(RecordError::NotDecision)?;
    if let Some(bad) = r.outcomes.iter().find(|h| !OUTCOMES.contains(&h.outcome.as_str())) {
        return Err(RecordError::Outcome { name: bad.name.clone(), outcome: bad.outcome.clone() });
    }
    Ok(r)
}

/// Adds the hook entries of `input`'s decisions to `audit`.
pub(super) fn derive(input: &Input<'_>, audit: &mut Audit) {
    for d in input.decisions {
        let r = match read(&d.record) {
            Ok(r) => r,
            Err(reason) => {
                let mut g = gap(GapKind::MalformedLine, None, None, format!("{}: {reason}", d.reference));
                g.reference = Some(d.reference.clone());
                audit.gaps.push(g);
                continue;
            }
        };
        let matches = |e: &&Entry, kinds: &[EntryKind]| {
            kinds.contains(&e.kind)
                && e.gate == r.gate
                && match (&r.digest, &e.plan_digest) {
                    (Some(d), Some(ed)) => d == ed,
                    _ => true,
                }
        };
        let under = audit
            .entries
            .iter()
            .rev()
            .find(|e| matches(e, &[EntryKind::Approved, EntryKind::OverrideRecorded]))
            .map(|e| (e.id.clone(), e.op.clone()));
        let applied = audit
            .entries
            .iter()
            .rev()
            .find(|e| matches(e, &[EntryKind::Applied, EntryKind::OverrideSpent]))
            .map(|e| e.id.clone());
        for (i, hook) in r.outcomes.iter().enumerate() {
            let op = under.as_ref().map(|(_, op)| op.clone()).unwrap_or_default();
            let entry = Entry {
                plan_digest: r.digest.clone(),
                under: under.as_ref().map(|(id, _)| id.clone()),
                applied: applied.clone(),
                hook: Some(hook.clone()),
                wave: Some(r.wave.clone().unwrap_or_else(|| r.gate.clone())),
                reference: Some(d.reference.clone()),
                ..Entry::new(EntryKind::Hook, op, r.gate.clone(), d.at.clone())
            };
            let what = serde_json::json!({ "index": i, "ref": d.reference });
            let record = serde_json::to_value(hook).unwrap_or(Value::Null);
            push(input, audit, entry, &what, &record);
        }
    }
}
