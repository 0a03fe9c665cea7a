//! Reading a process's identity from `/proc`: whether a pid is alive, and its start time, which
//! together tell a re-adopted service from an unrelated process that reused its pid.

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
