//! Confinement: resolving a declared path under the root, one component at a time, so that no
//! read and no write ever leaves the root.
//!
//! The root is canonicalised once. Each directory component of a declared path is examined with
//! `lstat`: a real directory is entered; a symlink is resolved and entered only if its real target
//! is a directory inside the root; anything else (a missing component aside) makes the path
//! unreadable. The last component is then classified by [`inspect`]: absent, a regular file, a
//! replaceable symlink (confined or dangling), or unreadable (a directory, a symlink loop, a
//! symlink escaping the root, a FIFO/socket/device, an I/O error). Nothing here follows a symlink
//! out of the root or opens anything but a regular file.
//!
//! Assumption (documented, not enforced): nobody races chant inside the root, swapping a checked
//! directory for a symlink between the check and the use. (A file swapped between the check and
//! the read is caught: the reader compares the opened file with the one it checked.)

use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

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
pub(crate) enum Target {
    /// Nothing.
    Absent,
    /// A regular file, with its `lstat` metadata.
    File(Metadata),
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

/// Returns the last component of a confined relative path.
pub(crate) fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}
