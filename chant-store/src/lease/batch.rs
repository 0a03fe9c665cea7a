//! Leases taken, renewed and released in batches through the remote: one `git fetch` of every
//! lease ref of the remote (a glob refspec into `refs/chant/lease-remote/`, pruned), then one
//! non-atomic `git push` carrying each lease of the batch under its own
//! `--force-with-lease=<ref>:<what the fetch saw>`. The remote accepts or refuses each ref on its
//! own, so each lease still counts only when its own ref update lands: a batch is the per-op
//! compare-and-swap of [`LeaseStore::acquire`] with the git processes shared, not a lock over
//! several ops. A ref the push left undecided because a lock on the remote blocked it (usually
//! another pusher's, for milliseconds) is fetched and pushed again, as the per-op push retries
//! it; one that stays blocked is [`Error::RemoteLocked`] for that op alone.

use std::ops::ControlFlow;
use std::time::Duration;

use jiff::Timestamp;

use crate::backoff::{Backoff, Growth, Limit};
use crate::git::cmd::{Fetched, Pushed, RefUpdate};
use crate::git::porcelain::PushRefusal;
use crate::git::{self, ObjectId, Repo};

use super::{
    Acquisition, Error, Held, LeaseKey, LeaseRecord, LeaseStore, PRESENCE_DIR, REF_PREFIX, REMOTE_REF_PREFIX, Refusal,
    Renewal, Result, check_ttl, extend, fresh, lock_error, remote,
};

/// How the fetch of every lease ref is retried: another process of the same clone may hold a
/// tracking ref's lock for a moment (five tries, 25 ms more after each).
const FETCH: Backoff = Backoff {
    first: Duration::from_millis(25),
    growth: Growth::Linear,
    max: Duration::from_millis(125),
    jitter: false,
    limit: Limit::Attempts(5),
};

/// The remote's lease of one op, as the last [`LeaseStore::fetch_every`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The blob the remote's ref points at.
    pub blob: ObjectId,
    /// Its record.
    pub record: LeaseRecord,
}

/// One lease write of a batch: the record to push for `key`, and what the remote must hold.
#[derive(Clone)]
struct Write {
    key: LeaseKey,
    record: LeaseRecord,
    blob: ObjectId,
    local_before: Option<ObjectId>,
    remote_before: Option<ObjectId>,
}

impl LeaseStore {
    /// Fetches every lease ref of the remote into `refs/chant/lease-remote/` in one git process,
    /// removing the copies of leases the remote no longer has. Does nothing without a remote.
    ///
    /// # Errors
    ///
    /// [`Error::Remote`] when the fetch fails (after a few tries).
    pub fn fetch_every(&self) -> Result<()> {
        let Some(remote) = &self.remote else { return Ok(()) };
        let repo = self.repo.local();
        let refspec = format!("+{REF_PREFIX}*:{REMOTE_REF_PREFIX}*");
        let err =
            |detail: String| Error::Remote { remote: remote.clone(), reference: format!("{REF_PREFIX}*"), detail };
        let outcome = FETCH.retry(|_| {
            let outcome = self.git.fetch_refspecs(remote, &[&refspec], true);
            crate::ledger::reach::fetched(&repo, remote, &outcome, self.clock.now());
            match outcome {
                Ok(Fetched::Updated | Fetched::Missing) => ControlFlow::Break(Ok(())),
                Ok(Fetched::Failed(text)) => match super::remote::stale_lock_in(&repo, &text) {
                    Some(stale) => ControlFlow::Break(Err(stale)),
                    None => ControlFlow::Continue(err(format!("fetch failed: {text}"))),
                },
                Err(e) => ControlFlow::Break(Err(err(super::chain(&e)))),
            }
        });
        match outcome {
            Ok(done) => done,
            Err(gave_up) => Err(gave_up.last),
        }
    }

    /// Returns the remote's lease of `key` as the last fetch saw it (local refs only).
    ///
    /// # Errors
    ///
    /// Git storage errors.
    pub fn seen(&self, key: &LeaseKey) -> Result<Option<Seen>> {
        let repo = self.repo.local();
        Ok(self.record(&repo, &key.remote_ref_name())?.map(|(blob, record)| Seen { blob, record }))
    }

    /// Returns the live presence leases ([`LeaseKey::presence`]) of the remote as the last
    /// [`LeaseStore::fetch_every`] saw them, other than `holder`'s (local refs only).
    ///
    /// # Errors
    ///
    /// Git storage errors.
    pub fn presences_seen(&self, holder: &str, now: Timestamp) -> Result<Vec<Seen>> {
        let repo = self.repo.local();
        let mut seen = Vec::new();
        for name in repo.refs_under(&format!("{REMOTE_REF_PREFIX}{PRESENCE_DIR}"))? {
            if let Some((blob, record)) = self.record(&repo, &name)?
                && record.holder != holder
                && record.is_live(now)
            {
                seen.push(Seen { blob, record });
            }
        }
        Ok(seen)
    }

    /// Acquires every lease of `keys` for `holder` as [`LeaseStore::acquire`] does, deciding from
    /// the remote's leases as the last [`LeaseStore::fetch_every`] saw them, and pushes all the
    /// writes in one `git push` (each ref under its own lease). Returns one outcome per key, in
    /// order; an error is that key's alone.
    ///
    /// # Errors
    ///
    /// [`Error::TtlTooLong`]; without a remote, nothing (each key is acquired on its own).
    pub fn acquire_every(
        &self,
        keys: &[LeaseKey],
        holder: &str,
        ttl: Duration,
        now: Timestamp,
    ) -> Result<Vec<Result<Acquisition>>> {
        check_ttl(ttl)?;
        if self.remote.is_none() {
            return Ok(keys.iter().map(|k| self.acquire(k, holder, ttl, now)).collect());
        }
        let repo = self.repo.local();
        let mut outcomes: Vec<Option<Result<Acquisition>>> = keys.iter().map(|_| None).collect();
        let mut writes = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            match self.plan_acquire(&repo, key, holder, ttl, now) {
                Ok(Planned::Write(write, renewed, stale)) => writes.push((i, write, renewed, stale)),
                Ok(Planned::Done(outcome)) => outcomes[i] = Some(Ok(outcome)),
                Err(e) => outcomes[i] = Some(Err(e)),
            }
        }
        let planned: Vec<Write> = writes.iter().map(|(_, w, _, _)| w.clone()).collect();
        let landed = self.push_writes(&repo, planned, now);
        for ((i, write, renewed, stale), result) in writes.into_iter().zip(landed) {
            outcomes[i] = Some(match result {
                Ok(true) => Ok(Acquisition::Acquired {
                    held: Held { key: write.key, record: write.record, blob: write.blob },
                    renewed,
                    stale,
                }),
                Ok(false) => self
                    .seen(&write.key)
                    .map(|seen| Acquisition::Refused { held_by: seen.map(|s| s.record), reason: Refusal::Race }),
                Err(e) => Err(e),
            });
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.unwrap_or(Ok(Acquisition::Refused { held_by: None, reason: Refusal::Race })))
            .collect())
    }

    /// Renews every lease of `held` as [`LeaseStore::renew`] does, after one fetch of every lease
    /// ref and with one push. Returns one outcome per lease, in order.
    ///
    /// # Errors
    ///
    /// [`Error::TtlTooLong`], and the fetch's error (nothing was renewed then).
    pub fn renew_every(&self, held: &[Held], ttl: Duration, now: Timestamp) -> Result<Vec<Result<Renewal>>> {
        check_ttl(ttl)?;
        if self.remote.is_none() || held.is_empty() {
            return Ok(held.iter().map(|h| self.renew(h, ttl, now)).collect());
        }
        self.fetch_every()?;
        let repo = self.repo.local();
        let mut outcomes: Vec<Option<Result<Renewal>>> = held.iter().map(|_| None).collect();
        let mut writes = Vec::new();
        for (i, h) in held.iter().enumerate() {
            let planned = (|| -> Result<Option<Write>> {
                let seen = self.seen(&h.key)?;
                match seen {
                    Some(s) if s.record.same_holding(&h.record) => {
                        let record = extend(&s.record, ttl, now);
                        let local_before = repo.read_ref(&h.key.ref_name())?;
                        let blob = repo.write_blob(&record.to_bytes()?)?;
                        self.written.wrote(blob, &record);
                        Ok(Some(Write { key: h.key.clone(), record, blob, local_before, remote_before: Some(s.blob) }))
                    }
                    found => {
                        outcomes[i] = Some(Ok(Renewal::Lost { found: found.map(|s| s.record) }));
                        Ok(None)
                    }
                }
            })();
            match planned {
                Ok(Some(write)) => writes.push((i, write)),
                Ok(None) => {}
                Err(e) => outcomes[i] = Some(Err(e)),
            }
        }
        let planned: Vec<Write> = writes.iter().map(|(_, w)| w.clone()).collect();
        let landed = self.push_writes(&repo, planned, now);
        for ((i, write), result) in writes.into_iter().zip(landed) {
            outcomes[i] = Some(match result {
                Ok(true) => Ok(Renewal::Renewed(Held { key: write.key, record: write.record, blob: write.blob })),
                Ok(false) => self.seen(&write.key).map(|seen| Renewal::Lost { found: seen.map(|s| s.record) }),
                Err(e) => Err(e),
            });
        }
        Ok(outcomes.into_iter().map(|o| o.unwrap_or(Ok(Renewal::Lost { found: None }))).collect())
    }

    /// Releases every lease of `held` that is still its holder's, as [`LeaseStore::release`]
    /// does, with one push of the deletions, each under a lease on the blob this store last
    /// wrote for it (a renewal's, when one landed since `held` was taken) or the held blob, when
    /// that blob holds the holder's own record: the remote deletes exactly the lease this holder
    /// wrote, and refuses one that moved. Only what was refused (or had no such blob) is looked
    /// at again, after one fetch of every lease ref: a lease still its holder's is deleted in a
    /// second push, any other is no longer ours. Returns one outcome per lease, in order (`Ok(false)`: no longer ours, nothing
    /// touched).
    ///
    /// # Errors
    ///
    /// None as a whole; each lease's outcome carries its push's error, or the fetch's when its
    /// first push was refused and the fetch failed (nothing was released for it then).
    pub fn release_every(&self, held: &[Held]) -> Result<Vec<Result<bool>>> {
        let Some(remote) = self.remote.clone().filter(|_| !held.is_empty()) else {
            return Ok(held.iter().map(|h| self.release(h)).collect());
        };
        let repo = self.repo.local();
        // The blob each deletion is conditioned on must hold this holder's own record (a blob is
        // named by its content): then the remote deletes only a lease that is still ours. A lease
        // with no such blob at hand goes the fetching way at once.
        let mut written = Vec::new();
        let mut unknown = Vec::new();
        for (i, h) in held.iter().enumerate() {
            match self.written.last_set(&h.key.ref_name()) {
                Some((blob, record)) if record.same_holding(&h.record) => written.push((i, blob)),
                _ => match self.record_at(&repo, h.blob) {
                    Ok(Some(record)) if record.same_holding(&h.record) => written.push((i, h.blob)),
                    _ => unknown.push(i),
                },
            }
        }
        let mut outcomes: Vec<Option<Result<bool>>> = held.iter().map(|_| None).collect();
        let mut refused = self.delete_remote(&repo, &remote, held, written, &mut outcomes);
        refused.extend(unknown);
        if !refused.is_empty() {
            match self.fetch_every() {
                Ok(()) => {
                    let mut again = Vec::new();
                    for i in refused {
                        match self.seen(&held[i].key) {
                            Ok(Some(s)) if s.record.same_holding(&held[i].record) => again.push((i, s.blob)),
                            // The remote's lease moved meanwhile: it is someone else's now.
                            Ok(_) => outcomes[i] = Some(Ok(false)),
                            Err(e) => outcomes[i] = Some(Err(e)),
                        }
                    }
                    // Refused twice: it moved between the fetch and the push.
                    for i in self.delete_remote(&repo, &remote, held, again, &mut outcomes) {
                        outcomes[i] = Some(Ok(false));
                    }
                }
                Err(e) => {
                    let detail = super::chain(&e);
                    for i in refused {
                        outcomes[i] = Some(Err(Error::Remote {
                            remote: remote.clone(),
                            reference: held[i].key.ref_name(),
                            detail: detail.clone(),
                        }));
                    }
                }
            }
        }
        Ok(outcomes.into_iter().map(|o| o.unwrap_or(Ok(false))).collect())
    }

    /// Pushes the deletion of each lease `deletions` names (its index in `held`, and the blob the
    /// remote must hold) in one push, and files each outcome in `outcomes`: a landed deletion
    /// also removes this repository's copy of the remote's lease and the local lease, when they
    /// are still this holder's. Returns the indexes the remote refused (its lease had moved).
    fn delete_remote(
        &self,
        repo: &Repo,
        remote: &str,
        held: &[Held],
        deletions: Vec<(usize, ObjectId)>,
        outcomes: &mut [Option<Result<bool>>],
    ) -> Vec<usize> {
        let updates: Vec<RefUpdate> = deletions
            .iter()
            .map(|(i, blob)| RefUpdate { remote_ref: held[*i].key.ref_name(), new: None, expected: Some(*blob) })
            .collect();
        let pushed = self.push_updates(repo, remote, &updates);
        let mut refused = Vec::new();
        for ((i, _), result) in deletions.into_iter().zip(pushed) {
            let h = &held[i];
            outcomes[i] = Some(match result {
                Ok(true) => {
                    // The remote has none now: nor has the copy of it, whatever the last fetch saw.
                    let copy = h.key.remote_ref_name();
                    if let Ok(Some((sha, record))) = self.record(repo, &copy)
                        && record.same_holding(&h.record)
                    {
                        let _ = repo.delete_ref(&copy, sha);
                    }
                    self.delete_local(repo, h).map(|()| true)
                }
                Ok(false) => {
                    refused.push(i);
                    continue;
                }
                Err(e) => Err(e),
            });
        }
        refused
    }

    /// Decides one key's acquisition from the fetched remote lease and writes the local ref.
    fn plan_acquire(
        &self,
        repo: &Repo,
        key: &LeaseKey,
        holder: &str,
        ttl: Duration,
        now: Timestamp,
    ) -> Result<Planned> {
        let local_before = repo.read_ref(&key.ref_name())?;
        let seen = self.seen(key)?;
        let current = seen.as_ref().map(|s| &s.record);
        let stale = current.filter(|r| r.is_stale(now)).cloned();
        let (record, renewed) = match current {
            Some(r) if r.holder == holder && stale.is_none() => (extend(r, ttl, now), true),
            Some(r) if r.is_live(now) => {
                return Ok(Planned::Done(Acquisition::Refused { held_by: Some(r.clone()), reason: Refusal::Held }));
            }
            _ => (fresh(key, holder, ttl, now)?, false),
        };
        let blob = repo.write_blob(&record.to_bytes()?)?;
        self.written.wrote(blob, &record);
        let write = Write { key: key.clone(), record, blob, local_before, remote_before: seen.map(|s| s.blob) };
        Ok(Planned::Write(write, renewed, stale))
    }

    /// Writes each local ref by compare-and-swap, pushes those written in one push (again,
    /// after a fetch, for refs a remote lock blocked) and undoes the local write of every one
    /// that did not land. One outcome per write: `Ok(false)` is a lost race.
    fn push_writes(&self, repo: &Repo, writes: Vec<Write>, now: Timestamp) -> Vec<Result<bool>> {
        let mut outcomes: Vec<Option<Result<bool>>> = writes.iter().map(|_| None).collect();
        let Some(remote) = self.remote.clone() else { return Vec::new() };
        let mut pending: Vec<usize> = Vec::new();
        for (i, w) in writes.iter().enumerate() {
            let local_ref = w.key.ref_name();
            match repo.update_ref(&local_ref, w.blob, w.local_before, "chant: lease") {
                Ok(()) => {
                    self.written.set(&local_ref, Some(w.blob));
                    pending.push(i);
                }
                Err(e) => {
                    if matches!(e, git::Error::RefConflict { .. }) {
                        // The ref holds another value than the one this store last set.
                        self.written.set(&local_ref, None);
                    }
                    outcomes[i] = Some(match lock_error(repo, &local_ref, &e) {
                        Some(err) => Err(err),
                        None => match e {
                            git::Error::RefConflict { .. } | git::Error::RefLocked { .. } => Ok(false),
                            other => Err(other.into()),
                        },
                    });
                }
            }
        }
        let mut expected: Vec<Option<ObjectId>> = writes.iter().map(|w| w.remote_before).collect();
        let _ = remote::REMOTE_LOCK.retry(|attempt| {
            let updates: Vec<RefUpdate> = pending
                .iter()
                .map(|&i| RefUpdate {
                    remote_ref: writes[i].key.ref_name(),
                    new: Some(writes[i].blob),
                    expected: expected[i],
                })
                .collect();
            let results = self.push_updates(repo, &remote, &updates);
            let mut locked = Vec::new();
            for (&i, result) in pending.iter().zip(results) {
                match result {
                    Err(Error::RemoteLocked { .. }) if attempt + 1 < 5 => locked.push(i),
                    other => outcomes[i] = Some(other),
                }
            }
            if locked.is_empty() {
                return ControlFlow::Break(());
            }
            // Whoever held the lock may have moved the ref: decide against what the remote holds now.
            if let Err(e) = self.fetch_every() {
                for &i in &locked {
                    outcomes[i] = Some(Err(Error::Remote {
                        remote: remote.clone(),
                        reference: writes[i].key.ref_name(),
                        detail: super::chain(&e),
                    }));
                }
                return ControlFlow::Break(());
            }
            pending.clear();
            for i in locked {
                match self.seen(&writes[i].key) {
                    // The remote still holds what we decided from: push the same write again.
                    Ok(seen) if seen.as_ref().map(|s| s.blob) == writes[i].remote_before => pending.push(i),
                    Ok(seen) if seen.as_ref().is_some_and(|s| s.blob == writes[i].blob) => outcomes[i] = Some(Ok(true)),
                    Ok(seen) => {
                        // Another writer took the ref: a lost race, unless its lease lapsed.
                        let lapsed = seen.as_ref().is_none_or(|s| !s.record.is_live(now));
                        if lapsed && writes[i].remote_before.is_none() {
                            expected[i] = seen.map(|s| s.blob);
                            pending.push(i);
                        } else {
                            outcomes[i] = Some(Ok(false));
                        }
                    }
                    Err(e) => outcomes[i] = Some(Err(e)),
                }
            }
            if pending.is_empty() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        writes
            .iter()
            .zip(outcomes)
            .map(|(w, outcome)| {
                let outcome = outcome.unwrap_or(Ok(false));
                match &outcome {
                    Ok(true) => {
                        // Only a cache of the remote's state; the next fetch corrects it.
                        let cached = repo.read_ref(&w.key.remote_ref_name()).ok().flatten();
                        let _ = repo.update_ref(&w.key.remote_ref_name(), w.blob, cached, "chant: lease pushed");
                    }
                    _ => {
                        if repo.read_ref(&w.key.ref_name()).ok().flatten() == Some(w.blob) {
                            self.undo(repo, &w.key.ref_name(), w.blob, w.local_before);
                        }
                    }
                }
                outcome
            })
            .collect()
    }

    /// Runs one push of `updates` and classifies each ref's outcome: `Ok(true)` landed,
    /// `Ok(false)` the remote's ref moved since it was read.
    fn push_updates(&self, repo: &Repo, remote: &str, updates: &[RefUpdate]) -> Vec<Result<bool>> {
        if updates.is_empty() {
            return Vec::new();
        }
        match self.git.push_many(remote, updates) {
            Ok(outcomes) => {
                // The remote answered if it decided any ref; else the first failure says why not.
                let answer = outcomes
                    .iter()
                    .find(|p| matches!(p, Pushed::Landed | Pushed::Refused(_)))
                    .or(outcomes.first())
                    .cloned()
                    .unwrap_or(Pushed::Landed);
                crate::ledger::reach::pushed(repo, remote, &Ok(answer), self.clock.now());
                updates.iter().zip(outcomes).map(|(u, pushed)| classify(remote, &u.remote_ref, pushed)).collect()
            }
            Err(e) => {
                let detail = super::chain(&e);
                crate::ledger::reach::pushed(repo, remote, &Err(e), self.clock.now());
                updates
                    .iter()
                    .map(|u| {
                        Err(Error::Remote {
                            remote: remote.to_owned(),
                            reference: u.remote_ref.clone(),
                            detail: detail.clone(),
                        })
                    })
                    .collect()
            }
        }
    }

    /// Deletes the local lease ref of `held` when it still holds our record.
    fn delete_local(&self, repo: &Repo, held: &Held) -> Result<()> {
        let local_ref = held.key.ref_name();
        let Some((sha, record)) = self.record(repo, &local_ref)? else { return Ok(()) };
        if record.holder != held.record.holder || record.token != held.record.token {
            return Ok(());
        }
        match repo.delete_ref(&local_ref, sha) {
            Ok(()) => {
                self.written.set(&local_ref, None);
                Ok(())
            }
            Err(e) => match lock_error(repo, &local_ref, &e) {
                Some(err) => Err(err),
                None if matches!(e, git::Error::RefConflict { .. } | git::Error::RefLocked { .. }) => Ok(()),
                None => Err(e.into()),
            },
        }
    }
}

/// What one key's acquisition needs.
enum Planned {
    /// A write to push (whether it renews our own lease, and the stale record it replaces).
    Write(Write, bool, Option<LeaseRecord>),
    /// Decided without a write.
    Done(Acquisition),
}

fn classify(remote: &str, reference: &str, pushed: Pushed) -> Result<bool> {
    let err = |detail: String| Error::Remote { remote: remote.to_owned(), reference: reference.to_owned(), detail };
    match pushed {
        Pushed::Landed => Ok(true),
        Pushed::Refused(PushRefusal::Moved) => Ok(false),
        Pushed::Refused(PushRefusal::RemoteLocked(detail)) => {
            Err(Error::RemoteLocked { remote: remote.to_owned(), reference: reference.to_owned(), detail })
        }
        Pushed::Refused(PushRefusal::Other(text)) => Err(err(format!("push refused: {text}"))),
        Pushed::Failed(text) => Err(err(format!("push failed: {text}"))),
    }
}
