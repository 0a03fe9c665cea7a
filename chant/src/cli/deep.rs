//! `lifecycle diff <env> --live --deep [--json]`, `--update-baseline [--path <entity>.<path>]
//! [--yes]`, and `lifecycle baseline <env> [--json] [--clear <entity>.<path>]`: the deep
//! observation and the accepted baseline on the command line.
//!
//! `--deep` prints, below the whole-entity diff, every drifting path (declared -> live, with the
//! owner when the substrate records one and the accepted value when the path moved away from
//! it), every unclaimed path (held by, source) and every baselined path; with `--json` the diff
//! document gains `deep` (one verdict per component with a deep read) and `baseline` (`{path,
//! accepted, error?}`). `--update-baseline` accepts what the run reported, as one commit on the
//! ledger branch: one path with `--path`, or every reported path, which needs `--yes` when it
//! spans more than one entity. A `--path` or `--clear` that names nothing reported (or
//! accepted) is a usage error (exit 2). A baseline that does not parse is reported with its path
//! and ignored for the run.

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use super::error::println;
use super::lifecycle::{Diff, diff_of, exit_code, member_of, render};
use super::{Binary, CommandError, Exit};
use crate::observe::deep::ComponentDeep;
use crate::observe::deep::baseline::{Baseline, Candidate, candidates, split_target};
use crate::observe::deep::fold::text;
use crate::project::{DeepAssessment, Project};

/// The deep options of `lifecycle diff`.
#[derive(Debug, Clone, Default, Args)]
pub struct DeepArgs {
    /// Also print property-level drift, unclaimed and baselined paths (lexicons with a deep read).
    #[arg(long)]
    pub deep: bool,
    /// Accept what this run reports into the env's baseline on the ledger branch (implies --deep).
    #[arg(long)]
    pub update_baseline: bool,
    /// With --update-baseline: accept only this path, written `<entity>.<path>`.
    #[arg(long, value_name = "ENTITY.PATH", requires = "update_baseline")]
    pub path: Option<String>,
    /// With --update-baseline: accept every reported path even when they span several entities.
    #[arg(long, requires = "update_baseline")]
    pub yes: bool,
    /// With --update-baseline: who accepts, recorded as each path's `acceptedBy` (default: the
    /// repository's git identity, `user.name`).
    #[arg(long, requires = "update_baseline")]
    pub actor: Option<String>,
}

impl DeepArgs {
    /// Returns true when any deep option was given.
    pub fn any(&self) -> bool {
        self.deep || self.update_baseline
    }
}

/// Show or clear an env's accepted observation baseline
#[derive(Debug, Args)]
pub struct BaselineArgs {
    /// The env.
    pub env: String,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Clear one accepted path, written `<entity>.<path>`.
    #[arg(long, value_name = "ENTITY.PATH")]
    pub clear: Option<String>,
    /// Replace the env's baseline with an empty one written by chant: the way out of a baseline
    /// chant did not write (or cannot read), which is reported and never honoured.
    #[arg(long, conflicts_with = "clear")]
    pub reset: bool,
}

/// Where the baseline is and what it holds, in the deep diff document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineState {
    /// `chant/lifecycle:<member prefix><env>/observation-baseline.json`.
    pub path: String,
    /// How many paths are accepted.
    pub accepted: usize,
    /// Why it was ignored for this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The diff document with its deep verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeepDiff {
    /// The whole-entity diff, deep drift folded in.
    #[serde(flatten)]
    pub diff: Diff,
    /// One verdict per component with a deep read.
    pub deep: Vec<ComponentDeep>,
    /// The baseline subtracted.
    pub baseline: BaselineState,
}

/// Renders the deep verdicts for a person, one line each.
pub fn render_deep(deep: &[ComponentDeep], baseline: &BaselineState) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(error) = &baseline.error {
        out.push(format!("  warning: {error}"));
    }
    for component in deep {
        if let Some(why) = &component.unavailable {
            out.push(format!("  deep {}: not read: {why}", component.component));
            continue;
        }
        for e in &component.entities {
            let at = format!("{}/{}", component.component, e.entity);
            for d in &e.drift {
                let live = d.live.as_ref().map_or_else(|| "(none)".to_owned(), shown);
                let owner = d.owner.as_ref().map(|o| format!(" (owner {o})")).unwrap_or_default();
                let accepted = d.baseline.as_ref().map(|b| format!(" [baseline {}]", shown(b))).unwrap_or_default();
                out.push(format!("    drift {at} {}: {} -> {live}{owner}{accepted}", d.path, shown(&d.declared)));
            }
            for u in &e.unclaimed {
                let held = u.held_by.as_ref().map(|h| format!("held by {h}, ")).unwrap_or_default();
                let accepted = u.baseline.as_ref().map(|b| format!(" [baseline {}]", shown(b))).unwrap_or_default();
                out.push(format!(
                    "    unclaimed {at} {} = {} ({held}{}){accepted}",
                    u.path,
                    shown(&u.value),
                    u.source.as_str()
                ));
            }
            for b in &e.baselined {
                out.push(format!("    baselined {at} {} = {}", b.path, shown(&b.value)));
            }
        }
    }
    out
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(_) => value.to_string(),
        other => text(other),
    }
}

/// Runs `lifecycle diff` with deep options (the caller checked the env and `--live`).
pub fn cmd_diff_deep(args: &super::lifecycle::DiffArgs) -> Result<Exit, CommandError> {
    let project = super::open_project()?;
    let member = member_of(&project, &args.env);
    let redact = |e: crate::project::Error| CommandError::from(e).redact(&project.redactor);
    let assessed = project.assess_deep(member.as_deref(), &args.env).map_err(redact)?;
    if args.deep_args.update_baseline {
        return update_baseline(&project, member.as_deref(), &args.env, &assessed, &args.deep_args);
    }
    let diff = diff_of(&project, member.as_deref(), &args.env, assessed.assessment.clone()).map_err(redact)?;
    let state = BaselineState {
        path: assessed.baseline_path.clone(),
        accepted: assessed.baseline.accepted.len(),
        error: assessed.baseline_error.clone(),
    };
    let exit = if args.exit_code { exit_code(&diff) } else { Exit::Done };
    let document = DeepDiff { diff, deep: assessed.deep, baseline: state };
    if args.json {
        let line = super::error::to_json(&document, "the diff")?;
        println(&project.redactor.redact(&line))?;
    } else {
        for line in render(&document.diff).into_iter().chain(render_deep(&document.deep, &document.baseline)) {
            println(&project.redactor.redact(&line))?;
        }
    }
    Ok(exit)
}

fn update_baseline(
    project: &Project,
    member: Option<&str>,
    env: &str,
    assessed: &DeepAssessment,
    args: &DeepArgs,
) -> Result<Exit, CommandError> {
    // The reason is the baseline error already rendered with its causes (`DeepAssessment`).
    if let Some(reason) = &assessed.baseline_error {
        return Err(CommandError::failed(format!("{reason}; not updating a baseline that cannot be read")));
    }
    let reported = candidates(&assessed.deep);
    let chosen: Vec<Candidate> = match &args.path {
        Some(target) => {
            let entities: Vec<&str> = reported.iter().map(|c| c.entity.as_str()).collect();
            let found = split_target(target, &entities)
                .and_then(|(entity, path)| reported.iter().find(|c| c.entity == entity && c.path == path));
            match found {
                Some(c) => vec![c.clone()],
                None => {
                    let listed: Vec<String> = reported.iter().map(|c| format!("{}.{}", c.entity, c.path)).collect();
                    let known = if listed.is_empty() { "none".to_owned() } else { listed.join(", ") };
                    return Err(CommandError::usage(format!(
                        "--path {target} names nothing this run reported for env {env} (reported paths: {known})"
                    )));
                }
            }
        }
        None => reported,
    };
    let entities: std::collections::BTreeSet<&str> = chosen.iter().map(|c| c.entity.as_str()).collect();
    if entities.len() > 1 && !args.yes {
        return Err(CommandError::usage(format!(
            "--update-baseline would accept {} path(s) on {} entities ({}); pass --yes to accept them all, or --path <entity>.<path> for one",
            chosen.len(),
            entities.len(),
            entities.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    if chosen.is_empty() {
        println(&format!("nothing to accept: env {env} reports no deep drift or unclaimed path"))?;
        return Ok(Exit::Done);
    }
    let mut updated = assessed.baseline.clone();
    let at = crate::clock::format(project.ledger.clock().now());
    // Who accepts: --actor, else the git identity the ledger's commits are written as.
    let by = match &args.actor {
        Some(a) => {
            crate::approval::Approver::parse(a).map_err(|e| CommandError::usage_with("--actor", e))?.as_str().to_owned()
        }
        None => project.ledger.identity().name,
    };
    for c in &chosen {
        updated.accept(c, &at, &by);
    }
    let receipt =
        project.write_baseline(member, env, &updated, &format!("baseline {env}: accept {} path(s)", chosen.len()))?;
    for c in &chosen {
        println(&project.redactor.redact(&format!("accepted {}.{} = {}", c.entity, c.path, shown(&c.value))))?;
    }
    println(&format!("baseline {} updated ({})", assessed.baseline_path, receipt.commit))?;
    Ok(Exit::Done)
}

/// The baseline document as `lifecycle baseline --json` prints it.
#[derive(Debug, Serialize)]
struct Shown<'a> {
    path: &'a str,
    #[serde(flatten)]
    baseline: &'a Baseline,
}

/// Runs `lifecycle baseline`.
pub fn cmd_baseline(binary: Binary, args: &BaselineArgs) -> Result<Exit, CommandError> {
    crate::model::Name::parse("env name", args.env.as_str())?;
    super::lifecycle::check_declared(binary, &args.env)?;
    let project = super::open_project()?;
    let member = member_of(&project, &args.env);
    let path = project.baseline_path(member.as_deref(), &args.env)?;
    let shown_path = format!("chant/lifecycle:{path}");
    if args.reset {
        let empty = Baseline::new(args.env.as_str());
        project.write_baseline(member.as_deref(), &args.env, &empty, &format!("baseline {}: reset", args.env))?;
        println(&format!("reset {shown_path}: no accepted paths"))?;
        return Ok(Exit::Done);
    }
    let mut baseline = project.read_baseline(member.as_deref(), &args.env)??;
    if let Some(target) = &args.clear {
        let entities: Vec<&str> = baseline.accepted.iter().map(|a| a.entity.as_str()).collect();
        let split = split_target(target, &entities).map(|(e, p)| (e.to_owned(), p.to_owned()));
        let Some((entity, p)) = split.filter(|(e, p)| baseline.get(e, p).is_some()) else {
            return Err(CommandError::usage(format!(
                "--clear {target} names no accepted path of env {} (see `lifecycle baseline {}`)",
                args.env, args.env
            )));
        };
        baseline.clear(&entity, &p);
        project.write_baseline(
            member.as_deref(),
            &args.env,
            &baseline,
            &format!("baseline {}: clear {target}", args.env),
        )?;
        println(&format!("cleared {target} from {shown_path}"))?;
        return Ok(Exit::Done);
    }
    if args.json {
        let line = super::error::to_json(&Shown { path: &shown_path, baseline: &baseline }, "the baseline")?;
        println(&project.redactor.redact(&line))?;
        return Ok(Exit::Done);
    }
    println(&format!("baseline of env {} ({shown_path}): {} accepted path(s)", args.env, baseline.accepted.len()))?;
    for a in &baseline.accepted {
        println(&project.redactor.redact(&format!(
            "  {}.{} = {} (accepted {} by {})",
            a.entity,
            a.path,
            shown(&a.value),
            a.accepted_at,
            a.accepted_by
        )))?;
    }
    Ok(Exit::Done)
}
