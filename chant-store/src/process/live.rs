//! The process groups this process is waiting on right now: every child [`super::capture`]
//! started (each in its own group, its leader unreaped while it is listed, so the id cannot
//! name another group). A process that must end while a child runs stops them first
//! ([`stop_all`]): an operator that stops mid-tick, after its grace period, stops the dispatched
//! run; a dispatched run whose tick is gone (or that is told to stop) stops the shell step it is
//! waiting on. Without it, a step in a group of its own outlives both.

use std::collections::BTreeSet;
use std::process::Child;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Group, Stopped};

/// The listed groups, and whether this process is ending (then nothing new is started).
static LIVE: Mutex<(BTreeSet<i32>, bool)> = Mutex::new((BTreeSet::new(), false));

/// A group listed while this value lives.
#[derive(Debug)]
pub(super) struct Tracked(i32);

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).0.remove(&self.0);
    }
}

/// Spawns a child that leads its own group (`spawn`) and lists the group until the returned
/// value is dropped (before the leader is reaped). Refused once this process is ending
/// ([`end_all`]), so no child starts after the sweep.
pub(super) fn spawn_tracked(spawn: impl FnOnce() -> std::io::Result<Child>) -> std::io::Result<(Child, Tracked)> {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    if live.1 {
        return Err(std::io::Error::other("this process is stopping: no new child starts"));
    }
    let child = spawn()?;
    let id = i32::try_from(child.id()).unwrap_or(i32::MAX);
    live.0.insert(id);
    Ok((child, Tracked(id)))
}

/// Stops every listed group as [`stop_all`] does, and refuses every later spawn through
/// [`spawn_tracked`]: for a process about to exit.
pub(super) fn end_all(grace: Duration) -> usize {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
    stop_all(grace)
}

/// Sends SIGTERM to every listed group, refuses every later spawn through [`super::capture`],
/// and returns how many groups there were, without waiting for them: for a process that exits
/// right after, so that nothing it was waiting on outlives it (a dispatched run stops its own
/// step on SIGTERM), while its other threads get no time to act on those children's ends.
pub fn terminate_all() -> usize {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.1 = true;
    for &id in &live.0 {
        Group::with_id(id).signal(nix::sys::signal::Signal::SIGTERM);
    }
    live.0.len()
}

/// Stops every listed group ([`Group::stop`]: SIGTERM, `grace`, SIGKILL), all at once, and
/// returns how many there were. Each is stopped from a thread of its own, so the graces run
/// side by side.
pub fn stop_all(grace: Duration) -> usize {
    let groups: Vec<i32> = LIVE.lock().unwrap_or_else(PoisonError::into_inner).0.iter().copied().collect();
    let stopping: Vec<_> = groups
        .iter()
        .map(|&id| {
            std::thread::spawn(move || {
                let group = Group::with_id(id);
                group.stop(grace, |deadline| gone_by(group, deadline))
            })
        })
        .collect();
    for handle in stopping {
        let _ = handle.join().unwrap_or(Stopped::Survived);
    }
    groups.len()
}

/// Waits until no process of `group` is left (true) or `deadline` passes (false).
fn gone_by(group: Group, deadline: Instant) -> bool {
    loop {
        if !group.alive() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

// No unit test here: stopping every listed group would stop the captures of the other tests of
// the same binary. The e2e suite covers it with real processes (`operator::a_stop_mid_tick_...`:
// a dispatched run whose operator stopped ends its shell step's group before it exits).
