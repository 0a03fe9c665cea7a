//! How two first-parent histories relate: their newest common commit and the commits each side
//! has beyond it. The walk alternates between both sides, so its cost is the distance to the
//! common commit, not the length of history.

use std::collections::HashMap;

use super::{ObjectId, Repo, Result};

/// Where two commits' first-parent chains meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The newest commit both chains contain; `None` when the histories are unrelated.
    pub base: Option<ObjectId>,
    /// Commits on our side after `base`, oldest first.
    pub ours: Vec<ObjectId>,
    /// Commits on their side after `base`, oldest first.
    pub theirs: Vec<ObjectId>,
}

impl Repo {
    /// Walks the first-parent chains of `ours` and `theirs` back to their newest common commit.
    pub fn divergence(&self, ours: ObjectId, theirs: ObjectId) -> Result<Divergence> {
        if ours == theirs {
            return Ok(Divergence { base: Some(ours), ours: Vec::new(), theirs: Vec::new() });
        }
        let mut sides = [Side::new(ours), Side::new(theirs)];
        let mut turn = 0;
        let base = loop {
            if sides.iter().all(|side| side.next.is_none()) {
                break None;
            }
            let (this, other) = if turn == 0 {
                let [a, b] = &mut sides;
                (a, b)
            } else {
                let [a, b] = &mut sides;
                (b, a)
            };
            turn = 1 - turn;
            let Some(id) = this.next else { continue };
            if let Some(&index) = other.seen.get(&id) {
                other.walked.truncate(index);
                break Some(id);
            }
            this.seen.insert(id, this.walked.len());
            this.walked.push(id);
            this.next = self.first_parent(id)?;
        };
        let [ours, theirs] = sides;
        Ok(Divergence { base, ours: ours.into_oldest_first(), theirs: theirs.into_oldest_first() })
    }
}

struct Side {
    next: Option<ObjectId>,
    walked: Vec<ObjectId>,
    seen: HashMap<ObjectId, usize>,
}

impl Side {
    fn new(start: ObjectId) -> Self {
        Self { next: Some(start), walked: Vec::new(), seen: HashMap::new() }
    }

    fn into_oldest_first(mut self) -> Vec<ObjectId> {
        self.walked.reverse();
        self.walked
    }
}
