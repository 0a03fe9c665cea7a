//! Tearing an env down: its plan, read-only (what `lifecycle teardown <env>` prints), and the
//! `teardown(env)` step, which executes exactly that plan.
//!
//! The step binds the env's lexicons once, plans each one ([`teardown_plans`]), refuses while the
//! plan has holes unless the step says `allow_holes = true`, and hands each lexicon its own plan
//! ([`BoundLexicon::teardown`]): a lexicon deletes what its plan lists, never what it would
//! re-derive now. Behind a plan-bound gate, the plan executed is the plan approved: the gate's
//! plan of a teardown is [`gate_plan`] of this same plan, and the step refuses when the plan it
//! is about to execute has another digest than the one the gate let through.

use crate::gate::plan::{GatePlan, PlanVerb};
use chant_lexicon::BoundLexicon;
use chant_lexicon::estate::{EnvTeardownPlan, teardown_plans};

use super::{Error, Project};

/// The plan a gate guarding `teardown(env)` records and its approval is of: `drop
/// <lexicon>/<name>` for each candidate and `unobserved <lexicon>/<name>` (`*` for a whole
/// kind) for each hole, sorted.
pub fn gate_plan(plan: &EnvTeardownPlan) -> GatePlan {
    let mut changes = Vec::new();
    for lexicon in &plan.lexicons {
        changes.extend(lexicon.plan.candidates.keys().map(|name| format!("drop {}/{name}", lexicon.lexicon)));
        changes.extend(lexicon.plan.holes.iter().map(|h| {
            format!("unobserved {}/{}", lexicon.lexicon, h.name.clone().unwrap_or_else(|| format!("* ({})", h.kind)))
        }));
    }
    changes.sort();
    GatePlan { verb: PlanVerb::Teardown, env: plan.env.clone(), changes }
}

impl Project {
    /// Returns the teardown plan of `env`: every bound lexicon's candidates and holes
    /// ([`chant_lexicon::estate::teardown_plans`]). Read-only.
    ///
    /// # Errors
    ///
    /// Declaration, binding and ledger errors.
    pub fn teardown_plan(&self, member: Option<&str>, env: &str) -> Result<EnvTeardownPlan, Error> {
        let lexicons = self.lexicons(member, env)?;
        plan_of(env, &lexicons)
    }

    /// Executes the teardown plan of `env`: plans every lexicon `env` declares, refuses before
    /// anything changes while the plan has holes (unless `allow_holes`) or, when `approved` is
    /// the digest a gate let through, while the plan is another; then hands each lexicon its own
    /// plan, which it executes exactly, and records each teardown on the ledger.
    ///
    /// # Errors
    ///
    /// [`Error::TeardownHoles`], [`Error::TeardownPlanChanged`]; the first lexicon that fails
    /// (the ones before it are torn down and recorded).
    pub fn teardown_env(
        &self,
        member: Option<&str>,
        env: &str,
        allow_holes: bool,
        approved: Option<&str>,
    ) -> Result<String, Error> {
        let lexicons = self.lexicons(member, env)?;
        let plan = plan_of(env, &lexicons)?;
        if let Some(approved) = approved {
            // Redacted as the gate's plan was (RunServices::plan), so the digests compare.
            let now = gate_plan(&plan).redacted(|line| self.redactor.redact(line));
            if now.digest() != approved {
                return Err(Error::TeardownPlanChanged {
                    env: env.to_owned(),
                    approved: approved.to_owned(),
                    now: now.digest(),
                    lines: now.changes,
                });
            }
        }
        if !plan.is_complete() && !allow_holes {
            return Err(Error::TeardownHoles { env: env.to_owned(), holes: plan.hole_lines() });
        }
        let mut said = Vec::new();
        for (lexicon, planned) in lexicons.iter().zip(&plan.lexicons) {
            match lexicon.teardown(&planned.plan) {
                Ok(applied) => {
                    self.record(member, env, lexicon.name(), &applied.record)?;
                    said.extend(applied.said);
                }
                Err(e) if e.is_not_implemented() => said.push(format!("{e}: observed only")),
                Err(e) => return Err(Error::Hook(e)),
            }
        }
        if said.is_empty() {
            return Err(Error::NothingDeclared { env: env.to_owned(), verb: "tear down".to_owned() });
        }
        let said = said.join("; ");
        Ok(if plan.is_complete() { said } else { format!("{said} (with {} hole(s) allowed)", plan.hole_count) })
    }
}

fn plan_of(env: &str, lexicons: &[BoundLexicon]) -> Result<EnvTeardownPlan, Error> {
    teardown_plans(env, lexicons).map_err(|e| Error::Declared {
        env: env.to_owned(),
        lexicon: "teardown plan".to_owned(),
        source: Box::new(e),
    })
}
