//! Writing objects as one pack: the objects of a ledger append in one `.pack` and its `.idx`,
//! two new files where loose objects are seven.
//!
//! On a file system where creating a file is what an append costs most (ext4 without a journal
//! scans recently freed inodes for every new one; see docs/operator.md, "What it costs"), the
//! file count is the cost: a pack holds any number of objects in two files. The pack is written
//! as git writes one it receives: the pack (version 2, every object whole, zlib-compressed, no
//! deltas) to `objects/pack/tmp_pack_<unique>`, then its index (version 2) to
//! `objects/pack/tmp_idx_<unique>`, each renamed to `pack-<checksum>.{pack,idx}` in that order,
//! so a reader that finds the index finds the whole pack, and a crash leaves at most a temporary
//! file or a pack without an index, which no reader opens. Objects are in the repository before
//! any reference names them, as with loose objects.
//!
//! An append's pack is not fsynced: it holds what loose objects held before, which neither git
//! (by default, `core.fsync` leaves loose objects out) nor chant fsyncs, and the reference that
//! names them is not fsynced either. A merged pack ([`Durability::Synced`]) is: its pack, its
//! index and the directory are fsynced before the packs it replaces are removed (as `git
//! repack -d` fsyncs its new pack before it deletes the old ones), so a power loss right after
//! the removal cannot take objects already recorded with it.
//!
//! [`Entry`] is an object as a pack stores it (its type and size header and its compressed
//! content, with the CRC-32 the index records), so packs can be merged without inflating or
//! compressing anything again ([`write`] takes entries from several packs).

use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::ObjectId;
use super::object_file::{self, WriteError};

/// One object as a pack stores it.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The object's id.
    pub id: ObjectId,
    /// Its type-and-size header followed by its content as one zlib stream.
    bytes: Vec<u8>,
    /// The CRC-32 of `bytes`, as the index records it.
    crc: u32,
}

impl Entry {
    /// The entry of object `id` of `kind` with content `data`, compressed at `level` by this
    /// thread's compressor.
    pub(super) fn new(
        id: ObjectId,
        kind: gix::object::Kind,
        data: &[u8],
        level: gix::zlib::Compression,
    ) -> std::io::Result<Entry> {
        let mut bytes = header(kind, data.len());
        object_file::deflated(level, &[data], |compressed| bytes.extend_from_slice(compressed))?;
        let crc = crc32fast::hash(&bytes);
        Ok(Entry { id, bytes, crc })
    }
}

/// A pack object's header: the type in bits 4-6 of the first byte, the size in its low four
/// bits and seven more bits in each following byte, the high bit saying another byte follows.
fn header(kind: gix::object::Kind, size: usize) -> Vec<u8> {
    let type_bits: u8 = match kind {
        gix::object::Kind::Commit => 1,
        gix::object::Kind::Tree => 2,
        gix::object::Kind::Blob => 3,
        gix::object::Kind::Tag => 4,
    };
    let mut out = Vec::with_capacity(4);
    let mut byte = (type_bits << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest != 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
    out
}

/// The files of a pack written by [`write`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    /// The `.pack` file.
    pub pack: PathBuf,
    /// Its `.idx` file.
    pub index: PathBuf,
}

impl Written {
    /// Removes the pack, its index first (as git does), so no reader finds an index without its
    /// pack from then on. A file already gone is not an error.
    pub(super) fn remove(&self) -> std::io::Result<()> {
        for path in [&self.index, &self.pack] {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether [`write`] makes a pack durable before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Durability {
    /// Written and renamed into place, as loose objects are (the page cache decides when).
    Cached,
    /// The pack and its index fsynced before their renames, the directory after them: for a
    /// pack whose objects are about to be removed from elsewhere.
    Synced,
}

/// Writes `entries` (the first of each id; at least one) as one pack with its index into
/// `pack_dir` (`objects/pack`, created when missing), named by the checksum of hash `kind`.
pub(super) fn write(
    pack_dir: &Path,
    kind: gix::hash::Kind,
    entries: &[&Entry],
    durability: Durability,
) -> Result<Written, WriteError> {
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    let entries: Vec<&Entry> = entries.iter().copied().filter(|e| seen.insert(e.id)).collect();
    let fail = |path: &Path| {
        let path = path.to_owned();
        move |source| WriteError { path, source }
    };
    let count = u32::try_from(entries.len())
        .map_err(|_| fail(pack_dir)(std::io::Error::other("too many objects for one pack")))?;

    let mut pack = Vec::with_capacity(12 + entries.iter().map(|e| e.bytes.len()).sum::<usize>() + kind.len_in_bytes());
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&count.to_be_bytes());
    let mut offsets = Vec::with_capacity(entries.len());
    for entry in &entries {
        offsets.push(pack.len() as u64);
        pack.extend_from_slice(&entry.bytes);
    }
    let checksum = hash(kind, &pack).map_err(fail(pack_dir))?;
    pack.extend_from_slice(checksum.as_bytes());

    let index = index(kind, &entries, &offsets, checksum).map_err(fail(pack_dir))?;
    let name = format!("pack-{checksum}");
    let written = Written { pack: pack_dir.join(format!("{name}.pack")), index: pack_dir.join(format!("{name}.idx")) };
    // Named by its checksum: a pack of that name with its index holds these very bytes.
    let had_pack = written.pack.exists();
    if had_pack && written.index.exists() {
        // Another writer's, maybe not fsynced: a merge that needs it durable syncs it.
        if durability == Durability::Synced {
            sync_existing(&[&written.pack, &written.index, pack_dir])?;
        }
        return Ok(written);
    }
    place(pack_dir, "tmp_pack_", &pack, &written.pack, durability)?;
    if let Err(e) = place(pack_dir, "tmp_idx_", &index, &written.index, durability) {
        // A pack without its index is never read; one this call made is not left behind.
        if !had_pack {
            let _ = std::fs::remove_file(&written.pack);
        }
        return Err(e);
    }
    if durability == Durability::Synced {
        sync_existing(&[pack_dir])?;
    }
    Ok(written)
}

/// Fsyncs each of `paths` (files or directories) as it is.
fn sync_existing(paths: &[&Path]) -> Result<(), WriteError> {
    for path in paths {
        std::fs::File::open(path)
            .and_then(|file| file.sync_all())
            .map_err(|source| WriteError { path: (*path).to_owned(), source })?;
    }
    Ok(())
}

/// The version 2 index of a pack holding `entries` at `offsets`, whose checksum is `checksum`.
fn index(kind: gix::hash::Kind, entries: &[&Entry], offsets: &[u64], checksum: ObjectId) -> std::io::Result<Vec<u8>> {
    let mut sorted: Vec<usize> = (0..entries.len()).collect();
    sorted.sort_by_key(|&n| entries[n].id);
    let id_len = kind.len_in_bytes();
    let mut out = Vec::with_capacity(8 + 256 * 4 + entries.len() * (id_len + 8) + 2 * id_len);
    out.extend_from_slice(&[0xff, b't', b'O', b'c', 0, 0, 0, 2]);
    let mut fanout = [0u32; 256];
    for entry in entries {
        fanout[usize::from(entry.id.as_bytes()[0])] += 1;
    }
    let mut total = 0u32;
    for slot in fanout {
        total += slot;
        out.extend_from_slice(&total.to_be_bytes());
    }
    for &n in &sorted {
        out.extend_from_slice(entries[n].id.as_bytes());
    }
    for &n in &sorted {
        out.extend_from_slice(&entries[n].crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for &n in &sorted {
        let offset = offsets[n];
        let small = match u32::try_from(offset) {
            Ok(small) if small < 0x8000_0000 => small,
            _ => {
                let at = u32::try_from(large.len()).map_err(|_| std::io::Error::other("too many large offsets"))?;
                large.push(offset);
                0x8000_0000 | at
            }
        };
        out.extend_from_slice(&small.to_be_bytes());
    }
    for offset in large {
        out.extend_from_slice(&offset.to_be_bytes());
    }
    out.extend_from_slice(checksum.as_bytes());
    let own = hash(kind, &out)?;
    out.extend_from_slice(own.as_bytes());
    Ok(out)
}

/// The checksum of `bytes` with hash `kind` (SHA-1 with collision detection).
fn hash(kind: gix::hash::Kind, bytes: &[u8]) -> std::io::Result<ObjectId> {
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(bytes);
    hasher.try_finalize().map_err(|e| std::io::Error::other(e.to_string()))
}

/// Writes `bytes` to a new temporary file `<prefix><unique>` in `dir` (mode 0444, as git's pack
/// files), fsynced when `durability` says so, and renames it to `path`; creates `dir` when it is
/// missing.
fn place(dir: &Path, prefix: &str, bytes: &[u8], path: &Path, durability: Durability) -> Result<(), WriteError> {
    let temp = dir.join(format!("{prefix}{}", object_file::unique_suffix()));
    let create = || std::fs::OpenOptions::new().write(true).create_new(true).mode(0o444).open(&temp);
    let file = match create() {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|source| WriteError { path: dir.to_owned(), source })?;
            create()
        }
        other => other,
    };
    let written = file.and_then(|mut file| {
        file.write_all(bytes)?;
        if durability == Durability::Synced { file.sync_all() } else { Ok(()) }
    });
    let placed = written.and_then(|()| std::fs::rename(&temp, path));
    placed.map_err(|source| {
        let _ = std::fs::remove_file(&temp);
        WriteError { path: path.to_owned(), source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: gix::object::Kind, data: &[u8]) -> Entry {
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).unwrap();
        Entry::new(id, kind, data, gix::zlib::Compression::BEST_SPEED).unwrap()
    }

    /// A pack written here is one git verifies (`git verify-pack`: checksums, CRCs, offsets)
    /// and gix reads every object of (content and kind) once it looks again; a second pack of
    /// entries taken from the first (a merge) is as good; removing a pack leaves no file.
    #[test]
    fn a_pack_verifies_with_git_and_reads_back_through_gix() {
        let dir = tempfile::tempdir().unwrap();
        gix::init_bare(dir.path()).unwrap();
        let pack_dir = dir.path().join("objects/pack");
        let big: Vec<u8> = (0..200_000u32).flat_map(|n| n.wrapping_mul(2_654_435_761).to_le_bytes()).collect();
        let objects = [
            (gix::object::Kind::Blob, b"a record\n".to_vec()),
            (gix::object::Kind::Blob, Vec::new()),
            (gix::object::Kind::Blob, big),
            (gix::object::Kind::Blob, vec![b'x'; 300]),
        ];
        let entries: Vec<Entry> = objects.iter().map(|(kind, data)| entry(*kind, data)).collect();
        let sha1 = gix::hash::Kind::Sha1;
        let first = write(&pack_dir, sha1, &[&entries[0], &entries[1], &entries[0]], Durability::Cached).unwrap();
        let second = write(&pack_dir, sha1, &[&entries[2], &entries[3]], Durability::Cached).unwrap();
        let merged = write(&pack_dir, sha1, &entries.iter().collect::<Vec<_>>(), Durability::Synced).unwrap();
        for pack in [&first, &second, &merged] {
            #[allow(clippy::disallowed_methods)] // a unit test asks git itself
            let out = std::process::Command::new("git")
                .arg("--git-dir")
                .arg(dir.path())
                .args(["verify-pack", "-v"])
                .arg(&pack.index)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        first.remove().unwrap();
        second.remove().unwrap();
        first.remove().unwrap();
        assert!(!first.pack.exists() && !first.index.exists());
        let repo = gix::open(dir.path()).unwrap();
        for (kind, data) in &objects {
            let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, *kind, data).unwrap();
            let object = repo.find_object(id).unwrap();
            assert_eq!((object.kind, object.data.as_slice()), (*kind, data.as_slice()));
        }
        let names: Vec<String> =
            std::fs::read_dir(&pack_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert_eq!(names.len(), 2, "the merged pack and its index, no temporary file: {names:?}");
    }

    #[test]
    fn a_header_carries_the_type_and_the_size_in_seven_bit_groups() {
        assert_eq!(header(gix::object::Kind::Blob, 5), vec![0x35]);
        assert_eq!(header(gix::object::Kind::Commit, 15), vec![0x1f]);
        assert_eq!(header(gix::object::Kind::Tree, 16), vec![0xa0, 0x01]);
        assert_eq!(header(gix::object::Kind::Blob, 200_000), vec![0xb0, 0xd4, 0x61]);
    }
}
