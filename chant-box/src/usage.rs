//! Resource checks of a box service (Monit's `if totalmem > 200 MB`, `if cpu > 80%`, `if
//! timestamp > 5 minutes`): what its process tree uses, read from `/proc`, against the limits its
//! box block declares (`checks`).
//!
//! ```json
//! { "name": "app", "cmd": "...", "checks": { "memMb": 200, "cpuPercent": 80,
//!   "file": { "path": "var/app.heartbeat", "maxAge": "5m" } } }
//! ```
//!
//! The tree is the service's process (the supervisor lists its pid) and every descendant of it
//! (by `PPid` in `/proc/<pid>/stat`). Memory is the sum of the tree's resident sets (`VmRSS`),
//! in MB of 2^20 bytes; CPU is the share of one core the tree used between two readings
//! [`Settings::cpu_sample`](crate::Settings::cpu_sample) apart (`utime + stime`, in the kernel's
//! `USER_HZ` of 100 ticks a second, which Linux fixes for `/proc` on every architecture), so
//! `200` is two cores busy; a file's age is the seconds since it was last modified (its path is
//! relative to the project root). A reading that fails (no pid listed, the process gone, `/proc`
//! unreadable, the file missing) is an error, and the observer then calls the service `unknown`
//! with the reason: unknown never remediates. A reading over its limit makes the service
//! `drifted`, with the reading and the limit in its detail, so a rule such as
//! `eq(status, "drifted") => run("restart-service")` restarts it; the readings are also the
//! resource symptom's `mem_mb`, `cpu_percent` and `file_age_secs`, for rules of their own.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::{Map, Value};

/// The ticks a second of the CPU times in `/proc/<pid>/stat` (`USER_HZ`).
const USER_HZ: u64 = 100;

/// The limits a service's box block declares (`checks`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Checks {
    /// The most memory the process tree may hold, in MB.
    #[serde(default)]
    pub mem_mb: Option<u64>,
    /// The most CPU the process tree may use, in percent of one core.
    #[serde(default)]
    pub cpu_percent: Option<u64>,
    /// A file the service keeps fresh, and how old it may grow.
    #[serde(default)]
    pub file: Option<FileCheck>,
}

/// A file whose modification time says the service is alive.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileCheck {
    /// Its path, relative to the project root (or absolute).
    pub path: String,
    /// How old it may grow (a strict duration, `5m`).
    pub max_age: String,
}

impl Checks {
    /// Checks the declared values: a limit of 0 and a file age that does not parse are refused.
    ///
    /// # Errors
    ///
    /// What is wrong, in words, for the box block's error.
    pub fn validate(&self, service: &str) -> Result<(), String> {
        if self.mem_mb == Some(0) || self.cpu_percent == Some(0) {
            return Err(format!("service {service}'s checks: a limit of 0 is always exceeded; give a positive limit"));
        }
        if self.mem_mb.is_none() && self.cpu_percent.is_none() && self.file.is_none() {
            return Err(format!("service {service}'s checks name no limit; give memMb, cpuPercent or file"));
        }
        if let Some(f) = &self.file {
            if f.path.trim().is_empty() {
                return Err(format!("service {service}'s checks: file.path is empty"));
            }
            chant_lexicon::duration::parse(&f.max_age)
                .map_err(|e| format!("service {service}'s checks: file.maxAge: {e}"))?;
        }
        Ok(())
    }
}

/// The readings of one service, as the resource symptom carries them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readings {
    /// The tree's resident memory, in MB.
    pub mem_mb: Option<u64>,
    /// The tree's CPU use between the two readings, in percent of one core.
    pub cpu_percent: Option<u64>,
    /// The file's age, in seconds.
    pub file_age_secs: Option<u64>,
}

impl Readings {
    /// `{memMb, cpuPercent, fileAgeSecs}`, the ones read.
    pub fn to_json(self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<u64>| {
            if let Some(v) = v {
                m.insert(k.to_owned(), Value::from(v));
            }
        };
        put("memMb", self.mem_mb);
        put("cpuPercent", self.cpu_percent);
        put("fileAgeSecs", self.file_age_secs);
        Value::Object(m)
    }
}

/// One reading of a process tree: its resident memory and CPU time so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Resident memory, in kB.
    pub rss_kb: u64,
    /// `utime + stime` of every process, in `USER_HZ` ticks.
    pub cpu_ticks: u64,
    /// How many processes the tree holds.
    pub processes: usize,
}

/// Reads the tree of `pid` once.
///
/// # Errors
///
/// Why it could not be read: the process is gone, or `/proc` is unreadable.
pub fn sample(pid: i64) -> Result<Sample, String> {
    let stats = all_stats()?;
    if !stats.contains_key(&pid) {
        return Err(format!("process {pid} is not running"));
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(stats.iter().filter(|(_, s)| s.ppid == parent).map(|(p, _)| *p));
        i += 1;
    }
    let mut out = Sample { rss_kb: 0, cpu_ticks: 0, processes: tree.len() };
    for p in &tree {
        if let Some(s) = stats.get(p) {
            out.cpu_ticks += s.cpu_ticks;
        }
        // A process that ended between the two reads holds nothing.
        out.rss_kb += rss_kb(*p).unwrap_or(0);
    }
    Ok(out)
}

/// The percent of one core a tree used between two samples `elapsed` apart.
pub fn cpu_percent(before: Sample, after: Sample, elapsed: Duration) -> u64 {
    let ticks = after.cpu_ticks.saturating_sub(before.cpu_ticks);
    let millis = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX).max(1);
    // ticks / USER_HZ seconds of CPU over millis / 1000 seconds, in percent.
    ticks.saturating_mul(100_000) / (USER_HZ * millis)
}

/// Megabytes (2^20 bytes) of `kb` kilobytes, rounded down.
pub fn mb(kb: u64) -> u64 {
    kb / 1024
}

/// The age of the file at `path` (relative paths under `root`), in whole seconds.
///
/// # Errors
///
/// Why it could not be read (missing, unreadable), in words.
pub fn file_age(root: &Path, path: &str) -> Result<u64, String> {
    let full = root.join(path);
    let modified = std::fs::metadata(&full)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{} could not be read: {e}", full.display()))?;
    Ok(SystemTime::now().duration_since(modified).map(|d| d.as_secs()).unwrap_or(0))
}

struct Stat {
    ppid: i64,
    cpu_ticks: u64,
}

/// Every process's parent and CPU time, from `/proc/<pid>/stat`.
fn all_stats() -> Result<BTreeMap<i64, Stat>, String> {
    let dir = std::fs::read_dir("/proc").map_err(|e| format!("/proc could not be read: {e}"))?;
    let mut out = BTreeMap::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i64>().ok()) else { continue };
        // A process may end while the directory is read: it is simply not in the tree.
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        if let Some(stat) = parse_stat(&text) {
            out.insert(pid, stat);
        }
    }
    Ok(out)
}

/// Reads `ppid` (field 4) and `utime + stime` (fields 14 and 15) of a stat line; the command
/// (field 2) may hold spaces and parentheses, so fields are counted after its last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (the state).
    let ppid = fields.get(1)?.parse().ok()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Stat { ppid, cpu_ticks: utime + stime })
}

/// `VmRSS` of a process, in kB (absent for a zombie).
fn rss_kb(pid: i64) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_reads_past_a_command_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) app) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.ppid, s.cpu_ticks), (17, 300));
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn this_process_tree_is_read_and_cpu_is_a_share_of_one_core() {
        let me = i64::from(std::process::id());
        let s = sample(me).unwrap();
        assert!(s.rss_kb > 0 && s.processes >= 1, "{s:?}");
        let before = Sample { rss_kb: 0, cpu_ticks: 100, processes: 1 };
        let after = Sample { cpu_ticks: 150, ..before };
        assert_eq!(cpu_percent(before, after, Duration::from_secs(1)), 50);
        assert_eq!(cpu_percent(before, after, Duration::from_millis(250)), 200);
        assert!(sample(i64::from(i32::MAX)).unwrap_err().contains("is not running"));
    }

    #[test]
    fn declared_checks_are_validated() {
        let c: Checks = serde_json::from_str(r#"{"memMb": 200, "file": {"path": "hb", "maxAge": "5m"}}"#).unwrap();
        assert_eq!(c.validate("app"), Ok(()));
        let zero: Checks = serde_json::from_str(r#"{"cpuPercent": 0}"#).unwrap();
        assert!(zero.validate("app").unwrap_err().contains("a limit of 0"));
        let bad: Checks = serde_json::from_str(r#"{"file": {"path": "hb", "maxAge": "5 min"}}"#).unwrap();
        assert!(bad.validate("app").unwrap_err().contains("file.maxAge"));
        assert!(serde_json::from_str::<Checks>(r#"{"memMB": 1}"#).is_err(), "unknown keys are refused");
        let none: Checks = serde_json::from_str("{}").unwrap();
        assert!(none.validate("app").unwrap_err().contains("name no limit"));
        let r = Readings { mem_mb: Some(3), cpu_percent: None, file_age_secs: Some(9) };
        assert_eq!(r.to_json(), serde_json::json!({"memMb": 3, "fileAgeSecs": 9}));
    }
}
