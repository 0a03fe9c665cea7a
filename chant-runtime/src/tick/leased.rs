//! One leased tick: the single place that takes an op's lease, renews it while the work runs,
//! hands the work its [`Fence`], and releases the lease afterwards (only once the record the
//! work wrote is on the remote, when one is configured).
//!
//! Every leased piece of work goes through [`leased`]: a hand `tick`, each op of an operator
//! round, the interrupted tick a stopping operator records, and a hand `run` of a mutating op.
//! What differs between them is said by the [`Claim`] (take the lease, waiting a little or not
//! at all; a lease this process already holds; no lease) and the [`Release`] (release after the
//! work, or keep it, as an operator keeps its leases from round to round). The work checks the
//! fence before each of its side effects ([`super::execute()`] does, before every dispatch and
//! before the append).

use std::time::Duration;

use chant_store::lease::{self, Acquisition, Held, LeaseKey, LeaseStore, Renewer};
use chant_store::ledger::AppendReceipt;

use super::fence::{Fence, Lost};

/// How long a hand tick or a run of a mutating op waits for the op's lease.
pub const LEASE_WAIT: Duration = Duration::from_secs(2);

/// Which lease the work runs under.
#[derive(Debug, Clone)]
pub enum Claim {
    /// Take the lease of `key` for `holder` (renewing it, token kept, when `holder` already has
    /// it), waiting up to `wait` while another holder's lease is live; renew it every `ttl / 3`
    /// while the work runs.
    Take {
        /// The op's lease.
        key: LeaseKey,
        /// This process's holder id.
        holder: String,
        /// How long the lease lives without renewal.
        ttl: Duration,
        /// How long to wait for another holder to let go (zero: one attempt).
        wait: Duration,
    },
    /// A lease this process holds and renews elsewhere (the interrupted-tick path): the work is
    /// fenced by it, and nothing is written to it here.
    Held(Held),
    /// No lease (`tick --no-lease`, a run of a read-only op): no fence either.
    Unleased,
}

/// What happens to the lease after the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Release it, once the work's record is on the remote (else it is kept and lapses on its
    /// own at its expiry).
    AfterWork,
    /// Keep it: the caller holds it on (an operator, from round to round) and releases it later.
    Keep,
}

/// Where the record the work wrote ended up, which decides whether the lease may be released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing {
    /// The work recorded nothing (it failed before, or had nothing to record).
    Nothing,
    /// The record is on the remote, or the ledger is local only.
    Pushed,
    /// The record is committed locally but did not reach the remote.
    NotPushed,
}

impl Landing {
    /// Returns where the record of `receipt` ended up.
    pub fn of(receipt: &AppendReceipt) -> Landing {
        match receipt.push {
            chant_store::ledger::PushStatus::NotPushed { .. } => Landing::NotPushed,
            _ => Landing::Pushed,
        }
    }
}

/// How a leased piece of work ended.
#[derive(Debug)]
pub enum Leased<T> {
    /// The work ran.
    Ran(Ran<T>),
    /// Another holder's lease is live (or another writer won the race for it): nothing ran.
    Refused {
        /// The holder, when known.
        holder: Option<String>,
    },
    /// The lease could not be read or written (a stale lock, an unreachable remote): nothing ran.
    Failed(lease::Error),
}

/// The work's result, and what became of its lease.
#[derive(Debug)]
pub struct Ran<T> {
    /// What the work returned.
    pub value: T,
    /// The lease as last renewed; `None` when unleased.
    pub held: Option<Held>,
    /// What the fence found, when the lease was lost while the work ran.
    pub lost: Option<Lost>,
    /// Where the work's record ended up.
    pub landing: Landing,
    /// Whether the lease was released here.
    pub released: bool,
    /// What a human should know about the lease (kept because the record did not reach the
    /// remote, or could not be released).
    pub warnings: Vec<String>,
}

/// Runs `work` under the lease `claim` names: takes it (or refuses), renews it while `work`
/// runs, gives `work` the fence to check before each side effect, and then releases or keeps it
/// as `release` says. A lease the fence found lost is never released: it is not ours.
pub fn leased<T>(
    leases: &LeaseStore,
    claim: Claim,
    release: Release,
    work: impl FnOnce(Option<&Fence>) -> (T, Landing),
) -> Leased<T> {
    let mut warnings = Vec::new();
    let (held, ttl) = match claim {
        Claim::Unleased => {
            let (value, landing) = work(None);
            return Leased::Ran(Ran { value, held: None, lost: None, landing, released: false, warnings: Vec::new() });
        }
        Claim::Held(held) => (held, None),
        Claim::Take { key, holder, ttl, wait } => match leases.acquire_waiting(&key, &holder, ttl, wait) {
            Ok(Acquisition::Acquired { held, stale, .. }) => {
                if let Some(r) = stale {
                    warnings.push(format!(
                        "took over the lease of {} from {}: it claimed to run until {}, further ahead than the maximum lease TTL of 24h (a clock far ahead, or a blob written by hand)",
                        held.key.op(),
                        r.holder,
                        r.expires_at
                    ));
                }
                (held, Some(ttl))
            }
            Ok(Acquisition::Refused { held_by, .. }) => {
                return Leased::Refused { holder: held_by.map(|r| r.holder) };
            }
            Err(err) => return Leased::Failed(err),
        },
    };
    let fence = Fence::new(leases.clone(), held.clone());
    let renewer = ttl.map(|ttl| Renewer::start(leases.clone(), held.clone(), ttl));
    let (value, landing) = work(Some(&fence));
    let held = match renewer {
        Some(renewer) => renewer.stop(held).0,
        None => held,
    };
    let lost = fence.lost();
    let mut released = false;
    if release == Release::AfterWork && lost.is_none() {
        if landing == Landing::NotPushed {
            warnings.push(format!(
                "kept the lease of {}: its record did not reach the remote, so the lease lapses on its own at {}",
                held.key.op(),
                held.record.expires_at
            ));
        } else {
            match leases.release(&held) {
                Ok(done) => released = done,
                Err(err) => warnings.push(format!(
                    "could not release the lease of {}: {}",
                    held.key.op(),
                    chant_store::error::chain(&err)
                )),
            }
        }
    }
    Leased::Ran(Ran { value, held: Some(held), lost, landing, released, warnings })
}
