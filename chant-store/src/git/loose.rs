//! Compare-and-swap of a loose reference under its own `<ref>.lock`, and nothing else.
//!
//! gix's reference transaction locks `packed-refs` for every compare-and-swap and every deletion
//! as soon as a `packed-refs` file exists (after any `git gc` or `git pack-refs`), although an
//! update only needs to write the loose file and a deletion of a ref that is not packed never
//! changes `packed-refs`. Every such lock is a file a `kill -9` can leave behind, and a leftover
//! `packed-refs.lock` blocks every reference update of the repository until a human removes it
//! (issue #19, defect 7). So the two writes chant makes all the time, the ledger append and the
//! lease, go through [`cas`]: it takes `<ref>.lock` exactly as git does (`O_EXCL`, retried up to
//! the lock timeout), reads the current value under that lock (the loose file, else the packed
//! entry, read without a lock as git reads it), compares, and renames the lock over the loose
//! file (or removes the loose file). The one write that must change `packed-refs`, deleting a
//! reference that has a packed entry, is handed back ([`Cas::NeedsPacked`]) to gix's transaction.
//!
//! Git interoperates: it takes the same `<ref>.lock` for a loose update and for pruning a loose
//! ref while packing, and a loose file shadows a packed entry of the same name. Neither gix nor
//! git (by default, `core.fsync` leaves references out) fsyncs a reference, and neither does this.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Error, ObjectId, Result};

/// What [`cas`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cas {
    /// The reference now holds the new value (or was deleted).
    Done,
    /// A deletion of a reference with a `packed-refs` entry: only a transaction that locks
    /// `packed-refs` can make it; nothing was changed.
    NeedsPacked,
}

/// The store the loose reference lives in.
pub(super) struct LooseStore<'a> {
    /// The directory holding `refs/` and `packed-refs` (the common directory).
    pub common_dir: &'a Path,
    /// How long to wait for another writer's `<ref>.lock`.
    pub lock_timeout: Duration,
    /// The packed entry of the reference, read when no loose file exists (or to check a deletion).
    pub packed: &'a dyn Fn() -> Result<Option<ObjectId>>,
}

/// Sets `name` to `new` (`None`: deletes it) if and only if it holds `expected` (`None`: does not
/// exist). As with gix, `expected = None` also accepts a reference that already holds `new`.
pub(super) fn cas(
    store: &LooseStore<'_>,
    name: &str,
    new: Option<ObjectId>,
    expected: Option<ObjectId>,
) -> Result<Cas> {
    let path = store.common_dir.join(name);
    let mut lock = match gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::from(store.lock_timeout),
        Some(store.common_dir.to_owned()),
        0,
    ) {
        Ok(lock) => lock,
        Err(source) => return Err(lock_failed(name, &path, source)),
    };
    let loose = read_loose(name, &path)?;
    let current = match loose {
        Some(id) => Some(id),
        None => (store.packed)()?,
    };
    let accepts = current == expected || (expected.is_none() && current.is_some() && current == new);
    if !accepts {
        return Err(Error::RefConflict { name: name.to_owned(), expected, actual: current });
    }
    match new {
        Some(id) => {
            if loose == Some(id) {
                return Ok(Cas::Done);
            }
            let io = |source| Error::RefFile { name: name.to_owned(), path: path.clone(), source };
            lock.with_mut(|file| writeln!(file, "{id}")).map_err(io)?;
            lock.commit().map_err(|e| io(e.error))?;
            Ok(Cas::Done)
        }
        None => {
            // A packed entry would reappear once the loose file is gone: that deletion rewrites
            // packed-refs, which only a transaction holding its lock may do.
            if (store.packed)()?.is_some() {
                return Ok(Cas::NeedsPacked);
            }
            if loose.is_some() {
                std::fs::remove_file(&path).map_err(|source| Error::RefFile {
                    name: name.to_owned(),
                    path: path.clone(),
                    source,
                })?;
            }
            drop(lock);
            Ok(Cas::Done)
        }
    }
}

/// The object a loose reference file holds; `None` when there is no such file.
pub(super) fn read_loose(name: &str, path: &Path) -> Result<Option<ObjectId>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Ok(None);
        }
        Err(source) => return Err(Error::RefFile { name: name.to_owned(), path: path.to_owned(), source }),
    };
    let text = bytes.trim_ascii();
    if text.starts_with(b"ref:") {
        return Err(Error::SymbolicRef { name: name.to_owned() });
    }
    ObjectId::from_hex(text).map(Some).map_err(|_| Error::RefFile {
        name: name.to_owned(),
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not an object id"),
    })
}

/// The error for a `<ref>.lock` that could not be created: locked when the lock file exists.
fn lock_failed(name: &str, path: &Path, source: gix::Error) -> Error {
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    match super::repo::file_age(&lock_path) {
        Some(age) => Error::RefLocked { name: name.to_owned(), lock_path, age: Some(age) },
        None if source.is_retryable() => Error::RefLocked { name: name.to_owned(), lock_path, age: None },
        None => Error::UpdateRef { name: name.to_owned(), source: Box::new(source) },
    }
}
