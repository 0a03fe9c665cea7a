//! Planning a tick: from a symptom and a rule table to the outcome of every fired rule, before
//! anything is dispatched. Pure: no I/O, no clock.
//!
//! Planning is rule-major in authored order, and within a rule per resource in observer order.
//! For a rule whose predicate holds: it is recorded as fired; flap damping; `unknown` never
//! remediates; reports use no budget; the dial × the target's verb class (before any budget is
//! used); the budget; else the rule is dispatched. [`record_dispatch`] then folds each dispatch
//! result in, and [`next_flap`] computes the next flap run lengths.

use std::collections::BTreeMap;

use chant_lexicon::model::contract::{self, ClassKind, DialKind};
use chant_lexicon::model::{
    Action as RuleAction, ConvergeSymptom, EnvStatus, ResourceStatus, ResourceSymptom, Rule, evaluate,
};

use super::limit::RestartEntry;
use super::record::{Action, Fired, FlapEntry, Outcome};
use super::window::Held;
use chant_lexicon::model::RestartLimit;

/// What a tick evaluates its rules against.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// Environment mode: one symptom.
    Env(&'a ConvergeSymptom),
    /// Resource mode: one symptom per observed resource, in observer order.
    Resources(&'a [ResourceSymptom]),
}

/// The inputs of planning.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// The rules, in authored order.
    pub rules: &'a [Rule],
    /// The dial.
    pub dial: DialKind,
    /// The most dispatches this tick.
    pub budget: u64,
    /// What the rules are evaluated against.
    pub subject: Subject<'a>,
    /// The flap run lengths of the newest recorded tick of this op.
    pub previous_flap: &'a [FlapEntry],
}

/// What a person or the op's declaration holds a tick to beyond its rules: the sync windows'
/// hold and the restart limit with its counts. The default holds nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Controls<'a> {
    /// Set when the op's sync windows hold this tick: every dispatch of a mutating target is
    /// `skipped-window`.
    pub held: Option<&'a Held>,
    /// The op's restart limit.
    pub limit: Option<&'a RestartLimit>,
    /// The restart counts this tick plans with ([`super::limit::current`]).
    pub restarts: &'a [RestartEntry],
    /// The op's name, for the commands a reason names.
    pub op: &'a str,
}

/// How the reason of a dispatch the dial (or the adopt backstop) refused begins.
pub const REFUSAL: &str = "runtime backstop: ";

/// Returns true for a `reported` outcome whose `run()` was refused by the dial × the target's
/// class, or by the backstop on the adopt signal.
pub fn is_refusal(outcome: &Outcome) -> bool {
    outcome.action == Action::Reported && outcome.reason.as_deref().is_some_and(|r| r.starts_with(REFUSAL))
}

/// The key of a flap run: a rule, and a resource in resource mode.
pub type FlapKey = (String, Option<String>);

/// A planned tick: the fired rules, their outcomes (`ran` ones still to be dispatched) and the
/// predicate verdicts the flap runs need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Every (rule, resource) whose predicate held, in plan order.
    pub fired: Vec<Fired>,
    /// One outcome per fired (rule, resource); `ran` means "to dispatch".
    pub outcomes: Vec<Outcome>,
    /// Every (rule, resource) evaluated, with whether its predicate held.
    pub evaluated: Vec<(FlapKey, bool)>,
    /// The previous run lengths, by key.
    pub previous: BTreeMap<FlapKey, u64>,
}

impl Plan {
    /// Returns the distinct fired rule ids, in first-fired order.
    pub fn fired_rule_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for f in &self.fired {
            if !ids.contains(&f.rule_id) {
                ids.push(f.rule_id.clone());
            }
        }
        ids
    }
}

/// Plans a tick. `class_of` returns the verb class of a `run()` target, or `None` when no op of
/// that name is in the binary (the rule is then reported, never dispatched).
pub fn plan(input: &PlanInput<'_>, class_of: &dyn Fn(&str) -> Option<ClassKind>) -> Plan {
    plan_controlled(input, &Controls::default(), class_of)
}

/// Plans a tick as [`plan`] does, under `controls`: after the dial, a rule that reached its
/// restart limit for its resource is `given-up`, then a tick its sync windows hold skips every
/// dispatch of a mutating target (`skipped-window`); neither uses the budget.
pub fn plan_controlled(
    input: &PlanInput<'_>,
    controls: &Controls<'_>,
    class_of: &dyn Fn(&str) -> Option<ClassKind>,
) -> Plan {
    let previous: BTreeMap<FlapKey, u64> =
        input.previous_flap.iter().map(|f| ((f.rule_id.clone(), f.resource.clone()), f.run)).collect();
    let mut out = Plan { fired: Vec::new(), outcomes: Vec::new(), evaluated: Vec::new(), previous };
    let mut dispatched = 0u64;
    for rule in input.rules {
        match input.subject {
            Subject::Env(s) => {
                let unknown = (s.status == EnvStatus::Unknown).then(|| unknown_reason(s));
                let holds = evaluate(&rule.when, s);
                step(&mut out, input, controls, rule, None, holds, unknown, &mut dispatched, class_of);
            }
            Subject::Resources(resources) => {
                for r in resources {
                    let unknown = (r.status == ResourceStatus::Unknown)
                        .then(|| format!("resource \"{}\" is unknown; unknown never remediates", r.resource))
                        .or_else(|| unread(rule, r));
                    let holds = evaluate(&rule.when, r);
                    step(&mut out, input, controls, rule, Some(&r.resource), holds, unknown, &mut dispatched, class_of);
                }
            }
        }
    }
    out
}

/// Why a rule that reads a reading (`mem_mb`, ...) the resource lacks must not remediate it: the
/// reading is unknown, and unknown never remediates.
fn unread(rule: &Rule, r: &ResourceSymptom) -> Option<String> {
    use chant_lexicon::model::Symptom as _;
    let field = contract::READING_FIELDS.iter().find(|f| rule.when.references(f) && r.field(f).is_none())?;
    Some(format!("resource \"{}\" has no {field} reading; unknown never remediates", r.resource))
}

fn unknown_reason(s: &ConvergeSymptom) -> String {
    let reasons: Vec<&str> = s.unobserved_reasons.iter().map(|r| r.as_str()).collect();
    let reasons = if reasons.is_empty() { "unobserved".to_owned() } else { reasons.join(", ") };
    format!("symptom is unknown ({reasons}); unknown never remediates")
}

#[expect(clippy::too_many_arguments, reason = "one planning step reads the whole tick's state")]
fn step(
    out: &mut Plan,
    input: &PlanInput<'_>,
    controls: &Controls<'_>,
    rule: &Rule,
    resource: Option<&str>,
    holds: bool,
    unknown: Option<String>,
    dispatched: &mut u64,
    class_of: &dyn Fn(&str) -> Option<ClassKind>,
) {
    let key: FlapKey = (rule.id.to_string(), resource.map(str::to_owned));
    out.evaluated.push((key.clone(), holds));
    if !holds {
        return;
    }
    out.fired.push(Fired { rule_id: rule.id.to_string(), resource: resource.map(str::to_owned) });
    let target = rule.then.target().map(ToString::to_string);
    let proposal = matches!(rule.then, RuleAction::Propose { .. });
    let mut o = Outcome {
        rule_id: rule.id.to_string(),
        action: Action::Reported,
        source: rule.source.clone(),
        op: target.clone(),
        resource: resource.map(str::to_owned),
        gate_name: None,
        gate_owner: None,
        reason: None,
        url: None,
        branch: None,
        dispatch_failed: None,
        entities: Vec::new(),
    };
    let run_length = out.previous.get(&key).copied().unwrap_or(0);
    let threshold = rule.flap_threshold();
    if run_length >= threshold {
        o.action = Action::SkippedFlap;
        o.reason = Some(format!(
            "dispatched {run_length} consecutive ticks without its predicate clearing (threshold {threshold}); damped until it clears, for one more dispatch after the {} cool-off, or until `chant operator undamp`",
            COOL_OFF_WORDS
        ));
        out.outcomes.push(o);
        return;
    }
    let Some(target) = target else {
        if let RuleAction::Report { reason } = &rule.then {
            o.reason = Some(reason.clone());
        }
        out.outcomes.push(o);
        return;
    };
    if let Some(reason) = unknown {
        o.reason = Some(reason);
        out.outcomes.push(o);
        return;
    }
    let verb = if proposal { "propose" } else { "run" };
    let Some(class) = class_of(&target) else {
        o.reason = Some(format!("{verb}(\"{target}\") names no op compiled into this binary; nothing was dispatched"));
        out.outcomes.push(o);
        return;
    };
    if proposal {
        if let Err(refusal) = contract::permits_proposal(input.dial, class) {
            o.reason = Some(format!("{REFUSAL}{}", refusal.message(&target)));
        } else if *dispatched >= input.budget {
            o.action = Action::SkippedBudget;
            o.reason = Some(format!("the budget of {} dispatch(es) per tick is used; not queued", input.budget));
        } else {
            // Planned: the tick writes the proposal (and says so, or why not, in the reason).
            *dispatched += 1;
            o.action = Action::Proposed;
        }
        out.outcomes.push(o);
        return;
    }
    if let Err(refusal) = contract::permits(input.dial, class) {
        o.reason = Some(format!("{REFUSAL}{}", refusal.message(&target)));
        out.outcomes.push(o);
        return;
    }
    if class != ClassKind::ReadOnly
        && let Some(field) = contract::adopt_safe_field(&rule.when)
    {
        o.reason = Some(format!("{REFUSAL}{}", contract::adopt_safe_refusal(&target, field, false)));
        out.outcomes.push(o);
        return;
    }
    if class != ClassKind::ReadOnly
        && let Some(limit) = controls.limit
    {
        let entry = controls.restarts.iter().find(|e| e.rule_id == key.0 && e.resource == key.1);
        if super::limit::reached(entry, limit) {
            let label = match resource {
                Some(r) => format!("{} [{r}]", rule.id),
                None => rule.id.to_string(),
            };
            o.action = Action::GivenUp;
            o.reason =
                Some(super::limit::reason(&label, limit, entry.and_then(|e| e.given_up_at.as_deref()), controls.op));
            out.outcomes.push(o);
            return;
        }
    }
    if class != ClassKind::ReadOnly
        && let Some(held) = controls.held
    {
        o.action = Action::SkippedWindow;
        o.reason = Some(format!(
            "held by the op's sync windows ({}); nothing mutating is dispatched while they hold",
            held.describe()
        ));
        out.outcomes.push(o);
        return;
    }
    if *dispatched >= input.budget {
        o.action = Action::SkippedBudget;
        o.reason = Some(format!("the budget of {} dispatch(es) per tick is used; not queued", input.budget));
        out.outcomes.push(o);
        return;
    }
    *dispatched += 1;
    o.action = Action::Ran;
    out.outcomes.push(o);
}

/// How one dispatch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchResult {
    /// Exit 0.
    Ok,
    /// Exit 3 with a readable gate name.
    Gated {
        /// The gate.
        gate: String,
        /// Where it can be approved, when known.
        url: Option<String>,
        /// The component whose gate it is, when it is a component's.
        owner: Option<String>,
    },
    /// Any other failure, already redacted and sanitised.
    Failed {
        /// The error line.
        error: String,
    },
    /// Not dispatched: the tick's fence found its lease lost before this dispatch.
    Fenced {
        /// Why, already redacted and sanitised.
        why: String,
    },
    /// Not dispatched: the ledger cannot be written (a stale lock, an unreadable branch), so
    /// what the dispatch did could not be recorded.
    Unrecordable {
        /// Why, already redacted and sanitised.
        why: String,
    },
}

/// Folds a dispatch result into its `ran` outcome.
pub fn record_dispatch(outcome: &mut Outcome, result: DispatchResult) {
    let op = outcome.op.clone().unwrap_or_default();
    match result {
        DispatchResult::Ok => {}
        DispatchResult::Gated { gate, url, owner } => {
            outcome.action = Action::Gated;
            let by = owner.as_deref().unwrap_or(&op);
            outcome.reason = Some(format!(
                "dispatch of \"{op}\" hit gate \"{gate}\"; recorded as a pending fact, not retried; resolve with `chant approve {by} {gate}`"
            ));
            outcome.gate_name = Some(gate);
            outcome.gate_owner = owner;
            outcome.url = url;
        }
        DispatchResult::Failed { error } => {
            outcome.action = Action::Reported;
            outcome.dispatch_failed = Some(true);
            outcome.reason = Some(format!("dispatch of \"{op}\" failed: {error}"));
        }
        DispatchResult::Fenced { why } => {
            outcome.action = Action::Reported;
            outcome.reason = Some(format!("\"{op}\" was not dispatched: {why}; a fenced tick dispatches nothing more"));
        }
        DispatchResult::Unrecordable { why } => {
            outcome.action = Action::Reported;
            outcome.reason = Some(format!(
                "\"{op}\" was not dispatched: the ledger cannot be written ({why}); nothing acts that could not be recorded"
            ));
        }
    }
}

/// Computes the flap run lengths after a tick: a false predicate resets its run; a dispatch (ran,
/// or failed) extends it; gates, budget skips, damping and reports leave it as it was; keys not
/// evaluated this tick keep their runs when their rule still exists.
pub fn next_flap(plan: &Plan, outcomes: &[Outcome], rules: &[Rule]) -> Vec<FlapEntry> {
    let mut runs = plan.previous.clone();
    runs.retain(|(rule, _), _| rules.iter().any(|r| &r.id == rule));
    for (key, holds) in &plan.evaluated {
        if !holds {
            runs.remove(key);
        }
    }
    for o in outcomes.iter().filter(|o| o.counts_for_flap()) {
        *runs.entry((o.rule_id.clone(), o.resource.clone())).or_insert(0) += 1;
    }
    // Authored rule order, then resource name, so records are stable.
    let order = |id: &str| rules.iter().position(|r| r.id == id).unwrap_or(usize::MAX);
    let mut entries: Vec<FlapEntry> = runs
        .into_iter()
        .filter(|(_, run)| *run > 0)
        .map(|((rule_id, resource), run)| FlapEntry { rule_id, resource, run, damped_at: None })
        .collect();
    entries.sort_by(|a, b| order(&a.rule_id).cmp(&order(&b.rule_id)).then(a.resource.cmp(&b.resource)));
    entries
}

/// How long a damped rule waits before it dispatches once more: a cause fixed by hand (a typo in
/// the op it runs, a permission granted) then clears it without a hand step, and a cause still
/// there damps it again for another cool-off.
pub const FLAP_COOL_OFF: jiff::SignedDuration = jiff::SignedDuration::from_secs(30 * 60);

/// [`FLAP_COOL_OFF`] in words, for reasons and docs.
pub const COOL_OFF_WORDS: &str = "30-minute";

/// The flap runs a tick at `now` plans with: a run damped since at least [`FLAP_COOL_OFF`]
/// before `now` is lowered below its rule's threshold, so this tick may dispatch the rule once
/// more (its run then reaches the threshold again, and a later tick whose predicate still holds
/// damps it anew). Pure; the tick and replay both call it.
pub fn cooled(previous: &[FlapEntry], rules: &[Rule], now: jiff::Timestamp) -> Vec<FlapEntry> {
    previous
        .iter()
        .map(|f| {
            let threshold = rules.iter().find(|r| r.id == f.rule_id).map(Rule::flap_threshold);
            let since = f.damped_at.as_deref().and_then(chant_store::clock::parse);
            match (threshold, since) {
                (Some(t), Some(since)) if f.run >= t && t > 0 && since + FLAP_COOL_OFF <= now => {
                    FlapEntry { run: t - 1, damped_at: None, ..f.clone() }
                }
                _ => f.clone(),
            }
        })
        .collect()
}

/// Stamps the runs after a tick at `now` with when damping stopped them: a rule skipped by
/// damping keeps the time it was first damped in this run (from `previous`), or gets `now`.
pub fn stamp_damped(next: &mut [FlapEntry], previous: &[FlapEntry], outcomes: &[Outcome], now: jiff::Timestamp) {
    for entry in next.iter_mut() {
        let damped = outcomes
            .iter()
            .any(|o| o.action == Action::SkippedFlap && o.rule_id == entry.rule_id && o.resource == entry.resource);
        if !damped {
            continue;
        }
        let since = previous
            .iter()
            .find(|p| p.rule_id == entry.rule_id && p.resource == entry.resource)
            .and_then(|p| p.damped_at.clone());
        entry.damped_at = Some(since.unwrap_or_else(|| chant_store::clock::format(now)));
    }
}
