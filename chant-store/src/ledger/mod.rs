//! The ledger: chant's only memory, JSON-line records on the orphan branch
//! `refs/heads/chant/lifecycle` (DESIGN.md section 6).
//!
//! Records are JSON objects grouped by [`ShardKey`] (record kind, member, env, op) into
//! count-based shards of at most 64 records, so an append costs the same at the millionth record
//! as at the first. Each kind of record chant writes is a type implementing [`Record`] (its key
//! and its encoding, said once): [`Ledger::append_record`] writes one, [`Ledger::read_typed`] and
//! [`Ledger::latest_typed`] read them back decoded; [`Ledger::append`], [`Ledger::read`] and
//! [`Ledger::latest`] handle a line as an untyped JSON object. Every append is one commit on the current tip, written with compare-and-swap
//! on the branch ref; concurrent writers re-read and retry, so all of them land. The original's
//! single files are read as history and never written. HEAD, the index and the work tree are
//! never touched. With a remote configured, each append fetches first, fast-forwards or re-appends
//! local records onto the remote tip, and pushes with `--force-with-lease`; a push that cannot
//! land is reported in the [`AppendReceipt`], never as an error that loses the record. Commits are
//! dated by the [`Clock`] the ledger was opened with ([`LedgerConfig::clock`]), so a fixed
//! `CHANT_NOW` gives the commits the time the records carry.
//!
//! ```no_run
//! use chant_store::ledger::{Ledger, LedgerConfig, ShardKey};
//! # fn main() -> Result<(), chant_store::ledger::Error> {
//! let ledger = Ledger::open(std::path::Path::new("."), LedgerConfig::default())?;
//! let key = ShardKey::converge(None, "staging", "staging-converge")?;
//! let receipt = ledger.append(&key, r#"{"op":"staging-converge","version":1}"#)?;
//! for warning in &receipt.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let newest = ledger.latest(&key)?;
//! assert_eq!(newest.record.and_then(|r| r.seq), Some(receipt.seq));
//! let all = ledger.read(&key)?; // oldest first, with `all.unreadable` counted
//! # Ok(()) }
//! ```

mod append;
mod document;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod kept;
mod key;
mod keys;
pub mod reach;
mod read;
mod record;
mod remote;
mod shard;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::clock::Clock;
use crate::error::chain;
use crate::git::cmd::{self, Git};
use crate::git::{self, ObjectId, SharedRepo};

pub use append::{LOCK_WAIT, STALE_LOCK_AGE};
pub use document::{DocumentReceipt, DocumentWriter, env_document_path};
pub use kept::DIR as KEPT_DIR;
pub use key::{APPLY_DIR, HAND_RUNS_DIR, RecordKind, ShardKey};
pub use read::{Latest, RawRecord, Records, Unreadable, Visit};
pub use record::{Encoding, Record, Stored, Typed, TypedLatest, encode};
pub use remote::{PushStatus, SyncReport};
pub use shard::{RECORDS_PER_SHARD, SHARDS_PER_BUCKET};

/// The ledger branch.
pub const BRANCH: &str = "refs/heads/chant/lifecycle";
/// A branch that, if it exists, makes [`BRANCH`] impossible (a ref cannot also be a directory).
pub const CLASHING_BRANCH: &str = "refs/heads/chant";

/// What [`Ledger::open`], [`Ledger::append`] and the read methods return when they fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Git storage failed.
    #[error("ledger storage failed")]
    Git(#[from] git::Error),
    /// The history of a document could not be listed.
    #[error("cannot list the history of {path} on the ledger branch")]
    History {
        /// The document's path.
        path: String,
        /// Why.
        #[source]
        source: Box<cmd::Error>,
    },
    /// A branch named `chant` exists, so `chant/lifecycle` cannot.
    #[error(
        "the branch `chant` ({CLASHING_BRANCH}) exists, so the ledger branch {BRANCH} cannot be created: \
         git refs cannot be both a branch and a directory; rename it (`git branch -m chant <new-name>`) and retry"
    )]
    BranchClash,
    /// An op, env or member name is not valid for a ledger path.
    #[error("invalid {what} name {name:?} for a ledger path")]
    InvalidName {
        /// `op`, `env` or `member`.
        what: &'static str,
        /// The rejected name.
        name: String,
    },
    /// A record is not one line of JSON.
    #[error("refused to append a record that is not one line of JSON: {reason}")]
    InvalidRecord {
        /// What is wrong with it.
        reason: String,
    },
    /// A lock file on the branch ref outlived the stale-lock age.
    #[error(
        "the ledger ref {reference} has a stale lock file at {} ({}s old): a killed git or chant left it; \
         remove it (`rm {}`) and retry",
        path.display(), age.as_secs(), path.display()
    )]
    StaleLock {
        /// The ref.
        reference: String,
        /// The lock file.
        path: PathBuf,
        /// Its age.
        age: Duration,
    },
    /// A lock file stayed in the way for [`LOCK_WAIT`], though a chant process that may be its
    /// writer is alive (or it is younger than the stale-lock age): the wait ends with this.
    #[error(transparent)]
    Locked(Box<LockWait>),
    /// Too many lost races in a row.
    #[error("gave up updating {reference} after {attempts} lost races")]
    Contended {
        /// The ref.
        reference: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// A path the ledger owns holds something else.
    #[error("unexpected ledger layout: {path} {reason}")]
    Layout {
        /// The path.
        path: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A record could not be encoded.
    #[error("cannot encode a ledger record")]
    Encode(#[from] crate::canonical::Error),
    /// A record of something that already happened could not be appended; it is kept in a file
    /// of its own and appended by the next append or sync that succeeds.
    #[error(
        "the record could not be written to the ledger; it is kept in {} and the next write that succeeds appends it",
        path.display()
    )]
    Kept {
        /// The file it is kept in.
        path: PathBuf,
        /// Why it could not be written.
        #[source]
        source: Box<Error>,
    },
    /// A record of something that already happened could not be appended, and could not be kept
    /// locally either (a full disk): nothing holds it any more.
    #[error(
        "the record could not be written to the ledger, and keeping it in {} failed too ({keep}): it is lost",
        dir.display()
    )]
    Lost {
        /// The directory it could not be kept in.
        dir: PathBuf,
        /// Why it could not be kept.
        keep: std::io::Error,
        /// Why it could not be written.
        #[source]
        source: Box<Error>,
    },
    /// A typed read asked a key for records of another kind.
    #[error("the key {key} does not hold {record} records")]
    WrongKind {
        /// The key's label.
        key: String,
        /// The record type asked for.
        record: &'static str,
    },
}

/// How a [`Ledger`] works. `Default` gives a local-only ledger with production timeouts.
#[derive(Debug, Clone)]
pub struct LedgerConfig {
    /// The remote to synchronise with (`[ledger] remote` in `chant.toml`): a configured remote
    /// name or a URL. `None`: local only.
    pub remote: Option<String>,
    /// How long a ref update waits for a `<ref>.lock` held by another writer before it counts as
    /// a lost race.
    pub lock_timeout: Duration,
    /// How long one git child (fetch, push, gc) may run before it is killed.
    pub git_timeout: Duration,
    /// How many fetch/re-append/push rounds one append tries before reporting `pushed: false`.
    pub push_attempts: u32,
    /// After a push is rejected because another writer moved the remote, the next round waits a
    /// random time up to this, doubled for each round lost (at most 32 times), so two writers
    /// retrying in lockstep stop losing to each other; zero retries at once.
    pub push_backoff: Duration,
    /// `git gc --auto` runs after about one append in this many (chosen by the new commit id, so
    /// the rate holds across processes and keys), and every other append rolls the packs up
    /// when they have grown many (`Git::keep_packs_few`); 0 disables both.
    pub gc_every: u32,
    /// Extra environment for git children (tests pass a hermetic git configuration here).
    pub git_env: Vec<(OsString, OsString)>,
    /// The clock the commits are dated by.
    pub clock: Clock,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        Self {
            remote: None,
            lock_timeout: Duration::from_millis(100),
            git_timeout: Duration::from_secs(60),
            push_attempts: 8,
            push_backoff: Duration::from_millis(25),
            gc_every: 256,
            git_env: Vec::new(),
            clock: Clock::System,
        }
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendReceipt {
    /// The commit that holds the record, after any re-append onto the remote tip this call made
    /// (if another process of the same clone re-appended it first, this is the commit it was
    /// first written in; the record itself is on the branch once, either way).
    pub commit: ObjectId,
    /// The shard file it is in.
    pub path: String,
    /// Its sequence number within its key.
    pub seq: u64,
    /// Whether and where it was pushed.
    pub push: PushStatus,
    /// Anything the caller should tell a human (a push that did not land, a failed gc).
    pub warnings: Vec<String>,
}

impl AppendReceipt {
    /// Whether the record reached the configured remote (`false` when local only).
    pub fn pushed(&self) -> bool {
        matches!(self.push, PushStatus::Pushed { .. })
    }
}

/// A handle on the ledger of one repository; cheap to share between threads.
#[derive(Clone)]
pub struct Ledger {
    repo: SharedRepo,
    git: Git,
    config: LedgerConfig,
    /// Why the git binary cannot be used, once checked (`None`: it can).
    git_version: Arc<OnceLock<Option<Arc<cmd::Error>>>>,
    /// The repository's git identity, read once ([`Ledger::identity`]).
    identity: Arc<OnceLock<git::Identity>>,
    /// Who acts, when the command names someone (`approve --actor`): the author of its commits.
    actor: Option<String>,
}

impl Ledger {
    /// Opens the ledger of the repository containing `repo_dir`. Refuses a repository with a
    /// branch named `chant` ([`Error::BranchClash`]). Nothing is written.
    pub fn open(repo_dir: &Path, config: LedgerConfig) -> Result<Self, Error> {
        let repo = SharedRepo::discover(repo_dir, config.lock_timeout)?;
        let local = repo.local();
        if local.ref_exists(CLASHING_BRANCH)? {
            return Err(Error::BranchClash);
        }
        let git = Git::new(local.git_dir(), config.git_timeout).with_env(config.git_env.clone());
        Ok(Self { repo, git, config, git_version: Arc::default(), identity: Arc::default(), actor: None })
    }

    /// This ledger, with `actor` as the author of the commits it writes (their committer stays
    /// the repository's git identity): a command that records who acts (`approve --actor`)
    /// writes its commits as that actor, so the audit can compare the record with its commit.
    pub fn with_actor(&self, actor: &str) -> Ledger {
        let mut ledger = self.clone();
        ledger.actor = Some(actor.to_owned());
        ledger
    }

    /// The repository's git identity: `user.name` and `user.email` as `git config` reads them for
    /// this repository (its own, the user's and the system's configuration; not the
    /// `GIT_AUTHOR_*` variables). When git knows neither, or cannot be run, chant's own
    /// `chant <chant@localhost>` ([`git::Identity::chant`]); a missing half takes chant's half.
    /// Read once per ledger.
    pub fn identity(&self) -> git::Identity {
        self.identity.get_or_init(|| read_identity(&self.git)).clone()
    }

    /// Starts reading [`Ledger::identity`] on a thread of its own, unless it was read, and
    /// returns at once: a caller with other work to do before its first commit (a tick observes
    /// before it appends) then finds the identity read instead of waiting for the `git config`
    /// child at that commit (about 2 ms of a process tick's wall time). Whoever asks first
    /// waits for the one read.
    pub fn read_identity_beside(&self) {
        if self.identity.get().is_some() {
            return;
        }
        let (git, identity) = (self.git.clone(), Arc::clone(&self.identity));
        let _ = std::thread::Builder::new().name("chant-git-identity".to_owned()).spawn(move || {
            identity.get_or_init(|| read_identity(&git));
        });
    }

    /// Who writes this ledger's commits: the actor (when set) with the git identity's e-mail as
    /// author, the git identity as committer.
    pub(crate) fn authorship(&self) -> git::Authorship {
        let committer = self.identity();
        let author = match &self.actor {
            Some(actor) => git::Identity::new(actor, &committer.email),
            None => committer.clone(),
        };
        git::Authorship { author, committer }
    }

    /// This ledger without its remote: its appends are local commits until a [`Ledger::sync`]
    /// of the ledger itself pushes them, all at once (an operator round with a remote appends a
    /// batch's tick records this way and pushes them in one push).
    pub fn local_only(&self) -> Ledger {
        let mut ledger = self.clone();
        ledger.config.remote = None;
        ledger
    }

    /// The configuration this ledger was opened with.
    pub fn config(&self) -> &LedgerConfig {
        &self.config
    }

    /// The repository, for other git-backed state of the same repository (the lease).
    pub fn repo(&self) -> &SharedRepo {
        &self.repo
    }

    /// The git binary bound to this repository, with the ledger's timeout and environment.
    pub fn git(&self) -> &Git {
        &self.git
    }

    /// The clock this ledger dates its commits by.
    pub fn clock(&self) -> Clock {
        self.config.clock.clone()
    }

    /// The repository's git directory.
    pub fn git_dir(&self) -> PathBuf {
        self.repo.local().git_dir().to_owned()
    }

    /// The commit at the tip of the local branch, `None` before the first append.
    pub fn tip(&self) -> Result<Option<ObjectId>, Error> {
        Ok(self.repo.local().read_ref(BRANCH)?)
    }

    /// Appends `line`, one JSON object on one line, to `key`, and pushes when a remote is
    /// configured. Errors mean nothing was recorded; a push that did not land is in the receipt.
    /// Records kept by an earlier failed [`Ledger::append_or_keep`] are appended first.
    pub fn append(&self, key: &ShardKey, line: &str) -> Result<AppendReceipt, Error> {
        check_record(line)?;
        let flushed = self.append_kept();
        let mut receipt = self.append_line(&key.dir(), &key.label(), line)?;
        receipt.warnings.splice(0..0, flushed);
        Ok(receipt)
    }

    /// Appends `line` as [`Ledger::append`] does; when the ledger cannot be written (a stale lock,
    /// lost races, a storage failure), keeps it in `<git-common-dir>/chant/pending/` for the next
    /// write that succeeds and says so in [`Error::Kept`]. For records of what already happened.
    ///
    /// # Errors
    ///
    /// [`Error::Kept`] when the record was kept, [`Error::Lost`] when it could not even be kept;
    /// the errors of [`Ledger::append`] when the record itself is invalid.
    pub fn append_or_keep(&self, key: &ShardKey, line: &str) -> Result<AppendReceipt, Error> {
        match self.append(key, line) {
            Err(
                err @ (Error::Git(_)
                | Error::StaleLock { .. }
                | Error::Locked(_)
                | Error::Contended { .. }
                | Error::Layout { .. }),
            ) => {
                let kept = kept::Kept { dir: key.dir(), label: key.label(), line: line.to_owned() };
                let common = self.repo.local().common_dir().to_owned();
                match kept::keep(&common, &kept) {
                    Ok(path) => Err(Error::Kept { path, source: Box::new(err) }),
                    Err(keep) => Err(Error::Lost { dir: kept::dir(&common), keep, source: Box::new(err) }),
                }
            }
            other => other,
        }
    }

    /// Checks that an append could be made now: no stale lock on the branch ref (or
    /// `packed-refs`) and the branch readable. A tick checks it before any mutating dispatch,
    /// so nothing acts that could not be recorded.
    ///
    /// # Errors
    ///
    /// [`Error::StaleLock`], or the storage error reading the branch.
    pub fn writable(&self) -> Result<(), Error> {
        let repo = self.repo.local();
        let (path, age) = repo.lock_file(BRANCH);
        if let Some(age) = age.filter(|age| repo.lock_is_stale(*age, STALE_LOCK_AGE)) {
            return Err(Error::StaleLock { reference: BRANCH.to_owned(), path, age });
        }
        self.snapshot(&repo).map(|_| ())
    }

    /// Appends the records kept by earlier failed writes, oldest first, stopping at the first
    /// that fails (it stays kept); returns what to tell a human.
    fn append_kept(&self) -> Vec<String> {
        let repo = self.repo.local();
        let mut said = Vec::new();
        for path in kept::waiting(repo.common_dir()) {
            let claim = match kept::claim(&path) {
                Ok(Some(claim)) => claim,
                Ok(None) => continue,
                Err(why) => {
                    said.push(why.to_string());
                    continue;
                }
            };
            let kept::Kept { dir, label, line } = claim.kept.clone();
            match self.append_line(&dir, &label, &line) {
                Ok(_) => {
                    said.push(format!(
                        "appended the record kept in {} by an earlier write that failed",
                        claim.path.display()
                    ));
                    if let Err(e) = claim.done() {
                        said.push(format!("could not remove a kept record once appended: {e}"));
                    }
                }
                Err(_) => {
                    claim.release();
                    break;
                }
            }
        }
        said
    }

    /// Appends `line` to key directory `dir` (commit label `label`), pushing when a remote is
    /// configured.
    fn append_line(&self, dir: &str, label: &str, line: &str) -> Result<AppendReceipt, Error> {
        let mut receipt = match &self.config.remote {
            None => {
                let at = self.config.clock.now();
                let written = append::append_local(&self.repo.local(), dir, label, line, None, at, &self.authorship())?;
                AppendReceipt {
                    commit: written.commit,
                    path: written.path,
                    seq: written.seq,
                    push: PushStatus::LocalOnly,
                    warnings: Vec::new(),
                }
            }
            Some(remote) => remote::append_synced(self, remote, dir, label, line)?,
        };
        if gc_due(self.config.gc_every, receipt.commit) {
            if let Err(err) = self.git.gc_auto() {
                receipt.warnings.push(format!("git gc --auto failed: {}", chain(&err)));
            }
        } else if self.config.gc_every > 0 {
            self.git.keep_packs_few();
        }
        Ok(receipt)
    }

    /// Every record of `key` as stored, oldest first, with the unreadable lines counted.
    pub fn read(&self, key: &ShardKey) -> Result<Records, Error> {
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        read::all(&repo, tip, root, key, &read::any).map(Records::from)
    }

    /// The newest readable record of `key` as stored; reads one shard unless newer lines are
    /// unreadable.
    pub fn latest(&self, key: &ShardKey) -> Result<Latest, Error> {
        let repo = self.repo.local();
        let (tip, root) = self.snapshot(&repo)?;
        read::latest(&repo, tip, root, key, &read::any).map(Latest::from)
    }

    /// Every key that has records (sharded or in the original's files), in key order.
    pub fn keys(&self) -> Result<Vec<ShardKey>, Error> {
        let repo = self.repo.local();
        let (_, root) = self.snapshot(&repo)?;
        keys::all(&repo, root)
    }

    /// Fetches the remote branch, integrates it (fast-forward, or re-append of local records onto
    /// it) and pushes local records the remote lacks. Local only: does nothing.
    /// Records kept by an earlier failed write are appended first.
    pub fn sync(&self) -> Result<SyncReport, Error> {
        let _ = self.append_kept();
        match &self.config.remote {
            None => Ok(SyncReport { push: PushStatus::LocalOnly, tip: self.tip()? }),
            Some(remote) => remote::sync(self, remote),
        }
    }

    /// Waits up to `timeout` for the pack roll-up that a `git gc --auto` after an append of this
    /// process started on a thread of its own (see [`cmd::Git::gc_auto`]); returns whether none
    /// is running. A caller that inspects the repository's files (a test) waits for it first.
    pub fn wait_for_roll_up(timeout: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        while cmd::Git::rolling_up() {
            if start.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        true
    }

    /// Returns the configured remote's state when it did not answer the last fetch or push of
    /// the ledger or a lease (`None` without a remote, or when it answered).
    pub fn remote_unreachable(&self) -> Option<reach::Unreachable> {
        let remote = self.config.remote.as_deref()?;
        reach::read(&self.repo.local(), remote)
    }

    fn snapshot(&self, repo: &git::Repo) -> Result<(Option<ObjectId>, Option<ObjectId>), Error> {
        let tip = repo.read_ref(BRANCH)?;
        let root = tip.map(|tip| repo.commit_info(tip)).transpose()?.map(|info| info.tree);
        Ok((tip, root))
    }

    /// Checks the git binary once per ledger; the failure is kept for every later call.
    fn git_version_checked(&self) -> Result<(), Arc<cmd::Error>> {
        match self.git_version.get_or_init(|| self.git.check_version().err().map(Arc::new)) {
            None => Ok(()),
            Some(err) => Err(Arc::clone(err)),
        }
    }
}

/// Whether `git gc --auto` runs after the append that wrote `commit`: for about one commit in
/// `every`, chosen by the commit id's first two bytes, so the rate holds across keys and
/// processes without any shared counter.
/// The repository's git identity as `git config` reads it ([`Ledger::identity`]).
fn read_identity(git: &Git) -> git::Identity {
    let Ok(out) = git.run("config", &["config", "--includes", "--get-regexp", r"^user\.(name|email)$"]) else {
        return git::Identity::chant();
    };
    let (mut name, mut email) = (String::new(), String::new());
    for line in out.stdout.lines() {
        if let Some(v) = line.strip_prefix("user.name ") {
            name = v.to_owned();
        } else if let Some(v) = line.strip_prefix("user.email ") {
            email = v.to_owned();
        }
    }
    git::Identity::new(&name, &email)
}

fn gc_due(every: u32, commit: ObjectId) -> bool {
    let bytes = commit.as_bytes();
    every > 0 && u32::from(u16::from_be_bytes([bytes[0], bytes[1]])) % every == 0
}

fn check_record(line: &str) -> Result<(), Error> {
    if line.contains(['\n', '\r']) {
        return Err(Error::InvalidRecord { reason: "it contains a line break".to_owned() });
    }
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(value) if value.is_object() => Ok(()),
        Ok(_) => Err(Error::InvalidRecord { reason: "it is not a JSON object".to_owned() }),
        Err(err) => Err(Error::InvalidRecord { reason: err.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync + Clone>() {}
        shareable::<Ledger>();
    }

    #[test]
    fn only_one_line_json_objects_are_records() {
        assert!(check_record(r#"{"a":1}"#).is_ok());
        for bad in ["", "1", "[]", "{", "{}\n", "{\"a\":\r1}"] {
            assert!(matches!(check_record(bad), Err(Error::InvalidRecord { .. })), "{bad:?}");
        }
    }

    #[test]
    fn gc_runs_for_about_one_commit_in_gc_every() {
        let ledger_due = |every: u32, id: &str| gc_due(every, ObjectId::from_hex(id.as_bytes()).unwrap());
        assert!(ledger_due(256, "1200ffffffffffffffffffffffffffffffffffff"));
        assert!(!ledger_due(256, "1201ffffffffffffffffffffffffffffffffffff"));
        assert!(!ledger_due(0, "0000ffffffffffffffffffffffffffffffffffff"));
    }
}

/// A wait on a lock file that ended at [`LOCK_WAIT`]: [`Error::Locked`].
#[derive(Debug, thiserror::Error)]
#[error(
    "the ledger ref {reference} is still locked after {}s by {} ({}s old){}: a git ref lock is held for milliseconds, so it is most likely left by a killed git or chant; if no git or chant process is writing this repository, remove it (`rm {}`) and retry",
    waited.as_secs(),
    path.display(),
    age.as_secs(),
    alive_list(alive),
    path.display()
)]
pub struct LockWait {
    /// The ref.
    pub reference: String,
    /// The lock file.
    pub path: PathBuf,
    /// Its age when the wait ended.
    pub age: Duration,
    /// How long the append waited.
    pub waited: Duration,
    /// The other chant processes of the repository that were alive.
    pub alive: Vec<u32>,
}

/// ` (chant processes alive in this repository: 12, 34)`, or nothing.
fn alive_list(alive: &[u32]) -> String {
    if alive.is_empty() {
        return String::new();
    }
    let pids: Vec<String> = alive.iter().map(u32::to_string).collect();
    format!(" (chant processes alive in this repository: {})", pids.join(", "))
}
