//! Listing the keys present on the branch, for readers that do not know them in advance
//! (`operator status`, `approve` searching every member for a gate). Both layouts count: shard
//! directories and the original's single files; the original's shared converge file lists the
//! ops its records name.

use std::collections::BTreeSet;

use crate::git::{EntryKind, ObjectId, Repo, TreeEntry};

use super::key::{APPLY_DIR, HAND_RUNS_DIR, ShardKey, is_member_segment, is_name};
use super::{Error, shard};

/// Every key with records in root tree `root`, in key order.
pub(super) fn all(repo: &Repo, root: Option<ObjectId>) -> Result<Vec<ShardKey>, Error> {
    let mut keys = BTreeSet::new();
    if let Some(root) = root {
        walk(repo, root, None, &mut keys)?;
    }
    Ok(keys.into_iter().collect())
}

fn walk(repo: &Repo, tree: ObjectId, member: Option<&str>, keys: &mut BTreeSet<ShardKey>) -> Result<(), Error> {
    for entry in repo.tree_entries(tree)? {
        match (entry.name.as_str(), entry.kind) {
            ("_members", EntryKind::Tree) => {
                for child in subtrees(repo, &entry)? {
                    if is_member_segment(&child.name) {
                        let nested = member.map_or_else(|| child.name.clone(), |m| format!("{m}/{}", child.name));
                        walk(repo, child.id, Some(&nested), keys)?;
                    }
                }
            }
            ("_gates", EntryKind::Tree) => {
                for gate in repo.tree_entries(entry.id)? {
                    let op = match gate.kind {
                        EntryKind::Tree => Some(gate.name.as_str()),
                        EntryKind::Blob => gate.name.strip_suffix(".jsonl"),
                        EntryKind::Other => None,
                    };
                    if let Some(key) = op.and_then(|op| ShardKey::gate(member, op).ok()) {
                        keys.insert(key);
                    }
                }
            }
            (HAND_RUNS_DIR, EntryKind::Tree) => {
                for op in subtrees(repo, &entry)? {
                    if has_subtree(repo, &op, "runs")? {
                        keys.extend(ShardKey::run(member, None, &op.name).ok());
                    }
                }
            }
            (env, EntryKind::Tree) if is_name(env) => env_keys(repo, &entry, member, keys)?,
            _ => {}
        }
    }
    Ok(())
}

fn env_keys(repo: &Repo, env: &TreeEntry, member: Option<&str>, keys: &mut BTreeSet<ShardKey>) -> Result<(), Error> {
    let name = env.name.as_str();
    for entry in repo.tree_entries(env.id)? {
        match entry.kind {
            EntryKind::Tree if entry.name == APPLY_DIR => {
                for component in subtrees(repo, &entry)? {
                    keys.extend(ShardKey::apply(member, name, &component.name).ok());
                }
            }
            EntryKind::Tree if is_name(&entry.name) => {
                if has_subtree(repo, &entry, "converge")? {
                    keys.extend(ShardKey::converge(member, name, &entry.name).ok());
                }
                if has_subtree(repo, &entry, "runs")? {
                    keys.extend(ShardKey::run(member, Some(name), &entry.name).ok());
                }
            }
            EntryKind::Blob if entry.name == "converge.jsonl" => {
                let content = repo.read_blob(entry.id)?;
                for line in shard::content_lines(&content) {
                    let named = serde_json::from_str::<NamesOp>(&line).ok();
                    if let Some(key) = named.and_then(|n| ShardKey::converge(member, name, &n.op).ok()) {
                        keys.insert(key);
                    }
                }
            }
            EntryKind::Blob => {
                let op = entry.name.strip_prefix("runs__").and_then(|rest| rest.strip_suffix(".jsonl"));
                if let Some(key) = op.and_then(|op| ShardKey::run(member, Some(name), op).ok()) {
                    keys.insert(key);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The one field of a line of the original's shared converge file that says whose it is.
#[derive(serde::Deserialize)]
struct NamesOp {
    op: String,
}

fn subtrees(repo: &Repo, entry: &TreeEntry) -> Result<Vec<TreeEntry>, Error> {
    Ok(repo.tree_entries(entry.id)?.into_iter().filter(|e| e.kind == EntryKind::Tree).collect())
}

fn has_subtree(repo: &Repo, entry: &TreeEntry, name: &str) -> Result<bool, Error> {
    Ok(repo.tree_entries(entry.id)?.iter().any(|e| e.kind == EntryKind::Tree && e.name == name))
}
