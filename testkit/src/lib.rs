//! Test support shared by chant's test suites and its benchmarks, so neither includes the other's
//! files by path: [`postgres`], a throw-away PostgreSQL cluster (one per test process), and
//! [`scratch`], a scratch cargo project that builds chant's macros with the real `cargo`, and
//! [`filesystem`], which says what file system a benchmark's temporary directory is on.
//!
//! Everything here runs only under tests and benchmarks, where a failure is a test failure, so the
//! helpers panic with the reason instead of returning errors.

// Test support: a helper that cannot do its job fails the test that called it, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::disallowed_methods)]

pub mod filesystem;
pub mod golden;
pub mod postgres;
pub mod scratch;

/// The CPU time (user + system) process `pid` (`self` for this one) has used so far, with its
/// reaped children's when `children`, from `/proc/<pid>/stat` (in clock ticks of 10 ms). `None`
/// when the entry cannot be read.
pub fn cpu_time(pid: &str, children: bool) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces): utime, stime, cutime and cstime
    // are the 12th to the 15th of those.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let fields = fields.get(11..if children { 15 } else { 13 })?;
    let ticks: u64 = fields.iter().map(|f| f.parse::<u64>().unwrap_or(0)).sum();
    Some(std::time::Duration::from_millis(ticks * 10))
}
