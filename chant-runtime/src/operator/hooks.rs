//! Hooks: what the operator tells observers of its rounds (the metrics endpoint, notification
//! sinks) as things happen, without them changing a round.
//!
//! A [`Hooks`] implementation is called on the round's thread (for each op) and on the daemon's
//! thread (signals, wake-ups, completed rounds). Every method has an empty default and must
//! return quickly: a hook that needs to do slow work (a webhook) hands it to a thread of its own.
//! Nothing a hook does can change what a tick found or whether it is recorded.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;

use super::round::{OpReport, Target};

/// What a round measured of one tick that ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TickStats {
    /// How long the tick took, from observation to its record's append.
    pub duration: Duration,
    /// How long the append of its record took.
    pub append: Option<Duration>,
    /// With a remote: whether the record's push landed (`None` without a remote).
    pub pushed: Option<bool>,
    /// Unobserved entities by reason (`no-binding`, `read-failed`, ...); in resource mode,
    /// resources whose status is `unknown` under `resource-unknown`.
    pub unobserved: BTreeMap<String, u64>,
}

/// Observers of the operator's rounds. Every method does nothing by default.
pub trait Hooks: Send + Sync {
    /// The lease of `target` was taken (`true`) or found held by someone else or lost (`false`).
    fn lease(&self, _target: &Target, _held: bool) {}

    /// A tick of `target` ran (its record was appended), measured as `stats`.
    fn ticked(&self, _target: &Target, _stats: &TickStats) {}

    /// The round finished with `target`, as `report` says (after [`Hooks::ticked`] when it
    /// ticked).
    fn reported(&self, _target: &Target, _report: &OpReport) {}

    /// A round finished (every op visited) at `at`.
    fn round_done(&self, _at: Timestamp) {}

    /// A change signal arrived.
    fn signal(&self) {}

    /// A round starts early because a change signal woke it.
    fn woken(&self) {}

    /// Returns the lines a person should see now (a sink that failed this round), once each;
    /// the daemon prints them after every round.
    fn lines(&self) -> Vec<String> {
        Vec::new()
    }

    /// Waits (bounded) for work handed to other threads to finish, before the operator exits.
    fn flush(&self) {}
}

/// Hooks that do nothing, the default of a round.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {}

/// Several hooks called in order.
#[derive(Default, Clone)]
pub struct HookSet(pub Vec<std::sync::Arc<dyn Hooks>>);

impl Hooks for HookSet {
    fn lease(&self, target: &Target, held: bool) {
        self.0.iter().for_each(|h| h.lease(target, held));
    }

    fn ticked(&self, target: &Target, stats: &TickStats) {
        self.0.iter().for_each(|h| h.ticked(target, stats));
    }

    fn reported(&self, target: &Target, report: &OpReport) {
        self.0.iter().for_each(|h| h.reported(target, report));
    }

    fn round_done(&self, at: Timestamp) {
        self.0.iter().for_each(|h| h.round_done(at));
    }

    fn signal(&self) {
        self.0.iter().for_each(|h| h.signal());
    }

    fn woken(&self) {
        self.0.iter().for_each(|h| h.woken());
    }

    fn lines(&self) -> Vec<String> {
        self.0.iter().flat_map(|h| h.lines()).collect()
    }

    fn flush(&self) {
        self.0.iter().for_each(|h| h.flush());
    }
}
