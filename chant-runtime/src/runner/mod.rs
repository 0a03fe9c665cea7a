//! Running an op: its phases in order, each step really executed, the failure phases after a
//! failure, and a gate with no resolution stopping the run with exit 3.
//!
//! The runner owns the order and the record; what a step touches outside the process (the
//! lexicon an `apply` writes, the gate facts on the ledger) comes through [`Services`], which the
//! project binary implements over the real ledger and lexicons.
//!
//! # Guarantees
//!
//! - Steps run in declared order; after a failed step no later step of the main phases runs, and
//!   the `on_failure` phases run once.
//! - A gate with no resolution stops the run: nothing after it runs, no failure phase runs, and
//!   the run ends `gated` (exit 3) with the approve command.
//! - Every detail that reaches the record passed through the redactor and was sanitised.

pub mod expand;
/// The `http_check` step's GET, re-exported under its historical path.
pub use chant_lexicon::http;
pub mod record;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::gate::plan::{GatePlan, PlanVerb};
use crate::gate::{Decision, FactKind, GateFact};
use crate::step::{StepContext, StepFn};
use chant_lexicon::duration::Timeout;
use chant_lexicon::model::step::{GateArgs, LexiconStep};
use chant_lexicon::model::{DeleteMode, Name, OpDocument, Step};
use chant_lexicon::redact::Redactor;

pub use record::{GateStop, PhaseOutcome, RunRecord, Status, StepOutcome};

/// The error of a [`Services`] call: what failed outside the process, with its causes.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// This implementation does not offer the service.
    #[error("{what} of env {env} is not available here")]
    Unavailable {
        /// The service (`teardown`).
        what: &'static str,
        /// The env.
        env: String,
    },
    /// The service ran and failed.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// Why the plan a gate guards could not be computed; the gate step fails with its text.
#[derive(Debug, thiserror::Error)]
enum GuardedPlanError {
    /// The guarded step's arguments did not expand.
    #[error("gate \"{gate}\"")]
    Expand {
        /// The gate.
        gate: String,
        /// Why the expansion failed.
        #[source]
        source: chant_core::template::ExpandError,
    },
    /// The services could not compute the plan.
    #[error("gate \"{gate}\": cannot compute the plan it guards")]
    Plan {
        /// The gate.
        gate: String,
        /// Why.
        #[source]
        source: ServiceError,
    },
}

impl ServiceError {
    /// Wraps the error of a service that ran and failed.
    pub fn failed(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ServiceError::Failed(e.into())
    }
}

/// What the runner needs from outside the process.
pub trait Services {
    /// Applies the declaration of `env` with `mode`, records the apply, and returns one line
    /// saying what changed. When `approved` is the plan a gate of this run let through for this
    /// apply, each lexicon that plans again under its own lock re-checks it there
    /// ([`chant_lexicon::EnvLexicon::apply_approved`]).
    ///
    /// # Errors
    ///
    /// What failed, with its causes.
    fn apply(&self, env: &str, mode: DeleteMode, approved: Option<&GatePlan>) -> Result<String, ServiceError>;

    /// Tears down what chant owns in `env` (destructive): exactly its teardown plan, refused
    /// while the plan has holes unless `allow_holes`, and, when `approved` is the plan digest a
    /// gate of this run let through for this teardown, refused unless the plan is still that
    /// plan; records it, and returns one line saying what was removed.
    ///
    /// # Errors
    ///
    /// [`ServiceError::Unavailable`] by default; what failed, with its causes.
    fn teardown(&self, env: &str, allow_holes: bool, approved: Option<&str>) -> Result<String, ServiceError> {
        let _ = (allow_holes, approved);
        Err(ServiceError::Unavailable { what: "teardown", env: env.to_owned() })
    }

    /// Returns the gate facts of `op`, in ledger order.
    ///
    /// # Errors
    ///
    /// What failed, with its causes.
    fn gate_facts(&self, op: &str) -> Result<Vec<GateFact>, ServiceError>;

    /// Appends a gate fact to the ledger.
    ///
    /// # Errors
    ///
    /// What failed, with its causes.
    fn append_gate_fact(&self, fact: &GateFact) -> Result<(), ServiceError>;

    /// The plan of `verb` on `env` a gate guards ([`crate::gate::plan`]); `None` when these
    /// services cannot compute one (a gate guarding a change is then refused once approved with
    /// a digest, never let through unchecked).
    ///
    /// # Errors
    ///
    /// What failed, with its causes.
    fn plan(&self, verb: PlanVerb, env: &str) -> Result<Option<GatePlan>, ServiceError> {
        let _ = (verb, env);
        Ok(None)
    }

    /// Verifies the seal of resolution `fact`, which must answer the standing request `pending`,
    /// against the project's allowed signers ([`crate::gate::seal::verify`]) and returns the
    /// principal it names.
    ///
    /// # Errors
    ///
    /// Why the seal does not open a sealed gate; by default, that no allowed-signers file is
    /// configured.
    fn verify_seal(&self, fact: &GateFact, pending: &GateFact) -> Result<String, crate::gate::seal::SealError> {
        let _ = (fact, pending);
        Err(crate::gate::seal::SealError::NoAllowedSigners)
    }
}

/// The settings of one run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The env the run is in (`_runs` when none).
    pub env: String,
    /// The resource of a resource-mode dispatch (`CHANT_CONVERGE_RESOURCE`).
    pub resource: Option<String>,
    /// The redactor for every detail.
    pub redactor: Redactor,
    /// The default timeout of a shell step.
    pub shell_timeout: Duration,
    /// The default timeout of an HTTP check.
    pub http_timeout: Duration,
    /// The grace period between SIGTERM and SIGKILL for a timed-out child.
    pub kill_grace: Duration,
    /// The commit the project is at, when known.
    pub git_sha: Option<String>,
    /// Who is running (recorded on gate facts).
    pub actor: String,
    /// `run --components`: run only the phases of these components (and those of none); every
    /// phase when `None`.
    pub components: Option<std::collections::BTreeSet<String>>,
}

impl RunSettings {
    /// Creates settings for `env` with default timeouts (shell 10m, HTTP 10s, grace 5s).
    pub fn new(env: impl Into<String>) -> Self {
        RunSettings {
            env: env.into(),
            resource: None,
            redactor: Redactor::default(),
            shell_timeout: Duration::from_secs(600),
            http_timeout: Duration::from_secs(10),
            kill_grace: Duration::from_secs(5),
            git_sha: None,
            actor: std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
            components: None,
        }
    }
}

/// The clock and the variables a run reads, injectable for tests.
pub struct Environment<'a> {
    /// Returns the current instant.
    pub now: &'a dyn Fn() -> Timestamp,
    /// Looks a variable up.
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

enum StepEnd {
    Ok { detail: Option<String>, approved_by: Option<String>, output: Option<serde_json::Value> },
    Failed(String),
    Gated { stop: Box<GateStop>, url: Option<String> },
}

/// Runs `doc` and returns its record. `steps` maps user step names to their functions.
pub fn run(
    doc: &OpDocument,
    steps: &BTreeMap<&str, StepFn>,
    settings: &RunSettings,
    services: &dyn Services,
    environment: &Environment<'_>,
) -> RunRecord {
    let started = (environment.now)();
    // A run whose id cannot be minted runs nothing: it fails before its first step.
    let (id, no_id) = match chant_store::id::uuid() {
        Ok(id) => (id, None),
        Err(err) => (String::new(), Some(err)),
    };
    let mut rec = RunRecord {
        version: 1,
        id: id.clone(),
        op: doc.name.to_string(),
        env: settings.env.clone(),
        resource: settings.resource.clone(),
        started_at: chant_store::clock::format(started),
        ended_at: String::new(),
        status: Status::Ok,
        outcomes: Vec::new(),
        phases: Vec::new(),
        gate: None,
        other_gates: Vec::new(),
        approve: None,
        url: None,
        error: None,
        git_sha: settings.git_sha.clone(),
        op_digest: String::new(),
        components: None,
    };
    if let Some(err) = no_id {
        rec.status = Status::Failed;
        rec.error = Some(format!("cannot mint a run id: {err}"));
        rec.ended_at = chant_store::clock::format((environment.now)());
        return rec;
    }
    let ctx = Ctx {
        doc,
        steps,
        settings,
        services,
        environment,
        run_id: &id,
        approved_teardowns: Default::default(),
        approved_applies: Default::default(),
        carried: Default::default(),
    };
    // A failure stops everything after it. A gate stops the rest of its owner: a gate of the op
    // (a phase of no component) stops everything after it; a component's gate stops that
    // component's later steps and every later phase of no component, while the other components
    // go on.
    let mut failed = false;
    let mut gated: Vec<String> = Vec::new();
    rec.components = settings.components.as_ref().map(|c| c.iter().cloned().collect());
    for phase in &doc.phases {
        let owner = chant_core::component::owner(doc, phase);
        let component = phase.component.as_ref().map(Name::as_str);
        let unselected = component.is_some_and(|c| settings.components.as_ref().is_some_and(|s| !s.contains(c)));
        let blocked = |failed: bool, gated: &[String]| {
            failed
                || gated.iter().any(|g| g == doc.name.as_str() || g == owner)
                || (component.is_none() && !gated.is_empty())
        };
        if unselected || blocked(failed, &gated) {
            rec.phases.push(PhaseOutcome { name: phase.name.clone(), status: Status::Skipped, on_failure: false });
            for s in &phase.steps {
                rec.outcomes.push(skipped(&phase.name, s));
            }
            continue;
        }
        let mut phase_status = Status::Ok;
        for s in &phase.steps {
            if blocked(failed, &gated) {
                rec.outcomes.push(skipped(&phase.name, s));
                continue;
            }
            let t = Instant::now();
            let end = ctx.step(s, owner);
            let ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
            let mut o = StepOutcome {
                phase: phase.name.clone(),
                step: s.kind().to_owned(),
                name: s.name().map(ToString::to_string),
                status: Status::Ok,
                duration_ms: ms,
                detail: None,
                approved_by: None,
                output: None,
                carried_from: None,
            };
            match end {
                StepEnd::Ok { detail, approved_by, output } => {
                    o.detail = detail.map(|d| settings.redactor.record(&d));
                    o.approved_by = approved_by;
                    o.output = output;
                    o.carried_from = ctx.carried.borrow_mut().take();
                }
                StepEnd::Failed(e) => {
                    let e = settings.redactor.record(&e);
                    o.status = Status::Failed;
                    o.detail = Some(e.clone());
                    rec.error = Some(e);
                    phase_status = Status::Failed;
                    failed = true;
                }
                StepEnd::Gated { mut stop, url } => {
                    o.status = Status::Gated;
                    stop.component = component.map(str::to_owned);
                    if rec.gate.is_none() {
                        rec.approve = Some(stop.approve_command(&doc.name));
                        rec.gate = Some(*stop);
                        rec.url = url;
                    } else {
                        rec.other_gates.push(*stop);
                    }
                    phase_status = Status::Gated;
                    gated.push(owner.to_owned());
                }
            }
            rec.outcomes.push(o);
        }
        rec.phases.push(PhaseOutcome { name: phase.name.clone(), status: phase_status, on_failure: false });
    }
    let stopped = if failed {
        Some(Status::Failed)
    } else if gated.is_empty() {
        None
    } else {
        Some(Status::Gated)
    };
    if stopped == Some(Status::Failed) {
        for phase in &doc.on_failure {
            let mut phase_status = Status::Ok;
            for s in &phase.steps {
                let t = Instant::now();
                let end = ctx.step(s, &doc.name);
                let ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
                let (status, detail) = match end {
                    StepEnd::Ok { detail, .. } => (Status::Ok, detail),
                    StepEnd::Failed(e) => (Status::Failed, Some(e)),
                    StepEnd::Gated { stop, .. } => {
                        (Status::Failed, Some(format!("gate \"{}\" in a failure phase cannot wait", stop.name)))
                    }
                };
                if status == Status::Failed {
                    phase_status = Status::Failed;
                }
                rec.outcomes.push(StepOutcome {
                    phase: phase.name.clone(),
                    step: s.kind().to_owned(),
                    name: s.name().map(ToString::to_string),
                    status,
                    duration_ms: ms,
                    detail: detail.map(|d| settings.redactor.record(&d)),
                    approved_by: None,
                    output: None,
                    carried_from: None,
                });
            }
            rec.phases.push(PhaseOutcome { name: phase.name.clone(), status: phase_status, on_failure: true });
        }
    }
    rec.status = stopped.unwrap_or(Status::Ok);
    rec.ended_at = chant_store::clock::format((environment.now)());
    rec
}

fn skipped(phase: &str, s: &Step) -> StepOutcome {
    StepOutcome {
        phase: phase.to_owned(),
        step: s.kind().to_owned(),
        name: s.name().map(ToString::to_string),
        status: Status::Skipped,
        duration_ms: 0,
        detail: None,
        approved_by: None,
        output: None,
        carried_from: None,
    }
}

struct Ctx<'a> {
    doc: &'a OpDocument,
    steps: &'a BTreeMap<&'a str, StepFn>,
    settings: &'a RunSettings,
    services: &'a dyn Services,
    environment: &'a Environment<'a>,
    run_id: &'a str,
    /// The plan digests the gates of this run let through for a teardown, by env: the
    /// `teardown(env)` step executes only that plan.
    approved_teardowns: std::cell::RefCell<BTreeMap<String, String>>,
    /// The plans the gates of this run let through for an apply, by env: the first `apply(env)`
    /// step after the gate takes it and has its lexicons re-check it under their locks.
    approved_applies: std::cell::RefCell<BTreeMap<String, GatePlan>>,
    /// Where the approval of the gate step that just walked through was carried from.
    carried: std::cell::RefCell<Option<crate::gate::carry::CarriedFrom>>,
}

impl Ctx<'_> {
    /// Runs one step; `owner` owns its gate facts (the op, or the phase's component).
    fn step(&self, step: &Step, owner: &str) -> StepEnd {
        let step = match step.expanded(self.environment.var) {
            Ok(s) => s,
            Err(e) => return StepEnd::Failed(e.to_string()),
        };
        let timeout = |t: &Option<Timeout>, default: Duration| t.as_ref().map_or(default, Timeout::duration);
        match &step {
            Step::Shell { args, .. } => {
                let timeout = timeout(&args.timeout, self.settings.shell_timeout);
                let mut spec = chant_store::process::Spec::shell(&args.cmd);
                spec.timeout = timeout;
                spec.grace = self.settings.kill_grace;
                spec.env = vec![("CHANT_ENV".into(), self.settings.env.clone())];
                if let Some(r) = &self.settings.resource {
                    spec.env.push((chant_lexicon::handoff::RESOURCE_VAR.into(), r.clone()));
                }
                match chant_store::process::run(&spec) {
                    Ok(out) if out.success() => StepEnd::Ok {
                        detail: Some(chant_lexicon::redact::sanitise(&out.stdout)).filter(|s| !s.is_empty()),
                        approved_by: None,
                        output: None,
                    },
                    Ok(out) => {
                        let why = chant_lexicon::redact::sanitise(if out.stderr.trim().is_empty() {
                            &out.stdout
                        } else {
                            &out.stderr
                        });
                        let how = out.describe(timeout);
                        StepEnd::Failed(if why.is_empty() {
                            format!("shell: {how}")
                        } else {
                            format!("shell: {how}: {why}")
                        })
                    }
                    Err(e) => StepEnd::Failed(format!("shell: {e}")),
                }
            }
            Step::HttpCheck { args, .. } => {
                let url = args.url.as_str();
                match http::check(url, timeout(&args.timeout, self.settings.http_timeout)) {
                    Ok(status) => StepEnd::Ok {
                        detail: Some(format!("GET {url} answered {status}")),
                        approved_by: None,
                        output: None,
                    },
                    Err(e) => StepEnd::Failed(e.to_string()),
                }
            }
            Step::Apply { args, .. } => {
                let env = &args.env;
                // The plan a gate let through binds the first apply of its env after it.
                let approved = self.approved_applies.borrow_mut().remove(env.as_str());
                match self.services.apply(env, args.delete_mode.unwrap_or_default(), approved.as_ref()) {
                    Ok(detail) => StepEnd::Ok { detail: Some(detail), approved_by: None, output: None },
                    Err(e) => StepEnd::Failed(format!("apply {env}: {}", chant_store::error::chain(&e))),
                }
            }
            Step::Teardown { args, .. } => {
                let env = &args.env;
                let approved = self.approved_teardowns.borrow().get(env.as_str()).cloned();
                match self.services.teardown(env, args.allow_holes, approved.as_deref()) {
                    Ok(detail) => StepEnd::Ok { detail: Some(detail), approved_by: None, output: None },
                    Err(e) => StepEnd::Failed(format!("teardown {env}: {}", chant_store::error::chain(&e))),
                }
            }
            Step::Gate { name, args, .. } => self.gate(name, args, owner),
            Step::User { name, args, .. } => {
                let Some(f) = self.steps.get(name.as_str()) else {
                    return StepEnd::Failed(format!("step `{name}` has no function in this binary"));
                };
                let ctx = StepContext {
                    op: &self.doc.name,
                    env: Some(&self.settings.env),
                    resource: self.settings.resource.as_deref(),
                    args,
                };
                match f(&ctx) {
                    Ok(v) => StepEnd::Ok { detail: None, approved_by: None, output: Some(v).filter(|v| !v.is_null()) },
                    Err(e) => StepEnd::Failed(format!("step `{name}`: {e}")),
                }
            }
            Step::Lexicon(step) => self.registered(step),
        }
    }

    /// Runs a step a lexicon registered ([`chant_lexicon::steps`]), found by its kind.
    fn registered(&self, step: &LexiconStep) -> StepEnd {
        let kind = step.kind.as_str();
        let Some(registered) = chant_lexicon::steps::find(kind) else {
            return StepEnd::Failed(chant_lexicon::steps::unregistered(kind));
        };
        let root = match std::env::current_dir() {
            Ok(cwd) => crate::config::project_root(&cwd).map_err(|e| chant_store::error::chain(&e)),
            Err(e) => Err(format!("cannot read the working directory: {e}")),
        };
        let root = match root {
            Ok(root) => root,
            Err(e) => return StepEnd::Failed(format!("{kind}: {}", chant_lexicon::redact::sanitise(&e))),
        };
        let input = chant_lexicon::steps::StepInput {
            kind,
            args: &step.args,
            root: &root,
            member: self.doc.member.as_deref(),
            resource: self.settings.resource.as_deref(),
            var: self.environment.var,
        };
        match (registered.run)(&input) {
            Ok(v) => StepEnd::Ok {
                detail: registered.describe.map(|d| self.settings.redactor.record(&d(&input, &v))),
                approved_by: None,
                output: Some(v),
            },
            Err(e) => {
                StepEnd::Failed(format!("{kind}: {}", chant_lexicon::redact::sanitise(&chant_store::error::chain(&*e))))
            }
        }
    }

    fn gate(&self, name: &Name, args: &GateArgs, owner: &str) -> StepEnd {
        let gate = name.to_string();
        let now = (self.environment.now)();
        let facts = match self.services.gate_facts(owner) {
            Ok(f) => f,
            Err(e) => {
                return StepEnd::Failed(format!(
                    "gate \"{gate}\": cannot read the gate ledger: {}",
                    chant_store::error::chain(&e)
                ));
            }
        };
        let resource = self.settings.resource.as_deref();
        match crate::gate::decide(&facts, owner, &gate, resource, now) {
            Decision::Approved { pending, resolution } => {
                // A sealed gate opens only on a resolution whose seal verifies.
                let resolution = if args.sealed {
                    let mut why = Vec::new();
                    let answering = crate::gate::seal::after_standing(&facts, owner, &gate, resource);
                    let sealed = answering.into_iter().find(|r| match self.services.verify_seal(r, &pending) {
                        Ok(_) => true,
                        Err(e) => {
                            let by = r.resolved_by.as_deref().unwrap_or("unknown");
                            why.push(format!(
                                "the approval by {by} at {}: {}",
                                r.timestamp,
                                chant_store::error::chain(&e)
                            ));
                            false
                        }
                    });
                    match sealed {
                        Some(r) => Box::new(r.clone()),
                        None => {
                            let refused =
                                format!("gate \"{gate}\" opens only on a sealed approval; {}", why.join("; "));
                            return gated(&gate, &pending, Some(refused));
                        }
                    }
                } else {
                    resolution
                };
                let (guards, plan) = match self.guarded_plan(&gate) {
                    Ok(p) => p,
                    Err(e) => return StepEnd::Failed(chant_store::error::chain(&e)),
                };
                // The approval is of one plan: a fresh plan that differs refuses it. A gate that
                // guards no change in this op has no plan to check.
                let approved = resolution.plan_digest.clone().or_else(|| pending.plan_digest.clone());
                if let Some(approved) = approved.filter(|_| guards) {
                    let fresh = plan.as_ref().map(GatePlan::digest);
                    if fresh.as_deref() != Some(approved.as_str()) {
                        let what = match (&plan, &pending.plan) {
                            (Some(now), Some(then)) => {
                                let c = crate::gate::plan::changed(&then.changes, &now.changes);
                                if c.is_empty() { String::new() } else { format!(": {}", c.join("; ")) }
                            }
                            _ => String::new(),
                        };
                        let refused = match &fresh {
                            Some(f) => format!(
                                "the plan changed since it was approved (approved {approved}, now {f}){what}; approve the new plan"
                            ),
                            None => format!(
                                "the approval is of plan {approved}, and this run cannot recompute the plan to check it"
                            ),
                        };
                        return self.ask(&gate, args, owner, now, plan, Some(refused));
                    }
                    if let Some(p) = plan.as_ref().filter(|p| p.verb == PlanVerb::Teardown) {
                        self.approved_teardowns.borrow_mut().insert(p.env.clone(), approved);
                    } else if let Some(p) = plan.as_ref().filter(|p| p.verb == PlanVerb::Apply) {
                        self.approved_applies.borrow_mut().insert(p.env.clone(), p.clone());
                    }
                }
                let by = resolution.resolved_by.clone().unwrap_or_else(|| "unknown".into());
                let passed = GateFact {
                    version: 1,
                    kind: FactKind::Passed,
                    op: owner.to_owned(),
                    gate: gate.clone(),
                    env: self.settings.env.clone(),
                    resource: resource.map(str::to_owned),
                    description: None,
                    resolved_by: Some(by.clone()),
                    note: None,
                    url: resolution.url.clone(),
                    run_id: self.run_id.to_owned(),
                    git_sha: self.settings.git_sha.clone(),
                    timestamp: chant_store::clock::format(now),
                    expires_at: None,
                    plan_digest: resolution.plan_digest.clone(),
                    plan: None,
                    relayed_by: None,
                    seal: None,
                    sealed: false,
                    carried_from: None,
                };
                if let Err(e) = self.services.append_gate_fact(&passed) {
                    return StepEnd::Failed(format!(
                        "gate \"{gate}\": cannot record the pass: {}",
                        chant_store::error::chain(&e)
                    ));
                }
                let mut detail = format!("[approved] {by} at {}", resolution.timestamp);
                if let Some(seal) = resolution.seal.as_ref().filter(|_| args.sealed) {
                    detail.push_str(&format!(" [sealed by {}]", seal.signer));
                }
                if let Some(u) = &resolution.url {
                    detail.push_str(&format!(" ({u})"));
                }
                StepEnd::Ok { detail: Some(detail), approved_by: Some(by), output: None }
            }
            Decision::Waiting { pending } => {
                // A carry answers a gate nobody approved yet, a standing request included.
                let carried = match self.carry(&gate, args, owner, &facts, now) {
                    Ok(c) => c,
                    Err(end) => return end,
                };
                match carried {
                    Ok(end) => end,
                    Err(why) => gated(&gate, &pending, why),
                }
            }
            Decision::Ask => {
                let carried = match self.carry(&gate, args, owner, &facts, now) {
                    Ok(c) => c,
                    Err(end) => return end,
                };
                let why = match carried {
                    Ok(end) => return end,
                    Err(why) => why,
                };
                let plan = match self.guarded_plan(&gate) {
                    Ok((_, p)) => p,
                    Err(e) => return StepEnd::Failed(chant_store::error::chain(&e)),
                };
                self.ask(&gate, args, owner, now, plan, why)
            }
        }
    }

    /// Walks through `gate` on an approval it carries ([`crate::gate::carry`]), when it declares
    /// a carry and one applies: records the carried resolution and the pass. `Ok(Err(why))` when
    /// it declares none (`why` is `None`) or none applies; `Err(end)` when the step fails.
    #[allow(clippy::type_complexity)]
    fn carry(
        &self,
        gate: &str,
        args: &GateArgs,
        owner: &str,
        facts: &[GateFact],
        now: Timestamp,
    ) -> Result<Result<StepEnd, Option<String>>, StepEnd> {
        let (Some(source), Some(within)) = (&args.carries, &args.within) else { return Ok(Err(None)) };
        // The compile-time and load-time checks refuse this; a run never lets a carry open one.
        if args.sealed {
            return Ok(Err(None));
        }
        let (guards, plan) = match self.guarded_plan(gate) {
            Ok(p) => p,
            Err(e) => return Err(StepEnd::Failed(chant_store::error::chain(&e))),
        };
        let digest = plan.as_ref().map(GatePlan::digest);
        let ask = crate::gate::carry::Ask {
            owner,
            gate,
            source: source.as_str(),
            within: within.duration(),
            within_text: within.as_str(),
            env: &self.settings.env,
            resource: self.settings.resource.as_deref(),
            plan: guards.then_some(digest.as_deref()),
            now,
        };
        let carry = match crate::gate::carry::find(facts, &ask) {
            Ok(c) => c,
            Err(why) => {
                return Ok(Err(Some(format!(
                    "gate \"{gate}\" carries approvals of \"{source}\" recorded within {}, and none carries: {why}",
                    within.as_str()
                ))));
            }
        };
        let by = carry.approval.resolved_by.clone().unwrap_or_else(|| "unknown".into());
        let from = carry.carried_from(within.as_str());
        let fact = |kind: FactKind| GateFact {
            version: 1,
            kind,
            op: owner.to_owned(),
            gate: gate.to_owned(),
            env: self.settings.env.clone(),
            resource: self.settings.resource.clone(),
            description: None,
            resolved_by: Some(by.clone()),
            note: None,
            url: carry.approval.url.clone(),
            run_id: self.run_id.to_owned(),
            git_sha: self.settings.git_sha.clone(),
            timestamp: chant_store::clock::format(now),
            expires_at: None,
            plan_digest: carry.approval.plan_digest.clone().filter(|_| guards),
            plan: None,
            relayed_by: None,
            seal: None,
            sealed: false,
            carried_from: (kind == FactKind::Resolution).then(|| from.clone()),
        };
        for f in [fact(FactKind::Resolution), fact(FactKind::Passed)] {
            if let Err(e) = self.services.append_gate_fact(&f) {
                return Err(StepEnd::Failed(format!(
                    "gate \"{gate}\": cannot record the carried approval: {}",
                    chant_store::error::chain(&e)
                )));
            }
        }
        if let (true, Some(p)) = (guards, plan) {
            match p.verb {
                PlanVerb::Teardown => drop(self.approved_teardowns.borrow_mut().insert(p.env.clone(), p.digest())),
                PlanVerb::Apply => drop(self.approved_applies.borrow_mut().insert(p.env.clone(), p)),
            }
        }
        *self.carried.borrow_mut() = Some(from);
        let mut detail = format!(
            "[approved] {by} at {} (carried from \"{source}\", within {})",
            carry.approval.timestamp,
            within.as_str()
        );
        if let Some(u) = &carry.approval.url {
            detail.push_str(&format!(" ({u})"));
        }
        Ok(Ok(StepEnd::Ok { detail: Some(detail), approved_by: Some(by), output: None }))
    }

    /// Whether gate `gate` guards a change, and the plan of that change when the services can
    /// compute it.
    fn guarded_plan(&self, gate: &str) -> Result<(bool, Option<GatePlan>), GuardedPlanError> {
        let Some(step) = crate::gate::plan::guarded(self.doc, gate) else { return Ok((false, None)) };
        let step = step
            .expanded(self.environment.var)
            .map_err(|source| GuardedPlanError::Expand { gate: gate.to_owned(), source })?;
        let Some((verb, env)) = crate::gate::plan::target(&step) else { return Ok((false, None)) };
        let plan = self
            .services
            .plan(verb, &env)
            .map_err(|source| GuardedPlanError::Plan { gate: gate.to_owned(), source })?;
        Ok((true, plan))
    }

    /// Records a pending fact for `gate` (with the plan it guards) and stops.
    fn ask(
        &self,
        gate: &str,
        args: &GateArgs,
        owner: &str,
        now: Timestamp,
        plan: Option<GatePlan>,
        refused: Option<String>,
    ) -> StepEnd {
        let expiry = match &args.timeout {
            Some(t) => t.duration(),
            None => match chant_lexicon::duration::parse(crate::gate::DEFAULT_EXPIRY) {
                Ok(d) => d,
                Err(e) => return StepEnd::Failed(format!("gate \"{gate}\": {e}")),
            },
        };
        let expires = jiff::SignedDuration::try_from(expiry).ok().and_then(|d| now.checked_add(d).ok());
        let url = (self.environment.var)("CHANT_APPROVAL_URL")
            .or_else(|| crate::gate::url::approval_url(self.environment.var));
        let fact = GateFact {
            version: 1,
            kind: FactKind::Pending,
            op: owner.to_owned(),
            gate: gate.to_owned(),
            env: self.settings.env.clone(),
            resource: self.settings.resource.clone(),
            description: args.description.clone(),
            resolved_by: None,
            note: None,
            url,
            run_id: self.run_id.to_owned(),
            git_sha: self.settings.git_sha.clone(),
            timestamp: chant_store::clock::format(now),
            expires_at: expires.map(chant_store::clock::format),
            plan_digest: plan.as_ref().map(GatePlan::digest),
            plan,
            relayed_by: None,
            seal: None,
            sealed: args.sealed,
            carried_from: None,
        };
        if let Err(e) = self.services.append_gate_fact(&fact) {
            return StepEnd::Failed(format!(
                "gate \"{gate}\": cannot record the pending fact: {}",
                chant_store::error::chain(&e)
            ));
        }
        gated(gate, &fact, refused)
    }
}

/// The stop at `gate` on its standing pending fact.
fn gated(gate: &str, pending: &GateFact, refused: Option<String>) -> StepEnd {
    StepEnd::Gated {
        stop: Box::new(GateStop {
            name: gate.to_owned(),
            since: pending.timestamp.clone(),
            description: pending.description.clone(),
            expires_at: pending.expires_at.clone(),
            plan: pending.plan.clone(),
            plan_digest: pending.plan_digest.clone(),
            refused,
            component: None,
        }),
        url: pending.url.clone(),
    }
}

#[cfg(test)]
mod tests;
