//! The operator: ticks every ConvergeOp of the binary on its schedule, under a single-writer
//! lease per op, and the read-only views of what it did (DESIGN.md section 9).
//!
//! A **round** ([`round`]) takes the ConvergeOps of the binary (sorted by name, filtered by env)
//! and, for each: acquires or renews the op's lease; with a remote, fetches the ledger; reads the
//! op's newest recorded tick and asks [`crate::schedule::decide`] whether it is due; ticks it
//! (renewing the lease every TTL/3 meanwhile); re-checks the fence; and reports one
//! [`OpReport`] line. With a remote, the round claims its ops in batches instead (`claim`: one
//! fetch of every lease, one push of the batch's leases, one ledger push of its records). The
//! **daemon** ([`daemon`]) runs rounds on a timer, wakes early on change
//! signals ([`signal`]), and stops cleanly on SIGINT/SIGTERM. [`status`] and [`log`] read the
//! ledger and local refs only.
//!
//! # Guarantees
//!
//! - Never two concurrent ticks of one op: a tick runs only under that op's lease, and a lease
//!   is taken by compare-and-swap (with a remote, only when its push lands).
//! - One op's failure never stops the round: every error becomes that op's report line.
//! - Due-ness comes from the ledger, never from process memory: a restarted operator owes no
//!   catch-up and repeats no tick; missed fires collapse into one tick.
//! - A clean stop (SIGINT, SIGTERM, the end of `--once`) starts no new tick, gives a running
//!   tick a grace period, records an interrupted tick if it does not finish, and releases the
//!   leases it holds (with a remote, only those whose tick record was pushed).
//! - A change signal only decides *when* the next ordinary round runs and that the signalling
//!   lexicon's ops are due in it (a scheduled one whatever its cron), never what a tick
//!   concludes.
//!
//! # Assumptions
//!
//! - Clocks of holders sharing a remote agree to well within the lease TTL (expiry compares
//!   `expiresAt` with the local clock).
//! - Ticks are idempotent: a fenced tick's record is still written, and re-ticking after a
//!   crash is the recovery.
//!
//! # Caveats
//!
//! - Fencing is a lease-loss check after the fact: a holder that stalled past its TTL learns it
//!   lost the lease, but its dispatches may already have run next to the new holder's.
//! - Without a remote, the lease is local to the repository; two machines are not coordinated.

pub mod audit;
mod claim;
pub mod daemon;
pub mod follow;
pub mod hooks;
pub mod log;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod quiet;
pub mod round;
pub mod signal;
pub mod status;
pub mod suspend;

use std::fmt;
use std::time::Duration;

pub use daemon::{Daemon, StopSignals, Stopper, catch_stop_signals, forward_stop_signals};
pub use hooks::{HookSet, Hooks, NoHooks, TickStats};
pub use quiet::{Line, LineKind};
pub use round::{OpEvent, OpReport, RoundContext, Target};

/// The default time between rounds.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// The default time a running tick gets to finish after a stop.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

/// How the operator runs.
#[derive(Debug, Clone)]
pub struct OperatorConfig {
    /// Only the ConvergeOps of this env (`--env`).
    pub env: Option<String>,
    /// Only these ConvergeOps (`--op`, repeatable); every one when empty.
    pub ops: Vec<String>,
    /// The time between the end of a round and the start of the next (`--interval`).
    pub interval: Duration,
    /// How long a lease lives without renewal (`--lease-ttl`).
    pub lease_ttl: Duration,
    /// How long a running tick gets to finish after a stop (`--grace`).
    pub grace: Duration,
    /// The earliest a change signal wakes the next round, measured from the start of the last
    /// round that consumed signals (a signal wakes at once when that is longer ago).
    pub signal_floor: Duration,
    /// One round, then stop (`--once`).
    pub once: bool,
    /// Print every op's line of every round, and the per-round notes (`-v`).
    pub verbose: bool,
    /// Print a heartbeat after this long without a line (`--heartbeat`).
    pub heartbeat: Duration,
}

impl Default for OperatorConfig {
    fn default() -> Self {
        OperatorConfig {
            env: None,
            ops: Vec::new(),
            interval: DEFAULT_INTERVAL,
            lease_ttl: chant_store::lease::DEFAULT_TTL,
            grace: DEFAULT_GRACE,
            signal_floor: signal::DEFAULT_FLOOR,
            once: false,
            verbose: false,
            heartbeat: quiet::DEFAULT_HEARTBEAT,
        }
    }
}

/// What [`Daemon::new`] and the views return when they cannot start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] chant_store::ledger::Error),
    /// The clock failed.
    #[error(transparent)]
    Clock(#[from] chant_store::clock::BadNow),
    /// No lease holder id could be minted.
    #[error(transparent)]
    Lease(#[from] chant_store::lease::Error),
    /// A name given as a filter is not a valid op or env name.
    #[error("invalid {what} {name:?}: names are lowercase letters, digits and -, starting with a letter")]
    InvalidName {
        /// `env` or `op`.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// A stop-signal handler could not be installed.
    #[error("cannot install the SIGINT/SIGTERM handler")]
    Signals(#[source] std::io::Error),
}

/// How an operator run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every op's line was a tick, a skip or a fence.
    Clean,
    /// At least one op's line was `failed=` or `error=` (a tick failed, was interrupted, or its
    /// lease could not be acquired).
    TickFailed,
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ending::Clean => "clean",
            Ending::TickFailed => "a tick failed",
        })
    }
}

/// Returns true when `name` is a valid op or env name (`[a-z][a-z0-9-]*`, [`chant_lexicon::model::Name`]).
pub fn is_name(name: &str) -> bool {
    chant_lexicon::model::Name::is_valid(name)
}

pub(crate) use chant_store::error::chain;
