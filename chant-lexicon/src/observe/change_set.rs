//! The change set: one entry per entity of a component, saying what converging it would take.
//!
//! [`build_change_set`] is a pure function of three inputs: the declared entities, a lexicon's
//! [`Observation`], and the component's [`LastApply`] (whether a successful apply is recorded, and
//! the names it owned). Each entity becomes exactly one entry (DESIGN.md section 5):
//!
//! | entry | when |
//! |---|---|
//! | `unobserved` | the lexicon could not look (declared or not) — never a `create` or a `delete` |
//! | `create` | declared, observed absent (in neither map) |
//! | `update` | declared, present, a declared property differs |
//! | `noop` | declared, present, every declared property equal |
//! | `runtime` | undeclared, present, belongs to a declared entity |
//! | `delete` | undeclared, present, ownership `owned` |
//! | `adopt` | undeclared, present, ownership `foreign` or `unknown` |
//!
//! A name the lexicon put in both maps is read as unobserved, the cautious reading. An undeclared
//! name the lexicon could not read is an `unobserved` entry too, so a hole is never silently
//! dropped. Entries are sorted by name.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::observation::{DeclaredEntity, Observation, Ownership, PresentResource, Unobserved};
use super::properties::{Properties, PropertyName};
use crate::model::UnobservedReason;

/// What converging one entity would take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeAction {
    /// Declared, observed absent.
    Create,
    /// Declared, present, differs.
    Update,
    /// Undeclared, present, owned.
    Delete,
    /// Undeclared, present, not owned.
    Adopt,
    /// Undeclared, present, belongs to a declared entity.
    Runtime,
    /// Declared, present, as declared.
    Noop,
    /// Not read: no conclusion.
    Unobserved,
}

impl ChangeAction {
    /// Every action, in declaration order.
    pub const ALL: [ChangeAction; 7] = [
        ChangeAction::Create,
        ChangeAction::Update,
        ChangeAction::Delete,
        ChangeAction::Adopt,
        ChangeAction::Runtime,
        ChangeAction::Noop,
        ChangeAction::Unobserved,
    ];

    /// Returns the action as written in records (`create`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeAction::Create => "create",
            ChangeAction::Update => "update",
            ChangeAction::Delete => "delete",
            ChangeAction::Adopt => "adopt",
            ChangeAction::Runtime => "runtime",
            ChangeAction::Noop => "noop",
            ChangeAction::Unobserved => "unobserved",
        }
    }
}

/// What an entry's verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Evidence {
    /// The entity is declared.
    pub declared: bool,
    /// The entity is among the names the last recorded apply owned.
    pub in_last_apply: bool,
    /// The entity was observed present.
    pub live: bool,
    /// The lexicon looked (present or absent); false for unobserved entries.
    pub observed: bool,
}

/// One declared property whose observed value differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Delta {
    /// The property's key.
    pub property: String,
    /// The declared value.
    pub declared: String,
    /// The observed value; `None` when the live resource does not carry the property.
    pub live: Option<String>,
}

/// One entity's entry in a change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeEntry {
    /// The entity's name.
    pub name: String,
    /// Its kind, from the declaration or the observation.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PropertyName>,
    /// The verdict.
    pub action: ChangeAction,
    /// What the verdict rests on.
    pub evidence: Evidence,
    /// The differing declared properties (`update` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<Delta>,
    /// The observed ownership (present entities only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ownership: Option<Ownership>,
    /// Why it was not observed (`unobserved` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unobserved_reason: Option<UnobservedReason>,
    /// What went wrong (`unobserved` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unobserved_detail: Option<String>,
    /// The address the read was issued against, when the lexicon said (shared with the
    /// observation's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queried: Option<Arc<str>>,
    /// The declared entity a `runtime` entry belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_owner: Option<String>,
}

impl ChangeEntry {
    /// The line an apply's gate plan lists for this entry of `component`: `create <c>/<name>`,
    /// `update <c>/<name> (<property>: <live> -> <declared>, ...)` (so a plan binds the values it
    /// changes from and to), `delete <c>/<name>`, `unobserved <c>/<name>`; `None` for the others
    /// (nothing to do). The gate plan and a lexicon re-checking an approved plan inside its own
    /// transaction both write lines with this, so the two compare.
    pub fn apply_line(&self, component: &str) -> Option<String> {
        let what = format!("{component}/{}", self.name);
        match self.action {
            ChangeAction::Create => Some(format!("create {what}")),
            ChangeAction::Update => {
                let props: Vec<String> = self.deltas.iter().map(delta_text).collect();
                if props.is_empty() {
                    Some(format!("update {what}"))
                } else {
                    Some(format!("update {what} ({})", props.join(", ")))
                }
            }
            ChangeAction::Delete => Some(format!("delete {what}")),
            ChangeAction::Unobserved => Some(format!("unobserved {what}")),
            _ => None,
        }
    }

    /// The entry for a person, as `lifecycle diff` and the dashboard show it: its name, its kind
    /// and what differs (`app.conf (file) [mode: 0600 -> 0644]`). With `text_diff` (a unified
    /// text diff is shown under it) the content digests are left out: the text says more.
    pub fn summary(&self, text_diff: bool) -> String {
        let kind = self.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
        let deltas: Vec<String> =
            self.deltas.iter().filter(|d| !text_diff || d.property != "content").map(delta_text).collect();
        let deltas = if deltas.is_empty() { String::new() } else { format!(" [{}]", deltas.join("; ")) };
        format!("{}{kind}{deltas}", self.name)
    }
}

/// `<property>: <live> -> <declared>` (`(none)` for a live value not read).
fn delta_text(d: &Delta) -> String {
    d.text()
}

impl Delta {
    /// The delta for a person, as the gate plan, `lifecycle diff` and the dashboard write it:
    /// `<property>: <live> -> <declared>` (`(none)` for a live value not read).
    pub fn text(&self) -> String {
        format!("{}: {} -> {}", self.property, self.live.as_deref().unwrap_or("(none)"), self.declared)
    }
}

/// The last recorded apply of one component, as the change set needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LastApply {
    /// Whether a successful apply of this binding is on the ledger.
    pub recorded: bool,
    /// The names that apply owned.
    #[serde(default)]
    pub owned: BTreeSet<String>,
}

impl LastApply {
    /// Returns "never applied".
    pub fn none() -> Self {
        LastApply::default()
    }

    /// Returns a recorded apply that owned `names`.
    pub fn recorded<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        LastApply { recorded: true, owned: names.into_iter().map(Into::into).collect() }
    }
}

/// How many entries of each action a change set holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionCounts {
    /// `create` entries.
    pub create: u64,
    /// `update` entries.
    pub update: u64,
    /// `delete` entries.
    pub delete: u64,
    /// `adopt` entries.
    pub adopt: u64,
    /// `runtime` entries.
    pub runtime: u64,
    /// `noop` entries.
    pub noop: u64,
    /// `unobserved` entries.
    pub unobserved: u64,
}

impl ActionCounts {
    /// Returns the count for one action.
    pub fn get(&self, action: ChangeAction) -> u64 {
        match action {
            ChangeAction::Create => self.create,
            ChangeAction::Update => self.update,
            ChangeAction::Delete => self.delete,
            ChangeAction::Adopt => self.adopt,
            ChangeAction::Runtime => self.runtime,
            ChangeAction::Noop => self.noop,
            ChangeAction::Unobserved => self.unobserved,
        }
    }

    /// Adds one entry of `action`.
    pub fn add(&mut self, action: ChangeAction) {
        let slot = match action {
            ChangeAction::Create => &mut self.create,
            ChangeAction::Update => &mut self.update,
            ChangeAction::Delete => &mut self.delete,
            ChangeAction::Adopt => &mut self.adopt,
            ChangeAction::Runtime => &mut self.runtime,
            ChangeAction::Noop => &mut self.noop,
            ChangeAction::Unobserved => &mut self.unobserved,
        };
        *slot += 1;
    }

    /// Returns the number of entries counted.
    pub fn total(&self) -> u64 {
        ChangeAction::ALL.iter().map(|a| self.get(*a)).sum()
    }
}

/// The change set of one component: its entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeSet {
    /// The component (lexicon binding) the entries belong to.
    pub component: String,
    /// One entry per entity, sorted by name.
    pub entries: Vec<ChangeEntry>,
}

impl ChangeSet {
    /// Counts the entries by action.
    pub fn counts(&self) -> ActionCounts {
        let mut counts = ActionCounts::default();
        for entry in &self.entries {
            counts.add(entry.action);
        }
        counts
    }

    /// Returns the entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&ChangeEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Returns the entries with the given action.
    pub fn with_action(&self, action: ChangeAction) -> impl Iterator<Item = &ChangeEntry> {
        self.entries.iter().filter(move |e| e.action == action)
    }
}

/// Builds the change set of one component from its declaration, its observation and its last
/// recorded apply. Pure: no I/O.
///
/// Duplicate declared names are read once (the first declaration wins).
///
/// One pass: the declared entities (sorted by name once, unless they already are) and the
/// observation's maps are all in name order, so the entries' names are those three sources
/// merged, and each entry is classified by advancing a cursor over each source, not by looking
/// its name up in every map.
pub fn build_change_set(
    component: &str,
    declared: &[DeclaredEntity],
    observation: &Observation,
    last_apply: &LastApply,
) -> ChangeSet {
    let mut sorted: Vec<&DeclaredEntity> = declared.iter().collect();
    if !sorted.is_sorted_by(|a, b| a.name < b.name) {
        // Stable, so of equal names the first declared stays first and survives the dedup.
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        sorted.dedup_by(|later, first| later.name == first.name);
    }
    let all = (Bound::Unbounded, Bound::Unbounded);
    let size = sorted.len().max(observation.resources.len()) + observation.unobserved.len();
    // A large change set is built in two halves of the name space at once, the upper half on a
    // thread of its own (the two halves are independent and concatenate in order). The pivot is
    // the middle name of the larger of the two big sources.
    let pivot = if size < PARALLEL_FROM {
        None
    } else if observation.resources.len() >= sorted.len() {
        observation.resources.keys().nth(observation.resources.len() / 2).map(String::as_str)
    } else {
        sorted.get(sorted.len() / 2).map(|d| d.name.as_str())
    };
    // Each half holds about half the entries; the lower one takes the upper's in the end.
    let half = size / 2 + size / 8;
    let entries = match pivot {
        None => entries_between(&sorted, observation, last_apply, all, size),
        Some(pivot) => std::thread::scope(|scope| {
            let upper = std::thread::Builder::new().spawn_scoped(scope, || {
                entries_between(&sorted, observation, last_apply, (Bound::Included(pivot), Bound::Unbounded), half)
            });
            match upper {
                Ok(upper) => {
                    let lower = (Bound::Unbounded, Bound::Excluded(pivot));
                    let mut entries = entries_between(&sorted, observation, last_apply, lower, size);
                    match upper.join() {
                        Ok(mut upper) => entries.append(&mut upper),
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                    entries
                }
                // No thread to be had: one pass over every name.
                Err(_) => entries_between(&sorted, observation, last_apply, all, size),
            }
        }),
    };
    ChangeSet { component: component.to_owned(), entries }
}

/// From how many entries (about) [`build_change_set`] builds its two halves at once.
const PARALLEL_FROM: usize = 4096;

/// The entries of the names within `bounds`, in order: the three name-ordered sources (the
/// declared entities, sorted and without repeats, and the observation's two verdict maps),
/// each cut to `bounds`, merged, the smallest head first.
fn entries_between(
    sorted: &[&DeclaredEntity],
    observation: &Observation,
    last_apply: &LastApply,
    bounds: (Bound<&str>, Bound<&str>),
    capacity: usize,
) -> Vec<ChangeEntry> {
    let first = sorted.partition_point(|d| match bounds.0 {
        Bound::Included(start) => d.name.as_str() < start,
        _ => false,
    });
    let last = sorted.partition_point(|d| match bounds.1 {
        Bound::Excluded(end) => d.name.as_str() < end,
        _ => true,
    });
    let mut declared_at = sorted[first..last.max(first)].iter().map(|d| (d.name.as_str(), *d)).peekable();
    let mut present_at = observation.resources.range::<str, _>(bounds).map(|(k, v)| (k.as_str(), v)).peekable();
    let mut unobserved_at = observation.unobserved.range::<str, _>(bounds).map(|(k, v)| (k.as_str(), v)).peekable();
    let mut queried_at = observation.queried.range::<str, _>(bounds).map(|(k, v)| (k.as_str(), v)).peekable();
    let mut owned_at = last_apply.owned.range::<str, _>(bounds).map(|k| (k.as_str(), ())).peekable();
    let is_declared = |owner: &str| sorted.binary_search_by(|d| d.name.as_str().cmp(owner)).is_ok();
    let mut entries = Vec::with_capacity(capacity);
    loop {
        let heads = [
            declared_at.peek().map(|(k, _)| *k),
            present_at.peek().map(|(k, _)| *k),
            unobserved_at.peek().map(|(k, _)| *k),
        ];
        let Some(name) = heads.into_iter().flatten().min() else { break };
        // `name` is the least of the three heads: each of them is taken only when it is `name`
        // (one comparison, none for the head `name` is), with no names before it to skip.
        entries.push(classify(
            name,
            head_at(&mut declared_at, name),
            is_declared,
            head_at(&mut present_at, name),
            head_at(&mut unobserved_at, name),
            at(&mut queried_at, name).cloned(),
            at(&mut owned_at, name).is_some(),
        ));
    }
    entries
}

/// Takes the head of a name-ordered source whose head is not before `name` when it is `name`.
fn head_at<'a, V>(source: &mut std::iter::Peekable<impl Iterator<Item = (&'a str, V)>>, name: &str) -> Option<V> {
    source.next_if(|(key, _)| std::ptr::eq(*key, name) || *key == name).map(|(_, value)| value)
}

/// Advances a name-ordered source past the names before `name` and returns the value of
/// `name`, if the source holds it. Asked in increasing name order, each source is walked once.
fn at<'a, V>(source: &mut std::iter::Peekable<impl Iterator<Item = (&'a str, V)>>, name: &str) -> Option<V> {
    while source.next_if(|(key, _)| *key < name).is_some() {}
    source.next_if(|(key, _)| *key == name).map(|(_, value)| value)
}

fn classify(
    name: &str,
    declared: Option<&DeclaredEntity>,
    is_declared: impl Fn(&str) -> bool,
    present: Option<&PresentResource>,
    unobserved: Option<&Unobserved>,
    queried: Option<Arc<str>>,
    in_last_apply: bool,
) -> ChangeEntry {
    let declared_kind = declared.and_then(|d| d.kind.clone());

    if let Some(verdict) = unobserved {
        return ChangeEntry {
            name: name.to_owned(),
            kind: declared_kind.or_else(|| verdict.kind.clone()),
            action: ChangeAction::Unobserved,
            evidence: Evidence { declared: declared.is_some(), in_last_apply, live: false, observed: false },
            deltas: Vec::new(),
            ownership: None,
            unobserved_reason: Some(verdict.reason),
            unobserved_detail: verdict.detail.clone(),
            queried: verdict.queried.clone().or(queried),
            runtime_owner: None,
        };
    }

    let mut entry = ChangeEntry {
        name: name.to_owned(),
        kind: declared_kind,
        action: ChangeAction::Create,
        evidence: Evidence { declared: declared.is_some(), in_last_apply, live: false, observed: true },
        deltas: Vec::new(),
        ownership: None,
        unobserved_reason: None,
        unobserved_detail: None,
        queried,
        runtime_owner: None,
    };

    let Some(present) = present else {
        // In neither map: observed absent. Only names that are declared or in an observation
        // map reach here, so this is a declared entity.
        return entry;
    };
    entry.evidence.live = true;
    entry.ownership = Some(present.ownership);
    if entry.kind.is_none() {
        entry.kind = present.kind.clone();
    }

    match declared {
        Some(declared) => {
            entry.deltas = deltas(declared, &present.properties);
            entry.action = if entry.deltas.is_empty() { ChangeAction::Noop } else { ChangeAction::Update };
        }
        None => {
            let runtime_owner = present.runtime_owner.as_deref().filter(|owner| *owner != name && is_declared(owner));
            entry.action = match (runtime_owner, present.ownership) {
                (Some(owner), _) => {
                    entry.runtime_owner = Some(owner.to_owned());
                    ChangeAction::Runtime
                }
                (None, Ownership::Owned) => ChangeAction::Delete,
                (None, Ownership::Foreign | Ownership::Unknown) => ChangeAction::Adopt,
            };
        }
    }
    entry
}

fn deltas(declared: &DeclaredEntity, live: &Properties) -> Vec<Delta> {
    declared
        .properties
        .iter()
        .filter_map(|(key, want)| {
            let got = live.get(key);
            (got != Some(want)).then(|| Delta { property: key.to_owned(), declared: want.clone(), live: got.cloned() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::observe::observation::{PresentResource, Unobserved};

    fn file(name: &str, content: &str) -> DeclaredEntity {
        DeclaredEntity::new(name).kind("file").property("content", content).property("mode", "0644")
    }

    fn live(ownership: Ownership, content: &str) -> PresentResource {
        PresentResource::new(ownership).kind("file").property("content", content).property("mode", "0644")
    }

    fn action(cs: &ChangeSet, name: &str) -> ChangeAction {
        cs.entry(name).map(|e| e.action).unwrap()
    }

    #[test]
    fn declared_absent_is_create_and_observed() {
        let cs = build_change_set("files", &[file("a", "x")], &Observation::new(), &LastApply::none());
        let entry = cs.entry("a").unwrap();
        assert_eq!(entry.action, ChangeAction::Create);
        assert_eq!(entry.evidence, Evidence { declared: true, in_last_apply: false, live: false, observed: true });
        assert_eq!(entry.kind.as_deref(), Some("file"));
    }

    #[test]
    fn declared_present_equal_is_noop_and_differing_is_update_with_deltas() {
        let mut obs = Observation::new();
        obs.insert_present("same", live(Ownership::Owned, "x"));
        obs.insert_present("diff", live(Ownership::Owned, "y").property("extra", "ignored"));
        let declared = [file("same", "x"), file("diff", "x")];
        let cs = build_change_set("files", &declared, &obs, &LastApply::recorded(["same", "diff"]));
        assert_eq!(action(&cs, "same"), ChangeAction::Noop);
        let diff = cs.entry("diff").unwrap();
        assert_eq!(diff.action, ChangeAction::Update);
        assert_eq!(
            diff.deltas,
            vec![Delta { property: "content".into(), declared: "x".into(), live: Some("y".into()) }],
            "only declared properties are compared"
        );
        assert!(diff.evidence.live && diff.evidence.in_last_apply);
    }

    #[test]
    fn a_declared_property_missing_live_is_a_delta() {
        let mut obs = Observation::new();
        obs.insert_present("a", PresentResource::new(Ownership::Foreign).property("type", "symlink"));
        let cs = build_change_set("files", &[file("a", "x").property("type", "file")], &obs, &LastApply::none());
        let entry = cs.entry("a").unwrap();
        assert_eq!(entry.action, ChangeAction::Update);
        assert_eq!(entry.deltas.len(), 3);
        assert_eq!(entry.deltas[0], Delta { property: "content".into(), declared: "x".into(), live: None });
    }

    #[test]
    fn unobserved_never_becomes_create_or_delete() {
        for reason in UnobservedReason::ALL {
            let mut obs = Observation::new();
            obs.insert_unobserved("declared", Unobserved::new(reason).detail("d"));
            obs.insert_unobserved("owned-undeclared", Unobserved::new(reason));
            // A contract violation (both maps) reads as unobserved too.
            obs.insert_present("both", live(Ownership::Owned, "x"));
            obs.insert_unobserved("both", Unobserved::new(reason));
            let declared = [file("declared", "x")];
            let cs = build_change_set("c", &declared, &obs, &LastApply::recorded(["owned-undeclared", "both"]));
            for entry in &cs.entries {
                assert_eq!(entry.action, ChangeAction::Unobserved, "{}", entry.name);
                assert!(!entry.evidence.observed);
                assert_eq!(entry.unobserved_reason, Some(reason));
            }
            assert_eq!(cs.entry("declared").unwrap().unobserved_detail.as_deref(), Some("d"));
            assert!(!cs.entry("owned-undeclared").unwrap().evidence.declared);
        }
    }

    #[test]
    fn undeclared_present_by_ownership() {
        let mut obs = Observation::new();
        obs.insert_present("owned", live(Ownership::Owned, "x"));
        obs.insert_present("foreign", live(Ownership::Foreign, "x"));
        obs.insert_present("unknown", live(Ownership::Unknown, "x"));
        let cs = build_change_set("c", &[], &obs, &LastApply::recorded(["owned"]));
        assert_eq!(action(&cs, "owned"), ChangeAction::Delete);
        assert_eq!(action(&cs, "foreign"), ChangeAction::Adopt);
        assert_eq!(action(&cs, "unknown"), ChangeAction::Adopt, "unknown ownership never becomes delete");
        assert_eq!(cs.entry("owned").unwrap().ownership, Some(Ownership::Owned));
    }

    #[test]
    fn a_large_change_set_built_in_two_halves_is_the_one_pass_over_every_name() {
        let mut obs = Observation::new();
        let mut declared = Vec::new();
        for i in 0..6000 {
            let name = format!("e{i:05}");
            if i % 3 != 0 {
                declared.push(file(&name, "x"));
            }
            match i % 5 {
                0 => obs.insert_present(name.as_str(), live(Ownership::Owned, "x")),
                1 => obs.insert_present(name.as_str(), live(Ownership::Foreign, "y")),
                2 => obs.insert_unobserved(name.as_str(), Unobserved::new(UnobservedReason::ReadFailed)),
                3 => obs.insert_present(name.as_str(), PresentResource::new(Ownership::Unknown).runtime_of("e00001")),
                _ => {}
            }
            if i % 7 == 0 {
                obs.insert_queried(name.as_str(), "addr");
            }
        }
        let last = LastApply::recorded(["e00000", "e03000", "e05999"]);
        let cs = build_change_set("c", &declared, &obs, &last);
        assert!(cs.entries.len() >= PARALLEL_FROM);
        let sorted: Vec<&DeclaredEntity> = declared.iter().collect();
        let one_pass = entries_between(&sorted, &obs, &last, (Bound::Unbounded, Bound::Unbounded), 0);
        assert_eq!(cs.entries, one_pass);
        assert!(cs.entries.is_sorted_by(|a, b| a.name < b.name));
    }

    #[test]
    fn runtime_needs_a_declared_owner() {
        let mut obs = Observation::new();
        obs.insert_present("t", PresentResource::new(Ownership::Owned));
        obs.insert_present("t_idx", PresentResource::new(Ownership::Owned).runtime_of("t"));
        obs.insert_present("orphan_idx", PresentResource::new(Ownership::Unknown).runtime_of("gone"));
        obs.insert_present("self", PresentResource::new(Ownership::Owned).runtime_of("self"));
        let cs = build_change_set("pg", &[DeclaredEntity::new("t")], &obs, &LastApply::recorded(["t"]));
        assert_eq!(action(&cs, "t"), ChangeAction::Noop);
        let idx = cs.entry("t_idx").unwrap();
        assert_eq!((idx.action, idx.runtime_owner.as_deref()), (ChangeAction::Runtime, Some("t")));
        assert_eq!(action(&cs, "orphan_idx"), ChangeAction::Adopt);
        assert_eq!(action(&cs, "self"), ChangeAction::Delete);
    }

    #[test]
    fn entries_are_sorted_unique_and_carry_queried() {
        let mut obs = Observation::new();
        obs.insert_queried("b", "/r/b");
        obs.insert_present("c", live(Ownership::Foreign, "x"));
        obs.insert_unobserved("a", Unobserved::new(UnobservedReason::ReadFailed));
        obs.insert_queried("a", "/r/a");
        let declared = [file("b", "x"), file("a", "x"), file("b", "other")];
        let cs = build_change_set("files", &declared, &obs, &LastApply::none());
        let names: Vec<&str> = cs.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(cs.entry("b").unwrap().queried.as_deref(), Some("/r/b"));
        assert_eq!(cs.entry("a").unwrap().queried.as_deref(), Some("/r/a"), "joined onto the unobserved row");
        assert_eq!(cs.counts(), ActionCounts { create: 1, adopt: 1, unobserved: 1, ..ActionCounts::default() });
        assert_eq!(cs.counts().total(), 3);
    }

    #[test]
    fn inline_queried_wins_over_the_map() {
        let mut obs = Observation::new();
        obs.insert_unobserved("a", Unobserved::new(UnobservedReason::ReadFailed).queried("inline"));
        obs.insert_queried("a", "map");
        let cs = build_change_set("files", &[file("a", "x")], &obs, &LastApply::none());
        assert_eq!(cs.entry("a").unwrap().queried.as_deref(), Some("inline"));
    }

    /// Every combination of declared x verdict x ownership x reason, both directions of the
    /// safety rules.
    #[test]
    fn exhaustive_matrix() {
        #[derive(Clone, Copy, Debug)]
        enum Verdict {
            Absent,
            Present(Ownership, bool),
            Unobserved(UnobservedReason),
        }
        let mut verdicts = vec![Verdict::Absent];
        for o in Ownership::ALL {
            verdicts.push(Verdict::Present(o, true));
            verdicts.push(Verdict::Present(o, false));
        }
        verdicts.extend(UnobservedReason::ALL.map(Verdict::Unobserved));
        for declared in [false, true] {
            for in_last in [false, true] {
                for verdict in &verdicts {
                    let mut obs = Observation::new();
                    match *verdict {
                        Verdict::Absent => {}
                        Verdict::Present(o, same) => obs.insert_present("e", live(o, if same { "x" } else { "y" })),
                        Verdict::Unobserved(r) => obs.insert_unobserved("e", Unobserved::new(r)),
                    }
                    let decl: Vec<DeclaredEntity> = if declared { vec![file("e", "x")] } else { vec![] };
                    let last = if in_last { LastApply::recorded(["e"]) } else { LastApply::none() };
                    let cs = build_change_set("c", &decl, &obs, &last);
                    let got = cs.entry("e").map(|e| e.action);
                    let want = match (*verdict, declared) {
                        (Verdict::Absent, true) => Some(ChangeAction::Create),
                        (Verdict::Absent, false) => None,
                        (Verdict::Unobserved(_), _) => Some(ChangeAction::Unobserved),
                        (Verdict::Present(_, true), true) => Some(ChangeAction::Noop),
                        (Verdict::Present(_, false), true) => Some(ChangeAction::Update),
                        (Verdict::Present(Ownership::Owned, _), false) => Some(ChangeAction::Delete),
                        (Verdict::Present(_, _), false) => Some(ChangeAction::Adopt),
                    };
                    assert_eq!(got, want, "declared={declared} in_last={in_last} verdict={verdict:?}");
                    if let Some(entry) = cs.entry("e") {
                        assert_eq!(entry.evidence.in_last_apply, in_last);
                        assert_eq!(entry.evidence.declared, declared);
                    }
                }
            }
        }
    }

    /// declared x observed x ownership x reason, through the whole assessment (change set,
    /// status row, symptom), both directions: unobserved never `create` and never `delete`,
    /// non-owned never `delete`; absent and declared always `create`; owned, undeclared and live
    /// always `delete` (unless it belongs to a declared entity: `runtime`); and a `delete` is drift
    /// only in owned-only mode.
    #[test]
    fn both_directions_through_the_assessment() {
        use crate::model::EnvStatus;
        use crate::observe::status::{ComponentInput, assess};
        #[derive(Clone, Copy, Debug)]
        enum Verdict {
            Absent,
            Present { ownership: Ownership, same: bool, runtime: bool },
            Unobserved(UnobservedReason),
        }
        let mut verdicts = vec![Verdict::Absent];
        for ownership in Ownership::ALL {
            for same in [false, true] {
                for runtime in [false, true] {
                    verdicts.push(Verdict::Present { ownership, same, runtime });
                }
            }
        }
        verdicts.extend(UnobservedReason::ALL.map(Verdict::Unobserved));
        for declared in [false, true] {
            for recorded in [false, true] {
                for delete_drift in [false, true] {
                    for verdict in &verdicts {
                        let mut obs = Observation::new();
                        obs.insert_present("owner", live(Ownership::Owned, "x"));
                        match *verdict {
                            Verdict::Absent => {}
                            Verdict::Present { ownership, same, runtime } => {
                                let mut r = live(ownership, if same { "x" } else { "y" });
                                if runtime {
                                    r = r.runtime_of("owner");
                                }
                                obs.insert_present("e", r);
                            }
                            Verdict::Unobserved(reason) => obs.insert_unobserved("e", Unobserved::new(reason)),
                        }
                        let mut decl = vec![file("owner", "x")];
                        if declared {
                            decl.push(file("e", "x"));
                        }
                        let last = if recorded { LastApply::recorded(["owner", "e"]) } else { LastApply::none() };
                        let input = ComponentInput {
                            component: "c".into(),
                            declared: decl,
                            observation: obs,
                            last_apply: last,
                            delete_counts_as_drift: delete_drift,
                        };
                        let a = assess("env", &[input]);
                        let got = a.change_sets[0].entry("e").map(|e| e.action);
                        let ctx =
                            format!("declared={declared} recorded={recorded} delete_drift={delete_drift} {verdict:?}");
                        match *verdict {
                            Verdict::Unobserved(reason) => {
                                assert_eq!(got, Some(ChangeAction::Unobserved), "{ctx}");
                                assert_eq!(a.symptom.status, EnvStatus::Unknown, "{ctx}");
                                assert_eq!(a.symptom.unobserved_reasons, [reason], "{ctx}");
                            }
                            Verdict::Absent if declared => assert_eq!(got, Some(ChangeAction::Create), "{ctx}"),
                            Verdict::Absent => assert_eq!(got, None, "{ctx}"),
                            Verdict::Present { ownership, runtime, .. } if !declared => {
                                let want = match (runtime, ownership) {
                                    (true, _) => ChangeAction::Runtime,
                                    (false, Ownership::Owned) => ChangeAction::Delete,
                                    (false, _) => ChangeAction::Adopt,
                                };
                                assert_eq!(got, Some(want), "{ctx}");
                                let drift = want == ChangeAction::Delete && delete_drift && recorded;
                                assert_eq!(a.symptom.status == EnvStatus::Drifted, drift, "{ctx}");
                            }
                            Verdict::Present { same, .. } => {
                                let want = if same { ChangeAction::Noop } else { ChangeAction::Update };
                                assert_eq!(got, Some(want), "{ctx}");
                            }
                        }
                        if let Some(entry) = a.change_sets[0].entry("e") {
                            let owned = entry.ownership == Some(Ownership::Owned);
                            assert!(entry.action != ChangeAction::Delete || owned, "non-owned never delete: {ctx}");
                            assert!(
                                entry.action != ChangeAction::Create || entry.evidence.observed,
                                "unobserved never create: {ctx}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn json_shape() {
        let mut obs = Observation::new();
        obs.insert_present("a", live(Ownership::Owned, "y"));
        let cs = build_change_set("files", &[file("a", "x")], &obs, &LastApply::recorded(["a"]));
        let json = serde_json::to_string(&cs).unwrap();
        assert_eq!(
            json,
            r#"{"component":"files","entries":[{"name":"a","type":"file","action":"update","evidence":{"declared":true,"inLastApply":true,"live":true,"observed":true},"deltas":[{"property":"content","declared":"x","live":"y"}],"ownership":"owned"}]}"#
        );
        assert_eq!(serde_json::from_str::<ChangeSet>(&json).unwrap(), cs);
        for a in ChangeAction::ALL {
            assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{}\"", a.as_str()));
        }
    }

    /// The change set as the definition in the module header reads, name by name through maps:
    /// what the one-pass builder must equal.
    fn by_lookup(declared: &[DeclaredEntity], obs: &Observation, last: &LastApply) -> Vec<ChangeEntry> {
        let mut by_name: BTreeMap<&str, &DeclaredEntity> = BTreeMap::new();
        for d in declared {
            by_name.entry(d.name.as_str()).or_insert(d);
        }
        let names: BTreeSet<&str> = by_name
            .keys()
            .copied()
            .chain(obs.resources.keys().map(String::as_str))
            .chain(obs.unobserved.keys().map(String::as_str))
            .collect();
        names
            .into_iter()
            .map(|name| {
                classify(
                    name,
                    by_name.get(name).copied(),
                    |owner| by_name.contains_key(owner),
                    obs.resources.get(name),
                    obs.unobserved.get(name),
                    obs.queried.get(name).cloned(),
                    last.owned.contains(name),
                )
            })
            .collect()
    }

    #[test]
    fn one_pass_equals_lookup_by_name_over_overlapping_sources() {
        // Names drawn from a small pool so that every source overlaps every other; declared out
        // of order and twice (the first declaration, with its kind, must win).
        let pool: Vec<String> = (0..40).map(|i| format!("e{:02}", (i * 17) % 40)).collect();
        let mut declared = Vec::new();
        let mut obs = Observation::new();
        let mut owned = Vec::new();
        for (i, name) in pool.iter().enumerate() {
            if i % 3 != 0 {
                declared.push(file(name, if i % 2 == 0 { "x" } else { "y" }).kind(format!("first{i}")));
            }
            if i % 5 == 0 {
                declared.push(file(name, "z").kind("second"));
            }
            match i % 4 {
                0 => obs.insert_present(name.clone(), live(Ownership::Owned, if i % 8 == 0 { "x" } else { "y" })),
                1 => obs.insert_present(name.clone(), live(Ownership::Foreign, "y").runtime_of(&pool[(i + 1) % 40])),
                2 => obs.insert_unobserved(name.clone(), Unobserved::new(UnobservedReason::ReadFailed)),
                _ => {}
            }
            if i % 7 == 0 {
                // In both maps: read as unobserved.
                obs.insert_present(name.clone(), live(Ownership::Unknown, "x"));
                obs.insert_unobserved(name.clone(), Unobserved::new(UnobservedReason::Filtered).queried("inline"));
            }
            if i % 2 == 1 {
                obs.insert_queried(name.clone(), format!("addr{i}"));
            }
            if i % 3 == 1 {
                owned.push(name.clone());
            }
        }
        obs.insert_queried("zz-only-queried", "addr");
        obs.insert_present("undeclared-runtime", live(Ownership::Owned, "x").runtime_of("e01"));
        let last = LastApply::recorded(owned);
        assert!(!declared.is_sorted_by(|a, b| a.name < b.name));
        let cs = build_change_set("files", &declared, &obs, &last);
        assert_eq!(cs.entries, by_lookup(&declared, &obs, &last));
        for action in [ChangeAction::Create, ChangeAction::Update, ChangeAction::Noop, ChangeAction::Unobserved] {
            assert!(cs.with_action(action).next().is_some(), "the case exercises {action:?}");
        }
        assert!(cs.with_action(ChangeAction::Runtime).next().is_some());
        assert!(cs.entry("zz-only-queried").is_none(), "a name only queried is no entry");

        let mut sorted = declared.clone();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        sorted.dedup_by(|later, first| later.name == first.name);
        assert_eq!(build_change_set("files", &sorted, &obs, &last).entries, cs.entries, "sorted input, same set");
    }
}
