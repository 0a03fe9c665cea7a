//! `services start|stop|restart <name>`: control one declared box service through the
//! supervisor (`sprite-env`), as `monit start|stop|restart <name>` does. The service must be
//! declared in a box block of `chant.workspace.json` (`--member` picks the block when several
//! declare it); a start or restart waits for its health URL. Then the service's listing is shown.
//!
//! Exit codes: 0 done, 1 the supervisor refused or could not be run, or the health URL never
//! answered; 2 no such declared service, several members declare it, or no workspace file.

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::error::println;
use super::{CommandError, Exit};
use crate::config::Config;
use crate::error::chain;
use crate::lexicon::sprite::control::{Control, control};
use crate::lexicon::sprite::declaration::WORKSPACE_FILE;
use crate::lexicon::sprite::{self, BoxDeclaration};

/// Start, stop or restart a declared box service through the supervisor
#[derive(Debug, Args)]
pub struct ServicesArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ServicesCommand,
}

/// The services subcommands.
#[derive(Debug, Subcommand)]
pub enum ServicesCommand {
    /// Start a declared service and wait for its health URL
    Start(ServiceArgs),
    /// Stop a declared service
    Stop(ServiceArgs),
    /// Restart a declared service and wait for its health URL
    Restart(ServiceArgs),
}

/// One service.
#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// The service's name, as declared in a box block.
    pub name: String,
    /// The workspace member whose box block declares it, when several do.
    #[arg(long)]
    pub member: Option<String>,
    /// Print one JSON document on stdout: `{version, member, name, action, healthy, listed}`.
    #[arg(long)]
    pub json: bool,
}

/// Runs `services ...`.
pub fn cmd_services(args: &ServicesArgs) -> Result<Exit, CommandError> {
    let (what, a) = match &args.command {
        ServicesCommand::Start(a) => (Control::Start, a),
        ServicesCommand::Stop(a) => (Control::Stop, a),
        ServicesCommand::Restart(a) => (Control::Restart, a),
    };
    let cwd = super::working_dir()?;
    let config = Config::discover_any_bindings(&cwd)?;
    let (member, decl) = declaring(&config.root, &a.name, a.member.as_deref())?;
    let settings = sprite::Settings::from_env(&|k| std::env::var(k).ok());
    let root = config.root.display().to_string();
    let var = |k: &str| std::env::var(k).ok().or_else(|| (k == sprite::PROJECT_DIR_VAR).then(|| root.clone()));
    let done = control(&decl, &a.name, what, &settings, &var)?;
    let listed = match sprite::list(&settings) {
        Ok(l) => l.into_iter().find(|l| l.name == a.name),
        Err(e) => {
            eprintln!("warning: the supervisor could not be listed afterwards: {}", chain(&e));
            None
        }
    };
    let listed_json = listed.as_ref().map(|l| {
        json!({"status": l.status, "pid": l.runtime.pid, "startedAt": l.runtime.started_at, "restarts": l.runtime.restarts})
    });
    if a.json {
        let doc = json!({"version": 1, "member": member, "name": a.name, "action": what.as_str(),
                         "healthy": done["healthy"], "listed": listed_json});
        println(&doc.to_string())?;
    } else {
        let p = crate::terminal::printable;
        let verb = match what {
            Control::Start => "started",
            Control::Stop => "stopped",
            Control::Restart => "restarted",
        };
        let mut line = format!("{verb} {} ({})", p(&a.name), p(&member));
        if let Some(l) = &listed {
            line.push_str(&format!(": {}", p(l.status.as_deref().unwrap_or("-"))));
            if let Some(pid) = l.runtime.pid.filter(|_| l.status.as_deref() == Some("running")) {
                line.push_str(&format!(", pid {pid}"));
            }
        }
        if done["healthy"] == Value::Bool(true) {
            line.push_str(", healthy");
        }
        println(&line)?;
    }
    Ok(Exit::Done)
}

/// The member whose box block declares `name` (the one `member` names, or the only one that
/// declares it) and that block.
fn declaring(
    root: &std::path::Path,
    name: &str,
    member: Option<&str>,
) -> Result<(String, BoxDeclaration), CommandError> {
    let path = root.join(WORKSPACE_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CommandError::usage_with(format!("cannot read {}", path.display()), e))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| CommandError::usage_with(format!("{} is not JSON", path.display()), e))?;
    let mut declared: Vec<String> = Vec::new();
    let mut found: Vec<(String, BoxDeclaration)> = Vec::new();
    for m in doc.get("members").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let Some(m_name) = m.get("name").and_then(Value::as_str) else { continue };
        if member.is_some_and(|want| want != m_name) {
            continue;
        }
        let Some(Ok(decl)) = m.get("box").map(BoxDeclaration::from_value) else { continue };
        declared.extend(decl.services().iter().map(|s| s.name.clone()));
        if decl.get(name).is_some() {
            found.push((m_name.to_owned(), decl));
        }
    }
    match found.len() {
        1 => found.pop().ok_or_else(|| CommandError::usage("unreachable")),
        0 => {
            declared.sort();
            declared.dedup();
            let listing = if declared.is_empty() { "none".to_owned() } else { declared.join(", ") };
            Err(CommandError::usage(format!(
                "no box block in {} declares a service {name:?} (declared: {listing})",
                path.display()
            )))
        }
        _ => {
            let members: Vec<String> = found.iter().map(|(m, _)| format!("--member {m}")).collect();
            Err(CommandError::usage(format!(
                "several members declare a service {name:?}; pass one of: {}",
                members.join(", ")
            )))
        }
    }
}
