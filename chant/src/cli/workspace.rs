//! `workspace status [--json]`: each member of `chant.workspace.json`, its box services (the
//! declaration beside what the supervisor lists) and the newest tick of each of its ConvergeOps
//! (`lastTick`, read from the ledger).
//!
//! The JSON shape (one document on stdout, every key always present):
//!
//! ```json
//! {"version": 1,
//!  "members": [{"name": "box", "dir": "examples/box",
//!    "box": null | {"error": null | "...", "supervisor": {"error": null | "..."},
//!                   "services": [{"name": "app",
//!                                 "declared": {"cmd", "needs", "httpPort", "duration", "health", "optional"},
//!                                 "listed": null | {"status", "cmd", "needs", "httpPort",
//!                                                   "pid", "startedAt", "uptimeSeconds", "restarts"},
//!                                 "probe": null | {"ok", "status", "latencyMs", "error"}}]},
//!    "converge": [{"op": "converge", "env": "box", "health": {"state", "detail"?}, "lastTick": null | {tick record}, "error": null | "..."}]}]}
//! ```
//!
//! `box` is `null` for a member without a box block; `box.error` says why a block is invalid (its
//! `services` is then empty); `supervisor.error` says why the supervisor could not be listed (every
//! `listed` is then `null`). The supervisor is listed once, only when some member has a valid box
//! block. `pid`, `startedAt` and `restarts` are what the supervisor's JSON listing says (`null`
//! when it does not; `pid` and `uptimeSeconds` only while running); `probe` is one GET of the
//! declared health URL made now (2 s at most) for a running service, `ok` only on 200. Exit
//! codes: 0 shown, 2 no `chant.toml` or no readable workspace file.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};

use super::error::{print, println};
use super::{Binary, CommandError, Exit};
use crate::config::Config;
use crate::error::chain;
use crate::ledger::{Ledger, LedgerConfig, ShardKey};
use crate::lexicon::sprite::{self, BoxDeclaration, Listed, declaration::WORKSPACE_FILE};

/// Why [`status`] has no document: the workspace file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The workspace file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{} is not JSON", path.display())]
    NotJson {
        /// The workspace file.
        path: PathBuf,
        /// Why not.
        #[source]
        source: serde_json::Error,
    },
    /// The document has no `members` list.
    #[error("{} has no members list", path.display())]
    NoMembers {
        /// The workspace file.
        path: PathBuf,
    },
}

/// `workspace ...`.
#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    /// The workspace subcommand.
    #[command(subcommand)]
    pub command: WorkspaceCommand,
}

/// The workspace subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum WorkspaceCommand {
    /// Show each member's box services and the newest tick of each of its ConvergeOps
    Status(StatusArgs),
}

/// `workspace status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
}

/// Runs `workspace ...`.
pub fn cmd_workspace(binary: Binary, args: &WorkspaceArgs) -> Result<Exit, CommandError> {
    match &args.command {
        WorkspaceCommand::Status(a) => cmd_status(binary, a),
    }
}

fn cmd_status(binary: Binary, args: &StatusArgs) -> Result<Exit, CommandError> {
    let cwd = super::working_dir()?;
    let config = Config::discover_any_bindings(&cwd)?;
    let ops = if binary == Binary::Stock {
        Vec::new()
    } else {
        crate::catalog::Catalog::embedded().map(|c| c.converge_ops().cloned().collect()).unwrap_or_default()
    };
    let ledger = Ledger::open(&config.root, config.ledger.ledger_config(LedgerConfig::default()));
    let var = |k: &str| std::env::var(k).ok();
    let settings = sprite::Settings::from_env(&var);
    let view = status(&config.root, &ops, ledger.as_ref(), &|| sprite::list(&settings))?;
    if args.json {
        println(&view.to_string())?;
    } else {
        print(&render(&view))?;
    }
    Ok(Exit::Done)
}

/// Builds the `workspace status` document for the project at `root`: `ops` are the ConvergeOps
/// this binary carries, `ledger` where their ticks are read from, `list` the supervisor's listing
/// (called at most once).
///
/// # Errors
///
/// [`Error`] when the workspace file is missing, unreadable or has no `members` list.
pub fn status<E: std::error::Error>(
    root: &Path,
    ops: &[crate::model::OpDocument],
    ledger: Result<&Ledger, &crate::ledger::Error>,
    list: &dyn Fn() -> Result<Vec<Listed>, E>,
) -> Result<Value, Error> {
    let path = root.join(WORKSPACE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
    let doc: Value = serde_json::from_str(&text).map_err(|source| Error::NotJson { path: path.clone(), source })?;
    let members =
        doc.get("members").and_then(Value::as_array).ok_or_else(|| Error::NoMembers { path: path.clone() })?;
    let decls: Vec<Option<Result<BoxDeclaration, sprite::declaration::Error>>> =
        members.iter().map(|m| m.get("box").map(BoxDeclaration::from_value)).collect();
    let listing = if decls.iter().any(|d| matches!(d, Some(Ok(_)))) { Some(list()) } else { None };
    let mut out = Vec::new();
    for (m, decl) in members.iter().zip(decls) {
        let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
        let dir = m.get("dir").and_then(Value::as_str).unwrap_or_default();
        let boxed = decl.map(|d| box_view(d, listing.as_ref()));
        let converge: Vec<Value> = ops
            .iter()
            .filter(|o| o.member.as_deref() == Some(name))
            .map(|o| {
                let env = o.env.as_deref().unwrap_or_default().to_owned();
                let (last, error) = match ledger.map(|l| last_tick(l, name, &env, &o.name)) {
                    Ok(Ok(t)) => (t, Value::Null),
                    Ok(Err(e)) => (Value::Null, Value::String(chain(&e))),
                    Err(e) => (Value::Null, Value::String(format!("the ledger could not be opened: {}", chain(e)))),
                };
                let record: Option<crate::tick::TickRecord> = serde_json::from_value(last.clone()).ok();
                let health = if error.is_null() {
                    serde_json::to_value(crate::tick::health::Health::of_tick(record.as_ref())).unwrap_or(Value::Null)
                } else {
                    json!({"state": "unknown", "detail": "the newest tick could not be read"})
                };
                json!({"op": o.name, "env": env, "health": health, "lastTick": last, "error": error})
            })
            .collect();
        out.push(json!({"name": name, "dir": dir, "box": boxed, "converge": converge}));
    }
    Ok(json!({"version": 1, "members": out}))
}

fn last_tick(ledger: &Ledger, member: &str, env: &str, op: &str) -> Result<Value, crate::ledger::Error> {
    let key = ShardKey::converge(Some(member), env, op)?;
    let latest = ledger.latest(&key)?;
    Ok(latest.record.map(|r| r.value).unwrap_or(Value::Null))
}

fn box_view<E: std::error::Error>(
    decl: Result<BoxDeclaration, sprite::declaration::Error>,
    listing: Option<&Result<Vec<Listed>, E>>,
) -> Value {
    let decl = match decl {
        Ok(d) => d,
        Err(e) => return json!({"error": e.to_string(), "supervisor": {"error": Value::Null}, "services": []}),
    };
    let (listed, sv_error): (&[Listed], Value) = match listing {
        Some(Ok(l)) => (l.as_slice(), Value::Null),
        Some(Err(e)) => (&[], Value::String(chain(e))),
        None => (&[], Value::Null),
    };
    let services: Vec<Value> = decl
        .services()
        .iter()
        .map(|s| {
            let found = listed.iter().find(|l| l.name == s.name);
            let seen = found.map(|l| {
                let running = l.status.as_deref() == Some("running");
                let uptime = l
                    .runtime
                    .started_at
                    .as_deref()
                    .filter(|_| running)
                    .and_then(crate::clock::parse)
                    .map(|at| jiff::Timestamp::now().duration_since(at).as_secs().max(0));
                json!({"status": l.status, "cmd": l.cmd, "needs": l.needs, "httpPort": l.http_port.flatten(),
                       "pid": l.runtime.pid.filter(|_| running), "startedAt": l.runtime.started_at,
                       "uptimeSeconds": uptime,
                       // The stand-in omits a zero count; a start time says it counts.
                       "restarts": l.runtime.restarts.or(l.runtime.started_at.as_ref().map(|_| 0))})
            });
            // The health URL is probed now, once, for a service the supervisor runs.
            let probe = match (&s.health, found.and_then(|l| l.status.as_deref())) {
                (Some(url), Some("running")) => probe(url),
                _ => Value::Null,
            };
            json!({
                "name": s.name,
                "declared": {"cmd": s.cmd, "needs": s.needs, "httpPort": s.http_port, "duration": s.duration,
                             "health": s.health, "optional": s.optional},
                "listed": seen,
                "probe": probe,
            })
        })
        .collect();
    json!({"error": Value::Null, "supervisor": {"error": sv_error}, "services": services})
}

/// How long `workspace status` waits for a health URL.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// One GET of a service's health URL: `{ok, status, latencyMs, error}` (`ok` only on 200).
fn probe(url: &str) -> Value {
    let start = std::time::Instant::now();
    let answer = crate::http::check(url, PROBE_TIMEOUT);
    let latency = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    match answer {
        Ok(code) => json!({"ok": code == 200, "status": code, "latencyMs": latency, "error": Value::Null}),
        Err(e) => json!({"ok": false, "status": Value::Null, "latencyMs": latency, "error": chain(&e)}),
    }
}

/// The human form of the document [`status`] builds. Every text in it (read from the ledger,
/// the workspace file or the supervisor) goes through [`printable`](crate::terminal::printable).
pub fn render(view: &Value) -> String {
    use std::fmt::Write as _;
    let p = crate::terminal::printable;
    let s = |v: &Value| p(v.as_str().unwrap_or("-")).to_string();
    let mut out = String::new();
    for m in view["members"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let _ = writeln!(out, "{} ({})", s(&m["name"]), s(&m["dir"]));
        let b = &m["box"];
        if b.is_null() {
            let _ = writeln!(out, "  box: none");
        } else if let Some(e) = b["error"].as_str() {
            let _ = writeln!(out, "  box: invalid: {}", p(e));
        } else {
            if let Some(e) = b["supervisor"]["error"].as_str() {
                let _ = writeln!(out, "  supervisor: unreadable: {}", p(e));
            }
            for svc in b["services"].as_array().map(Vec::as_slice).unwrap_or_default() {
                let status = match &svc["listed"] {
                    Value::Null => "not listed".to_owned(),
                    l => s(&l["status"]),
                };
                let d = &svc["declared"];
                let mut line = format!("  {:<12} {:<11} {}", s(&svc["name"]), status, s(&d["cmd"]));
                let l = &svc["listed"];
                if let Some(pid) = l["pid"].as_i64() {
                    let _ = write!(line, "  pid {pid}");
                }
                if let Some(up) = l["uptimeSeconds"].as_u64() {
                    let _ = write!(line, "  up {}", crate::duration::format(std::time::Duration::from_secs(up)));
                }
                if let Some(n) = l["restarts"].as_u64() {
                    let _ = write!(line, "  restarts {n}");
                }
                if let Some(h) = d["health"].as_str() {
                    let _ = write!(line, "  health {}", p(h));
                    let pr = &svc["probe"];
                    if let Some(ms) = pr["latencyMs"].as_u64() {
                        let verdict = match (pr["ok"].as_bool(), pr["status"].as_u64(), pr["error"].as_str()) {
                            (Some(true), _, _) => "ok".to_owned(),
                            (_, Some(code), _) => format!("HTTP {code}"),
                            (_, _, Some(e)) => format!("failed: {}", p(e.lines().next().unwrap_or_default())),
                            _ => "failed".to_owned(),
                        };
                        let _ = write!(line, " {verdict} in {ms}ms");
                    }
                }
                if d["optional"] == Value::Bool(true) {
                    line.push_str("  (optional)");
                }
                let _ = writeln!(out, "{line}");
            }
        }
        for c in m["converge"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let health = match c["health"]["detail"].as_str() {
                Some(d) => format!("{} ({d})", s(&c["health"]["state"])),
                None => s(&c["health"]["state"]).to_owned(),
            };
            let head = format!("  {}@{}", s(&c["op"]), s(&c["env"]));
            let t = &c["lastTick"];
            if let Some(e) = c["error"].as_str() {
                let _ = writeln!(out, "{head}: last tick unreadable: {}", p(e));
            } else if t.is_null() {
                let _ = writeln!(out, "{head}: {health}");
            } else {
                // The health word (its detail names what it is about) and how old it is; the
                // counters are in --json.
                let observed = t["timestamp"]
                    .as_str()
                    .and_then(crate::clock::parse)
                    .map(|at| {
                        let now =
                            crate::clock::Clock::from_env().map(|c| c.now()).unwrap_or_else(|_| jiff::Timestamp::now());
                        let secs = u64::try_from(now.as_second().saturating_sub(at.as_second())).unwrap_or(0);
                        format!(", observed {}", crate::operator::status::ago(secs))
                    })
                    .unwrap_or_default();
                let _ = writeln!(out, "{head}: {health}{observed}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_block_and_an_unreadable_supervisor_are_shown_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let ws = json!({"members": [
            {"name": "plain", "dir": "a"},
            {"name": "bad", "dir": "b", "box": {"services": [{"name": "x", "cmd": "true"}, {"name": "x", "cmd": "true"}]}},
            {"name": "good", "dir": "c", "box": {"services": [{"name": "web", "cmd": "python3 w.py", "optional": true}]}}
        ]});
        std::fs::write(dir.path().join(WORKSPACE_FILE), ws.to_string()).unwrap();
        let calls = std::cell::Cell::new(0);
        let list = || {
            calls.set(calls.get() + 1);
            Err(std::io::Error::other("no sprite-env"))
        };
        let no_ledger = crate::ledger::Error::BranchClash;
        let view = status(dir.path(), &[], Err(&no_ledger), &list).unwrap();
        assert_eq!(calls.get(), 1, "the supervisor is listed once");
        let ms = view["members"].as_array().unwrap();
        assert_eq!(ms[0], json!({"name": "plain", "dir": "a", "box": null, "converge": []}));
        assert!(ms[1]["box"]["error"].as_str().unwrap().contains("declared twice"), "{}", ms[1]);
        assert_eq!(ms[1]["box"]["services"], json!([]));
        assert_eq!(ms[2]["box"]["supervisor"]["error"], "no sprite-env");
        assert_eq!(ms[2]["box"]["services"][0]["listed"], Value::Null);
        assert_eq!(ms[2]["box"]["services"][0]["declared"]["optional"], true);
        let text = render(&view);
        assert!(text.contains("  box: none\n"), "{text}");
        assert!(text.contains("supervisor: unreadable: no sprite-env"), "{text}");
        assert!(text.contains("web          not listed  python3 w.py  (optional)"), "{text}");
    }

    #[test]
    fn text_from_the_ledger_and_the_supervisor_is_shown_escaped() {
        let evil = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\nforged";
        let view = json!({"members": [{"name": "box", "dir": evil,
            "box": {"error": null, "supervisor": {"error": evil},
                    "services": [{"name": evil, "listed": {"status": evil}, "declared": {"cmd": evil, "health": evil}}]},
            "converge": [{"op": "converge", "env": evil, "error": null,
                          "lastTick": {"timestamp": evil, "firedRuleIds": [evil], "resources": []}},
                         {"op": "other", "env": "box", "error": evil, "lastTick": null}]}]});
        let text = render(&view);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text}");
        assert_eq!(text.lines().count(), 5, "a newline in ledger text forged a line: {text}");
        assert!(text.contains(r"box (x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{a}forged)"), "{text}");
    }

    /// A one-request HTTP server on loopback answering `200 ok`; returns its health URL.
    fn one_answer() -> String {
        use std::io::{Read as _, Write as _};
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/health", server.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut conn, _) = server.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        });
        url
    }

    #[test]
    fn each_service_shows_its_pid_uptime_restarts_and_a_health_probe_with_its_latency() {
        let dir = tempfile::tempdir().unwrap();
        let healthy = one_answer();
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}/health", l.local_addr().unwrap())
        };
        let ws = json!({"members": [{"name": "box", "dir": ".", "box": {"services": [
            {"name": "app", "cmd": "python3 app.py", "health": healthy},
            {"name": "worker", "cmd": "python3 worker.py", "health": closed},
            {"name": "site", "cmd": "python3 site.py"}
        ]}}]});
        std::fs::write(dir.path().join(WORKSPACE_FILE), ws.to_string()).unwrap();
        let started =
            crate::clock::format(jiff::Timestamp::now().checked_sub(jiff::SignedDuration::from_secs(90)).unwrap());
        let listing = format!(
            r#"[{{"name": "app", "cmd": "python3", "args": ["app.py"], "state": {{"name": "app", "status": "running", "pid": 4242, "started_at": "{started}", "restarts": 2}}}},
                {{"name": "worker", "cmd": "python3", "state": {{"name": "worker", "status": "running", "pid": 4343, "started_at": "{started}"}}}},
                {{"name": "site", "cmd": "python3", "state": {{"name": "site", "status": "failed", "started_at": "{started}", "restarts": 1}}}}]"#
        );
        let list = || crate::lexicon::sprite::parse_list(&listing);
        let no_ledger = crate::ledger::Error::BranchClash;
        let view = status(dir.path(), &[], Err(&no_ledger), &list).unwrap();
        let svcs = view["members"][0]["box"]["services"].as_array().unwrap().clone();
        let (app, worker, site) = (&svcs[0], &svcs[1], &svcs[2]);
        assert_eq!((&app["listed"]["pid"], &app["listed"]["restarts"]), (&json!(4242), &json!(2)), "{app}");
        let up = app["listed"]["uptimeSeconds"].as_u64().unwrap();
        assert!((90..3600).contains(&up), "{app}");
        assert_eq!((&app["probe"]["ok"], &app["probe"]["status"]), (&json!(true), &json!(200)), "{app}");
        assert!(app["probe"]["latencyMs"].is_u64(), "{app}");
        assert_eq!(worker["listed"]["restarts"], 0, "a start time without a count is no restart: {worker}");
        assert_eq!((&worker["probe"]["ok"], &worker["probe"]["status"]), (&json!(false), &Value::Null), "{worker}");
        assert!(worker["probe"]["error"].is_string(), "{worker}");
        assert_eq!((&site["listed"]["pid"], &site["listed"]["uptimeSeconds"]), (&Value::Null, &Value::Null), "{site}");
        assert_eq!(site["probe"], Value::Null, "nothing to probe: no health URL, not running");
        let text = render(&view);
        let line = |name: &str| text.lines().find(|l| l.trim_start().starts_with(name)).unwrap().to_owned();
        let app_line = line("app ");
        assert!(app_line.contains("  pid 4242  up 1m") && app_line.contains("  restarts 2  health http://"), "{text}");
        assert!(app_line.contains(" ok in ") && app_line.ends_with("ms"), "{text}");
        assert!(line("worker ").contains(" failed: "), "{text}");
        assert!(line("site ").contains("failed") && line("site ").contains("restarts 1"), "{text}");
    }

    #[test]
    fn no_workspace_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let no_ledger = crate::ledger::Error::BranchClash;
        let e = status(dir.path(), &[], Err(&no_ledger), &|| Ok::<_, std::io::Error>(Vec::new())).unwrap_err();
        assert!(matches!(e, Error::Read { .. }), "{e}");
    }
}
