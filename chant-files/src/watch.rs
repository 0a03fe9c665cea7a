//! The files lexicon's change stream: inotify on the bound root, through notify's recommended
//! watcher (never polling).
//!
//! An event signals only when it leaves a declared file differing from its declaration
//! (content, mode, or a regular file at all). That one rule ignores what must be ignored:
//! chant's own writes (an apply leaves every file it writes equal to its declaration, and its
//! temporary files are not declared), reads (access events are not even looked at), files the
//! lexicon never observes, and anything under `.git/`. A root that contains the repository's git
//! directory is refused: every ledger append would be an event there. The root's own removal
//! ends the stream (reported once through [`ChangeSink::lost`]).

#[cfg(feature = "watch")]
use std::collections::BTreeMap;
#[cfg(feature = "watch")]
use std::path::Path;
use std::path::PathBuf;

use chant_lexicon::observe::LexiconError;
use chant_lexicon::observe::observation::{ChangeSink, SubscribeError, Subscription};

#[cfg(feature = "watch")]
use super::DeclaredFile;
use super::{COMPONENT, FilesLexicon};

fn refused(detail: String) -> LexiconError {
    LexiconError::ReadFailed { lexicon: COMPONENT.to_owned(), detail, source: None }
}

/// Resolves the root to watch, refusing an unbound or missing root and one that contains the
/// repository's git directory.
fn watched_root(lexicon: &FilesLexicon) -> Result<PathBuf, LexiconError> {
    let Some(root) = lexicon.root() else {
        return Err(refused(format!("env {} binds no files root, so there is nothing to watch", lexicon.env())));
    };
    let real = std::fs::canonicalize(root)
        .map_err(|e| refused(format!("the files root {} cannot be watched: {e}", root.display())))?;
    if !real.is_dir() {
        return Err(refused(format!("the files root {} is not a directory", root.display())));
    }
    let git_dir = gix::discover(&real).ok().and_then(|repo| std::fs::canonicalize(repo.git_dir()).ok());
    let nested = real.join(".git");
    if git_dir.is_some_and(|g| g.starts_with(&real)) || nested.exists() {
        return Err(refused(format!(
            "the files root {} contains the repository's git directory; chant refuses to watch it (every ledger \
             write would be a change): bind a directory below the project root",
            root.display()
        )));
    }
    Ok(real)
}

/// Whether the file at `path` is what `declared` says: a regular file with that mode and
/// content.
#[cfg(feature = "watch")]
fn matches(path: &Path, declared: &DeclaredFile) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    meta.is_file()
        && meta.permissions().mode() & 0o7777 == declared.mode
        && meta.len() == declared.content.len() as u64
        && std::fs::read(path).is_ok_and(|bytes| bytes == declared.content)
}

/// Whether any declared file at or below `rel` differs from its declaration.
#[cfg(feature = "watch")]
fn drifted(root: &Path, rel: &str, declared: &BTreeMap<String, DeclaredFile>) -> bool {
    if let Some(file) = declared.get(rel) {
        return !matches(&root.join(rel), file);
    }
    let prefix = format!("{rel}/");
    declared.iter().filter(|(p, _)| rel.is_empty() || p.starts_with(&prefix)).any(|(p, f)| !matches(&root.join(p), f))
}

#[cfg(feature = "watch")]
pub(super) fn subscribe(lexicon: &FilesLexicon, sink: ChangeSink) -> Result<Subscription, SubscribeError> {
    use std::sync::atomic::{AtomicBool, Ordering};

    use notify::event::{AccessKind, AccessMode};
    use notify::{EventKind, RecursiveMode, Watcher};

    let root = watched_root(lexicon)?;
    let declared = lexicon.declaration().files().clone();
    let lost = AtomicBool::new(false);
    let report_lost = {
        let sink = sink.clone();
        move |why: String| {
            if !lost.swap(true, Ordering::SeqCst) {
                sink.lost(why);
            }
        }
    };
    let watched = root.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let event = match event {
            Ok(event) => event,
            Err(e) => return report_lost(format!("the watcher of {} failed: {e}", watched.display())),
        };
        let relevant = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => false,
            _ => true,
        };
        if !relevant {
            return;
        }
        let mut changed = false;
        for path in &event.paths {
            if path == &watched && (matches!(event.kind, EventKind::Remove(_)) || !watched.exists()) {
                report_lost(format!("the watched root {} was removed", watched.display()));
                continue;
            }
            let Ok(rel) = path.strip_prefix(&watched) else { continue };
            if rel.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            let Some(rel) = rel.to_str() else { continue };
            changed |= drifted(&watched, rel, &declared);
        }
        if changed {
            sink.changed();
        }
    })
    .map_err(|e| refused(format!("cannot start a watcher: {e}")))?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| refused(format!("cannot watch the files root {}: {e}", root.display())))?;
    Ok(Subscription::new(watcher))
}

#[cfg(not(feature = "watch"))]
pub(super) fn subscribe(lexicon: &FilesLexicon, _sink: ChangeSink) -> Result<Subscription, SubscribeError> {
    watched_root(lexicon)?;
    // Nothing failed to read: this build has no watcher.
    Err(SubscribeError::Unavailable(
        "chant was built without its `watch` feature, so the files root is not watched".into(),
    ))
}

#[cfg(all(test, feature = "watch"))]
mod tests {
    use super::*;

    #[test]
    fn only_a_declared_file_that_differs_is_drift() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let mut declared = BTreeMap::new();
        declared.insert("a.conf".to_owned(), DeclaredFile { content: b"a\n".to_vec(), mode: 0o644 });
        declared.insert("sub/b.conf".to_owned(), DeclaredFile { content: b"b\n".to_vec(), mode: 0o600 });
        std::fs::create_dir(root.join("sub")).unwrap();
        for (p, f) in &declared {
            std::fs::write(root.join(p), &f.content).unwrap();
            std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(f.mode)).unwrap();
        }
        assert!(!drifted(root, "a.conf", &declared));
        assert!(!drifted(root, "sub", &declared));
        assert!(!drifted(root, "", &declared));
        assert!(!drifted(root, "undeclared.txt", &declared));
        std::fs::write(root.join("sub/b.conf"), "edited\n").unwrap();
        assert!(drifted(root, "sub/b.conf", &declared));
        assert!(drifted(root, "sub", &declared));
        std::fs::remove_file(root.join("a.conf")).unwrap();
        assert!(drifted(root, "a.conf", &declared));
    }
}
