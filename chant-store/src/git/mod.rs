//! Git access: every local read and write goes through gix, in process; only fetch, push,
//! `gc --auto`, `blame` and `log -p` run the `git` binary, all of them through [`cmd`].
//!
//! The layer offers generic primitives and knows nothing about what is stored: blobs, trees,
//! commits written under chant's own identity, and reference updates that are a real
//! compare-and-swap ([`Repo::update_ref`]). A lost compare-and-swap ([`Error::RefConflict`]) and a
//! reference whose `<ref>.lock` could not be taken ([`Error::RefLocked`], with the lock's path and
//! age, so callers can tell a stale lock from a lost race) are distinct errors. References may
//! point directly at a blob (the lease does this). Nothing here touches HEAD, the index or a work
//! tree.

pub mod blame;
pub mod cmd;
mod history;
pub mod log;
mod loose;
mod object_file;
mod pack_file;
pub mod porcelain;
mod presence;
mod repo;
mod written;

use std::path::PathBuf;
use std::time::Duration;

pub use gix::ObjectId;
pub use history::Divergence;
pub use repo::{Authorship, CommitInfo, EntryKind, Identity, Repo, SharedRepo, TreeEntry};

/// What [`Repo`] and [`SharedRepo`] operations return when git storage refuses or fails.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No repository was found at or above a directory.
    #[error("failed to open a git repository at {path}")]
    Open {
        /// The directory searched from.
        path: PathBuf,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// A reference name is not a valid full name such as `refs/heads/x`.
    #[error("invalid reference name {name:?}")]
    RefName {
        /// The rejected name.
        name: String,
    },
    /// A reference could not be read.
    #[error("failed to read reference {name}")]
    ReadRef {
        /// The reference.
        name: String,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// A reference is symbolic where an object id was expected.
    #[error("reference {name} is symbolic, not a direct reference to an object")]
    SymbolicRef {
        /// The reference.
        name: String,
    },
    /// A compare-and-swap lost: the reference did not hold the expected value.
    #[error("reference {name} moved: expected {}, found {}", show(expected), show(actual))]
    RefConflict {
        /// The reference.
        name: String,
        /// What the caller expected (`None`: that it does not exist).
        expected: Option<ObjectId>,
        /// What was found under the lock (`None`: it does not exist).
        actual: Option<ObjectId>,
    },
    /// The lock file of a reference (or of `packed-refs`) exists and was not released in time.
    #[error("reference {name} is locked: {} exists", lock_path.display())]
    RefLocked {
        /// The reference.
        name: String,
        /// The lock file that could not be created.
        lock_path: PathBuf,
        /// How old the lock file is; `None` when it vanished before it could be examined.
        age: Option<Duration>,
    },
    /// An object could not be encoded for writing.
    #[error("failed to encode a {kind} object")]
    EncodeObject {
        /// The kind of object.
        kind: &'static str,
        /// What the encoder reported.
        #[source]
        source: std::io::Error,
    },
    /// A loose object file could not be written into the object directory.
    #[error("failed to write the {kind} object file {}", path.display())]
    ObjectFile {
        /// The kind of object.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// What the file system reported.
        #[source]
        source: std::io::Error,
    },
    /// A pack file or its index could not be written into the object directory.
    #[error("failed to write the pack file {}", path.display())]
    PackFile {
        /// The file.
        path: PathBuf,
        /// What the file system reported.
        #[source]
        source: std::io::Error,
    },
    /// A loose reference file could not be read or written.
    #[error("failed to access the reference file of {name} at {}", path.display())]
    RefFile {
        /// The reference.
        name: String,
        /// The file.
        path: PathBuf,
        /// What the file system reported.
        #[source]
        source: std::io::Error,
    },
    /// A reference update failed for another reason.
    #[error("failed to update reference {name}")]
    UpdateRef {
        /// The reference.
        name: String,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// An object could not be read.
    #[error("failed to read object {id}")]
    ReadObject {
        /// The object.
        id: ObjectId,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// An object is of another kind than expected.
    #[error("object {id} is a {actual}, expected a {expected}")]
    ObjectKind {
        /// The object.
        id: ObjectId,
        /// The kind wanted.
        expected: &'static str,
        /// The kind found.
        actual: String,
    },
    /// An object could not be written.
    #[error("failed to write a {kind} object")]
    WriteObject {
        /// The kind of object.
        kind: &'static str,
        /// What gix reported.
        #[source]
        source: Box<gix::Error>,
    },
    /// A tree path is malformed (empty, absolute, or with an empty, `.` or `..` component).
    #[error("invalid tree path {path:?}")]
    TreePath {
        /// The rejected path.
        path: String,
    },
}

fn show(id: &Option<ObjectId>) -> String {
    id.map_or_else(|| "no reference".to_owned(), |id| id.to_string())
}

/// The result type of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;
