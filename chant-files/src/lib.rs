//! The files lexicon, chant's embedded default: declared files (a path under a root, content,
//! mode) per env, observed and applied on the local filesystem.
//!
//! An env binds a root directory (`files_root` under `[env.<name>]` in chant.toml) and declares
//! its files in Rust with a [`FilesDeclaration`]. A [`FilesLexicon`] joins the two with the
//! env's last recorded apply and answers the observation contract ([`chant_lexicon::observe`]):
//!
//! - **present**: a regular file (or a replaceable symlink in its place), with its type, mode and
//!   content digest, so the change set reports drift on either content or mode; ownership is
//!   `owned` when the path was in the last recorded apply, otherwise `foreign`;
//! - **absent**: nothing is there (the root itself may be missing) — only ever after a real look;
//! - **unobserved** `read-failed`: anything that could not be read, for real even as root: a
//!   directory where a file is declared, a symlink loop, a symlink out of the root, a FIFO, an I/O
//!   error, or a path that is not confined to the root; **unobserved** `no-binding`: the env
//!   binds no root, for every declared file.
//!
//! Undeclared files are reported only when the lexicon was told about them: the paths of the
//! last recorded apply (owned, so a `delete` entry, which default-mode apply never acts on). The
//! lexicon never scans the root.
//!
//! [`FilesLexicon::apply`] writes atomically and never deletes; it returns an
//! [`ApplyRecord`] that the caller appends to the ledger. The lexicon itself holds no storage.
//!
//! Beyond the declared estate ([`estate`]): the ambient files under the root (a scan, asked
//! for only by `lifecycle diff --live`), the teardown plan of the owned paths, and the artifacts
//! of the env's `artifacts_dir`.
//!
//! The files lexicon is a plugin like any other: [`FilesDeclaration`] implements
//! [`Declaration`](chant_lexicon::Declaration) and is registered with the key `files_root`, and
//! [`FilesLexicon`] implements [`EnvLexicon`](chant_lexicon::EnvLexicon) (apply with an
//! optional removal of owned, undeclared files; teardown) and the files watcher as its change
//! stream.
//!
//! One component, end to end (what a tick and `lifecycle diff` both do):
//!
//! ```
//! use chant_files::{FilesDeclaration, FilesLexicon};
//! use chant_lexicon::model::EnvStatus;
//! use chant_lexicon::observe::{LastApply, assess};
//!
//! let root = std::env::temp_dir().join(format!("chant-observe-doc-{}", std::process::id()));
//! let files = FilesDeclaration::new().file("app.conf", "port = 8080\n", 0o644);
//! let lexicon = FilesLexicon::new("staging", Some(root.clone()), files);
//!
//! // Nothing applied yet: every file is a create, the env unrecorded.
//! let before = assess("staging", &[lexicon.component_input(false)?]);
//! assert_eq!(before.symptom.status, EnvStatus::Unrecorded);
//! assert_eq!(before.symptom.create_count, 1);
//!
//! // Apply, and hand the record (which the caller appends to the ledger) back as the last apply.
//! let record = lexicon.apply()?;
//! let lexicon = lexicon.with_last_apply(record.last_apply());
//! let after = assess("staging", &[lexicon.component_input(false)?]);
//! assert_eq!(after.symptom.status, EnvStatus::Reconciled);
//! # std::fs::remove_dir_all(&root)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The lexicon registers itself with the lexicon registry, keyed by its declaration type:
//!
//! ```
//! use chant_files::FilesDeclaration;
//! use chant_lexicon::registry::{binding_keys, registration_of};
//!
//! // chant registers its files lexicon with
//! // `inventory::submit! { Registration::of::<FilesDeclaration>() }`; a user's crate does the
//! // same for its own declaration type.
//! let files = registration_of::<FilesDeclaration>()?.expect("chant registers its files lexicon");
//! assert_eq!(files.lexicon, "files");
//! assert!(binding_keys()?.iter().any(|(lexicon, key)| *lexicon == "files" && key.name == "files_root"));
//! # Ok::<(), chant_lexicon::RegistryError>(())
//! ```

mod apply;
mod confine;
pub mod declaration;
mod deep;
pub mod estate;
#[cfg(feature = "import")]
pub mod export;
mod plugin;
mod reading;
mod stat_first;
pub mod teardown;
mod watch;

#[cfg(test)]
mod env_tests;

use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use apply::ApplyRecord;
pub use declaration::{
    DeclaredFile, DocumentError, DocumentFormat, FILE_KIND, FilesDeclaration, MAX_MODE, format_mode, property,
};
pub use estate::ARTIFACTS_KEY;
pub use teardown::{Removal, TEARDOWN_DIGEST};

use self::confine::{Parent, Target, Unreadable};
use self::reading::{DeclaredCursor, DeclaredDigests, Kept, Live, LiveFile, Readings};
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::deep::{ComponentDeep, DeepError, DeepObservation};
use chant_lexicon::observe::estate::{Ambient, ArtifactListing, TeardownPlan};
use chant_lexicon::observe::{
    ChangeSink, ComponentInput, DeclaredEntity, EntityTexts, EstateError, LastApply, Lexicon, LexiconError,
    Observation, Ownership, PresentResource, PropertyName, ReadPath, SubscribeError, Subscription, Unobserved,
    observe_component,
};

/// The component name of the files lexicon, used in status rows and apply records.
pub const COMPONENT: &str = "files";

/// The `chant.toml` key under `[env.<name>]` binding the env's root directory.
pub const ROOT_KEY: &str = "files_root";

/// The `chant.toml` key under `[env.<name>]` saying how often a long-running process reads the
/// env's files whole (a duration: `10m`, `1h`; `0s` every time); between full reads a file whose
/// `lstat` is unchanged keeps the digest its last read gave it (see [`FilesLexicon::with_full_read_every`]).
pub const FULL_READ_KEY: &str = "files_full_read";

pub use stat_first::DEFAULT_FULL_READ;

/// The errors of the files lexicon: declaring, observing (outside the observation itself) and
/// applying. Returned by [`FilesDeclaration::validate`], [`FilesLexicon::declared`],
/// [`FilesLexicon::observe`] and [`FilesLexicon::apply`].
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// The env binds no files root.
    #[error("no files root is bound for env {env}: set `files_root` under `[env.{env}]` in chant.toml")]
    NoBinding {
        /// The env.
        env: String,
    },
    /// A declared path is not a confined relative path.
    #[error("invalid declared file path {path:?}: {reason}")]
    InvalidPath {
        /// The path as declared.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// A declared mode has bits beyond `0o7777`.
    #[error("invalid mode {mode:o} for declared file {path}: a mode is at most 7777 (octal)")]
    InvalidMode {
        /// The path as declared.
        path: String,
        /// The mode as declared.
        mode: u32,
    },
    /// The root cannot be created or resolved.
    #[error("files root {} cannot be used", root.display())]
    Root {
        /// The root as bound.
        root: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A declared path cannot be written safely (checked before anything is written).
    #[error("refusing to write {path}: {detail}")]
    Refused {
        /// The path as declared.
        path: String,
        /// Why.
        detail: String,
    },
    /// Writing a file failed; the files written before it stay written.
    #[error("failed to write {path}{}", already_written(written))]
    Write {
        /// The path as declared.
        path: String,
        /// The paths written before the failure.
        written: Vec<String>,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A file declared as a document does not parse as one.
    #[error("declared file {path} is declared as a {format} document but does not parse: {detail}")]
    InvalidDocument {
        /// The path as declared.
        path: String,
        /// The declared format (`json`).
        format: &'static str,
        /// Why it does not parse.
        detail: String,
    },
    /// A content digest could not be computed (a detected SHA-1 collision attack).
    #[error("cannot digest {what}: {detail}")]
    Digest {
        /// What was being digested.
        what: String,
        /// Why it failed.
        detail: String,
    },
}

fn already_written(written: &[String]) -> String {
    if written.is_empty() { String::new() } else { format!(" (already written: {})", written.join(", ")) }
}

/// The files lexicon bound to one env: its root, its declaration and its last recorded apply.
#[derive(Debug, Clone)]
pub struct FilesLexicon {
    env: String,
    root: Option<PathBuf>,
    binding: Option<String>,
    declaration: FilesDeclaration,
    last_apply: LastApply,
    artifacts_dir: Option<PathBuf>,
    readings: Readings,
    declared_digests: DeclaredDigests,
    full_read_every: Duration,
}

impl FilesLexicon {
    /// Creates the lexicon for `env` with its root binding (`None` when the env binds no root),
    /// its declaration, and no recorded apply.
    pub fn new(env: impl Into<String>, root: Option<PathBuf>, declaration: FilesDeclaration) -> Self {
        FilesLexicon {
            env: env.into(),
            root,
            binding: None,
            last_apply: LastApply::none(),
            declaration,
            artifacts_dir: None,
            readings: Readings::default(),
            declared_digests: DeclaredDigests::default(),
            full_read_every: DEFAULT_FULL_READ,
        }
    }

    /// Sets how often this process reads the root whole ([`DEFAULT_FULL_READ`] unless set;
    /// [`Duration::ZERO`]: every read). Between full reads, a file whose `lstat` (device, inode,
    /// size, modification and status change times) is what it was when this process last read
    /// its content is not read again: its digest from that read stands. Stat-first state lives
    /// in this process's memory only, per root (see docs/operator.md, "Stat-first reads").
    #[must_use]
    pub fn with_full_read_every(mut self, every: Duration) -> Self {
        self.full_read_every = every;
        self
    }

    /// How often this process reads the root whole ([`FilesLexicon::with_full_read_every`]).
    pub fn full_read_every(&self) -> Duration {
        self.full_read_every
    }

    /// Sets the binding as configured (`examples/estates/staging`), which apply records carry;
    /// without it they carry the root path as given. Record the configured value, not a path
    /// anchored on this machine, so clones in other directories recognise the record.
    #[must_use]
    pub fn with_binding(mut self, binding: impl Into<String>) -> Self {
        self.binding = Some(binding.into());
        self
    }

    /// Returns the binding apply records carry: the configured value, else the root as given,
    /// else `None` when no root is bound.
    pub fn binding(&self) -> Option<String> {
        self.binding.clone().or_else(|| self.root.as_ref().map(|r| r.display().to_string()))
    }

    /// Sets the env's last recorded apply: whether one exists and the paths it owned.
    #[must_use]
    pub fn with_last_apply(mut self, last_apply: LastApply) -> Self {
        self.last_apply = last_apply;
        self
    }

    /// Returns the env.
    pub fn env(&self) -> &str {
        &self.env
    }

    /// Returns the root binding.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Returns the declaration.
    pub fn declaration(&self) -> &FilesDeclaration {
        &self.declaration
    }

    /// Returns the last recorded apply.
    pub fn last_apply(&self) -> &LastApply {
        &self.last_apply
    }

    /// Returns the declared entities (see [`FilesDeclaration::entities`]).
    ///
    /// # Errors
    ///
    /// [`FilesError::Digest`].
    pub fn declared(&self) -> Result<Vec<DeclaredEntity>, FilesError> {
        let entities = self.declaration.entities()?;
        self.declared_digests.remember(self.declaration.files(), &entities);
        Ok(entities)
    }

    /// Observes the declared files (and those of the last recorded apply).
    ///
    /// # Errors
    ///
    /// [`FilesError::Digest`] from the declared side; every failure to read is in the
    /// observation, never an error.
    pub fn observe(&self) -> Result<Observation, FilesError> {
        Ok(observe_component(self, &self.declared()?))
    }

    /// Observes and returns everything the observe core needs to assess this component.
    ///
    /// # Errors
    ///
    /// As [`FilesLexicon::observe`].
    pub fn component_input(&self, delete_counts_as_drift: bool) -> Result<ComponentInput, FilesError> {
        let declared = self.declared()?;
        let observation = observe_component(self, &declared);
        Ok(ComponentInput {
            component: COMPONENT.to_owned(),
            declared,
            observation,
            last_apply: self.last_apply.clone(),
            delete_counts_as_drift,
        })
    }

    /// Writes every declared file that is not already as declared, atomically, creating parent
    /// directories and deleting nothing.
    ///
    /// # Guarantees
    ///
    /// Each file is written to a temporary file in its own directory with its mode set
    /// explicitly, `fsync`ed, renamed over the target and its directory `fsync`ed: a reader sees
    /// the old file or the new one, never a torn write. Nothing is ever deleted.
    ///
    /// # Errors
    ///
    /// An invalid declaration, an unbound or unusable root, or a path that cannot be written
    /// safely refuse the apply before anything is written; a failing write stops it, naming the
    /// files already written.
    pub fn apply(&self) -> Result<ApplyRecord, FilesError> {
        apply::apply(&self.env, self.root.as_deref(), self.binding(), &self.declaration)
    }

    /// Removes the owned files that are no longer declared (those of the last recorded apply
    /// that the declaration drops): what `apply(delete_mode = "owned-only")` adds to an apply.
    ///
    /// # Errors
    ///
    /// An unbound or unusable root, or a failing removal.
    pub fn remove_owned_undeclared(&self) -> Result<Removal, FilesError> {
        let Some(root) = &self.root else { return Err(FilesError::NoBinding { env: self.env.clone() }) };
        if !self.last_apply.recorded {
            return Ok(Removal::default());
        }
        let declared = self.declaration.files();
        teardown::remove(root, self.last_apply.owned.iter().filter(|p| !declared.contains_key(p.as_str())))
    }

    /// Executes the teardown plan `planned`: removes each file it lists that chant still owns
    /// (a path of the last recorded apply), and returns the removal (an owned path the plan did
    /// not list is kept, and said) and the teardown record for the ledger; nothing else under
    /// the root is touched.
    ///
    /// # Errors
    ///
    /// An unbound or unusable root, or a failing removal.
    pub fn teardown(&self, planned: &TeardownPlan) -> Result<(Removal, ApplyRecord), FilesError> {
        let Some(root) = &self.root else { return Err(FilesError::NoBinding { env: self.env.clone() }) };
        let mut removal = if self.last_apply.recorded {
            teardown::remove(
                root,
                self.last_apply.owned.iter().filter(|p| planned.candidates.contains_key(p.as_str())),
            )?
        } else {
            Removal::default()
        };
        for path in planned.candidates.keys().filter(|p| !self.last_apply.owned.contains(p.as_str())) {
            removal.kept.push(format!("{path}: in the plan, and chant no longer owns it"));
        }
        if self.last_apply.recorded {
            let real_root = std::fs::canonicalize(root).ok();
            for path in self.last_apply.owned.iter().filter(|p| !planned.candidates.contains_key(p.as_str())) {
                if real_root.as_ref().is_some_and(|r| r.join(path).symlink_metadata().is_ok()) {
                    removal.kept.push(format!("{path}: owned, and not in the plan"));
                }
            }
        }
        let binding = self.binding().unwrap_or_default();
        Ok((removal, teardown::record(&self.env, binding)))
    }

    fn ownership(&self, path: &str) -> Ownership {
        if self.last_apply.recorded && self.last_apply.owned.contains(path) {
            Ownership::Owned
        } else {
            Ownership::Foreign
        }
    }

    /// Observes the path `name` into `out` and returns what the deep read keeps of it (`None`
    /// when it is absent, unreadable or not confined); `read` keeps the directories it resolved
    /// for the next paths of this read.
    fn observe_path(
        &self,
        real_root: &Path,
        name: &str,
        kind: Option<&str>,
        read: &mut OneRead<'_>,
        out: &mut Verdicts,
    ) -> Option<Live> {
        let parents = &mut read.parents;
        let unobserved = |detail: String| {
            let mut verdict = Unobserved::new(UnobservedReason::ReadFailed).detail(detail);
            verdict.kind = kind.map(|kind| PropertyName::from(kind.to_owned()));
            verdict
        };
        if let Err(reason) = declaration::check_path(name) {
            out.insert_unobserved(name, unobserved(format!("the path is not confined to the root: {reason}")));
            return None;
        }
        let dir = match parents.resolve(real_root, name) {
            Ok(Parent::Missing) => {
                out.insert_queried(name, real_root.join(name).display().to_string());
                return None;
            }
            Ok(Parent::Dir(dir)) => dir,
            Err(why) => {
                out.insert_unobserved(
                    name,
                    unobserved(why.0.clone()).queried(real_root.join(name).display().to_string()),
                );
                return None;
            }
        };
        // One path per file, for the address shown (and the lstat and the open when the
        // directory could not be opened).
        let file_name = confine::file_name(name);
        let address = dir.join(file_name);
        let shown: Arc<str> = shown(&address).into();
        out.insert_queried(name, Arc::clone(&shown));
        let resource = |kind_value: &str| {
            PresentResource::new(self.ownership(name)).kind(FILE_KIND).property(property::TYPE, kind_value)
        };
        let dir_fd = address.parent().and_then(|dir| parents.open(name, dir));
        let found = match dir_fd {
            Some(fd) => confine::inspect_in(real_root, fd, file_name, &address, name),
            None => confine::inspect_at(real_root, &address, name).map(Target::identity),
        };
        match found {
            Ok(Target::Absent) => None,
            Ok(Target::Symlink) => {
                out.insert_present(name, resource("symlink"));
                Some(Live::Symlink)
            }
            Ok(Target::File(checked)) => {
                let document = self.declaration.document_format(name).is_some();
                // Stat-first: unchanged since this process last read it, its digest stands.
                if !document && let Some(digest) = read.stats.known(name, &checked) {
                    let live = LiveFile::stated(&checked.stat, digest.clone());
                    out.insert_present(
                        name,
                        resource(FILE_KIND)
                            .property(property::MODE, format_mode(checked.stat.mode & MAX_MODE))
                            .property(property::CONTENT, digest),
                    );
                    return Some(Live::File(live));
                }
                let file = match dir_fd {
                    Some(fd) => confine::open_in(fd, file_name),
                    None => File::open(&address),
                };
                match file.and_then(|file| read_checked(file, checked.dev, checked.ino)) {
                    Ok((content, meta)) => {
                        // The declared bytes exactly: the declared digest (computed from them).
                        let digest = match read.declared.digest(name, &content) {
                            Some(digest) => Ok(digest),
                            None => declaration::content_digest(&content),
                        };
                        if let Ok(digest) = &digest
                            && !document
                        {
                            let as_read = Target::File(meta.clone()).identity();
                            if let Target::File(as_read) = as_read
                                && as_read.stat.size == content.len() as u64
                            {
                                read.stats.remember(name, &as_read, digest);
                            }
                        }
                        let live = LiveFile::new(&meta, &content, digest.as_ref().ok().cloned(), document);
                        match digest {
                            Ok(digest) => out.insert_present(
                                name,
                                resource(FILE_KIND)
                                    .property(property::MODE, format_mode(meta.mode() & MAX_MODE))
                                    .property(property::CONTENT, digest),
                            ),
                            Err(e) => out.insert_unobserved(
                                name,
                                unobserved(format!("cannot digest {name}: {e}")).queried(shown),
                            ),
                        }
                        Some(Live::File(live))
                    }
                    Err(e) => {
                        out.insert_unobserved(name, unobserved(format!("cannot read {name}: {e}")).queried(shown));
                        None
                    }
                }
            }
            Err(why) => {
                out.insert_unobserved(name, unobserved(why.0).queried(shown));
                None
            }
        }
    }
}

impl FilesLexicon {
    /// Reads the live content of the declared file `name` through the same confinement checks
    /// as an observation; `None` when it is absent, not a regular file, or cannot be read.
    fn read_live(&self, name: &str) -> Option<Vec<u8>> {
        declaration::check_path(name).ok()?;
        let real_root = fs::canonicalize(self.root.as_ref()?).ok()?;
        let Ok(Parent::Dir(dir)) = confine::parent(&real_root, name, false) else { return None };
        let file_name = confine::file_name(name);
        match confine::inspect(&real_root, &dir, file_name, name) {
            Ok(Target::File(checked)) => read_regular(&dir.join(file_name), &checked).ok().map(|(content, _)| content),
            _ => None,
        }
    }
}

/// One thin read in progress: what it found per path (kept for the deep read) and the parent
/// directories it resolved, so the files of one directory resolve it once.
struct OneRead<'a> {
    kept: Kept,
    parents: Parents,
    /// The declared files with the digests the lexicon remembered (see [`DeclaredDigests`]).
    declared: DeclaredCursor<'a>,
    /// What this process remembers of the root's files since it last read them (stat-first).
    stats: stat_first::Pass,
}

/// The parent directories one read resolved, by their declared path, and the last one opened
/// (the names come sorted, so the files of one directory come together: one open each, and one
/// directory open at a time, however many the estate has).
#[derive(Default)]
struct Parents {
    resolved: HashMap<String, Result<Parent, Unreadable>>,
    open: Option<(String, Option<OwnedFd>)>,
}

/// The verdicts of one read, in the order the paths were observed (sorted), gathered before the
/// observation's maps are built from them at once ([`Verdicts::into_observation`]): the same
/// maps as inserting each verdict as it comes (a later verdict of a name replaces an earlier
/// one), without a search of the growing map per insert.
#[derive(Default)]
struct Verdicts {
    resources: Vec<(String, PresentResource)>,
    unobserved: Vec<(String, Unobserved)>,
    queried: Vec<(String, Arc<str>)>,
}

impl Verdicts {
    fn with_capacity(n: usize) -> Self {
        Verdicts { resources: Vec::with_capacity(n), unobserved: Vec::new(), queried: Vec::with_capacity(n) }
    }

    fn insert_present(&mut self, name: &str, resource: PresentResource) {
        self.resources.push((name.to_owned(), resource));
    }

    fn insert_unobserved(&mut self, name: &str, verdict: Unobserved) {
        self.unobserved.push((name.to_owned(), verdict));
    }

    fn insert_queried(&mut self, name: &str, address: impl Into<Arc<str>>) {
        self.queried.push((name.to_owned(), address.into()));
    }

    /// The observation of these verdicts (`collect` sorts stably and keeps the last of equal
    /// names, as successive inserts would).
    fn into_observation(self) -> Observation {
        let mut observation = Observation::new();
        observation.resources = self.resources.into_iter().collect();
        observation.unobserved = self.unobserved.into_iter().collect();
        observation.queried = self.queried.into_iter().collect();
        observation
    }
}

/// A path as an observation shows it: as `Path::display` writes it, without its lossy
/// formatter when the path is UTF-8 (nearly always).
fn shown(path: &Path) -> String {
    path.to_str().map_or_else(|| path.display().to_string(), str::to_owned)
}

/// The directory part of a confined path (`""` at the root).
fn dir_of(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Parents {
    /// [`confine::parent`] of the confined path `name`, resolved once per directory.
    fn resolve(&mut self, real_root: &Path, name: &str) -> Result<&Parent, &Unreadable> {
        self.resolved.entry(dir_of(name).to_owned()).or_insert_with(|| confine::parent(real_root, name, false)).as_ref()
    }

    /// The open directory `dir` that holds `name` (resolved by [`Parents::resolve`]), opened
    /// unless it is the last one; `None` when it cannot be opened.
    fn open(&mut self, name: &str, dir: &Path) -> Option<BorrowedFd<'_>> {
        let key = dir_of(name);
        if self.open.as_ref().is_none_or(|(open, _)| open != key) {
            self.open = Some((key.to_owned(), confine::open_dir(dir)));
        }
        self.open.as_ref().and_then(|(_, fd)| fd.as_ref()).map(OwnedFd::as_fd)
    }
}

/// Reads a file that `lstat` said is regular, checking on the open handle that it is still that
/// same file (so a swap for a symlink between the check and the open is never read through).
fn read_regular(path: &Path, checked: &fs::Metadata) -> io::Result<(Vec<u8>, u32)> {
    let (content, meta) = read_checked(File::open(path)?, checked.dev(), checked.ino())?;
    Ok((content, meta.permissions().mode() & MAX_MODE))
}

/// Reads the opened `file` whole if it is the regular file `dev`/`ino` (else it was replaced
/// since the check), and returns its content and the handle's metadata.
fn read_checked(mut file: File, dev: u64, ino: u64) -> io::Result<(Vec<u8>, fs::Metadata)> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.dev() != dev || meta.ino() != ino {
        return Err(io::Error::other("it was replaced while being read"));
    }
    let mut content = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // `File::read_to_end` asks the kernel for the size again (an fstat and an lseek per file);
    // the handle's fstat above just said it, so read through the plain loop (until end of file,
    // so a file that grew since is read whole).
    Read::read_to_end(&mut Read::take(&mut file, u64::MAX), &mut content)?;
    Ok((content, meta))
}

impl Lexicon for FilesLexicon {
    fn name(&self) -> &str {
        COMPONENT
    }

    fn subscribe_changes(&self, sink: ChangeSink) -> Result<Subscription, SubscribeError> {
        watch::subscribe(self, sink)
    }

    fn texts(&self, name: &str) -> Option<EntityTexts> {
        let declared = self.declaration.files().get(name)?.content.clone();
        Some(EntityTexts { declared, live: self.read_live(name) })
    }

    fn read_paths(&self) -> &[ReadPath] {
        &[ReadPath::DescribeResources, ReadPath::ObserveResourcesDeep]
    }

    // --- deep read hooks ---

    fn observe_resources_deep(&self, declared: &[DeclaredEntity]) -> Result<DeepObservation, DeepError> {
        Ok(self.deep(declared)?)
    }

    fn observe_deep_classified(&self, declared: &[DeclaredEntity]) -> Option<Result<ComponentDeep, DeepError>> {
        Some(self.deep_classified(declared).map_err(DeepError::from))
    }

    fn substrate_written_paths(&self) -> &'static [&'static str] {
        deep::SUBSTRATE_WRITTEN
    }

    // --- estate hooks (see `estate`) ---

    fn ambient_kinds(&self) -> Vec<String> {
        vec![FILE_KIND.to_owned()]
    }

    fn observe_ambient(&self, declared: &[DeclaredEntity], observed: &Observation) -> Result<Ambient, EstateError> {
        self.ambient_files(declared, observed)
    }

    fn teardown_owned(&self, _: &[DeclaredEntity]) -> Result<TeardownPlan, EstateError> {
        Ok(self.owned_plan())
    }

    fn list_artifacts(&self) -> Result<ArtifactListing, EstateError> {
        self.artifacts()
    }

    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        let Some(root) = &self.root else {
            let detail = format!(
                "env {} binds no files root (set `files_root` under `[env.{}]` in chant.toml)",
                self.env, self.env
            );
            return Ok(Observation::unobserved_all(declared, UnobservedReason::NoBinding, Some(&detail)));
        };
        let mut names: BTreeSet<(&str, Option<&str>)> =
            declared.iter().map(|d| (d.name.as_str(), d.kind.as_deref())).collect();
        let declared_names: BTreeSet<&str> = names.iter().map(|(n, _)| *n).collect();
        names.extend(
            self.last_apply.owned.iter().filter(|n| !declared_names.contains(n.as_str())).map(|n| (n.as_str(), None)),
        );

        let real_root = match fs::canonicalize(root) {
            Ok(real) if real.is_dir() => real,
            Ok(_) => {
                return Err(LexiconError::ReadFailed {
                    lexicon: COMPONENT.to_owned(),
                    detail: format!("files root {} is not a directory", root.display()),
                    source: None,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // The root itself is missing: every file is really not there.
                let mut observation = Observation::new();
                for (name, _) in names {
                    observation.insert_queried(name, root.join(name).display().to_string());
                }
                return Ok(observation);
            }
            Err(e) => {
                return Err(LexiconError::read_failed(
                    COMPONENT,
                    format!("cannot resolve files root {}", root.display()),
                    e,
                ));
            }
        };

        let mut verdicts = Verdicts::with_capacity(names.len());
        let digests = self.declared_digests.take();
        let mut read = OneRead {
            kept: Kept::with_capacity(names.len()),
            parents: Parents::default(),
            declared: DeclaredCursor::new(self.declaration.files(), &digests),
            stats: stat_first::Pass::begin(&real_root, self.full_read_every, Instant::now()),
        };
        for (name, kind) in names {
            let live = self.observe_path(&real_root, name, kind, &mut read, &mut verdicts);
            read.kept.insert(name.to_owned(), live);
        }
        read.stats.end();
        self.readings.keep(read.kept);
        self.declared_digests.restore(digests);
        Ok(verdicts.into_observation())
    }
}
