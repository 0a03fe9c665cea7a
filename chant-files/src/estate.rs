//! The files lexicon beyond its declared estate: ambient files under the root, the teardown
//! plan of what its last recorded apply owns, and the artifacts of the env's `artifacts_dir`.
//!
//! - **Ambient**: every regular file and symlink under the root (symlinks are never followed)
//!   that is neither declared nor already observed; `.git` and the artifacts directory are not
//!   scanned (the first is not the env's, the second is listed as artifacts). A directory that
//!   cannot be read is a hole, never an empty scope. The kind is `file`.
//! - **Teardown plan**: the files lexicon stamps no marker and owns by its last recorded apply,
//!   so the candidates are the owned paths observed present (through the same confinement
//!   checks as an observation); an owned path that cannot be read is a hole; an unbound root is a
//!   `no-binding` hole over every file.
//! - **Artifacts**: every regular file under `artifacts_dir` with its content digest and size;
//!   an env that binds no `artifacts_dir` has no artifacts reader (not implemented, `null`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{COMPONENT, FILE_KIND, FilesLexicon, declaration};
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::estate::{Ambient, AmbientResource, Artifact, ArtifactListing, TeardownPlan};
use chant_lexicon::observe::{DeclaredEntity, EstateError, EstateHook, Lexicon, Observation, Unobserved};

/// The `chant.toml` key under `[env.<name>]` binding the env's artifacts directory.
pub const ARTIFACTS_KEY: &str = "artifacts_dir";

/// How many entries a scan visits at most before it stops with a hole (a root that holds a
/// whole disk is not an estate).
const MAX_ENTRIES: usize = 100_000;

/// What one scan found: files by relative path, and directories it could not read.
#[derive(Debug, Default)]
struct Scan {
    files: Vec<(String, PathBuf)>,
    holes: Vec<(String, String)>,
}

/// Lists every regular file and symlink under `root`, skipping the paths in `skip`.
fn scan(root: &Path, skip: &[PathBuf]) -> Scan {
    let mut out = Scan::default();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    let mut visited = 0usize;
    while let Some((dir, rel)) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                out.holes.push((if rel.is_empty() { ".".into() } else { rel.clone() }, format!("cannot list: {e}")));
                continue;
            }
        };
        let mut children: Vec<(String, PathBuf, fs::FileType)> = Vec::new();
        for entry in entries {
            visited += 1;
            if visited > MAX_ENTRIES {
                out.holes.push((rel.clone(), format!("stopped after {MAX_ENTRIES} entries")));
                return out;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.holes.push((rel.clone(), format!("cannot list: {e}")));
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            match entry.file_type() {
                Ok(t) => children.push((name, path, t)),
                Err(e) => out.holes.push((join(&rel, &name), format!("cannot stat: {e}"))),
            }
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, path, kind) in children {
            let child = join(&rel, &name);
            if skip.iter().any(|s| s == &path) || (rel.is_empty() && name == ".git") {
                continue;
            }
            if kind.is_dir() {
                stack.push((path, child));
            } else if kind.is_file() || kind.is_symlink() {
                out.files.push((child, path));
            }
        }
    }
    out.files.sort();
    out
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() { name.to_owned() } else { format!("{rel}/{name}") }
}

fn real(path: &Path) -> Option<PathBuf> {
    fs::canonicalize(path).ok()
}

impl FilesLexicon {
    /// Binds the env's artifacts directory (`artifacts_dir`), listed by `list_artifacts`.
    #[must_use]
    pub fn with_artifacts_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.artifacts_dir = dir;
        self
    }

    /// Returns the artifacts directory binding.
    pub fn artifacts_dir(&self) -> Option<&Path> {
        self.artifacts_dir.as_deref()
    }

    pub(super) fn ambient_files(
        &self,
        declared: &[DeclaredEntity],
        observed: &Observation,
    ) -> Result<Ambient, EstateError> {
        let mut out = Ambient::default();
        let Some(root) = &self.root else {
            out.holes.insert(
                ".".into(),
                Unobserved::new(UnobservedReason::NoBinding).detail(format!("env {} binds no files root", self.env)),
            );
            return Ok(out);
        };
        let real_root = match fs::canonicalize(root) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(EstateError::failed(COMPONENT, EstateHook::Ambient, e)),
        };
        let skip: Vec<PathBuf> = self.artifacts_dir.as_deref().and_then(real).into_iter().collect();
        let found = scan(&real_root, &skip);
        for (name, _) in found.files {
            let known = declared.iter().any(|d| d.name == name)
                || observed.resources.contains_key(&name)
                || observed.unobserved.contains_key(&name);
            if !known {
                out.resources.insert(name, AmbientResource::new(FILE_KIND));
            }
        }
        for (scope, detail) in found.holes {
            out.holes.insert(scope, Unobserved::new(UnobservedReason::ReadFailed).kind("directory").detail(detail));
        }
        Ok(out)
    }

    pub(super) fn owned_plan(&self) -> TeardownPlan {
        let mut plan = TeardownPlan::new();
        if self.root.is_none() {
            plan.hole(
                FILE_KIND,
                None,
                UnobservedReason::NoBinding,
                Some(format!("env {} binds no files root", self.env)),
            );
            return plan;
        }
        if !self.last_apply.recorded {
            return plan;
        }
        let owned: Vec<DeclaredEntity> =
            self.last_apply.owned.iter().map(|p| DeclaredEntity::new(p.clone()).kind(FILE_KIND)).collect();
        match self.describe_resources(&owned) {
            Ok(observation) => {
                for entity in &owned {
                    if observation.resources.contains_key(&entity.name) {
                        plan.candidate(&entity.name, Some(FILE_KIND), None);
                    } else if let Some(u) = observation.unobserved.get(&entity.name) {
                        plan.hole(FILE_KIND, Some(&entity.name), u.reason, u.detail.clone());
                    }
                }
            }
            Err(e) => plan.hole(FILE_KIND, None, UnobservedReason::ReadFailed, Some(e.chain())),
        }
        plan
    }

    pub(super) fn artifacts(&self) -> Result<ArtifactListing, EstateError> {
        let failed =
            |e: Box<dyn std::error::Error + Send + Sync>| EstateError::failed(COMPONENT, EstateHook::Artifacts, e);
        // Without an `artifacts_dir` the env has no artifacts to list: the reader does not apply.
        let Some(dir) = &self.artifacts_dir else {
            return Err(EstateError::not_implemented(COMPONENT, EstateHook::Artifacts));
        };
        let mut listing = ArtifactListing::default();
        let real_dir = match fs::canonicalize(dir) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(listing),
            Err(e) => return Err(failed(Box::new(e))),
        };
        let found = scan(&real_dir, &[]);
        if let Some((scope, detail)) = found.holes.first() {
            return Err(failed(format!("artifacts directory {}: {scope}: {detail}", dir.display()).into()));
        }
        for (name, path) in found.files {
            let meta = fs::symlink_metadata(&path).map_err(|e| failed(Box::new(e)))?;
            let content = if meta.is_file() {
                fs::read(&path).map_err(|e| failed(format!("cannot read artifact {name}: {e}").into()))?
            } else {
                fs::read_link(&path).map_err(|e| failed(Box::new(e)))?.to_string_lossy().into_owned().into_bytes()
            };
            let digest = declaration::content_digest(&content).map_err(|e| failed(format!("{name}: {e}").into()))?;
            listing.artifacts.insert(name, Artifact { digest, size: meta.len() });
        }
        Ok(listing)
    }
}
