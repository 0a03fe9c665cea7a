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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::git::SharedRepo;

    /// A chain of `n` commits on top of `parent`, oldest first.
    fn chain(repo: &Repo, parent: Option<ObjectId>, n: usize, tag: &str) -> Vec<ObjectId> {
        let tree = repo.edit_tree(None, &[]).unwrap();
        let mut out = Vec::new();
        let mut tip = parent;
        for i in 0..n {
            let parents: Vec<ObjectId> = tip.into_iter().collect();
            let id = repo.write_commit(tree, &parents, &format!("{tag} {i}\n"), jiff::Timestamp::UNIX_EPOCH).unwrap();
            out.push(id);
            tip = Some(id);
        }
        out
    }

    #[test]
    fn divergence_of_first_parent_chains() {
        let tmp = tempfile::tempdir().unwrap();
        gix::init_bare(tmp.path()).unwrap();
        let repo = SharedRepo::discover(tmp.path(), Duration::ZERO).unwrap().local();
        let base = chain(&repo, None, 3, "base");
        let ours = chain(&repo, Some(base[2]), 2, "ours");
        let theirs = chain(&repo, Some(base[2]), 3, "theirs");

        let same = repo.divergence(base[2], base[2]).unwrap();
        assert_eq!(same, Divergence { base: Some(base[2]), ours: vec![], theirs: vec![] });

        let ahead = repo.divergence(ours[1], base[2]).unwrap();
        assert_eq!(ahead, Divergence { base: Some(base[2]), ours: ours.clone(), theirs: vec![] });

        let behind = repo.divergence(base[1], theirs[2]).unwrap();
        assert_eq!(
            behind,
            Divergence { base: Some(base[1]), ours: vec![], theirs: vec![base[2], theirs[0], theirs[1], theirs[2]] }
        );

        let diverged = repo.divergence(ours[1], theirs[2]).unwrap();
        assert_eq!(diverged, Divergence { base: Some(base[2]), ours: ours.clone(), theirs: theirs.clone() });

        let unrelated = chain(&repo, None, 2, "other");
        let none = repo.divergence(unrelated[1], base[2]).unwrap();
        assert_eq!(none, Divergence { base: None, ours: unrelated, theirs: base });
    }
}
