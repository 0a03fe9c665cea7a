//! The local append: one record becomes one commit on the current tip of the branch, written
//! with compare-and-swap on the branch ref. A writer that loses the race re-reads the new tip and
//! rebuilds its commit on it, so concurrent writers to different shards both land and writers to
//! the same shard never overwrite each other. Each commit names its key directory in a
//! `Chant-Shard:` trailer, which is what lets a diverged clone re-append its records elsewhere.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jiff::Timestamp;

use crate::backoff::{Backoff, GaveUp};
use crate::git::{self, ObjectId, Repo};

use super::{BRANCH, Error, shard};

/// A `<ref>.lock` older than this is stale (DESIGN.md section 8); a younger one is a lost race.
pub const STALE_LOCK_AGE: Duration = Duration::from_secs(10);

/// The longest one append waits on a lock file that stays in the way, whatever its age and
/// whoever may hold it: a git ref lock is held for milliseconds, so a lock that outlives this is
/// reported ([`Error::Locked`], naming the file and its `rm`) rather than waited on.
pub const LOCK_WAIT: Duration = Duration::from_secs(15);

/// The trailer naming the key directory a commit appended to.
const SHARD_TRAILER: &str = "Chant-Shard: ";
/// The trailer naming the commit a re-appended record was first written in.
const ORIGIN_TRAILER: &str = "Chant-Origin: ";
/// The trailer that makes every parentless commit unique.
const ROOT_TRAILER: &str = "Chant-Root: ";

/// A record written locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    /// The commit that holds it.
    pub commit: ObjectId,
    /// The shard file it is in.
    pub path: String,
    /// Its sequence number within its key.
    pub seq: u64,
}

/// How many lost races one compare-and-swap on the branch tolerates before giving up: generous,
/// and without waiting, since every lost race means another writer made progress.
pub(super) const RACES: Backoff = Backoff::immediate(10_000);

/// Appends `line` to key directory `dir` on the local branch in a commit dated `at`, written
/// `by`. `origin` is set when re-appending a record first written in another commit.
pub(super) fn append_local(
    repo: &Repo,
    dir: &str,
    label: &str,
    line: &str,
    origin: Option<ObjectId>,
    at: Timestamp,
    by: &git::Authorship,
) -> Result<Written, Error> {
    cas_until_landed(repo, BRANCH, || {
        let tip = repo.read_ref(BRANCH)?;
        let built = build(repo, tip, dir, label, line, origin, at, by)?;
        Ok(Next::Move { new: built.commit, expected: tip, value: built })
    })
}

/// What the next attempt of [`cas_until_landed`] does.
pub(super) enum Next<T> {
    /// Move the ref from `expected` to `new`, then return `value`.
    Move {
        /// The new value.
        new: ObjectId,
        /// The value it was built on.
        expected: Option<ObjectId>,
        /// What to return once it moved.
        value: T,
    },
    /// Leave the ref alone and return this.
    Done(T),
}

/// Builds the next value of ref `name` with `next` and moves the ref by compare-and-swap,
/// building again on every lost race (the ref moved, or a young lock was in the way) under
/// [`RACES`]. A stale lock and too many lost races are errors.
pub(super) fn cas_until_landed<T>(
    repo: &Repo,
    name: &str,
    mut next: impl FnMut() -> Result<Next<T>, Error>,
) -> Result<T, Error> {
    let mut locked_since: Option<Instant> = None;
    let landed = RACES.retry(|_| {
        let (new, expected, value) = match next() {
            Ok(Next::Move { new, expected, value }) => (new, expected, value),
            Ok(Next::Done(value)) => return ControlFlow::Break(Ok(value)),
            Err(err) => return ControlFlow::Break(Err(err)),
        };
        match repo.update_ref(name, new, expected, "chant: ledger append") {
            Ok(()) => ControlFlow::Break(Ok(value)),
            Err(git::Error::RefLocked { lock_path, age: Some(age), .. }) if repo.lock_is_stale(age, STALE_LOCK_AGE) => {
                ControlFlow::Break(Err(Error::StaleLock { reference: name.to_owned(), path: lock_path, age }))
            }
            Err(git::Error::RefLocked { lock_path, age, .. }) => {
                // However it is attributed (a live chant process may be its writer, or only the
                // parent of this one), a lock in the way is waited on for LOCK_WAIT at most.
                let since = *locked_since.get_or_insert_with(Instant::now);
                if since.elapsed() < LOCK_WAIT {
                    return ControlFlow::Continue(());
                }
                ControlFlow::Break(Err(Error::Locked(Box::new(super::LockWait {
                    reference: name.to_owned(),
                    path: lock_path,
                    age: age.unwrap_or_default(),
                    waited: since.elapsed(),
                    alive: repo.other_processes_alive(),
                }))))
            }
            Err(git::Error::RefConflict { .. }) => ControlFlow::Continue(()),
            Err(other) => ControlFlow::Break(Err(other.into())),
        }
    });
    match landed {
        Ok(result) => result,
        Err(GaveUp { attempts, .. }) => Err(Error::Contended { reference: name.to_owned(), attempts }),
    }
}

/// Writes the blob, tree and commit (dated `at`, written `by`) that append `line` to `dir` on
/// top of `tip`, without moving any ref.
#[expect(clippy::too_many_arguments, reason = "each is one part of the commit; a struct would only rename them")]
pub(super) fn build(
    repo: &Repo,
    tip: Option<ObjectId>,
    dir: &str,
    label: &str,
    line: &str,
    origin: Option<ObjectId>,
    at: Timestamp,
    by: &git::Authorship,
) -> Result<Written, Error> {
    let root = tip.map(|tip| repo.commit_info(tip)).transpose()?.map(|info| info.tree);
    let slot = shard::next_slot(shard::newest(repo, root, dir)?);
    let path = shard::shard_path(dir, slot.shard);
    // The shard blob, the trees along its path and the commit: one pack, two files.
    repo.in_one_pack(|| {
        let blob = repo.write_blob(&shard::with_line(slot.before, line))?;
        let tree = repo.edit_tree(root, &[(path.clone(), blob)])?;
        let commit = write_commit(repo, tip, tree, label, dir, origin, at, by)?;
        Ok(Written { commit, path: path.clone(), seq: slot.seq })
    })
}

/// Writes the commit of an append of `label` to `dir` with root `tree` on top of `tip`.
#[expect(clippy::too_many_arguments, reason = "each is one part of the commit; a struct would only rename them")]
fn write_commit(
    repo: &Repo,
    tip: Option<ObjectId>,
    tree: ObjectId,
    label: &str,
    dir: &str,
    origin: Option<ObjectId>,
    at: Timestamp,
    by: &git::Authorship,
) -> Result<ObjectId, Error> {
    let mut message = format!("chant: {label}\n\n{SHARD_TRAILER}{dir}\n");
    if let Some(origin) = origin {
        message.push_str(&format!("{ORIGIN_TRAILER}{origin}\n"));
    }
    if tip.is_none() {
        // A ref update that expects no ref accepts a ref that already holds the very same commit,
        // so two writers of byte-identical first records must not produce the same commit.
        message.push_str(&format!("{ROOT_TRAILER}{}\n", unique_token()));
    }
    let parents: Vec<ObjectId> = tip.into_iter().collect();
    Ok(repo.write_commit_by(tree, &parents, &message, at, by)?)
}

/// What a ledger commit says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Appended {
    /// The key directory it appended to; `None` for a commit chant did not write.
    pub dir: Option<String>,
    /// The subject line without its `chant: ` prefix.
    pub subject: String,
    /// The commit the record was first written in (the commit itself unless re-appended).
    pub origin: ObjectId,
}

/// Reads the trailers of commit `id`.
pub(super) fn describe(repo: &Repo, id: ObjectId) -> Result<Appended, Error> {
    let message = repo.commit_info(id)?.message;
    let trailer = |prefix: &str| message.lines().find_map(|l| l.strip_prefix(prefix)).map(str::trim).map(str::to_owned);
    let origin = trailer(ORIGIN_TRAILER).and_then(|hex| ObjectId::from_hex(hex.as_bytes()).ok()).unwrap_or(id);
    let first = message.lines().next().unwrap_or_default();
    let subject = first.strip_prefix("chant: ").unwrap_or(first).to_owned();
    Ok(Appended { dir: trailer(SHARD_TRAILER), subject, origin })
}

/// The record commit `id` appended to `dir`: the last line of that key's newest shard.
pub(super) fn appended_line(repo: &Repo, id: ObjectId, dir: &str) -> Result<Option<String>, Error> {
    let root = repo.commit_info(id)?.tree;
    let newest = shard::newest(repo, Some(root), dir)?;
    Ok(newest.and_then(|shard| shard.lines().last().map(|line| line.to_string())))
}

/// A token no other writer produces: process id, wall-clock nanoseconds and a process counter.
fn unique_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}
