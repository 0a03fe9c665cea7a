//! The `sprite-env` command line of the stand-in.
//!
//! ```text
//! sprite-env services list [--json | --table]
//! sprite-env services create <name> --cmd <c> [--args a,b] [--needs x,y] [--http-port N] (--duration D | --no-stream)
//! sprite-env services delete|start|stop|restart <name>
//! sprite-env services watch
//! sprite-env daemon stop [--stop-services]
//! ```
//!
//! A `${VAR}` in `--cmd` or `--args` is kept as written (in `services.json` and every listing) and
//! expanded when the service is spawned, from this command's environment (`create`, `start`,
//! `restart` send the values of the variables the services name with the request).
//!
//! Exit codes: 0 done, 1 refused or failed (one line on stderr), 2 usage (including a service
//! name outside `[a-z][a-z0-9-]*`, see [`super::check_name`]).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{Client, Request, Response, Service};
use chant_store::error::chain;

/// A `services create` command line that cannot be read.
#[derive(Debug, thiserror::Error)]
enum UsageError {
    /// A flag without its value.
    #[error("{0} needs a value")]
    NoValue(String),
    /// A port that is not one.
    #[error("--http-port {0} is not a port")]
    Port(String),
    /// A duration that is not one.
    #[error("--duration {value}")]
    Duration {
        /// What was given.
        value: String,
        /// Why it is not a duration.
        #[source]
        source: chant_lexicon::duration::ParseError,
    },
    /// A flag `create` does not know.
    #[error("unknown option {0}")]
    Unknown(String),
    /// Both `--duration` and `--no-stream`.
    #[error("--duration and --no-stream exclude each other")]
    Exclusive,
    /// No `--cmd`.
    #[error("create needs --cmd")]
    NoCmd,
    /// A `--needs` name outside the service-name rule.
    #[error("--needs: {0}")]
    Needs(super::InvalidName),
}

const USAGE: &str = "usage: sprite-env services list [--json|--table]
       sprite-env services create <name> --cmd <c> [--args a,b] [--needs x,y] [--http-port N] (--duration D | --no-stream)
       sprite-env services delete|start|stop|restart <name>
       sprite-env services watch
       sprite-env daemon stop [--stop-services]";

/// Runs the command line with `args` (without the program name); returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if words.first() == Some(&"__daemon") {
        return match super::state_dir() {
            Ok(d) => super::daemon::run(&d),
            Err(e) => fail(&chain(&e)),
        };
    }
    if words.as_slice() == [super::identity::IDENTIFY_WORD] {
        // Absolute: the caller may resolve it from another working directory.
        return match super::state_dir().map(|d| std::path::absolute(&d).unwrap_or(d)) {
            Ok(d) => match serde_json::to_string(&super::Identity::of(d)) {
                Ok(line) => {
                    println!("{line}");
                    0
                }
                Err(e) => fail(&chain(&e)),
            },
            Err(e) => fail(&chain(&e)),
        };
    }
    if let ["services", "create" | "delete" | "start" | "stop" | "restart", name, ..] = words.as_slice()
        && let Err(e) = super::check_name(name)
    {
        eprintln!("sprite-env: {e}");
        return 2;
    }
    let client = match (super::state_dir(), std::env::current_exe()) {
        (Ok(d), Ok(exe)) => Client::new(d, exe),
        (Err(e), _) => return fail(&chain(&e)),
        (_, Err(e)) => return fail(&format!("cannot find this program: {e}")),
    };
    match words.as_slice() {
        ["services", "list", rest @ ..] => {
            let table = match rest {
                [] | ["--json"] => false,
                ["--table"] => true,
                _ => return usage(),
            };
            match client.send(&Request::List) {
                Ok(r) => {
                    print_list(&r.services, table);
                    0
                }
                Err(e) => fail(&chain(&e)),
            }
        }
        ["services", "create", name, rest @ ..] => match parse_create(name, rest) {
            Ok((req, stream)) => match client.send(&req) {
                Ok(r) => {
                    if let Some(d) = stream {
                        stream_log(&r, d);
                    } else {
                        print_one(&r);
                    }
                    0
                }
                Err(e) => fail(&chain(&e)),
            },
            Err(e) => {
                eprintln!("sprite-env: {}", chain(&e));
                usage()
            }
        },
        ["services", verb @ ("delete" | "start" | "stop" | "restart"), name] => {
            let name = (*name).to_owned();
            // A start spawns the service and what it needs: the values of every variable the
            // services name, from this command's environment, go with it.
            let values = || match client.send(&Request::List) {
                Ok(r) => values_of(r.services.iter().flat_map(|s| std::iter::once(&s.cmd).chain(&s.args))),
                Err(_) => super::Values::new(),
            };
            let req = match *verb {
                "delete" => Request::Delete { name },
                "start" => Request::Start { name, values: values() },
                "stop" => Request::Stop { name },
                _ => Request::Restart { name, values: values() },
            };
            match client.send(&req) {
                Ok(r) => {
                    print_one(&r);
                    0
                }
                Err(e) => fail(&chain(&e)),
            }
        }
        ["services", "watch"] => match client.send(&Request::List).and_then(|_| client.watch()) {
            Ok(reader) => {
                let mut out = std::io::stdout().lock();
                for line in std::io::BufRead::lines(reader).map_while(Result::ok) {
                    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                        break;
                    }
                }
                0
            }
            Err(e) => fail(&chain(&e)),
        },
        ["daemon", "stop", rest @ ..] => {
            let stop_services = match rest {
                [] => false,
                ["--stop-services"] => true,
                _ => return usage(),
            };
            if !client.dir().join(super::daemon::SOCKET).exists() {
                return 0;
            }
            match client.send(&Request::Shutdown { stop_services }) {
                Ok(_) => 0,
                Err(e) => fail(&chain(&e)),
            }
        }
        _ => usage(),
    }
}

fn fail(message: &str) -> i32 {
    eprintln!("sprite-env: {message}");
    1
}

fn usage() -> i32 {
    eprintln!("{USAGE}");
    2
}

/// Parses `words` as the command line of `services create` does (the fuzz target's entry).
#[cfg(feature = "fuzz")]
pub fn fuzz_args(words: &[&str]) {
    if let [name, rest @ ..] = words {
        let _ = super::check_name(name);
        let _ = parse_create(name, rest);
    }
}

fn parse_create(name: &str, rest: &[&str]) -> Result<(Request, Option<Duration>), UsageError> {
    let (mut cmd, mut args, mut needs, mut port, mut duration, mut no_stream) =
        (None, Vec::new(), Vec::new(), None, None, false);
    let list = |v: &str| v.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect::<Vec<_>>();
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().copied().ok_or_else(|| UsageError::NoValue((*flag).to_owned()));
        match *flag {
            "--cmd" => cmd = Some(value()?.to_owned()),
            "--args" => args = list(value()?),
            "--needs" => needs = list(value()?),
            "--http-port" => {
                let v = value()?;
                port = Some(v.parse::<u16>().map_err(|_| UsageError::Port(v.to_owned()))?);
            }
            "--duration" => {
                let v = value()?;
                let parsed = chant_lexicon::duration::parse(v);
                duration = Some(parsed.map_err(|source| UsageError::Duration { value: v.to_owned(), source })?);
            }
            "--no-stream" => no_stream = true,
            other => return Err(UsageError::Unknown(other.to_owned())),
        }
    }
    if duration.is_some() && no_stream {
        return Err(UsageError::Exclusive);
    }
    if let Some(e) = needs.iter().find_map(|n| super::check_name(n).err()) {
        return Err(UsageError::Needs(e));
    }
    let cmd = cmd.filter(|c| !c.is_empty()).ok_or(UsageError::NoCmd)?;
    let dir = std::env::current_dir().ok().map(|d| d.display().to_string());
    let values = values_of(std::iter::once(&cmd).chain(&args));
    Ok((Request::Create { name: name.to_owned(), cmd, args, needs, http_port: port, dir, values }, duration))
}

/// The values, in this process's environment, of every `${VAR}` that `words` name (an unset
/// one is left out: the daemon then looks in its own environment, and refuses the spawn without).
fn values_of<'a>(words: impl Iterator<Item = &'a String>) -> super::Values {
    let mut values = super::Values::new();
    for var in words.flat_map(|w| super::referenced(w)) {
        if let Ok(v) = std::env::var(&var) {
            values.insert(var, v);
        }
    }
    values
}

fn print_list(services: &[Service], table: bool) {
    let mut out = std::io::stdout().lock();
    if table {
        for s in services {
            let needs = if s.needs.is_empty() { "-".to_owned() } else { s.needs.join(",") };
            let port = s.http_port.map_or_else(|| "-".to_owned(), |p| p.to_string());
            let mut cols = vec![s.name.clone(), s.state.status.as_str().to_owned(), needs, port, s.cmd.clone()];
            cols.extend(s.args.iter().cloned());
            let _ = writeln!(out, "{}", cols.join("\t"));
        }
    } else if let Ok(text) = serde_json::to_string(services) {
        let _ = writeln!(out, "{text}");
    }
}

fn print_one(r: &Response) {
    if let Some(s) = r.services.first() {
        // A closed stdout is not the service's failure: what was done is done.
        let _ = writeln!(std::io::stdout().lock(), "{}\t{}", s.name, s.state.status.as_str());
    }
}

/// Prints what the service writes to its log for `d` after it was started.
fn stream_log(r: &Response, d: Duration) {
    print_one(r);
    let Some(path) = r.log.as_deref().map(PathBuf::from) else { return };
    let mut offset = r.log_offset.unwrap_or(0);
    let deadline = Instant::now() + d;
    let mut out = std::io::stdout().lock();
    while Instant::now() < deadline {
        if let Ok(mut f) = std::fs::File::open(&path)
            && f.seek(SeekFrom::Start(offset)).is_ok()
        {
            let mut buf = Vec::new();
            if let Ok(n) = f.read_to_end(&mut buf) {
                offset += n as u64;
                let _ = out.write_all(&buf);
                let _ = out.flush();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
