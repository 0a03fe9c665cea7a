//! A repository opened through gix with reproducible settings: system and user configuration are
//! ignored, so only the repository's own config applies; reflogs are not written for chant's
//! references; commits are written under the identity the caller passes ([`Authorship`]), or
//! chant's own (`chant <chant@localhost>`, [`Identity::chant`]) when it passes none.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use gix::bstr::ByteSlice;
use gix::refs::transaction::{PreviousValue, RefEdit};
use gix::refs::{FullName, Target};

use super::loose::{self, Cas, LooseStore};
use super::object_file;
use super::pack_file;
use super::written::{Kind, Written};
use super::{Error, ObjectId, Result};

/// How many pack indices an open repository can track. gix fixes this when the repository is
/// opened (by default 32, or 1.1 times the packs present then); a long-lived handle in a
/// repository that `git gc --auto` keeps adding packs to (up to `gc.autoPackLimit`, 50 by
/// default, before it consolidates) would otherwise run out and fail every object read.
const OBJECT_STORE_SLOTS: gix::odb::store::init::Slots =
    gix::odb::store::init::Slots::AsNeededByDiskState { multiplier: 2.0, minimum: 512 };

/// How many times [`Repo`] looks an object up before it calls it missing (4, 8 and 16 ms apart).
const FIND_TRIES: u32 = 4;

/// How loose objects are compressed: git's and gix's default (`core.looseCompression`, level 1).
/// The packs of [`Repo::in_one_pack`] use the same level: they hold what would have been loose.
const LOOSE_COMPRESSION: gix::zlib::Compression = gix::zlib::Compression::BEST_SPEED;

/// How many packs of one [`Repo::in_one_pack`] each a thread's handle writes before it merges
/// them into one and removes them: the packs a long-running writer leaves stay one per this many
/// appends (and `git gc --auto`'s geometric repack, run every few hundred appends, rolls those
/// up), so readers search few indices.
const MERGE_PACKS: usize = 16;

/// The name and email chant writes as author and committer of ledger commits when no other
/// identity is known.
const IDENTITY: (&str, &str) = ("chant", "chant@localhost");

/// A name and e-mail that authors or commits a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The name.
    pub name: String,
    /// The e-mail.
    pub email: String,
}

impl Identity {
    /// chant's own identity, `chant <chant@localhost>`: what older versions wrote on every ledger
    /// commit, and the fallback when git knows no identity.
    pub fn chant() -> Self {
        Identity { name: IDENTITY.0.to_owned(), email: IDENTITY.1.to_owned() }
    }

    /// An identity of `name` and `email` made safe for a commit header: `<`, `>` and control
    /// characters are dropped and blanks trimmed; an empty part takes chant's.
    pub fn new(name: &str, email: &str) -> Self {
        let clean = |s: &str, fallback: &str| {
            let kept: String = s.chars().filter(|c| !c.is_control() && !matches!(c, '<' | '>')).collect();
            let kept = kept.trim();
            if kept.is_empty() { fallback.to_owned() } else { kept.to_owned() }
        };
        Identity { name: clean(name, IDENTITY.0), email: clean(email, IDENTITY.1) }
    }

    /// Whether this is chant's own identity (an older ledger commit, or no identity known).
    pub fn is_chant(&self) -> bool {
        self.name == IDENTITY.0 && self.email == IDENTITY.1
    }

    fn signature(&self, time: gix::date::Time) -> gix::actor::Signature {
        gix::actor::Signature { name: self.name.as_str().into(), email: self.email.as_str().into(), time }
    }
}

/// Who writes a commit: its author (who acted) and its committer (whose git wrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorship {
    /// The author.
    pub author: Identity,
    /// The committer.
    pub committer: Identity,
}

impl Authorship {
    /// `identity` as both author and committer.
    pub fn of(identity: Identity) -> Self {
        Authorship { author: identity.clone(), committer: identity }
    }
}

impl Default for Authorship {
    fn default() -> Self {
        Authorship::of(Identity::chant())
    }
}

/// A repository that can be shared between threads; [`SharedRepo::local`] hands out a [`Repo`]
/// for one thread's operation.
#[derive(Clone)]
pub struct SharedRepo {
    inner: gix::ThreadSafeRepository,
    lock_timeout: Duration,
    /// Tells this repository's handles apart in each thread's handle cache.
    id: u64,
    /// This process's liveness marker in the repository (`None`: it could not be written).
    _presence: Option<Arc<super::presence::Presence>>,
}

/// How many fully decoded objects (by size) each thread's handle keeps: the trees and shards a
/// round reads again within a tick (the due check, then the append's base) stay decoded.
const OBJECT_CACHE_BYTES: usize = 2 << 20;
/// How many repositories' handles one thread keeps.
const HANDLES_PER_THREAD: usize = 4;

thread_local! {
    /// This thread's handles, newest last: opening a handle allocates its caches, which cost
    /// more than a small read, so one is kept per repository and thread.
    static HANDLES: RefCell<Vec<(u64, Rc<Handle>)>> = const { RefCell::new(Vec::new()) };
}

impl SharedRepo {
    /// Finds the repository containing `dir` (a work tree, a subdirectory of one, or a bare
    /// repository). `lock_timeout` bounds how long a reference update waits for a `<ref>.lock`
    /// held by someone else before reporting [`Error::RefLocked`].
    pub fn discover(dir: &Path, lock_timeout: Duration) -> Result<Self> {
        let ms = lock_timeout.as_millis();
        let options = gix::open::Options::isolated()
            .config_overrides([
                format!("core.filesRefLockTimeout={ms}"),
                format!("core.packedRefsTimeout={}", ms.max(1000)),
                "core.logAllRefUpdates=false".to_owned(),
            ])
            .object_store_slots(OBJECT_STORE_SLOTS);
        let mapping = gix::sec::trust::Mapping { full: options.clone(), reduced: options };
        let inner = gix::ThreadSafeRepository::discover_opts(dir, Default::default(), mapping)
            .map_err(|source| Error::Open { path: dir.to_owned(), source: Box::new(source) })?;
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        let presence = super::presence::register(inner.refs.common_dir_resolved());
        Ok(Self { inner, lock_timeout, id: NEXT_ID.fetch_add(1, Ordering::Relaxed), _presence: presence })
    }

    /// A handle for the calling thread: the one this thread already has for this repository
    /// (with its object cache), or a new one.
    pub fn local(&self) -> Repo {
        let handle = HANDLES.with(|handles| {
            let mut handles = handles.borrow_mut();
            if let Some(at) = handles.iter().position(|(id, _)| *id == self.id) {
                let entry = handles.remove(at);
                let handle = Rc::clone(&entry.1);
                handles.push(entry);
                return handle;
            }
            let mut repo = self.inner.to_thread_local();
            repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
            let handle = Rc::new(Handle {
                repo,
                written: RefCell::default(),
                staged: RefCell::default(),
                small_packs: RefCell::default(),
            });
            if handles.len() >= HANDLES_PER_THREAD {
                handles.remove(0);
            }
            handles.push((self.id, Rc::clone(&handle)));
            handle
        });
        Repo { inner: handle, lock_timeout: self.lock_timeout }
    }
}

/// Objects stored inside [`Repo::in_one_pack`], to be written as one pack.
type Staged = Vec<(ObjectId, Kind, Rc<[u8]>)>;

/// One thread's gix handle of a repository and the objects written through it.
struct Handle {
    repo: gix::Repository,
    written: RefCell<Written>,
    /// While [`Repo::in_one_pack`] runs: the objects stored, to be written as one pack.
    staged: RefCell<Option<Staged>>,
    /// The packs [`Repo::in_one_pack`] wrote through this handle since it last merged them, with
    /// their entries, which the merge copies as they are.
    small_packs: RefCell<Vec<(pack_file::Written, Vec<pack_file::Entry>)>>,
}

impl std::ops::Deref for Handle {
    type Target = gix::Repository;

    fn deref(&self) -> &gix::Repository {
        &self.repo
    }
}

/// A repository handle for one thread.
pub struct Repo {
    inner: Rc<Handle>,
    lock_timeout: Duration,
}

/// What a tree entry points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A subtree (directory).
    Tree,
    /// A file, executable or not.
    Blob,
    /// A symbolic link or a submodule commit.
    Other,
}

/// One entry of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// The entry's file name (lossily decoded as UTF-8).
    pub name: String,
    /// What it points at.
    pub kind: EntryKind,
    /// The object it points at.
    pub id: ObjectId,
}

/// The parts of a commit chant reads.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    /// The root tree.
    pub tree: ObjectId,
    /// The parents, first parent first.
    pub parents: Vec<ObjectId>,
    /// The full message (lossily decoded as UTF-8).
    pub message: String,
    /// The author's name and e-mail (lossily decoded).
    pub author: Identity,
}

impl Repo {
    /// The repository's git directory (`.git` of a work tree, or the bare repository itself).
    pub fn git_dir(&self) -> &Path {
        self.inner.git_dir()
    }

    /// The directory that holds shared references (the git directory except in linked work trees).
    pub fn common_dir(&self) -> &Path {
        self.inner.common_dir()
    }

    /// The commit HEAD points at, `None` when HEAD is unborn or unreadable.
    pub fn head_commit(&self) -> Option<ObjectId> {
        self.inner.head_id().ok().map(gix::Id::detach)
    }

    /// The work tree, `None` for a bare repository.
    pub fn work_dir(&self) -> Option<&Path> {
        self.inner.workdir()
    }

    /// The content of `file` (a path in the work tree) as HEAD's commit holds it: `None` when
    /// HEAD is unborn, the file is outside the work tree, or HEAD has no such blob. An edit of the
    /// file not yet committed is not seen.
    ///
    /// # Errors
    ///
    /// Storage errors reading the objects.
    pub fn committed_file(&self, file: &Path) -> Result<Option<Vec<u8>>> {
        let (Some(work), Some(head)) = (self.work_dir(), self.head_commit()) else { return Ok(None) };
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        let (work, file) = (canonical(work), canonical(file));
        let Ok(rel) = file.strip_prefix(&work) else { return Ok(None) };
        let Some(rel) = rel.to_str().map(|r| r.replace(std::path::MAIN_SEPARATOR, "/")) else { return Ok(None) };
        let tree = self.commit_info(head)?.tree;
        match self.tree_entry(tree, &rel)? {
            Some(entry) if entry.kind == EntryKind::Blob => Ok(Some(self.read_blob(entry.id)?)),
            _ => Ok(None),
        }
    }

    /// Whether the repository has no work tree.
    pub fn is_bare(&self) -> bool {
        self.inner.is_bare()
    }

    /// The object a direct reference points at, or `None` when the reference does not exist.
    ///
    /// A shared reference is read as git reads a full name: its loose file in the common
    /// directory, else its `packed-refs` entry (gix's lookup would also try the name under
    /// `refs/tags/`, `refs/heads/` and `refs/remotes/` first, four more files for a missing ref).
    pub fn read_ref(&self, name: &str) -> Result<Option<ObjectId>> {
        let full = full_name(name)?;
        if !is_per_worktree(name) {
            return match loose::read_loose(name, &self.common_dir().join(name)) {
                Ok(Some(id)) => Ok(Some(id)),
                Ok(None) => self.packed_target(name),
                // A directory of references under that name is no reference of it.
                Err(Error::RefFile { .. }) if self.common_dir().join(name).is_dir() => self.packed_target(name),
                Err(e) => Err(e),
            };
        }
        let found = self
            .inner
            .refs
            .try_find(full.as_ref())
            .map_err(|source| Error::ReadRef { name: name.to_owned(), source: Box::new(source) })?;
        match found.map(|r| r.target) {
            None => Ok(None),
            Some(Target::Object(id)) => Ok(Some(id)),
            Some(Target::Symbolic(_)) => Err(Error::SymbolicRef { name: name.to_owned() }),
        }
    }

    /// The full names of the direct references under `prefix` (a directory, such as
    /// `refs/chant/x/`), loose or packed, sorted.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<String>> {
        let read_error = |source: gix::Error| Error::ReadRef { name: prefix.to_owned(), source: Box::new(source) };
        let platform = self.inner.references().map_err(read_error)?;
        let iter = platform.prefixed(prefix).map_err(read_error)?;
        let mut names = Vec::new();
        for reference in iter {
            let reference = reference.map_err(read_error)?;
            if let gix::refs::TargetRef::Object(_) = reference.target() {
                names.push(reference.name().as_bstr().to_str_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Whether a reference of this exact full name exists, direct or symbolic.
    pub fn ref_exists(&self, name: &str) -> Result<bool> {
        let full = full_name(name)?;
        let found = self
            .inner
            .refs
            .try_find(full.as_ref())
            .map_err(|source| Error::ReadRef { name: name.to_owned(), source: Box::new(source) })?;
        Ok(found.is_some())
    }

    /// Sets reference `name` to `new` if and only if it currently holds `expected` (`None`: if it
    /// does not exist). `new` may be any object, a commit or a blob. A lost race is
    /// [`Error::RefConflict`]; a lock that could not be taken in time is [`Error::RefLocked`].
    /// Only `<ref>.lock` is taken, never `packed-refs.lock` (see the `loose` module).
    ///
    /// With `expected = None`, an existing reference that already holds exactly `new` is
    /// accepted (as gix does); callers that arbitrate ownership must therefore write a unique
    /// object per attempt.
    pub fn update_ref(&self, name: &str, new: ObjectId, expected: Option<ObjectId>, message: &str) -> Result<()> {
        let full = full_name(name)?;
        match self.loose_cas(name, Some(new), expected)? {
            Cas::Done => Ok(()),
            Cas::NeedsPacked => {
                let previous = match expected {
                    Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
                    None => PreviousValue::MustNotExist,
                };
                self.apply_edit(name, RefEdit::update(full, new, previous, message), expected)
            }
        }
    }

    /// Deletes reference `name` if and only if it currently holds `expected`. A reference without
    /// a `packed-refs` entry is deleted under its own `<ref>.lock` alone; only one with a packed
    /// entry takes `packed-refs.lock` (gix's transaction).
    pub fn delete_ref(&self, name: &str, expected: ObjectId) -> Result<()> {
        let full = full_name(name)?;
        match self.loose_cas(name, None, Some(expected))? {
            Cas::Done => Ok(()),
            Cas::NeedsPacked => {
                let edit = RefEdit::delete(full, PreviousValue::MustExistAndMatch(Target::Object(expected)));
                self.apply_edit(name, edit, Some(expected))
            }
        }
    }

    fn loose_cas(&self, name: &str, new: Option<ObjectId>, expected: Option<ObjectId>) -> Result<Cas> {
        let packed = || self.packed_target(name);
        let store = LooseStore { common_dir: self.common_dir(), lock_timeout: self.lock_timeout, packed: &packed };
        loose::cas(&store, name, new, expected)
    }

    /// The object the `packed-refs` entry of `name` points at, if it has one (read without a lock).
    fn packed_target(&self, name: &str) -> Result<Option<ObjectId>> {
        let read_error = |source| Error::ReadRef { name: name.to_owned(), source: Box::new(source) };
        let Some(buffer) = self.inner.refs.cached_packed_buffer().map_err(read_error)? else { return Ok(None) };
        let found = buffer.try_find(full_name(name)?.as_ref()).map_err(read_error)?;
        Ok(found.map(|r| r.target()))
    }

    fn apply_edit(&self, name: &str, edit: RefEdit, expected: Option<ObjectId>) -> Result<()> {
        let signature = signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        match self.inner.edit_references_as([edit], Some(signature.to_ref(&mut buf))) {
            Ok(_) => Ok(()),
            Err(source) => Err(self.classify_edit_error(name, expected, source)),
        }
    }

    fn classify_edit_error(&self, name: &str, expected: Option<ObjectId>, source: gix::Error) -> Error {
        use gix::refs::file::transaction::prepare::{MustNotExist, ReferenceOutOfDate};
        let conflict = |actual: &Target| Error::RefConflict {
            name: name.to_owned(),
            expected,
            actual: match actual {
                Target::Object(id) => Some(*id),
                Target::Symbolic(_) => None,
            },
        };
        if let Some(out_of_date) = source.downcast_any_ref::<ReferenceOutOfDate>() {
            return conflict(&out_of_date.actual);
        }
        if let Some(exists) = source.downcast_any_ref::<MustNotExist>() {
            return conflict(&exists.actual);
        }
        if expected.is_some() && source.is_not_found() {
            return Error::RefConflict { name: name.to_owned(), expected, actual: None };
        }
        let lock_busy = source.iter_errors().any(|e| {
            e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
        });
        if lock_busy || source.is_retryable() {
            let (lock_path, age) = self.lock_file(name);
            return Error::RefLocked { name: name.to_owned(), lock_path, age };
        }
        Error::UpdateRef { name: name.to_owned(), source: Box::new(source) }
    }

    /// The lock file that blocks an update of `name`, and its age: `<ref>.lock` if it exists, else
    /// `packed-refs.lock` if it exists and `name` has a packed entry (only then does a write of
    /// `name` take it: a deletion), else `<ref>.lock` with no age.
    pub fn lock_file(&self, name: &str) -> (PathBuf, Option<Duration>) {
        let ref_lock = self.common_dir().join(format!("{name}.lock"));
        if let Some(age) = file_age(&ref_lock) {
            return (ref_lock, Some(age));
        }
        let packed_lock = self.common_dir().join("packed-refs.lock");
        if let Some(age) = file_age(&packed_lock)
            && self.packed_target(name).ok().flatten().is_some()
        {
            return (packed_lock, Some(age));
        }
        (ref_lock, None)
    }

    /// The pids of the other chant processes of this repository that are alive (their liveness
    /// markers, see the `presence` module): while any is, a lock file may still be its writer's,
    /// however old, and is not reported as stale.
    pub fn other_processes_alive(&self) -> Vec<u32> {
        super::presence::others_alive(self.common_dir())
    }

    /// Whether a lock file of this age is provably abandoned: older than `threshold`, and no
    /// other chant process of this repository is alive to be its writer.
    pub fn lock_is_stale(&self, age: Duration, threshold: Duration) -> bool {
        age > threshold && self.other_processes_alive().is_empty()
    }

    /// `<ref>.lock` of `name` and its age (`None`: it does not exist): the one lock an update of
    /// `name` takes.
    pub fn ref_lock_file(&self, name: &str) -> (PathBuf, Option<Duration>) {
        let path = self.common_dir().join(format!("{name}.lock"));
        let age = file_age(&path);
        (path, age)
    }

    /// The lock files older than `age` among those chant's writes can meet: `packed-refs.lock`,
    /// and `<ref>.lock` of every reference named `name` or under `prefix/` for each of
    /// `names` (the ledger branch, the lease refs), with their ages, sorted by path.
    pub fn lock_files_older_than(&self, age: Duration, names: &[&str]) -> Vec<(PathBuf, Duration)> {
        let mut found = Vec::new();
        let mut consider = |path: PathBuf| {
            if let Some(a) = file_age(&path).filter(|a| *a > age) {
                found.push((path, a));
            }
        };
        consider(self.common_dir().join("packed-refs.lock"));
        for name in names {
            let path = self.common_dir().join(name.trim_end_matches('/'));
            consider(PathBuf::from(format!("{}.lock", path.display())));
            let mut dirs = vec![path];
            while let Some(dir) = dirs.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else { continue };
                for entry in entries.flatten() {
                    let path = entry.path();
                    match entry.file_type() {
                        Ok(t) if t.is_dir() => dirs.push(path),
                        Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "lock") => consider(path),
                        _ => {}
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }

    /// Writes `bytes` as a blob.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId> {
        self.store(Kind::Blob, bytes)
    }

    /// Writes the encoded object `bytes` of `kind` unless the object database already has it (as
    /// gix's writes check, without looking for packs added since it last looked), as git writes a
    /// loose object (see the `object_file` module), and keeps it in this handle's written objects.
    /// Inside [`Repo::in_one_pack`] it is staged instead, and written (and kept) with the others.
    fn store(&self, kind: Kind, bytes: &[u8]) -> Result<ObjectId> {
        let gix_kind = gix_kind(kind);
        let failed = |source| Error::WriteObject { kind: kind.name(), source: Box::new(source) };
        let id = gix::objs::compute_hash(self.inner.object_hash(), gix_kind, bytes).map_err(failed)?;
        if !self.inner.objects.exists_without_refresh(&id) {
            if let Some(staged) = self.inner.staged.borrow_mut().as_mut() {
                if !staged.iter().any(|(known, _, _)| *known == id) {
                    staged.push((id, kind, Rc::from(bytes)));
                }
                return Ok(id);
            }
            let objects = self.inner.objects.store_ref().path();
            object_file::write(objects, id, gix_kind, bytes, LOOSE_COMPRESSION).map_err(|e| Error::ObjectFile {
                kind: kind.name(),
                path: e.path,
                source: e.source,
            })?;
        }
        self.inner.written.borrow_mut().put(id, kind, bytes);
        Ok(id)
    }

    /// Runs `write`, and writes every object it stores (blobs, trees, commits) as one pack with
    /// its index (two files, see the `pack_file` module) once it returns `Ok`, instead of one
    /// loose file each; nothing is written when it fails. The objects are in the repository when
    /// this returns, before any reference can name them. Nested calls write with the outermost.
    ///
    /// Every 16 such packs (`MERGE_PACKS`), this handle writes their objects as one pack and removes
    /// them (a reader that still has one open keeps reading it; one that looks again finds the
    /// merged pack).
    ///
    /// # Errors
    ///
    /// `write`'s error, or [`Error::PackFile`] when the pack could not be written.
    pub fn in_one_pack<T, E: From<Error>>(
        &self,
        write: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if self.inner.staged.borrow().is_some() {
            return write();
        }
        /// Ends the staging however `write` returns.
        struct Staging<'a>(&'a RefCell<Option<Staged>>);
        impl Drop for Staging<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().take();
            }
        }
        *self.inner.staged.borrow_mut() = Some(Vec::new());
        let staging = Staging(&self.inner.staged);
        let value = write()?;
        let staged = staging.0.borrow_mut().take().unwrap_or_default();
        drop(staging);
        if !staged.is_empty() {
            self.write_pack(staged)?;
        }
        Ok(value)
    }

    /// Writes `staged` as one pack, keeps its objects as written, and merges this handle's small
    /// packs when there are [`MERGE_PACKS`] of them.
    fn write_pack(&self, staged: Staged) -> Result<()> {
        let pack_dir = self.inner.objects.store_ref().path().join("pack");
        let failed = |path: PathBuf| move |source| Error::PackFile { path, source };
        let entries = staged
            .iter()
            .map(|(id, kind, data)| pack_file::Entry::new(*id, gix_kind(*kind), data, LOOSE_COMPRESSION))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(failed(pack_dir.clone()))?;
        let hash = self.inner.object_hash();
        let written =
            pack_file::write(&pack_dir, hash, &entries.iter().collect::<Vec<_>>(), pack_file::Durability::Cached)
                .map_err(|e| Error::PackFile { path: e.path, source: e.source })?;
        {
            let mut kept = self.inner.written.borrow_mut();
            for (id, kind, data) in &staged {
                kept.put(*id, *kind, data);
            }
        }
        let mut small = self.inner.small_packs.borrow_mut();
        small.push((written, entries));
        if small.len() >= MERGE_PACKS {
            let all: Vec<&pack_file::Entry> = small.iter().flat_map(|(_, entries)| entries).collect();
            // The merged pack is fsynced before the small ones go; a merge that fails leaves the
            // small packs as they are: they hold the same objects.
            if pack_file::write(&pack_dir, hash, &all, pack_file::Durability::Synced).is_ok() {
                for (pack, _) in small.drain(..) {
                    let _ = pack.remove();
                }
            }
        }
        Ok(())
    }

    /// The content of blob `id`.
    pub fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        if let Some(data) = self.inner.written.borrow().get(id, Kind::Blob) {
            return Ok(data.to_vec());
        }
        let object = self.find(id)?;
        if object.kind != gix::object::Kind::Blob {
            return Err(Error::ObjectKind { id, expected: "blob", actual: object.kind.to_string() });
        }
        Ok(object.detach().data)
    }

    /// The entries of tree `id`, in git's order.
    pub fn tree_entries(&self, id: ObjectId) -> Result<Vec<TreeEntry>> {
        self.with_tree(id, |tree| {
            tree.entries
                .iter()
                .map(|entry| TreeEntry {
                    name: entry.filename.to_str_lossy().into_owned(),
                    kind: entry_kind(entry.mode),
                    id: entry.oid.to_owned(),
                })
                .collect()
        })
    }

    /// Calls `f` with tree `id` decoded: the one this handle wrote, else read.
    fn with_tree<T>(&self, id: ObjectId, f: impl FnOnce(gix::objs::TreeRef<'_>) -> T) -> Result<T> {
        let decode = |data: &[u8]| {
            gix::objs::TreeRef::from_bytes(data, self.inner.object_hash())
                .map(f)
                .map_err(|source| Error::ReadObject { id, source: Box::new(source) })
        };
        let kept = self.inner.written.borrow().get(id, Kind::Tree);
        if let Some(data) = kept {
            return decode(&data);
        }
        let object = self.find(id)?;
        if object.kind != gix::object::Kind::Tree {
            return Err(Error::ObjectKind { id, expected: "tree", actual: object.kind.to_string() });
        }
        decode(&object.data)
    }

    /// The entry at `path` (components separated by `/`) below tree `id`, if there is one.
    pub fn tree_entry(&self, id: ObjectId, path: &str) -> Result<Option<TreeEntry>> {
        let components = tree_path(path)?;
        let mut current = id;
        let mut found = None;
        for (index, component) in components.iter().enumerate() {
            if index > 0 {
                match found.take() {
                    Some(TreeEntry { kind: EntryKind::Tree, id, .. }) => current = id,
                    _ => return Ok(None),
                }
            }
            found = self.tree_entries(current)?.into_iter().find(|entry| entry.name == *component);
            if found.is_none() {
                return Ok(None);
            }
        }
        Ok(found)
    }

    /// Writes the tree that is `base` (`None`: the empty tree) with each `(path, blob)` of
    /// `blobs` inserted or replaced as a regular file. Only the trees along those paths are
    /// rewritten; sibling subtrees are reused by id.
    pub fn edit_tree(&self, base: Option<ObjectId>, blobs: &[(String, ObjectId)]) -> Result<ObjectId> {
        if let [(path, blob)] = blobs {
            // One path (every append): written here, so each tree along it is kept as written.
            return self.upsert(base, &tree_path(path)?, *blob);
        }
        let base = base.unwrap_or_else(|| ObjectId::empty_tree(self.inner.object_hash()));
        let write_err = |source| Error::WriteObject { kind: "tree", source: Box::new(source) };
        let mut editor =
            self.inner.edit_tree(base).map_err(|source| Error::ReadObject { id: base, source: Box::new(source) })?;
        for (path, blob) in blobs {
            tree_path(path)?;
            editor.upsert(path.as_str(), gix::object::tree::EntryKind::Blob, *blob).map_err(write_err)?;
        }
        editor.write().map(gix::Id::detach).map_err(write_err)
    }

    /// Writes the tree that is `base` (`None`: empty) with `blob` at the path `components` below
    /// it, as a regular file: whatever stood at a component of that path is replaced. Returns
    /// the new tree; each tree written is kept by the handle.
    fn upsert(&self, base: Option<ObjectId>, components: &[&str], blob: ObjectId) -> Result<ObjectId> {
        use gix::objs::tree::{Entry, EntryKind as Mode};
        let Some((name, rest)) = components.split_first() else { return Ok(blob) };
        let mut entries: Vec<Entry> = match base {
            Some(id) => self.with_tree(id, |tree| gix::objs::Tree::from(tree).entries)?,
            None => Vec::new(),
        };
        let (child, mode) = if rest.is_empty() {
            (blob, Mode::Blob)
        } else {
            let below = entries.iter().find(|e| e.filename == *name && e.mode.is_tree()).map(|e| e.oid);
            (self.upsert(below, rest, blob)?, Mode::Tree)
        };
        entries.retain(|e| e.filename != *name);
        entries.push(Entry { mode: mode.into(), filename: (*name).into(), oid: child });
        entries.sort();
        self.store_encoded(Kind::Tree, &gix::objs::Tree { entries })
    }

    /// Writes a commit of `tree` with `parents` and `message`, authored and committed by chant
    /// at `time` (the caller's clock, so a fixed `CHANT_NOW` gives fixed commit times). No
    /// reference moves.
    pub fn write_commit(
        &self,
        tree: ObjectId,
        parents: &[ObjectId],
        message: &str,
        time: jiff::Timestamp,
    ) -> Result<ObjectId> {
        self.write_commit_by(tree, parents, message, time, &Authorship::default())
    }

    /// As [`Repo::write_commit`], authored and committed by `by`.
    pub fn write_commit_by(
        &self,
        tree: ObjectId,
        parents: &[ObjectId],
        message: &str,
        time: jiff::Timestamp,
        by: &Authorship,
    ) -> Result<ObjectId> {
        let time = gix::date::Time { seconds: time.as_second(), offset: 0 };
        let commit = gix::objs::Commit {
            tree,
            parents: parents.iter().copied().collect(),
            author: by.author.signature(time),
            committer: by.committer.signature(time),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        self.store_encoded(Kind::Commit, &commit)
    }

    /// Encodes `object` and writes it as [`Repo::store`] does.
    fn store_encoded(&self, kind: Kind, object: &dyn gix::objs::WriteTo) -> Result<ObjectId> {
        let mut bytes = Vec::with_capacity(usize::try_from(object.size()).unwrap_or(0));
        object.write_to(&mut bytes).map_err(|source| Error::EncodeObject { kind: kind.name(), source })?;
        self.store(kind, &bytes)
    }

    /// The tree, parents and message of commit `id`.
    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo> {
        let decode = |data: &[u8]| {
            let decoded = gix::objs::CommitRef::from_bytes(data, self.inner.object_hash())
                .map_err(|source| Error::ReadObject { id, source: Box::new(source) })?;
            Ok(CommitInfo {
                tree: decoded.tree(),
                parents: decoded.parents().collect(),
                message: decoded.message.to_str_lossy().into_owned(),
                author: decoded
                    .author()
                    .map(|a| Identity {
                        name: a.name.to_str_lossy().into_owned(),
                        email: a.email.to_str_lossy().into_owned(),
                    })
                    .unwrap_or_else(|_| Identity::new("", "")),
            })
        };
        let kept = self.inner.written.borrow().get(id, Kind::Commit);
        if let Some(data) = kept {
            return decode(&data);
        }
        let object = self.find(id)?;
        if object.kind != gix::object::Kind::Commit {
            return Err(Error::ObjectKind { id, expected: "commit", actual: object.kind.to_string() });
        }
        decode(&object.data)
    }

    /// The first parent of commit `id`, if it has one.
    pub fn first_parent(&self, id: ObjectId) -> Result<Option<ObjectId>> {
        Ok(self.commit_info(id)?.parents.first().copied())
    }

    /// Object `id`, read.
    ///
    /// A miss is looked up again, up to [`FIND_TRIES`] times a few milliseconds apart, as git
    /// rescans its pack directory before it calls an object missing: another process that
    /// replaces packs (a roll-up, or a handle merging its own) writes the new pack before it
    /// removes the old ones, but one scan of the directory while it does can see neither.
    fn find(&self, id: ObjectId) -> Result<gix::Object<'_>> {
        let mut tries = 1;
        loop {
            match self.inner.find_object(id) {
                Ok(object) => return Ok(object),
                Err(_) if tries < FIND_TRIES => {
                    std::thread::sleep(Duration::from_millis(2 << tries));
                    tries += 1;
                }
                Err(source) => return Err(Error::ReadObject { id, source: Box::new(source) }),
            }
        }
    }
}

/// gix's kind of a kept object's kind.
fn gix_kind(kind: Kind) -> gix::object::Kind {
    match kind {
        Kind::Blob => gix::object::Kind::Blob,
        Kind::Tree => gix::object::Kind::Tree,
        Kind::Commit => gix::object::Kind::Commit,
    }
}

fn full_name(name: &str) -> Result<FullName> {
    if !name.starts_with("refs/") {
        return Err(Error::RefName { name: name.to_owned() });
    }
    FullName::try_from(name).map_err(|_| Error::RefName { name: name.to_owned() })
}

/// Whether reference `name` lives in a work tree's own git directory rather than the common one.
fn is_per_worktree(name: &str) -> bool {
    ["refs/worktree/", "refs/bisect/", "refs/rewritten/"].iter().any(|p| name.starts_with(p))
}

fn tree_path(path: &str) -> Result<Vec<&str>> {
    let components: Vec<&str> = path.split('/').collect();
    if path.is_empty() || components.iter().any(|c| c.is_empty() || *c == "." || *c == "..") {
        return Err(Error::TreePath { path: path.to_owned() });
    }
    Ok(components)
}

fn entry_kind(mode: gix::object::tree::EntryMode) -> EntryKind {
    if mode.is_tree() {
        EntryKind::Tree
    } else if mode.is_blob() {
        EntryKind::Blob
    } else {
        EntryKind::Other
    }
}

fn signature() -> gix::actor::Signature {
    signature_at(gix::date::Time::now_utc())
}

fn signature_at(time: gix::date::Time) -> gix::actor::Signature {
    gix::actor::Signature { name: IDENTITY.0.into(), email: IDENTITY.1.into(), time }
}

pub(super) fn file_age(path: &Path) -> Option<Duration> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(SystemTime::now().duration_since(modified).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_made_safe_for_a_commit_header_and_falls_back_to_chants() {
        assert_eq!(
            Identity::new("Lee <x>", "lee@example.org\n"),
            Identity { name: "Lee x".into(), email: "lee@example.org".into() }
        );
        assert_eq!(Identity::new("", " "), Identity::chant());
        assert!(Identity::new("", "").is_chant());
        assert_eq!(Identity::new("alex", "").email, "chant@localhost");
    }

    #[test]
    fn tree_paths_refuse_empty_and_dot_components() {
        assert!(tree_path("a/b.jsonl").is_ok());
        for bad in ["", "/a", "a//b", "a/./b", "../a", "a/"] {
            assert!(matches!(tree_path(bad), Err(Error::TreePath { .. })), "{bad}");
        }
    }

    /// The single-path tree edit of an append writes byte for byte the trees gix's editor writes
    /// (git's entry order, modes, a blob in the way of a directory replaced), and what it wrote is
    /// read back by a fresh handle (from disk) exactly as by the writing one (kept).
    #[test]
    fn a_single_path_edit_writes_the_trees_gix_writes() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let shared = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap();
        let repo = shared.local();
        let blob = repo.write_blob(b"line\n").unwrap();
        let other = repo.write_blob(b"other\n").unwrap();
        let gix_edit = |base: Option<ObjectId>, path: &str, blob: ObjectId| {
            // Two entries take gix's editor.
            repo.edit_tree(base, &[(path.to_owned(), blob), (path.to_owned(), blob)]).unwrap()
        };
        let mut base = None;
        for (path, b) in [
            ("e/op/converge/0/0.jsonl", blob),
            ("e/op/converge/0/1.jsonl", other),
            ("e/op/converge/0/0.jsonl", other),
            ("e/op.x/converge/0/0.jsonl", blob),
            ("e/op-a/converge/0/0.jsonl", blob),
            ("e/op/converge/0", blob),
            ("e/op/converge/0/0.jsonl", blob),
            ("_gates/g/0/0.jsonl", blob),
            ("e.jsonl", other),
        ] {
            let ours = repo.edit_tree(base, &[(path.to_owned(), b)]).unwrap();
            assert_eq!(ours, gix_edit(base, path, b), "{path}");
            base = Some(ours);
        }
        let root = base.unwrap();
        let fsck = super::super::cmd::Git::new(dir.path(), Duration::from_secs(60)).run("fsck", &["fsck", "--strict"]);
        let fsck = fsck.unwrap();
        assert_eq!(fsck.code, Some(0), "{}", fsck.stderr);
        let commit = repo.write_commit(root, &[], "m", jiff::Timestamp::UNIX_EPOCH).unwrap();
        let fresh = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        assert_eq!(fresh.commit_info(commit).unwrap().tree, repo.commit_info(commit).unwrap().tree);
        let path = "e/op/converge/0/0.jsonl";
        let entry = repo.tree_entry(root, path).unwrap().unwrap();
        assert_eq!(fresh.tree_entry(root, path).unwrap(), Some(entry.clone()));
        assert_eq!(fresh.read_blob(entry.id).unwrap(), repo.read_blob(entry.id).unwrap());
        assert_eq!(repo.tree_entries(root).unwrap(), fresh.tree_entries(root).unwrap());
        assert!(matches!(repo.read_blob(root), Err(Error::ObjectKind { .. })), "a kept tree is no blob");
    }

    /// A full name is read as git reads it: the loose file, which shadows a packed entry, else the
    /// packed entry; a missing name, or one that is a directory of references, is no reference.
    #[test]
    fn a_reference_is_its_loose_file_else_its_packed_entry() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let repo = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        let (a, b) = (repo.write_blob(b"a").unwrap(), repo.write_blob(b"b").unwrap());
        let name = "refs/chant/lease/op";
        assert_eq!(repo.read_ref(name).unwrap(), None);
        repo.update_ref(name, a, None, "t").unwrap();
        repo.update_ref("refs/chant/lease/_members/m/op", b, None, "t").unwrap();
        assert_eq!(repo.read_ref(name).unwrap(), Some(a));
        let git = super::super::cmd::Git::new(dir.path(), Duration::from_secs(60));
        assert_eq!(git.run("pack-refs", &["pack-refs", "--all"]).unwrap().code, Some(0));
        assert!(!dir.path().join(name).exists(), "packed and pruned");
        assert_eq!(repo.read_ref(name).unwrap(), Some(a), "the packed entry");
        repo.update_ref(name, b, Some(a), "t").unwrap();
        assert_eq!(repo.read_ref(name).unwrap(), Some(b), "the loose file shadows the packed entry");
        assert_eq!(repo.read_ref("refs/chant/lease/_members").unwrap(), None, "a directory");
        assert_eq!(repo.read_ref("refs/chant/lease/_members/m/op").unwrap(), Some(b));
        assert_eq!(repo.read_ref("refs/chant/lease/other").unwrap(), None);
    }

    /// What `in_one_pack` writes is one pack per call, no loose object, readable by another
    /// handle and by git (`fsck --strict`); a failing call writes nothing; every `MERGE_PACKS`
    /// packs become one, the small ones removed, their objects still readable everywhere.
    #[test]
    fn objects_written_in_one_pack_land_as_one_pack_and_merge_every_few() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let repo = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        let packs = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path().join("objects/pack"))
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            names.sort();
            names
        };
        let loose = || {
            std::fs::read_dir(dir.path().join("objects"))
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().len() == 2)
                .map(|e| std::fs::read_dir(e.path()).unwrap().count())
                .sum::<usize>()
        };
        let failed: std::result::Result<(), Error> = repo.in_one_pack(|| {
            repo.write_blob(b"never")?;
            Err(Error::RefName { name: "x".into() })
        });
        assert!(failed.is_err());
        assert!(packs().is_empty() && loose() == 0, "a failed call writes nothing");

        let mut commits = Vec::new();
        let mut tip: Option<ObjectId> = None;
        for n in 0..MERGE_PACKS + 1 {
            let commit = repo
                .in_one_pack(|| {
                    let base = tip.map(|t| repo.commit_info(t)).transpose()?.map(|c| c.tree);
                    let blob = repo.write_blob(format!("record {n}\n").as_bytes())?;
                    let tree = repo.edit_tree(base, &[(format!("e/op/converge/0/{n}.jsonl"), blob)])?;
                    let parents: Vec<ObjectId> = tip.into_iter().collect();
                    repo.write_commit(tree, &parents, "m", jiff::Timestamp::UNIX_EPOCH)
                })
                .unwrap();
            tip = Some(commit);
            commits.push(commit);
            let count = packs().iter().filter(|n| n.ends_with(".pack")).count();
            let expected = if n + 1 < MERGE_PACKS { n + 1 } else { n + 2 - MERGE_PACKS };
            assert_eq!(count, expected, "after {} calls: {:?}", n + 1, packs());
            assert_eq!(packs().len(), 2 * count, "a pack and its index each, nothing else");
        }
        assert_eq!(loose(), 0, "no loose object");
        let git = super::super::cmd::Git::new(dir.path(), Duration::from_secs(60));
        git.run("update-ref", &["update-ref", "refs/heads/t", &tip.unwrap().to_string()]).unwrap();
        let fsck = git.run("fsck", &["fsck", "--strict", "--no-dangling"]).unwrap();
        assert_eq!(fsck.code, Some(0), "{}", fsck.stderr);
        let fresh = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        for (n, commit) in commits.iter().enumerate() {
            let root = fresh.commit_info(*commit).unwrap().tree;
            let entry = fresh.tree_entry(root, &format!("e/op/converge/0/{n}.jsonl")).unwrap().unwrap();
            assert_eq!(fresh.read_blob(entry.id).unwrap(), format!("record {n}\n").into_bytes());
        }
    }

    /// What a writer killed at any point of an append leaves behind: a partly written
    /// `tmp_pack_` file, a pack without its index (killed between the two renames), and a whole
    /// pack whose commit no ref names (killed before the compare-and-swap of the branch). None of
    /// it hides or changes what the branch already holds: a fresh handle reads every landed
    /// record, `git fsck --strict` is clean, the next append lands on the same tip, and `git gc`
    /// then leaves a repository that is still clean and complete.
    #[test]
    fn a_writer_killed_between_its_pack_and_the_ref_loses_nothing_already_recorded() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let repo = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        let branch = "refs/heads/chant/lifecycle";
        let append = |n: usize, tip: Option<ObjectId>| -> ObjectId {
            repo.in_one_pack(|| {
                let base = tip.map(|t| repo.commit_info(t)).transpose()?.map(|c| c.tree);
                let blob = repo.write_blob(format!("record {n}\n").as_bytes())?;
                let tree = repo.edit_tree(base, &[(format!("e/op/converge/0/{n}.jsonl"), blob)])?;
                let parents: Vec<ObjectId> = tip.into_iter().collect();
                repo.write_commit(tree, &parents, "m", jiff::Timestamp::UNIX_EPOCH)
            })
            .unwrap()
        };
        let mut tip = None;
        for n in 0..20 {
            let commit = append(n, tip);
            repo.update_ref(branch, commit, tip, "append").unwrap();
            tip = Some(commit);
        }
        let landed = tip.unwrap();
        // Killed before the compare-and-swap: a whole pack nobody names.
        let orphan = append(99, tip);
        assert_ne!(orphan, landed);
        // Killed while writing a pack, and between its rename and its index's.
        let pack_dir = dir.path().join("objects/pack");
        std::fs::write(pack_dir.join("tmp_pack_killed"), b"PACK\0\0\0\x02\0\0").unwrap();
        let some_pack = std::fs::read_dir(&pack_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "pack"))
            .unwrap();
        std::fs::copy(&some_pack, pack_dir.join(format!("pack-{}.pack", "0".repeat(40)))).unwrap();

        let git = super::super::cmd::Git::new(dir.path(), Duration::from_secs(60));
        let fsck = |when: &str| {
            let out = git.run("fsck", &["fsck", "--strict", "--no-progress"]).unwrap();
            assert_eq!(out.code, Some(0), "{when}: {}", out.stderr);
        };
        let every_record = |through: &Repo, tip: ObjectId, count: usize| {
            let root = through.commit_info(tip).unwrap().tree;
            for n in 0..count {
                let entry = through.tree_entry(root, &format!("e/op/converge/0/{n}.jsonl")).unwrap().unwrap();
                assert_eq!(through.read_blob(entry.id).unwrap(), format!("record {n}\n").into_bytes());
            }
        };
        fsck("after the kills");
        let fresh = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        assert_eq!(fresh.read_ref(branch).unwrap(), Some(landed));
        every_record(&fresh, landed, 20);
        // The next append lands on the branch's tip; the orphan stays unnamed.
        let next = append(20, Some(landed));
        fresh.update_ref(branch, next, Some(landed), "append").unwrap();
        git.gc_auto().unwrap();
        while super::super::cmd::Git::rolling_up() {
            std::thread::sleep(Duration::from_millis(10));
        }
        let gc = git.run("gc", &["gc", "--quiet", "--prune=now"]).unwrap();
        assert_eq!(gc.code, Some(0), "{}", gc.stderr);
        fsck("after gc");
        let after = SharedRepo::discover(dir.path(), Duration::from_secs(1)).unwrap().local();
        every_record(&after, next, 21);
    }

    #[test]
    fn reference_names_must_be_full() {
        assert!(full_name("refs/heads/chant/lifecycle").is_ok());
        assert!(matches!(full_name("chant/lifecycle"), Err(Error::RefName { .. })));
        assert!(matches!(full_name("refs/heads/a..b"), Err(Error::RefName { .. })));
    }
}
