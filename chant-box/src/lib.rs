//! chant's box services lexicon, a plugin over `chant-lexicon` like the files and PostgreSQL
//! lexicons (re-exported by the facade as `chant::lexicon::sprite`, and its supervisor as
//! `chant::supervisor`, under the `box` feature).
//!
//! The box services lexicon: a box's services, declared in its member's `box` block, supervised
//! by `sprite-env` (a sprite's own, or chant's stand-in), observed through the supervisor's list
//! and each service's health URL, restarted and applied through the supervisor's command line.
//!
//! The three steps, each reading its list of services on every run from where its arguments
//! say ([`source`]: the member's box block, an inline list, or a services file):
//! - [`observe`] (`sprite_services_observe`): one verdict per declared service. An unreadable
//!   supervisor, or output that is not a listing of the known shape ([`listing`]: read whole or
//!   not at all), makes every service `unknown` (never `drifted`: a hole in the reading is not a
//!   reason to act); an optional service is skipped until the supervisor lists it.
//! - [`restart`] (`sprite_service_restart`): restarts the service named by the step or by
//!   `CHANT_CONVERGE_RESOURCE` (one its list holds), then waits for its health URL.
//! - [`apply`] (`sprite_apply_services`): creates, replaces, restarts or starts the declared
//!   services in dependency order, never deleting one the block does not declare, and expands
//!   every command before changing anything.
//!
//! Every wait is a field of [`Settings`]; the steps read them from `CHANT_SPRITE_*` variables
//! (see [`Settings::from_env`]) because the op's step arguments carry only what the DSL declares.

pub mod control;
pub mod declaration;
mod direct;
mod error;
mod lexicon;
pub mod listing;
pub mod source;
pub mod step;
mod steps;
pub mod supervisor;
pub mod usage;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use declaration::{BoxDeclaration, BoxService};
pub use error::SpriteError;
pub use lexicon::{BoxLexicon, BoxServices, LEXICON};
pub use listing::{Listed, ListingError, parse_list};
pub use step::BoxStep;

/// The variable a service's `cmd` may name for the project root (the directory of `chant.toml`)
/// without setting it, so a declaration such as `python3 ${CHANT_PROJECT_DIR}/examples/box/app.py`
/// resolves from any clone. A value set in the environment wins.
pub const PROJECT_DIR_VAR: &str = "CHANT_PROJECT_DIR";

/// The fallback path of a sprite's own supervisor.
pub const SPRITE_FALLBACK: &str = "/.sprite/bin/sprite-env";

/// The timings and the supervisor of the steps.
#[derive(Debug, Clone)]
pub struct Settings {
    /// An explicit supervisor; else `sprite-env` on PATH, else [`SPRITE_FALLBACK`].
    pub sprite_env: Option<PathBuf>,
    /// Health probes per service before it counts as drifted (at least 1).
    pub probes: u32,
    /// Pause between two probes of one service.
    pub probe_interval: Duration,
    /// Timeout of one probe.
    pub probe_timeout: Duration,
    /// How long a restart waits for the health URL.
    pub wait: Duration,
    /// Pause between two probes while waiting after a restart.
    pub wait_interval: Duration,
    /// Timeout of `services list`.
    pub list_timeout: Duration,
    /// Timeout of a changing command (create, delete, start, stop, restart).
    pub change_timeout: Duration,
    /// Whether `services list` is asked of chant's stand-in through its socket, without a
    /// process, when the supervisor is the stand-in (`direct.rs`); off with `CHANT_SPRITE_DIRECT=0`.
    pub direct: bool,
    /// How far apart the two readings of a process tree's CPU time are, for a service that
    /// declares `checks.cpuPercent` ([`usage`]).
    pub cpu_sample: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sprite_env: None,
            probes: 3,
            probe_interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(3),
            wait: Duration::from_secs(60),
            wait_interval: Duration::from_millis(500),
            list_timeout: Duration::from_secs(60),
            change_timeout: Duration::from_secs(120),
            direct: true,
            cpu_sample: Duration::from_millis(500),
        }
    }
}

impl Settings {
    /// The defaults, overridden by `CHANT_SPRITE_ENV` (the supervisor's path),
    /// `CHANT_SPRITE_PROBES`, `CHANT_SPRITE_PROBE_INTERVAL`, `CHANT_SPRITE_PROBE_TIMEOUT`,
    /// `CHANT_SPRITE_WAIT` and `CHANT_SPRITE_WAIT_INTERVAL` (durations such as `500ms`) and
    /// `CHANT_SPRITE_DIRECT` (`0`, `false`, `off` or `no` runs the command line for every listing)
    /// and `CHANT_SPRITE_CPU_SAMPLE` read through `var`. An unparseable value keeps the default.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut s = Settings::default();
        let dur = |k: &str| var(k).and_then(|v| chant_lexicon::duration::parse(&v).ok());
        s.sprite_env = var("CHANT_SPRITE_ENV").filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(n) = var("CHANT_SPRITE_PROBES").and_then(|v| v.parse::<u32>().ok()) {
            s.probes = n.max(1);
        }
        if let Some(d) = dur("CHANT_SPRITE_PROBE_INTERVAL") {
            s.probe_interval = d;
        }
        if let Some(d) = dur("CHANT_SPRITE_PROBE_TIMEOUT") {
            s.probe_timeout = d;
        }
        if let Some(d) = dur("CHANT_SPRITE_WAIT") {
            s.wait = d;
        }
        if let Some(d) = dur("CHANT_SPRITE_WAIT_INTERVAL") {
            s.wait_interval = d;
        }
        if let Some(d) = dur("CHANT_SPRITE_CPU_SAMPLE").filter(|d| !d.is_zero()) {
            s.cpu_sample = d;
        }
        if let Some(v) = var("CHANT_SPRITE_DIRECT") {
            s.direct = !matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false" | "off" | "no");
        }
        s
    }

    /// The supervisor to run: the explicit one, `sprite-env` on PATH, or the fallback path.
    ///
    /// # Errors
    ///
    /// [`SpriteError::NoSupervisor`] when there is none.
    pub fn binary(&self) -> Result<PathBuf, SpriteError> {
        if let Some(p) = &self.sprite_env {
            return Ok(p.clone());
        }
        let on_path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join("sprite-env")).find(|c| c.is_file()))
            .unwrap_or_default();
        if let Some(p) = on_path {
            return Ok(p);
        }
        let fallback = Path::new(SPRITE_FALLBACK);
        if fallback.is_file() {
            return Ok(fallback.to_path_buf());
        }
        Err(SpriteError::NoSupervisor)
    }
}

fn supervise(settings: &Settings, args: &[&str], timeout: Duration) -> Result<String, SpriteError> {
    supervise_with(settings, args, timeout, Vec::new())
}

/// [`supervise`] with `env` added to the supervisor command's environment.
fn supervise_with(
    settings: &Settings,
    args: &[&str],
    timeout: Duration,
    env: Vec<(String, String)>,
) -> Result<String, SpriteError> {
    let bin = settings.binary()?;
    let mut spec = chant_store::process::Spec::new(&bin);
    spec.args = args.iter().map(|a| (*a).to_owned()).collect();
    spec.env = env;
    spec.timeout = timeout;
    spec.grace = Duration::from_secs(2);
    spec.max_output = Some(listing::MAX_OUTPUT);
    let command = args.iter().take(3).copied().collect::<Vec<&str>>().join(" ");
    let out = match chant_store::process::run(&spec) {
        Ok(out) => out,
        Err(source) => return Err(SpriteError::Run { command, source }),
    };
    if out.success() {
        Ok(out.stdout)
    } else {
        let why = if out.stderr.trim().is_empty() { out.describe(timeout) } else { out.stderr.trim().to_owned() };
        Err(SpriteError::Refused { command, why: chant_lexicon::redact::sanitise(&why) })
    }
}

/// Runs `sprite-env services list` and reads its JSON or table output ([`parse_list`]), whole
/// or not at all. When the supervisor is chant's stand-in (and [`Settings::direct`]), its daemon
/// is asked through its socket instead, without a process (`direct.rs`), and read the same way;
/// if that fails, the command line is run.
///
/// # Errors
///
/// [`SpriteError`] when the supervisor cannot be run, fails, prints more than
/// [`listing::MAX_OUTPUT`] bytes, or prints anything but a listing.
pub fn list(settings: &Settings) -> Result<Vec<Listed>, SpriteError> {
    if settings.direct
        && let Ok(bin) = settings.binary()
        && let Some(listed) = direct::listing(&bin, settings.list_timeout).and_then(|text| parse_list(&text).ok())
    {
        return Ok(listed);
    }
    parse_list(&supervise(settings, &["services", "list"], settings.list_timeout)?).map_err(SpriteError::Listing)
}

/// One GET of `url`: healthy only on 200, redirects not followed.
pub fn probe(url: &str, timeout: Duration) -> bool {
    matches!(chant_lexicon::http::check(url, timeout), Ok(200))
}

/// Observes every declared service: `{resources: [{name, status, detail, readings?}], skipped:
/// [names]}`. A service in sync that declares `checks` is then held to them ([`usage`]; a file's
/// path is relative to `root`).
pub fn observe(decl: &BoxDeclaration, settings: &Settings, root: &Path) -> Value {
    let listed = list(settings).map_err(|e| chant_store::error::chain(&e));
    let mut resources = Vec::new();
    let mut checked: Vec<(usize, &usage::Checks, Option<i64>)> = Vec::new();
    let mut skipped = Vec::new();
    for s in decl.services() {
        let listed = match &listed {
            Err(e) => {
                if s.optional {
                    skipped.push(s.name.clone());
                } else {
                    let first = e.lines().next().unwrap_or_default();
                    resources.push(verdict(&s.name, "unknown", format!("the supervisor could not be read: {first}")));
                }
                continue;
            }
            Ok(l) => l.iter().find(|l| l.name == s.name),
        };
        let Some(l) = listed else {
            if s.optional {
                skipped.push(s.name.clone());
            } else {
                resources.push(verdict(&s.name, "drifted", "declared, but the supervisor has no such service".into()));
            }
            continue;
        };
        let (status, detail) = judge(s, l, settings);
        if let (Some(checks), "in-sync") = (&s.checks, status) {
            checked.push((resources.len(), checks, l.runtime.pid));
        }
        resources.push(verdict(&s.name, status, detail));
    }
    hold_to_checks(&mut resources, &checked, settings, root);
    json!({ "resources": resources, "skipped": skipped })
}

/// Reads the process trees (and files) of the services in `checked` (index into `resources`,
/// their checks, their pid) and turns each verdict `unknown` when a reading fails, `drifted`
/// when a reading passes its limit, adding the readings. CPU is read twice, once for every
/// service, `settings.cpu_sample` apart.
fn hold_to_checks(
    resources: &mut [Value],
    checked: &[(usize, &usage::Checks, Option<i64>)],
    settings: &Settings,
    root: &Path,
) {
    let no_pid = || "the supervisor lists no pid for it".to_owned();
    let first: Vec<Result<usage::Sample, String>> =
        checked.iter().map(|(_, _, pid)| pid.ok_or_else(no_pid).and_then(usage::sample)).collect();
    let cpu_wanted = checked.iter().any(|(_, c, _)| c.cpu_percent.is_some());
    let started = Instant::now();
    if cpu_wanted {
        std::thread::sleep(settings.cpu_sample);
    }
    let elapsed = started.elapsed();
    for ((index, checks, pid), first) in checked.iter().zip(first) {
        let mut readings = usage::Readings::default();
        let mut unread: Vec<String> = Vec::new();
        let mut over: Vec<String> = Vec::new();
        if let Some(limit) = checks.mem_mb {
            match &first {
                Ok(s) => {
                    let mb = usage::mb(s.rss_kb);
                    readings.mem_mb = Some(mb);
                    if mb > limit {
                        over.push(format!("memory {mb} MB over its limit of {limit} MB"));
                    }
                }
                Err(e) => unread.push(format!("memory could not be read: {e}")),
            }
        }
        if let Some(limit) = checks.cpu_percent {
            let second = pid.ok_or_else(no_pid).and_then(usage::sample);
            match (&first, &second) {
                (Ok(a), Ok(b)) => {
                    let pct = usage::cpu_percent(*a, *b, elapsed);
                    readings.cpu_percent = Some(pct);
                    if pct > limit {
                        over.push(format!("cpu {pct}% over its limit of {limit}%"));
                    }
                }
                (Err(e), _) | (_, Err(e)) => unread.push(format!("cpu could not be read: {e}")),
            }
        }
        if let Some(file) = &checks.file {
            match usage::file_age(root, &file.path) {
                Ok(age) => {
                    readings.file_age_secs = Some(age);
                    let max = chant_lexicon::duration::parse(&file.max_age).map(|d| d.as_secs()).unwrap_or(u64::MAX);
                    if age > max {
                        over.push(format!("{} is {age}s old, over its limit of {}", file.path, file.max_age));
                    }
                }
                Err(e) => unread.push(format!("file age could not be read: {e}")),
            }
        }
        let Some(v) = resources.get_mut(*index) else { continue };
        let detail = v.get("detail").and_then(Value::as_str).unwrap_or_default().to_owned();
        let (status, more) = if !unread.is_empty() {
            ("unknown", unread.join("; "))
        } else if !over.is_empty() {
            ("drifted", over.join("; "))
        } else {
            ("in-sync", String::new())
        };
        let detail = if more.is_empty() { detail } else { format!("{detail}; {more}") };
        v["status"] = Value::from(status);
        v["detail"] = Value::from(detail);
        v["readings"] = readings.to_json();
    }
}

/// Judges one listed service: `in-sync`, `drifted` or `unknown`, with the detail in words. A
/// stopped, failed or stopping service is drifted; otherwise its health URL is probed (up to
/// `settings.probes` times), and without one only `running` is in sync.
pub(crate) fn judge(s: &BoxService, l: &Listed, settings: &Settings) -> (&'static str, String) {
    let state = l.status.clone();
    if let Some(st) = state.as_deref().filter(|st| matches!(*st, "stopped" | "failed" | "stopping")) {
        return ("drifted", st.to_owned());
    }
    let shown = state.clone().unwrap_or_else(|| "listed".into());
    match &s.health {
        Some(url) => {
            for i in 0..settings.probes.max(1) {
                if i > 0 {
                    std::thread::sleep(settings.probe_interval);
                }
                if probe(url, settings.probe_timeout) {
                    return ("in-sync", format!("{shown}, {url} answers 200"));
                }
            }
            ("drifted", format!("{shown}, {url} does not answer 200 after {} tries", settings.probes.max(1)))
        }
        None if state.as_deref() == Some("running") => ("in-sync", "running".into()),
        None => ("unknown", format!("{}, and no health URL to probe", state.as_deref().unwrap_or("no state"))),
    }
}

fn verdict(name: &str, status: &str, detail: String) -> Value {
    json!({ "name": name, "status": status, "detail": detail })
}

/// Restarts `name` through the supervisor and waits for its health URL (the declared one).
/// Returns `{name, healthy}` (`healthy` is null without a health URL). The supervisor command is
/// given the values of the variables the declared commands name (`service_env`).
///
/// # Errors
///
/// [`SpriteError`]: the supervisor refused, or the health URL never answered within the wait.
pub fn restart(
    decl: &BoxDeclaration,
    name: &str,
    settings: &Settings,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, SpriteError> {
    let health = decl.get(name).and_then(|s| s.health.clone());
    supervise_with(settings, &["services", "restart", name], settings.change_timeout, service_env(decl, var))?;
    let Some(url) = health else { return Ok(json!({ "name": name, "healthy": null })) };
    let deadline = Instant::now() + settings.wait;
    loop {
        if probe(&url, settings.probe_timeout) {
            return Ok(json!({ "name": name, "healthy": true }));
        }
        if Instant::now() >= deadline {
            return Err(SpriteError::Unhealthy { name: name.to_owned(), url });
        }
        std::thread::sleep(settings.wait_interval);
    }
}

/// What [`apply`] is asked to do.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Apply only these services (an optional one is applied only when named here).
    pub only: Option<Vec<String>>,
    /// Start each applied service that is not running.
    pub start: bool,
    /// Restart the applied services that were already converged.
    pub restart: bool,
}

/// Defines the declared services through the supervisor, in dependency order: creates a missing
/// one, replaces one whose cmd, needs or httpPort differ from the listing, restarts or starts
/// the converged ones as asked, and deletes nothing the block does not declare. Every command is
/// expanded before anything changes. Returns `{applied, started, services: [{name, action}]}`.
///
/// # Errors
///
/// [`SpriteError`]; an expansion error changes nothing.
pub fn apply(
    decl: &BoxDeclaration,
    options: &ApplyOptions,
    settings: &Settings,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, SpriteError> {
    if let Some(only) = &options.only
        && let Some(bad) = only.iter().find(|n| decl.get(n).is_none())
    {
        let declared: Vec<&str> = decl.services().iter().map(|s| s.name.as_str()).collect();
        return Err(SpriteError::Undeclared { name: bad.clone(), declared: declared.join(", ") });
    }
    let targets: Vec<&BoxService> = decl
        .start_order()
        .into_iter()
        .filter(|s| match &options.only {
            Some(only) => only.contains(&s.name),
            None => !s.optional,
        })
        .collect();
    // Chant's stand-in keeps each command as declared, `${VAR}` and all, and expands it when it
    // spawns the service, from the values its command line is given ([`service_env`]): so its
    // `services.json` and listings never hold a secret a variable stands for. Any other
    // supervisor is given the expanded command, which is all it can run. Either way every
    // command is expanded here first, so an unset variable or a comma changes nothing.
    let stand_in = settings.binary().ok().and_then(|b| direct::identify(&b)).is_some();
    let mut argvs = Vec::new();
    for s in &targets {
        let expanded = s.argv(var)?;
        argvs.push(if stand_in { s.cmd.split_whitespace().map(str::to_owned).collect() } else { expanded });
    }
    let env = if stand_in { service_env(decl, var) } else { Vec::new() };
    let listed = list(settings)?;
    // First pass: a service listed on another HTTP port than declared is replaced first, so the
    // port a service moves to is free before anything else is created.
    let mut replaced: Vec<&str> = Vec::new();
    for (s, argv) in targets.iter().zip(&argvs) {
        let Some(l) = listed.iter().find(|l| l.name == s.name) else { continue };
        let moved = matches!(l.http_port, Some(Some(p)) if Some(p) != s.http_port.map(u64::from));
        if moved && s.needs.iter().all(|n| listed.iter().any(|l| &l.name == n)) {
            supervise(settings, &["services", "delete", &s.name], settings.change_timeout)?;
            create(s, argv, settings, &env)?;
            replaced.push(&s.name);
        }
    }
    let mut actions: Vec<(String, &'static str)> = Vec::new();
    let mut started = Vec::new();
    for (s, argv) in targets.iter().zip(&argvs) {
        let current = listed.iter().find(|l| l.name == s.name);
        let action = match current {
            _ if replaced.contains(&s.name.as_str()) => "replaced",
            None => {
                create(s, argv, settings, &env)?;
                "created"
            }
            Some(l) if differs(s, argv, l) => {
                supervise(settings, &["services", "delete", &s.name], settings.change_timeout)?;
                create(s, argv, settings, &env)?;
                "replaced"
            }
            Some(_) if options.restart => {
                supervise_with(settings, &["services", "restart", &s.name], settings.change_timeout, env.clone())?;
                "restarted"
            }
            Some(l) => {
                if options.start && !matches!(l.status.as_deref(), Some("running" | "starting")) {
                    supervise_with(settings, &["services", "start", &s.name], settings.change_timeout, env.clone())?;
                    started.push(s.name.clone());
                    "started"
                } else {
                    "left"
                }
            }
        };
        actions.push((s.name.clone(), action));
    }
    let applied: Vec<&str> =
        actions.iter().filter(|(_, a)| matches!(*a, "created" | "replaced")).map(|(n, _)| n.as_str()).collect();
    let services: Vec<Value> = actions.iter().map(|(n, a)| json!({ "name": n, "action": a })).collect();
    Ok(json!({ "applied": applied, "started": started, "services": services }))
}

fn differs(s: &BoxService, argv: &[String], l: &Listed) -> bool {
    let cmd = l.cmd.as_ref().is_some_and(|c| *c != argv.join(" "));
    let needs = l.needs.as_ref().is_some_and(|n| {
        let (mut a, mut b) = (n.clone(), s.needs.clone());
        a.sort();
        b.sort();
        a != b
    });
    let port = l.http_port.is_some_and(|p| p != s.http_port.map(u64::from));
    cmd || needs || port
}

/// The value of every variable the declared services' commands name, as `var` finds it: the
/// environment a supervisor command is given, so chant's stand-in, which keeps `${VAR}` as
/// written, can expand it when it spawns (`${CHANT_PROJECT_DIR}` is known to the steps only).
fn service_env(decl: &BoxDeclaration, var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut out = std::collections::BTreeMap::new();
    for s in decl.services() {
        for name in s.cmd.split_whitespace().flat_map(supervisor::referenced) {
            if let Some(v) = var(&name) {
                out.insert(name, v);
            }
        }
    }
    out.into_iter().collect()
}

fn create(s: &BoxService, argv: &[String], settings: &Settings, env: &[(String, String)]) -> Result<(), SpriteError> {
    let mut args: Vec<String> = vec!["services".into(), "create".into(), s.name.clone(), "--cmd".into()];
    args.push(argv.first().cloned().unwrap_or_default());
    if argv.len() > 1 {
        args.push("--args".into());
        args.push(argv[1..].join(","));
    }
    if !s.needs.is_empty() {
        args.push("--needs".into());
        args.push(s.needs.join(","));
    }
    if let Some(p) = s.http_port {
        args.push("--http-port".into());
        args.push(p.to_string());
    }
    match &s.duration {
        Some(d) => {
            args.push("--duration".into());
            args.push(d.clone());
        }
        None => args.push("--no-stream".into()),
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    supervise_with(settings, &refs, settings.change_timeout, env.to_vec()).map(|_| ())
}

/// Runs a box services step (`sprite_services_observe`, `sprite_service_restart` or
/// `sprite_apply_services`) with its arguments already expanded, through the box services
/// lexicon over the services the step names ([`source::resolve`]: the box block of `member` in
/// `root`, an inline list or a services file, read on every call).
/// `resource` is the resource of a converge dispatch; `var` looks variables up (settings,
/// `${VAR}` in commands, `CHANT_CONVERGE_RESOURCE`).
///
/// # Errors
///
/// [`SpriteError`]; nothing was changed when the declaration is at fault.
pub fn run_step(
    step: &BoxStep,
    root: &Path,
    member: Option<&str>,
    resource: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, SpriteError> {
    let kind = step.kind();
    let lexicon = BoxLexicon::new(root, member, source::resolve(step, root, member)?, var);
    match step {
        BoxStep::Restart(args) => {
            let name = args
                .name
                .clone()
                .or_else(|| resource.map(str::to_owned))
                .or_else(|| var(chant_lexicon::handoff::RESOURCE_VAR))
                .filter(|n| !n.is_empty())
                .ok_or_else(|| SpriteError::NoService {
                    step: kind.to_owned(),
                    var: chant_lexicon::handoff::RESOURCE_VAR,
                })?;
            let listed = lexicon.declaration().services();
            if !listed.iter().any(|s| s.name == name) {
                let declared: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
                return Err(SpriteError::NotListed { step: kind.to_owned(), name, listed: declared.join(", ") });
            }
            lexicon.restart(&name)
        }
        BoxStep::Apply(args) => {
            let only = args
                .only
                .as_ref()
                .map(|o| o.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect());
            let options =
                ApplyOptions { only, start: args.start.unwrap_or(false), restart: args.restart.unwrap_or(false) };
            lexicon.apply_services(&options)
        }
        BoxStep::Observe(_) => Ok(lexicon.reading()),
    }
}

/// Subscribes to the change stream of chant's stand-in supervisor (the daemon serving
/// `SPRITE_ENV_STATE_DIR`, or the default state directory): `sink.changed()` for every state
/// change (a service exited, was started, stopped or deleted), `sink.lost(..)` when the stream
/// ends. Dropping the subscription closes it. A supervisor with no stream (a sprite's own
/// `sprite-env`, or no stand-in daemon running) is an error: the caller polls on its timer.
///
/// # Errors
///
/// [`SpriteError`] saying why there is no stream.
pub fn subscribe_changes(
    sink: chant_lexicon::observe::ChangeSink,
) -> Result<chant_lexicon::observe::Subscription, SpriteError> {
    let dir = crate::supervisor::state_dir().map_err(SpriteError::StateDir)?;
    subscribe_changes_in(&dir, sink)
}

/// [`subscribe_changes`] for the daemon serving `dir`.
///
/// # Errors
///
/// [`SpriteError`] saying why there is no stream.
pub fn subscribe_changes_in(
    dir: &Path,
    sink: chant_lexicon::observe::ChangeSink,
) -> Result<chant_lexicon::observe::Subscription, SpriteError> {
    use std::io::BufRead;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let client = crate::supervisor::Client::new(dir, "sprite-env");
    let reader = client.watch().map_err(SpriteError::NoStream)?;
    let closer = reader.get_ref().try_clone().map_err(SpriteError::Stream)?;
    let closed = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&closed);
    std::thread::spawn(move || {
        for line in reader.lines() {
            match line {
                Ok(l) if !l.trim().is_empty() => sink.changed(),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if !seen.load(Ordering::SeqCst) {
            sink.lost("the sprite-env change stream ended");
        }
    });
    struct Guard(std::os::unix::net::UnixStream, Arc<AtomicBool>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.1.store(true, Ordering::SeqCst);
            let _ = self.0.shutdown(std::net::Shutdown::Both);
        }
    }
    Ok(chant_lexicon::observe::Subscription::new(Guard(closer, closed)).with_settle(SUPERVISOR_SETTLE))
}

/// How long a supervisor's change waits for the next before it wakes a round: each line of its
/// stream is one whole state change (a child exited, a service started), not a part of a burst
/// of writes, so the wait only gathers the lines of one cause (the exits of a service's
/// processes, which the supervisor writes within a millisecond of each other).
pub const SUPERVISOR_SETTLE: std::time::Duration = std::time::Duration::from_millis(10);

/// One line describing a box services step's result, for the run record.
pub fn describe(step: &BoxStep, result: &Value) -> String {
    match step {
        BoxStep::Observe(_) => {
            let rs = result.get("resources").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let count = |st: &str| rs.iter().filter(|r| r.get("status").and_then(Value::as_str) == Some(st)).count();
            format!("{} in-sync, {} drifted, {} unknown", count("in-sync"), count("drifted"), count("unknown"))
        }
        BoxStep::Restart(_) => {
            format!("restarted: {}", result.get("name").and_then(Value::as_str).unwrap_or("?"))
        }
        BoxStep::Apply(_) => describe_services(result),
    }
}

/// One line naming what `sprite_apply_services` did to each service (`app started, hud left`).
pub fn describe_services(result: &Value) -> String {
    result
        .get("services")
        .and_then(Value::as_array)
        .map(|ss| {
            ss.iter()
                .map(|s| {
                    format!(
                        "{} {}",
                        s.get("name").and_then(Value::as_str).unwrap_or("?"),
                        s.get("action").and_then(Value::as_str).unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}
