//! The fence: a tick's check that the lease it runs under is still its own, made before each of
//! its side effects (every dispatch and the record append).
//!
//! A [`Fence`] re-reads the lease (fetching it first with a remote) and compares holder and
//! token with the ones the tick started under. The first check that finds the lease lost, or
//! cannot read it (a check that cannot be made fails closed), is remembered: every later check
//! answers the same at once, so a fenced tick dispatches nothing more and records `fenced:
//! true`. This is a lease-*loss* check, not a guarantee that nobody else acted in between: a
//! holder that stalled past its TTL learns that it lost the lease before its next side effect,
//! not before the peer's.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use chant_store::lease::{Held, LeaseKey, LeaseRecord, LeaseStore};

use super::record::LeaseStamp;

/// Why a fence check failed: the tick no longer holds its lease, or could not tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// Another holder's lease (or none) stands where ours was.
    TakenOver {
        /// The holder found instead, `None` when the lease was released or deleted.
        by: Option<String>,
    },
    /// The lease could not be read, so the tick cannot know it still holds it.
    Unreadable {
        /// Why, in one line.
        error: String,
    },
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::TakenOver { by: Some(by) } => write!(f, "the lease was lost mid-tick (now held by {by})"),
            Lost::TakenOver { by: None } => f.write_str("the lease was lost mid-tick (no one holds it now)"),
            Lost::Unreadable { error } => write!(f, "the lease could not be read to check it is still ours: {error}"),
        }
    }
}

/// The lease a tick runs under, checked before each side effect. Cheap to clone; clones share
/// what the checks found.
#[derive(Clone)]
pub struct Fence {
    store: LeaseStore,
    held: Held,
    lost: Arc<Mutex<Option<Lost>>>,
    proofs: Option<Proofs>,
}

/// What a batch of leases kept renewed through the remote proves (an operator round with a
/// remote claims, renews and releases its ops' leases in batches): per lease, the record of its
/// last write the remote accepted, or that a renewal found it lost. A fence of a lease in the
/// batch answers from it without a fetch while that record has not expired: no other holder
/// takes a lease before its `expiresAt` (the clock-skew assumption every lease makes), so a
/// lease whose last landed write runs until later than now is still ours. Past that expiry the
/// fence reads the remote as an unbatched one does. Cheap to clone; clones share the proofs.
#[derive(Debug, Clone, Default)]
pub struct Proofs(Arc<Mutex<HashMap<LeaseKey, Proof>>>);

/// What [`Proofs`] know of one lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// The remote accepted this record (an acquisition or a renewal).
    Landed(LeaseRecord),
    /// A renewal found the lease another holder's (or nobody's).
    Lost {
        /// The holder found instead.
        by: Option<String>,
    },
}

impl Proofs {
    /// Records what is known of `key`'s lease now.
    pub fn set(&self, key: &LeaseKey, proof: Proof) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone(), proof);
    }

    /// Returns what is known of `key`'s lease.
    pub fn get(&self, key: &LeaseKey) -> Option<Proof> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }
}

impl fmt::Debug for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fence").field("held", &self.held).field("lost", &self.lost()).finish_non_exhaustive()
    }
}

impl Fence {
    /// Creates the fence of `held`, read through `store`.
    pub fn new(store: LeaseStore, held: Held) -> Fence {
        Fence { store, held, lost: Arc::default(), proofs: None }
    }

    /// Creates the fence of `held`, a lease of a batch whose renewals keep `proofs`.
    pub fn batched(store: LeaseStore, held: Held, proofs: Proofs) -> Fence {
        Fence { store, held, lost: Arc::default(), proofs: Some(proofs) }
    }

    /// Returns the lease as it was when the tick started.
    pub fn held(&self) -> &Held {
        &self.held
    }

    /// Returns the holder and token the tick record carries.
    pub fn stamp(&self) -> LeaseStamp {
        LeaseStamp::from(&self.held.record)
    }

    /// Returns what the first failed check found, if one failed.
    pub fn lost(&self) -> Option<Lost> {
        self.lost.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Checks that the lease is still ours; once a check has failed, every later one fails the
    /// same way without reading the lease again.
    ///
    /// # Errors
    ///
    /// [`Lost`] when the lease is another holder's now, or cannot be read.
    pub fn check(&self) -> Result<(), Lost> {
        let mut lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = lost.as_ref() {
            return Err(found.clone());
        }
        let ours = &self.held.record;
        let is_ours = |r: &LeaseRecord| r.same_holding(ours);
        match self.proofs.as_ref().and_then(|p| p.get(&self.held.key)) {
            Some(Proof::Landed(record))
                if is_ours(&record)
                    && chant_store::clock::parse(&record.expires_at).is_some_and(|e| e > self.store.clock().now()) =>
            {
                return Ok(());
            }
            Some(Proof::Lost { by }) => {
                let found = Lost::TakenOver { by };
                *lost = Some(found.clone());
                return Err(found);
            }
            _ => {}
        }
        let found = match self.store.current(&self.held.key) {
            Ok(Some(current)) if current.same_holding(ours) => return Ok(()),
            Ok(current) => Lost::TakenOver { by: current.map(|r| r.holder) },
            Err(err) => Lost::Unreadable { error: chant_store::error::chain(&err) },
        };
        *lost = Some(found.clone());
        Err(found)
    }
}
