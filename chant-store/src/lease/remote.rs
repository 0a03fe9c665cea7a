//! The remote half of the lease: fetching the remote's lease ref into its `lease-remote` copy and
//! pushing a lease (or its deletion) with `--force-with-lease`, so the remote arbitrates between
//! machines. Every git child goes through [`crate::git::cmd`].

use std::ops::ControlFlow;
use std::time::Duration;

use crate::backoff::{Backoff, Growth, Limit};
use crate::git::cmd::{Fetched, Pushed};
use crate::git::porcelain::PushRefusal;
use crate::git::{ObjectId, Repo};

use super::{Error, LeaseKey, LeaseStore, Result};

/// How a push blocked by a lock on the remote is retried before the lock is reported (the
/// per-op push and a batch's push alike): five tries, waiting 40 ms more after each.
pub(super) const REMOTE_LOCK: Backoff = Backoff {
    first: Duration::from_millis(40),
    growth: Growth::Linear,
    max: Duration::from_millis(160),
    jitter: false,
    limit: Limit::Attempts(5),
};

/// Fetches the remote's lease of `key` into `lease-remote`; returns its value there (`None`: the
/// remote has no lease, and the stale copy is removed).
pub(super) fn fetch(store: &LeaseStore, remote: &str, key: &LeaseKey) -> Result<Option<ObjectId>> {
    let repo = store.repo.local();
    let reference = key.ref_name();
    let tracking = key.remote_ref_name();
    let err = |detail: String| Error::Remote { remote: remote.to_owned(), reference: reference.clone(), detail };
    let outcome = store.git.fetch_ref(remote, &reference, &tracking);
    crate::ledger::reach::fetched(&repo, remote, &outcome, store.clock().now());
    match outcome {
        Ok(Fetched::Updated) => Ok(repo.read_ref(&tracking)?),
        Ok(Fetched::Missing) => {
            if let Some(stale) = repo.read_ref(&tracking)? {
                // Only a cache of the remote's state; a failed removal is corrected next fetch.
                let _ = repo.delete_ref(&tracking, stale);
            }
            Ok(None)
        }
        Ok(Fetched::Failed(text)) => {
            Err(stale_lock_in(&repo, &text).unwrap_or_else(|| err(format!("fetch failed: {text}"))))
        }
        Err(e) => Err(err(super::chain(&e))),
    }
}

/// The stale lock a failed fetch met, named with its fix: git says `cannot lock ref '<ref>':
/// Unable to create '<path>.lock': File exists` when a killed fetch left the lock of a
/// remote-tracking lease ref behind. `None` when the text names no lock, or a lock still young or
/// held by a live chant process of the repository (left to the next try).
pub(super) fn stale_lock_in(repo: &Repo, text: &str) -> Option<Error> {
    let start = text.find("cannot lock ref '")? + "cannot lock ref '".len();
    let reference = &text[start..start + text[start..].find('\'')?];
    super::check_stale_lock(repo, reference).err()
}

/// Pushes `blob` to the remote's lease ref if it still holds `expected`. `Ok(false)` is a lost
/// race on the remote.
pub(super) fn push(
    store: &LeaseStore,
    repo: &Repo,
    remote: &str,
    key: &LeaseKey,
    blob: ObjectId,
    expected: Option<ObjectId>,
) -> Result<bool> {
    let reference = key.ref_name();
    // A lock on the remote is usually another pusher's, held for milliseconds: it counts as a
    // held lock only when it persists over a few tries.
    let outcome = REMOTE_LOCK.retry(|_| {
        let outcome = store.git.push_with_lease(remote, blob, &reference, expected);
        crate::ledger::reach::pushed(repo, remote, &outcome, store.clock().now());
        match classify(remote, &reference, outcome) {
            Err(locked @ Error::RemoteLocked { .. }) => ControlFlow::Continue(locked),
            other => ControlFlow::Break(other),
        }
    });
    match outcome.map_err(|gave_up| gave_up.last)?? {
        true => {
            // Only a cache of the remote's state; the next fetch corrects it if this fails.
            let _ = repo.update_ref(&key.remote_ref_name(), blob, expected, "chant: lease pushed");
            Ok(true)
        }
        false => Ok(false),
    }
}

/// Deletes the remote's lease ref if it still holds `expected`; a remote that moved meanwhile is
/// left alone (the lease is someone else's now).
pub(super) fn push_delete(
    store: &LeaseStore,
    repo: &Repo,
    remote: &str,
    key: &LeaseKey,
    expected: ObjectId,
) -> Result<()> {
    let reference = key.ref_name();
    let outcome = store.git.push_delete_with_lease(remote, &reference, expected);
    crate::ledger::reach::pushed(repo, remote, &outcome, store.clock().now());
    if classify(remote, &reference, outcome)? {
        let _ = repo.delete_ref(&key.remote_ref_name(), expected);
    }
    Ok(())
}

fn classify(remote: &str, reference: &str, outcome: Result<Pushed, crate::git::cmd::Error>) -> Result<bool> {
    let err = |detail: String| Error::Remote { remote: remote.to_owned(), reference: reference.to_owned(), detail };
    match outcome {
        Ok(Pushed::Landed) => Ok(true),
        Ok(Pushed::Refused(PushRefusal::Moved)) => Ok(false),
        Ok(Pushed::Refused(PushRefusal::RemoteLocked(detail))) => {
            Err(Error::RemoteLocked { remote: remote.to_owned(), reference: reference.to_owned(), detail })
        }
        Ok(Pushed::Refused(PushRefusal::Other(text))) => Err(err(format!("push refused: {text}"))),
        Ok(Pushed::Failed(text)) => Err(err(format!("push failed: {text}"))),
        Err(e) => Err(err(super::chain(&e))),
    }
}
