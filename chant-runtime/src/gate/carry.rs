//! Carried approvals: a gate declared `carries = "<source>", within = "<window>"`
//! ([`chant_core::carry`]) opens, when no approval of its own stands, on an approval of the source
//! gate recorded within the window. [`find`] is the pure rule; the runner records what it used.
//!
//! An approval carries only when all of these hold, so a carry never widens what a human
//! approved:
//!
//! - it is a genuine answer: a resolution of the source gate (same owner, env and resource) that
//!   answers the source's newest request before it, as [`super::decide`] counts one (a stale or
//!   misplaced line carries nothing, and a carried approval of the source never carries on);
//! - it was recorded at most `within` before now;
//! - where the carrying gate guards a plan, it approved that very plan (the same digest): an
//!   approval of another plan, or of no plan, does not carry onto one;
//! - it has not carried into this gate before: one approval admits one run through the carrying
//!   gate, as it admits one run through its own.
//!
//! A sealed gate is never answered by a carry (refused when the op is compiled or loaded).
//!
//! The run that uses a carry records a resolution of the carrying gate with `carriedFrom: {op,
//! gate, at, approvedBy, approvedAt, runId, within}` (the source's owner and gate, its request's
//! time, the approval's author and time, the request's run, the window), then its `passed` fact;
//! `operator audit` checks the cited request and approval against the ledger, and the window
//! ([`super::audit`], `carried-without-source`).

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{FactKind, GateFact};

/// Where a carried approval came from: the source gate's request and approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CarriedFrom {
    /// The source gate's owner (its op, or its component).
    pub op: String,
    /// The source gate.
    pub gate: String,
    /// The source request's (pending fact's) timestamp.
    pub at: String,
    /// Who approved the source gate.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub approved_by: Option<String>,
    /// When the source approval was recorded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub approved_at: Option<String>,
    /// The run whose request the source approval answered.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<String>,
    /// The window the carrying gate declares (`24h`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub within: Option<String>,
}

/// The approval a gate can carry, with the request it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carry {
    /// The source's pending fact the approval answered.
    pub request: GateFact,
    /// The source's approval.
    pub approval: GateFact,
}

impl Carry {
    /// The `carriedFrom` a run records for this carry, with the declared window.
    pub fn carried_from(&self, within: &str) -> CarriedFrom {
        CarriedFrom {
            op: self.approval.op.clone(),
            gate: self.approval.gate.clone(),
            at: self.request.timestamp.clone(),
            approved_by: self.approval.resolved_by.clone(),
            approved_at: Some(self.approval.timestamp.clone()),
            run_id: Some(self.approval.run_id.clone()).filter(|r| !r.is_empty()),
            within: Some(within.to_owned()),
        }
    }
}

/// The gate a carry is asked for.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The owner of both gates (the op, or the component).
    pub owner: &'a str,
    /// The carrying gate.
    pub gate: &'a str,
    /// The source gate.
    pub source: &'a str,
    /// The window.
    pub within: Duration,
    /// The window as declared (`24h`), for the words.
    pub within_text: &'a str,
    /// The run's env.
    pub env: &'a str,
    /// The resource of a resource-mode dispatch.
    pub resource: Option<&'a str>,
    /// The plan the carrying gate guards: `None` when it guards none, `Some(None)` when it guards
    /// one this run cannot compute (nothing then carries), `Some(Some(digest))` otherwise.
    pub plan: Option<Option<&'a str>>,
    /// Now.
    pub now: Timestamp,
}

/// Finds the approval `ask.gate` carries from `ask.source` among the owner's gate facts (ledger
/// order), or says why none carries.
///
/// # Errors
///
/// Why no approval carries, in words, about the newest approval of the source (or that none
/// stands).
pub fn find(facts: &[GateFact], ask: &Ask<'_>) -> Result<Carry, String> {
    let src = |f: &GateFact| {
        f.op == ask.owner && f.gate == ask.source && f.resource.as_deref() == ask.resource && f.in_env(ask.env)
    };
    // Each genuine approval of the source, with the request it answers, oldest first.
    let mut genuine: Vec<(&GateFact, &GateFact)> = Vec::new();
    let mut request: Option<&GateFact> = None;
    for f in facts.iter().filter(|f| src(f)) {
        match f.kind {
            FactKind::Pending => request = Some(f),
            FactKind::Resolution if f.carried_from.is_none() => {
                if let Some(r) = request.filter(|r| f.answers(r)) {
                    genuine.push((r, f));
                }
            }
            _ => {}
        }
    }
    let window = jiff::SignedDuration::try_from(ask.within).unwrap_or(jiff::SignedDuration::MAX);
    let mut why = None;
    for (request, approval) in genuine.into_iter().rev() {
        let by = approval.resolved_by.as_deref().unwrap_or("unknown");
        let said =
            |reason: String| format!("the approval of \"{}\" by {by} at {}: {reason}", ask.source, approval.timestamp);
        let at = chant_store::clock::parse(&approval.timestamp);
        let fresh = at.is_some_and(|at| ask.now.duration_since(at) <= window);
        let used = facts.iter().any(|f| {
            f.op == ask.owner
                && f.gate == ask.gate
                && f.kind == FactKind::Resolution
                && f.carried_from.as_ref().is_some_and(|c| {
                    c.gate == ask.source
                        && c.approved_at.as_deref() == Some(approval.timestamp.as_str())
                        && c.run_id.as_deref().unwrap_or_default() == approval.run_id
                        && c.at == request.timestamp
                })
        });
        let reason = if !fresh {
            Some(format!("older than the {} window", ask.within_text))
        } else if used {
            Some(format!("it already carried into gate \"{}\" once", ask.gate))
        } else {
            match ask.plan {
                None => None,
                Some(None) => Some("this gate guards a plan this run cannot compute".to_owned()),
                Some(Some(digest)) => match approval.plan_digest.as_deref() {
                    Some(d) if d == digest => None,
                    Some(d) => Some(format!("it approved plan {d}, and this gate guards plan {digest}")),
                    None => Some(format!("it approved no plan, and this gate guards plan {digest}")),
                },
            }
        };
        match reason {
            None => return Ok(Carry { request: request.clone(), approval: approval.clone() }),
            Some(r) if why.is_none() => why = Some(said(r)),
            Some(_) => {}
        }
    }
    Err(why.unwrap_or_else(|| format!("no approval of \"{}\" stands to carry", ask.source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(kind: FactKind, gate: &str, run: &str, ts: &str) -> GateFact {
        GateFact {
            version: 1,
            kind,
            op: "release".into(),
            gate: gate.into(),
            env: "prod".into(),
            resource: None,
            description: None,
            resolved_by: (kind != FactKind::Pending).then(|| "alex".into()),
            note: None,
            url: None,
            run_id: run.into(),
            git_sha: None,
            timestamp: ts.into(),
            expires_at: (kind == FactKind::Pending).then(|| "2026-09-09T00:00:00.000Z".into()),
            plan_digest: None,
            plan: None,
            relayed_by: None,
            seal: None,
            sealed: false,
            carried_from: None,
        }
    }

    fn ask(now: &str) -> Ask<'static> {
        Ask {
            owner: "release",
            gate: "prod",
            source: "staging",
            within: Duration::from_secs(24 * 3600),
            within_text: "24h",
            env: "prod",
            resource: None,
            plan: None,
            now: now.parse().unwrap(),
        }
    }

    const T0: &str = "2026-09-05T10:00:00.000Z";
    const T1: &str = "2026-09-05T11:00:00.000Z";

    #[test]
    fn a_genuine_approval_within_the_window_carries_once() {
        let mut facts =
            vec![fact(FactKind::Pending, "staging", "r1", T0), fact(FactKind::Resolution, "staging", "r1", T1)];
        let carry = find(&facts, &ask("2026-09-06T10:00:00Z")).unwrap();
        assert_eq!(carry.approval.timestamp, T1);
        let from = carry.carried_from("24h");
        assert_eq!((from.at.as_str(), from.approved_at.as_deref(), from.run_id.as_deref()), (T0, Some(T1), Some("r1")));
        // Recorded once, it carries no more.
        let mut used = fact(FactKind::Resolution, "prod", "r2", "2026-09-06T10:00:00.000Z");
        used.carried_from = Some(from);
        facts.push(used);
        let why = find(&facts, &ask("2026-09-06T10:30:00Z")).unwrap_err();
        assert!(why.contains("already carried into gate \"prod\" once"), "{why}");
    }

    #[test]
    fn an_approval_outside_the_window_or_answering_nothing_does_not_carry() {
        let facts = [fact(FactKind::Pending, "staging", "r1", T0), fact(FactKind::Resolution, "staging", "r1", T1)];
        let why = find(&facts, &ask("2026-09-06T11:00:01Z")).unwrap_err();
        assert!(why.contains("older than the 24h window"), "{why}");
        // A resolution copying another run's id answers no request.
        let stale = [fact(FactKind::Pending, "staging", "r2", T0), fact(FactKind::Resolution, "staging", "r1", T1)];
        assert_eq!(find(&stale, &ask(T1)).unwrap_err(), "no approval of \"staging\" stands to carry");
        // Another env's approval does not carry.
        let mut other = facts.clone();
        other.iter_mut().for_each(|f| f.env = "staging".into());
        assert!(find(&other, &ask(T1)).is_err());
    }

    #[test]
    fn a_plan_guarding_gate_carries_only_the_very_plan_approved() {
        let mut approval = fact(FactKind::Resolution, "staging", "r1", T1);
        approval.plan_digest = Some("sha256:aa".into());
        let facts = [fact(FactKind::Pending, "staging", "r1", T0), approval];
        let mut a = ask(T1);
        a.plan = Some(Some("sha256:aa"));
        assert!(find(&facts, &a).is_ok());
        a.plan = Some(Some("sha256:bb"));
        assert!(
            find(&facts, &a).unwrap_err().contains("it approved plan sha256:aa, and this gate guards plan sha256:bb")
        );
        a.plan = Some(None);
        assert!(find(&facts, &a).unwrap_err().contains("cannot compute"));
    }
}
