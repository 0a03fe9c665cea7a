//! The ledger's fuzz entry points (driven by the `chant` facade's fuzz targets): what a read does
//! with the bytes of one shard, and with the names found in a key directory's buckets, without a
//! repository.

use crate::git::{EntryKind, ObjectId, TreeEntry};

use super::key::ShardKey;
use super::read::{classify, push};
use super::record::{Record, Typed, decode};
use super::shard;

/// Reads `content` as the lines of one shard of `key` (of the original's shared file when
/// `legacy`), each decoded as `R`, exactly as a read of the ledger does.
pub fn shard_content<R: Record>(key: &ShardKey, content: &[u8], legacy: bool) -> Typed<R> {
    let mut out = Typed { records: Vec::new(), unreadable: Vec::new(), tip: None };
    for (index, text) in shard::content_lines(content).into_iter().enumerate() {
        let line = classify(key, &text, legacy, &decode::<R>);
        push(&mut out, line, "fuzz/0/0.jsonl", index, &text, Some(index as u64));
    }
    out
}

/// Numbers the entries of a key directory as a read does: `buckets` are the directory's entry
/// names, `shards` those of each bucket; returns each shard's number, path and misplacement.
pub fn shard_names(dir: &str, buckets: &[&str], shards: &[&str]) -> Vec<(u64, String, Option<String>)> {
    let entries = |names: &[&str], kind: EntryKind| -> Vec<TreeEntry> {
        names
            .iter()
            .map(|n| TreeEntry { name: (*n).to_owned(), kind, id: ObjectId::null(gix::hash::Kind::Sha1) })
            .collect()
    };
    let mut out = Vec::new();
    for (bucket_number, bucket) in shard::numbered(entries(buckets, EntryKind::Tree), EntryKind::Tree, "") {
        for (number, entry) in shard::numbered(entries(shards, EntryKind::Blob), EntryKind::Blob, ".jsonl") {
            let path = format!("{dir}/{}/{}", bucket.name, entry.name);
            out.push((number, path, shard::misplacement(dir, bucket_number, number)));
        }
    }
    out
}
