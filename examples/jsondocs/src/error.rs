//! The errors of the JSON documents lexicon: declaring, applying and tearing down documents.

use std::path::PathBuf;

use crate::lexicon::ROOT_KEY;

/// The errors of declaring, applying and tearing down documents.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    /// The env binds no directory.
    #[error("no documents root is bound for env {env}: set `{ROOT_KEY}` under `[env.{env}]` in chant.toml")]
    NoBinding {
        /// The env.
        env: String,
    },
    /// A declared name is not a plain file stem.
    #[error("invalid document name {name:?}: use [a-z0-9][a-z0-9_-]*")]
    InvalidName {
        /// The name as declared.
        name: String,
    },
    /// A declared content is not a JSON object, or carries the marker key itself.
    #[error("invalid content for document {name}: {reason}")]
    InvalidContent {
        /// The document.
        name: String,
        /// Why.
        reason: String,
    },
    /// A declared document cannot be written safely (checked before anything is written).
    #[error("refusing to write document {name}: {reason}")]
    Refused {
        /// The document.
        name: String,
        /// Why.
        reason: String,
    },
    /// The directory could not be used, or a document written or removed.
    #[error("cannot {what} {}", path.display())]
    Io {
        /// What was being done (`write`, `remove`, `create the root`).
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
