//! `dev check-lexicon [<lexicon>] [--env E] [--json]`: the conformance suite run against a
//! registered lexicon (files, postgres, box-services, or a project's own) bound to each env that
//! declares it, with its ownership-channel declaration checked against the hooks that serve it
//! ([`crate::observe::check`]). One `pass`/`FAIL`/`skip` line per check.
//!
//! Exit codes: 0 every check passed (or was skipped, saying why), 1 a check failed (or an env's
//! lexicons could not be bound), 2 a usage error (a lexicon this binary does not register, with
//! a did-you-mean; one no env declares; the stock binary outside a project).

use clap::{Args, Subcommand};
use serde::Serialize;

use super::error::println;
use super::lifecycle::{envs_asked, member_of};
use super::{Binary, CommandError, Exit};
use crate::observe::check::{Check, Served, check_bound};

/// Tools for lexicon authors
#[derive(Debug, Args)]
pub struct DevArgs {
    /// The dev subcommand.
    #[command(subcommand)]
    pub command: DevCommand,
}

/// The `dev` subcommands.
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Run the conformance suite and the ownership-channel check against a lexicon, bound to each
    /// env that declares it
    CheckLexicon(CheckLexiconArgs),
}

/// `dev check-lexicon`.
#[derive(Debug, Args)]
pub struct CheckLexiconArgs {
    /// The lexicon (`files`, `postgres`, `box-services`, or your own); every registered lexicon
    /// an env declares when absent.
    pub lexicon: Option<String>,
    /// Only the lexicons bound to this env.
    #[arg(long)]
    pub env: Option<String>,
    /// Print one JSON document on one line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// One lexicon's checks in one env.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// The lexicon.
    pub lexicon: String,
    /// The env it was bound to.
    pub env: String,
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// Why it could not be checked at all (its binding or declaration failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Checked {
    fn failed(&self) -> usize {
        self.checks.iter().filter(|c| c.failed()).count() + usize::from(self.error.is_some())
    }
}

/// Runs `dev`.
pub fn cmd_dev(binary: Binary, args: &DevArgs) -> Result<Exit, CommandError> {
    match &args.command {
        DevCommand::CheckLexicon(a) => cmd_check_lexicon(binary, a),
    }
}

fn cmd_check_lexicon(binary: Binary, args: &CheckLexiconArgs) -> Result<Exit, CommandError> {
    if binary == Binary::Stock {
        return Err(CommandError::usage(
            "the stock chant binary binds no env, so it has no lexicon to check; run it in a project, or use the \
             project's own binary (`cargo run --bin <project-bin> -- dev check-lexicon`)",
        ));
    }
    let registered: Vec<&str> = crate::lexicon::registry::registrations()?.iter().map(|r| r.lexicon).collect();
    if let Some(name) = args.lexicon.as_deref()
        && !registered.contains(&name)
    {
        let hint = crate::model::contract::did_you_mean(name, registered.iter().copied())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return Err(CommandError::usage(format!(
            "lexicon `{}` is not registered in this binary{hint} (registered: {})",
            crate::terminal::printable(name),
            registered.join(", ")
        )));
    }
    let envs = envs_asked(binary, args.env.as_deref())?;
    let project = super::open_project()?;
    let wanted = |l: &str| args.lexicon.as_deref().is_none_or(|n| n == l);
    let mut results = Vec::new();
    for env in &envs {
        let member = member_of(&project, env);
        let lexicons = match project.lexicons(member.as_deref(), env) {
            Ok(l) => l,
            Err(e) => {
                let declares = crate::lexicon::declaration(env).ok().flatten();
                for name in declares.iter().flat_map(|d| d.lexicons()).filter(|l| wanted(l)) {
                    results.push(Checked {
                        lexicon: name.to_owned(),
                        env: (*env).to_owned(),
                        checks: Vec::new(),
                        error: Some(format!("its lexicons could not be bound: {}", crate::error::chain(&e))),
                    });
                }
                continue;
            }
        };
        for bound in lexicons.iter().filter(|b| wanted(b.name())) {
            let (checks, error) = match bound.declared_entities() {
                Ok(declared) => {
                    let export = || export_served(&project, env, bound.name());
                    (check_bound(bound.lexicon(), &declared, &export), None)
                }
                Err(e) => (Vec::new(), Some(format!("its declared entities could not be listed: {}", e.chain()))),
            };
            results.push(Checked { lexicon: bound.name().to_owned(), env: (*env).to_owned(), checks, error });
        }
    }
    if results.is_empty() {
        let why = match (args.lexicon.as_deref(), args.env.as_deref()) {
            (Some(l), Some(e)) => format!("env {e} does not declare lexicon `{l}`"),
            (Some(l), None) => format!("no env of this binary declares lexicon `{l}`"),
            (None, Some(e)) => format!("env {e} declares no lexicon"),
            (None, None) => "no env of this binary declares a lexicon".to_owned(),
        };
        return Err(CommandError::usage(format!(
            "nothing to check: {why} (a lexicon is checked bound to an env that declares it)"
        )));
    }
    let failed: usize = results.iter().map(Checked::failed).sum();
    if args.json {
        let doc = serde_json::json!({ "lexicons": results, "failed": failed });
        println(&project.redactor.redact(&doc.to_string()))?;
    } else {
        for r in &results {
            let count = r.checks.len();
            println(&format!("check-lexicon {} (env {}): {count} checks, {} failed", r.lexicon, r.env, r.failed()))?;
            if let Some(e) = &r.error {
                println(&project.redactor.redact(&format!("  FAIL  bind: {e}")))?;
            }
            for c in &r.checks {
                println(&project.redactor.redact(&format!("  {c}")))?;
            }
        }
    }
    Ok(if failed == 0 { Exit::Done } else { Exit::Failed })
}

/// Whether the export hook of lexicon `name` serves `exportResources`, asked by exporting `env`.
#[cfg(feature = "import")]
fn export_served(project: &crate::project::Project, env: &str, name: &str) -> Served {
    use crate::lexicon::export::{ExportError, ExportOptions, Selector};
    let Ok(registrations) = crate::lexicon::registry::registrations() else {
        return Served::Unknown("the registry could not be read".into());
    };
    let Some(r) = registrations.into_iter().find(|r| r.lexicon == name) else {
        return Served::Unknown("not registered".into());
    };
    let none = std::collections::BTreeMap::new();
    let values = project.config.env(env).map(crate::config::EnvBinding::values).unwrap_or(&none);
    let binding = crate::lexicon::Binding::new(env, &project.config.project.name, &project.root, values);
    let options = ExportOptions { owned: false, selector: Selector::all(), verbatim: false };
    match (r.export)(&binding, &options) {
        Err(ExportError::NotImplemented { .. }) => Served::No,
        Err(ExportError::NotBound { .. }) => Served::Unknown(format!("env {env} binds nothing it can export")),
        _ => Served::Yes,
    }
}

/// Without the `import` feature the export hooks are not compiled in, so this cannot be told.
#[cfg(not(feature = "import"))]
fn export_served(_: &crate::project::Project, _: &str, _: &str) -> Served {
    Served::Unknown("this binary was built without chant's `import` feature".into())
}
