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
//! | 4 | `lifecycle diff --exit-code`: something could not be observed (1 there: something differs); `search`: nothing found, and something that might have matched could not be read (1 there: nothing found) |
//!
//! `--json` prints one record as a single line on stdout; diagnostics go to stderr. An error
//! is rendered in one place ([`CommandError::report`]): `error: ...` and `hint: ...` lines on
//! stderr. A closed stdout (`operator log | head -1`) ends the command quietly with exit 0.

pub mod approve;
pub mod ci;
pub mod colour;
pub mod deep;
pub mod delegate;
pub mod dev;
pub mod error;
pub mod explain;
pub mod graph;
#[cfg(feature = "import")]
pub mod import;
pub mod init;
pub mod lifecycle;
pub mod operator;
pub mod ops;
pub mod plan;
pub mod predict;
pub mod replay;
pub mod run;
#[cfg(feature = "search")]
pub mod search;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "box")]
pub mod services;
pub mod shell;
pub mod teardown;
pub mod units;
#[cfg(feature = "box")]
pub mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::{CommandError, ErrorKind};

use crate::registry::DefaultCommand;

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
    /// 1, from `lifecycle diff --exit-code`: something is to be created, updated or deleted.
    Differs,
    /// 4, from `lifecycle diff --exit-code`: something could not be observed.
    Unobserved,
}

impl Exit {
    /// Returns the process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Gated => 3,
            Exit::Differs => 1,
            Exit::Unobserved => 4,
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
#[command(version, about, long_about = None)]
pub struct Cli {
    /// Build the project binary with `--release` (the stock `chant`, when it builds one)
    #[arg(long, global = true)]
    pub release: bool,
    /// When to colour statuses: auto (a terminal, unless NO_COLOR is set), always, never
    #[arg(long, global = true, value_enum, default_value_t = colour::When::Auto, value_name = "WHEN")]
    pub color: colour::When,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Command {
    /// Returns true for the commands that need the project's ops, which the stock binary hands
    /// to the project binary inside a project: `run`, `tick`, `replay`, `explain`, `lifecycle`, `import`,
    /// `workspace`, `ops` (the list, not `ops check`), `operator` (the daemon, not `status` or
    /// `log`) and `serve` (its rule whys and live diffs need the ops and declarations; with
    /// several project binaries the stock binary serves the ledger alone).
    pub fn needs_ops(&self) -> bool {
        match self {
            Command::Run(_)
            | Command::Tick(_)
            | Command::Replay(_)
            | Command::Explain(_)
            | Command::Lifecycle(_)
            | Command::Graph(_) => true,
            #[cfg(feature = "import")]
            Command::Import(_) => true,
            #[cfg(feature = "box")]
            Command::Workspace(_) => true,
            Command::Ops(a) => a.command.is_none(),
            Command::Ci(_) => true,
            #[cfg(feature = "search")]
            Command::Search(_) => true,
            Command::Dev(_) => true,
            Command::Init(_) | Command::Completions(_) | Command::Man(_) => false,
            Command::Operator(a) => a.command.is_none(),
            Command::Approve(_) => false,
            #[cfg(feature = "box")]
            Command::Services(_) => false,
            #[cfg(feature = "serve")]
            Command::Serve(_) => true,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the ops compiled into this binary, or check op.json files
    Ops(ops::OpsArgs),
    /// Run an op once
    Run(run::RunArgs),
    /// Run one tick of a ConvergeOp, or plan one (--plan)
    Tick(run::TickArgs),
    /// Re-decide a ConvergeOp's recorded ticks with a rule table, and show what differs
    Replay(replay::ReplayArgs),
    /// Explain one recorded tick: each outcome's rule, predicate readings, run and blamed source line
    Explain(explain::ExplainArgs),
    /// Approve a gate a run stopped at, or clear it with --expire
    Approve(approve::ApproveArgs),
    /// Show how an env differs from its declaration
    Lifecycle(lifecycle::LifecycleArgs),
    /// Draw an env's estate as a graph: declared, or live with edges rebuilt from identifiers
    Graph(graph::GraphArgs),
    /// Find resources across the envs' live estates by kind or name glob
    #[cfg(feature = "search")]
    Search(search::SearchArgs),
    /// Write a declaration module from an env's live estate
    #[cfg(feature = "import")]
    Import(import::ImportArgs),
    /// Tick every ConvergeOp on its schedule under its lease, or show what the operator did
    Operator(operator::OperatorArgs),
    /// Show each workspace member's box services and its ConvergeOps' newest ticks
    #[cfg(feature = "box")]
    Workspace(workspace::WorkspaceArgs),
    /// Start, stop or restart a declared box service through the supervisor
    #[cfg(feature = "box")]
    Services(services::ServicesArgs),
    /// Serve a read-only web dashboard: estate, op histories, env resources, live diffs, graphs, gates
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Create a new project that builds and ticks on the first `cargo run`
    Init(init::InitArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout
    Completions(shell::CompletionsArgs),
    /// Write man pages generated from this command line into a directory
    Man(shell::ManArgs),
    /// Generate what runs `operator --once` on the ConvergeOps' own schedules: a CI workflow,
    /// Kubernetes CronJobs, systemd units or a crontab
    Ci(ci::CiArgs),
    /// Tools for lexicon authors: run the conformance suite against a lexicon (check-lexicon)
    Dev(dev::DevArgs),
}

/// Runs the stock `chant` binary's command line.
pub fn stock_main() -> ExitCode {
    dispatch(Binary::Stock, DefaultCommand::Help).into()
}

/// Runs a project binary's command line.
pub fn project_main(default: DefaultCommand) -> ExitCode {
    dispatch(Binary::Project, default).into()
}

/// True when an argument before any `--` is one of `words`.
fn asks_for(words: &[&str]) -> bool {
    std::env::args_os().skip(1).take_while(|a| a != "--").any(|a| words.iter().any(|w| a == *w))
}

/// True when the arguments ask for JSON: errors are then one JSON object on stderr.
fn wants_json() -> bool {
    asks_for(&["--json"])
}

/// True when the arguments ask for a help (`--help`, `-h`, `help <command>`).
fn wants_help() -> bool {
    asks_for(&["--help", "-h", "help"])
}

/// Renders an error the way the arguments ask: JSON under `--json`, else `error:`/`hint:` lines.
fn report(e: &CommandError) -> Exit {
    if wants_json() { e.report_json() } else { e.report() }
}

fn dispatch(binary: Binary, default: DefaultCommand) -> Exit {
    // The examples in this binary's words only when a help is shown (it reads the catalog).
    let parse =
        |cmd: clap::Command| cmd.try_get_matches().and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let parsed = parse(if wants_help() { shell::command_for_help(binary) } else { shell::command() });
    // A command group given without its subcommand (`lifecycle`) shows its help: in this
    // binary's words too, parsed again with them.
    let parsed = match parsed {
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand && !wants_help() => {
            parse(shell::command_for_help(binary))
        }
        parsed => parsed,
    };
    let cli = match parsed {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            return print_version(binary).map_or_else(|e| report(&e), |()| Exit::Done);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidSubcommand && left_out().is_some() => {
            return left_out_command(binary).unwrap_or_else(|e| report(&e));
        }
        Err(e) => {
            let usage = e.use_stderr();
            if usage && wants_json() {
                let text = e.render().to_string();
                let message = text.lines().next().unwrap_or_default().trim_start_matches("error: ").to_owned();
                let hints: Vec<&str> = text.lines().filter_map(|l| l.trim().strip_prefix("tip: ")).collect();
                eprintln!("{}", serde_json::json!({"kind": "usage", "message": message, "hints": hints}));
                return Exit::Usage;
            }
            let _ = e.print();
            return if usage { Exit::Usage } else { Exit::Done };
        }
    };
    colour::init(cli.color);
    if binary == Binary::Stock
        && let Some(command) = &cli.command
        && command.needs_ops()
        && let Some(result) = hand_over(command, cli.release)
    {
        return result.unwrap_or_else(|e| report(&e));
    }
    if observes_once(cli.command.as_ref()) {
        crate::observe::lifetime::observe_once();
    }
    let result = match cli.command {
        Some(Command::Ops(args)) => ops::cmd_ops(binary, &args),
        Some(Command::Run(args)) => run::cmd_run(binary, &args),
        Some(Command::Tick(args)) => run::cmd_tick(binary, &args),
        Some(Command::Replay(args)) => replay::cmd_replay(binary, &args),
        Some(Command::Explain(args)) => explain::cmd_explain(binary, &args),
        Some(Command::Approve(args)) => approve::cmd_approve(binary, &args),
        Some(Command::Lifecycle(args)) => lifecycle::cmd_lifecycle(binary, &args),
        Some(Command::Graph(args)) => graph::cmd_graph(binary, &args),
        #[cfg(feature = "import")]
        Some(Command::Import(args)) => import::cmd_import(binary, &args),
        Some(Command::Operator(args)) => operator::cmd_operator(binary, &args),
        #[cfg(feature = "box")]
        Some(Command::Workspace(args)) => workspace::cmd_workspace(binary, &args),
        #[cfg(feature = "box")]
        Some(Command::Services(args)) => services::cmd_services(&args),
        #[cfg(feature = "serve")]
        Some(Command::Serve(args)) => serve::cmd_serve(binary, &args),
        Some(Command::Init(args)) => init::cmd_init(&args),
        Some(Command::Completions(args)) => shell::cmd_completions(&args),
        Some(Command::Man(args)) => shell::cmd_man(&args),
        Some(Command::Ci(args)) => ci::cmd_ci(binary, &args),
        #[cfg(feature = "search")]
        Some(Command::Search(args)) => search::cmd_search(binary, &args),
        Some(Command::Dev(args)) => dev::cmd_dev(binary, &args),
        None => match default {
            DefaultCommand::Tick(op) => run::cmd_tick(binary, &run::TickArgs::for_op(op)),
            DefaultCommand::Help => {
                // Under the name it was invoked by, as a parse names it: a command that parsed no
                // arguments would say the package's (`chant-ops`).
                let _ = shell::command_for_help(binary).bin_name(shell::invoked_name()).print_help();
                Ok(Exit::Usage)
            }
        },
    };
    result.unwrap_or_else(|e| report(&e))
}

/// Whether `command` observes each estate once and exits (every command but the operator, which
/// ticks on, or its `--once` round, which may tick several ops of one env, and the dashboard):
/// then lexicons keep nothing between reads ([`crate::observe::lifetime`]).
fn observes_once(command: Option<&Command>) -> bool {
    match command {
        Some(Command::Operator(_)) => false,
        #[cfg(feature = "serve")]
        Some(Command::Serve(_)) => false,
        _ => true,
    }
}

/// Hands `command` to the project binary when the working directory is in a project; `None`
/// outside any project (the stock binary then answers itself, saying what it looked for), and
/// for `serve` in a project of several project binaries: no one of them carries every member's
/// ops, so the stock binary serves the whole ledger itself (no whys, no live diffs) and says so.
fn hand_over(command: &Command, release: bool) -> Option<Result<Exit, CommandError>> {
    let cwd = std::env::current_dir().ok()?;
    let bins = match delegate::resolve(&cwd, release) {
        Ok(b) => b,
        Err(e @ (delegate::Error::NotInProject { .. } | delegate::Error::NoWorkspace { .. })) => {
            eprintln!("note: {e}");
            return None;
        }
        Err(e) => return Some(Err(e.into())),
    };
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let op = match command {
        Command::Run(a) => Some(a.op.as_str()),
        Command::Tick(a) => Some(a.op.as_str()),
        Command::Replay(a) => Some(a.op.as_str()),
        Command::Explain(a) => a.op.as_deref(),
        _ => None,
    };
    let chosen = match (op, command) {
        (Some(op), _) => delegate::carrying(&bins, op),
        (None, Command::Operator(_)) if bins.len() > 1 => return Some(delegate::operator(&bins, &args)),
        #[cfg(feature = "serve")]
        (None, Command::Serve(_)) if bins.len() > 1 => {
            let names: Vec<&str> = bins.iter().map(|b| b.name.as_str()).collect();
            eprintln!(
                "note: {} project binaries ({}) each carry some of the ops: serving the ledger alone (no rule whys, \
                 no live diffs); run one binary's own `serve` for its envs' live diffs",
                bins.len(),
                names.join(", ")
            );
            return None;
        }
        (None, _) => bins.first().ok_or(delegate::Error::Ambiguous { candidates: Vec::new() }),
    };
    Some(match chosen {
        Ok(bin) => Err(delegate::exec(bin, &args)),
        Err(e) => Err(e.into()),
    })
}

/// The subcommands this build leaves out, each with the feature that brings it.
pub(super) const LEFT_OUT: &[(&str, &str)] = &[
    #[cfg(not(feature = "serve"))]
    ("serve", "serve"),
    #[cfg(not(feature = "import"))]
    ("import", "import"),
    #[cfg(not(feature = "box"))]
    ("services", "box"),
    #[cfg(not(feature = "box"))]
    ("workspace", "box"),
    #[cfg(not(feature = "search"))]
    ("search", "search"),
];

/// The subcommand the arguments name, when this build leaves it out: its name and feature.
fn left_out() -> Option<(&'static str, &'static str)> {
    // `args_os`: an argument that is not UTF-8 must not panic here.
    let first = std::env::args_os().skip(1).find(|a| !a.to_string_lossy().starts_with('-'))?;
    LEFT_OUT.iter().copied().find(|(name, _)| first.to_str() == Some(*name))
}

/// Answers a subcommand this build leaves out: the stock binary inside a project hands it to the
/// project binary, which may carry it; otherwise a usage error naming the feature.
fn left_out_command(binary: Binary) -> Result<Exit, CommandError> {
    let Some((name, feature)) = left_out() else {
        return Err(CommandError::usage("no subcommand to hand over"));
    };
    if binary == Binary::Stock
        && let Ok(cwd) = std::env::current_dir()
        && let Ok(bins) = delegate::resolve(&cwd, false)
        && let Some(bin) = bins.first()
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        return Err(delegate::exec(bin, &args));
    }
    let hint = match binary {
        Binary::Stock => format!(
            "there is no project here to hand it to: run it in a \
             project whose binary has it, or install a chant that has it (`cargo install --path <chant checkout>/chant \
             --bin chant --features {feature}`)"
        ),
        Binary::Project => format!("add \"{feature}\" to the features of the chant dependency in Cargo.toml"),
    };
    Err(CommandError::usage(format!(
        "`{name}` is not in this binary: it was built without chant's `{feature}` feature"
    ))
    .hint(hint))
}

/// Prints `--version`: chant's version, and for a project binary its name, the number of ops it
/// carries and their digest; the stock binary inside a project adds each project binary's line.
fn print_version(binary: Binary) -> Result<(), CommandError> {
    let chant = env!("CARGO_PKG_VERSION");
    match binary {
        Binary::Project => error::println(&project_version_line())?,
        Binary::Stock => {
            error::println(&format!("chant {chant}"))?;
            let Ok(cwd) = std::env::current_dir() else { return Ok(()) };
            match delegate::resolve(&cwd, false) {
                Ok(bins) => {
                    for b in bins {
                        let mut spec = crate::process::Spec::new(&b.path);
                        spec.args = vec!["--version".into()];
                        match crate::process::run(&spec) {
                            Ok(out) if out.success() => error::print(&out.stdout)?,
                            Ok(out) => {
                                eprintln!("warning: {} --version: {}", b.name, crate::redact::sanitise(&out.stderr))
                            }
                            Err(e) => eprintln!("warning: cannot run {}: {e}", b.path.display()),
                        }
                    }
                }
                Err(delegate::Error::NotInProject { .. } | delegate::Error::NoWorkspace { .. }) => {}
                Err(e) => eprintln!("warning: {}", crate::error::chain(&e)),
            }
        }
    }
    Ok(())
}

/// The version line of a project binary: `<bin> (project <name>): chant <version>, <n> ops, ops
/// digest fnv1a64:<hex>`; the digest covers every embedded op.json, in name order.
pub fn project_version_line() -> String {
    let bin = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "project".into());
    let mut ops = crate::registry::ops();
    ops.sort_by(|a, b| a.name.cmp(b.name));
    let mut bytes = Vec::new();
    for o in &ops {
        bytes.extend_from_slice(o.json.as_bytes());
        bytes.push(b'\n');
    }
    let digest = crate::model::contract::fnv1a64(&bytes);
    let project = std::env::current_dir()
        .ok()
        .and_then(|d| crate::config::Config::discover(&d).ok())
        .map(|c| format!(" (project {})", c.project.name))
        .unwrap_or_default();
    format!("{bin}{project}: chant {}, {} ops, ops digest fnv1a64:{digest:016x}", env!("CARGO_PKG_VERSION"), ops.len())
}

/// The working directory, or why not (exit 2).
pub(crate) fn working_dir() -> Result<std::path::PathBuf, CommandError> {
    std::env::current_dir().map_err(|e| CommandError::usage_with("cannot read the working directory", e))
}

/// Opens the project around the working directory (exit 2 when there is none, or when
/// whatever stops it from opening is the setup's: a ledger that cannot be opened included).
pub(crate) fn open_project() -> Result<crate::project::Project, CommandError> {
    // Opening is setup, so every failure is exit 2 here; the error stays the source.
    crate::project::Project::open(&working_dir()?).map_err(CommandError::usage)
}

/// Opens the ledger for commands that need only it: the project's (with its remote) when there
/// is a chant.toml, else the repository around the working directory, local only.
pub(crate) fn open_ledger() -> Result<crate::ledger::Ledger, CommandError> {
    let cwd = working_dir()?;
    let (root, section, in_project) = match crate::config::Config::discover_any_bindings(&cwd) {
        Ok(c) => (c.root.clone(), c.ledger.clone(), true),
        Err(crate::config::Error::NotFound { .. }) => (cwd, crate::config::LedgerSection::default(), false),
        Err(e) => return Err(e.into()),
    };
    let clock = crate::clock::Clock::from_env()?;
    let config = section.ledger_config(crate::ledger::LedgerConfig { clock, ..crate::ledger::LedgerConfig::default() });
    // As in `open_project`: a ledger that cannot be opened is the setup's (exit 2).
    crate::ledger::Ledger::open(&root, config).map_err(|e| {
        let e = CommandError::usage(e);
        if in_project {
            e
        } else {
            e.hint(
                "no chant.toml here or in a parent directory: run this inside a chant project, whose git repository \
                 holds the ledger (`chant init` makes one)",
            )
        }
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
