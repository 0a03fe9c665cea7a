//! `lifecycle diff <env> --live [--json]`: the env's change sets and status rows, computed by the
//! same code a tick derives its symptom from ([`Project::assess`]), so what the diff prints is
//! what the converge loop decides on.
//!
//! An env this binary declares nothing for is a usage error (exit 2, with a did-you-mean over the
//! declared envs), never `reconciled`; the stock binary, which carries no declarations, says so.
//!
//! Without `--json` it prints one line per status row, then every entry that is not `noop`
//! (unobserved ones in words, with the address asked and never a password), and under a created
//! or updated entity whose lexicon keeps its content, a unified diff from live to declared
//! ([`crate::diff::text`]); with `--json` one document on one line, the library's
//! [`crate::diff::Diff`] (the document the dashboard serves too).
//!
//! `--exit-code` lets CI gate on the answer, as `terraform plan -detailed-exitcode` and
//! `kubectl diff` do: 0 when nothing differs, 1 when something is to be created, updated or
//! deleted, 4 when anything is unobserved (the answer is incomplete, which outranks a change).
//!
//! `--deep`, `--update-baseline` and `lifecycle baseline` are in [`super::deep`].

use clap::{Args, Subcommand};

use super::error::println;
use super::{Binary, CommandError, Exit};
use crate::diff::Verdict;
pub use crate::diff::{Diff, LexiconResources, diff, diff_of, member_of};
use crate::model::ComponentRow;
use crate::observe::estate::Reading;
use crate::observe::{ChangeAction, some_names, unobserved_by_cause};
use crate::project::Project;
use crate::tick::health::HealthState;

/// Show how an env differs from its declaration
#[derive(Debug, Args)]
pub struct LifecycleArgs {
    /// The lifecycle subcommand.
    #[command(subcommand)]
    pub command: LifecycleCommand,
}

/// The lifecycle subcommands.
#[derive(Debug, Subcommand)]
pub enum LifecycleCommand {
    /// Print the change set and status rows of an env
    Diff(DiffArgs),
    /// Print what the operator's next tick of each ConvergeOp of an env would act on
    Plan(PlanArgs),
    /// Predict how an env's estate behaves at a traffic level, asked of the behaviour engine
    Predict(super::predict::PredictArgs),
    /// Show or clear an env's accepted observation baseline
    Baseline(super::deep::BaselineArgs),
    /// Print what a teardown of an env would remove, and what it cannot see
    Teardown(super::teardown::TeardownArgs),
    /// List the deploy units of an env, each present, absent or unknown
    Status(super::units::StatusArgs),
}

/// Print the change set and status rows of an env
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The env.
    pub env: String,
    /// Observe the live estate: what `diff` always does (the only diff there is; the flag is
    /// kept for scripts that spell it out).
    #[arg(long)]
    pub live: bool,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when anything is to be created, updated or deleted, 4 when anything is unobserved.
    #[arg(long)]
    pub exit_code: bool,
    /// The deep observation and baseline options.
    #[command(flatten)]
    pub deep_args: super::deep::DeepArgs,
    /// Record the artifacts listed now as the snapshot the next diff compares with.
    #[arg(long)]
    pub snapshot_artifacts: bool,
}

/// Print what the operator's next tick of each ConvergeOp of an env would act on
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The env.
    pub env: String,
    /// Observe the live estate: what `plan` always does (the plan is of what a tick would see
    /// now; the flag is kept for scripts that spell it out).
    #[arg(long)]
    pub live: bool,
    /// Print each ConvergeOp's plan on one line of JSON: exactly `tick <op> --plan --json`.
    #[arg(long)]
    pub json: bool,
    /// Exit as `lifecycle diff --exit-code` would: 1 something to create, update or delete, 4
    /// something unobserved.
    #[arg(long)]
    pub exit_code: bool,
}

/// Returns the exit `--exit-code` gives for `diff`: [`Exit::Unobserved`] when anything is
/// unobserved, else [`Exit::Differs`] when anything is to be created, updated or deleted, else
/// [`Exit::Done`].
pub fn exit_code(diff: &Diff) -> Exit {
    match diff.verdict() {
        Verdict::Unobserved => Exit::Unobserved,
        Verdict::Differs => Exit::Differs,
        Verdict::Same => Exit::Done,
    }
}

/// One status row for a person: `files drifted: 1 update (app.conf)`, without repeating the
/// status when the row's detail already opens with it (`drifted: ...`).
pub fn row_line(row: &ComponentRow) -> String {
    format!("{} {}", row.component, row.status_line())
}

/// Renders a diff for a person, one line each.
pub fn render(diff: &Diff) -> Vec<String> {
    // The health word first (one vocabulary with status and the operator), the rules' status
    // word beside it where the seed's word differs.
    let health = HealthState::of_env_status(diff.status);
    let seed = if health.as_str() == diff.status.as_str() {
        String::new()
    } else {
        format!(" (status {})", diff.status.as_str())
    };
    let mut out =
        vec![format!("lifecycle diff {} (live): {}{seed}", diff.env, super::colour::paint(health, health.as_str()))];
    if diff.components.is_empty() {
        out.push(format!("  env {} declares nothing in this binary", diff.env));
    }
    for row in &diff.components {
        // An unknown row's detail names the causes; the lines below say each once, in full.
        let unobserved = diff
            .change_sets
            .iter()
            .find(|cs| cs.component == row.component)
            .map_or(0, |cs| cs.with_action(ChangeAction::Unobserved).count());
        if row.reconciliation.as_str() == "unknown" && unobserved > 0 {
            out.push(format!("  {} unknown: {unobserved} unobserved", row.component));
        } else {
            out.push(format!("  {}", row_line(row)));
        }
    }
    for cs in &diff.change_sets {
        // One line per cause for what could not be read (an unset variable keeps every entity
        // from being read: it is said once, with the entities it hid).
        for (cause, names) in unobserved_by_cause(&cs.entries) {
            out.push(format!("    unobserved {}: {} — {cause}", cs.component, some_names(&names)));
        }
        for entry in cs.entries.iter().filter(|e| !matches!(e.action, ChangeAction::Noop | ChangeAction::Unobserved)) {
            let texts = diff.text_changes.iter().find(|t| t.component == cs.component && t.name == entry.name);
            out.push(format!("    {} {}/{}", entry.action.as_str(), cs.component, entry.summary(texts.is_some())));
            if let Some(change) = texts {
                out.extend(change.diff.lines().map(|l| format!("      {l}")));
            }
        }
    }
    // What the baseline subtracted is not drift, and is never silent.
    if diff.symptom.baselined_count > 0 {
        out.push(format!(
            "  baselined={}: path(s) that differ from the declaration, accepted by the env's baseline (not counted as drift; `chant lifecycle baseline {}` lists them)",
            diff.symptom.baselined_count, diff.env
        ));
    }
    out.extend(render_estate(diff));
    out
}

/// The sections past the declared estate: dependencies, ambient resources, artifacts, each only
/// for the lexicons that read it.
fn render_estate(diff: &Diff) -> Vec<String> {
    let mut out = Vec::new();
    // A reader that failed for a cause already said above (an unset DSN variable keeps every
    // reader of the lexicon from its server) says only that.
    let causes: Vec<String> =
        diff.change_sets.iter().flat_map(|cs| unobserved_by_cause(&cs.entries)).map(|(c, _)| c).collect();
    let failed = |out: &mut Vec<String>, what: &str, lexicon: &str, e: &str| {
        let same = causes.iter().any(|c| {
            let detail = c.split_once(": ").map_or(c.as_str(), |(_, d)| d);
            !detail.is_empty() && e.ends_with(detail)
        });
        if same {
            out.push(format!("  {what} {lexicon}: not read, for the same reason"));
        } else {
            out.push(format!("  {what} {lexicon}: could not be read: {e}"));
        }
    };
    for (lexicon, reading) in &diff.dependencies {
        match reading {
            Reading::Read(d) => {
                for (name, dep) in &d.resources {
                    out.push(format!(
                        "    dependency {lexicon}/{name} ({}) referenced by {}",
                        dep.kind,
                        dep.referenced_by.join(", ")
                    ));
                }
                for (name, hole) in &d.holes {
                    out.push(format!(
                        "    dependency {lexicon}/{name} unobserved — {}{} (referenced by {})",
                        hole.reason.text(),
                        hole.detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default(),
                        hole.referenced_by.join(", ")
                    ));
                }
            }
            Reading::Failed(e) => failed(&mut out, "dependencies of", lexicon, e),
            Reading::NotImplemented => {}
        }
    }
    for (lexicon, reading) in &diff.ambient {
        match reading {
            Reading::Read(a) => {
                for (name, r) in &a.resources {
                    out.push(format!("    ambient {lexicon}/{name} ({})", r.kind));
                }
                for (scope, hole) in &a.holes {
                    out.push(format!("    ambient {lexicon}/{} unscanned", hole.describe(scope)));
                }
            }
            Reading::Failed(e) => failed(&mut out, "ambient resources of", lexicon, e),
            Reading::NotImplemented => {}
        }
    }
    for (lexicon, reading) in &diff.artifacts {
        match reading {
            Reading::Read(a) => {
                let against = if a.snapshot { "against the last snapshot" } else { "no snapshot yet" };
                out.push(format!(
                    "  artifacts {lexicon} ({against}): {} added, {} removed, {} changed, {} unchanged",
                    a.added.len(),
                    a.removed.len(),
                    a.changed.len(),
                    a.unchanged.len()
                ));
                for (word, names) in [("added", &a.added), ("removed", &a.removed), ("changed", &a.changed)] {
                    out.extend(names.iter().map(|n| format!("    {word} {lexicon}/{n}")));
                }
            }
            Reading::Failed(e) => failed(&mut out, "artifacts of", lexicon, e),
            Reading::NotImplemented => {}
        }
    }
    out
}

/// Runs `lifecycle`.
pub fn cmd_lifecycle(binary: Binary, args: &LifecycleArgs) -> Result<Exit, CommandError> {
    match &args.command {
        LifecycleCommand::Diff(d) => cmd_diff(binary, d),
        LifecycleCommand::Plan(p) => cmd_plan(binary, p),
        LifecycleCommand::Predict(p) => super::predict::cmd_predict(binary, p),
        LifecycleCommand::Baseline(b) => super::deep::cmd_baseline(binary, b),
        LifecycleCommand::Teardown(t) => super::teardown::cmd_teardown(binary, t),
        LifecycleCommand::Status(s) => super::units::cmd_status(binary, s),
    }
}

/// The envs a command asked with `--env` covers: the one named (a valid name this binary
/// declares, else a usage error saying why), or without it every env the binary declares.
pub(crate) fn envs_asked(binary: Binary, env: Option<&str>) -> Result<Vec<&str>, CommandError> {
    match env {
        Some(env) => {
            crate::model::Name::parse("env name", env)?;
            check_declared(binary, env)?;
            Ok(vec![env])
        }
        None => Ok(crate::lexicon::declared_envs()),
    }
}

/// Refuses an env this binary declares nothing for: its diff would show nothing declared and
/// call the env `reconciled`. The stock binary carries no declarations at all.
pub(crate) fn check_declared(binary: Binary, env: &str) -> Result<(), CommandError> {
    if binary == Binary::Stock {
        return Err(CommandError::usage(format!(
            "the stock chant binary carries no env declarations, so it cannot tell how env `{env}` differs from one; use the project's own binary (`cargo run --bin <project-bin> -- lifecycle diff {env} --live`)"
        )));
    }
    let declared = crate::lexicon::declared_envs();
    if declared.contains(&env) {
        return Ok(());
    }
    let hint = crate::model::contract::did_you_mean(env, declared.iter().copied())
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    let known = if declared.is_empty() { "none".to_owned() } else { declared.join(", ") };
    Err(CommandError::usage(format!(
        "env `{}` has no declaration in this binary{hint} (declared envs: {known})",
        crate::terminal::printable(env)
    )))
}

fn cmd_diff(binary: Binary, args: &DiffArgs) -> Result<Exit, CommandError> {
    crate::model::Name::parse("env name", args.env.as_str())?;
    check_declared(binary, &args.env)?;
    if args.deep_args.any() {
        return super::deep::cmd_diff_deep(args);
    }
    let project = super::open_project()?;
    let member = member_of(&project, &args.env);
    let diff =
        diff(&project, member.as_deref(), &args.env).map_err(|e| CommandError::from(e).redact(&project.redactor))?;
    if args.snapshot_artifacts {
        take_snapshot(&project, member.as_deref(), &diff)?;
    }
    if args.json {
        let line = super::error::to_json(&diff, "the diff")?;
        println(&project.redactor.redact(&line))?;
    } else {
        for line in render(&diff) {
            println(&project.redactor.redact(&line))?;
        }
    }
    if args.exit_code {
        return Ok(exit_code(&diff));
    }
    if nothing_observed(&diff) {
        eprintln!(
            "lifecycle diff {}: nothing could be observed (the reasons are above); this diff is not an answer",
            crate::terminal::printable(&diff.env)
        );
        return Ok(Exit::Failed);
    }
    Ok(Exit::Done)
}

/// True when the env declares something and not one declared entity could be observed: the diff
/// answers nothing (exit 1, as docs/operator.md's table says; `--exit-code` keeps its 4).
pub fn nothing_observed(diff: &Diff) -> bool {
    let mut entries = diff.change_sets.iter().flat_map(|cs| &cs.entries).peekable();
    entries.peek().is_some() && entries.all(|e| e.action == ChangeAction::Unobserved)
}

/// `lifecycle plan <env> --live`: for each ConvergeOp of the env, the plan its next tick would act
/// on, from the one planner `tick --plan` uses ([`crate::tick::preview`]): the symptom with its
/// change set, every rule with whether it would fire, what it would run or report and why, and
/// for each op it would run the gates that would stop it (with the gate's description and how it
/// is approved). Writes nothing.
fn cmd_plan(binary: Binary, args: &PlanArgs) -> Result<Exit, CommandError> {
    crate::model::Name::parse("env name", args.env.as_str())?;
    if binary == Binary::Stock {
        // Its own words: the stock binary has no ConvergeOps to plan.
        check_declared(binary, &args.env)?;
    }
    let project = super::open_project()?;
    let ops: Vec<&crate::model::OpDocument> =
        project.catalog.converge_ops().filter(|d| d.env.as_deref() == Some(args.env.as_str())).collect();
    if ops.is_empty() {
        // An env nothing declares is a slip: named as `lifecycle diff` names it, with the env meant.
        check_declared(binary, &args.env)?;
        return Err(CommandError::usage(format!(
            "no ConvergeOp of this binary ticks env `{}`; `lifecycle diff {}` shows its change set",
            crate::terminal::printable(&args.env),
            args.env
        )));
    }
    let mut failed = false;
    let mut verdict = Verdict::Same;
    for doc in ops {
        let preview = crate::tick::preview(&project, doc).map_err(|e| CommandError::failed_with("cannot plan", e))?;
        failed |= preview.error.is_some();
        verdict = verdict.max(plan_verdict(preview.symptom.as_ref()));
        if args.json {
            let line = super::error::to_json(&preview, "the plan")?;
            println(&project.redactor.redact(&line))?;
            continue;
        }
        let mut text = super::plan::render(&preview);
        for (owner, gates) in gates_ahead(&project, &preview) {
            for (gate, description) in gates {
                let why = description.map(|d| format!(": {d}")).unwrap_or_default();
                text.push_str(&format!(
                    "gated: {owner} would stop at gate \"{gate}\"{why} (until `chant approve {owner} {gate}`)\n"
                ));
            }
        }
        super::error::print(&project.redactor.redact(&text))?;
        if let Some(e) = &preview.error {
            eprintln!("error: the tick of {} would fail: {e}", doc.name);
        }
    }
    if failed {
        return Ok(Exit::Failed);
    }
    Ok(match (args.exit_code, verdict) {
        (false, _) | (true, Verdict::Same) => Exit::Done,
        (true, Verdict::Differs) => Exit::Differs,
        (true, Verdict::Unobserved) => Exit::Unobserved,
    })
}

/// What `--exit-code` reads from a planned symptom, as `lifecycle diff --exit-code` reads a diff:
/// anything unobserved (an unknown resource), else anything to create, update or delete (a drifted
/// resource), else the same.
fn plan_verdict(symptom: Option<&crate::tick::PlannedSymptom>) -> Verdict {
    use crate::model::{EnvStatus, ResourceStatus};
    match symptom {
        None => Verdict::Unobserved,
        Some(crate::tick::PlannedSymptom::Env(s)) if s.status == EnvStatus::Unknown || s.unobserved_count > 0 => {
            Verdict::Unobserved
        }
        Some(crate::tick::PlannedSymptom::Env(s)) if s.create_count + s.update_count + s.delete_count > 0 => {
            Verdict::Differs
        }
        Some(crate::tick::PlannedSymptom::Env(_)) => Verdict::Same,
        Some(crate::tick::PlannedSymptom::Resources(rs)) => {
            if rs.iter().any(|r| r.status == ResourceStatus::Unknown) {
                Verdict::Unobserved
            } else if rs.iter().any(|r| r.status == ResourceStatus::Drifted) {
                Verdict::Differs
            } else {
                Verdict::Same
            }
        }
    }
}

/// A gate in an op's phases: its name and description.
type GateStep = (String, Option<String>);

/// The gates ahead of the ops a plan would run, in order, under who approves them: the op, or
/// for a gate in a component's phase that component.
fn gates_ahead(project: &Project, preview: &crate::tick::Preview) -> Vec<(String, Vec<GateStep>)> {
    let mut out: Vec<(String, Vec<GateStep>)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for op in preview.rules.iter().filter(|r| r.verdict == "ran").filter_map(|r| r.op.as_deref()) {
        if seen.contains(&op) {
            continue;
        }
        seen.push(op);
        let Some(doc) = project.catalog.get(op) else { continue };
        // A gate in a component's phase is that component's: approved as `chant approve
        // <component> <gate>`, as the run that stops at it says.
        for phase in doc.phases.iter().chain(doc.on_failure.iter()) {
            let owner = phase.component.as_ref().map_or_else(|| op.to_owned(), ToString::to_string);
            for step in &phase.steps {
                if let crate::model::Step::Gate { name, args, .. } = step {
                    let gate = (name.to_string(), args.description.clone());
                    match out.iter_mut().find(|(o, _)| *o == owner) {
                        Some((_, gates)) => gates.push(gate),
                        None => out.push((owner.clone(), vec![gate])),
                    }
                }
            }
        }
    }
    out
}

/// Records the artifacts the diff listed as each lexicon's snapshot (after the diff against the
/// previous one was computed), saying so on stderr.
fn take_snapshot(project: &Project, member: Option<&str>, diff: &Diff) -> Result<(), CommandError> {
    let taken = crate::lexicon::estate::snapshot_artifacts(&project.ledger, member, &diff.env, &diff.artifact_listings)
        .map_err(|e| CommandError::failed_with("cannot record the artifact snapshot", e).redact(&project.redactor))?;
    eprintln!("lifecycle diff {}: artifact snapshot recorded for {taken} lexicon(s)", diff.env);
    Ok(())
}
