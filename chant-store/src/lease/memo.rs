//! What a lease store wrote, remembered so that its own writes are never read back.
//!
//! A blob is named by its content, so a ref found pointing at a blob this store wrote holds
//! exactly the record remembered for it: a renewal, a fence check and a release read the ref
//! alone. And the value this store last set on a local lease ref is what a compare-and-swap by
//! the same holder can expect without reading the ref first: the swap reads the ref under its
//! lock anyway, so a renewal of a lease this process holds is one blob and one swap, and only a
//! swap that finds something else (another writer moved the ref) falls back to reading and
//! deciding afresh.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::git::ObjectId;

use super::LeaseRecord;

/// How many written records (and refs set) a memo keeps before it starts over.
const CAPACITY: usize = 1024;

/// The records of the blobs a store wrote, and the blob it last set on each local lease ref.
#[derive(Debug, Default)]
pub(super) struct Memo {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: HashMap<ObjectId, LeaseRecord>,
    set: HashMap<String, ObjectId>,
}

impl Memo {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The record of blob `sha`, if this store wrote it.
    pub(super) fn record(&self, sha: ObjectId) -> Option<LeaseRecord> {
        self.lock().records.get(&sha).cloned()
    }

    /// Remembers that blob `blob` holds `record`.
    pub(super) fn wrote(&self, blob: ObjectId, record: &LeaseRecord) {
        let mut inner = self.lock();
        if inner.records.len() >= CAPACITY {
            inner.records.clear();
        }
        inner.records.insert(blob, record.clone());
    }

    /// Remembers that local ref `name` now holds `blob` (`None`: this store deleted it).
    pub(super) fn set(&self, name: &str, blob: Option<ObjectId>) {
        let mut inner = self.lock();
        match blob {
            Some(blob) => {
                if inner.set.len() >= CAPACITY {
                    inner.set.clear();
                }
                inner.set.insert(name.to_owned(), blob);
            }
            None => {
                inner.set.remove(name);
            }
        }
    }

    /// The blob this store last set on local ref `name` and its record: what the ref holds
    /// unless another writer moved it since (a compare-and-swap against it finds out).
    pub(super) fn last_set(&self, name: &str) -> Option<(ObjectId, LeaseRecord)> {
        let inner = self.lock();
        let blob = *inner.set.get(name)?;
        inner.records.get(&blob).map(|record| (blob, record.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(holder: &str) -> LeaseRecord {
        LeaseRecord {
            op: "op".into(),
            holder: holder.into(),
            token: "t".into(),
            acquired_at: "2026-01-01T00:00:00Z".into(),
            expires_at: "2026-01-01T00:05:00Z".into(),
        }
    }

    fn id(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    #[test]
    fn a_ref_set_is_known_only_with_its_record_and_until_deleted() {
        let memo = Memo::default();
        assert_eq!(memo.last_set("refs/chant/lease/a"), None);
        memo.set("refs/chant/lease/a", Some(id(1)));
        assert_eq!(memo.last_set("refs/chant/lease/a"), None, "no record remembered for the blob");
        memo.wrote(id(1), &record("h"));
        assert_eq!(memo.last_set("refs/chant/lease/a"), Some((id(1), record("h"))));
        assert_eq!(memo.record(id(1)), Some(record("h")));
        memo.set("refs/chant/lease/a", None);
        assert_eq!(memo.last_set("refs/chant/lease/a"), None);
        assert_eq!(memo.record(id(1)), Some(record("h")), "the blob still holds its record");
    }

    #[test]
    fn a_full_memo_starts_over() {
        let memo = Memo::default();
        for n in 0..=CAPACITY {
            let blob = ObjectId::from_bytes_or_panic(&{
                let mut b = [0u8; 20];
                b[..8].copy_from_slice(&(n as u64).to_be_bytes());
                b
            });
            memo.wrote(blob, &record("h"));
            memo.set(&format!("refs/chant/lease/{n}"), Some(blob));
        }
        let inner = memo.lock();
        assert!(inner.records.len() <= CAPACITY && inner.set.len() <= CAPACITY);
        assert_eq!(inner.records.len(), 1, "cleared, then the newest");
    }
}
