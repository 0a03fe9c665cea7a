//! The one group-kill: a child chant starts in its own process group is stopped with everything
//! it started, SIGTERM first, SIGKILL after a grace period.

use std::process::Child;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long [`Group::stop`] waits for a group to end after SIGKILL before giving up on it.
pub const KILL_WAIT: Duration = Duration::from_secs(10);

/// A process group, named by its leader's pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    id: Pid,
    /// The leader is a child of this process that has not been reaped, so the group's id cannot
    /// be given to another group while this value is used.
    pinned: bool,
}

/// How [`Group::stop`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The group ended within the grace period after SIGTERM.
    Terminated,
    /// The group ended after SIGKILL.
    Killed,
    /// The group was still there [`KILL_WAIT`] after SIGKILL.
    Survived,
}

impl Group {
    /// The group led by `child`, a child started with [`super::Command::own_group`] that the
    /// caller reaps only after it is done with the group.
    pub fn led_by(child: &Child) -> Group {
        Group { id: Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX)), pinned: true }
    }

    /// The group `id`, whose leader this process may not be the parent of (a re-adopted
    /// service): its members are signalled only while [`Group::alive`] says one is left.
    pub fn with_id(id: i32) -> Group {
        Group { id: Pid::from_raw(id), pinned: false }
    }

    /// Returns the group's id.
    pub fn id(&self) -> i32 {
        self.id.as_raw()
    }

    /// Returns whether any live process of the group is left. Zombies do not count: an orphan
    /// that died waits for init to reap it, which may take a while.
    pub fn alive(&self) -> bool {
        if matches!(killpg(self.id, None), Err(Errno::ESRCH)) {
            return false;
        }
        // Something answers to the group id: find a member that is not a zombie.
        let Ok(entries) = std::fs::read_dir("/proc") else { return true };
        entries.filter_map(Result::ok).any(|entry| {
            let is_pid = entry.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
            is_pid
                && std::fs::read_to_string(entry.path().join("stat"))
                    .ok()
                    .and_then(|stat| live_member_of(&stat))
                    .is_some_and(|pgrp| pgrp == self.id.as_raw())
        })
    }

    /// Sends `signal` to every process of the group; a group that is gone is not an error.
    pub fn signal(&self, signal: Signal) {
        // ESRCH (nothing left) is the only failure for a group id of ours, and means done.
        let _ = killpg(self.id, signal);
    }

    /// Stops the group: SIGTERM, up to `grace` for `ended` to report the end, then SIGKILL and
    /// up to [`KILL_WAIT`] more. `ended(deadline)` blocks until the group is over or `deadline`
    /// passes, and says which; it defines "over" (a reaped leader and closed pipes, or no
    /// member left). A pinned group is also swept with SIGKILL after it ended on SIGTERM, so a
    /// member that ignored SIGTERM does not outlive it.
    pub fn stop(&self, grace: Duration, mut ended: impl FnMut(Instant) -> bool) -> Stopped {
        self.signal(Signal::SIGTERM);
        if ended(Instant::now() + grace) {
            if self.pinned {
                self.signal(Signal::SIGKILL);
            }
            return Stopped::Terminated;
        }
        self.signal(Signal::SIGKILL);
        if ended(Instant::now() + KILL_WAIT) { Stopped::Killed } else { Stopped::Survived }
    }
}

/// The process group of a `/proc/<pid>/stat` line, unless the process is a zombie (or dead).
fn live_member_of(stat: &str) -> Option<i32> {
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    (state != "Z" && state != "X").then_some(pgrp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::command;

    /// Waits (bounded) until no process of `group` is left.
    fn gone(group: Group) -> impl FnMut(Instant) -> bool {
        move |deadline| loop {
            if !group.alive() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts `script` in its own group and waits for its first line, so its traps are set.
    fn started(script: &str) -> (Group, std::thread::JoinHandle<std::process::ExitStatus>) {
        use std::io::BufRead;
        let mut child =
            command("/bin/sh").args(["-c", script]).own_group().stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n");
        let group = Group::led_by(&child);
        // Reaped on a thread of its own, as the supervisor's reaper does, so the group empties.
        (group, std::thread::spawn(move || child.wait().unwrap()))
    }

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace_period() {
        let (group, reaper) = started("trap '' TERM; sleep 30 & echo ready; wait");
        let stopped = Group::with_id(group.id()).stop(Duration::from_millis(200), gone(group));
        assert_eq!(stopped, Stopped::Killed);
        assert!(!group.alive());
        assert!(!reaper.join().unwrap().success());
    }

    #[test]
    fn a_group_that_honours_sigterm_is_terminated_with_its_background_child() {
        let (group, reaper) = started("sleep 30 & echo ready; wait");
        let stopped = Group::with_id(group.id()).stop(KILL_WAIT, gone(group));
        assert_eq!(stopped, Stopped::Terminated);
        assert!(!group.alive());
        assert!(!reaper.join().unwrap().success());
    }

    #[test]
    fn a_stat_line_names_its_group_unless_it_is_a_zombie() {
        assert_eq!(live_member_of("42 (a (b) c) S 1 42 42 0 -1"), Some(42));
        assert_eq!(live_member_of("43 (sleep) Z 1 42 42 0 -1"), None);
        assert_eq!(live_member_of("garbage"), None);
    }
}
