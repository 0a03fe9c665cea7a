//! Gates as facts: a gate is a decision recorded on the ledger, never a process held open.
//!
//! A run that reaches a gate reads the gate facts of its op and either walks through on a
//! resolution someone already recorded or records a pending fact and stops (exit 3). The facts of
//! one op form a sequence in ledger order (commit order on the branch); timestamps are
//! informational. [`decide`] is the pure rule over that sequence:
//!
//! - a *resolution* answers the newest *pending* fact of its (op, gate, resource) when it comes
//!   after it and carries that fact's `runId` (the original's resolutions, which carry none,
//!   answer the pending fact they follow): an approval decided on a stale copy of the ledger,
//!   re-appended after a newer request, answers nothing;
//! - an *expired* fact (`chant approve --expire`) clears the standing pending fact without
//!   approving (when it copied that fact's `runId`, as a resolution must);
//! - a *passed* fact, written by the run that walks through, spends the resolution: the next run
//!   that reaches the gate asks again (an approval admits one run, not every later one);
//! - a pending fact past its `expiresAt` no longer stands; running again before then reuses it
//!   rather than writing another.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use chant_store::ledger::{self, Record, RecordKind, ShardKey};

pub mod audit;
pub mod carry;
pub mod plan;
pub mod seal;
pub mod url;
mod wire;

pub use wire::NotAFact;

/// The default time a pending fact stands.
pub const DEFAULT_EXPIRY: &str = "48h";

/// The kind of a gate fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FactKind {
    /// A run reached the gate and is waiting.
    Pending,
    /// Someone approved.
    Resolution,
    /// Someone cleared the standing pending fact without approving.
    Expired,
    /// A run walked through on a resolution, spending it.
    Passed,
}

/// One gate fact, as recorded on the ledger. Reading is tolerant of the original's lines
/// (a resolution without `kind`, `environment` for `env`, no `runId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "wire::Wire")]
pub struct GateFact {
    /// Always 1.
    pub version: u32,
    /// The kind.
    pub kind: FactKind,
    /// The op that owns the gate.
    pub op: String,
    /// The gate's name.
    pub gate: String,
    /// The env the run was in; empty on an original line that names none (it stands in every
    /// env, see [`GateFact::in_env`]).
    pub env: String,
    /// The resource of a resource-mode dispatch.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resource: Option<String>,
    /// The gate's description (pending facts).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// Who resolved, expired or passed it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resolved_by: Option<String>,
    /// A note.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    /// Where approval happens, or happened.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// The run that reached the gate (copied onto resolutions); empty on an original line that
    /// carries none, and then not written.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub run_id: String,
    /// The commit that run was at (copied onto resolutions).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub git_sha: Option<String>,
    /// When the fact was written.
    pub timestamp: String,
    /// When a pending fact stops standing.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expires_at: Option<String>,
    /// The plan the gate guards (`sha256:` + 64 hex of the canonical plan), copied onto its
    /// resolution.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plan_digest: Option<String>,
    /// The plan itself (pending facts of a gate that guards an apply or teardown).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plan: Option<plan::GatePlan>,
    /// Who relayed a resolution made elsewhere (the original's `relayedBy`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub relayed_by: Option<String>,
    /// The SSH signature sealing a resolution (`approve --sign`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seal: Option<seal::GateSeal>,
    /// Whether the gate opens only on a sealed approval (pending facts of `sealed = true` gates).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub sealed: bool,
    /// On a resolution a run recorded from another gate's approval ([`carry`]): where it came
    /// from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub carried_from: Option<carry::CarriedFrom>,
}

impl Record for GateFact {
    const KIND: RecordKind = RecordKind::Gate;
    const NAME: &'static str = "gate fact";

    /// `_gates/<op>`: facts are kept per (member, op), with the env as a field.
    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        ShardKey::gate(member, &self.op)
    }
}

impl GateFact {
    /// Whether the fact belongs to `env`: its own env, or any env when the line names none.
    pub fn in_env(&self, env: &str) -> bool {
        self.env.is_empty() || self.env == env
    }

    fn is_for(&self, op: &str, gate: &str, resource: Option<&str>) -> bool {
        self.op == op && self.gate == gate && self.resource.as_deref() == resource
    }

    /// Whether this resolution (or expiry) answers `pending`: it copied that fact's `runId`, or it is one of
    /// the original's, which carry none.
    fn answers(&self, pending: &GateFact) -> bool {
        self.run_id.is_empty() || self.run_id == pending.run_id
    }
}

/// What a run reaching a gate does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A resolution answers the standing pending fact: walk through, carrying it.
    Approved {
        /// The pending fact it answers.
        pending: Box<GateFact>,
        /// The resolution.
        resolution: Box<GateFact>,
    },
    /// A pending fact stands and is unanswered: stop (exit 3) without writing another.
    Waiting {
        /// The standing fact.
        pending: Box<GateFact>,
    },
    /// No pending fact stands: write one and stop (exit 3).
    Ask,
}

/// Decides what a run reaching `gate` of `op` (for `resource`) does, given the op's gate facts in
/// ledger order and the current time.
pub fn decide(facts: &[GateFact], op: &str, gate: &str, resource: Option<&str>, now: Timestamp) -> Decision {
    let mine: Vec<&GateFact> = facts.iter().filter(|f| f.is_for(op, gate, resource)).collect();
    let Some(pi) = mine.iter().rposition(|f| f.kind == FactKind::Pending) else { return Decision::Ask };
    let pending = mine[pi];
    let after = &mine[pi + 1..];
    let cleared = after.iter().any(|f| match f.kind {
        FactKind::Expired => f.answers(pending),
        FactKind::Passed => true,
        FactKind::Pending | FactKind::Resolution => false,
    });
    if cleared {
        return Decision::Ask;
    }
    if let Some(resolution) = after.iter().find(|f| f.kind == FactKind::Resolution && f.answers(pending)) {
        return Decision::Approved { pending: Box::new(pending.clone()), resolution: Box::new((*resolution).clone()) };
    }
    let expired = pending.expires_at.as_deref().and_then(chant_store::clock::parse).is_some_and(|e| e <= now);
    if expired { Decision::Ask } else { Decision::Waiting { pending: Box::new(pending.clone()) } }
}

/// A pending gate as a status view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingGate {
    /// The standing fact.
    pub fact: GateFact,
}

/// Returns every standing, unanswered pending fact among `facts` (one per (op, gate, resource)).
pub fn pending(facts: &[GateFact], now: Timestamp) -> Vec<PendingGate> {
    let mut keys: Vec<(&str, &str, Option<&str>)> = Vec::new();
    for f in facts.iter().filter(|f| f.kind == FactKind::Pending) {
        let k = (f.op.as_str(), f.gate.as_str(), f.resource.as_deref());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|(op, gate, res)| match decide(facts, op, gate, res, now) {
            Decision::Waiting { pending } => Some(PendingGate { fact: *pending }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(kind: FactKind, ts: &str) -> GateFact {
        GateFact {
            version: 1,
            kind,
            op: "prod-apply".into(),
            gate: "rollout".into(),
            env: "prod".into(),
            resource: None,
            description: None,
            resolved_by: (kind != FactKind::Pending).then(|| "alex".into()),
            note: None,
            url: None,
            run_id: "r1".into(),
            git_sha: None,
            timestamp: ts.into(),
            expires_at: (kind == FactKind::Pending).then(|| "2026-09-07T12:00:00.000Z".into()),
            plan_digest: None,
            plan: None,
            relayed_by: None,
            seal: None,
            sealed: false,
            carried_from: None,
        }
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    const NOW: &str = "2026-09-05T12:00:00Z";

    #[test]
    fn no_fact_asks() {
        assert_eq!(decide(&[], "prod-apply", "rollout", None, at(NOW)), Decision::Ask);
    }

    #[test]
    fn a_standing_pending_fact_is_reused() {
        let f = [fact(FactKind::Pending, "2026-09-05T10:00:00Z")];
        assert!(matches!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Waiting { .. }));
        assert_eq!(pending(&f, at(NOW)).len(), 1);
    }

    #[test]
    fn an_expired_pending_fact_asks_again() {
        let f = [fact(FactKind::Pending, "2026-09-05T10:00:00Z")];
        assert_eq!(decide(&f, "prod-apply", "rollout", None, at("2026-09-08T00:00:00Z")), Decision::Ask);
    }

    #[test]
    fn a_resolution_after_the_pending_fact_approves() {
        let f = [fact(FactKind::Pending, "2026-09-05T10:00:00Z"), fact(FactKind::Resolution, "2026-09-05T11:00:00Z")];
        assert!(matches!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Approved { .. }));
        assert!(pending(&f, at(NOW)).is_empty());
    }

    #[test]
    fn ledger_order_decides_not_timestamps() {
        // An approval recorded before the pending fact does not answer it, whatever its timestamp.
        let f = [fact(FactKind::Resolution, "2026-09-06T00:00:00Z"), fact(FactKind::Pending, "2026-09-05T10:00:00Z")];
        assert!(matches!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Waiting { .. }));
    }

    #[test]
    fn a_passed_run_spends_the_resolution() {
        let f = [
            fact(FactKind::Pending, "2026-09-05T10:00:00Z"),
            fact(FactKind::Resolution, "2026-09-05T11:00:00Z"),
            fact(FactKind::Passed, "2026-09-05T11:30:00Z"),
        ];
        assert_eq!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Ask);
    }

    #[test]
    fn a_resolution_answers_only_the_run_it_copied() {
        // P1 (r1) is cleared, P2 (r2) asks again, and a resolution of r1 decided on a stale copy
        // lands after P2: it answers nothing.
        let mut p2 = fact(FactKind::Pending, "2026-09-05T10:30:00Z");
        p2.run_id = "r2".into();
        let stale = fact(FactKind::Resolution, "2026-09-05T10:10:00Z");
        let f = [
            fact(FactKind::Pending, "2026-09-05T10:00:00Z"),
            fact(FactKind::Expired, "2026-09-05T10:20:00Z"),
            p2,
            stale,
        ];
        match decide(&f, "prod-apply", "rollout", None, at(NOW)) {
            Decision::Waiting { pending } => assert_eq!(pending.run_id, "r2"),
            other => panic!("{other:?}"),
        }
        assert_eq!(pending(&f, at(NOW)).len(), 1);
        // A resolution of r2 after it answers it, the stale one standing in between or not.
        let mut fresh = fact(FactKind::Resolution, "2026-09-05T11:00:00Z");
        fresh.run_id = "r2".into();
        let f = [f.as_slice(), &[fresh]].concat();
        match decide(&f, "prod-apply", "rollout", None, at(NOW)) {
            Decision::Approved { resolution, .. } => assert_eq!(resolution.run_id, "r2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_resolution_without_a_run_id_answers_the_pending_fact_it_follows() {
        let mut original = fact(FactKind::Resolution, "2026-09-05T11:00:00Z");
        original.run_id = String::new();
        let f = [fact(FactKind::Pending, "2026-09-05T10:00:00Z"), original];
        assert!(matches!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Approved { .. }));
    }

    #[test]
    fn expire_clears_without_approving() {
        let f = [fact(FactKind::Pending, "2026-09-05T10:00:00Z"), fact(FactKind::Expired, "2026-09-05T11:00:00Z")];
        assert_eq!(decide(&f, "prod-apply", "rollout", None, at(NOW)), Decision::Ask);
    }

    #[test]
    fn resources_are_separate_gates() {
        let mut p = fact(FactKind::Pending, "2026-09-05T10:00:00Z");
        p.resource = Some("app".into());
        let mut r = fact(FactKind::Resolution, "2026-09-05T11:00:00Z");
        r.resource = Some("hud".into());
        let f = [p, r];
        assert!(matches!(decide(&f, "prod-apply", "rollout", Some("app"), at(NOW)), Decision::Waiting { .. }));
        assert_eq!(decide(&f, "prod-apply", "rollout", Some("hud"), at(NOW)), Decision::Ask);
    }

    #[test]
    fn facts_serialise_in_the_original_shape() {
        let v = serde_json::to_value(fact(FactKind::Pending, "2026-09-05T10:00:00.000Z")).unwrap();
        assert_eq!(v["kind"], "pending");
        assert_eq!(v["runId"], "r1");
        assert_eq!(v["expiresAt"], "2026-09-07T12:00:00.000Z");
        assert!(v.get("resolvedBy").is_none());
    }
}
