//! The command line: a thin layer over the library, shared by the stock `chant` binary and every
//! project binary built with `chant::main!()`.
//!
//! Each subcommand lives in its own file with an `*Args` struct and a `cmd_*` function that
//! converts arguments, calls the library and renders the result.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | failed (a step failed, a tick failed, `ops check` found problems) |
//! | 2 | usage or configuration error (bad flag, unknown op, invalid op.json) |
//! | 3 | gated: a gate has no resolution; nothing after it ran |
//!
//! `--json` prints one record as a single line on stdout; diagnostics go to stderr.

pub mod approve;
pub mod lifecycle;
pub mod operator;
pub mod ops;
pub mod run;
pub mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::__private::DefaultCommand;

/// The exit status of a command, which fixes its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Done,
    /// 1: failed.
    Failed,
    /// 2: usage or configuration error.
    Usage,
    /// 3: gated.
    Gated,
}

impl Exit {
    /// Returns the process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Gated => 3,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// Which binary is running: the stock `chant` (no ops compiled in) or a project binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// The stock `chant` binary from the `chant` crate.
    Stock,
    /// A project binary built with `chant::main!()`.
    Project,
}

/// chant keeps declared environments converged.
///
/// Exit codes: 0 done, 1 failed, 2 usage or configuration error, 3 gated.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None, disable_help_subcommand = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the ops compiled into this binary, or check op.json files
    Ops(ops::OpsArgs),
    /// Run an op once
    Run(run::RunArgs),
    /// Run one tick of a ConvergeOp
    Tick(run::TickArgs),
    /// Approve a gate a run stopped at, or clear it with --expire
    Approve(approve::ApproveArgs),
    /// Show how an env differs from its declaration
    Lifecycle(lifecycle::LifecycleArgs),
    /// Tick every ConvergeOp on its schedule under its lease, or show what the operator did
    Operator(operator::OperatorArgs),
    /// Show each workspace member's box services and its ConvergeOps' newest ticks
    Workspace(workspace::WorkspaceArgs),
}

/// Runs the stock `chant` binary's command line.
pub fn stock_main() -> ExitCode {
    dispatch(Binary::Stock, DefaultCommand::Help).into()
}

/// Runs a project binary's command line.
pub fn project_main(default: DefaultCommand) -> ExitCode {
    dispatch(Binary::Project, default).into()
}

fn dispatch(binary: Binary, default: DefaultCommand) -> Exit {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            return if usage { Exit::Usage } else { Exit::Done };
        }
    };
    match cli.command {
        Some(Command::Ops(args)) => ops::cmd_ops(binary, &args),
        Some(Command::Run(args)) => run::cmd_run(binary, &args),
        Some(Command::Tick(args)) => run::cmd_tick(binary, &args),
        Some(Command::Approve(args)) => approve::cmd_approve(binary, &args),
        Some(Command::Lifecycle(args)) => lifecycle::cmd_lifecycle(binary, &args),
        Some(Command::Operator(args)) => operator::cmd_operator(binary, &args),
        Some(Command::Workspace(args)) => workspace::cmd_workspace(binary, &args),
        None => match default {
            DefaultCommand::Tick(op) => run::cmd_tick(binary, &run::TickArgs::for_op(op)),
            DefaultCommand::Help => {
                use clap::CommandFactory;
                let _ = Cli::command().print_help();
                Exit::Usage
            }
        },
    }
}

/// Opens the project around the working directory, printing why not (exit 2).
pub(crate) fn open_project() -> Result<crate::project::Project, Exit> {
    let cwd = std::env::current_dir().map_err(|e| {
        eprintln!("error: cannot read the working directory: {e}");
        Exit::Usage
    })?;
    crate::project::Project::open(&cwd).map_err(|e| {
        eprintln!("error: {}", run::error_chain(&e));
        Exit::Usage
    })
}

/// Opens the ledger for commands that need only it: the project's (with its remote) when there
/// is a chant.toml, else the repository around the working directory, local only.
pub(crate) fn open_ledger() -> Result<crate::ledger::Ledger, Exit> {
    let cwd = std::env::current_dir().map_err(|e| {
        eprintln!("error: cannot read the working directory: {e}");
        Exit::Usage
    })?;
    let (root, remote) = match crate::config::Config::discover(&cwd) {
        Ok(c) => (c.root.clone(), c.ledger.remote.clone()),
        Err(crate::config::Error::NotFound { .. }) => (cwd, None),
        Err(e) => {
            eprintln!("error: {e}");
            return Err(Exit::Usage);
        }
    };
    let config = crate::ledger::LedgerConfig { remote, ..crate::ledger::LedgerConfig::default() };
    crate::ledger::Ledger::open(&root, config).map_err(|e| {
        eprintln!("error: {}", run::error_chain(&e));
        Exit::Usage
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
