//! The tolerant reader of gate lines: chant's own facts and the ones the original writes.
//!
//! The original writes `_gates/<op>.jsonl` lines chant's facts differ from: a resolution without
//! `kind` (newer ones say `"kind": "resolution"`), `environment` instead of `env` (and often
//! neither), no `runId` on older lines, and `planDigest`, `relayedBy` on newer ones. Keys come in
//! any order. Those are facts, not malformed lines. The original's own checks decide what is
//! malformed: `version` must be 1, `op`, `gate` and `timestamp` non-blank strings, a pending fact
//! needs `expiresAt`, and any other fact needs `resolvedBy`. A line failing them is unreadable
//! (counted by every reader, with the reason given here), never dropped, and never a fact of
//! defaults. Fields neither writer knows (a seal, a review) are ignored here; the audit reads them
//! from the line itself.

use serde::Deserialize;

use super::{FactKind, GateFact};

/// A gate line as either writer stores it, before the checks.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Wire {
    version: Option<serde_json::Value>,
    kind: Option<FactKind>,
    op: Option<String>,
    gate: Option<String>,
    env: Option<String>,
    environment: Option<String>,
    resource: Option<String>,
    description: Option<String>,
    resolved_by: Option<String>,
    note: Option<String>,
    url: Option<String>,
    run_id: Option<String>,
    git_sha: Option<String>,
    timestamp: Option<String>,
    expires_at: Option<String>,
    plan_digest: Option<String>,
    plan: Option<super::plan::GatePlan>,
    relayed_by: Option<String>,
    seal: Option<super::seal::GateSeal>,
    #[serde(default)]
    sealed: bool,
    carried_from: Option<super::carry::CarriedFrom>,
}

/// Why a gate line is not a fact; the text becomes the unreadable line's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotAFact(String);

fn required(what: &str, value: Option<String>) -> Result<String, NotAFact> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        Some(_) => Err(NotAFact(format!("`{what}` is blank"))),
        None => Err(NotAFact(format!("no string `{what}`"))),
    }
}

impl TryFrom<Wire> for GateFact {
    type Error = NotAFact;

    fn try_from(w: Wire) -> Result<Self, NotAFact> {
        match &w.version {
            Some(v) if v.as_u64() == Some(1) => {}
            Some(v) => return Err(NotAFact(format!("`version` is {v}, not 1"))),
            None => return Err(NotAFact("no `version` (gate lines carry version 1)".to_owned())),
        }
        let op = required("op", w.op)?;
        let gate = required("gate", w.gate)?;
        let timestamp = required("timestamp", w.timestamp)?;
        // The original writes no kind on a resolution (older lines) and never one of chant's own.
        let kind = match w.kind {
            Some(kind) => kind,
            None if w.resolved_by.is_some() => FactKind::Resolution,
            None => {
                return Err(NotAFact(
                    "no `kind` and no `resolvedBy`: neither a pending fact nor a resolution".to_owned(),
                ));
            }
        };
        let expires_at = match kind {
            FactKind::Pending => Some(required("expiresAt", w.expires_at)?),
            _ => w.expires_at,
        };
        let resolved_by = match kind {
            FactKind::Pending => w.resolved_by,
            _ => Some(required("resolvedBy", w.resolved_by)?),
        };
        let env = match (w.env, w.environment) {
            (Some(env), Some(environment)) if env != environment => {
                return Err(NotAFact(format!("`env` {env:?} and `environment` {environment:?} disagree")));
            }
            (Some(env), _) | (None, Some(env)) => env,
            (None, None) => String::new(),
        };
        Ok(GateFact {
            version: 1,
            kind,
            op,
            gate,
            env,
            resource: w.resource,
            description: w.description,
            resolved_by,
            note: w.note,
            url: w.url,
            run_id: w.run_id.unwrap_or_default(),
            git_sha: w.git_sha,
            timestamp,
            expires_at,
            plan_digest: w.plan_digest,
            plan: w.plan,
            relayed_by: w.relayed_by,
            seal: w.seal,
            sealed: w.sealed,
            carried_from: w.carried_from,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::gate::{FactKind, GateFact};

    fn read(line: &str) -> Result<GateFact, String> {
        serde_json::from_str::<GateFact>(line).map_err(|e| e.to_string())
    }

    #[test]
    fn the_originals_pending_fact_reads_with_its_environment_and_digest() {
        let f = read(concat!(
            r#"{"expiresAt":"2026-09-07T12:00:00.000Z","timestamp":"2026-09-05T12:00:00.000Z","kind":"pending","#,
            r#""gate":"rollout","op":"prod-apply","version":1,"environment":"prod","#,
            r#""planDigest":"sha256:00","description":"release manager signs off"}"#
        ))
        .unwrap();
        assert_eq!((f.kind, f.env.as_str(), f.run_id.as_str()), (FactKind::Pending, "prod", ""));
        assert_eq!(f.plan_digest.as_deref(), Some("sha256:00"));
        assert_eq!(f.expires_at.as_deref(), Some("2026-09-07T12:00:00.000Z"));
    }

    #[test]
    fn a_resolution_without_kind_env_or_run_id_is_a_resolution() {
        let f = read(r#"{"version":1,"op":"prod-apply","gate":"rollout","resolvedBy":"alex","timestamp":"2026-09-05T13:04:00.000Z","relayedBy":"bot"}"#)
            .unwrap();
        assert_eq!(f.kind, FactKind::Resolution);
        assert_eq!((f.env.as_str(), f.run_id.as_str()), ("", ""));
        assert_eq!(f.resolved_by.as_deref(), Some("alex"));
        assert_eq!(f.relayed_by.as_deref(), Some("bot"));
        let newer = read(r#"{"version":1,"kind":"resolution","op":"a","gate":"g","resolvedBy":"x","timestamp":"t"}"#);
        assert_eq!(newer.unwrap().kind, FactKind::Resolution);
    }

    #[test]
    fn the_originals_checks_decide_what_is_malformed() {
        let cases = [
            (r#"{"op":"a","gate":"g","resolvedBy":"x","timestamp":"t"}"#, "no `version`"),
            (r#"{"version":2,"op":"a","gate":"g","resolvedBy":"x","timestamp":"t"}"#, "`version` is 2, not 1"),
            (r#"{"version":1,"gate":"g","resolvedBy":"x","timestamp":"t"}"#, "no string `op`"),
            (r#"{"version":1,"op":" ","gate":"g","resolvedBy":"x","timestamp":"t"}"#, "`op` is blank"),
            (r#"{"version":1,"op":"a","resolvedBy":"x","timestamp":"t"}"#, "no string `gate`"),
            (r#"{"version":1,"op":"a","gate":"g","resolvedBy":"x"}"#, "no string `timestamp`"),
            (r#"{"version":1,"op":"a","gate":"g","timestamp":"t"}"#, "neither a pending fact nor a resolution"),
            (r#"{"version":1,"kind":"pending","op":"a","gate":"g","timestamp":"t"}"#, "no string `expiresAt`"),
            (r#"{"version":1,"kind":"resolution","op":"a","gate":"g","timestamp":"t"}"#, "no string `resolvedBy`"),
            (r#"{"version":1,"kind":"passed","op":"a","gate":"g","timestamp":"t"}"#, "no string `resolvedBy`"),
            (
                r#"{"version":1,"op":"a","gate":"g","resolvedBy":"x","timestamp":"t","env":"a","environment":"b"}"#,
                "disagree",
            ),
            (r#"{"version":1,"kind":"maybe","op":"a","gate":"g","resolvedBy":"x","timestamp":"t"}"#, "unknown variant"),
        ];
        for (line, reason) in cases {
            let err = read(line).unwrap_err();
            assert!(err.contains(reason), "{line}: {err}");
        }
    }

    #[test]
    fn chants_own_lines_read_back_to_the_same_bytes() {
        let line = concat!(
            r#"{"env":"prod","expiresAt":"2026-09-07T12:00:00.000Z","gate":"rollout","gitSha":"abc","kind":"pending","#,
            r#""op":"prod-apply","runId":"r1","timestamp":"2026-09-05T12:00:00.000Z","version":1}"#
        );
        let fact = read(line).unwrap();
        assert_eq!(chant_store::canonical::to_string(&fact).unwrap(), line);
    }
}
