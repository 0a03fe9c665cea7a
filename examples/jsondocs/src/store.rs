//! The documents on disk: `<root>/<name>.json`, each a JSON object, with chant's ownership marker
//! under the `_chant` key.
//!
//! Reads never follow a symlink and never fail silently: a document is absent (nothing at its
//! path), a JSON object, or unreadable with the reason. Writes are atomic: the new bytes go to a
//! temporary file in the same directory (created exclusively), are flushed with `fsync` and
//! renamed over the target, and the directory is `fsync`ed, so a reader sees the old document or
//! the new one, never a torn write.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

/// The file name extension of a document.
pub const EXTENSION: &str = "json";

/// The marker key inside each document chant writes.
pub const MARKER_KEY: &str = "_chant";

/// What reading one document found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// Nothing is at its path.
    Absent,
    /// A JSON object.
    Document(Map<String, Value>),
    /// Something that cannot be read as a document, and why.
    Unreadable(String),
}

/// Returns the path of document `name` under `root`.
pub fn path(root: &Path, name: &str) -> PathBuf {
    root.join(format!("{name}.{EXTENSION}"))
}

/// Reads the document at `path` without following a symlink.
pub fn read(path: &Path) -> Found {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Found::Absent,
        Err(e) => return Found::Unreadable(format!("cannot stat it: {e}")),
    };
    if !meta.is_file() {
        return Found::Unreadable("it is not a regular file".to_owned());
    }
    let mut text = String::new();
    if let Err(e) = File::open(path).and_then(|mut f| f.read_to_string(&mut text)) {
        return Found::Unreadable(format!("cannot read it: {e}"));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Found::Document(map),
        Ok(_) => Found::Unreadable("it holds JSON that is not an object".to_owned()),
        Err(e) => Found::Unreadable(format!("it is not JSON: {e}")),
    }
}

/// Returns the names of the documents under `root` (regular `*.json` files, not temporaries),
/// sorted; `None` when the root does not exist.
///
/// # Errors
///
/// The root exists and cannot be listed.
pub fn names(root: &Path) -> io::Result<Option<Vec<String>>> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else { continue };
        let Some(stem) = file_name.strip_suffix(&format!(".{EXTENSION}")) else { continue };
        if stem.starts_with('.') || !entry.file_type()?.is_file() {
            continue;
        }
        out.push(stem.to_owned());
    }
    out.sort();
    Ok(Some(out))
}

/// Returns the `(stack, env)` of the document's marker, when it carries a well-formed one.
pub fn marker(document: &Map<String, Value>) -> Option<(String, String)> {
    let marker = document.get(MARKER_KEY)?.as_object()?;
    let stack = marker.get("stack")?.as_str()?.to_owned();
    let env = marker.get("env")?.as_str()?.to_owned();
    Some((stack, env))
}

/// Returns the document's content without its marker, as canonical JSON (keys sorted, compact):
/// what the change set compares.
pub fn canonical(document: &Map<String, Value>) -> String {
    let mut content = document.clone();
    content.remove(MARKER_KEY);
    Value::Object(content).to_string()
}

/// Returns the bytes chant writes for `content` stamped with the marker of `stack` and `env`:
/// pretty JSON, keys sorted, and a final newline.
pub fn render(content: &Map<String, Value>, stack: &str, env: &str) -> Vec<u8> {
    let mut document = content.clone();
    let mut marker = Map::new();
    marker.insert("env".to_owned(), Value::String(env.to_owned()));
    marker.insert("stack".to_owned(), Value::String(stack.to_owned()));
    document.insert(MARKER_KEY.to_owned(), Value::Object(marker));
    let mut bytes = serde_json::to_vec_pretty(&Value::Object(document)).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Returns true when the regular file at `path` holds exactly `bytes`.
pub fn holds(path: &Path, bytes: &[u8]) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) && fs::read(path).is_ok_and(|b| b == bytes)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically (see the module documentation).
///
/// # Errors
///
/// Any I/O failure; the temporary file is removed, the target left as it was.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("document");
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_document_reads_back_with_its_marker() {
        let dir = tempfile::tempdir().unwrap();
        let mut content = Map::new();
        content.insert("port".to_owned(), Value::from(8080));
        let at = path(dir.path(), "service");
        write_atomically(&at, &render(&content, "demo", "docs")).unwrap();
        let Found::Document(read) = read(&at) else { panic!("not a document") };
        assert_eq!(marker(&read), Some(("demo".to_owned(), "docs".to_owned())));
        assert_eq!(canonical(&read), r#"{"port":8080}"#);
        assert!(holds(&at, &render(&content, "demo", "docs")));
        assert_eq!(names(dir.path()).unwrap(), Some(vec!["service".to_owned()]), "no temporary is left behind");
        assert_eq!(names(&dir.path().join("missing")).unwrap(), None);
    }

    #[test]
    fn what_is_not_a_document_says_why() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&path(dir.path(), "none")), Found::Absent);
        fs::write(path(dir.path(), "text"), "not json").unwrap();
        assert!(matches!(read(&path(dir.path(), "text")), Found::Unreadable(why) if why.starts_with("it is not JSON")));
        fs::write(path(dir.path(), "list"), "[1]").unwrap();
        assert!(matches!(read(&path(dir.path(), "list")), Found::Unreadable(why) if why.contains("not an object")));
        fs::create_dir(path(dir.path(), "dir")).unwrap();
        assert!(matches!(read(&path(dir.path(), "dir")), Found::Unreadable(why) if why.contains("regular file")));
    }
}
