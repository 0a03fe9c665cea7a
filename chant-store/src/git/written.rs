//! The objects a thread's handle wrote, kept so that they are never read back from disk.
//!
//! A ledger append writes the commit, the trees along its shard's path and the shard blob; the
//! next append (of any op) starts from that commit and its root tree, and the next round's due
//! check of an op walks the trees and reads the shard its last append wrote. A loose object read
//! is a file opened, read and inflated, and gix's object cache only holds what was read. Objects
//! are named by their content, so an object kept here is exactly what the object database holds
//! under its id, whoever reads it. The newest are kept up to a byte budget; the oldest go first.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use super::ObjectId;

/// How many bytes of written objects one handle keeps.
const BUDGET: usize = 4 << 20;

/// The kind of a kept object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A blob.
    Blob,
    /// A tree.
    Tree,
    /// A commit.
    Commit,
}

impl Kind {
    /// The kind's name in git (`blob`, `tree`, `commit`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Blob => "blob",
            Kind::Tree => "tree",
            Kind::Commit => "commit",
        }
    }
}

/// Objects written through one handle, newest kept, within [`BUDGET`] bytes.
#[derive(Debug, Default)]
pub(super) struct Written {
    objects: HashMap<ObjectId, (Kind, Rc<[u8]>)>,
    order: VecDeque<ObjectId>,
    bytes: usize,
}

impl Written {
    /// The object `id` of `kind`, if this handle wrote it (and still keeps it).
    pub(super) fn get(&self, id: ObjectId, kind: Kind) -> Option<Rc<[u8]>> {
        self.objects.get(&id).filter(|(k, _)| *k == kind).map(|(_, data)| Rc::clone(data))
    }

    /// Keeps `data`, the object `id` of `kind` just written; an object larger than the whole
    /// budget is not kept.
    pub(super) fn put(&mut self, id: ObjectId, kind: Kind, data: &[u8]) {
        if data.len() > BUDGET || self.objects.contains_key(&id) {
            return;
        }
        while self.bytes + data.len() > BUDGET {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some((_, gone)) = self.objects.remove(&oldest) {
                self.bytes -= gone.len();
            }
        }
        self.bytes += data.len();
        self.objects.insert(id, (kind, Rc::from(data)));
        self.order.push_back(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> ObjectId {
        let mut bytes = [0u8; 20];
        bytes[..4].copy_from_slice(&n.to_be_bytes());
        ObjectId::from_bytes_or_panic(&bytes)
    }

    #[test]
    fn objects_are_kept_by_id_and_kind_newest_first_within_the_budget() {
        let mut written = Written::default();
        written.put(id(1), Kind::Tree, b"tree");
        assert_eq!(written.get(id(1), Kind::Tree).as_deref(), Some(&b"tree"[..]));
        assert_eq!(written.get(id(1), Kind::Blob), None, "asked as another kind");
        assert_eq!(written.get(id(2), Kind::Tree), None);

        let big = vec![7u8; BUDGET / 2];
        written.put(id(2), Kind::Blob, &big);
        assert!(written.get(id(1), Kind::Tree).is_some() && written.get(id(2), Kind::Blob).is_some());
        written.put(id(3), Kind::Blob, &big);
        assert!(written.get(id(1), Kind::Tree).is_none(), "the oldest went first");
        assert!(written.get(id(2), Kind::Blob).is_some() && written.get(id(3), Kind::Blob).is_some(), "just enough");
        written.put(id(4), Kind::Blob, b"x");
        assert!(written.get(id(2), Kind::Blob).is_none(), "the next oldest went");
        assert!(written.get(id(3), Kind::Blob).is_some() && written.get(id(4), Kind::Blob).is_some());
        assert!(written.bytes <= BUDGET);

        written.put(id(5), Kind::Blob, &vec![0u8; BUDGET + 1]);
        assert!(written.get(id(5), Kind::Blob).is_none(), "larger than the budget");
        assert!(written.get(id(3), Kind::Blob).is_some(), "and nothing evicted for it");
    }
}
