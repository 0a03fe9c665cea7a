//! `lifecycle teardown <env> [--json]`: the teardown plan of an env — what the `teardown(env)`
//! step would remove, per lexicon, and the holes it cannot see into — read-only: it changes
//! nothing.
//!
//! Every candidate was read carrying this project's and env's marker (or, for files, is a path of
//! the last recorded apply); each hole names what could not be read and why, in the observation
//! contract's reasons. The `teardown(env)` step executes exactly this plan and refuses to run
//! while it has holes unless the step says `allow_holes = true`. With `--json`, one document on
//! one line: `{env, lexicons: [{lexicon, source, candidates, holes}], candidateCount, holeCount}`.

use clap::Args;

use super::error::println;
use super::lifecycle::{check_declared, member_of};
use super::{Binary, CommandError, Exit};
use crate::lexicon::estate::EnvTeardownPlan;

/// Print what a teardown of an env would remove, and what it cannot see
#[derive(Debug, Args)]
pub struct TeardownArgs {
    /// The env.
    pub env: String,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Renders a plan for a person, one line each.
pub fn render(plan: &EnvTeardownPlan) -> Vec<String> {
    let mut out = vec![format!(
        "lifecycle teardown {} (plan, nothing changed): {} to remove, {} hole(s)",
        plan.env, plan.candidate_count, plan.hole_count
    )];
    for lexicon in &plan.lexicons {
        for (name, candidate) in &lexicon.plan.candidates {
            let kind = candidate.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
            out.push(format!("    remove {}/{name}{kind}", lexicon.lexicon));
        }
        for hole in &lexicon.plan.holes {
            out.push(format!("    hole {}/{}", lexicon.lexicon, hole.describe()));
        }
    }
    if !plan.is_complete() {
        out.push(
            "  the teardown step refuses to run while the plan has holes (unless it says `allow_holes = true`)"
                .to_owned(),
        );
    }
    out
}

/// Runs `lifecycle teardown`.
pub fn cmd_teardown(binary: Binary, args: &TeardownArgs) -> Result<Exit, CommandError> {
    crate::model::Name::parse("env name", args.env.as_str())?;
    check_declared(binary, &args.env)?;
    let project = super::open_project()?;
    let member = member_of(&project, &args.env);
    let plan = project
        .teardown_plan(member.as_deref(), &args.env)
        .map_err(|e| CommandError::from(e).redact(&project.redactor))?;
    if args.json {
        let line = super::error::to_json(&plan, "the plan")?;
        println(&project.redactor.redact(&line))?;
    } else {
        for line in render(&plan) {
            println(&project.redactor.redact(&line))?;
        }
    }
    Ok(Exit::Done)
}
