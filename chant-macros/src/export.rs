//! Writes an op's op.json export (`$CHANT_OPS_DIR/<crate>/<name>.json`) during `cargo build`.
//!
//! The macro writes the file and the expansion names it in `include_bytes!`, which puts it in the
//! crate's dep-info: deleting or hand-editing the file makes cargo rebuild the crate, and the
//! rebuild writes it back. To keep that from looping, the file is written only when its bytes
//! change, through a temporary file and a rename (so parallel writers never expose a half-written
//! file), and its modification time is set to a fixed past instant, so cargo never sees it as newer
//! than the build that wrote it.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The modification time every export carries: 2001-01-01T00:00:00Z.
const BACKDATE: Duration = Duration::from_secs(978_307_200);

/// Writes `bytes` to `path` unless the file already holds exactly them.
///
/// # Errors
///
/// Returns a message naming the path when the directory or the file cannot be written.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    let fail = |e: std::io::Error| format!("cannot write the op.json export {}: {e}", path.display());
    let dir = path.parent().ok_or_else(|| fail(std::io::Error::other("the path has no parent directory")))?;
    std::fs::create_dir_all(dir).map_err(fail)?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let tmp = dir.join(format!(".{file_name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.set_modified(SystemTime::UNIX_EPOCH + BACKDATE)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_once_and_backdates() {
        let dir = std::env::temp_dir().join(format!("chant-macros-export-{}", std::process::id()));
        let path = dir.join("krate/op.json");
        write_if_changed(&path, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(mtime, SystemTime::UNIX_EPOCH + BACKDATE);
        write_if_changed(&path, b"{}\n").unwrap();
        write_if_changed(&path, b"{\"a\":1}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}\n");
        let leftovers = std::fs::read_dir(dir.join("krate")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_blocked_directory_is_an_error_naming_the_path() {
        let dir = std::env::temp_dir().join(format!("chant-macros-export-blocked-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("krate"), b"a file where a directory should be").unwrap();
        let err = write_if_changed(&dir.join("krate/op.json"), b"{}\n").unwrap_err();
        assert!(err.contains("krate/op.json"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
