//! Executing one tick against a project: observe, derive the symptom, plan, dispatch, record.
//!
//! A tick whose observation cannot be trusted (a resource observer that failed or returned a
//! malformed reading) converges nothing: it is recorded with `error`, its flap runs carried
//! forward unchanged, and the caller exits 1. A tick run under a lease checks its [`Fence`]
//! before each dispatch and before the append: once the lease is found lost, the remaining
//! dispatches are recorded as not dispatched and the record says `fenced: true`. Nothing is
//! dispatched while the ledger cannot be written ([`chant_store::ledger::Ledger::writable`]), and a
//! tick record that cannot be appended is kept for the next write that succeeds
//! ([`chant_store::ledger::Ledger::append_record_or_keep`]).

use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::project::{self, Project};
use chant_lexicon::model::{ConvergeSpec, OpDocument};
use chant_store::ledger::{AppendReceipt, ShardKey, TypedLatest, Unreadable};

use super::dispatch::Dispatcher;
use super::fence::{Fence, Lost};
use super::observer::{ObserveError, observe_resources};
use super::plan::{
    Controls, DispatchResult, Plan, PlanInput, Subject, cooled, next_flap, plan_controlled, record_dispatch,
    stamp_damped,
};
use super::record::{FlapEntry, ObservedResource, PlannedSymptom, Summary, TickRecord};

/// Errors that stop a tick before it can be recorded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The op is not a ConvergeOp.
    #[error("`{0}` is not a ConvergeOp; run it with `run {0}`")]
    NotConverge(String),
    /// The project failed (ledger, declaration, serialisation).
    #[error(transparent)]
    Project(#[from] project::Error),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] chant_store::ledger::Error),
    /// No tick id could be minted.
    #[error(transparent)]
    Random(#[from] chant_store::id::Unavailable),
}

/// What a tick produced.
#[derive(Debug)]
pub struct TickOutcome {
    /// The record, as appended.
    pub record: TickRecord,
    /// The ledger's receipt.
    pub receipt: AppendReceipt,
    /// Unreadable lines of this op's tick records met while reading the newest one: skipped and
    /// left in place, never dropped silently, so the caller reports them.
    pub unreadable: Vec<Unreadable>,
    /// What the fence found, when the tick lost its lease.
    pub lost: Option<Lost>,
    /// Unobserved entities by reason code (env mode), or resources `unknown` under
    /// `resource-unknown` (resource mode), for the operator's metrics.
    pub unobserved: std::collections::BTreeMap<String, u64>,
    /// How long the append of the record took (the fence check before it included).
    pub append_time: Duration,
}

/// How to run a tick.
#[derive(Debug, Clone)]
pub struct TickOptions {
    /// How dispatched runs are started.
    pub dispatcher: Dispatcher,
    /// The lease the tick runs under, checked before each side effect (`None`: `--no-lease`).
    pub fence: Option<Fence>,
}

/// Returns the digest of an op.json document: `fnv1a64:<hex>` of its canonical JSON
/// ([`chant_store::canonical`]), so the digest does not depend on field order.
///
/// # Errors
///
/// [`chant_store::canonical::Error`], which an op document cannot cause in practice.
pub fn op_digest(doc: &OpDocument) -> Result<String, chant_store::canonical::Error> {
    let bytes = chant_store::canonical::to_vec(doc)?;
    Ok(format!("fnv1a64:{:016x}", chant_lexicon::model::contract::fnv1a64(&bytes)))
}

/// Writes the proposal a planned `proposed` outcome names, or records why not (`stopped`: the
/// fence or the ledger said no first): a proposal that could not be written is `reported`, with
/// the reason, and counts toward damping like a failed dispatch.
#[expect(clippy::too_many_arguments, reason = "one proposal reads the tick's whole state")]
fn propose(
    project: &Project,
    doc: &OpDocument,
    spec: &ConvergeSpec,
    env: &str,
    now: Timestamp,
    drifted: &[super::record::DriftedPath],
    o: &mut super::Outcome,
    stopped: Option<String>,
) {
    let target = o.op.clone().unwrap_or_default();
    let why_not = |o: &mut super::Outcome, why: String, failed: bool| {
        o.action = super::Action::Reported;
        o.dispatch_failed = failed.then_some(true);
        o.reason = Some(format!("no proposal of \"{target}\" was written: {why}"));
    };
    if let Some(why) = stopped {
        why_not(o, project.redactor.record(&why), false);
        return;
    }
    let Some(rule) = spec.rules.iter().find(|r| r.id.as_str() == o.rule_id) else {
        why_not(o, "its rule is not in the op's table".to_owned(), true);
        return;
    };
    let request = super::proposal::Request {
        converge_op: doc.name.as_str(),
        member: doc.member.as_deref(),
        env,
        rule,
        target: &target,
        resource: o.resource.as_deref(),
        drifted,
        now,
    };
    match super::proposal::write(project, &request) {
        Ok(written) => {
            o.reason = Some(project.redactor.record(&written.reason(&target)));
            o.url = written.compare_url.clone();
            o.branch = Some(written.branch);
        }
        Err(e) => why_not(o, project.redactor.record(&chant_store::error::chain(&e)), true),
    }
}

/// Runs one tick of `doc` against `project`.
///
/// # Errors
///
/// [`Error`] when the tick cannot even be recorded; a failed observation is recorded instead.
pub fn execute(project: &Project, doc: &OpDocument, options: &TickOptions) -> Result<TickOutcome, Error> {
    execute_after(project, doc, options, None)
}

/// Runs one tick of `doc` like [`execute`], given the op's newest tick record as the caller just
/// read it under the op's lease (`newest`, the operator's due check): the tick does not read it
/// again. `None` reads it.
///
/// # Errors
///
/// As [`execute`].
pub fn execute_after(
    project: &Project,
    doc: &OpDocument,
    options: &TickOptions,
    newest: Option<TypedLatest<TickRecord>>,
) -> Result<TickOutcome, Error> {
    let Some(spec) = &doc.converge else { return Err(Error::NotConverge(doc.name.to_string())) };
    // The tick record's commit needs the git identity; read while the env is observed.
    project.ledger.read_identity_beside();
    let env = doc.env.as_deref().unwrap_or_default().to_owned();
    let member = doc.member.as_deref();
    let clock = project.ledger.clock();
    let started = clock.now();
    let key = ShardKey::converge(member, &env, &doc.name)?;
    let latest = match newest {
        Some(latest) => latest,
        None => project.ledger.latest_typed::<TickRecord>(&key)?,
    };
    let unreadable = latest.unreadable;
    let last_tick = latest.record.as_ref().map(|stored| stored.record.timestamp.clone());
    let (previous, previous_restarts): (Vec<FlapEntry>, Vec<super::limit::RestartEntry>) =
        latest.record.map(|stored| (stored.record.flap, stored.record.restarts)).unwrap_or_default();
    // A person's `operator undamp` or `resume` since the last tick.
    let control = ShardKey::control(member, &env, &doc.name)?;
    let (previous, previous_restarts) = super::control::taken_into_account(
        &project.ledger,
        &control,
        previous,
        previous_restarts,
        last_tick.as_deref(),
    )?;
    let restarts = super::limit::current(&previous_restarts, spec.restart_limit.as_ref(), &spec.rules, started);
    let held = super::window::hold(&spec.windows, started);

    let mut record = new_record(project, doc, started, options.fence.as_ref())?;
    record.flap = previous.clone();
    record.restarts = restarts.clone();
    record.held = held.clone();

    let mut unobserved = std::collections::BTreeMap::new();
    let mut drifted = Vec::new();
    let mut adopted = Vec::new();
    let mut texts = Vec::new();
    match observe_counting(project, spec, &env, member, &mut unobserved, &mut drifted, &mut adopted, Some(&mut texts)) {
        Err(e) => {
            record.error = Some(project.redactor.record(&e.to_string()));
            record.summary = Summary::default();
        }
        Ok(symptom) => {
            let subject = symptom.subject();
            let planned_with = cooled(&previous, &spec.rules, started);
            let controls = Controls {
                held: held.as_ref(),
                limit: spec.restart_limit.as_ref(),
                restarts: &restarts,
                op: &doc.name,
            };
            let p = plan_with_controls(project, spec, subject, &planned_with, &controls);
            let mut outcomes = p.outcomes.clone();
            name_adopted(&mut outcomes, spec, &adopted);
            // Nothing acts that could not be recorded: the ledger must take an append before the
            // first dispatch (its record, and the run's, go there).
            let unwritable = outcomes
                .iter()
                .any(|o| matches!(o.action, super::Action::Ran | super::Action::Proposed))
                .then(|| project.ledger.writable().err())
                .flatten()
                .map(|e| project.redactor.record(&chant_store::error::chain(&e)));
            for o in outcomes.iter_mut().filter(|o| o.action == super::Action::Ran) {
                let target = o.op.clone().unwrap_or_default();
                let result = match (options.fence.as_ref().map(Fence::check), &unwritable) {
                    (Some(Err(lost)), _) => DispatchResult::Fenced { why: project.redactor.record(&lost.to_string()) },
                    (_, Some(why)) => DispatchResult::Unrecordable { why: why.clone() },
                    _ => options.dispatcher.dispatch(&target, &env, o.resource.as_deref(), &project.redactor),
                };
                record_dispatch(o, result);
            }
            for o in outcomes.iter_mut().filter(|o| o.action == super::Action::Proposed) {
                let stopped = match (options.fence.as_ref().map(Fence::check), &unwritable) {
                    (Some(Err(lost)), _) => Some(format!("{}; a fenced tick writes nothing more", lost)),
                    (_, Some(why)) => {
                        Some(format!("the ledger cannot be written ({why}); nothing acts that could not be recorded"))
                    }
                    _ => None,
                };
                propose(project, doc, spec, &env, started, &drifted, o, stopped);
            }
            // Verify after acting: observe again, and keep `ran` only where the symptom is gone.
            if outcomes.iter().any(|o| o.action == super::Action::Ran) {
                let (mut scratch, mut after_drifted, mut after_adopted) = Default::default();
                let after = observe_counting(
                    project,
                    spec,
                    &env,
                    member,
                    &mut scratch,
                    &mut after_drifted,
                    &mut after_adopted,
                    None,
                );
                let failed = after.as_ref().err().map(|e| project.redactor.record(&e.to_string()));
                let after = match (&after, &failed) {
                    (Ok(symptom), _) => super::verify::After::Observed(symptom.subject(), &after_drifted),
                    (Err(_), Some(why)) => super::verify::After::Failed(why),
                    (Err(_), None) => super::verify::After::Failed("the observation failed"),
                };
                super::verify::verify(&mut outcomes, &spec.rules, after);
                record.verified = true;
            }
            record.flap = next_flap(&p, &outcomes, &spec.rules);
            let class_of = |name: &str| project.catalog.get(name).map(OpDocument::folded_class);
            record.restarts =
                super::limit::next(&restarts, &outcomes, spec.restart_limit.as_ref(), &class_of, &record.started_at);
            stamp_damped(&mut record.flap, &previous, &outcomes, started);
            record.fired_rule_ids = p.fired_rule_ids();
            record.fired = p.fired.clone();
            record.summary = super::summarise(subject, &outcomes);
            record.outcomes = outcomes;
            observed_rows(&mut record, &symptom);
            record.drifted_paths = (!drifted.is_empty()).then(|| {
                drifted
                    .into_iter()
                    .map(|d| super::record::DriftedPath {
                        live: d.live.map(|l| project.redactor.record(&l)),
                        declared: project.redactor.record(&d.declared),
                        ..d
                    })
                    .collect()
            });
            record.text_changes = (!texts.is_empty()).then_some(texts);
            record.symptom = Some(symptom);
        }
    }
    record.log = record.summary.line(&env);
    if let Some(held) = &record.held {
        record.log = format!("{} {}", record.log, held.line());
    }
    record.timestamp = chant_store::clock::format(clock.now());
    let appending = Instant::now();
    let (receipt, lost) = append_fenced(project, member, &mut record, options.fence.as_ref())?;
    let append_time = appending.elapsed();
    Ok(TickOutcome { record, receipt, unreadable, lost, unobserved, append_time })
}

/// Records a tick a stop cut short: no outcomes, `error` saying why, the flap runs of the op's
/// newest record carried forward unchanged, checked by `fence` before the append like any tick.
///
/// # Errors
///
/// [`Error`] when it cannot be recorded.
pub fn record_interrupted(
    project: &Project,
    doc: &OpDocument,
    started: Timestamp,
    why: &str,
    fence: Option<&Fence>,
) -> Result<(TickRecord, AppendReceipt), Error> {
    let env = doc.env.as_deref().unwrap_or_default().to_owned();
    let member = doc.member.as_deref();
    let key = ShardKey::converge(member, &env, &doc.name)?;
    let mut record = new_record(project, doc, started, fence)?;
    let newest = project.ledger.latest_typed::<TickRecord>(&key)?.record.map(|s| s.record);
    (record.flap, record.restarts) = newest.map(|r| (r.flap, r.restarts)).unwrap_or_default();
    record.log = record.summary.line(&env);
    record.timestamp = chant_store::clock::format(project.ledger.clock().now());
    record.error = Some(project.redactor.record(why));
    let (receipt, _) = append_fenced(project, member, &mut record, fence)?;
    Ok((record, receipt))
}

/// A tick record of `doc` started at `started`, with nothing observed or decided yet.
fn new_record(
    project: &Project,
    doc: &OpDocument,
    started: Timestamp,
    fence: Option<&Fence>,
) -> Result<TickRecord, Error> {
    Ok(TickRecord {
        version: 1,
        id: chant_store::id::uuid()?,
        op: doc.name.to_string(),
        env: doc.env.as_deref().unwrap_or_default().to_owned(),
        started_at: chant_store::clock::format(started),
        lease: fence.map(Fence::stamp),
        git_sha: project.git_sha(),
        op_digest: op_digest(doc).map_err(chant_store::ledger::Error::from)?,
        ..TickRecord::default()
    })
}

/// Checks the fence one last time and appends `record`, marked `fenced` when the lease is lost.
fn append_fenced(
    project: &Project,
    member: Option<&str>,
    record: &mut TickRecord,
    fence: Option<&Fence>,
) -> Result<(AppendReceipt, Option<Lost>), Error> {
    let lost = fence.and_then(|f| f.check().err());
    if lost.is_some() {
        record.fenced = Some(true);
    }
    // A tick that dispatched has acted: its record is kept for the next write if it cannot be
    // appended now, never dropped.
    let receipt = project.ledger.append_record_or_keep(member, &*record)?;
    Ok((receipt, lost))
}

/// Sets what a record shows of its observation: the status rows in environment mode, the
/// observed resources in resource mode.
pub(super) fn observed_rows(record: &mut TickRecord, symptom: &PlannedSymptom) {
    match symptom {
        PlannedSymptom::Env(s) => record.components = Some(s.components.clone()),
        PlannedSymptom::Resources(rs) => {
            record.resources = Some(
                rs.iter()
                    .map(|r| ObservedResource {
                        name: r.resource.clone(),
                        status: r.status,
                        detail: Some(r.detail.clone()).filter(|d| !d.is_empty()),
                    })
                    .collect(),
            );
        }
    }
}

/// Observes what a tick of `spec` in `env` plans from: the env's lexicons (environment mode) or
/// the observer step's reading (resource mode). Read-only.
///
/// # Errors
///
/// [`ObserveError`]: why the observation cannot be trusted (a failed or malformed observer, a
/// declaration or ledger error); a tick records it as its `error` and converges nothing.
pub fn observe(
    project: &Project,
    spec: &ConvergeSpec,
    env: &str,
    member: Option<&str>,
) -> Result<PlannedSymptom, ObserveError> {
    observe_counting(
        project,
        spec,
        env,
        member,
        &mut std::collections::BTreeMap::new(),
        &mut Vec::new(),
        &mut Vec::new(),
        None,
    )
}

/// [`observe`], adding to `unobserved` how many entities went unobserved per reason (env mode:
/// each change-set entry's reason; resource mode: `resource-unknown` per unknown resource), for
/// the operator's metrics; with `texts`, the text changes of the updated entities too.
#[allow(clippy::too_many_arguments)]
fn observe_counting(
    project: &Project,
    spec: &ConvergeSpec,
    env: &str,
    member: Option<&str>,
    unobserved: &mut std::collections::BTreeMap<String, u64>,
    drifted: &mut Vec<super::record::DriftedPath>,
    adopted: &mut Vec<String>,
    texts: Option<&mut Vec<crate::textdiff::TextChange>>,
) -> Result<PlannedSymptom, ObserveError> {
    match &spec.observe {
        None => project.assess(member, env).map_err(ObserveError::Assess).and_then(|a| {
            *drifted = super::record::DriftedPath::of(&a.change_sets);
            if let Some(texts) = texts.filter(|_| !drifted.is_empty()) {
                *texts = text_changes(project, member, env, &a.change_sets);
            }
            *adopted = adopted_entities(&a.change_sets);
            for reason in a.change_sets.iter().flat_map(|cs| cs.entries.iter()).filter_map(|e| e.unobserved_reason) {
                *unobserved.entry(reason.as_str().to_owned()).or_insert(0) += 1;
            }
            let mut symptom = a.symptom;
            super::estate::add_counts(project, spec, member, env, &mut symptom)?;
            Ok(PlannedSymptom::Env(symptom))
        }),
        Some(step) => observe_resources(project, step, env, member).map(|rs| {
            let unknown =
                rs.iter().filter(|r| r.status == chant_lexicon::model::ResourceStatus::Unknown).count() as u64;
            if unknown > 0 {
                unobserved.insert("resource-unknown".to_owned(), unknown);
            }
            PlannedSymptom::Resources(rs)
        }),
    }
}

/// The text changes of `env`'s updated entities whose lexicon keeps their content, redacted for
/// the record, at most [`crate::textdiff::TICK_ENTITIES`] of [`crate::textdiff::TICK_LINES`]
/// lines each. Best effort: an env whose lexicons cannot be bound again gives none (the drifted
/// paths still say what drifted).
fn text_changes(
    project: &Project,
    member: Option<&str>,
    env: &str,
    change_sets: &[chant_lexicon::observe::ChangeSet],
) -> Vec<crate::textdiff::TextChange> {
    let Ok(lexicons) = project.lexicons(member, env) else { return Vec::new() };
    let mut out = Vec::new();
    for cs in change_sets {
        let Some(lexicon) = lexicons.iter().find(|l| l.name() == cs.component) else { continue };
        for e in cs.entries.iter().filter(|e| e.action == chant_lexicon::observe::ChangeAction::Update) {
            if out.len() >= crate::textdiff::TICK_ENTITIES {
                return out;
            }
            let change = lexicon.lexicon().texts(&e.name).and_then(|t| {
                crate::textdiff::text_change_within(&cs.component, &e.name, &t, crate::textdiff::TICK_LINES)
            });
            if let Some(mut change) = change {
                change.diff = project.redactor.redact(&change.diff);
                out.push(change);
            }
        }
    }
    out
}

/// Returns the names (`<component>/<name>`) of the change sets' `adopt` entries, at most
/// [`super::ENTITIES`]: what a rule reading the adopt signal reports.
fn adopted_entities(change_sets: &[chant_lexicon::observe::ChangeSet]) -> Vec<String> {
    change_sets
        .iter()
        .flat_map(|cs| {
            cs.with_action(chant_lexicon::observe::ChangeAction::Adopt)
                .map(move |e| format!("{}/{}", cs.component, e.name))
        })
        .take(super::ENTITIES)
        .collect()
}

/// Names on each outcome of a rule that reads the adopt signal the unowned entities it is about,
/// so the record (and the operator's line) says which ones, not only how many.
fn name_adopted(outcomes: &mut [super::Outcome], spec: &ConvergeSpec, adopted: &[String]) {
    if adopted.is_empty() {
        return;
    }
    for o in outcomes {
        let reads = spec
            .rules
            .iter()
            .any(|r| r.id.as_str() == o.rule_id && r.when.references(chant_lexicon::model::contract::ADOPT_FIELD));
        if reads {
            o.entities = adopted.to_vec();
        }
    }
}

/// Plans a tick of `spec` against `subject` with the flap runs `previous`, looking up each
/// `run()` target's class in the project's catalog. Pure apart from that lookup.
pub fn plan_with(project: &Project, spec: &ConvergeSpec, subject: Subject<'_>, previous: &[FlapEntry]) -> Plan {
    plan_with_controls(project, spec, subject, previous, &Controls::default())
}

/// Plans a tick as [`plan_with`] does, under `controls` (the sync windows' hold, the restart
/// limit and its counts).
pub fn plan_with_controls(
    project: &Project,
    spec: &ConvergeSpec,
    subject: Subject<'_>,
    previous: &[FlapEntry],
    controls: &Controls<'_>,
) -> Plan {
    let input =
        PlanInput { rules: &spec.rules, dial: spec.dial, budget: spec.budget, subject, previous_flap: previous };
    let class_of = |name: &str| project.catalog.get(name).map(OpDocument::folded_class);
    plan_controlled(&input, controls, &class_of)
}

#[cfg(test)]
mod tests {
    use super::{OpDocument, op_digest};

    #[test]
    fn the_op_digest_hashes_the_canonical_form() {
        let doc: OpDocument = serde_json::from_str(
            r#"{"version": 1, "name": "db-apply", "overview": "Apply.", "env": "db", "class": "mutating",
                "phases": [{"name": "Apply", "steps": [{"kind": "apply", "class": "mutating", "args": {"env": "db"}}]}]}"#,
        )
        .unwrap();
        let canonical = chant_store::canonical::to_vec(&doc).unwrap();
        let digest = op_digest(&doc).unwrap();
        assert_eq!(digest, format!("fnv1a64:{:016x}", chant_lexicon::model::contract::fnv1a64(&canonical)));
        assert!(String::from_utf8(canonical.clone()).unwrap().starts_with(r#"{"class":"mutating","env":"db","#));
        assert_ne!(canonical, serde_json::to_vec(&doc).unwrap(), "op.json's field order is not the canonical form");
        let mut other = doc.clone();
        other.overview = "Apply again.".into();
        assert_ne!(op_digest(&other).unwrap(), digest);
    }
}
