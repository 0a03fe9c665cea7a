//! The plan a gate guards. A gate followed (later in its op) by an `apply` or `teardown` step
//! guards that change: the run that reaches it records the plan on its pending fact, as a list of
//! changes (`create files/a.txt`, `update postgres/app.users (columns)`, `drop files/b.txt`) and
//! its digest, `sha256:` and 64 hex characters of the canonical JSON of the [`GatePlan`]. The
//! approval copies the digest; the run after it recomputes the plan, and a different digest
//! refuses the approval. An update names the properties that differ and the values each changes
//! from and to (`update postgres/app.users.bio (type: character varying(200) -> text)`), so the
//! digest binds the values approved: an approval of a change from one value is refused when the
//! run finds another (a column that became `text` since a `varchar(200)` narrowing was approved).
//! The values pass the project's redactor ([`GatePlan::redacted`]) as every record does, so a
//! configured secret never lands on the ledger.
//!
//! The plan a pending fact lists is only shown (`approve --show`, `operator status`) or approved
//! after [`check_recorded`] recomputed its digest from the recorded plan document and found the
//! digest recorded beside it: a request that lists a harmless plan beside the digest of another
//! (written by hand onto the ledger) is refused and reported, never shown as what is approved.

use serde::{Deserialize, Serialize};

use chant_lexicon::model::{OpDocument, Step};
use chant_lexicon::observe::{ChangeAction, ChangeSet};

/// The verb a gate guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanVerb {
    /// `apply(env)`: creates, updates and (with `owned-only`) deletes.
    Apply,
    /// `teardown(env)`: drops what chant owns.
    Teardown,
}

/// What a guarded step would change, in a canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatePlan {
    /// The verb.
    pub verb: PlanVerb,
    /// The env it acts on.
    pub env: String,
    /// One line per change, sorted.
    pub changes: Vec<String>,
}

impl GatePlan {
    /// The plan of `verb` on `env` from the env's change sets: for an apply every create,
    /// update and delete; for a teardown a drop of every present entity the env declares or owns
    /// (noop, update and delete entries); for both, every entity that could not be observed.
    pub fn from_change_sets(verb: PlanVerb, env: &str, change_sets: &[ChangeSet]) -> Self {
        let mut changes = Vec::new();
        for cs in change_sets {
            for e in &cs.entries {
                let what = format!("{}/{}", cs.component, e.name);
                let line = match (verb, e.action) {
                    (PlanVerb::Apply, _) => match e.apply_line(&cs.component) {
                        Some(line) => line,
                        None => continue,
                    },
                    (PlanVerb::Teardown, ChangeAction::Noop | ChangeAction::Update | ChangeAction::Delete) => {
                        format!("drop {what}")
                    }
                    // What could not be read is part of what is approved: the approver sees it,
                    // and a run that can read it plans something else.
                    (_, ChangeAction::Unobserved) => format!("unobserved {what}"),
                    _ => continue,
                };
                changes.push(line);
            }
        }
        changes.sort();
        GatePlan { verb, env: env.to_owned(), changes }
    }

    /// The plan with `redact` applied to every change line (the project's redactor, as for every
    /// record), sorted again.
    pub fn redacted(mut self, redact: impl Fn(&str) -> String) -> Self {
        self.changes = self.changes.iter().map(|c| redact(c)).collect();
        self.changes.sort();
        self
    }

    /// `sha256:` and 64 hex characters of the plan's canonical JSON.
    pub fn digest(&self) -> String {
        let text = chant_store::canonical::to_string(self).unwrap_or_else(|_| format!("{self:?}"));
        sha256(text.as_bytes())
    }

    /// The plan in words, one line each (`nothing to change` when empty).
    pub fn lines(&self) -> Vec<String> {
        let verb = match self.verb {
            PlanVerb::Apply => "apply",
            PlanVerb::Teardown => "teardown",
        };
        let mut out = vec![format!("{verb} {}:", self.env)];
        if self.changes.is_empty() {
            out.push("  nothing to change".to_owned());
        }
        out.extend(self.changes.iter().map(|c| format!("  {c}")));
        out
    }
}

/// Why the plan a pending fact lists cannot be shown or approved. Returned by
/// [`check_recorded`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordedPlanError {
    /// The recorded plan's digest is not the digest recorded beside it.
    #[error(
        "the request of gate {gate:?} of {op} ({run}) lists a plan whose digest is {computed}, but records the digest {recorded}: the plan shown is not the plan a resolution would approve"
    )]
    Mismatch {
        /// The op.
        op: String,
        /// The gate.
        gate: String,
        /// `run <id>` of the request.
        run: String,
        /// The digest recorded on the request (what an approval copies).
        recorded: String,
        /// The digest of the plan document it lists.
        computed: String,
    },
    /// The request lists a plan and no digest to bind an approval to.
    #[error(
        "the request of gate {gate:?} of {op} ({run}) lists a plan (digest {computed}) but records no digest to bind an approval to it"
    )]
    NoDigest {
        /// The op.
        op: String,
        /// The gate.
        gate: String,
        /// `run <id>` of the request.
        run: String,
        /// The digest of the plan document it lists.
        computed: String,
    },
}

/// Checks the plan pending fact `fact` lists against the digest it records: the digest is
/// recomputed from the recorded plan document. A fact that lists no plan passes (an approval of
/// it binds the recorded digest, if any, and the run recomputes the plan).
///
/// # Errors
///
/// [`RecordedPlanError`] naming the request and both digests.
pub fn check_recorded(fact: &super::GateFact) -> Result<(), RecordedPlanError> {
    let Some(plan) = &fact.plan else { return Ok(()) };
    let computed = plan.digest();
    let run = if fact.run_id.is_empty() { "no run recorded".to_owned() } else { format!("run {}", fact.run_id) };
    let (op, gate) = (fact.op.clone(), fact.gate.clone());
    match &fact.plan_digest {
        Some(recorded) if *recorded == computed => Ok(()),
        Some(recorded) => Err(RecordedPlanError::Mismatch { op, gate, run, recorded: recorded.clone(), computed }),
        None => Err(RecordedPlanError::NoDigest { op, gate, run, computed }),
    }
}

/// `sha256:` and 64 hex characters of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `s` is a plan digest: `sha256:` and 64 lowercase hex characters.
pub fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

/// The step gate `gate` of `doc` guards: the first `apply` or `teardown` after it, in its phase
/// or a later one (its env may still hold `${VAR}`: expand it before [`target`]).
pub fn guarded<'a>(doc: &'a OpDocument, gate: &str) -> Option<&'a Step> {
    let steps: Vec<&Step> = doc.phases.iter().flat_map(|p| &p.steps).collect();
    let at = steps.iter().position(|s| matches!(s, Step::Gate { name, .. } if name.as_str() == gate))?;
    steps[at + 1..].iter().copied().find(|s| target(s).is_some())
}

/// The verb and env of an `apply` or `teardown` step; `None` for any other step.
pub fn target(step: &Step) -> Option<(PlanVerb, String)> {
    match step {
        Step::Apply { args, .. } => Some((PlanVerb::Apply, args.env.clone())),
        Step::Teardown { args, .. } => Some((PlanVerb::Teardown, args.env.clone())),
        _ => None,
    }
}

/// What changed from `approved` to `now`: `+ <change>` for each new line, `- <change>` for each
/// one gone.
pub fn changed(approved: &[String], now: &[String]) -> Vec<String> {
    let mut out: Vec<String> = now.iter().filter(|c| !approved.contains(c)).map(|c| format!("+ {c}")).collect();
    out.extend(approved.iter().filter(|c| !now.contains(c)).map(|c| format!("- {c}")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(json: serde_json::Value) -> Vec<ChangeSet> {
        serde_json::from_value(json).unwrap()
    }

    fn entries() -> Vec<ChangeSet> {
        let ev = serde_json::json!({"declared": true, "inLastApply": true, "live": true, "observed": true});
        sets(serde_json::json!([{"component": "files", "entries": [
            {"name": "a.txt", "action": "create", "evidence": ev},
            {"name": "b.txt", "action": "update", "evidence": ev, "deltas": [{"property": "content", "declared": "x"}]},
            {"name": "c.txt", "action": "noop", "evidence": ev},
            {"name": "d.txt", "action": "adopt", "evidence": ev},
            {"name": "e.txt", "action": "unobserved", "evidence": ev},
        ]}]))
    }

    #[test]
    fn an_apply_plans_creates_updates_and_deletes_and_a_teardown_drops() {
        let apply = GatePlan::from_change_sets(PlanVerb::Apply, "site", &entries());
        assert_eq!(
            apply.changes,
            ["create files/a.txt", "unobserved files/e.txt", "update files/b.txt (content: (none) -> x)"]
        );
        let teardown = GatePlan::from_change_sets(PlanVerb::Teardown, "site", &entries());
        assert_eq!(teardown.changes, ["drop files/b.txt", "drop files/c.txt", "unobserved files/e.txt"]);
        assert_eq!(apply.lines()[0], "apply site:");
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_plan() {
        let plan = GatePlan { verb: PlanVerb::Apply, env: "site".into(), changes: vec!["create files/a.txt".into()] };
        let d = plan.digest();
        assert!(is_digest(&d), "{d}");
        let canonical = r#"{"changes":["create files/a.txt"],"env":"site","verb":"apply"}"#;
        assert_eq!(d, sha256(canonical.as_bytes()));
        assert_eq!(sha256(b"abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let other = GatePlan { changes: vec!["create files/b.txt".into()], ..plan.clone() };
        assert_ne!(other.digest(), d);
        assert!(!is_digest("sha256:ABC"));
    }

    #[test]
    fn an_update_binds_the_values_it_changes_from_and_to() {
        let column = |live: &str| {
            let ev = serde_json::json!({"declared": true, "inLastApply": true, "live": true, "observed": true});
            sets(serde_json::json!([{"component": "postgres", "entries": [
                {"name": "app.users.bio", "action": "update", "evidence": ev,
                 "deltas": [{"property": "type", "declared": "character varying(100)", "live": live}]},
            ]}]))
        };
        let approved = GatePlan::from_change_sets(PlanVerb::Apply, "db", &column("character varying(200)"));
        assert_eq!(
            approved.changes,
            ["update postgres/app.users.bio (type: character varying(200) -> character varying(100))"]
        );
        let now = GatePlan::from_change_sets(PlanVerb::Apply, "db", &column("text"));
        assert_ne!(approved.digest(), now.digest(), "the same property, another value: another plan");
        assert_eq!(
            changed(&approved.changes, &now.changes),
            [
                "+ update postgres/app.users.bio (type: text -> character varying(100))",
                "- update postgres/app.users.bio (type: character varying(200) -> character varying(100))"
            ]
        );
        let redacted = now.redacted(|c| c.replace("text", "[redacted]"));
        assert_eq!(redacted.changes, ["update postgres/app.users.bio (type: [redacted] -> character varying(100))"]);
    }

    #[test]
    fn a_recorded_plan_must_hash_to_the_recorded_digest() {
        let harmless =
            GatePlan { verb: PlanVerb::Apply, env: "site".into(), changes: vec!["create files/a.txt".into()] };
        let teardown =
            GatePlan { verb: PlanVerb::Teardown, env: "site".into(), changes: vec!["drop files/a.txt".into()] };
        let line = serde_json::json!({"version": 1, "kind": "pending", "op": "site-apply", "gate": "ship", "env": "site",
            "runId": "r1", "timestamp": "2026-03-01T10:00:00.000Z", "expiresAt": "2026-03-01T11:00:00.000Z",
            "planDigest": harmless.digest(), "plan": harmless});
        let mut fact: super::super::GateFact = serde_json::from_value(line).unwrap();
        assert_eq!(check_recorded(&fact), Ok(()));
        fact.plan_digest = Some(teardown.digest());
        let err = check_recorded(&fact).unwrap_err();
        let said = err.to_string();
        assert!(said.contains("gate \"ship\" of site-apply (run r1)"), "{said}");
        assert!(said.contains(&harmless.digest()) && said.contains(&teardown.digest()), "{said}");
        fact.plan_digest = None;
        assert!(matches!(check_recorded(&fact), Err(RecordedPlanError::NoDigest { .. })));
        fact.plan = None;
        assert_eq!(check_recorded(&fact), Ok(()));
    }

    #[test]
    fn changed_names_what_came_and_went() {
        let a = vec!["create files/a.txt".to_owned(), "create files/b.txt".to_owned()];
        let b = vec!["create files/b.txt".to_owned(), "create files/c.txt".to_owned()];
        assert_eq!(changed(&a, &b), ["+ create files/c.txt", "- create files/a.txt"]);
    }
}
