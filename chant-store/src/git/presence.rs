//! Which chant processes of a repository are alive: the evidence that a lock file's writer is gone.
//!
//! A lock file older than the stale-lock age is only provably abandoned when no chant process of
//! the repository could still be writing it. Each process that opens a repository
//! ([`super::SharedRepo::discover`]) leaves a marker `<common dir>/chant/live/<pid>` holding its
//! pid and start time, and removes it when its last handle of the repository is dropped. A marker
//! names a live process when that pid exists (`kill(pid, 0)`) and started at the recorded time, so
//! a marker left by a killed process whose pid was reused names nobody. Markers of dead processes
//! are pruned by the next process that opens the repository. Scanning processes' working
//! directories instead would count the user's shell, an editor or `git` itself.
//!
//! A process that cannot write its marker (a read-only repository) still works: it simply cannot
//! keep another process from reporting a lock as stale, as before markers existed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use nix::errno::Errno;
use nix::unistd::Pid;

use crate::process::identity;

/// The directory of markers, under the repository's common directory.
const DIR: &str = "chant/live";

/// This process's marker in one repository; dropping the last handle removes it.
#[derive(Debug)]
pub(super) struct Presence {
    path: PathBuf,
}

impl Drop for Presence {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The markers this process holds, by common directory: one per repository however many handles
/// open it.
static HELD: Mutex<BTreeMap<PathBuf, Weak<Presence>>> = Mutex::new(BTreeMap::new());

/// Marks this process as alive in the repository whose common directory is `common`, pruning
/// the markers of dead processes; `None` when the marker cannot be written.
pub(super) fn register(common: &Path) -> Option<Arc<Presence>> {
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(presence) = held.get(common).and_then(Weak::upgrade) {
        return Some(presence);
    }
    let dir = common.join(DIR);
    std::fs::create_dir_all(&dir).ok()?;
    prune(&dir);
    let me = std::process::id();
    let started = identity::start_time(i32::try_from(me).ok()?).unwrap_or(0);
    let path = dir.join(me.to_string());
    // Written aside and renamed into place, so a reader never sees half a marker.
    let tmp = dir.join(format!(".{me}.tmp"));
    if std::fs::write(&tmp, format!("{me} {started}\n")).and_then(|()| std::fs::rename(&tmp, &path)).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    let presence = Arc::new(Presence { path });
    held.insert(common.to_owned(), Arc::downgrade(&presence));
    Some(presence)
}

/// The pids of the chant processes of the repository at `common` that are alive, this process
/// excepted, in pid order.
pub(super) fn others_alive(common: &Path) -> Vec<u32> {
    let me = std::process::id();
    markers(&common.join(DIR))
        .into_iter()
        .filter(|(pid, started, _)| *pid != me && alive(*pid, *started))
        .map(|m| m.0)
        .collect()
}

/// Every marker of `dir`: pid, start time, path. A marker that does not parse is skipped.
fn markers(dir: &Path) -> Vec<(u32, u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(u32, u64, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let named: u32 = path.file_name()?.to_str()?.parse().ok()?;
            let text = std::fs::read_to_string(&path).ok()?;
            let mut words = text.split_whitespace();
            let pid: u32 = words.next()?.parse().ok()?;
            let started: u64 = words.next()?.parse().ok()?;
            (pid == named).then_some((pid, started, path))
        })
        .collect();
    found.sort();
    found
}

/// Whether process `pid`, started at `started` (0: unknown), is alive.
fn alive(pid: u32, started: u64) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return false };
    if raw <= 0 {
        return false;
    }
    // EPERM: the pid exists but belongs to another user.
    match nix::sys::signal::kill(Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => {}
        Err(_) => return false,
    }
    match identity::start_time(raw) {
        Some(now) => started == 0 || now == started,
        // A zombie, or gone since the signal check; without `/proc` the signal check decides.
        None => !Path::new("/proc/self").exists(),
    }
}

/// Removes the markers of processes that are gone.
fn prune(dir: &Path) {
    for (pid, started, path) in markers(dir) {
        if !alive(pid, started) {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_names_a_live_process_only_with_its_own_start_time() {
        let me = std::process::id();
        let started = identity::start_time(me as i32).unwrap();
        assert!(alive(me, started));
        assert!(!alive(me, started + 1), "a reused pid has another start time");
        assert!(!alive(0, 0));
        assert!(!alive(u32::MAX, 0));
    }

    #[test]
    fn this_process_is_never_among_the_others() {
        let repo = tempfile::tempdir().unwrap();
        let held = register(repo.path()).unwrap();
        let again = register(repo.path()).unwrap();
        assert!(Arc::ptr_eq(&held, &again), "one marker per repository and process");
        let marker = repo.path().join(DIR).join(std::process::id().to_string());
        assert!(marker.is_file());
        assert_eq!(others_alive(repo.path()), Vec::<u32>::new());
        drop((held, again));
        assert!(!marker.exists(), "the last handle's drop removes the marker");
    }

    #[test]
    fn markers_of_dead_and_recycled_processes_are_pruned_and_name_nobody() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path().join(DIR);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = crate::process::command("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let started = identity::start_time(pid as i32).unwrap();
        std::fs::write(dir.join(pid.to_string()), format!("{pid} {started}\n")).unwrap();
        assert_eq!(others_alive(repo.path()), vec![pid], "a live process with its start time");
        // The same pid with another start time is a recycled pid: nobody.
        std::fs::write(dir.join(pid.to_string()), format!("{pid} {}\n", started + 1)).unwrap();
        // A pid above the kernel's limit never exists; a file that is no marker is skipped.
        std::fs::write(dir.join("4194305"), "4194305 7\n").unwrap();
        std::fs::write(dir.join("junk"), "not a marker").unwrap();
        assert_eq!(others_alive(repo.path()), Vec::<u32>::new());
        let _held = register(repo.path()).unwrap();
        assert!(!dir.join(pid.to_string()).exists() && !dir.join("4194305").exists(), "pruned");
        // A marker of a process that has ended names nobody.
        std::fs::write(dir.join(pid.to_string()), format!("{pid} {started}\n")).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(others_alive(repo.path()), Vec::<u32>::new());
    }
}
