//! A workspace's operator: one child operator per project binary, run together.
//!
//! Each child's stdout and stderr lines are printed with the member's name in brackets in front
//! (`[box] operator: converge@box ticked=1 status=in-sync`), SIGINT and SIGTERM are forwarded to every
//! child (each then stops cleanly and releases its leases), and the fan-out exits when all have
//! stopped, with the highest exit code among them (1 for a child killed by a signal).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::ProjectBin;
use crate::cli::{CommandError, Exit};

/// Runs `<bin> <args>` for every binary and waits for all of them.
pub(super) fn run(bins: &[ProjectBin], args: &[OsString]) -> Result<Exit, CommandError> {
    // Catch the stop signals before any child exists (a handler feeding a pipe, not a blocked
    // mask, which the children would inherit); one thread reads them and forwards each to every
    // child. Children start with an empty signal mask (`crate::process`).
    let mut signals = Signals::new([SIGINT, SIGTERM])
        .map_err(|e| CommandError::failed_with("cannot catch the stop signals to forward them", e))?;
    let mut children: Vec<(String, Child)> = Vec::new();
    for b in bins {
        let spawned = crate::process::command(&b.path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        match spawned {
            Ok(c) => children.push((b.label().to_owned(), c)),
            Err(e) => {
                stop_all(&children, Signal::SIGTERM);
                for (_, c) in &mut children {
                    let _ = c.wait();
                }
                return Err(CommandError::failed_with(
                    format!("cannot start the operator of {} ({})", b.label(), b.path.display()),
                    e,
                ));
            }
        }
    }
    let pids: Vec<Pid> = children.iter().filter_map(|(_, c)| i32::try_from(c.id()).ok().map(Pid::from_raw)).collect();
    std::thread::spawn(move || {
        for caught in signals.forever() {
            let signal = if caught == SIGINT { Signal::SIGINT } else { Signal::SIGTERM };
            for pid in &pids {
                let _ = kill(*pid, signal);
            }
        }
    });
    let mut pumps = Vec::new();
    for (label, child) in &mut children {
        if let Some(out) = child.stdout.take() {
            pumps.push(pump(label.clone(), out, false));
        }
        if let Some(err) = child.stderr.take() {
            pumps.push(pump(label.clone(), err, true));
        }
    }
    let mut worst = 0u8;
    for (label, child) in &mut children {
        let code = match child.wait() {
            Ok(status) => status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1)),
            Err(e) => {
                eprintln!("error: cannot wait for the operator of {label}: {e}");
                1
            }
        };
        worst = worst.max(code);
    }
    super::drain(pumps);
    Ok(match worst {
        0 => Exit::Done,
        2 => Exit::Usage,
        3 => Exit::Gated,
        _ => Exit::Failed,
    })
}

fn stop_all(children: &[(String, Child)], signal: Signal) {
    for (_, c) in children {
        if let Ok(pid) = i32::try_from(c.id()) {
            let _ = kill(Pid::from_raw(pid), signal);
        }
    }
}

/// Copies `from` line by line to stdout (or stderr), each line prefixed with `[label] `.
fn pump(label: String, from: impl Read + Send + 'static, to_stderr: bool) -> super::Reader {
    super::reader(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            let text = format!("[{label}] {line}\n");
            let written = if to_stderr {
                std::io::stderr().lock().write_all(text.as_bytes())
            } else {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|()| out.flush())
            };
            if written.is_err() {
                break;
            }
        }
    })
}
