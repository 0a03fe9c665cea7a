//! Removing what the files lexicon owns: the owned, undeclared files of an
//! `apply(delete_mode = "owned-only")`, and every owned file of a `teardown`.
//!
//! Only paths of the last recorded apply are ever removed (that is what chant owns), each only
//! when it is still a regular file or a symlink at a path confined to the root; a directory, a
//! symlink escape or anything unreadable is left where it is and reported. Directories are
//! never removed. A teardown returns a record whose [`TEARDOWN_DIGEST`] marks it, so the env
//! reads as never applied afterwards.

use std::fs;
use std::io;
use std::path::Path;

use super::confine::{self, Parent, Target};
use super::{ApplyRecord, COMPONENT, FilesError};

/// The digest a teardown record carries in place of a declaration's.
pub const TEARDOWN_DIGEST: &str = "teardown";

/// What a removal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    /// The paths removed, sorted.
    pub removed: Vec<String>,
    /// The paths left in place, with why.
    pub kept: Vec<String>,
}

/// Removes each of `paths` under `root` that is a regular file or a symlink confined to it.
///
/// # Errors
///
/// [`FilesError::Root`] when the root cannot be resolved (a missing root removes nothing);
/// [`FilesError::Write`] when a removal fails.
pub(crate) fn remove<'a>(root: &Path, paths: impl IntoIterator<Item = &'a String>) -> Result<Removal, FilesError> {
    let real_root = match fs::canonicalize(root) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Removal::default()),
        Err(source) => return Err(FilesError::Root { root: root.to_path_buf(), source }),
    };
    let mut out = Removal::default();
    for path in paths {
        if let Err(reason) = super::declaration::check_path(path) {
            out.kept.push(format!("{path}: not confined to the root ({reason})"));
            continue;
        }
        let dir = match confine::parent(&real_root, path, false) {
            Ok(Parent::Dir(dir)) => dir,
            Ok(Parent::Missing) => continue,
            Err(why) => {
                out.kept.push(format!("{path}: {}", why.0));
                continue;
            }
        };
        let name = confine::file_name(path);
        match confine::inspect(&real_root, &dir, name, path) {
            Ok(Target::Absent) => {}
            Ok(Target::File(_) | Target::Symlink) => {
                fs::remove_file(dir.join(name)).map_err(|source| FilesError::Write {
                    path: path.clone(),
                    written: out.removed.clone(),
                    source,
                })?;
                out.removed.push(path.clone());
            }
            Err(why) => out.kept.push(format!("{path}: {}", why.0)),
        }
    }
    out.removed.sort();
    Ok(out)
}

/// Returns the ledger record of a teardown of `env`'s `binding`.
pub(crate) fn record(env: &str, binding: String) -> ApplyRecord {
    ApplyRecord {
        env: env.to_owned(),
        component: COMPONENT.to_owned(),
        binding,
        written: Vec::new(),
        owned: Vec::new(),
        digest: TEARDOWN_DIGEST.to_owned(),
    }
}
