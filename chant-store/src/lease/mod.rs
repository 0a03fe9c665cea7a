//! The lease: single-writer coordination per op over a git ref (DESIGN.md section 8).
//!
//! Each op has a ref `refs/chant/lease/<member-prefix><op>` that points directly at a blob (no
//! tree, no commit) holding a [`LeaseRecord`]: `{op, holder, token, acquiredAt, expiresAt}`.
//! Every write is a compare-and-swap on that ref against the value last read, so of two
//! acquirers exactly one wins; every acquisition writes a unique blob (the holder and the token
//! are random), which is what makes gix's "must not exist" check a real arbitration.
//!
//! - **Acquire** takes a lease that is absent, expired, or already held by the same holder.
//!   A new fencing token is minted only when the lease changes hands; renewal keeps it. A
//!   local lease this store wrote less than a third of its TTL ago is kept as written (the
//!   holder renews every TTL/3): a daemon ticking every second writes its lease once per TTL/3,
//!   not once per round.
//! - **Renew** extends a lease only while its holder and token are still the live ones.
//! - **Release** deletes the ref, again by compare-and-swap, only when holder and token match.
//! - **Fence**: [`LeaseStore::current`] (and [`LeaseStore::still_holds`]) re-read the lease; a
//!   tick makes that check before each of its side effects (each dispatch and its record append).
//!   This is a lease-*loss* check, not a guarantee that nobody else acted in between: a holder
//!   that stalled past its TTL learns that it lost the lease before its next side effect, not
//!   before the peer's.
//!
//! Expiry compares `expiresAt` with the local clock (the [`Clock`] of the ledger the store was
//! made from, so `CHANT_NOW` drives it in tests): holders on different machines are assumed to
//! have clocks that agree to well within the TTL. A TTL is at most [`MAX_TTL`] (24h), so an
//! `expiresAt` further ahead than that is no live lease but a stale one (a clock far ahead, or a
//! blob written by hand): it is taken over like an expired lease, the acquisition says so
//! ([`Acquisition::Acquired::stale`]), and `operator status` shows it as stale. Without that, one
//! blob dated in the year 9999 would lock its op out for ever. Fencing tokens and holder ids come from the
//! operating system's random number generator ([`crate::id`]); when it fails, no lease is taken
//! ([`Error::Random`]).
//!
//! A `<ref>.lock` that outlives the ref-lock timeout, is older than [`STALE_LOCK_AGE`] and has no
//! possible writer left (no other chant process of the repository is alive, by their liveness
//! markers: [`Repo::other_processes_alive`]) is stale: [`Error::StaleLock`] names the path and the
//! `rm` that fixes it; removing it is a human's decision. A younger lock, or one a live process
//! may hold, is a lost race, reported like any lost compare-and-swap.
//!
//! With a remote configured (`[ledger] remote`), the remote arbitrates: an acquire or a renewal
//! counts only when its `git push --force-with-lease` lands (each op's lease under its own
//! `--force-with-lease`; an operator round pushes a batch of them in one non-atomic push, in
//! which the remote decides each ref on its own: [`LeaseStore::acquire_every`]); a push that
//! does not land undoes the local write. Reads fetch the remote's lease into
//! `refs/chant/lease-remote/<member-prefix><op>`, never over the local ref. Without a remote the
//! lease is local to the repository: two machines sharing no remote are not coordinated at all.
//!
//! An operator that holds no op's lease but shares the remote with others makes itself seen with
//! a *presence lease* ([`LeaseKey::presence`]): an ordinary lease record on
//! `refs/chant/lease/_operators/<16 hex of a hash of the holder id>`, a ref no op or member lease
//! can take (op names start with a lowercase letter, member prefixes are `_members/...`).

mod batch;
mod memo;
mod remote;

pub use batch::Seen;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::error::chain;
use crate::git::{self, ObjectId, Repo, SharedRepo, cmd::Git};
use crate::ledger::{self, Ledger};

pub use crate::ledger::STALE_LOCK_AGE;

/// The prefix of every lease ref.
pub const REF_PREFIX: &str = "refs/chant/lease/";
/// The prefix of the local copies of the remote's lease refs.
pub const REMOTE_REF_PREFIX: &str = "refs/chant/lease-remote/";
/// The directory, under [`REF_PREFIX`], of the operators' presence leases.
pub const PRESENCE_DIR: &str = "_operators/";
/// The default time a lease lives without renewal.
pub const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// The longest time a lease may live without renewal (`--lease-ttl` is bounded by it); a lease
/// whose expiry lies further ahead is stale.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What [`LeaseStore`] operations return when a lease cannot be read, written or pushed. A lease
/// held by someone else is not an error: it is an [`Acquisition::Refused`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A lock file on a ref (or on `packed-refs`) outlived the stale-lock age.
    #[error(
        "ref \"{reference}\" has a stale lock file at {} ({}s old) — a previous git process (e.g. a killed \
         `chant operator`) was interrupted mid-write and left it behind. Fix: remove it (`rm {}`) and retry",
        path.display(), age.as_secs(), path.display()
    )]
    StaleLock {
        /// The ref whose update was blocked.
        reference: String,
        /// The lock file.
        path: std::path::PathBuf,
        /// Its age.
        age: Duration,
    },
    /// A lock held on the remote blocks the lease ref there.
    #[error("ref \"{reference}\" is locked on remote {remote}: {detail}; remove the lock file on the remote and retry")]
    RemoteLocked {
        /// The remote.
        remote: String,
        /// The ref.
        reference: String,
        /// What the remote said.
        detail: String,
    },
    /// The remote could not be fetched from or pushed to.
    #[error("the lease ref \"{reference}\" could not be synchronised with remote {remote}: {detail}")]
    Remote {
        /// The remote.
        remote: String,
        /// The ref.
        reference: String,
        /// What failed.
        detail: String,
    },
    /// A name is not valid in a lease ref.
    #[error("invalid {what} name {name:?} for a lease ref")]
    InvalidName {
        /// `op` or `member`.
        what: &'static str,
        /// The rejected name.
        name: String,
    },
    /// Local git storage failed.
    #[error("lease storage failed")]
    Git(#[from] git::Error),
    /// No fencing token or holder id could be minted.
    #[error("cannot mint a lease")]
    Random(#[from] crate::id::Unavailable),
    /// A lease record could not be encoded.
    #[error("cannot encode a lease record")]
    Encode(#[source] serde_json::Error),
    /// A TTL longer than [`MAX_TTL`] was asked for.
    #[error("a lease TTL of {}s is longer than the maximum of 24h", ttl.as_secs())]
    TtlTooLong {
        /// The TTL asked for.
        ttl: Duration,
    },
}

/// The result type of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The content of a lease blob. Serialised in this field order (`op, holder, token, acquiredAt,
/// expiresAt`), without whitespace, as the original writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRecord {
    /// The op the lease is for.
    pub op: String,
    /// Who holds it: `<host>:<pid>:<random>`, diagnostic only.
    pub holder: String,
    /// The fencing token, minted when the lease changes hands.
    pub token: String,
    /// When this holder took the lease.
    pub acquired_at: String,
    /// When it lapses unless renewed.
    pub expires_at: String,
}

impl LeaseRecord {
    /// Returns true when `other` is the same holding of the lease: the same holder and token
    /// (renewals change the expiry, never these).
    pub fn same_holding(&self, other: &LeaseRecord) -> bool {
        self.holder == other.holder && self.token == other.token
    }

    /// Returns true while the lease has not expired at `now` (expired iff `expiresAt <= now`; an
    /// unreadable `expiresAt` counts as expired) and is not [stale](LeaseRecord::is_stale).
    pub fn is_live(&self, now: Timestamp) -> bool {
        crate::clock::parse(&self.expires_at).is_some_and(|e| e > now) && !self.is_stale(now)
    }

    /// Returns true when `expiresAt` lies further ahead of `now` than [`MAX_TTL`]: no holder
    /// could have written it with a TTL chant accepts, so the lease is taken over as expired.
    pub fn is_stale(&self, now: Timestamp) -> bool {
        crate::clock::parse(&self.expires_at).is_some_and(|e| e > add(now, MAX_TTL))
    }

    fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(Error::Encode)
    }

    /// Reads a lease blob as a stored lease writes it; `None` for bytes that are not one.
    pub fn parse(bytes: &[u8]) -> Option<LeaseRecord> {
        serde_json::from_slice(bytes).ok()
    }
}

/// Identifies the lease of one op: the op and its workspace member.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseKey {
    member: Option<String>,
    op: String,
}

impl LeaseKey {
    /// Creates the key of `op`'s lease in `member` (`None`: a flat project).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidName`] when the op or member cannot be part of a ref name.
    pub fn new(member: Option<&str>, op: &str) -> Result<Self> {
        // The ledger's key rules are the same: a name valid there is a valid ref component.
        ledger::ShardKey::gate(member, op).map_err(|e| match e {
            ledger::Error::InvalidName { what, name } => Error::InvalidName { what, name },
            _ => Error::InvalidName { what: "op", name: op.to_owned() },
        })?;
        Ok(LeaseKey { member: member.map(str::to_owned), op: op.to_owned() })
    }

    /// Creates the key of the presence lease of the operator `holder`:
    /// `refs/chant/lease/_operators/<16 hex of a hash of the holder id>`. No op or member lease
    /// can have that ref (an op name starts with a lowercase letter; a member prefix is
    /// `_members/...`); its record's `op` is `_operators/<hex>`.
    pub fn presence(holder: &str) -> Self {
        let hash = crate::model::contract::fnv1a64(holder.as_bytes());
        LeaseKey { member: None, op: format!("{PRESENCE_DIR}{hash:016x}") }
    }

    /// Returns true for a presence lease's key ([`LeaseKey::presence`]).
    pub fn is_presence(&self) -> bool {
        self.member.is_none() && self.op.starts_with(PRESENCE_DIR)
    }

    /// Returns the op.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// Returns the member.
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    fn suffix(&self) -> String {
        let prefix: String = self
            .member
            .as_deref()
            .map(|m| m.split('/').map(|p| format!("_members/{p}/")).collect())
            .unwrap_or_default();
        format!("{prefix}{}", self.op)
    }

    /// Returns the lease ref: `refs/chant/lease/<member-prefix><op>`.
    pub fn ref_name(&self) -> String {
        format!("{REF_PREFIX}{}", self.suffix())
    }

    /// Returns the local copy of the remote's lease ref: `refs/chant/lease-remote/<member-prefix><op>`.
    pub fn remote_ref_name(&self) -> String {
        format!("{REMOTE_REF_PREFIX}{}", self.suffix())
    }
}

/// A lease this process holds: the record and the blob the ref points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Which lease.
    pub key: LeaseKey,
    /// The record as written.
    pub record: LeaseRecord,
    /// The blob the ref points at.
    pub blob: ObjectId,
}

/// Why an acquisition did not take the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Another holder's lease is live.
    Held,
    /// Another writer moved the ref first (a lost compare-and-swap, a young lock, or a push the
    /// remote refused because the lease moved there).
    Race,
}

/// How an acquisition ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquisition {
    /// The lease is ours.
    Acquired {
        /// The lease.
        held: Held,
        /// Whether we already held it (the token was kept).
        renewed: bool,
        /// The record taken over because its expiry lay further ahead than [`MAX_TTL`] (see
        /// [`LeaseRecord::is_stale`]), for the caller to report.
        stale: Option<LeaseRecord>,
    },
    /// Someone else has it.
    Refused {
        /// The live record, when known.
        held_by: Option<LeaseRecord>,
        /// Why.
        reason: Refusal,
    },
}

/// How a renewal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renewal {
    /// The lease was extended; the token is unchanged.
    Renewed(Held),
    /// The lease is no longer ours (taken over, released, or its token changed).
    Lost {
        /// The record found instead, if any.
        found: Option<LeaseRecord>,
    },
}

/// What the lease of one op looks like from local refs alone (no fetch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseView {
    /// The record the local lease ref holds.
    pub local: Option<LeaseRecord>,
    /// The record last fetched from the remote.
    pub remote: Option<LeaseRecord>,
}

impl LeaseView {
    /// Returns the fresher of the two records (by `acquiredAt`, then `expiresAt`; ties: local)
    /// and where it came from (`"local"` or `"remote"`).
    pub fn current(&self) -> Option<(&LeaseRecord, &'static str)> {
        let key = |r: &LeaseRecord| (crate::clock::parse(&r.acquired_at), crate::clock::parse(&r.expires_at));
        match (&self.local, &self.remote) {
            (Some(l), Some(r)) if key(r) > key(l) => Some((r, "remote")),
            (Some(l), _) => Some((l, "local")),
            (None, Some(r)) => Some((r, "remote")),
            (None, None) => None,
        }
    }
}

/// Returns a holder id for this process: `<host>:<pid>:<8 random hex digits>`.
///
/// # Errors
///
/// [`Error::Random`] when the operating system's generator fails.
pub fn holder_id() -> Result<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    Ok(format!("{host}:{}:{}", std::process::id(), crate::id::hex(8)?))
}

/// Leases of one repository, written through gix and pushed through the git binary when a
/// remote is configured. Cheap to clone and share between threads.
#[derive(Clone)]
pub struct LeaseStore {
    repo: SharedRepo,
    git: Git,
    remote: Option<String>,
    clock: Clock,
    /// What this store wrote (the `memo` module): its records are never read back, and its
    /// own renewals and releases swap against the value it last set.
    written: Arc<memo::Memo>,
}

impl LeaseStore {
    /// Returns the lease store of the ledger's repository, with the ledger's remote and clock.
    pub fn new(ledger: &Ledger) -> Self {
        LeaseStore {
            repo: ledger.repo().clone(),
            git: ledger.git().clone(),
            remote: ledger.config().remote.clone(),
            clock: ledger.clock(),
            written: Arc::default(),
        }
    }

    /// Returns the configured remote, if any.
    pub fn remote(&self) -> Option<&str> {
        self.remote.as_deref()
    }

    /// Returns the clock leases are dated and expired by.
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// Reads the lease of `key` from local refs only: the local ref and the last fetched copy
    /// of the remote's.
    ///
    /// # Errors
    ///
    /// Git storage errors.
    pub fn read(&self, key: &LeaseKey) -> Result<LeaseView> {
        let repo = self.repo.local();
        let local = self.record(&repo, &key.ref_name())?.map(|(_, r)| r);
        let remote = self.record(&repo, &key.remote_ref_name())?.map(|(_, r)| r);
        Ok(LeaseView { local, remote })
    }

    /// Fetches the remote's lease of `key` into its `lease-remote` ref (removing that copy when
    /// the remote has none). Does nothing without a remote.
    ///
    /// # Errors
    ///
    /// [`Error::Remote`] when the fetch fails.
    pub fn fetch(&self, key: &LeaseKey) -> Result<()> {
        match &self.remote {
            None => Ok(()),
            Some(remote) => remote::fetch(self, remote, key).map(drop),
        }
    }

    /// Acquires `key` for `holder` at `now` for `ttl`: takes it when absent, expired, stale or
    /// already ours, keeping the token when ours.
    ///
    /// # Errors
    ///
    /// [`Error::TtlTooLong`] past [`MAX_TTL`], [`Error::StaleLock`], [`Error::RemoteLocked`],
    /// [`Error::Remote`] and storage errors; a lease held by someone else, or a lost race, is
    /// [`Acquisition::Refused`].
    pub fn acquire(&self, key: &LeaseKey, holder: &str, ttl: Duration, now: Timestamp) -> Result<Acquisition> {
        check_ttl(ttl)?;
        let repo = self.repo.local();
        if let Some(held) = self.renew_in_place(&repo, key, holder, ttl, now)? {
            return Ok(Acquisition::Acquired { held, renewed: true, stale: None });
        }
        let local_ref = key.ref_name();
        // The compare-and-swap is against the local value this decision was made from.
        let local_sha = repo.read_ref(&local_ref)?;
        let (remote_sha, current) = match &self.remote {
            None => {
                let found = match local_sha {
                    Some(sha) => self.record_at(&repo, sha)?,
                    None => None,
                };
                (None, found)
            }
            Some(remote) => {
                let remote_sha = remote::fetch(self, remote, key)?;
                let found = self.record(&repo, &key.remote_ref_name())?;
                (remote_sha, found.map(|(_, r)| r))
            }
        };
        let stale = current.as_ref().filter(|r| r.is_stale(now)).cloned();
        let (record, renewed) = match &current {
            // A stale record is never ours to extend, even under our holder id: its token is
            // replaced with a fresh lease.
            Some(r) if r.holder == holder && stale.is_none() => (extend(r, ttl, now), true),
            Some(r) if r.is_live(now) => {
                return Ok(Acquisition::Refused { held_by: Some(r.clone()), reason: Refusal::Held });
            }
            _ => (fresh(key, holder, ttl, now)?, false),
        };
        match self.write(&repo, key, &record, local_sha, remote_sha)? {
            Some(blob) => Ok(Acquisition::Acquired { held: Held { key: key.clone(), record, blob }, renewed, stale }),
            None => Ok(Acquisition::Refused { held_by: self.current_record(&repo, key)?, reason: Refusal::Race }),
        }
    }

    /// Acquires like [`LeaseStore::acquire`] at the store's clock, retrying a refusal every
    /// 100 ms until `wait` has passed (hand ticks and runs wait up to 2 s).
    ///
    /// # Errors
    ///
    /// As [`LeaseStore::acquire`].
    pub fn acquire_waiting(&self, key: &LeaseKey, holder: &str, ttl: Duration, wait: Duration) -> Result<Acquisition> {
        let outcome = Backoff::polling(Duration::from_millis(100), wait).retry(|_| {
            match self.acquire(key, holder, ttl, self.clock.now()) {
                Ok(refused @ Acquisition::Refused { .. }) => ControlFlow::Continue(refused),
                done => ControlFlow::Break(done),
            }
        });
        match outcome {
            Ok(done) => done,
            Err(gave_up) => Ok(gave_up.last),
        }
    }

    /// Extends `held` to `now + ttl` if its holder and token are still the live ones.
    ///
    /// # Errors
    ///
    /// As [`LeaseStore::acquire`].
    pub fn renew(&self, held: &Held, ttl: Duration, now: Timestamp) -> Result<Renewal> {
        check_ttl(ttl)?;
        let repo = self.repo.local();
        let local_sha = repo.read_ref(&held.key.ref_name())?;
        let (remote_sha, current) = match (&self.remote, local_sha) {
            (None, Some(sha)) => (None, self.record_at(&repo, sha)?),
            (None, None) => (None, None),
            (Some(_), _) => self.authoritative(&repo, &held.key)?,
        };
        match current {
            Some(r) if r.same_holding(&held.record) => {
                let record = extend(&r, ttl, now);
                match self.write(&repo, &held.key, &record, local_sha, remote_sha)? {
                    Some(blob) => Ok(Renewal::Renewed(Held { key: held.key.clone(), record, blob })),
                    None => Ok(Renewal::Lost { found: self.current_record(&repo, &held.key)? }),
                }
            }
            found => Ok(Renewal::Lost { found }),
        }
    }

    /// Returns true when `held`'s holder and token are still the live lease (the fence check
    /// a tick makes before each of its side effects). Fetches first with a remote.
    ///
    /// # Errors
    ///
    /// Fetch and storage errors.
    pub fn still_holds(&self, held: &Held) -> Result<bool> {
        Ok(self.current(&held.key)?.is_some_and(|r| r.same_holding(&held.record)))
    }

    /// Returns the record that decides who holds `key` now: the remote's (after a fetch) with a
    /// remote, else the local ref's.
    ///
    /// # Errors
    ///
    /// Fetch and storage errors.
    pub fn current(&self, key: &LeaseKey) -> Result<Option<LeaseRecord>> {
        let repo = self.repo.local();
        Ok(self.authoritative(&repo, key)?.1)
    }

    /// Releases `held` if its holder and token are still the live lease: deletes the local ref
    /// and, with a remote, pushes the deletion. Returns false when the lease is no longer ours
    /// (nothing is touched then).
    ///
    /// # Errors
    ///
    /// As [`LeaseStore::acquire`].
    pub fn release(&self, held: &Held) -> Result<bool> {
        let repo = self.repo.local();
        let local_ref = held.key.ref_name();
        let is_ours = |r: &LeaseRecord| r.same_holding(&held.record);
        // Without a remote, a lease this store set last is deleted by a compare-and-swap against
        // that value, unread: the swap reads the ref under its lock; one that finds another value
        // falls back to reading it.
        if self.remote.is_none()
            && let Some((blob, record)) = self.written.last_set(&local_ref)
            && is_ours(&record)
        {
            match repo.delete_ref(&local_ref, blob) {
                Ok(()) => {
                    self.written.set(&local_ref, None);
                    return Ok(true);
                }
                Err(e) => {
                    if let Some(err) = lock_error(&repo, &local_ref, &e) {
                        return Err(err);
                    }
                    if !matches!(e, git::Error::RefConflict { .. } | git::Error::RefLocked { .. }) {
                        return Err(e.into());
                    }
                    self.written.set(&local_ref, None);
                }
            }
        }
        // Read once: without a remote the local record is the authoritative one, and the
        // deletion below is a compare-and-swap against the very value read here.
        let local = self.record(&repo, &local_ref)?;
        let (remote_sha, ours) = match &self.remote {
            None => (None, local.as_ref().is_some_and(|(_, r)| is_ours(r))),
            Some(remote) => {
                let sha = remote::fetch(self, remote, &held.key)?;
                (sha, self.record(&repo, &held.key.remote_ref_name())?.is_some_and(|(_, r)| is_ours(&r)))
            }
        };
        if !ours {
            return Ok(false);
        }
        if let (Some(remote), Some(expected)) = (&self.remote, remote_sha) {
            remote::push_delete(self, &repo, remote, &held.key, expected)?;
        }
        if let Some((sha, record)) = local
            && is_ours(&record)
        {
            match repo.delete_ref(&local_ref, sha) {
                Ok(()) => self.written.set(&local_ref, None),
                Err(e) => {
                    if let Some(err) = lock_error(&repo, &local_ref, &e) {
                        return Err(err);
                    }
                    if !matches!(e, git::Error::RefConflict { .. } | git::Error::RefLocked { .. }) {
                        return Err(e.into());
                    }
                }
            }
        }
        Ok(true)
    }

    /// The record that decides who holds the lease, and the remote's value to push against: the
    /// remote's (after a fetch) with a remote, else the local ref's.
    fn authoritative(&self, repo: &Repo, key: &LeaseKey) -> Result<(Option<ObjectId>, Option<LeaseRecord>)> {
        match &self.remote {
            None => Ok((None, self.record(repo, &key.ref_name())?.map(|(_, r)| r))),
            Some(remote) => {
                let sha = remote::fetch(self, remote, key)?;
                Ok((sha, self.record(repo, &key.remote_ref_name())?.map(|(_, r)| r)))
            }
        }
    }

    /// The current record after a lost race, for the refusal.
    fn current_record(&self, repo: &Repo, key: &LeaseKey) -> Result<Option<LeaseRecord>> {
        let name = if self.remote.is_some() { key.remote_ref_name() } else { key.ref_name() };
        Ok(self.record(repo, &name)?.map(|(_, r)| r))
    }

    /// Writes `record` to the local ref by compare-and-swap and, with a remote, pushes it against
    /// `remote_sha`. `Ok(None)` is a lost race (nothing of ours is left behind).
    fn write(
        &self,
        repo: &Repo,
        key: &LeaseKey,
        record: &LeaseRecord,
        before: Option<ObjectId>,
        remote_sha: Option<ObjectId>,
    ) -> Result<Option<ObjectId>> {
        let local_ref = key.ref_name();
        let blob = repo.write_blob(&record.to_bytes()?)?;
        self.written.wrote(blob, record);
        match repo.update_ref(&local_ref, blob, before, "chant: lease") {
            Ok(()) => self.written.set(&local_ref, Some(blob)),
            Err(e) => {
                if let Some(err) = lock_error(repo, &local_ref, &e) {
                    return Err(err);
                }
                return match e {
                    git::Error::RefConflict { .. } => {
                        // The ref holds another value than the one this store last set.
                        self.written.set(&local_ref, None);
                        Ok(None)
                    }
                    git::Error::RefLocked { .. } => Ok(None),
                    other => Err(other.into()),
                };
            }
        }
        let Some(remote) = &self.remote else { return Ok(Some(blob)) };
        let landed = remote::push(self, repo, remote, key, blob, remote_sha);
        match landed {
            Ok(true) => Ok(Some(blob)),
            Ok(false) => {
                self.undo(repo, &local_ref, blob, before);
                Ok(None)
            }
            Err(e) => {
                self.undo(repo, &local_ref, blob, before);
                Err(e)
            }
        }
    }
}

/// Why a [`Renewer`] stopped renewing before it was asked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewalEnded {
    /// The lease was no longer ours at a renewal.
    Lost {
        /// The holder found instead, if any.
        by: Option<String>,
    },
    /// The renewal thread panicked.
    Panicked,
}

/// Renews a held lease every TTL/3 on its own thread while a tick runs, so a long tick keeps
/// its lease; [`Renewer::stop`] ends it and hands back the lease as last renewed.
pub struct Renewer {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<(Held, Option<RenewalEnded>)>,
}

impl Renewer {
    /// Starts renewing `held` through `store` every `ttl / 3`, at the store's clock.
    pub fn start(store: LeaseStore, held: Held, ttl: Duration) -> Renewer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let every = (ttl / 3).max(Duration::from_millis(10));
        let thread = std::thread::spawn(move || {
            let mut held = held;
            loop {
                match stopped.recv_timeout(every) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return (held, None),
                }
                match store.renew(&held, ttl, store.clock.now()) {
                    Ok(Renewal::Renewed(renewed)) => held = renewed,
                    Ok(Renewal::Lost { found }) => {
                        return (held, Some(RenewalEnded::Lost { by: found.map(|r| r.holder) }));
                    }
                    // A failed renewal is retried at the next period; the fence check decides.
                    Err(_) => {}
                }
            }
        });
        Renewer { stop, thread }
    }

    /// Stops renewing and returns the lease as last renewed, with why renewal ended early, if
    /// it did.
    pub fn stop(self, fallback: Held) -> (Held, Option<RenewalEnded>) {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or((fallback, Some(RenewalEnded::Panicked)))
    }
}

/// Turns a lock that outlived the stale-lock age with no live writer into [`Error::StaleLock`];
/// `None` otherwise.
fn lock_error(repo: &Repo, reference: &str, e: &git::Error) -> Option<Error> {
    match e {
        git::Error::RefLocked { lock_path, age: Some(age), .. } if repo.lock_is_stale(*age, STALE_LOCK_AGE) => {
            Some(Error::StaleLock { reference: reference.to_owned(), path: lock_path.clone(), age: *age })
        }
        _ => None,
    }
}

/// Checks `<ref>.lock` of `reference` before updating it: one older than the stale-lock age, with
/// no other chant process of the repository alive, is [`Error::StaleLock`]. A younger one is left to the writer's own lock wait. `packed-refs.lock`
/// is not checked: an update takes only `<ref>.lock` (a stale `packed-refs.lock` is shown by
/// `operator status`).
///
/// # Errors
///
/// [`Error::StaleLock`].
pub fn check_stale_lock(repo: &Repo, reference: &str) -> Result<()> {
    let (path, age) = repo.ref_lock_file(reference);
    match age {
        Some(age) if repo.lock_is_stale(age, STALE_LOCK_AGE) => {
            Err(Error::StaleLock { reference: reference.to_owned(), path, age })
        }
        _ => Ok(()),
    }
}

impl LeaseStore {
    /// Puts the local ref back where it was after a push that did not land; best effort, since a
    /// local ref that claims a lease the remote refused is corrected by the next read of the remote.
    fn undo(&self, repo: &Repo, name: &str, ours: ObjectId, before: Option<ObjectId>) {
        self.written.set(name, None);
        let _ = match before {
            Some(previous) => repo.update_ref(name, previous, Some(ours), "chant: lease push refused"),
            None => repo.delete_ref(name, ours),
        };
    }

    /// The ref `name` and the record it points at.
    fn record(&self, repo: &Repo, name: &str) -> Result<Option<(ObjectId, LeaseRecord)>> {
        let Some(sha) = repo.read_ref(name)? else { return Ok(None) };
        Ok(self.record_at(repo, sha)?.map(|r| (sha, r)))
    }

    /// The record of blob `sha`: remembered when this store wrote it, else read.
    fn record_at(&self, repo: &Repo, sha: ObjectId) -> Result<Option<LeaseRecord>> {
        if let Some(record) = self.written.record(sha) {
            return Ok(Some(record));
        }
        read_record_at(repo, sha)
    }

    /// Renews `key` for `holder` without reading the ref first, when this store set it last to
    /// a record of `holder` that is not stale: the compare-and-swap expects that value, and it
    /// reads the ref under its lock anyway. `Ok(None)` when there is no such value or the swap
    /// found another (the caller reads and decides afresh). Local leases only: with a remote,
    /// the remote's value decides.
    fn renew_in_place(
        &self,
        repo: &Repo,
        key: &LeaseKey,
        holder: &str,
        ttl: Duration,
        now: Timestamp,
    ) -> Result<Option<Held>> {
        if self.remote.is_some() {
            return Ok(None);
        }
        let Some((blob, ours)) = self.written.last_set(&key.ref_name()) else { return Ok(None) };
        if ours.holder != holder || ours.is_stale(now) {
            return Ok(None);
        }
        if written_within_a_third(&ours, ttl, now) {
            // A holder renews every TTL/3 (DESIGN §8): the lease this store wrote less than a
            // third of `ttl` ago still runs for two thirds of it, so it is kept as written, once
            // the ref is seen to still hold it (a read, no blob, no lock).
            if repo.read_ref(&key.ref_name())? == Some(blob) {
                return Ok(Some(Held { key: key.clone(), record: ours, blob }));
            }
            self.written.set(&key.ref_name(), None);
            return Ok(None);
        }
        let record = extend(&ours, ttl, now);
        Ok(self.write(repo, key, &record, Some(blob), None)?.map(|blob| Held { key: key.clone(), record, blob }))
    }
}

fn read_record_at(repo: &Repo, sha: ObjectId) -> Result<Option<LeaseRecord>> {
    let record = match repo.read_blob(sha) {
        Ok(bytes) => LeaseRecord::parse(&bytes),
        Err(git::Error::ObjectKind { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    // An unreadable lease blob is treated as an expired lease by someone unknown: it can be
    // taken over, and the compare-and-swap still runs against its id.
    Ok(Some(record.unwrap_or_else(|| LeaseRecord {
        op: String::new(),
        holder: "(unreadable lease blob)".into(),
        token: String::new(),
        acquired_at: String::new(),
        expires_at: String::new(),
    })))
}

/// A lease for a new holder, with a new fencing token from the operating system's generator.
fn fresh(key: &LeaseKey, holder: &str, ttl: Duration, now: Timestamp) -> Result<LeaseRecord> {
    Ok(LeaseRecord {
        op: key.op.clone(),
        holder: holder.to_owned(),
        token: crate::id::uuid()?,
        acquired_at: crate::clock::format(now),
        expires_at: crate::clock::format(add(now, ttl)),
    })
}

/// Whether `record` still runs for at least two thirds of `ttl` at `now`: it was written (or
/// last renewed) for `ttl` less than `ttl / 3` ago.
fn written_within_a_third(record: &LeaseRecord, ttl: Duration, now: Timestamp) -> bool {
    let Some(expires) = crate::clock::parse(&record.expires_at) else { return false };
    let keep = ttl.saturating_sub(ttl / 3);
    add(now, keep) <= expires
}

fn extend(record: &LeaseRecord, ttl: Duration, now: Timestamp) -> LeaseRecord {
    LeaseRecord { expires_at: crate::clock::format(add(now, ttl)), ..record.clone() }
}

/// Refuses a TTL past [`MAX_TTL`].
fn check_ttl(ttl: Duration) -> Result<()> {
    if ttl > MAX_TTL { Err(Error::TtlTooLong { ttl }) } else { Ok(()) }
}

fn add(now: Timestamp, ttl: Duration) -> Timestamp {
    jiff::SignedDuration::try_from(ttl).ok().and_then(|d| now.checked_add(d).ok()).unwrap_or(Timestamp::MAX)
}
