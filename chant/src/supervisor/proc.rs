//! Reading a process's identity from `/proc`: whether a pid is alive, and its start time, which
//! together tell a re-adopted service from an unrelated process that reused its pid.

use nix::errno::Errno;
use nix::sys::signal::killpg;
use nix::unistd::Pid;

/// The state letter and start time (clock ticks since boot) of `pid`, when it exists.
pub(crate) fn stat(pid: i32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// The start time of a live (not zombie) `pid`.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    stat(pid).filter(|(s, _)| *s != 'Z' && *s != 'X').map(|(_, t)| t)
}

/// Whether `pid` is alive and started at `started`.
pub(crate) fn same_process(pid: i32, started: u64) -> bool {
    start_time(pid) == Some(started)
}

/// Whether any process of group `pgid` is left.
pub(crate) fn group_alive(pgid: i32) -> bool {
    !matches!(killpg(Pid::from_raw(pgid), None), Err(Errno::ESRCH))
}
