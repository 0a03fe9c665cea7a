//! A process's identity: its pid and its start time (read from `/proc`), which together tell a
//! live process from an unrelated one that reused its pid (a re-adopted service, a chant process
//! named by a liveness marker).

/// The state letter and start time (clock ticks since boot) of `pid`, when it exists.
fn stat(pid: i32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// The start time (clock ticks since boot) of a live (not zombie) `pid`; `None` when there is no
/// such process or `/proc` cannot say.
pub fn start_time(pid: i32) -> Option<u64> {
    stat(pid).filter(|(s, _)| *s != 'Z' && *s != 'X').map(|(_, t)| t)
}

/// Whether `pid` is alive (not a zombie) and started at `started`: a pid reused by another
/// process has another start time.
pub fn same_process(pid: i32, started: u64) -> bool {
    start_time(pid) == Some(started)
}
