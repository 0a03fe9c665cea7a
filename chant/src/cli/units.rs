//! `lifecycle status <env> --live [--json]`: the env's deploy units (a PostgreSQL schema, a box
//! service) by their deployed names, each present and healthy, present and unhealthy, absent
//! (`{"present": false}`), or unknown (`null`: the read failed for any other reason).
//!
//! Only lexicons that name their units take part; the rest say nothing here. With `--json`, one
//! document on one line: `{env, units: [{lexicon, unit, status, detail?}]}`.

use clap::Args;
use serde::Serialize;

use super::error::println;
use super::lifecycle::{check_declared, member_of};
use super::{Binary, CommandError, Exit};
use crate::observe::estate::UnitStatus;

/// List the deploy units of an env, each present, absent or unknown
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The env.
    pub env: String,
    /// Read the live units: what `status` always does (a unit's status is read, never
    /// recorded; the flag is kept for scripts that spell it out).
    #[arg(long)]
    pub live: bool,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What `lifecycle status --live --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Units {
    /// The env.
    pub env: String,
    /// Every unit, lexicon by lexicon.
    pub units: Vec<UnitStatus>,
}

/// Renders the units for a person, one line each.
pub fn render(units: &Units) -> Vec<String> {
    let mut out = vec![format!("lifecycle status {} (live): {} unit(s)", units.env, units.units.len())];
    for unit in &units.units {
        let detail = unit.detail.as_deref().map(|d| format!(" — {d}")).unwrap_or_default();
        out.push(format!("  {}/{} {}{detail}", unit.lexicon, unit.unit, unit.status.word()));
    }
    out
}

/// Runs `lifecycle status`.
pub fn cmd_status(binary: Binary, args: &StatusArgs) -> Result<Exit, CommandError> {
    crate::model::Name::parse("env name", args.env.as_str())?;
    check_declared(binary, &args.env)?;
    let project = super::open_project()?;
    let member = member_of(&project, &args.env);
    let lexicons =
        project.lexicons(member.as_deref(), &args.env).map_err(|e| CommandError::from(e).redact(&project.redactor))?;
    let units = Units { env: args.env.clone(), units: crate::lexicon::estate::unit_statuses(&lexicons) };
    if args.json {
        let line = super::error::to_json(&units, "the units")?;
        println(&project.redactor.redact(&line))?;
    } else {
        for line in render(&units) {
            println(&project.redactor.redact(&line))?;
        }
    }
    Ok(Exit::Done)
}
