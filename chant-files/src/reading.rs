//! One read of the live files per assessment: the thin observation
//! ([`FilesLexicon::describe_resources`](super::FilesLexicon)) keeps what it read of each path
//! (its type, mode, owner, size and content digest; a document's bytes), and the deep read that
//! follows on the same lexicon takes it instead of opening every file a second time.
//!
//! What is kept is taken once: a deep read with nothing kept (no thin read before it, or a
//! second deep read) reads the files itself. The thin read and the deep read of one assessment
//! so describe one reading of the filesystem, not two moments of it. A clone of the lexicon
//! starts with nothing kept.

use std::collections::{BTreeMap, HashMap};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

use super::confine::FileStat;
use super::{DeclaredFile, MAX_MODE, property};
use chant_lexicon::observe::DeclaredEntity;

/// What one read found at a path that was a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LiveFile {
    /// Its permission bits.
    pub(super) mode: u32,
    /// Its owner.
    pub(super) uid: u32,
    /// Its group.
    pub(super) gid: u32,
    /// Its size in bytes, as read.
    pub(super) size: usize,
    /// The digest of its content (`None` when it could not be computed).
    pub(super) digest: Option<String>,
    /// Its content, kept only for a file declared as a document (the deep read parses it).
    pub(super) document: Option<Vec<u8>>,
}

impl LiveFile {
    /// What was read of a file: its metadata (from the open handle) and its content.
    pub(super) fn new(meta: &Metadata, content: &[u8], digest: Option<String>, document: bool) -> LiveFile {
        LiveFile {
            mode: meta.mode() & MAX_MODE,
            uid: meta.uid(),
            gid: meta.gid(),
            size: content.len(),
            digest,
            document: document.then(|| content.to_vec()),
        }
    }

    /// A file not read again ([`stat_first`](super::stat_first)): its `lstat` and the digest
    /// of its content when this process last read it (not a document: those are always read).
    pub(super) fn stated(stat: &FileStat, digest: String) -> LiveFile {
        LiveFile {
            mode: stat.mode & MAX_MODE,
            uid: stat.uid,
            gid: stat.gid,
            size: usize::try_from(stat.size).unwrap_or(usize::MAX),
            digest: Some(digest),
            document: None,
        }
    }
}

/// What one read found at a declared path, as the deep read needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Live {
    /// A regular file.
    File(LiveFile),
    /// A replaceable symlink.
    Symlink,
}

/// Per path, what the last thin read found (`None`: nothing the deep read reports — absent,
/// unreadable or not confined). Looked up by name, never iterated: a hash map.
pub(super) type Kept = HashMap<String, Option<Live>>;

/// The readings a thin read keeps for the deep read after it.
#[derive(Default)]
pub(super) struct Readings(Mutex<Option<Kept>>);

impl Readings {
    /// Keeps `kept`, replacing anything kept before.
    pub(super) fn keep(&self, kept: Kept) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(kept);
        }
    }

    /// Takes what was kept, leaving nothing.
    pub(super) fn take(&self) -> Option<Kept> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// The declared content digest of each declared file, in the order of the declaration's files
/// (`None` for a file whose entity carries no digest, a document), as the lexicon's last
/// [`FilesLexicon::declared`](super::FilesLexicon::declared) computed them from its own
/// declaration: a live file that holds the declared bytes exactly has that digest, so the thin
/// read takes it instead of hashing the same bytes a second time (a file whose bytes differ is
/// hashed as read). A clone of the lexicon starts with nothing remembered.
#[derive(Default)]
pub(super) struct DeclaredDigests(Mutex<Vec<Option<String>>>);

impl DeclaredDigests {
    /// Remembers the content digest of each of `entities`, which are the entities of `files`
    /// one for one and in order (else nothing is remembered), replacing what was remembered.
    pub(super) fn remember(&self, files: &BTreeMap<String, DeclaredFile>, entities: &[DeclaredEntity]) {
        let aligned = files.len() == entities.len() && files.keys().zip(entities).all(|(path, e)| *path == e.name);
        let digests = if aligned {
            entities.iter().map(|e| e.properties.get(property::CONTENT).cloned()).collect()
        } else {
            Vec::new()
        };
        if let Ok(mut slot) = self.0.lock() {
            *slot = digests;
        }
    }

    /// Takes what is remembered for one read, which [`DeclaredDigests::restore`] gives back.
    pub(super) fn take(&self) -> Vec<Option<String>> {
        self.0.lock().map(|mut slot| std::mem::take(&mut *slot)).unwrap_or_default()
    }

    /// Gives back what [`DeclaredDigests::take`] took, unless something was remembered since.
    pub(super) fn restore(&self, digests: Vec<Option<String>>) {
        if let Ok(mut slot) = self.0.lock()
            && slot.is_empty()
        {
            *slot = digests;
        }
    }
}

/// The declared files of one read with their remembered digests, walked in step with the
/// read's sorted paths.
pub(super) struct DeclaredCursor<'a> {
    files: Vec<(&'a str, &'a [u8], &'a str)>,
    next: usize,
}

impl<'a> DeclaredCursor<'a> {
    /// The files of `files` that have a remembered digest in `digests` (empty when nothing was
    /// remembered).
    pub(super) fn new(files: &'a BTreeMap<String, DeclaredFile>, digests: &'a [Option<String>]) -> Self {
        let files = files
            .iter()
            .zip(digests)
            .filter_map(|((path, file), digest)| Some((path.as_str(), file.content.as_slice(), digest.as_deref()?)))
            .collect();
        DeclaredCursor { files, next: 0 }
    }

    /// The declared digest of `path` when `content` is its declared content byte for byte;
    /// `None` otherwise (the caller hashes `content`). Paths are asked in sorted order; one
    /// asked out of order is only hashed.
    pub(super) fn digest(&mut self, path: &str, content: &[u8]) -> Option<String> {
        while self.files.get(self.next).is_some_and(|(p, _, _)| *p < path) {
            self.next += 1;
        }
        let (p, declared, digest) = self.files.get(self.next)?;
        (*p == path && *declared == content).then(|| (*digest).to_owned())
    }
}

impl Clone for DeclaredDigests {
    fn clone(&self) -> Self {
        DeclaredDigests::default()
    }
}

impl std::fmt::Debug for DeclaredDigests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let remembered = self.0.lock().map(|d| d.len()).ok();
        f.debug_struct("DeclaredDigests").field("remembered", &remembered).finish()
    }
}

impl Clone for Readings {
    fn clone(&self) -> Self {
        Readings::default()
    }
}

impl std::fmt::Debug for Readings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.0.lock().map(|k| k.as_ref().map(HashMap::len)).unwrap_or(None);
        f.debug_struct("Readings").field("kept", &kept).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_digest_is_taken_only_for_the_declared_bytes_of_its_path() {
        let declaration =
            crate::FilesDeclaration::new().file("a", "x", 0o644).file("b", "y", 0o644).file("c", "z", 0o644);
        let entities = declaration.entities().unwrap();
        let digests = DeclaredDigests::default();
        digests.remember(declaration.files(), &entities[1..]);
        assert!(digests.take().is_empty(), "entities that are not the files one for one are not remembered");
        digests.remember(declaration.files(), &entities);
        assert_eq!(digests.clone().take(), Vec::<Option<String>>::new());
        let remembered = digests.take();
        let mut cursor = DeclaredCursor::new(declaration.files(), &remembered);
        let digest = |n: usize| entities[n].properties.get(property::CONTENT).unwrap().clone();
        assert_eq!(cursor.digest("a", b"x"), Some(digest(0)));
        assert_eq!(cursor.digest("b", b"x"), None, "other bytes are hashed as read");
        assert_eq!(cursor.digest("b0", b"y"), None, "an undeclared path has no declared digest");
        assert_eq!(cursor.digest("c", b"z"), Some(digest(2)));
        assert_eq!(cursor.digest("a", b"x"), None, "a path asked out of order is only hashed");
        digests.restore(remembered);
        assert_eq!(digests.take().len(), 3);
    }

    #[test]
    fn what_is_kept_is_taken_once_and_a_clone_starts_empty() {
        let readings = Readings::default();
        assert_eq!(readings.take(), None);
        let mut kept = Kept::new();
        kept.insert("a".into(), Some(Live::Symlink));
        kept.insert("b".into(), None);
        readings.keep(kept.clone());
        assert_eq!(readings.clone().take(), None);
        assert_eq!(readings.take(), Some(kept));
        assert_eq!(readings.take(), None);
    }
}
