//! `ops`: list the ops compiled into this binary; `ops check`: re-validate op.json files.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::error::{print, println};
use super::{Binary, CommandError, Exit};
use crate::catalog;

/// List the ops compiled into this binary, or check op.json files
#[derive(Debug, Args)]
pub struct OpsArgs {
    /// Print the embedded op.json documents as one JSON array on one line.
    #[arg(long)]
    pub json: bool,
    /// A subcommand.
    #[command(subcommand)]
    pub command: Option<OpsCommand>,
}

/// The `ops` subcommands.
#[derive(Debug, Subcommand)]
pub enum OpsCommand {
    /// Re-validate op.json files (a set, checked together) against the rule-table contract
    Check(CheckArgs),
}

/// Re-validate op.json files against the rule-table contract
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// op.json files, or directories searched recursively for `*.json`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print `{version, files, valid, problems}` as one JSON line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ops` or `ops check`.
pub fn cmd_ops(binary: Binary, args: &OpsArgs) -> Result<Exit, CommandError> {
    match &args.command {
        Some(OpsCommand::Check(check)) => cmd_check(check),
        None => cmd_list(binary, args.json),
    }
}

fn cmd_list(binary: Binary, json: bool) -> Result<Exit, CommandError> {
    let catalog = catalog::Catalog::embedded_declared(&crate::lexicon::declared_envs())?;
    if json {
        let docs: Vec<&crate::model::OpDocument> = catalog.ops().collect();
        let line = super::error::to_json(&docs, "the ops")?;
        println(&line)?;
        return Ok(Exit::Done);
    }
    if catalog.is_empty() {
        match binary {
            Binary::Stock => eprintln!(
                "the stock chant binary carries no ops; list a project's ops with its own binary (e.g. `cargo run --bin <project-bin> -- ops`)"
            ),
            Binary::Project => {
                eprintln!("no ops are compiled into this binary; declare them with op! and converge_op!");
                eprintln!("hint: {}", super::init::no_ops_hint());
            }
        }
        return Ok(Exit::Done);
    }
    print(&catalog::render_table(&catalog))?;
    Ok(Exit::Done)
}

fn cmd_check(args: &CheckArgs) -> Result<Exit, CommandError> {
    let mut files = Vec::new();
    for p in &args.paths {
        collect(p, &mut files).map_err(|e| CommandError::usage_with(p.display().to_string(), e))?;
    }
    if files.is_empty() {
        return Err(CommandError::usage(format!(
            "no .json files under {}",
            args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut texts = Vec::with_capacity(files.len());
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CommandError::usage_with(format!("cannot read {}", f.display()), e))?;
        texts.push((f.display().to_string(), text));
    }
    let report = crate::model::validate::check_set(texts.iter().map(|(o, t)| (o.as_str(), t.as_str())));
    if args.json {
        let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        let doc =
            serde_json::json!({"version": 1, "files": files.len(), "valid": report.is_valid(), "problems": problems});
        println(&doc.to_string())?;
        return Ok(if report.is_valid() { Exit::Done } else { Exit::Failed });
    }
    for p in &report.problems {
        eprintln!("error: {p}");
    }
    if report.is_valid() {
        println(&format!("{} op.json file(s) checked: no problems", files.len()))?;
        Ok(Exit::Done)
    } else {
        eprintln!("{} problem(s) in {} op.json file(s)", report.problems.len(), files.len());
        Ok(Exit::Failed)
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "json") {
                collect(&e, out)?;
            }
        }
        Ok(())
    } else {
        std::fs::metadata(path)?;
        out.push(path.to_path_buf());
        Ok(())
    }
}
