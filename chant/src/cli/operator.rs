//! `operator`: the daemon (`--once` for one round), and its read-only views `operator status`,
//! `operator log` and `operator audit`, which the stock binary serves too, from the ledger and
//! local refs alone. `operator audit` exits 1 when the gate ledgers have gaps, so CI can gate on it.
//!
//! Exit codes: the daemon exits 0 when stopped; `--once` exits 1 when any op's line is
//! `failed=` or `error=` (a tick failed or was interrupted, a lease could not be acquired: a
//! stale lock, an unreachable or locked remote), 0 otherwise (a held lease, a fence or a not-due
//! op is not a failure); 2 for a usage or configuration error (a malformed duration, a
//! `--lease-ttl` past 24h, `--since` or `--limit`, no project, the stock binary asked to tick).

use std::io::Write as _;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::error::{print, println};
use super::{Binary, CommandError, Exit, open_ledger, open_project};
use crate::error::chain;
use crate::lease::LeaseStore;
use crate::operator::suspend::{self, ControlFact};
use crate::operator::{self, Daemon, Ending, OperatorConfig, status};
use crate::tick::Dispatcher;

/// Tick every ConvergeOp on its schedule under its lease, or show what the operator did
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct OperatorArgs {
    /// `status` or `log`; without one, run the operator.
    #[command(subcommand)]
    pub command: Option<OperatorCommand>,
    /// Only the ConvergeOps of this env.
    #[arg(long)]
    pub env: Option<String>,
    /// Only this ConvergeOp (repeatable): what `ci systemd` and `ci cron` run on the op's own
    /// schedule.
    #[arg(long = "op", value_name = "OP")]
    pub ops: Vec<String>,
    /// Time between rounds (90s, 5m, 1h30m).
    #[arg(long, default_value = "60s")]
    pub interval: String,
    /// How long a lease lives without renewal (at most 24h); renewed every third of it while a tick runs.
    #[arg(long, default_value = "5m")]
    pub lease_ttl: String,
    /// How long a running tick gets to finish after SIGINT or SIGTERM.
    #[arg(long, default_value = "10s")]
    pub grace: String,
    /// Run one round, release the leases, and exit (for cron, systemd timers, CronJobs, CI); prints
    /// every op's line.
    #[arg(long)]
    pub once: bool,
    /// Print a heartbeat line after this long without a line (the daemon is quiet while nothing
    /// happens).
    #[arg(long, default_value = "10m")]
    pub heartbeat: String,
    /// Print every op's line of every round and the per-round notes, not only the rounds where
    /// something happened.
    #[arg(short, long)]
    pub verbose: bool,
    /// Serve Prometheus metrics, /healthz and /readyz on this address (e.g. 127.0.0.1:9464).
    #[cfg(feature = "metrics")]
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
    /// Also answer metrics requests whose Host is NAME (a scraper's or a proxy's name for this
    /// machine); repeatable. Loopback names and the bound address are always answered.
    #[cfg(feature = "metrics")]
    #[arg(long, value_name = "NAME")]
    pub metrics_allow_host: Vec<String>,
}

/// The read-only views.
#[derive(Debug, Subcommand)]
pub enum OperatorCommand {
    /// Show each ConvergeOp's last tick, lease and pending gates
    Status(StatusArgs),
    /// Show the timeline of ticks, dispatched runs, gate resolutions and notifications
    Log(LogArgs),
    /// Audit the gate ledgers: every request, approval, override and revocation, and the gaps
    Audit(AuditArgs),
    /// Clear the flap damping and a given-up restart limit of a ConvergeOp (or of one rule): the next tick may dispatch again
    Undamp(UndampArgs),
    /// Stop every operator sharing the ledger from ticking a ConvergeOp, until resumed or until a time
    Suspend(SuspendArgs),
    /// Let the operators tick a suspended ConvergeOp again, and restart every rule that gave up
    Resume(ResumeArgs),
}

/// Stop every operator sharing the ledger from ticking a ConvergeOp, until resumed or until a time
#[derive(Debug, Args)]
pub struct SuspendArgs {
    /// The ConvergeOp.
    pub op: String,
    /// Why (recorded, shown by `operator status` and on the operator's line).
    #[arg(long)]
    pub reason: String,
    /// When the suspension lapses by itself: an RFC 3339 instant, or a duration from now (`2h`).
    #[arg(long)]
    pub until: Option<String>,
    /// Who decides (recorded); `$USER` when absent.
    #[arg(long)]
    pub actor: Option<String>,
}

/// Let the operators tick a suspended ConvergeOp again, and restart every rule that gave up
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The ConvergeOp.
    pub op: String,
    /// Who decides (recorded); `$USER` when absent.
    #[arg(long)]
    pub actor: Option<String>,
}

/// Clear the flap damping and a given-up restart limit of a ConvergeOp (or of one rule): the next tick may dispatch again
#[derive(Debug, Args)]
pub struct UndampArgs {
    /// The ConvergeOp.
    pub op: String,
    /// Only this rule (its id); every rule of the op when absent.
    pub rule: Option<String>,
    /// Who decides (recorded); `$USER` when absent.
    #[arg(long)]
    pub actor: Option<String>,
}

/// Audit the gate ledgers: every request, approval, override and revocation, and the gaps
/// (exit 1 when there are any)
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only this op's gate ledger.
    #[arg(long)]
    pub op: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Show each ConvergeOp's last tick, lease and pending gates
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only the ConvergeOps of this env.
    #[arg(long)]
    pub env: Option<String>,
    /// Fetch the ledger and the leases from the configured remote first.
    #[arg(long)]
    pub fetch: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Show the timeline of ticks, dispatched runs, gate resolutions and notifications
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only the ConvergeOps of this env.
    #[arg(long)]
    pub env: Option<String>,
    /// Only this ConvergeOp.
    #[arg(long)]
    pub op: Option<String>,
    /// Only entries at or after this RFC 3339 instant (2026-08-25T00:00:00Z) or this long ago (1h, 30m, 2d).
    #[arg(long)]
    pub since: Option<String>,
    /// Only the newest N entries (still printed oldest first).
    #[arg(long)]
    pub limit: Option<String>,
    /// Print one JSON document on stdout (with --follow: one JSON entry per line).
    #[arg(long)]
    pub json: bool,
    /// Keep running and print new entries as they land on the ledger, until SIGINT or SIGTERM
    /// (or a closed stdout), then exit 0.
    #[arg(short, long)]
    pub follow: bool,
}

/// Runs `operator`.
pub fn cmd_operator(binary: Binary, args: &OperatorArgs) -> Result<Exit, CommandError> {
    match &args.command {
        Some(OperatorCommand::Status(s)) => cmd_status(binary, s),
        Some(OperatorCommand::Log(l)) => cmd_log(binary, l),
        Some(OperatorCommand::Audit(a)) => cmd_audit(binary, a),
        Some(OperatorCommand::Undamp(u)) => cmd_undamp(u),
        Some(OperatorCommand::Suspend(a)) => cmd_suspend(a),
        Some(OperatorCommand::Resume(a)) => cmd_resume(a),
        None => cmd_daemon(binary, args),
    }
}

fn duration(flag: &str, value: &str) -> Result<std::time::Duration, CommandError> {
    match crate::duration::parse(value) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err(CommandError::usage(format!("{flag} {value} must be longer than zero"))),
        Err(e) => Err(CommandError::usage_with(flag, e)),
    }
}

/// Refuses an `--env` no ConvergeOp of this binary ticks: a typo would otherwise watch nothing
/// and exit 0. The usage error names the envs that have ConvergeOps, with a did-you-mean.
fn check_env_has_converge_ops(project: &crate::project::Project, env: &str) -> Result<(), CommandError> {
    let mut envs: Vec<&str> = project.catalog.converge_ops().filter_map(|d| d.env.as_deref()).collect();
    envs.sort_unstable();
    envs.dedup();
    if envs.contains(&env) {
        return Ok(());
    }
    let hint = crate::model::contract::did_you_mean(env, envs.iter().copied())
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    let known = if envs.is_empty() { "none".to_owned() } else { envs.join(", ") };
    Err(CommandError::usage(format!(
        "--env {env}: no ConvergeOp of this binary ticks env `{env}`{hint} (envs with ConvergeOps: {known})"
    )))
}

/// Refuses an `--op` that names no ConvergeOp of this binary (a typo would tick nothing and exit
/// 0), naming the ConvergeOps, with a did-you-mean.
fn check_converge_op(project: &crate::project::Project, op: &str) -> Result<(), CommandError> {
    let mut ops: Vec<&str> = project.catalog.converge_ops().map(|d| d.name.as_str()).collect();
    ops.sort_unstable();
    if ops.contains(&op) {
        return Ok(());
    }
    let hint = crate::model::contract::did_you_mean(op, ops.iter().copied())
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    let known = if ops.is_empty() { "none".to_owned() } else { ops.join(", ") };
    Err(CommandError::usage(format!(
        "--op {}: no ConvergeOp of this binary has that name{hint} (ConvergeOps: {known})",
        crate::terminal::printable(op)
    )))
}

fn cmd_daemon(binary: Binary, args: &OperatorArgs) -> Result<Exit, CommandError> {
    // First thing, so a stop signal is caught from here on; the forwarder reads them.
    let signals = operator::catch_stop_signals()?;
    let interval = duration("--interval", &args.interval)?;
    let lease_ttl = duration("--lease-ttl", &args.lease_ttl)?;
    if lease_ttl > crate::lease::MAX_TTL {
        return Err(CommandError::usage(format!("--lease-ttl {} is longer than the maximum of 24h", args.lease_ttl)));
    }
    let grace = duration("--grace", &args.grace)?;
    let heartbeat = duration("--heartbeat", &args.heartbeat)?;
    if let Some(env) = args.env.as_deref().filter(|e| !operator::is_name(e)) {
        return Err(CommandError::usage(format!(
            "--env {env:?} is not an env name (lowercase letters, digits and -, starting with a letter)"
        )));
    }
    if binary == Binary::Stock {
        return Err(CommandError::usage(
            "the stock chant binary contains no ops, so it cannot run the operator; use the project's own binary \
             (`cargo run --bin <project-bin> -- operator`); `operator status` and `operator log` work here",
        ));
    }
    let project = Arc::new(open_project()?);
    if let Some(env) = args.env.as_deref() {
        check_env_has_converge_ops(&project, env)?;
    }
    for op in &args.ops {
        check_converge_op(&project, op)?;
    }
    let dispatcher =
        Dispatcher::current().map_err(|e| CommandError::failed_with("cannot find this binary to dispatch runs", e))?;
    let config = OperatorConfig {
        env: args.env.clone(),
        ops: args.ops.clone(),
        interval,
        lease_ttl,
        grace,
        once: args.once,
        verbose: args.verbose,
        heartbeat,
        ..Default::default()
    };
    #[cfg_attr(not(any(feature = "metrics", feature = "notify")), allow(unused_mut))]
    let mut hooks = operator::HookSet::default();
    #[cfg(all(feature = "metrics", feature = "notify"))]
    let mut metrics_handle = None;
    #[cfg(feature = "metrics")]
    if let Some(addr) = &args.metrics_addr {
        let metrics = start_metrics(addr, &args.metrics_allow_host, interval, &project)?;
        #[cfg(feature = "notify")]
        {
            metrics_handle = Some(Arc::clone(&metrics));
        }
        hooks.0.push(metrics);
    }
    #[cfg(not(feature = "notify"))]
    if project.config.notify.configures_a_sink() {
        return Err(CommandError::usage(format!(
            "{} configures [notify] sinks, and this binary was built without chant's `notify` feature",
            project.config.root.join(crate::config::FILE_NAME).display()
        ))
        .hint("add \"notify\" to the features of the chant dependency in Cargo.toml, or remove [notify]"));
    }
    #[cfg(feature = "notify")]
    if let Some(notify) = crate::notify::NotifyConfig::from_config(&project.config)? {
        #[cfg(feature = "metrics")]
        let on_failure = metrics_handle
            .clone()
            .map(|m| Arc::new(move |kind: &str| m.notify_failed(kind)) as crate::notify::OnFailure);
        #[cfg(not(feature = "metrics"))]
        let on_failure = None;
        let notifier = crate::notify::Notifier::start(Arc::clone(&project), notify, on_failure);
        hooks.0.push(Arc::new(notifier));
    }
    let daemon = Daemon::new(project, config, dispatcher)?.with_hooks(Arc::new(hooks));
    let stopper = daemon.stopper();
    operator::forward_stop_signals(signals, daemon.stopper());
    let mut stdout_closed = false;
    let mut out = |line: operator::Line| {
        if !line.is_primary() {
            eprintln!("{}", line.text);
        } else if !stdout_closed && let Err(e) = writeln!(std::io::stdout(), "{}", line.text) {
            // A closed stdout (`operator | head -1`) stops the daemon cleanly, as a SIGTERM would.
            stdout_closed = true;
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                stopper.stop("stdout closed");
            } else {
                eprintln!("operator: warning: cannot write to stdout: {e}");
            }
        }
    };
    Ok(match daemon.run(&mut out) {
        Ending::Clean => Exit::Done,
        Ending::TickFailed if args.once => Exit::Failed,
        Ending::TickFailed => Exit::Done,
    })
}

/// Binds `addr` and serves the operator's metrics and health endpoints on a thread of their own.
#[cfg(feature = "metrics")]
fn start_metrics(
    addr: &str,
    allow_hosts: &[String],
    interval: std::time::Duration,
    project: &crate::project::Project,
) -> Result<Arc<operator::metrics::Metrics>, CommandError> {
    if addr.parse::<std::net::SocketAddr>().is_err() {
        return Err(CommandError::usage(format!(
            "--metrics-addr {addr:?} is not an address and port such as {}",
            operator::metrics::DEFAULT_ADDR
        )));
    }
    let mut bound = crate::serve::Bound::bind(addr)?;
    for name in allow_hosts {
        bound.allow_host(name).map_err(CommandError::usage)?;
    }
    let at = bound.local_addr();
    let reach =
        if bound.is_loopback() { "loopback only" } else { "warning: not loopback, reachable from other machines" };
    eprintln!("operator: metrics on http://{at}/metrics, health on /healthz and /readyz ({reach})");
    let metrics = Arc::new(operator::metrics::Metrics::new(interval));
    let router = operator::metrics::router(Arc::clone(&metrics), project.ledger.clone());
    std::thread::spawn(move || {
        if let Err(e) = bound.serve(router) {
            eprintln!("operator: warning: the metrics endpoint stopped: {}", chain(&e));
        }
    });
    Ok(metrics)
}

/// The ConvergeOps this binary carries (none in the stock binary).
fn carried(binary: Binary) -> Vec<crate::model::OpDocument> {
    if binary == Binary::Stock {
        return Vec::new();
    }
    crate::catalog::Catalog::embedded().map(|c| c.converge_ops().cloned().collect()).unwrap_or_default()
}

fn cmd_status(binary: Binary, args: &StatusArgs) -> Result<Exit, CommandError> {
    let ledger = open_ledger()?;
    let leases = LeaseStore::new(&ledger);
    let now = crate::clock::now()?;
    let ops = status::discover(&ledger, &carried(binary), args.env.as_deref(), None)?;
    if args.fetch {
        if ledger.config().remote.is_none() {
            eprintln!("warning: --fetch: no [ledger] remote is configured, so there is nothing to fetch");
        } else {
            match ledger.sync() {
                Ok(report) => {
                    if let crate::ledger::PushStatus::NotPushed { reason, .. } = report.push {
                        eprintln!("warning: the ledger could not be synchronised: {reason}");
                    }
                }
                Err(e) => eprintln!("warning: the ledger could not be fetched: {}", chain(&e)),
            }
            for r in &ops {
                if let Ok(key) = crate::lease::LeaseKey::new(r.member.as_deref(), &r.op)
                    && let Err(e) = leases.fetch(&key)
                {
                    eprintln!("warning: {}", chain(&e));
                }
            }
        }
    }
    let view = status::status(&ledger, &leases, &ops, now)?;
    if view.ops.is_empty() && view.pending_gates.is_empty() {
        eprintln!("warning: no ConvergeOp ticks are recorded on the ledger yet");
    }
    if args.json {
        let line = super::error::to_json(&view, "the status")?;
        println(&line)?;
    } else {
        print(&super::colour::paint_health_lines(&status::render(&view)))?;
    }
    if let Some(w) = view.malformed.warning("status") {
        eprintln!("warning: {w}");
    }
    Ok(Exit::Done)
}

fn cmd_log(binary: Binary, args: &LogArgs) -> Result<Exit, CommandError> {
    let now = crate::clock::Clock::from_env()?.now();
    let since = match args.since.as_deref().map(|s| crate::clock::parse_since(s, now).ok_or(s)) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(s)) => {
            return Err(CommandError::usage(format!(
                "--since must be an RFC 3339 instant such as 2026-08-25T00:00:00Z or a time ago such as 1h, 30m, 2d (got {s:?})"
            )));
        }
    };
    let limit = match args.limit.as_deref().map(str::parse::<usize>) {
        None => None,
        Some(Ok(n)) if n > 0 => Some(n),
        Some(_) => {
            let got = args.limit.as_deref().unwrap_or("");
            return Err(CommandError::usage(format!("--limit must be a positive integer (got {got:?})")));
        }
    };
    // Caught before the first read, so a stop while following ends the loop, never the process.
    let stop = if args.follow { Some(follow_stop_flag()?) } else { None };
    let ledger = open_ledger()?;
    let tip = ledger.tip()?;
    let ops = status::discover(&ledger, &carried(binary), args.env.as_deref(), args.op.as_deref())?;
    let timeline = operator::log::timeline(&ledger, &ops, &operator::log::Filter { since, limit })?;
    if let Some(stop) = stop {
        return follow(binary, args, &ledger, since, timeline, tip, &stop);
    }
    if timeline.entries.is_empty() {
        eprintln!("warning: no converge ticks or op runs recorded yet");
    }
    if args.json {
        let line = super::error::to_json(&timeline, "the log")?;
        println(&line)?;
    } else {
        print(&operator::log::render(&timeline))?;
    }
    if let Some(w) = timeline.malformed.warning("timeline") {
        eprintln!("warning: {w}");
    }
    Ok(Exit::Done)
}

/// A flag set by SIGINT or SIGTERM, which `operator log --follow` polls.
fn follow_stop_flag() -> Result<Arc<std::sync::atomic::AtomicBool>, CommandError> {
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&flag))
            .map_err(|e| CommandError::failed_with("cannot install the SIGINT/SIGTERM handler", e))?;
    }
    Ok(flag)
}

/// How often `operator log --follow` reads the ledger tip.
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// `operator log --follow`: prints `initial`, then every entry that lands, until stopped.
fn follow(
    binary: Binary,
    args: &LogArgs,
    ledger: &crate::ledger::Ledger,
    since: Option<jiff::Timestamp>,
    initial: operator::log::Timeline,
    tip: Option<crate::git::ObjectId>,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Exit, CommandError> {
    let show = |entries: Vec<operator::log::Entry>| -> Result<(), CommandError> {
        if args.json {
            for e in &entries {
                let line = super::error::to_json(e, "the log")?;
                println(&line)?;
            }
        } else if !entries.is_empty() {
            let page = operator::log::Timeline { version: 1, entries, malformed: Default::default() };
            print(&operator::log::render(&page))?;
        }
        Ok(())
    };
    if let Some(w) = initial.malformed.warning("timeline") {
        eprintln!("warning: {w}");
    }
    let scope = operator::follow::Scope { carried: carried(binary), env: args.env.clone(), op: args.op.clone(), since };
    let mut follower = operator::follow::Follower::new(scope, &initial, tip);
    show(initial.entries)?;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(FOLLOW_POLL);
        match follower.poll(ledger) {
            Ok(fresh) => show(fresh)?,
            Err(e) => eprintln!("warning: the ledger could not be read, retrying: {}", chain(&e)),
        }
    }
    Ok(Exit::Done)
}

/// The gates declared `sealed = true` among the ops this binary carries (none in the stock one).
fn sealed_gates(binary: Binary) -> std::collections::BTreeSet<(String, String)> {
    if binary == Binary::Stock {
        return Default::default();
    }
    let Ok(catalog) = crate::catalog::Catalog::embedded() else { return Default::default() };
    let mut out = std::collections::BTreeSet::new();
    for doc in catalog.ops() {
        for step in doc.phases.iter().flat_map(|p| &p.steps) {
            if let crate::model::Step::Gate { name, args, .. } = step
                && args.sealed
            {
                out.insert((doc.name.to_string(), name.to_string()));
            }
        }
    }
    out
}

/// The ConvergeOp `op` of this binary, or a usage error with the closest name.
fn converge_op<'a>(
    project: &'a crate::project::Project,
    op: &str,
) -> Result<&'a crate::model::OpDocument, CommandError> {
    project.catalog.get(op).filter(|d| d.converge.is_some()).ok_or_else(|| {
        let names: Vec<String> = project.catalog.converge_ops().map(|d| d.name.to_string()).collect();
        let hint = crate::model::contract::did_you_mean(op, names.iter().map(String::as_str))
            .map_or_else(|| format!("the ConvergeOps are: {}", names.join(", ")), |s| format!("did you mean {s}?"));
        CommandError::usage(format!("{} is no ConvergeOp of this binary; {hint}", crate::terminal::printable(op)))
    })
}

/// Records a suspend or resume fact of `op`.
fn control(
    project: &crate::project::Project,
    doc: &crate::model::OpDocument,
    fact: ControlFact,
) -> Result<(), CommandError> {
    project.ledger.append_record(doc.member.as_deref(), &fact)?;
    Ok(())
}

fn cmd_suspend(args: &SuspendArgs) -> Result<Exit, CommandError> {
    let project = open_project()?;
    let doc = converge_op(&project, &args.op)?;
    if args.reason.trim().is_empty() {
        return Err(CommandError::usage("--reason is empty: say why the op is suspended (it is recorded and shown)"));
    }
    let by = super::approve::actor(args.actor.as_deref(), &project.ledger)?;
    let now = project.ledger.clock().now();
    let until = match args.until.as_deref() {
        None => None,
        Some(text) => Some(match crate::clock::parse(text) {
            Some(at) => at,
            None => {
                let d = crate::duration::parse(text).map_err(|e| {
                    CommandError::usage_with("--until", e).hint("an RFC 3339 instant or a duration from now, e.g. 2h")
                })?;
                crate::clock::after(now, d)
            }
        }),
    };
    if until.is_some_and(|u| u <= now) {
        return Err(CommandError::usage("--until lies in the past: the suspension would never stand"));
    }
    let fact = ControlFact {
        version: 1,
        kind: suspend::SUSPEND.to_owned(),
        op: args.op.clone(),
        env: doc.env.as_deref().unwrap_or_default().to_owned(),
        rule: None,
        reason: Some(args.reason.clone()),
        until: until.map(crate::clock::format),
        by: by.as_str().to_owned(),
        timestamp: crate::clock::format(now),
    };
    control(&project, doc, fact.clone())?;
    let lapse = fact.until.as_ref().map_or_else(|| "until `operator resume`".to_owned(), |u| format!("until {u}"));
    println(&format!(
        "suspended {} by {} ({lapse}): no operator sharing this ledger ticks it meanwhile; a tick by hand still runs",
        args.op, fact.by
    ))?;
    Ok(Exit::Done)
}

fn cmd_resume(args: &ResumeArgs) -> Result<Exit, CommandError> {
    let project = open_project()?;
    let doc = converge_op(&project, &args.op)?;
    let by = super::approve::actor(args.actor.as_deref(), &project.ledger)?;
    let now = project.ledger.clock().now();
    let key =
        crate::ledger::ShardKey::control(doc.member.as_deref(), doc.env.as_deref().unwrap_or_default(), &args.op)?;
    let standing = suspend::suspension(&project.ledger, &key, now)?;
    let fact = ControlFact {
        version: 1,
        kind: suspend::RESUME.to_owned(),
        op: args.op.clone(),
        env: doc.env.as_deref().unwrap_or_default().to_owned(),
        rule: None,
        reason: None,
        until: None,
        by: by.as_str().to_owned(),
        timestamp: crate::clock::format(now),
    };
    control(&project, doc, fact)?;
    let was = if standing.is_some() { "" } else { " (it was not suspended)" };
    println(&format!(
        "resumed {}{was}: the operators tick it again, and a rule that gave up on its restart limit counts afresh",
        args.op
    ))?;
    Ok(Exit::Done)
}

fn cmd_undamp(args: &UndampArgs) -> Result<Exit, CommandError> {
    let project = open_project()?;
    let doc = converge_op(&project, &args.op)?;
    let rules = doc.converge.as_ref().map(|c| c.rules.as_slice()).unwrap_or_default();
    if let Some(rule) = &args.rule
        && !rules.iter().any(|r| r.id.as_str() == rule)
    {
        let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
        return Err(CommandError::usage(format!(
            "{} has no rule {}; its rules are: {}",
            args.op,
            crate::terminal::printable(rule),
            ids.join(", ")
        )));
    }
    let by = super::approve::actor(args.actor.as_deref(), &project.ledger)?;
    let env = doc.env.as_deref().unwrap_or_default();
    let fact = crate::tick::undamp::UndampFact {
        version: 1,
        kind: crate::tick::undamp::UNDAMP.to_owned(),
        op: args.op.clone(),
        env: env.to_owned(),
        rule: args.rule.clone(),
        reason: None,
        until: None,
        by: by.as_str().to_owned(),
        timestamp: crate::clock::format(project.ledger.clock().now()),
    };
    project.ledger.append_record(doc.member.as_deref(), &fact)?;
    let what = args.rule.as_ref().map_or_else(|| "every rule".to_owned(), |r| format!("rule {r}"));
    println(&format!(
        "undamped {} ({what}) by {}: the next tick plans without its damped runs and restart counts, and may dispatch again",
        args.op, fact.by
    ))?;
    Ok(Exit::Done)
}

fn cmd_audit(binary: Binary, args: &AuditArgs) -> Result<Exit, CommandError> {
    let ledger = open_ledger()?;
    let sealed = sealed_gates(binary);
    let needs_seal = |op: &str, gate: &str| sealed.contains(&(op.to_owned(), gate.to_owned()));
    let view = operator::audit::audit(&ledger, args.op.as_deref(), &needs_seal)?;
    if args.json {
        let line = super::error::to_json(&view, "the audit")?;
        println(&line)?;
    } else {
        print(&operator::audit::render(&view))?;
    }
    if view.ops.is_empty() {
        eprintln!("warning: no gate ledgers on the ledger branch yet");
    }
    if view.audit.gaps.is_empty() { Ok(Exit::Done) } else { Ok(Exit::Failed) }
}
