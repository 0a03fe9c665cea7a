//! Whole documents on the ledger branch, beside the sharded records: one file per path (the
//! accepted observation baseline, `<member prefix><env>/observation-baseline.json`), each write
//! its own commit on the current tip by compare-and-swap, like every append.
//!
//! A document is replaced as a whole. Its commit carries a `Chant-Document:` trailer naming the
//! path and no `Chant-Shard:` trailer, so it is never taken for a record. With a remote the
//! write synchronises first (so it is built on the remote's tip) and pushes after; a push that
//! does not land is in the receipt's status, as for records.
//!
//! [`Ledger::document_writer`] tells a document chant wrote from one written onto the branch by
//! other means: the newest commit that changed the path must carry the `Chant-Document:` trailer
//! naming it and change nothing else (its tree is its parent's with that one blob replaced), as
//! [`Ledger::write_document`] writes it.

use super::append::{Next, cas_until_landed};
use super::{BRANCH, Error, Ledger, PushStatus};
use crate::git::ObjectId;

/// The trailer naming the document a commit wrote.
const DOCUMENT_TRAILER: &str = "Chant-Document: ";

/// What writing a document did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentReceipt {
    /// The commit that holds it.
    pub commit: ObjectId,
    /// Whether it reached the remote.
    pub push: PushStatus,
}

/// Who last wrote a document, and whether chant's own write did ([`Ledger::document_writer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentWriter {
    /// The newest commit that changed the document.
    pub commit: ObjectId,
    /// That commit's author.
    pub author: crate::git::Identity,
    /// Whether the commit is chant's document write: the `Chant-Document:` trailer naming the
    /// path, and no other change.
    pub by_chant: bool,
}

/// Returns the path of the document `file` of `env` in member `member`:
/// `<member prefix><env>/<file>`.
///
/// # Errors
///
/// [`Error::InvalidName`] when the env or member cannot be part of a ledger path.
pub fn env_document_path(member: Option<&str>, env: &str, file: &str) -> Result<String, Error> {
    // The env and member are checked as every key checks them.
    let key = super::ShardKey::apply(member, env, "document")?;
    Ok(format!("{}{env}/{file}", key.prefix()))
}

impl Ledger {
    /// Reads the document at `path` on the ledger branch; `None` when there is none.
    ///
    /// # Errors
    ///
    /// Storage errors.
    pub fn read_document(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let repo = self.repo.local();
        let (_, root) = self.snapshot(&repo)?;
        let Some(root) = root else { return Ok(None) };
        match repo.tree_entry(root, path)? {
            Some(entry) if entry.kind == crate::git::EntryKind::Blob => Ok(Some(repo.read_blob(entry.id)?)),
            _ => Ok(None),
        }
    }

    /// Returns who last wrote the document at `path` (the newest commit on the branch's first
    /// parents that changed it), `None` when there is none.
    ///
    /// # Errors
    ///
    /// Storage errors; [`Error::History`] when git cannot list the history.
    pub fn document_writer(&self, path: &str) -> Result<Option<DocumentWriter>, Error> {
        let history = |source| Error::History { path: path.to_owned(), source: Box::new(source) };
        let out = self
            .git
            .run("log", &["log", "-1", "--first-parent", "--format=%H", BRANCH, "--", path])
            .map_err(history)?;
        if !out.success() {
            // An unborn branch has no history (and no document).
            return Ok(None);
        }
        let Some(id) = out.stdout.lines().next().and_then(|l| ObjectId::from_hex(l.trim().as_bytes()).ok()) else {
            return Ok(None);
        };
        let repo = self.repo.local();
        let info = repo.commit_info(id)?;
        let trailer = info.message.lines().any(|l| l.strip_prefix(DOCUMENT_TRAILER).is_some_and(|p| p.trim() == path));
        let shard = info.message.lines().any(|l| l.starts_with("Chant-Shard:"));
        let only_this = match repo.tree_entry(info.tree, path)? {
            Some(entry) => {
                let parent_root = info.parents.first().map(|p| repo.commit_info(*p)).transpose()?.map(|i| i.tree);
                repo.edit_tree(parent_root, &[(path.to_owned(), entry.id)])? == info.tree
            }
            None => false,
        };
        Ok(Some(DocumentWriter { commit: id, author: info.author, by_chant: trailer && !shard && only_this }))
    }

    /// Writes `bytes` as the document at `path` (commit subject `chant: <label>`), replacing
    /// any earlier version, and pushes when a remote is configured.
    ///
    /// # Errors
    ///
    /// Storage errors, a stale lock, lost races.
    pub fn write_document(&self, path: &str, bytes: &[u8], label: &str) -> Result<DocumentReceipt, Error> {
        if self.config.remote.is_some() {
            self.sync()?;
        }
        let repo = self.repo.local();
        let at = self.config.clock.now();
        let by = self.authorship();
        let commit = cas_until_landed(&repo, BRANCH, || {
            let tip = repo.read_ref(BRANCH)?;
            let root = tip.map(|tip| repo.commit_info(tip)).transpose()?.map(|info| info.tree);
            let blob = repo.write_blob(bytes)?;
            let tree = repo.edit_tree(root, &[(path.to_owned(), blob)])?;
            let message = format!("chant: {label}\n\n{DOCUMENT_TRAILER}{path}\n");
            let parents: Vec<ObjectId> = tip.into_iter().collect();
            let commit = repo.write_commit_by(tree, &parents, &message, at, &by)?;
            Ok(Next::Move { new: commit, expected: tip, value: commit })
        })?;
        let push = if self.config.remote.is_some() { self.sync()?.push } else { PushStatus::LocalOnly };
        Ok(DocumentReceipt { commit, push })
    }
}
