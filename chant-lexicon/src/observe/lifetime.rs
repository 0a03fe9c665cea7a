//! How long this process goes on observing: whether a lexicon should keep what one read learnt
//! for the next read in the same process.
//!
//! A lexicon may remember between reads what makes the next one cheaper (the files lexicon's
//! stat-first stamps). In a process that observes each estate once and exits (`tick`, `run`,
//! `lifecycle`, one CLI command) nothing remembered is ever used: the command line says so with
//! [`observe_once`], and lexicons skip the remembering ([`observes_once`]). Long-running
//! processes (the operator, the dashboard) leave it as it starts, remembering. Nothing read is
//! taken from memory either way in a process that observes once: its reads are all full reads,
//! and so is a tick's re-observation after its dispatches.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process said it observes once.
static ONCE: AtomicBool = AtomicBool::new(false);

/// Says that this process observes each estate once and exits: lexicons keep nothing between
/// reads from now on.
pub fn observe_once() {
    ONCE.store(true, Ordering::Relaxed);
}

/// Returns true when this process said it observes once ([`observe_once`]).
pub fn observes_once() -> bool {
    ONCE.load(Ordering::Relaxed)
}
