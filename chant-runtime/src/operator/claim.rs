//! A round with a remote, where other operators may share the ops: the ops are claimed in
//! batches instead of raced for one lease at a time.
//!
//! Each batch: one fetch of every lease ref of the remote ([`LeaseStore::fetch_every`]); the ops
//! whose lease another holder keeps live are skipped (`skipped=1(lease-held:...)`), and those
//! holders, with those of the other operators' live presence leases, are this operator's live
//! peers. A free op whose newest record (after one ledger sync) already says it is not due is
//! reported `not-due` without a lease. An op whose lease this operator holds but which hashes to
//! a live peer is given back (its lease released, if its last record reached the remote:
//! `skipped=1(given-back:...)`), so a daemon started after another took every op gets its share.
//! The batch is every other op whose lease is already this operator's, plus the free ops that
//! hash to this operator among itself and its peers (rendezvous hashing), or, when none is left,
//! a share of the free ops nobody claimed (stealing). A round that began holding no lease claims
//! its free ops, while it has seen no peer, in claims growing fourfold from a small one (8, 32,
//! 128, ...), each after a fetch of every lease, so that a peer started later is seen while there
//! is still something to share; operators started together see each other at their second fetch,
//! which follows the first claim's push after waiting as long again as the push took (the second
//! claim joins the first, and both tick as one batch), and from then on each claims its whole
//! share. The batch's leases are
//! pushed in one non-atomic push, each ref under its own `--force-with-lease`
//! ([`LeaseStore::acquire_every`]):
//! each lease counts only when its own ref lands, so a lost ref is that op's `lease-held` and
//! nothing else. Then one ledger sync (the fetch before the due checks), the due check and tick
//! of each claimed op with its record appended locally, one ledger sync that pushes the batch's
//! records (re-appending onto the remote tip when another operator pushed first), and only then
//! are the batch's leases releasable. While the batch runs its leases are renewed together every
//! TTL/3 (one fetch, one push); each tick's fence answers from what those pushes proved
//! ([`tick::Proofs`]). An operator that saw peers but claimed nothing in a round announces
//! itself with its presence lease ([`LeaseKey::presence`]), the only way a peer holding every op
//! can see it.

use std::collections::BTreeSet;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use crate::project::Project;
use crate::schedule::Decision;
use crate::tick::{self, Fence, Proof, Proofs, TickRecord};
use chant_store::lease::{self, Acquisition, Held, LeaseKey, LeaseStore, Renewal};
use chant_store::ledger::{self, PushStatus};

use super::chain;
use super::round::{
    HeldLease, OpEvent, OpReport, OpTimings, RoundContext, Target, due_decision, rendezvous, sync_before_due_check,
    visiting_order,
};

/// How many free ops the first batch of a round that began holding no lease claims.
const FIRST_BATCH: usize = 8;
/// How much each claim's limit grows over the one before, in such a round: 8, 32, 128, ...
const GROWTH: usize = 4;
/// The longest the first claim of such a round waits before its second (it waits as long as
/// its first push took, up to this).
const OPENING_SETTLE: Duration = Duration::from_millis(250);
/// The fewest ops a steal claims at once.
const MIN_STEAL: usize = 8;

impl RoundContext {
    /// Runs one round over `targets` with a remote: see the module documentation.
    pub(super) fn run_claimed(
        &self,
        targets: &[Target],
        woken: &BTreeSet<String>,
        round_start: Timestamp,
        report: &mut dyn FnMut(OpReport),
    ) {
        let project = self.project.as_ref();
        // The batch's records are appended locally and pushed together by the sync after it.
        let local = Project {
            root: project.root.clone(),
            config: project.config.clone(),
            ledger: project.ledger.local_only(),
            catalog: project.catalog.clone(),
            redactor: project.redactor.clone(),
        };
        let mut say = |target: &Target, line: OpReport| {
            self.hooks.reported(target, &line);
            report(line);
        };
        let mut remaining = visiting_order(targets, &self.holder);
        // How many free ops the next batch may claim: `None` for a round that began holding
        // leases (a daemon's: its batch is what it holds), else growing from FIRST_BATCH.
        let mut cap: Option<usize> = None;
        let mut first = true;
        let mut saw_peers = false;
        let mut claimed_any = false;
        // Whether this round's last batch synced the ledger (before its due checks and to push its
        // records) since the last fetch of the leases but one: see `not_yet_ticked`.
        let mut ledger_fresh = false;
        while !remaining.is_empty() {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let claiming = Instant::now();
            if let Err(e) = self.leases.fetch_every() {
                let error = chain(&e);
                for target in remaining {
                    say(target, OpReport::new(target, OpEvent::LeaseError { error: error.clone() }));
                }
                return;
            }
            let now = self.leases.clock().now();
            let (ours, free, peers) = self.survey(remaining, now, &mut say);
            if first && ours.is_empty() {
                cap = Some(FIRST_BATCH);
            }
            first = false;
            saw_peers |= !peers.is_empty();
            let ours = self.give_back(&peers, ours, now, &mut say);
            let free = self.not_waiting(&peers, free, now, &mut say);
            let free = self.not_yet_ticked(free, round_start, woken, ledger_fresh, &mut say);
            // The growth holds while this operator has seen no peer; once it has, it claims its
            // whole share at once, as peers started together then all see each other.
            let limit = if saw_peers { None } else { cap };
            let opening = limit == Some(FIRST_BATCH);
            let (batch, rest) = choose(&self.holder, &peers, ours, free, limit);
            remaining = rest;
            cap = cap.map(|c| c.saturating_mul(GROWTH));
            if batch.is_empty() {
                continue;
            }
            let opening_push = Instant::now();
            let mut claimed = self.claim(&batch, now, &mut say);
            if opening && !remaining.is_empty() {
                // The opening claim was small so that operators started together see each
                // other's leases now: they push their first claims at about the same time and
                // take about as long, so waiting as long again as this push took lets theirs
                // land before the fetch. The second claim (limited as the growth says) ticks
                // with the first, in one batch: one ledger sync and one push of records.
                std::thread::sleep(opening_push.elapsed().min(OPENING_SETTLE));
                if self.leases.fetch_every().is_ok() {
                    let now = self.leases.clock().now();
                    let (ours, free, peers) = self.survey(remaining, now, &mut say);
                    saw_peers |= !peers.is_empty();
                    let limit = if saw_peers { None } else { cap };
                    let (share, rest) = choose(&self.holder, &peers, ours, free, limit);
                    remaining = rest;
                    cap = cap.map(|c| c.saturating_mul(GROWTH));
                    if !share.is_empty() {
                        claimed.extend(self.claim(&share, now, &mut say));
                    }
                }
            }
            let lease_time = claiming.elapsed() / u32::try_from(claimed.len()).unwrap_or(u32::MAX).max(1);
            if !claimed.is_empty() {
                claimed_any = true;
                ledger_fresh = self.tick_batch(&local, claimed, round_start, woken, lease_time, &mut say);
            } else {
                ledger_fresh = false;
            }
        }
        if saw_peers && !claimed_any && !self.stopping.load(Ordering::SeqCst) {
            self.announce();
        }
    }

    /// Gives back the ops of `ours` that hash to a live peer: their leases are released in one
    /// push (each under its own lease) for the peer to claim, and each is reported
    /// `given-back`. A lease whose last record has not reached the remote is kept (it stays in
    /// the batch), as is one whose release failed. Returns the ops this operator keeps.
    fn give_back<'a>(
        &self,
        peers: &BTreeSet<String>,
        ours: Vec<&'a Target>,
        now: Timestamp,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> Vec<&'a Target> {
        if peers.is_empty() || ours.is_empty() {
            return ours;
        }
        let releasable: std::collections::BTreeMap<String, Held> =
            self.held_map().iter().filter(|(_, h)| h.releasable).map(|(op, h)| (op.clone(), h.held.clone())).collect();
        let held_of = |t: &Target| releasable.get(t.op()).cloned();
        let (mut keep, given) = split_given_back(&self.holder, peers, ours, |t| held_of(t).is_some());
        let giving: Vec<(&Target, Held, String)> =
            given.into_iter().filter_map(|(t, to)| held_of(t).map(|h| (t, h, to))).collect();
        if giving.is_empty() {
            return keep;
        }
        let helds: Vec<Held> = giving.iter().map(|(_, h, _)| h.clone()).collect();
        let Ok(outcomes) = self.leases.release_every(&helds) else {
            // Nothing was released: the leases are still ours and tick in this round's batch.
            keep.extend(giving.into_iter().map(|(t, _, _)| t));
            return keep;
        };
        for ((target, _, to), outcome) in giving.into_iter().zip(outcomes) {
            match outcome {
                Ok(true) => {
                    self.hooks.lease(target, false);
                    self.held_map().remove(target.op());
                    let until = now.checked_add(self.ttl).unwrap_or(now);
                    self.given_map().insert(target.op().to_owned(), (to.clone(), until));
                    say(target, OpReport::new(target, OpEvent::GivenBack { to }));
                }
                // The remote's lease moved meanwhile: it is not ours any more.
                Ok(false) => {
                    self.hooks.lease(target, false);
                    self.held_map().remove(target.op());
                    say(target, OpReport::new(target, OpEvent::LeaseHeld { holder: None }));
                }
                // Not released: still ours, so it ticks in the batch (its claim renews it).
                Err(_) => keep.push(target),
            }
        }
        keep
    }

    /// Leaves out of `free` the ops this operator gave back to a peer that is still live and has
    /// not claimed them yet (for at most a lease TTL): they are the peer's to claim at its next
    /// round, and stealing them back would only give them back again. Each is reported
    /// `given-back` again. Returns the others.
    fn not_waiting<'a>(
        &self,
        peers: &BTreeSet<String>,
        free: Vec<&'a Target>,
        now: Timestamp,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> Vec<&'a Target> {
        let mut given = self.given_map();
        given.retain(|_, (peer, until)| *until > now && peers.contains(peer));
        if given.is_empty() {
            return free;
        }
        let mut left = Vec::new();
        let mut waiting = Vec::new();
        for target in free {
            match given.get(target.op()) {
                Some((peer, _)) => waiting.push((target, peer.clone())),
                None => left.push(target),
            }
        }
        drop(given);
        for (target, to) in waiting {
            say(target, OpReport::new(target, OpEvent::GivenBack { to }));
        }
        left
    }

    /// Leaves out of `free` the ops whose newest record, after one ledger sync, already says
    /// they are not due: most often ops a peer ticked at this fire time and released when it
    /// finished (a `--once` started after it, or the rest of a round after a peer's), and
    /// claiming them would only cost a lease push for a due check that skips them. Each is
    /// reported `not-due` as the due check under its lease would report it. A record can only
    /// show that an op ran, so an op this check finds due (or cannot read) stays free, to be
    /// claimed and checked again under its lease, after the ledger sync that follows the claim
    /// (a lease ref deleted at a release can be back to "absent" between this sync and the
    /// claim). When the sync fails nothing is left out. When `fresh` (this round's previous batch
    /// synced the ledger just before this round's last fetch of the leases) that ledger is read
    /// without another sync: a record it lacks only costs a claim whose due check, after the
    /// sync that follows every claim, skips the op.
    fn not_yet_ticked<'a>(
        &self,
        free: Vec<&'a Target>,
        round_start: Timestamp,
        woken: &BTreeSet<String>,
        fresh: bool,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> Vec<&'a Target> {
        let ledger = &self.project.ledger;
        if free.is_empty() || (!fresh && sync_before_due_check(ledger).is_err()) {
            return free;
        }
        let now = ledger.clock().now();
        let mut left = Vec::new();
        for target in free {
            let Ok(newest) = ledger.latest_typed::<TickRecord>(&target.key) else {
                left.push(target);
                continue;
            };
            match due_decision(target, &newest, round_start, now, woken.contains(target.op())) {
                Decision::NotDue(reason) => say(target, OpReport::new(target, OpEvent::NotDue { reason })),
                Decision::Due(_) => left.push(target),
            }
        }
        left
    }

    fn given_map(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, (String, Timestamp)>> {
        self.given.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Announces this operator to its peers with its presence lease (taken, or renewed once a
    /// third of its TTL has passed), after a round in which it saw peers and claimed nothing:
    /// peers are seen only through the live leases they hold. A failure is retried at the next
    /// such round.
    fn announce(&self) {
        let key = LeaseKey::presence(&self.holder);
        let now = self.leases.clock().now();
        let current = self.presence.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(held) = current {
            let fresh = chant_store::clock::parse(&held.record.expires_at).is_some_and(|expires| {
                expires.duration_since(now) > SignedDuration::try_from(self.ttl * 2 / 3).unwrap_or(SignedDuration::MAX)
            });
            let landed = self.leases.seen(&key).ok().flatten().is_some_and(|s| s.blob == held.blob);
            if fresh && landed {
                return;
            }
        }
        let Ok(outcomes) = self.leases.acquire_every(std::slice::from_ref(&key), &self.holder, self.ttl, now) else {
            return;
        };
        if let Some(Ok(Acquisition::Acquired { held, .. })) = outcomes.into_iter().next() {
            *self.presence.lock().unwrap_or_else(PoisonError::into_inner) = Some(held);
        }
    }

    /// Sorts `remaining` by what the last fetch of the leases says: the ops whose lease is this
    /// operator's, the free ones, and the holders of the live leases of others (whose ops are
    /// reported `lease-held` here).
    fn survey<'a>(
        &self,
        remaining: Vec<&'a Target>,
        now: Timestamp,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> (Vec<&'a Target>, Vec<&'a Target>, BTreeSet<String>) {
        let mut ours = Vec::new();
        let mut free = Vec::new();
        let mut peers = BTreeSet::new();
        // The operators that hold no op's lease announce themselves with a presence lease.
        if let Ok(present) = self.leases.presences_seen(&self.holder, now) {
            peers.extend(present.into_iter().map(|s| s.record.holder));
        }
        for target in remaining {
            match self.leases.seen(&target.lease) {
                Err(e) => say(target, OpReport::new(target, OpEvent::LeaseError { error: chain(&e) })),
                Ok(Some(seen)) if seen.record.holder == self.holder && !seen.record.is_stale(now) => ours.push(target),
                Ok(Some(seen)) if seen.record.is_live(now) => {
                    peers.insert(seen.record.holder.clone());
                    self.hooks.lease(target, false);
                    self.held_map().remove(target.op());
                    say(target, OpReport::new(target, OpEvent::LeaseHeld { holder: Some(seen.record.holder) }));
                }
                Ok(_) => free.push(target),
            }
        }
        (ours, free, peers)
    }

    /// Pushes the leases of `batch` in one push; returns the ops whose lease landed, with it,
    /// and reports the others.
    fn claim<'a>(
        &self,
        batch: &[&'a Target],
        now: Timestamp,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> Vec<(&'a Target, Held, Vec<String>)> {
        let keys: Vec<lease::LeaseKey> = batch.iter().map(|t| t.lease.clone()).collect();
        let outcomes = match self.leases.acquire_every(&keys, &self.holder, self.ttl, now) {
            Ok(outcomes) => outcomes,
            Err(e) => {
                let error = chain(&e);
                for target in batch {
                    say(target, OpReport::new(target, OpEvent::LeaseError { error: error.clone() }));
                }
                return Vec::new();
            }
        };
        let mut claimed = Vec::new();
        for (target, outcome) in batch.iter().zip(outcomes) {
            match outcome {
                Ok(Acquisition::Acquired { held, stale, .. }) => {
                    let warnings = stale
                        .map(|r| {
                            format!(
                                "took over the lease of {} from {}: it claimed to run until {}, further ahead than the maximum lease TTL of 24h (a clock far ahead, or a blob written by hand)",
                                target.op(),
                                r.holder,
                                r.expires_at
                            )
                        })
                        .into_iter()
                        .collect();
                    let releasable = self.held_map().get(target.op()).is_none_or(|h| h.releasable);
                    self.held_map().insert(target.op().to_owned(), HeldLease { held: held.clone(), releasable });
                    claimed.push((*target, held, warnings));
                }
                Ok(Acquisition::Refused { held_by, .. }) => {
                    self.hooks.lease(target, false);
                    self.held_map().remove(target.op());
                    say(target, OpReport::new(target, OpEvent::LeaseHeld { holder: held_by.map(|r| r.holder) }));
                }
                Err(e) => say(target, OpReport::new(target, OpEvent::LeaseError { error: chain(&e) })),
            }
        }
        claimed
    }

    /// Under the claimed leases: one ledger sync, the due check and tick of each op (records
    /// appended locally), one ledger sync that pushes them, then the reports. Returns whether
    /// the ledger was synced with the remote (fetched, and the batch's records, if any, pushed).
    fn tick_batch(
        &self,
        local: &Project,
        claimed: Vec<(&Target, Held, Vec<String>)>,
        round_start: Timestamp,
        woken: &BTreeSet<String>,
        lease_time: Duration,
        say: &mut dyn FnMut(&Target, OpReport),
    ) -> bool {
        let ledger = &self.project.ledger;
        let syncing = Instant::now();
        if let Err(reason) = sync_before_due_check(ledger) {
            // Deciding due-ness from a ledger that may lack another clone's tick could tick twice.
            let error = format!(
                "the ledger could not be fetched before the due check, so the op did not tick: {}",
                chain(&reason)
            );
            for (target, _, _) in claimed {
                let mut line = OpReport::new(target, OpEvent::Failed { error: error.clone() });
                line.timings.lease = lease_time;
                say(target, line);
            }
            return false;
        }
        let sync_time = syncing.elapsed() / u32::try_from(claimed.len()).unwrap_or(u32::MAX).max(1);
        let proofs = Proofs::default();
        for (_, held, _) in &claimed {
            proofs.set(&held.key, Proof::Landed(held.record.clone()));
        }
        let renewer = BatchRenewer::start(
            self.leases.clone(),
            claimed.iter().map(|(_, h, _)| h.clone()).collect(),
            self.ttl,
            proofs.clone(),
        );
        let mut done = Vec::new();
        for (target, held, warnings) in claimed {
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            let mut timings = OpTimings { lease: lease_time, ..OpTimings::default() };
            let fence = Fence::batched(self.leases.clone(), held, proofs.clone());
            let signalled = woken.contains(target.op());
            let (work, landing, stats) =
                self.due_then_tick(local, target, round_start, signalled, Some(&fence), &mut timings);
            timings.due += sync_time;
            done.push((target, work, landing, stats, fence, warnings, timings));
        }
        let pushing = Instant::now();
        let recorded = done.iter().any(|(_, _, landing, _, _, _, _)| *landing != tick::Landing::Nothing);
        let push = if recorded { Some(push_batch(ledger)) } else { None };
        let synced = !matches!(push, Some(PushStatus::NotPushed { .. }));
        let push_time = pushing.elapsed() / u32::try_from(done.len()).unwrap_or(u32::MAX).max(1);
        let renewed = renewer.stop();
        for (target, work, landing, stats, fence, mut warnings, mut timings) in done {
            let lost = fence.lost();
            let held = renewed.iter().find(|h| h.key == target.lease).cloned().unwrap_or_else(|| fence.held().clone());
            let pushed = match (&push, landing) {
                (Some(PushStatus::NotPushed { remote, reason }), tick::Landing::Pushed) => {
                    warnings.push(format!("the record is kept locally but did not reach {remote}: {reason}"));
                    Some(false)
                }
                (_, tick::Landing::Pushed) => Some(true),
                _ => None,
            };
            if let Some(mut stats) = stats {
                stats.pushed = pushed;
                self.hooks.ticked(target, &stats);
            }
            if lost.is_some() {
                self.held_map().remove(target.op());
            } else {
                self.hooks.lease(target, true);
                let releasable = match pushed {
                    None => self.held_map().get(target.op()).is_none_or(|h| h.releasable),
                    Some(landed) => landed,
                };
                self.held_map().insert(target.op().to_owned(), HeldLease { held, releasable });
            }
            timings.after = push_time;
            let mut line = self.report_of(target, work, lost.as_ref(), timings);
            line.warnings.splice(0..0, warnings);
            say(target, line);
        }
        synced
    }
}

/// Splits the ops of a batch from the rest: every op whose lease is already ours, plus the free
/// ops that hash to `holder` among it and `peers`; when none does, a share of the free ops the
/// peers have not claimed (stealing). At most `cap` free ops join the batch (the growing
/// batches of a round that began holding nothing; `None`: no limit). Both sides keep
/// `holder`'s visiting order.
fn choose<'a>(
    holder: &str,
    peers: &BTreeSet<String>,
    ours: Vec<&'a Target>,
    free: Vec<&'a Target>,
    cap: Option<usize>,
) -> (Vec<&'a Target>, Vec<&'a Target>) {
    let (mine, theirs): (Vec<&Target>, Vec<&Target>) =
        free.into_iter().partition(|t| owner(holder, peers, t.op()) == holder);
    let cap = cap.unwrap_or(usize::MAX);
    let mut batch = ours;
    let mut rest = Vec::new();
    if !mine.is_empty() {
        let take = mine.len().min(cap);
        let mut mine = mine.into_iter();
        batch.extend(mine.by_ref().take(take));
        rest.extend(mine);
        rest.extend(theirs);
    } else if batch.is_empty() {
        let share = theirs.len().div_ceil(peers.len() + 1).max(MIN_STEAL).min(cap);
        let mut theirs = theirs.into_iter();
        batch.extend(theirs.by_ref().take(share));
        rest.extend(theirs);
    } else {
        rest.extend(theirs);
    }
    (batch, rest)
}

/// Splits `ours` (the ops whose lease `holder` holds) into those it keeps and those it gives
/// back, each with the peer it hashes to: an op that hashes to a peer is given back when
/// `releasable` says its lease may be released (its last record reached the remote); one that
/// may not be stays in the batch this round. Both keep the order of `ours`.
fn split_given_back<'a>(
    holder: &str,
    peers: &BTreeSet<String>,
    ours: Vec<&'a Target>,
    releasable: impl Fn(&Target) -> bool,
) -> (Vec<&'a Target>, Vec<(&'a Target, String)>) {
    let mut keep = Vec::new();
    let mut given = Vec::new();
    for target in ours {
        let to = owner(holder, peers, target.op());
        if to != holder && releasable(target) {
            given.push((target, to.to_owned()));
        } else {
            keep.push(target);
        }
    }
    (keep, given)
}

/// The holder `op` hashes to among `holder` and `peers` (rendezvous hashing: every operator
/// computes the same owner from the same set).
fn owner<'h>(holder: &'h str, peers: &'h BTreeSet<String>, op: &str) -> &'h str {
    peers
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(holder))
        .max_by_key(|h| (rendezvous(h, op), *h))
        .unwrap_or(holder)
}

/// Pushes the batch's records: one sync of the ledger (its re-append loop on a rejected push).
fn push_batch(ledger: &ledger::Ledger) -> PushStatus {
    match ledger.sync() {
        Ok(report) => report.push,
        Err(e) => {
            PushStatus::NotPushed { remote: ledger.config().remote.clone().unwrap_or_default(), reason: chain(&e) }
        }
    }
}

/// Renews a batch's leases together every TTL/3 on its own thread (one fetch, one push), and
/// keeps [`Proofs`] of what landed for the batch's fences.
struct BatchRenewer {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Vec<Held>>,
    fallback: Vec<Held>,
}

impl BatchRenewer {
    fn start(store: LeaseStore, held: Vec<Held>, ttl: Duration, proofs: Proofs) -> BatchRenewer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let every = (ttl / 3).max(Duration::from_millis(10));
        let fallback = held.clone();
        let thread = std::thread::spawn(move || {
            let mut held = held;
            loop {
                match stopped.recv_timeout(every) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return held,
                }
                // A failed renewal is retried at the next period; the fences decide.
                let Ok(outcomes) = store.renew_every(&held, ttl, store.clock().now()) else { continue };
                let mut kept = Vec::new();
                for (h, outcome) in held.into_iter().zip(outcomes) {
                    match outcome {
                        Ok(Renewal::Renewed(renewed)) => {
                            proofs.set(&renewed.key, Proof::Landed(renewed.record.clone()));
                            kept.push(renewed);
                        }
                        Ok(Renewal::Lost { found }) => {
                            proofs.set(&h.key, Proof::Lost { by: found.map(|r| r.holder) });
                        }
                        Err(_) => kept.push(h),
                    }
                }
                held = kept;
            }
        });
        BatchRenewer { stop, thread, fallback }
    }

    /// Stops renewing; returns the leases still held, as last renewed.
    fn stop(self) -> Vec<Held> {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or(self.fallback)
    }
}

/// The shared state of a batch, for tests of the split.
#[cfg(test)]
mod tests {
    use super::*;
    use chant_lexicon::model::OpDocument;

    fn targets(n: usize) -> Vec<Target> {
        (0..n)
            .map(|i| {
                let json = format!(
                    r#"{{"version":1,"name":"op-{i:03}","overview":"o","env":"e","labels":{{}},"class":"read-only","phases":[]}}"#
                );
                let doc: OpDocument = serde_json::from_str(&json).unwrap();
                Target::new(&doc).unwrap()
            })
            .collect()
    }

    fn names(ts: &[&Target]) -> BTreeSet<String> {
        ts.iter().map(|t| t.op().to_owned()).collect()
    }

    #[test]
    fn peers_split_the_free_ops_between_them_without_overlap() {
        let all = targets(200);
        let holders = ["h:1:aaaa", "h:2:bbbb", "h:3:cccc", "h:4:dddd"];
        let mut union = BTreeSet::new();
        for h in holders {
            let peers: BTreeSet<String> = holders.iter().filter(|p| **p != h).map(|p| (*p).to_owned()).collect();
            let (batch, rest) = choose(h, &peers, Vec::new(), all.iter().collect(), None);
            assert_eq!(batch.len() + rest.len(), 200);
            assert!((25..=75).contains(&batch.len()), "{h}: a fair share, got {}", batch.len());
            let mine = names(&batch);
            assert!(union.is_disjoint(&mine), "{h} claims an op another peer claims");
            union.extend(mine);
        }
        assert_eq!(union.len(), 200, "every op is someone's");
    }

    #[test]
    fn an_operator_alone_claims_in_batches_growing_fourfold_from_eight_and_keeps_what_it_holds() {
        let all = targets(200);
        let mut free: Vec<&Target> = all.iter().collect();
        let mut cap = Some(FIRST_BATCH);
        let mut sizes = Vec::new();
        let mut claimed = BTreeSet::new();
        while !free.is_empty() {
            let (batch, rest) = choose("h:1:aaaa", &BTreeSet::new(), Vec::new(), free, cap);
            assert_eq!(batch.len() + rest.len(), 200 - claimed.len());
            let names = names(&batch);
            assert!(claimed.is_disjoint(&names), "an op claimed twice");
            claimed.extend(names);
            sizes.push(batch.len());
            free = rest;
            cap = cap.map(|c| c * GROWTH);
        }
        assert_eq!(sizes, vec![8, 32, 128, 32]);
        assert_eq!(claimed.len(), 200);
        // A daemon's next round: what it holds is renewed in its first batch, whatever the hash,
        // and without a limit (its round began holding leases).
        let held: Vec<&Target> = all.iter().collect();
        let (batch, rest) = choose("h:1:aaaa", &BTreeSet::new(), held.clone(), Vec::new(), None);
        assert_eq!((batch.len(), rest.len()), (200, 0));
        // The limit is on the free ops only: what is held always joins the batch.
        let (batch, rest) = choose("h:1:aaaa", &BTreeSet::new(), held[..20].to_vec(), held[20..].to_vec(), Some(8));
        assert_eq!((batch.len(), rest.len()), (28, 172));
    }

    /// Operators in lockstep, one claim a step: each step, every started operator chooses from
    /// the free ops as the last fetch showed them (before any of this step's claims), with the
    /// peers it sees (those that started at an earlier step), limited as `run_claimed` limits it
    /// (growing from FIRST_BATCH until it has seen a peer); an op several chose in the same step
    /// goes to one of them (the highest rendezvous score: no operator is favoured), the others'
    /// lease pushes lose it. Returns the ops each ticked.
    fn lockstep(starts: &[usize], ops: usize) -> Vec<usize> {
        let all = targets(ops);
        let holders: Vec<String> = (0..starts.len()).map(|i| format!("h:{i}:{i:04x}")).collect();
        let mut free: BTreeSet<String> = all.iter().map(|t| t.op().to_owned()).collect();
        let mut caps: Vec<Option<usize>> = vec![Some(FIRST_BATCH); starts.len()];
        let mut saw = vec![false; starts.len()];
        let mut ticked = vec![0; starts.len()];
        let mut step = 0;
        while !free.is_empty() {
            let mut chosen: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
            for (i, holder) in holders.iter().enumerate() {
                if starts[i] > step {
                    continue;
                }
                let peers: BTreeSet<String> =
                    (0..holders.len()).filter(|&p| p != i && starts[p] < step).map(|p| holders[p].clone()).collect();
                let seen: Vec<&Target> =
                    visiting_order(&all, holder).into_iter().filter(|t| free.contains(t.op())).collect();
                saw[i] |= !peers.is_empty();
                let limit = if saw[i] { None } else { caps[i] };
                let (batch, _) = choose(holder, &peers, Vec::new(), seen, limit);
                caps[i] = caps[i].map(|c| c * GROWTH);
                for t in batch {
                    let winner = chosen.entry(t.op().to_owned()).or_insert(i);
                    if rendezvous(holder, t.op()) > rendezvous(&holders[*winner], t.op()) {
                        *winner = i;
                    }
                }
            }
            for (op, i) in chosen {
                free.remove(&op);
                ticked[i] += 1;
            }
            step += 1;
            assert!(step < 100, "the ops run out");
        }
        assert_eq!(ticked.iter().sum::<usize>(), ops, "every op ticked exactly once");
        ticked
    }

    #[test]
    fn operators_started_together_or_apart_all_find_a_share() {
        // Started together: each claims 8, then sees the others and splits the rest.
        let together = lockstep(&[0, 0, 0, 0], 200);
        assert!(together.iter().all(|&n| (30..=70).contains(&n)), "{together:?}");
        // One operator a claim ahead of three others (they started while its first claim was
        // pushed) still leaves each of them a share: with a single opening batch it took all
        // but 8.
        let late = lockstep(&[0, 1, 1, 1], 200);
        assert!(late.iter().all(|&n| n >= 20), "{late:?}");
        // A second operator that starts after the first one's second claim (40 ops claimed)
        // still finds about half: with a single opening batch the first had claimed every op.
        let pair = lockstep(&[0, 2], 200);
        assert!(pair[1] >= 50, "{pair:?}");
        // Not covered: once the operators started together have seen each other, they claim
        // their whole shares, and one that starts after that finds nothing left at this fire time.
        let after = lockstep(&[0, 0, 0, 2], 200);
        assert_eq!(after[3], 0, "{after:?}");
    }

    #[test]
    fn a_daemon_gives_back_what_hashes_to_a_peer_it_sees_and_keeps_its_share() {
        let all = targets(200);
        let (a, b) = ("h:1:aaaa", "h:2:bbbb");
        // A holds everything (it started alone); B announced itself.
        let ours: Vec<&Target> = all.iter().collect();
        let peers: BTreeSet<String> = [b.to_owned()].into();
        let (keep, given) = split_given_back(a, &peers, ours.clone(), |_| true);
        assert_eq!(keep.len() + given.len(), 200);
        assert!((50..=150).contains(&given.len()), "about half goes to B, got {}", given.len());
        assert!(given.iter().all(|(t, to)| to == b && owner(a, &peers, t.op()) == b));
        assert!(keep.iter().all(|t| owner(a, &peers, t.op()) == a));
        // The batch is what A keeps; the ops given back are free for B, whose split claims
        // exactly them.
        let (batch, rest) = choose(a, &peers, keep.clone(), Vec::new(), None);
        assert_eq!((names(&batch), rest.len()), (names(&keep), 0));
        let freed: Vec<&Target> = given.iter().map(|(t, _)| *t).collect();
        let a_peer: BTreeSet<String> = [a.to_owned()].into();
        let (b_batch, b_rest) = choose(b, &a_peer, Vec::new(), freed.clone(), None);
        assert_eq!((names(&b_batch), b_rest.len()), (names(&freed), 0));
        // With no peer, nothing is given back.
        let (keep, given) = split_given_back(a, &BTreeSet::new(), ours, |_| true);
        assert_eq!((keep.len(), given.len()), (200, 0));
    }

    #[test]
    fn a_lease_whose_record_has_not_reached_the_remote_is_not_given_back() {
        let all = targets(100);
        let (a, b) = ("h:1:aaaa", "h:2:bbbb");
        let peers: BTreeSet<String> = [b.to_owned()].into();
        let unpushed = |t: &Target| t.op().ends_with('7');
        let (keep, given) = split_given_back(a, &peers, all.iter().collect(), |t| !unpushed(t));
        assert!(given.iter().all(|(t, _)| !unpushed(t)));
        let kept_for_b: Vec<&&Target> = keep.iter().filter(|t| owner(a, &peers, t.op()) == b).collect();
        assert!(!kept_for_b.is_empty() && kept_for_b.iter().all(|t| unpushed(t)), "kept only while unreleasable");
        let (batch, _) = choose(a, &peers, keep.clone(), Vec::new(), None);
        assert_eq!(names(&batch), names(&keep), "they tick in A's batch this round");
    }

    #[test]
    fn with_nothing_of_its_own_left_an_operator_steals_a_share() {
        let all = targets(60);
        let peers: BTreeSet<String> = ["h:2:bbbb".to_owned()].into();
        let theirs: Vec<&Target> =
            all.iter().filter(|t| rendezvous("h:2:bbbb", t.op()) > rendezvous("h:1:aaaa", t.op())).collect();
        let (batch, rest) = choose("h:1:aaaa", &peers, Vec::new(), theirs.clone(), None);
        assert_eq!(batch.len(), theirs.len().div_ceil(2).max(MIN_STEAL).min(theirs.len()));
        assert_eq!(batch.len() + rest.len(), theirs.len());
    }
}
