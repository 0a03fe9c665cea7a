//! Applying a files declaration: every declared file written atomically under the root, nothing
//! ever deleted, and an [`ApplyRecord`] returned for the caller to append to the ledger.
//!
//! Each file is written to a temporary file in its own directory (created exclusively), given its
//! declared mode explicitly (not through the umask), flushed with `fsync`, renamed over the target
//! and the directory `fsync`ed, so a reader sees either the old file or the new one, never a
//! torn write. Missing parent directories are created. A file already as declared is left
//! untouched (not rewritten). Before writing anything, every declared path is checked the way the
//! observer checks it: a path that is unreadable there (a directory where a file is declared, a
//! symlink loop or escape) refuses the whole apply, so an apply never half-writes a declaration it
//! could have known it cannot finish.
//!
//! In default mode nothing is deleted: files of an earlier apply that are no longer declared stay
//! where they are (the change set reports them as `delete`). The lexicon holds no storage; the
//! record is the caller's to keep.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::confine::{self, Parent, Target};
use super::{COMPONENT, FilesDeclaration, FilesError};
use chant_lexicon::observe::LastApply;
use chant_store::ledger::{self, Encoding, Record, RecordKind, ShardKey};

/// What one successful apply of a files declaration did, for the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyRecord {
    /// The env applied.
    pub env: String,
    /// The component (`files`).
    pub component: String,
    /// The root binding, as configured.
    pub binding: String,
    /// The paths this apply wrote (those that were not already as declared), sorted.
    pub written: Vec<String>,
    /// Every path this apply owns: all declared paths, sorted.
    pub owned: Vec<String>,
    /// The digest of the declaration applied (`sha1:<hex>`).
    pub digest: String,
}

/// An apply (or teardown) record goes under `<env>/_apply/files`, in declared field order, as it
/// always has been written.
impl Record for ApplyRecord {
    const KIND: RecordKind = RecordKind::Apply;
    const NAME: &'static str = "files apply";
    const ENCODING: Encoding = Encoding::Declared;

    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        ShardKey::apply(member, &self.env, &self.component)
    }
}

impl ApplyRecord {
    /// Returns the record as the change set's "last recorded apply".
    pub fn last_apply(&self) -> LastApply {
        LastApply::recorded(self.owned.iter().cloned())
    }

    /// Returns the record as the last recorded apply of `binding`: "never applied" when the
    /// record is of another binding (the env's root was re-bound since), since only a
    /// successful apply of this env's binding counts as recorded.
    pub fn last_apply_for(&self, binding: &str) -> LastApply {
        let torn_down = self.digest == super::teardown::TEARDOWN_DIGEST;
        if self.binding == binding && self.component == COMPONENT && !torn_down {
            self.last_apply()
        } else {
            LastApply::none()
        }
    }
}

/// Applies `declaration` under `root` for `env`. See the module documentation.
pub(crate) fn apply(
    env: &str,
    root: Option<&Path>,
    binding: Option<String>,
    declaration: &FilesDeclaration,
) -> Result<ApplyRecord, FilesError> {
    declaration.validate()?;
    let digest = declaration.digest()?;
    let Some(root) = root else {
        return Err(FilesError::NoBinding { env: env.to_owned() });
    };
    fs::create_dir_all(root).map_err(|source| FilesError::Root { root: root.to_path_buf(), source })?;
    let real_root = fs::canonicalize(root).map_err(|source| FilesError::Root { root: root.to_path_buf(), source })?;

    // Refuse before writing anything.
    for path in declaration.files().keys() {
        if let Parent::Dir(dir) = confine::parent(&real_root, path, false).map_err(|u| refused(path, u))? {
            confine::inspect(&real_root, &dir, confine::file_name(path), path).map_err(|u| refused(path, u))?;
        }
    }

    let mut written = Vec::new();
    for (path, file) in declaration.files() {
        let dir = match confine::parent(&real_root, path, true).map_err(|u| refused(path, u))? {
            Parent::Dir(dir) => dir,
            Parent::Missing => {
                return Err(refused(path, confine::Unreadable("its directory could not be created".into())));
            }
        };
        let name = confine::file_name(path);
        let target = confine::inspect(&real_root, &dir, name, path).map_err(|u| refused(path, u))?;
        if let Target::File(meta) = &target
            && meta.permissions().mode() & 0o7777 == file.mode
            && same_content(&dir.join(name), &file.content)
        {
            continue;
        }
        write_atomically(&dir, name, &file.content, file.mode).map_err(|source| FilesError::Write {
            path: path.clone(),
            written: written.clone(),
            source,
        })?;
        written.push(path.clone());
    }

    Ok(ApplyRecord {
        env: env.to_owned(),
        component: COMPONENT.to_owned(),
        binding: binding.unwrap_or_else(|| root.display().to_string()),
        written,
        owned: declaration.files().keys().cloned().collect(),
        digest,
    })
}

fn refused(path: &str, why: confine::Unreadable) -> FilesError {
    FilesError::Refused { path: path.to_owned(), detail: why.0 }
}

fn same_content(path: &Path, want: &[u8]) -> bool {
    let Ok(file) = File::open(path) else { return false };
    let mut got = Vec::with_capacity(want.len());
    // Read one byte past the expected length to notice a longer file without reading it all.
    let limit = u64::try_from(want.len()).unwrap_or(u64::MAX).saturating_add(1);
    match file.take(limit).read_to_end(&mut got) {
        Ok(_) => got == want,
        Err(_) => false,
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn write_atomically(dir: &Path, name: &str, content: &[u8], mode: u32) -> io::Result<()> {
    let (temp, mut file) = create_temp(dir, name)?;
    let result = (|| {
        file.write_all(content)?;
        // Explicit mode: fchmod is not subject to the umask.
        file.set_permissions(Permissions::from_mode(mode))?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, dir.join(name))?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        // Our own temporary file only; nothing of the user's is ever removed.
        let _ = fs::remove_file(&temp);
    }
    result
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    // Keep the temporary name well under NAME_MAX whatever the declared name's length.
    let stem: String = name.chars().take(64).collect();
    let mut attempts = 0;
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{stem}.chant-tmp-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}
