//! `tick <op> --plan`: observe and plan exactly as a tick does, and write nothing: no record, no
//! dispatch, no lease.
//!
//! The preview reads the op's newest tick record for its flap runs, observes through the same
//! [`super::observe()`] a tick uses, and plans through the same [`super::plan_with()`]. Each
//! `run()` that would be dispatched is assumed to succeed (the only thing a preview cannot
//! know), so its outcomes, flap runs, summary and symptom are what the next tick records when
//! nothing changes in between and its dispatches succeed. Every rule (and resource) is listed,
//! fired or not, with what it would do.

use serde::Serialize;

use crate::project::Project;
use chant_lexicon::model::{OpDocument, Rule};
use chant_store::ledger::{ShardKey, Unreadable};

use super::execute::Error;
use super::plan::{DispatchResult, is_refusal, next_flap, record_dispatch};
use super::reading::dsl;
use super::record::{Action, Fired, FlapEntry, Outcome, PlannedSymptom, Summary, TickRecord};

/// What one rule (for one resource, in resource mode) would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleVerdict {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The predicate, in the DSL's words.
    pub when: String,
    /// The rule's `why`.
    pub why: String,
    /// Whether its predicate holds.
    pub fired: bool,
    /// `not-fired`, `ran` (would be dispatched), `reported`, `refused` (by the dial, or the
    /// backstop on the adopt signal), `skipped-budget` or `skipped-flap`.
    pub verdict: &'static str,
    /// The op a `run()` rule targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Why (a report's reason, a refusal, a damping, the budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A planned tick, as `tick --plan` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The shape's version, 1.
    pub version: u32,
    /// The ConvergeOp.
    pub op: String,
    /// Its env.
    pub env: String,
    /// Its dial.
    pub dial: &'static str,
    /// Its budget.
    pub budget: u64,
    /// The symptom the tick would plan from (absent when the observation failed).
    pub symptom: Option<PlannedSymptom>,
    /// Every rule (and resource), in plan order.
    pub rules: Vec<RuleVerdict>,
    /// What the tick record's `fired` would be.
    pub fired: Vec<Fired>,
    /// What its `firedRuleIds` would be.
    pub fired_rule_ids: Vec<String>,
    /// What its `outcomes` would be, dispatches assumed to succeed.
    pub outcomes: Vec<Outcome>,
    /// What its `flap` would be.
    pub flap: Vec<FlapEntry>,
    /// What its `summary` would be.
    pub summary: Summary,
    /// What its `log` would be.
    pub log: String,
    /// Why the tick would fail (an observation that cannot be trusted).
    pub error: Option<String>,
    /// Unreadable lines met reading the newest tick record.
    #[serde(skip)]
    pub unreadable: Vec<Unreadable>,
}

/// Previews one tick of `doc` against `project`: observes and plans, writes nothing.
///
/// # Errors
///
/// [`Error`] when `doc` is not a ConvergeOp or its newest record cannot be read; a failed
/// observation is the preview's `error`, as it would be the tick's.
pub fn preview(project: &Project, doc: &OpDocument) -> Result<Preview, Error> {
    let Some(spec) = &doc.converge else { return Err(Error::NotConverge(doc.name.to_string())) };
    let env = doc.env.as_deref().unwrap_or_default().to_owned();
    let member = doc.member.as_deref();
    let key = ShardKey::converge(member, &env, &doc.name)?;
    let latest = project.ledger.latest_typed::<TickRecord>(&key)?;
    let last_tick = latest.record.as_ref().map(|stored| stored.record.timestamp.clone());
    let (previous, restarts): (Vec<FlapEntry>, Vec<super::limit::RestartEntry>) =
        latest.record.map(|stored| (stored.record.flap, stored.record.restarts)).unwrap_or_default();
    // The controls as a tick now would plan with them: a person's `undamp` or `resume` since the
    // newest tick taken into account, and a damped run past its cool-off dispatching once more.
    let control = ShardKey::control(member, &env, &doc.name)?;
    let (previous, restarts) =
        super::control::taken_into_account(&project.ledger, &control, previous, restarts, last_tick.as_deref())?;
    let now = project.ledger.clock().now();
    let restarts = super::limit::current(&restarts, spec.restart_limit.as_ref(), &spec.rules, now);
    let held = super::window::hold(&spec.windows, now);
    let mut out = Preview {
        version: 1,
        op: doc.name.to_string(),
        env: env.clone(),
        dial: spec.dial.as_str(),
        budget: spec.budget,
        symptom: None,
        rules: Vec::new(),
        fired: Vec::new(),
        fired_rule_ids: Vec::new(),
        outcomes: Vec::new(),
        flap: previous.clone(),
        summary: Summary::default(),
        log: String::new(),
        error: None,
        unreadable: latest.unreadable,
    };
    match super::observe(project, spec, &env, member) {
        Err(e) => out.error = Some(project.redactor.record(&e.to_string())),
        Ok(symptom) => {
            let subject = symptom.subject();
            let controls = super::Controls {
                held: held.as_ref(),
                limit: spec.restart_limit.as_ref(),
                restarts: &restarts,
                op: &doc.name,
            };
            let planned_with = super::cooled(&previous, &spec.rules, now);
            let plan = super::plan_with_controls(project, spec, subject, &planned_with, &controls);
            let mut outcomes = plan.outcomes.clone();
            for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
                record_dispatch(o, DispatchResult::Ok);
            }
            out.rules = verdicts(&spec.rules, &plan.evaluated, &outcomes);
            out.flap = next_flap(&plan, &outcomes, &spec.rules);
            out.fired_rule_ids = plan.fired_rule_ids();
            out.fired = plan.fired;
            out.summary = super::summarise(subject, &outcomes);
            out.outcomes = outcomes;
            out.symptom = Some(symptom);
        }
    }
    out.log = out.summary.line(&env);
    if let Some(held) = &held {
        out.log = format!("{} {}", out.log, held.line());
    }
    Ok(out)
}

/// One verdict per evaluated (rule, resource), in plan order.
fn verdicts(rules: &[Rule], evaluated: &[(super::plan::FlapKey, bool)], outcomes: &[Outcome]) -> Vec<RuleVerdict> {
    evaluated
        .iter()
        .filter_map(|((rule_id, resource), holds)| {
            let rule = rules.iter().find(|r| &r.id == rule_id)?;
            let outcome = outcomes.iter().find(|o| &o.rule_id == rule_id && &o.resource == resource);
            let verdict = match outcome {
                None => "not-fired",
                Some(o) if is_refusal(o) => "refused",
                Some(o) => o.action.as_str(),
            };
            let target = rule.then.target().map(ToString::to_string);
            Some(RuleVerdict {
                rule_id: rule_id.clone(),
                resource: resource.clone(),
                when: dsl(&rule.when),
                why: rule.why.clone(),
                fired: *holds,
                verdict,
                op: target,
                reason: outcome.and_then(|o| o.reason.clone()),
            })
        })
        .collect()
}
