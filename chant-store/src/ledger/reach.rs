//! Whether the configured remote answers, remembered across processes in a local ref, so that
//! `operator status` (which makes no live reads) can say `remote: unreachable since <time>
//! (<first line of the error>)`, and every operator round can say it once.
//!
//! Every fetch and push of the ledger and of the leases reports here: one that failed before
//! the remote could answer (git could not reach it, or overran its timeout) marks the remote
//! unreachable, keeping the time of the first failure in a row; any answer, a refusal included,
//! marks it reachable again. The state is a blob `{remote, since, error, last}` under
//! `refs/chant/remote-health/<remote>`, written only on the first failure of a row and whenever
//! the error changes, and removed on the next answer. It is best effort: a state that cannot be
//! written changes nothing the ledger or the leases do.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::git::Repo;
use crate::git::cmd::{self, Fetched, Pushed};

/// The prefix of the refs that hold each remote's state.
pub const REF_PREFIX: &str = "refs/chant/remote-health/";

/// A remote that did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unreachable {
    /// The remote, as configured.
    pub remote: String,
    /// When the first failure of the current row happened.
    pub since: String,
    /// The newest failure's first line.
    pub error: String,
    /// When the newest failure happened.
    pub last: String,
}

/// The ref that holds `remote`'s state.
pub fn ref_name(remote: &str) -> String {
    let name: String =
        remote.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') { c } else { '_' }).collect();
    format!("{REF_PREFIX}{name}")
}

/// Returns `remote`'s state: `Some` while it is unreachable.
pub fn read(repo: &Repo, remote: &str) -> Option<Unreachable> {
    let id = repo.read_ref(&ref_name(remote)).ok().flatten()?;
    serde_json::from_slice(&repo.read_blob(id).ok()?).ok()
}

/// Records that `remote` could not be reached at `now`, with `error` (its first line is kept).
pub fn failed(repo: &Repo, remote: &str, error: &str, now: Timestamp) {
    let reference = ref_name(remote);
    let first_line = error.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no answer").to_owned();
    let current = repo.read_ref(&reference).ok().flatten();
    let known =
        current.and_then(|id| repo.read_blob(id).ok()).and_then(|b| serde_json::from_slice::<Unreachable>(&b).ok());
    let at = crate::clock::format(now);
    if known.as_ref().is_some_and(|k| k.error == first_line) {
        return;
    }
    let state = Unreachable {
        remote: remote.to_owned(),
        since: known.map_or_else(|| at.clone(), |k| k.since),
        error: first_line,
        last: at,
    };
    let Ok(bytes) = serde_json::to_vec(&state) else { return };
    // Best effort: another process may have written it meanwhile, which says the same thing.
    if let Ok(blob) = repo.write_blob(&bytes) {
        let _ = repo.update_ref(&reference, blob, current, "chant: remote unreachable");
    }
}

/// Records that `remote` answered.
pub fn answered(repo: &Repo, remote: &str) {
    let reference = ref_name(remote);
    if let Ok(Some(id)) = repo.read_ref(&reference) {
        let _ = repo.delete_ref(&reference, id);
    }
}

/// Records how a fetch from `remote` ended. A git that could not be started says nothing about
/// the remote and records nothing.
pub fn fetched(repo: &Repo, remote: &str, outcome: &Result<Fetched, cmd::Error>, now: Timestamp) {
    match outcome {
        Ok(Fetched::Updated | Fetched::Missing) => answered(repo, remote),
        Ok(Fetched::Failed(text)) => failed(repo, remote, text, now),
        Err(e @ cmd::Error::Timeout { .. }) => failed(repo, remote, &e.to_string(), now),
        Err(_) => {}
    }
}

/// Records how a push to `remote` ended: a landed or refused push is an answer.
pub fn pushed(repo: &Repo, remote: &str, outcome: &Result<Pushed, cmd::Error>, now: Timestamp) {
    match outcome {
        Ok(Pushed::Landed | Pushed::Refused(_)) => answered(repo, remote),
        Ok(Pushed::Failed(text)) => failed(repo, remote, text, now),
        Err(e @ cmd::Error::Timeout { .. }) => failed(repo, remote, &e.to_string(), now),
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::git::SharedRepo;

    #[test]
    fn a_row_of_failures_keeps_its_first_time_and_an_answer_clears_it() {
        let tmp = tempfile::tempdir().unwrap();
        gix::init_bare(tmp.path()).unwrap();
        let repo = SharedRepo::discover(tmp.path(), Duration::from_millis(100)).unwrap().local();
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        assert_eq!(read(&repo, "origin"), None);
        failed(&repo, "origin", "fatal: unable to access 'x'\nmore", t("2026-03-01T10:00:00Z"));
        failed(&repo, "origin", "fatal: could not read from remote", t("2026-03-01T10:05:00Z"));
        let state = read(&repo, "origin").unwrap();
        assert_eq!(state.since, "2026-03-01T10:00:00.000Z");
        assert_eq!(state.last, "2026-03-01T10:05:00.000Z");
        assert_eq!(state.error, "fatal: could not read from remote");
        assert_eq!(read(&repo, "backup"), None, "per remote");
        answered(&repo, "origin");
        assert_eq!(read(&repo, "origin"), None);
        assert_eq!(ref_name("git@host:x/y.git"), "refs/chant/remote-health/git_host_x_y_git");
    }
}
