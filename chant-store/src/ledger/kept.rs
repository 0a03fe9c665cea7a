//! Records kept outside the ledger: a record of something that already happened (a tick that
//! dispatched, a run, an apply) that could not be appended is written to
//! `<git-common-dir>/chant/pending/` instead of being lost, and the next append or sync that
//! succeeds appends it, oldest first.
//!
//! Each kept record is one file holding `{dir, label, line}` (the key directory, the commit
//! label and the record's line), written to a temporary name and renamed into place, so a reader
//! never sees half of one. A writer that appends it first claims it by renaming it to
//! `<name>.<pid>.claimed`; only the claimant appends it, then removes it, or renames it back when
//! the append fails. A claim whose process is gone (killed mid-flush) is taken over. A process
//! killed after its append landed and before it removed the file leaves a record that is appended
//! twice: a duplicate, never a loss.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Where kept records live, under the repository's common git directory.
pub const DIR: &str = "chant/pending";

const SUFFIX: &str = ".json";
const CLAIMED: &str = ".claimed";

/// One kept record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Kept {
    /// The key directory it belongs to.
    pub dir: String,
    /// The label of its commit.
    pub label: String,
    /// The record's line.
    pub line: String,
}

/// The directory kept records of the repository with common git directory `common` live in.
pub(super) fn dir(common: &Path) -> PathBuf {
    common.join(DIR)
}

/// Writes `kept` to a new file of its own; returns its path.
pub(super) fn keep(common: &Path, kept: &Kept) -> std::io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = dir(common);
    std::fs::create_dir_all(&dir)?;
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!("{nanos:024}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let text = serde_json::to_vec(kept).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(format!("{name}{SUFFIX}"));
    // A write that fails (a full disk) leaves no empty or partial temporary file behind.
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| path)
}

/// A kept record claimed by this process, to append.
#[derive(Debug)]
pub(super) struct Claim {
    /// The record.
    pub kept: Kept,
    /// Its name while unclaimed.
    pub path: PathBuf,
    claimed: PathBuf,
}

impl Claim {
    /// The record is on the ledger: forget it.
    pub(super) fn done(self) -> std::io::Result<()> {
        std::fs::remove_file(&self.claimed)
    }

    /// The append failed: leave it for the next writer.
    pub(super) fn release(self) {
        let _ = std::fs::rename(&self.claimed, &self.path);
    }
}

/// Returns the files of kept records waiting in `common`, oldest first, without claiming them.
pub(super) fn waiting(common: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir(common)) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.starts_with('.')))
        .collect();
    out.sort();
    out
}

/// Claims the kept record at `path` (an unclaimed file, or one claimed by a process that is
/// gone); `None` when another live process has it, or it is gone. A file that does not decode is
/// left where it is and reported.
pub(super) fn claim(path: &Path) -> Result<Option<Claim>, ClaimError> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return Ok(None) };
    let base = match name.strip_suffix(CLAIMED) {
        None => name.strip_suffix(SUFFIX).map(|b| (b, None)),
        Some(rest) => rest.rsplit_once('.').and_then(|(file, pid)| {
            let pid: i32 = pid.parse().ok()?;
            file.strip_suffix(SUFFIX).map(|b| (b, Some(pid)))
        }),
    };
    let Some((base, owner)) = base else { return Ok(None) };
    if owner.is_some_and(alive) {
        return Ok(None);
    }
    let unclaimed = path.with_file_name(format!("{base}{SUFFIX}"));
    let claimed = path.with_file_name(format!("{base}{SUFFIX}.{}{CLAIMED}", std::process::id()));
    if std::fs::rename(path, &claimed).is_err() {
        return Ok(None);
    }
    let text = match std::fs::read(&claimed) {
        Ok(text) => text,
        Err(e) => {
            let _ = std::fs::rename(&claimed, &unclaimed);
            return Err(ClaimError::Read { path: unclaimed, source: e });
        }
    };
    match serde_json::from_slice::<Kept>(&text) {
        Ok(kept) => Ok(Some(Claim { kept, path: unclaimed, claimed })),
        Err(e) => {
            let _ = std::fs::rename(&claimed, &unclaimed);
            Err(ClaimError::Foreign { path: unclaimed, source: e })
        }
    }
}

/// Why a kept record could not be taken up.
#[derive(Debug, thiserror::Error)]
pub(super) enum ClaimError {
    /// The claimed file could not be read (it is put back under its name).
    #[error("cannot read the kept record {}: {source}", path.display())]
    Read {
        /// The kept record's file.
        path: PathBuf,
        /// The read's failure.
        #[source]
        source: std::io::Error,
    },
    /// The file does not decode as a record chant kept (it is put back under its name).
    #[error("the kept record {} is not one chant wrote ({source}); move it away once you have looked at it", path.display())]
    Foreign {
        /// The kept record's file.
        path: PathBuf,
        /// The decoding failure.
        #[source]
        source: serde_json::Error,
    },
}

/// Whether process `pid` exists.
fn alive(pid: i32) -> bool {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    !matches!(kill(Pid::from_raw(pid), None), Err(nix::errno::Errno::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(n: u32) -> Kept {
        Kept { dir: "converge/op".into(), label: "tick op".into(), line: format!("{{\"n\":{n}}}") }
    }

    #[test]
    fn kept_records_are_claimed_once_oldest_first_and_released_on_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (keep(tmp.path(), &kept(1)).unwrap(), keep(tmp.path(), &kept(2)).unwrap());
        assert_eq!(waiting(tmp.path()), [a.clone(), b.clone()]);
        let first = claim(&a).unwrap().unwrap();
        assert_eq!(first.kept, kept(1));
        assert!(claim(&a).unwrap().is_none(), "claimed by this process: gone from its name");
        // A claimed file of a live process (ours) is not claimed again.
        let claimed = waiting(tmp.path()).into_iter().find(|p| p.to_string_lossy().ends_with(CLAIMED)).unwrap();
        assert!(claim(&claimed).unwrap().is_none());
        first.release();
        assert_eq!(waiting(tmp.path()), [a.clone(), b.clone()]);
        claim(&a).unwrap().unwrap().done().unwrap();
        assert_eq!(waiting(tmp.path()), [b]);
    }

    #[test]
    fn a_claim_of_a_dead_process_is_taken_over_and_a_foreign_file_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let a = keep(tmp.path(), &kept(1)).unwrap();
        // No process has pid 0x7fff_fff0 on Linux (pid_max is at most 2^22).
        let orphan = a.with_file_name(format!("{}.{}{CLAIMED}", a.file_name().unwrap().to_str().unwrap(), 0x7fff_fff0));
        std::fs::rename(&a, &orphan).unwrap();
        let taken = claim(&orphan).unwrap().unwrap();
        assert_eq!((taken.kept.clone(), taken.path.clone()), (kept(1), a));
        taken.done().unwrap();
        let junk = dir(tmp.path()).join("junk.json");
        std::fs::write(&junk, "{").unwrap();
        assert!(claim(&junk).unwrap_err().to_string().contains("not one chant wrote"));
        assert!(junk.exists(), "left where it is");
    }
}
