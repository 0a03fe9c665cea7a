//! Confinement: resolving a declared path under the root, one component at a time, so that no
//! read and no write ever leaves the root.
//!
//! The root is canonicalised once. Each directory component of a declared path is examined with
//! `lstat`: a real directory is entered; a symlink is resolved and entered only if its real target
//! is a directory inside the root; anything else (a missing component aside) makes the path
//! unreadable. The last component is then classified by [`inspect`]: absent, a regular file, a
//! replaceable symlink (confined or dangling), or unreadable (a directory, a symlink loop, a
//! symlink escaping the root, a FIFO/socket/device, an I/O error). Nothing here follows a symlink
//! out of the root or opens anything but a regular file (or, to read the files under it, a
//! resolved directory: [`open_dir`], then [`inspect_in`] and [`open_in`] by the file's name).
//!
//! Assumption (documented, not enforced): nobody races chant inside the root, swapping a checked
//! directory for a symlink between the check and the use. (A file swapped between the check and
//! the read is caught: the reader compares the opened file with the one it checked.)

use std::fs::{self, Metadata};
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{Mode, SFlag};

/// Why a path could not be read; becomes an unobserved `read-failed` detail or an apply refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable(pub(crate) String);

/// Where a declared path's parent directory is, if it exists.
#[derive(Debug, Clone)]
pub(crate) enum Parent {
    /// The real directory (inside the root) that holds the last component.
    Dir(PathBuf),
    /// A directory component does not exist (so the file is absent).
    Missing,
}

/// What sits at a declared path.
#[derive(Debug)]
pub(crate) enum Target<M = Metadata> {
    /// Nothing.
    Absent,
    /// A regular file, with its `lstat` metadata (or only its identity, [`FileId`]).
    File(M),
    /// A symlink that stays inside the root or dangles: not the declared file, but replaceable
    /// (a rename replaces the link itself, never its target).
    Symlink,
}

/// Resolves the directory that holds `rel` (a checked, confined relative path), creating missing
/// directories when `create` is set.
pub(crate) fn parent(root: &Path, rel: &str, create: bool) -> Result<Parent, Unreadable> {
    let mut current = root.to_path_buf();
    let components: Vec<&str> = rel.split('/').collect();
    let dirs = components.len().saturating_sub(1);
    for (i, component) in components.iter().take(dirs).enumerate() {
        let shown = components[..=i].join("/");
        let next = current.join(component);
        match fs::symlink_metadata(&next) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if !create {
                    return Ok(Parent::Missing);
                }
                match fs::create_dir(&next) {
                    Ok(()) => current = next,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        // Lost a race with another writer; examine what is there now.
                        return parent(root, rel, create);
                    }
                    Err(e) => return Err(Unreadable(format!("cannot create directory {shown}: {e}"))),
                }
            }
            Err(e) => return Err(Unreadable(format!("cannot read {shown}: {e}"))),
            Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(&next) {
                Ok(real) if !real.starts_with(root) => {
                    return Err(Unreadable(format!("{shown} is a symlink to {}, outside the root", real.display())));
                }
                Ok(real) if real.is_dir() => current = real,
                Ok(_) => return Err(Unreadable(format!("{shown} is a symlink to something that is not a directory"))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(Unreadable(format!("{shown} is a dangling symlink")));
                }
                Err(e) => return Err(Unreadable(format!("cannot resolve symlink {shown}: {e}"))),
            },
            Ok(meta) if meta.is_dir() => current = next,
            Ok(_) => return Err(Unreadable(format!("{shown} is not a directory"))),
        }
    }
    Ok(Parent::Dir(current))
}

/// Classifies what sits at `dir/name`, where `dir` came from [`parent`]; `rel` is the declared
/// path, used in messages.
pub(crate) fn inspect(root: &Path, dir: &Path, name: &str, rel: &str) -> Result<Target, Unreadable> {
    inspect_at(root, &dir.join(name), rel)
}

/// Classifies what sits at `path` (`dir/name` of [`inspect`], joined by the caller).
pub(crate) fn inspect_at(root: &Path, path: &Path, rel: &str) -> Result<Target, Unreadable> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Absent),
        Err(e) => return Err(Unreadable(format!("cannot read {rel}: {e}"))),
        Ok(meta) => meta,
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return match fs::canonicalize(path) {
            Ok(real) if real.starts_with(root) => Ok(Target::Symlink),
            Ok(real) => Err(Unreadable(format!("{rel} is a symlink to {}, outside the root", real.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::Symlink),
            Err(e) => Err(Unreadable(format!("cannot resolve symlink {rel}: {e}"))),
        };
    }
    if kind.is_dir() {
        return Err(Unreadable(format!("{rel} is a directory where a file is declared")));
    }
    if !kind.is_file() {
        return Err(Unreadable(format!("{rel} is not a regular file (a FIFO, socket or device)")));
    }
    Ok(Target::File(meta))
}

/// The identity of a file `lstat` found regular: its device and inode, which the open handle
/// must match before it is read, and the rest of what `lstat` said of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    /// The device.
    pub(crate) dev: u64,
    /// The inode.
    pub(crate) ino: u64,
    /// Its size, times, mode and owner as `lstat` found them.
    pub(crate) stat: FileStat,
}

/// What `lstat` says of a regular file besides its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    /// Its size in bytes.
    pub(crate) size: u64,
    /// Its modification time (seconds, nanoseconds).
    pub(crate) mtime: (i64, i64),
    /// Its status change time (seconds, nanoseconds): moved by every write and every change of
    /// its metadata, and by no user's hand (`touch -d` sets the modification time, and this one
    /// to now).
    pub(crate) ctime: (i64, i64),
    /// Its mode (type and permission bits).
    pub(crate) mode: u32,
    /// Its owner.
    pub(crate) uid: u32,
    /// Its group.
    pub(crate) gid: u32,
}

impl Target {
    /// The same target, a regular file by its identity and `lstat` only.
    pub(crate) fn identity(self) -> Target<FileId> {
        match self {
            Target::Absent => Target::Absent,
            Target::Symlink => Target::Symlink,
            Target::File(meta) => Target::File(FileId {
                dev: meta.dev(),
                ino: meta.ino(),
                stat: FileStat {
                    size: meta.size(),
                    mtime: (meta.mtime(), meta.mtime_nsec()),
                    ctime: (meta.ctime(), meta.ctime_nsec()),
                    mode: meta.mode(),
                    uid: meta.uid(),
                    gid: meta.gid(),
                },
            }),
        }
    }
}

/// Opens the directory `dir` (a [`Parent::Dir`]) for the files under it, so each is examined
/// and opened by its own name, without a walk of the whole path per file; `None` when it
/// cannot be opened (the caller then goes by paths, as before).
pub(crate) fn open_dir(dir: &Path) -> Option<OwnedFd> {
    nix::fcntl::open(dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty()).ok()
}

/// [`inspect_at`] of the entry `name` of the directory `dir` opened at `path` (`dir/name`,
/// used to resolve a symlink and in messages as there): the same verdicts, from an `lstat` of
/// the name alone.
pub(crate) fn inspect_in(
    root: &Path,
    dir: BorrowedFd<'_>,
    name: &str,
    path: &Path,
    rel: &str,
) -> Result<Target<FileId>, Unreadable> {
    let stat = match nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Err(nix::errno::Errno::ENOENT) => return Ok(Target::Absent),
        Err(e) => return Err(Unreadable(format!("cannot read {rel}: {}", io::Error::from(e)))),
        Ok(stat) => stat,
    };
    let kind = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
    if kind == SFlag::S_IFLNK {
        return match fs::canonicalize(path) {
            Ok(real) if real.starts_with(root) => Ok(Target::Symlink),
            Ok(real) => Err(Unreadable(format!("{rel} is a symlink to {}, outside the root", real.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::Symlink),
            Err(e) => Err(Unreadable(format!("cannot resolve symlink {rel}: {e}"))),
        };
    }
    if kind == SFlag::S_IFDIR {
        return Err(Unreadable(format!("{rel} is a directory where a file is declared")));
    }
    if kind != SFlag::S_IFREG {
        return Err(Unreadable(format!("{rel} is not a regular file (a FIFO, socket or device)")));
    }
    let stat_of = FileStat {
        size: u64::try_from(stat.st_size).unwrap_or(0),
        mtime: (stat.st_mtime, stat.st_mtime_nsec),
        ctime: (stat.st_ctime, stat.st_ctime_nsec),
        mode: stat.st_mode,
        uid: stat.st_uid,
        gid: stat.st_gid,
    };
    Ok(Target::File(FileId { dev: stat.st_dev, ino: stat.st_ino, stat: stat_of }))
}

/// Opens the entry `name` of the directory `dir` for reading, never through a symlink (one
/// swapped in since the `lstat` fails the open).
pub(crate) fn open_in(dir: BorrowedFd<'_>, name: &str) -> io::Result<fs::File> {
    nix::fcntl::openat(dir, name, OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW, Mode::empty())
        .map(fs::File::from)
        .map_err(io::Error::from)
}

/// Returns the last component of a confined relative path.
pub(crate) fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}
