//! Synchronising the ledger with a remote, used only when configuration names one. Each round
//! fetches the remote branch into `refs/chant/ledger-remote/<remote>`, integrates it into the
//! local branch (create, fast-forward, or re-append the local records the remote lacks onto the
//! remote tip, in process, with no work tree), appends, and pushes with `--force-with-lease`
//! against the fetched tip. A rejected push starts another round. The local branch is only ever
//! moved by compare-and-swap and always onto a descendant of what the remote held, so history is
//! never rewritten on the remote and no parentless commit is pushed over it.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::backoff::{Backoff, GaveUp, Growth, Limit};
use crate::error::chain;
use crate::git::cmd::{self, Fetched, Pushed};
use crate::git::porcelain::PushRefusal;
use crate::git::{self, ObjectId, Repo};

use super::append::{self, Next, Written};
use super::{AppendReceipt, BRANCH, Error, Ledger};

/// Whether and where a record or a sync reached the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushStatus {
    /// No remote is configured; the ledger is local only.
    LocalOnly,
    /// The remote branch now holds the local tip.
    Pushed {
        /// The remote.
        remote: String,
    },
    /// The record is committed locally but did not reach the remote; the next append or sync
    /// retries.
    NotPushed {
        /// The remote.
        remote: String,
        /// Why, in words for a human.
        reason: String,
    },
}

/// What [`Ledger::sync`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// Whether the local branch reached the remote.
    pub push: PushStatus,
    /// The local tip afterwards.
    pub tip: Option<ObjectId>,
}

/// The local ref a remote's ledger branch is fetched into.
pub(super) fn tracking_ref(remote: &str) -> String {
    let name: String =
        remote.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') { c } else { '_' }).collect();
    format!("refs/chant/ledger-remote/{name}")
}

/// Appends with a remote: see the module documentation.
pub(super) fn append_synced(
    ledger: &Ledger,
    remote: &str,
    dir: &str,
    label: &str,
    line: &str,
) -> Result<AppendReceipt, Error> {
    let repo = ledger.repo.local();
    let mut written: Option<Written> = None;
    let at = ledger.config.clock.now();
    let by = ledger.authorship();
    let push = rounds(ledger, &repo, remote, |repo, replayed| {
        match written.as_mut() {
            Some(ours) => {
                if let Some(moved) = replayed.get(&ours.commit) {
                    *ours = moved.clone();
                }
            }
            None => written = Some(append::append_local(repo, dir, label, line, None, at, &by)?),
        }
        Ok(())
    })?;
    let written = match written {
        Some(written) => written,
        None => append::append_local(&repo, dir, label, line, None, at, &by)?,
    };
    let warnings = match &push {
        PushStatus::NotPushed { remote, reason } => {
            vec![format!("the record is kept locally but did not reach {remote}: {reason}")]
        }
        _ => Vec::new(),
    };
    Ok(AppendReceipt { commit: written.commit, path: written.path, seq: written.seq, push, warnings })
}

/// Fetches, integrates and pushes without appending.
pub(super) fn sync(ledger: &Ledger, remote: &str) -> Result<super::SyncReport, Error> {
    let repo = ledger.repo.local();
    let push = rounds(ledger, &repo, remote, |_, _| Ok(()))?;
    Ok(SyncReport { push, tip: repo.read_ref(BRANCH)? })
}

/// Runs fetch/integrate/push rounds until a push lands or cannot. `step` runs after each
/// integration with the map of re-appended commits (old id to new record position); an append
/// writes its record there. A push rejected because another writer moved the remote starts
/// another round after a random wait up to the configured `push_backoff` doubled for each round
/// lost (at most 32 times): without it, two writers whose rounds take about as long as each
/// other's appends can stay in lockstep, one landing every time and the other losing every round
/// until its attempts run out.
fn rounds(
    ledger: &Ledger,
    repo: &Repo,
    remote: &str,
    mut step: impl FnMut(&Repo, &HashMap<ObjectId, Written>) -> Result<(), Error>,
) -> Result<PushStatus, Error> {
    let not_pushed = |reason: String| PushStatus::NotPushed { remote: remote.to_owned(), reason };
    let pushed = || PushStatus::Pushed { remote: remote.to_owned() };
    let tracking = tracking_ref(remote);
    let attempts = ledger.config.push_attempts.max(1);
    let policy = Backoff {
        first: ledger.config.push_backoff,
        growth: Growth::Doubling,
        max: ledger.config.push_backoff.saturating_mul(32),
        jitter: true,
        limit: Limit::Attempts(attempts),
    };
    let round = |_| -> ControlFlow<Result<PushStatus, Error>> {
        let done = |status: PushStatus| ControlFlow::Break(Ok(status));
        let remote_tip = match fetch(ledger, repo, remote, &tracking) {
            Ok(tip) => tip,
            Err(reason) => return done(not_pushed(reason.to_string())),
        };
        let replayed = match integrate(ledger, repo, remote_tip) {
            Ok(Ok(replayed)) => replayed,
            Ok(Err(foreign)) => {
                return done(not_pushed(format!(
                    "the local {BRANCH} has commit {foreign}, which chant did not write and {remote} lacks; \
                     chant cannot re-append it, so reconcile the branch by hand"
                )));
            }
            Err(err) => return ControlFlow::Break(Err(err)),
        };
        if let Err(err) = step(repo, &replayed) {
            return ControlFlow::Break(Err(err));
        }
        let tip = match repo.read_ref(BRANCH) {
            Ok(Some(tip)) => tip,
            Ok(None) => return done(pushed()),
            Err(err) => return ControlFlow::Break(Err(err.into())),
        };
        if Some(tip) == remote_tip {
            return done(pushed());
        }
        let outcome = ledger.git.push_with_lease(remote, tip, BRANCH, remote_tip);
        super::reach::pushed(repo, remote, &outcome, ledger.config.clock.now());
        match outcome {
            Ok(Pushed::Landed) => {
                // Only a cache of the remote's state; the next fetch corrects it if this fails.
                let _ = repo.update_ref(&tracking, tip, remote_tip, "chant: pushed");
                done(pushed())
            }
            Ok(Pushed::Refused(PushRefusal::Moved)) => ControlFlow::Continue(()),
            Ok(Pushed::Refused(PushRefusal::RemoteLocked(text))) => {
                done(not_pushed(format!("{BRANCH} is locked on {remote}: {text}")))
            }
            Ok(Pushed::Refused(PushRefusal::Other(text))) => {
                done(not_pushed(format!("{remote} refused {BRANCH}: {text}")))
            }
            Ok(Pushed::Failed(text)) => done(not_pushed(format!("push to {remote} failed: {text}"))),
            Err(err) => done(not_pushed(chain(&err))),
        }
    };
    match policy.retry(round) {
        Ok(result) => result,
        Err(GaveUp { .. }) => {
            Ok(not_pushed(format!("{BRANCH} on {remote} kept moving: {attempts} pushes in a row were rejected")))
        }
    }
}

/// Why the remote branch could not be fetched; its text is the reason a human reads in
/// [`PushStatus::NotPushed`].
#[derive(Debug, thiserror::Error)]
enum Unsynced {
    /// The git binary cannot be used.
    #[error("cannot synchronise with {remote}: {}", chain(.reason.as_ref()))]
    Git {
        /// The remote.
        remote: String,
        /// Why git cannot be used.
        reason: Arc<cmd::Error>,
    },
    /// Git fetched but left no tracking ref.
    #[error("fetch from {remote} left no {tracking}")]
    NoTracking {
        /// The remote.
        remote: String,
        /// The tracking ref.
        tracking: String,
    },
    /// Git said the fetch failed.
    #[error("fetch from {remote} failed: {text}")]
    Failed {
        /// The remote.
        remote: String,
        /// Git's words.
        text: String,
    },
    /// Git could not be run to completion.
    #[error("{}", chain(.0))]
    Run(cmd::Error),
    /// The tracking ref could not be read.
    #[error("{}", chain(.0))]
    Storage(git::Error),
}

/// Fetches the remote branch; `Ok(None)` when the remote has none.
fn fetch(ledger: &Ledger, repo: &Repo, remote: &str, tracking: &str) -> Result<Option<ObjectId>, Unsynced> {
    ledger.git_version_checked().map_err(|reason| Unsynced::Git { remote: remote.to_owned(), reason })?;
    let outcome = ledger.git.fetch_ref(remote, BRANCH, tracking);
    super::reach::fetched(repo, remote, &outcome, ledger.config.clock.now());
    match outcome {
        Ok(Fetched::Updated) => match repo.read_ref(tracking) {
            Ok(Some(tip)) => Ok(Some(tip)),
            Ok(None) => Err(Unsynced::NoTracking { remote: remote.to_owned(), tracking: tracking.to_owned() }),
            Err(err) => Err(Unsynced::Storage(err)),
        },
        Ok(Fetched::Missing) => {
            if let Ok(Some(stale)) = repo.read_ref(tracking) {
                // A cache of a branch the remote no longer has; failing to drop it changes nothing.
                let _ = repo.delete_ref(tracking, stale);
            }
            Ok(None)
        }
        Ok(Fetched::Failed(text)) => Err(Unsynced::Failed { remote: remote.to_owned(), text }),
        Err(err) => Err(Unsynced::Run(err)),
    }
}

/// Makes the local branch contain the remote tip: creates it, fast-forwards it, or re-appends
/// the local records the remote lacks onto the remote tip (in commits dated by the ledger's
/// clock). Returns the re-appended records by their old commit, or `Err(commit)` naming a local
/// commit chant cannot re-append.
fn integrate(
    ledger: &Ledger,
    repo: &Repo,
    remote_tip: Option<ObjectId>,
) -> Result<Result<HashMap<ObjectId, Written>, ObjectId>, Error> {
    let Some(remote_tip) = remote_tip else { return Ok(Ok(HashMap::new())) };
    let at = ledger.config.clock.now();
    append::cas_until_landed(repo, BRANCH, || {
        let local = repo.read_ref(BRANCH)?;
        let (new_tip, replayed) = match local {
            None => (remote_tip, HashMap::new()),
            Some(local) => {
                let divergence = repo.divergence(local, remote_tip)?;
                if divergence.ours.is_empty() {
                    if local == remote_tip {
                        return Ok(Next::Done(Ok(HashMap::new())));
                    }
                    (remote_tip, HashMap::new())
                } else if divergence.theirs.is_empty() && divergence.base.is_some() {
                    return Ok(Next::Done(Ok(HashMap::new())));
                } else {
                    match reappend(repo, &divergence.ours, &divergence.theirs, remote_tip, at, &ledger.identity())? {
                        Ok(done) => done,
                        Err(foreign) => return Ok(Next::Done(Err(foreign))),
                    }
                }
            }
        };
        Ok(Next::Move { new: new_tip, expected: local, value: Ok(replayed) })
    })
}

type Reappended = (ObjectId, HashMap<ObjectId, Written>);

/// Re-appends the records of `ours` (oldest first) onto `onto`, skipping those `theirs` already
/// holds (another process of this clone may have pushed them under a new commit).
fn reappend(
    repo: &Repo,
    ours: &[ObjectId],
    theirs: &[ObjectId],
    onto: ObjectId,
    at: jiff::Timestamp,
    committer: &git::Identity,
) -> Result<Result<Reappended, ObjectId>, Error> {
    let mut landed = HashSet::new();
    for id in theirs {
        landed.insert(append::describe(repo, *id)?.origin);
    }
    let mut tip = onto;
    let mut moved = HashMap::new();
    for id in ours {
        let appended = append::describe(repo, *id)?;
        let Some(dir) = appended.dir else { return Ok(Err(*id)) };
        if landed.contains(&appended.origin) {
            continue;
        }
        let Some(line) = append::appended_line(repo, *id, &dir)? else { return Ok(Err(*id)) };
        // A re-appended record keeps the author of the commit it was first written in; the
        // commit is this clone's.
        let by = git::Authorship { author: repo.commit_info(*id)?.author, committer: committer.clone() };
        let written = append::build(repo, Some(tip), &dir, &appended.subject, &line, Some(appended.origin), at, &by)?;
        tip = written.commit;
        moved.insert(*id, written);
    }
    Ok(Ok((tip, moved)))
}
