//! `operator log --follow`: the timeline's new entries as they land on the ledger, as `tail -f`
//! and `kubectl logs -f` stream theirs.
//!
//! A [`Follower`] remembers the ledger tip it last read and the entries it has handed out. Each
//! [`Follower::poll`] reads the tip (one ref read); only when it moved does it read the timeline
//! again, from the newest entry already handed out on (`since` that instant, so the cost follows
//! what is new, not the history), and return the entries not handed out before, oldest first.
//! The ops are discovered again on every read, so the first tick of a new op shows up too. An
//! entry recorded with a timestamp older than the newest one already shown (a clock that ran
//! backwards across writers) is not shown.

use std::collections::BTreeSet;

use jiff::Timestamp;

use chant_lexicon::model::OpDocument;
use chant_store::git::ObjectId;
use chant_store::ledger::Ledger;

use super::Error;
use super::log::{Entry, Filter, Timeline, timeline};
use super::status::discover;

/// Which ops a follower covers: the `--env` and `--op` filters and the ops the binary carries.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The ops this binary carries (none in the stock binary).
    pub carried: Vec<OpDocument>,
    /// Only this env.
    pub env: Option<String>,
    /// Only this op.
    pub op: Option<String>,
    /// Only entries at or after this instant (`--since`).
    pub since: Option<Timestamp>,
}

/// Follows one ledger's timeline.
#[derive(Debug)]
pub struct Follower {
    scope: Scope,
    tip: Option<ObjectId>,
    newest: Option<Timestamp>,
    shown: BTreeSet<String>,
}

/// An entry's identity: its kind, place, time and stored record.
fn identity(e: &Entry) -> String {
    format!("{:?}\u{1f}{:?}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}", e.kind, e.member, e.env, e.op, e.timestamp, e.record)
}

impl Follower {
    /// A follower that has shown `initial` (the timeline printed first) of the ledger at `tip`.
    pub fn new(scope: Scope, initial: &Timeline, tip: Option<ObjectId>) -> Follower {
        let mut f = Follower { scope, tip, newest: None, shown: BTreeSet::new() };
        f.mark(&initial.entries);
        f
    }

    fn mark(&mut self, entries: &[Entry]) {
        for e in entries {
            if let Some(at) = chant_store::clock::parse(&e.timestamp) {
                self.newest = Some(self.newest.map_or(at, |n| n.max(at)));
            }
            self.shown.insert(identity(e));
        }
    }

    /// Returns the entries that landed since the last poll (none while the tip has not moved).
    ///
    /// # Errors
    ///
    /// Ledger errors.
    pub fn poll(&mut self, ledger: &Ledger) -> Result<Vec<Entry>, Error> {
        let tip = ledger.tip()?;
        if tip == self.tip {
            return Ok(Vec::new());
        }
        let ops = discover(ledger, &self.scope.carried, self.scope.env.as_deref(), self.scope.op.as_deref())?;
        let since = match (self.scope.since, self.newest) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let read = timeline(ledger, &ops, &Filter { since, limit: None })?;
        let fresh: Vec<Entry> = read.entries.into_iter().filter(|e| !self.shown.contains(&identity(e))).collect();
        self.mark(&fresh);
        // Everything older than the newest entry is behind the window: forget it.
        if let Some(newest) = self.newest {
            let keep: BTreeSet<String> = self
                .shown
                .iter()
                .filter(|id| {
                    id.split('\u{1f}').nth(4).and_then(chant_store::clock::parse).is_none_or(|at| at >= newest)
                })
                .cloned()
                .collect();
            self.shown = keep;
        }
        self.tip = tip;
        Ok(fresh)
    }
}
