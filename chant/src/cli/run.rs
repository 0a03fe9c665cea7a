//! `run <op>` and `tick <converge-op>`.

use std::collections::BTreeMap;

use clap::Args;

use super::error::println;
use super::{Binary, CommandError, Exit};
use crate::error::chain;
use crate::lease::{self, LeaseKey, LeaseStore};
use crate::model::OpDocument;
use crate::project::{Project, RunServices};
use crate::runner::{self, Environment, RunSettings, Status};
use crate::step::StepFn;
use crate::tick::{self, Claim, Dispatcher, Landing, Leased, Release, TickOptions};

/// Run an op once
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The op's name.
    pub op: String,
    /// Print the run record as one JSON line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run only these components of the op's phases (comma-separated), with the phases of no
    /// component; a component's gate stops that component pending `chant approve <component>
    /// <gate>`.
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME...]")]
    pub components: Option<Vec<String>>,
}

/// Run one tick of a ConvergeOp
#[derive(Debug, Args)]
pub struct TickArgs {
    /// The ConvergeOp's name.
    pub op: String,
    /// Print the tick record as one JSON line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not take the op's lease.
    #[arg(long)]
    pub no_lease: bool,
    /// Observe and plan as a tick does, print what every rule would do, and write nothing (no
    /// record, no dispatch, no lease).
    #[arg(long)]
    pub plan: bool,
}

impl TickArgs {
    /// Returns the arguments of a bare invocation of `chant::main!(default = tick("x"))`.
    pub fn for_op(op: &str) -> Self {
        TickArgs { op: op.to_owned(), json: false, no_lease: false, plan: false }
    }
}

/// Opens the project and finds `op`, or says why not (exit 2).
pub(crate) fn open(binary: Binary, verb: &str, op: &str) -> Result<(Project, OpDocument), CommandError> {
    if binary == Binary::Project && crate::registry::ops().is_empty() {
        return Err(CommandError::usage(format!("no ops are compiled into this binary, so it cannot {verb} `{op}`"))
            .hint(super::init::no_ops_hint()));
    }
    if crate::registry::find(op).is_none() {
        return Err(CommandError::usage(match binary {
            Binary::Stock => format!(
                "the stock chant binary contains no ops, so it cannot {verb} `{op}`; use the project's own binary (`cargo run --bin <project-bin> -- {verb} {op}`)",
                op = crate::terminal::printable(op)
            ),
            Binary::Project => {
                let names: Vec<&str> = crate::registry::ops().iter().map(|o| o.name).collect();
                let hint = crate::model::contract::did_you_mean(op, names.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                format!(
                    "no op named `{}` is compiled into this binary{hint} (see `ops`)",
                    crate::terminal::printable(op)
                )
            }
        }));
    }
    let project = super::open_project()?;
    let Some(doc) = project.catalog.get(op).cloned() else {
        return Err(CommandError::usage(format!("op `{op}` is registered but missing from the catalog")));
    };
    Ok((project, doc))
}

/// How long a hand tick or a run of a mutating op waits for the op's lease.
pub const LEASE_WAIT: std::time::Duration = tick::LEASE_WAIT;

/// The claim on `doc`'s lease for one hand tick or run: taken, waiting up to [`LEASE_WAIT`].
fn lease_claim(doc: &OpDocument) -> Result<Claim, lease::Error> {
    let key = LeaseKey::new(doc.member.as_deref(), &doc.name)?;
    Ok(Claim::Take { key, holder: lease::holder_id()?, ttl: lease::DEFAULT_TTL, wait: LEASE_WAIT })
}

/// Prints what became of the lease after the work.
fn lease_warnings<T>(ran: &tick::Ran<T>) {
    for w in &ran.warnings {
        eprintln!("warning: {w}");
    }
}

/// The error of a lease that could not be taken.
fn lease_error(doc: &OpDocument, e: lease::Error) -> CommandError {
    CommandError::from(e).context(format!("cannot take the lease of {}", doc.name))
}

/// Runs `run`.
pub fn cmd_run(binary: Binary, args: &RunArgs) -> Result<Exit, CommandError> {
    crate::process::die_with_parent_if_asked();
    let (project, doc) = open(binary, "run", &args.op)?;
    if doc.is_converge() && args.components.is_some() {
        return Err(CommandError::usage(format!(
            "`{}` is a ConvergeOp: it has no phases, so --components selects nothing",
            doc.name
        )));
    }
    let components = match &args.components {
        Some(names) => Some(
            crate::model::component::select(&doc, names)
                .map_err(|e| CommandError::usage_with("nothing ran and nothing was recorded", e))?,
        ),
        None => None,
    };
    if doc.is_converge() {
        // The seed's way: `chant run staging-converge` runs a single tick, exactly as `tick` does.
        drop(project);
        return cmd_tick(
            binary,
            &TickArgs { op: doc.name.into_string(), json: args.json, no_lease: false, plan: false },
        );
    }
    // A variable that is unset now is unset when its step runs (a run cannot set its own
    // environment), so refuse before anything runs or is recorded, naming the variable and step.
    for phase in doc.phases.iter().chain(doc.on_failure.iter()) {
        for step in &phase.steps {
            if let Err(e) = step.expanded(&runner::expand::from_env) {
                return Err(CommandError::usage_with(
                    format!("nothing ran and nothing was recorded: op `{}`, phase \"{}\"", doc.name, phase.name),
                    e,
                ));
            }
        }
    }
    let env = doc
        .env
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| std::env::var(tick::ENV_VAR).ok().filter(|e| !e.is_empty()))
        .unwrap_or_else(|| crate::ledger::HAND_RUNS_DIR.to_owned());
    let claim = if doc.folded_class() == crate::model::ClassKind::ReadOnly {
        Claim::Unleased
    } else {
        lease_claim(&doc).map_err(|e| lease_error(&doc, e))?
    };
    if doc.folded_class() != crate::model::ClassKind::ReadOnly
        && let Err(e) = project.ledger.writable()
    {
        // A run whose record could not be written would act untraced: refuse before anything runs.
        return Err(CommandError::from(e)
            .context("nothing ran: the ledger cannot be written, so this run could not be recorded"));
    }
    let leases = LeaseStore::new(&project.ledger);
    let ran = match tick::leased(&leases, claim, Release::AfterWork, |_| {
        run_once(&project, &doc, &env, args.json, components.as_ref())
    }) {
        Leased::Ran(ran) => ran,
        Leased::Refused { holder } => {
            return Err(CommandError::failed(format!(
                "lease held by {}",
                holder.as_deref().unwrap_or("another writer")
            )));
        }
        Leased::Failed(e) => return Err(lease_error(&doc, e)),
    };
    lease_warnings(&ran);
    // The record was printed under the lease; a closed stdout is reported once it is released.
    let (status, printed, recorded) = ran.value;
    printed?;
    // A run whose record is not on the ledger is not done, whatever its steps did.
    recorded?;
    Ok(match status {
        Status::Ok | Status::Skipped => Exit::Done,
        Status::Failed => Exit::Failed,
        Status::Gated => Exit::Gated,
    })
}

/// How a run went: its status, how printing its record went, and whether the record is on the
/// ledger (the error names the record and says whether it is kept for the next write or lost).
type RunOutcome = (Status, Result<(), CommandError>, Result<(), CommandError>);

/// Runs `doc` once in `env`, records the run, and prints its record (`--json`: the one line a
/// dispatching tick reads back) or its steps; how printing and recording went come back beside
/// the status.
fn run_once(
    project: &Project,
    doc: &OpDocument,
    env: &str,
    json: bool,
    components: Option<&std::collections::BTreeSet<String>>,
) -> (RunOutcome, Landing) {
    let mut settings = RunSettings::new(env.to_owned());
    settings.components = components.cloned();
    settings.resource = std::env::var(tick::RESOURCE_VAR).ok().filter(|r| !r.is_empty());
    settings.redactor = project.redactor.clone();
    settings.git_sha = project.git_sha();
    let steps: BTreeMap<&str, StepFn> =
        crate::registry::find(&doc.name).map(|o| o.steps.iter().copied().collect()).unwrap_or_default();
    let services = RunServices { project, member: doc.member.as_deref() };
    let clock = project.ledger.clock();
    let now = || clock.now();
    let var = |n: &str| std::env::var(n).ok();
    let environment = Environment { now: &now, var: &var };
    if !json {
        // A hand run without an env is recorded under `_runs/`, a ledger path, not an env.
        if env == crate::ledger::HAND_RUNS_DIR {
            eprintln!("[run] {} (by hand, no env)", doc.name);
        } else {
            eprintln!("[run] {} (env {env})", doc.name);
        }
    }
    let mut record = runner::run(doc, &steps, &settings, &services, &environment);
    let appended = tick::execute::op_digest(doc).map_err(crate::ledger::Error::from).and_then(|digest| {
        record.op_digest = digest;
        project.ledger.append_record_or_keep(doc.member.as_deref(), &record)
    });
    let printed = if json {
        match record.to_line() {
            Ok(l) => println(&l),
            Err(e) => {
                eprintln!("error: cannot render the run record: {e}");
                Ok(())
            }
        }
    } else {
        render_run(&record);
        Ok(())
    };
    let (landing, recorded) = match appended {
        Ok(receipt) => {
            receipt.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
            (Landing::of(&receipt), Ok(()))
        }
        Err(e) => {
            let message =
                format!("the run record {} of {} was not recorded on the ledger: {}", record.id, record.op, chain(&e));
            (Landing::Nothing, Err(CommandError::failed(message)))
        }
    };
    ((record.status, printed, recorded), landing)
}

fn render_run(r: &runner::RunRecord) {
    let mut phase = "";
    for o in &r.outcomes {
        if o.phase != phase {
            eprintln!("[phase] {}", o.phase);
            phase = &o.phase;
        }
        let mark = match o.status {
            Status::Ok => "✓",
            Status::Failed => "✗",
            Status::Gated => "•",
            Status::Skipped => "•",
        };
        let label = match &o.name {
            Some(n) if o.step == "gate" => format!("gate:{n}"),
            Some(n) => format!("{}({n})", o.step),
            None => o.step.clone(),
        };
        let tail = if o.status == Status::Skipped { "skipped".to_owned() } else { format!("{}ms", o.duration_ms) };
        eprintln!("  {mark} {label}   {tail}");
        if let Some(d) = &o.detail {
            eprintln!("    {d}");
        }
    }
    match (&r.status, &r.gate) {
        (Status::Gated, Some(g)) => {
            // The time to reach the gate: every step before it.
            let ms: u64 = r.outcomes.iter().take_while(|o| o.status != Status::Gated).map(|o| o.duration_ms).sum();
            for stop in std::iter::once(g).chain(r.other_gates.iter()) {
                render_stop(r, stop, ms);
            }
        }
        (Status::Failed, _) => {
            // A step's error is said once, under the step; the last line points at it.
            let step =
                r.outcomes.iter().find(|o| o.status == Status::Failed && o.detail.is_some() && o.detail == r.error);
            match step {
                Some(o) => {
                    eprintln!("Op \"{}\" failed at step {} (phase {}); the error is above", r.op, o.step, o.phase)
                }
                None => eprintln!("Op \"{}\" failed: {}", r.op, r.error.as_deref().unwrap_or("")),
            }
        }
        _ => eprintln!("Op \"{}\" completed", r.op),
    }
}

/// Prints one gate a run stopped at, with the command that approves it.
fn render_stop(r: &runner::RunRecord, g: &runner::GateStop, ms: u64) {
    // What the gate's facts carry came from the ledger: shown escaped.
    let p = crate::terminal::printable;
    match &g.component {
        Some(c) => eprintln!(
            "Component \"{}\" of op \"{}\" is gated on \"{}\" after {:.1}s",
            p(c),
            r.op,
            g.name,
            ms as f64 / 1000.0
        ),
        None => eprintln!("Op \"{}\" is gated on \"{}\" after {:.1}s", r.op, g.name, ms as f64 / 1000.0),
    }
    if let Some(d) = &g.description {
        eprintln!("  {}", p(d));
    }
    if let Some(why) = &g.refused {
        eprintln!("  refused : {}", p(why));
    }
    eprintln!("  approve : {}", g.approve_command(&r.op));
    if let Some(e) = &g.expires_at {
        eprintln!("  expires : {}", p(e));
    }
    if let Some(u) = &r.url {
        eprintln!("  approve at: {}", p(u));
    }
    if let Some(plan) = &g.plan {
        eprintln!("  plan    : {}", p(g.plan_digest.as_deref().unwrap_or("")));
        for line in plan.lines() {
            eprintln!("    {}", p(&line));
        }
    }
}

/// Runs `tick`.
pub fn cmd_tick(binary: Binary, args: &TickArgs) -> Result<Exit, CommandError> {
    let (project, doc) = open(binary, "tick", &args.op)?;
    if !doc.is_converge() {
        return Err(CommandError::usage(format!("`{}` is not a ConvergeOp; run it with `run {}`", doc.name, doc.name)));
    }
    if args.plan {
        return super::plan::cmd_plan(&project, &doc, args.json);
    }
    let dispatcher =
        Dispatcher::current().map_err(|e| CommandError::failed_with("cannot find this binary to dispatch runs", e))?;
    let claim = if args.no_lease { Claim::Unleased } else { lease_claim(&doc).map_err(|e| lease_error(&doc, e))? };
    let leases = LeaseStore::new(&project.ledger);
    let ran = tick::leased(&leases, claim, Release::AfterWork, |fence| {
        let options = TickOptions { dispatcher, fence: fence.cloned() };
        let executed = tick::execute(&project, &doc, &options);
        let landing = executed.as_ref().map_or(Landing::Nothing, |outcome| Landing::of(&outcome.receipt));
        (executed, landing)
    });
    let ran = match ran {
        Leased::Ran(ran) => ran,
        Leased::Refused { holder } => {
            let line = format!("skipped (lease held by {})", holder.as_deref().unwrap_or("another writer"));
            if args.json {
                // The skip is the tick's answer: its record on stdout, the words on stderr.
                eprintln!("{line}");
                let env = doc.env.as_ref().map(ToString::to_string).unwrap_or_default();
                let skip = serde_json::json!({"version": 1, "op": doc.name.as_str(), "env": env,
                    "skipped": "lease-held", "holder": holder});
                println(&skip.to_string())?;
            } else {
                println(&line)?;
            }
            return Ok(Exit::Done);
        }
        Leased::Failed(e) => return Err(lease_error(&doc, e)),
    };
    lease_warnings(&ran);
    if let Some(lost) = &ran.lost {
        eprintln!(
            "warning: fenced: {lost}; the tick dispatched nothing from then on, and its record says fenced (the lease is not \
             released: it is not ours)"
        );
    }
    let executed = ran.value;
    match executed {
        Ok(outcome) => {
            let r = &outcome.record;
            if args.json {
                match r.to_line() {
                    Ok(l) => println(&l)?,
                    Err(e) => eprintln!("error: cannot render the tick record: {e}"),
                }
            } else {
                for o in &r.outcomes {
                    let res = o.resource.as_deref().map(|x| format!(" [{x}]")).unwrap_or_default();
                    let target = o.op.as_deref().map(|x| format!(" → {x}")).unwrap_or_default();
                    let why = o.reason.as_deref().map(|x| format!(": {x}")).unwrap_or_default();
                    eprintln!("  {} {}{res}{target}{why}", o.action.as_str(), o.rule_id);
                }
                // What could not be read, and why, with what to do about it where the lexicon
                // says (an unbound env names the key to set): the headline has the count and
                // the first reason only.
                for row in
                    r.components.iter().flatten().filter(|row| row.reconciliation == crate::model::EnvStatus::Unknown)
                {
                    eprintln!("  {} {}", row.component, crate::terminal::printable(&row.status_line()));
                }
                println(&crate::tick::health::headline(r))?;
            }
            for w in &outcome.receipt.warnings {
                eprintln!("warning: {w}");
            }
            for u in &outcome.unreadable {
                eprintln!(
                    "warning: unreadable ledger line {}:{} on {} ({}), skipped and left in place: fix or remove it in a commit on that branch",
                    u.path,
                    u.line,
                    crate::ledger::BRANCH,
                    u.reason
                );
            }
            // The recorded error string, already rendered with its causes.
            if let Some(recorded) = &r.error {
                return Err(CommandError::failed(format!("tick failed: {recorded}")));
            }
            Ok(Exit::Done)
        }
        Err(e) => Err(e.into()),
    }
}
