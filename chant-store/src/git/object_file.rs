//! Writing a loose object file as git does, with the compressor kept between objects.
//!
//! gix's loose writer allocates and zeroes a fresh zlib deflate state (and a 32 KiB buffer) for
//! every object, and creates the object's directory (`mkdir`, failing) before every rename; a
//! ledger append writes seven small objects (the shard blob, five trees, the commit) and a lease
//! renewal one, so that set-up was a measurable part of each (7% of a round's samples). Here an
//! object is written exactly as git writes one: compressed in memory by this thread's
//! compressor (reset, not reallocated), written to `objects/tmp_obj_<unique>` (created
//! exclusively, mode 0444), renamed to `objects/xx/<rest of the id>`, and the fan-out directory
//! created only when the rename finds it missing. The object appears under its name complete or
//! not at all; an object already there under that name is the same content. A crash leaves at
//! most a `tmp_obj_` file, which `git gc` prunes as it prunes its own. Nothing is fsynced, as
//! with gix's and git's default writes (`core.fsync` leaves loose objects out).

use std::cell::RefCell;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gix::zlib::stream::deflate::{Compress, FlushCompress};

use super::ObjectId;

thread_local! {
    /// This thread's compressor and output buffer, reused by every object it writes.
    static COMPRESSOR: RefCell<Option<(Compress, Vec<u8>)>> = const { RefCell::new(None) };
}

/// Why an object file could not be written.
#[derive(Debug)]
pub(super) struct WriteError {
    /// The file that could not be written.
    pub path: PathBuf,
    /// What the file system (or the compressor) reported.
    pub source: std::io::Error,
}

/// Writes object `id` of `kind` with content `data` (without its header) into loose object
/// directory `objects`, compressed at `level` (the first object a thread writes fixes its level).
pub(super) fn write(
    objects: &Path,
    id: ObjectId,
    kind: gix::object::Kind,
    data: &[u8],
    level: gix::zlib::Compression,
) -> Result<(), WriteError> {
    let hex = id.to_hex().to_string();
    let (fan, rest) = hex.split_at(2);
    let dir = objects.join(fan);
    let path = dir.join(rest);
    let temp = objects.join(temp_name());
    let header = gix::objs::encode::loose_header(kind, data.len() as u64);
    deflated(level, &[&header, data], |out| store(&temp, &dir, &path, out))
        .map_err(|source| WriteError { path: path.clone(), source })?
}

/// Calls `f` with `parts`, concatenated, compressed as one zlib stream by this thread's
/// compressor (reset, not reallocated; the first use on a thread fixes its `level`).
pub(super) fn deflated<T>(
    level: gix::zlib::Compression,
    parts: &[&[u8]],
    f: impl FnOnce(&[u8]) -> T,
) -> std::io::Result<T> {
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (compressor, out) = cell.get_or_insert_with(|| (Compress::new(level), Vec::new()));
        compress(compressor, out, parts)?;
        Ok(f(out))
    })
}

/// `out` becomes `parts`, concatenated, as one zlib stream.
fn compress(compressor: &mut Compress, out: &mut Vec<u8>, parts: &[&[u8]]) -> std::io::Result<()> {
    let input = parts.concat();
    compressor.reset();
    out.clear();
    let mut buf = [0u8; 4096];
    let mut consumed = 0;
    loop {
        let (in_before, out_before) = (compressor.total_in(), compressor.total_out());
        let status = compressor
            .compress(&input[consumed..], &mut buf, FlushCompress::Finish)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        consumed +=
            usize::try_from(compressor.total_in() - in_before).unwrap_or(usize::MAX).min(input.len() - consumed);
        let produced = usize::try_from(compressor.total_out() - out_before).unwrap_or(0).min(buf.len());
        out.extend_from_slice(&buf[..produced]);
        match status {
            gix::zlib::Status::StreamEnd => return Ok(()),
            _ if produced == 0 && compressor.total_in() == in_before => {
                return Err(std::io::Error::other("the compressor made no progress"));
            }
            _ => {}
        }
    }
}

/// How many times [`store`] makes the fan-out directory again when it keeps disappearing.
const DIRECTORY_RACES: usize = 16;

/// Writes `bytes` to `temp` and renames it to `path` in `dir`, creating `dir` when missing.
fn store(temp: &Path, dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |at: &Path| {
        let at = at.to_owned();
        move |source| WriteError { path: at, source }
    };
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(temp)
        .and_then(|mut file| file.write_all(bytes));
    if let Err(e) = written {
        let _ = std::fs::remove_file(temp);
        return Err(fail(temp)(e));
    }
    // `git prune-packed` (run by `git repack -d` and `git gc`, maybe at this moment, by another
    // process or by this one's roll-up) removes a fan-out directory it emptied, also between the
    // creation below and the rename after it: each time the directory is missing it is created
    // again, as git's own object writes do, a bounded number of times.
    let mut renamed = std::fs::rename(temp, path);
    for _ in 0..DIRECTORY_RACES {
        match &renamed {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            _ => break,
        }
        renamed = match std::fs::create_dir(dir) {
            Ok(()) => std::fs::rename(temp, path),
            Err(created) if created.kind() == ErrorKind::AlreadyExists => std::fs::rename(temp, path),
            Err(created) => Err(created),
        };
    }
    renamed.map_err(|e| {
        let _ = std::fs::remove_file(temp);
        fail(path)(e)
    })
}

/// A name no other writer uses at the same time: `tmp_obj_`, which `git gc` prunes when old, and
/// [`unique_suffix`].
fn temp_name() -> String {
    format!("tmp_obj_{}", unique_suffix())
}

/// What makes a temporary file's name unique among writers: the process id, a process counter
/// and wall-clock nanoseconds.
pub(super) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}_{}_{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object written here is the object gix names and reads back (content and kind), large
    /// ones too (several compressor rounds); a second write of it is success; the fan-out
    /// directory is created when missing; no temporary file is left behind.
    #[test]
    fn an_object_is_stored_under_its_name_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let objects = dir.path().join("objects");
        let level = gix::zlib::Compression::BEST_SPEED;
        let big: Vec<u8> = (0..200_000u32).flat_map(|n| n.wrapping_mul(2_654_435_761).to_le_bytes()).collect();
        let repo = gix::open(dir.path()).unwrap();
        for data in [&b"a record\n"[..], &b""[..], &big[..]] {
            let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, data).unwrap();
            let fan = objects.join(&id.to_hex().to_string()[..2]);
            let _ = std::fs::remove_dir(&fan);
            write(&objects, id, gix::object::Kind::Blob, data, level).unwrap();
            write(&objects, id, gix::object::Kind::Blob, data, level).unwrap();
            let object = repo.find_object(id).unwrap();
            assert_eq!((object.kind, object.data.as_slice()), (gix::object::Kind::Blob, data));
        }
        let leftovers: Vec<_> = std::fs::read_dir(&objects)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("tmp_obj_"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    /// While another thread empties and removes the fan-out directories as fast as it can (what
    /// `git prune-packed` does to the loose objects it finds packed, run by a roll-up beside the
    /// writes), every write still lands: a directory that disappears between its creation and
    /// the rename is created again.
    #[test]
    fn writes_land_while_prune_packed_removes_the_fan_out_directories() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let objects = dir.path().join("objects");
        let level = gix::zlib::Compression::BEST_SPEED;
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    for entry in std::fs::read_dir(&objects).unwrap().flatten() {
                        if entry.file_name().len() == 2 {
                            for object in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
                                let _ = std::fs::remove_file(object.path());
                            }
                            let _ = std::fs::remove_dir(entry.path());
                        }
                    }
                }
            });
            for n in 0..2_000u32 {
                let data = format!("record {n}\n");
                let id =
                    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, data.as_bytes()).unwrap();
                let written = write(&objects, id, gix::object::Kind::Blob, data.as_bytes(), level);
                if let Err(e) = written {
                    stop.store(true, Ordering::Relaxed);
                    panic!("write {n}: {e:?}");
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
    }
}
