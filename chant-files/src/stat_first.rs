//! Stat-first reads: a file whose `lstat` is what it was when its content was last read is not
//! read again; its digest from that read stands.
//!
//! What is compared is the file's device and inode, size, modification time and status change
//! time (nanoseconds). Every write to a file moves its status change time, and so does every
//! change of its metadata; no user can set it (`touch -d` and `utimensat` set the modification
//! time back, and the status change time to now), so an edit that keeps the size and the
//! modification time is still seen. Two edits closer together than the file system's clock
//! tick (a few milliseconds on ext4) could leave all of it as it was: a file changed less than
//! [`RACY`] before a read began is therefore not remembered, and is read again next time (git's
//! "racily clean" entries, by the same reasoning). What stat-first cannot see (the clock set
//! back, a file system whose status change times are not kept) the periodic **full read** does:
//! a root is read whole, every file opened and hashed, when its last full read in this process
//! is older than the env's `files_full_read` (default [`DEFAULT_FULL_READ`]; `0s` reads whole
//! every time).
//!
//! Where it is kept: in the memory of the process, per files root, for the files of the last
//! read and nothing else (a root's entry is replaced by each read; at most [`ROOTS`] roots). A
//! long-running operator ticks from it; a `tick` or `operator --once` process starts with
//! nothing remembered and reads every file whole, as before, and remembers nothing when it said
//! it observes once ([`chant_lexicon::observe::lifetime`]). Nothing is written to disk, so
//! nothing outlives the process that saw the files, and no other process's view is trusted.
//! A document (a file the deep read parses) is always read: the deep read needs its bytes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::confine::FileId;

/// How often a root is read whole when its env does not say (`files_full_read`).
pub const DEFAULT_FULL_READ: Duration = Duration::from_secs(600);

/// A file whose modification or status change time is less than this before the start of a
/// read is not remembered by it.
pub(crate) const RACY: Duration = Duration::from_secs(2);

/// How many roots one process remembers (the oldest read is forgotten first).
pub(crate) const ROOTS: usize = 64;

/// What a file's `lstat` must still say for its remembered digest to stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(id: &FileId) -> Stamp {
        Stamp { dev: id.dev, ino: id.ino, size: id.stat.size, mtime: id.stat.mtime, ctime: id.stat.ctime }
    }
}

/// A root's files as its last read found them, and when it was last read whole.
struct Remembered {
    files: HashMap<String, (Stamp, String)>,
    full_read_at: Instant,
}

/// Every root this process remembers, the most recently read last.
static MEMORY: Mutex<Vec<(PathBuf, Remembered)>> = Mutex::new(Vec::new());

/// One read of a root: what it may take from the last one, and what it remembers for the next.
pub(crate) struct Pass {
    root: PathBuf,
    /// Whether this read is a full read (nothing is taken from the last).
    #[cfg(test)]
    full: bool,
    known: HashMap<String, (Stamp, String)>,
    seen: HashMap<String, (Stamp, String)>,
    /// Files changed at or after this (seconds, nanoseconds since the epoch) are not remembered.
    settled_before: (i64, i64),
    full_read_at: Instant,
    /// This process observes once ([`chant_lexicon::observe::lifetime`]): nothing is remembered.
    forgets: bool,
}

impl Pass {
    /// Starts a read of `root` (its real path) at `now`, a full read when the last full read of
    /// it in this process is `every` or longer ago (or there was none).
    pub(crate) fn begin(root: &Path, every: Duration, now: Instant) -> Pass {
        let last = MEMORY.lock().ok().and_then(|mut memory| {
            let at = memory.iter().position(|(r, _)| r == root)?;
            Some(memory.remove(at).1)
        });
        let wall = SystemTime::now().checked_sub(RACY).unwrap_or(UNIX_EPOCH);
        let since = wall.duration_since(UNIX_EPOCH).unwrap_or_default();
        let settled_before = (i64::try_from(since.as_secs()).unwrap_or(i64::MAX), i64::from(since.subsec_nanos()));
        let (full, known, full_read_at) = match last {
            Some(last) if !every.is_zero() && now.saturating_duration_since(last.full_read_at) < every => {
                (false, last.files, last.full_read_at)
            }
            _ => (true, HashMap::new(), now),
        };
        #[cfg(not(test))]
        let _ = full;
        Pass {
            root: root.to_owned(),
            #[cfg(test)]
            full,
            known,
            seen: HashMap::new(),
            settled_before,
            full_read_at,
            forgets: chant_lexicon::observe::lifetime::observes_once(),
        }
    }

    /// Whether this read is a full read.
    #[cfg(test)]
    pub(crate) fn is_full(&self) -> bool {
        self.full
    }

    /// The digest of `name` from the last read, if its `lstat` (`id`) still says what it said
    /// then (and this is not a full read); it is remembered for the next read too.
    pub(crate) fn known(&mut self, name: &str, id: &FileId) -> Option<String> {
        let (stamp, digest) = self.known.remove(name)?;
        if stamp != Stamp::of(id) {
            return None;
        }
        self.seen.insert(name.to_owned(), (stamp, digest.clone()));
        Some(digest)
    }

    /// Remembers that `name`, read whole with `lstat` `id`, has content digest `digest`, unless
    /// it changed too shortly before this read began to tell a later edit from this one.
    pub(crate) fn remember(&mut self, name: &str, id: &FileId, digest: &str) {
        if self.forgets {
            return;
        }
        let stamp = Stamp::of(id);
        if stamp.mtime >= self.settled_before || stamp.ctime >= self.settled_before {
            return;
        }
        self.seen.insert(name.to_owned(), (stamp, digest.to_owned()));
    }

    /// Ends the read: what it saw is what the next read of the root may take.
    pub(crate) fn end(self) {
        if self.forgets {
            return;
        }
        let Ok(mut memory) = MEMORY.lock() else { return };
        memory.retain(|(root, _)| *root != self.root);
        if memory.len() >= ROOTS {
            memory.remove(0);
        }
        memory.push((self.root, Remembered { files: self.seen, full_read_at: self.full_read_at }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confine::FileStat;

    fn id(ino: u64, size: u64, mtime: i64, ctime: i64) -> FileId {
        FileId {
            dev: 1,
            ino,
            stat: FileStat { size, mtime: (mtime, 0), ctime: (ctime, 0), mode: 0o100644, uid: 0, gid: 0 },
        }
    }

    /// A remembered digest stands while the whole stamp is unchanged, and never in a full read:
    /// an edit that keeps even the status change time (which no user can set back) is what
    /// stat-first cannot see, and the full read, once its interval has passed, finds it.
    #[test]
    fn a_digest_stands_for_an_unchanged_stamp_until_the_next_full_read() {
        let root = PathBuf::from(format!("/nonexistent/stat-first-{}", std::process::id()));
        let every = Duration::from_secs(600);
        let t0 = Instant::now();
        let file = id(7, 80, 1_000, 1_000);

        let mut first = Pass::begin(&root, every, t0);
        assert!(first.is_full(), "nothing remembered: a full read");
        assert_eq!(first.known("a", &file), None);
        first.remember("a", &file, "digest-1");
        first.remember("fresh", &id(8, 1, 1_000, i64::MAX - 1), "digest-2");
        first.end();

        let mut second = Pass::begin(&root, every, t0 + Duration::from_secs(1));
        assert!(!second.is_full());
        assert_eq!(second.known("fresh", &id(8, 1, 1_000, i64::MAX - 1)), None, "changed too recently to keep");
        assert_eq!(second.known("a", &id(7, 80, 1_000, 1_001)), None, "written since: the status change time moved");
        second.end();

        let mut third = Pass::begin(&root, every, t0 + Duration::from_secs(2));
        assert_eq!(third.known("a", &file), None, "a read that missed forgets it until it is read again");
        third.remember("a", &file, "digest-1");
        third.end();
        let mut fourth = Pass::begin(&root, every, t0 + Duration::from_secs(3));
        assert_eq!(fourth.known("a", &id(9, 80, 1_000, 1_000)), None, "another inode");
        fourth.remember("a", &file, "digest-1");
        fourth.end();
        let mut fifth = Pass::begin(&root, every, t0 + Duration::from_secs(4));
        assert_eq!(fifth.known("a", &file).as_deref(), Some("digest-1"), "unchanged: the digest stands");
        fifth.end();

        let mut full = Pass::begin(&root, every, t0 + every);
        assert!(full.is_full(), "the interval has passed: a full read");
        assert_eq!(full.known("a", &file), None, "a full read takes nothing remembered");
        full.end();

        let never = Pass::begin(&root, Duration::ZERO, t0 + every + Duration::from_secs(1));
        assert!(never.is_full(), "`0s`: every read is a full read");
        never.end();
    }

    /// A process that observes once remembers nothing: the next read of the root (were there
    /// one) takes nothing from it.
    #[test]
    fn a_process_that_observes_once_remembers_nothing() {
        let root = PathBuf::from(format!("/nonexistent/stat-first-once-{}", std::process::id()));
        let every = Duration::from_secs(600);
        let t0 = Instant::now();
        let file = id(7, 80, 1_000, 1_000);
        let mut once = Pass::begin(&root, every, t0);
        once.forgets = true;
        once.remember("a", &file, "digest-1");
        assert!(once.seen.is_empty());
        once.end();
        let mut next = Pass::begin(&root, every, t0 + Duration::from_secs(1));
        assert!(next.is_full(), "nothing was remembered, not even the full read's time");
        assert_eq!(next.known("a", &file), None);
        next.end();
    }
}
