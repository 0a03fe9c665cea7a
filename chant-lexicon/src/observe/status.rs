//! Status rows and the ConvergeSymptom: the verdict on each component of an env, and on the env.
//!
//! A **component** is one lexicon binding of an env (`files`). Its status row (DESIGN.md section
//! 5) is derived from its change set and whether an apply is recorded:
//!
//! 1. `unknown` if any entry is `unobserved`;
//! 2. else `drifted` if recorded and any `create` or `update` exists (a `delete` counts only when
//!    the env's apply runs with `delete_mode = "owned-only"`);
//! 3. else `stale` if recorded and not *live* (no declared entity observed present);
//! 4. else `unrecorded` if never applied;
//! 5. else `reconciled`.
//!
//! The [`ConvergeSymptom`] takes the worst row (`unknown > drifted > stale > unrecorded >
//! reconciled`; no rows is `reconciled`), counts every change-set entry by action across all
//! components (`totalCount` counts them all, `noop` included), and lists the distinct reasons of
//! the unobserved entries in [`UnobservedReason::ALL`] order. Everything here is pure.

use std::collections::BTreeSet;

use super::change_set::{ActionCounts, ChangeAction, ChangeEntry, ChangeSet, LastApply, build_change_set};
use super::observation::{DeclaredEntity, Observation, Unobserved};
use crate::model::{ComponentRow, ConvergeSymptom, EnvStatus, UnobservedReason};

/// How many names a row's detail lists before saying "and N more".
const NAMES_IN_DETAIL: usize = 3;

/// Everything one component contributes to an env's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentInput {
    /// The component (lexicon binding) name.
    pub component: String,
    /// The entities it declares.
    pub declared: Vec<DeclaredEntity>,
    /// What its lexicon observed.
    pub observation: Observation,
    /// Its last recorded apply.
    pub last_apply: LastApply,
    /// Whether the env's apply runs with `delete_mode = "owned-only"`, which makes a `delete`
    /// entry drift.
    pub delete_counts_as_drift: bool,
}

/// An env's verdict: the symptom rules are evaluated against, and the change sets behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvAssessment {
    /// The symptom.
    pub symptom: ConvergeSymptom,
    /// One change set per component, in the order of `symptom.components`.
    pub change_sets: Vec<ChangeSet>,
}

/// Derives the status row of one component from its change set.
pub fn status_row(env: &str, change_set: &ChangeSet, recorded: bool, delete_counts_as_drift: bool) -> ComponentRow {
    let counts = change_set.counts();
    let live = change_set.entries.iter().any(|e| e.evidence.declared && e.evidence.live);
    let declared = change_set.entries.iter().filter(|e| e.evidence.declared).count();
    let drift = counts.create + counts.update + if delete_counts_as_drift { counts.delete } else { 0 };

    let (reconciliation, detail) = if counts.unobserved > 0 {
        (EnvStatus::Unknown, unknown_detail(change_set, counts.unobserved))
    } else if recorded && drift > 0 {
        let mut parts = Vec::new();
        for action in [ChangeAction::Create, ChangeAction::Update, ChangeAction::Delete] {
            if action == ChangeAction::Delete && !delete_counts_as_drift {
                continue;
            }
            if counts.get(action) > 0 {
                parts.push(format!("{} {} ({})", counts.get(action), action.as_str(), names(change_set, action)));
            }
        }
        (EnvStatus::Drifted, format!("drifted: {}{}", parts.join(", "), extras(&counts, delete_counts_as_drift)))
    } else if recorded && !live {
        (EnvStatus::Stale, format!("recorded, but none of the {declared} declared entities is present"))
    } else if !recorded {
        let present = counts.update + counts.noop;
        (EnvStatus::Unrecorded, format!("never applied: {declared} declared, {present} present"))
    } else {
        (EnvStatus::Reconciled, format!("{declared} declared, in sync{}", extras(&counts, delete_counts_as_drift)))
    };

    ComponentRow {
        component: change_set.component.clone(),
        env: env.to_owned(),
        recorded,
        live,
        reconciliation,
        detail,
    }
}

/// Derives the env's symptom from its components' rows and change sets.
pub fn derive_symptom(env: &str, rows: Vec<ComponentRow>, change_sets: &[ChangeSet]) -> ConvergeSymptom {
    let mut counts = ActionCounts::default();
    let mut reasons = BTreeSet::new();
    for entry in change_sets.iter().flat_map(|cs| cs.entries.iter()) {
        counts.add(entry.action);
        if entry.action == ChangeAction::Unobserved
            && let Some(reason) = entry.unobserved_reason
        {
            reasons.insert(reason);
        }
    }
    ConvergeSymptom {
        env: env.to_owned(),
        status: EnvStatus::worst(rows.iter().map(|r| r.reconciliation)),
        components: rows,
        create_count: counts.create,
        update_count: counts.update,
        delete_count: counts.delete,
        adopt_count: counts.adopt,
        runtime_count: counts.runtime,
        unobserved_count: counts.unobserved,
        unobserved_reasons: UnobservedReason::ALL.into_iter().filter(|r| reasons.contains(r)).collect(),
        total_count: counts.total(),
        ambient_count: 0,
        dependency_unobserved_count: 0,
        artifact_changed_count: 0,
        baselined_count: 0,
    }
}

/// Assesses one component: builds its change set and derives its status row.
pub fn assess_component(env: &str, input: &ComponentInput) -> (ChangeSet, ComponentRow) {
    let change_set = build_change_set(&input.component, &input.declared, &input.observation, &input.last_apply);
    let row = status_row(env, &change_set, input.last_apply.recorded, input.delete_counts_as_drift);
    (change_set, row)
}

/// Assesses an env: one change set and status row per component (sorted by component name), and
/// the symptom derived from them.
pub fn assess(env: &str, inputs: &[ComponentInput]) -> EnvAssessment {
    let mut assessed: Vec<(ChangeSet, ComponentRow)> = inputs.iter().map(|i| assess_component(env, i)).collect();
    assessed.sort_by(|a, b| a.1.component.cmp(&b.1.component));
    let (change_sets, rows): (Vec<ChangeSet>, Vec<ComponentRow>) = assessed.into_iter().unzip();
    EnvAssessment { symptom: derive_symptom(env, rows, &change_sets), change_sets }
}

/// Renders an unobserved entry in words, as [`Unobserved::describe`] does.
pub fn describe_unobserved(entry: &ChangeEntry) -> String {
    unobserved_of(entry).describe(&entry.name)
}

fn unobserved_of(entry: &ChangeEntry) -> Unobserved {
    Unobserved {
        kind: entry.kind.clone(),
        reason: entry.unobserved_reason.unwrap_or(UnobservedReason::ReadFailed),
        detail: entry.unobserved_detail.clone(),
        queried: entry.queried.clone(),
    }
}

/// Why an `unobserved` entry was not read, as [`unobserved_by_cause`] groups it (the reason in
/// words, its detail and the address asked); `None` for any other entry.
pub fn unobserved_cause(entry: &ChangeEntry) -> Option<String> {
    (entry.action == ChangeAction::Unobserved).then(|| unobserved_of(entry).cause())
}

/// The unobserved entries of some change sets grouped by their cause ([`Unobserved::cause`]), in
/// the order each cause is first met, each with the names (and kinds) it kept from being read:
/// one cause (an unset DSN variable, a server down) is then reported once, not once per entity.
pub fn unobserved_by_cause<'a>(entries: impl IntoIterator<Item = &'a ChangeEntry>) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for entry in entries.into_iter().filter(|e| e.action == ChangeAction::Unobserved) {
        let cause = unobserved_of(entry).cause();
        let name = match &entry.kind {
            Some(kind) => format!("{} ({kind})", entry.name),
            None => entry.name.clone(),
        };
        match out.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, names)) => names.push(name),
            None => out.push((cause, vec![name])),
        }
    }
    out
}

/// `a, b, c and 7 more`: the first few names of a list, then how many more.
pub fn some_names(names: &[String]) -> String {
    let mut shown = names.iter().take(NAMES_IN_DETAIL).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > NAMES_IN_DETAIL {
        shown.push_str(&format!(" and {} more", names.len() - NAMES_IN_DETAIL));
    }
    shown
}

fn unknown_detail(change_set: &ChangeSet, count: u64) -> String {
    let causes: Vec<String> = unobserved_by_cause(&change_set.entries)
        .into_iter()
        .map(|(cause, names)| format!("{} — {cause}", some_names(&names)))
        .collect();
    format!("{count} unobserved: {}", causes.join("; "))
}

fn names(change_set: &ChangeSet, action: ChangeAction) -> String {
    let all: Vec<&str> = change_set.with_action(action).map(|e| e.name.as_str()).collect();
    let mut shown = all.iter().take(NAMES_IN_DETAIL).copied().collect::<Vec<_>>().join(", ");
    if all.len() > NAMES_IN_DETAIL {
        shown.push_str(&format!(" and {} more", all.len() - NAMES_IN_DETAIL));
    }
    shown
}

fn extras(counts: &ActionCounts, delete_counts_as_drift: bool) -> String {
    let mut out = String::new();
    if counts.delete > 0 && !delete_counts_as_drift {
        out.push_str(&format!("; {} delete reported, not acted on", counts.delete));
    }
    if counts.adopt > 0 {
        out.push_str(&format!("; {} unowned (adopt)", counts.adopt));
    }
    if counts.runtime > 0 {
        out.push_str(&format!("; {} runtime", counts.runtime));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::change_set::{Evidence, build_change_set};
    use crate::observe::observation::{Ownership, PresentResource};

    fn entry(name: &str, action: ChangeAction, declared: bool, live: bool) -> ChangeEntry {
        ChangeEntry {
            name: name.into(),
            kind: None,
            action,
            evidence: Evidence { declared, in_last_apply: false, live, observed: action != ChangeAction::Unobserved },
            deltas: vec![],
            ownership: None,
            unobserved_reason: None,
            unobserved_detail: None,
            queried: None,
            runtime_owner: None,
        }
    }

    fn unobserved(name: &str, reason: UnobservedReason) -> ChangeEntry {
        ChangeEntry { unobserved_reason: Some(reason), ..entry(name, ChangeAction::Unobserved, true, false) }
    }

    fn cs(component: &str, entries: Vec<ChangeEntry>) -> ChangeSet {
        ChangeSet { component: component.into(), entries }
    }

    fn status(entries: Vec<ChangeEntry>, recorded: bool, delete_drift: bool) -> EnvStatus {
        status_row("staging", &cs("files", entries), recorded, delete_drift).reconciliation
    }

    use ChangeAction::*;

    #[test]
    fn unknown_wins_over_everything() {
        for recorded in [false, true] {
            let entries = vec![
                entry("a", Create, true, false),
                entry("b", Update, true, true),
                unobserved("c", UnobservedReason::NoBinding),
            ];
            assert_eq!(status(entries, recorded, true), EnvStatus::Unknown);
        }
    }

    #[test]
    fn drifted_needs_a_record_and_a_create_or_update() {
        assert_eq!(status(vec![entry("a", Create, true, false)], true, false), EnvStatus::Drifted);
        assert_eq!(status(vec![entry("a", Update, true, true)], true, false), EnvStatus::Drifted);
        assert_eq!(status(vec![entry("a", Create, true, false)], false, false), EnvStatus::Unrecorded);
        assert_eq!(status(vec![entry("a", Update, true, true)], false, false), EnvStatus::Unrecorded);
    }

    #[test]
    fn delete_is_drift_only_in_owned_only_mode() {
        let entries = || vec![entry("a", Noop, true, true), entry("old", Delete, false, true)];
        assert_eq!(status(entries(), true, false), EnvStatus::Reconciled);
        assert_eq!(status(entries(), true, true), EnvStatus::Drifted);
        let row = status_row("staging", &cs("files", entries()), true, false);
        assert!(row.detail.contains("1 delete reported, not acted on"), "{}", row.detail);
    }

    #[test]
    fn stale_is_recorded_and_not_live() {
        // Only undeclared entries are live: still not live.
        let entries = vec![entry("x", Adopt, false, true)];
        assert_eq!(status(entries, true, false), EnvStatus::Stale);
        assert_eq!(status(vec![], true, false), EnvStatus::Stale);
        assert_eq!(status(vec![], false, false), EnvStatus::Unrecorded);
    }

    #[test]
    fn reconciled_and_unrecorded() {
        let entries =
            || vec![entry("a", Noop, true, true), entry("x", Adopt, false, true), entry("r", Runtime, false, true)];
        assert_eq!(status(entries(), true, false), EnvStatus::Reconciled);
        assert_eq!(status(entries(), false, false), EnvStatus::Unrecorded);
        let row = status_row("staging", &cs("files", entries()), true, false);
        assert_eq!(row.detail, "1 declared, in sync; 1 unowned (adopt); 1 runtime");
        assert!(row.live && row.recorded);
    }

    #[test]
    fn row_details() {
        let row = status_row(
            "staging",
            &cs(
                "files",
                vec![
                    entry("a", Create, true, false),
                    entry("b", Update, true, true),
                    entry("c", Update, true, true),
                    entry("d", Update, true, true),
                    entry("e", Update, true, true),
                ],
            ),
            true,
            false,
        );
        assert_eq!(row.detail, "drifted: 1 create (a), 4 update (b, c, d and 1 more)");
        let mut u = unobserved("a.conf", UnobservedReason::ReadFailed);
        u.kind = Some("file".into());
        u.unobserved_detail = Some("is a directory".into());
        u.queried = Some("/r/a.conf".into());
        let many: Vec<ChangeEntry> = std::iter::once(u)
            .chain((0..4).map(|i| unobserved(&format!("z{i}"), UnobservedReason::ReadFailed)))
            .collect();
        let row = status_row("staging", &cs("files", many), true, false);
        assert_eq!(
            row.detail,
            "5 unobserved: a.conf (file) — read failed: is a directory [queried /r/a.conf]; \
             z0, z1, z2 and 1 more — read failed",
            "one line per cause"
        );
        let row = status_row("staging", &cs("files", vec![entry("a", Create, true, false)]), false, false);
        assert_eq!(row.detail, "never applied: 1 declared, 0 present");
        let row = status_row("staging", &cs("files", vec![entry("a", Create, true, false)]), true, false);
        assert_eq!(row.reconciliation, EnvStatus::Drifted);
        let row = status_row("staging", &cs("files", vec![]), true, false);
        assert_eq!(row.detail, "recorded, but none of the 0 declared entities is present");
    }

    /// Every row status for every combination of recorded x live x the entry mix.
    #[test]
    fn exhaustive_row_rule() {
        let kinds = [Create, Update, Delete, Adopt, Runtime, Noop, Unobserved];
        for mask in 0u32..(1 << kinds.len()) {
            for recorded in [false, true] {
                for delete_drift in [false, true] {
                    let entries: Vec<ChangeEntry> = kinds
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(i, a)| {
                            let declared = matches!(a, Create | Update | Noop | Unobserved);
                            let live = matches!(a, Update | Noop | Delete | Adopt | Runtime);
                            let mut e = entry(&format!("e{i}"), *a, declared, live);
                            if *a == Unobserved {
                                e.unobserved_reason = Some(UnobservedReason::ReadFailed);
                            }
                            e
                        })
                        .collect();
                    let has = |a: ChangeAction| entries.iter().any(|e| e.action == a);
                    let live = has(Update) || has(Noop);
                    let drift = has(Create) || has(Update) || (delete_drift && has(Delete));
                    let want = if has(Unobserved) {
                        EnvStatus::Unknown
                    } else if recorded && drift {
                        EnvStatus::Drifted
                    } else if recorded && !live {
                        EnvStatus::Stale
                    } else if !recorded {
                        EnvStatus::Unrecorded
                    } else {
                        EnvStatus::Reconciled
                    };
                    let row = status_row("e", &cs("c", entries), recorded, delete_drift);
                    assert_eq!(row.reconciliation, want, "mask={mask:07b} recorded={recorded} dd={delete_drift}");
                    assert_eq!(row.live, live);
                }
            }
        }
    }

    #[test]
    fn symptom_counts_worst_status_and_reasons() {
        let a = cs(
            "files",
            vec![
                entry("a", Create, true, false),
                entry("b", Noop, true, true),
                unobserved("c", UnobservedReason::Filtered),
                unobserved("d", UnobservedReason::NoBinding),
                unobserved("e", UnobservedReason::Filtered),
            ],
        );
        let b = cs(
            "db",
            vec![
                entry("t", Update, true, true),
                entry("x", Delete, false, true),
                entry("y", Adopt, false, true),
                entry("z", Runtime, false, true),
                unobserved("w", UnobservedReason::ReadFailed),
            ],
        );
        let rows = vec![status_row("s", &b, true, false), status_row("s", &a, true, false)];
        let symptom = derive_symptom("s", rows, &[a, b]);
        assert_eq!(symptom.status, EnvStatus::Unknown);
        assert_eq!(
            (symptom.create_count, symptom.update_count, symptom.delete_count, symptom.adopt_count),
            (1, 1, 1, 1)
        );
        assert_eq!((symptom.runtime_count, symptom.unobserved_count, symptom.total_count), (1, 4, 10));
        assert_eq!(
            symptom.unobserved_reasons,
            vec![UnobservedReason::NoBinding, UnobservedReason::ReadFailed, UnobservedReason::Filtered]
        );
    }

    #[test]
    fn symptom_of_nothing_is_reconciled() {
        let symptom = derive_symptom("s", vec![], &[]);
        assert_eq!(symptom.status, EnvStatus::Reconciled);
        assert_eq!(symptom.total_count, 0);
        assert!(symptom.unobserved_reasons.is_empty());
    }

    #[test]
    fn worst_row_wins() {
        let order =
            [EnvStatus::Unknown, EnvStatus::Drifted, EnvStatus::Stale, EnvStatus::Unrecorded, EnvStatus::Reconciled];
        for (i, worse) in order.iter().enumerate() {
            for better in &order[i..] {
                let row = |s: EnvStatus| ComponentRow {
                    component: s.as_str().into(),
                    env: "e".into(),
                    recorded: true,
                    live: true,
                    reconciliation: s,
                    detail: String::new(),
                };
                let symptom = derive_symptom("e", vec![row(*better), row(*worse)], &[]);
                assert_eq!(symptom.status, *worse);
            }
        }
    }

    #[test]
    fn assess_joins_components_sorted_by_name() {
        let declared = vec![DeclaredEntity::new("a.conf").property("content", "x")];
        let mut observation = Observation::new();
        observation.insert_present("a.conf", PresentResource::new(Ownership::Owned).property("content", "x"));
        let inputs = vec![
            ComponentInput {
                component: "zeta".into(),
                declared: declared.clone(),
                observation: Observation::new(),
                last_apply: LastApply::recorded(["a.conf"]),
                delete_counts_as_drift: false,
            },
            ComponentInput {
                component: "files".into(),
                declared: declared.clone(),
                observation,
                last_apply: LastApply::recorded(["a.conf"]),
                delete_counts_as_drift: false,
            },
        ];
        let assessed = assess("staging", &inputs);
        let names: Vec<&str> = assessed.symptom.components.iter().map(|r| r.component.as_str()).collect();
        assert_eq!(names, ["files", "zeta"]);
        assert_eq!(assessed.change_sets[0].component, "files");
        assert_eq!(assessed.symptom.status, EnvStatus::Drifted);
        assert_eq!(assessed.symptom.components[0].reconciliation, EnvStatus::Reconciled);
        assert_eq!(assessed.symptom.create_count, 1);
        assert_eq!(
            assessed.change_sets[1],
            build_change_set("zeta", &declared, &Observation::new(), &LastApply::recorded(["a.conf"]))
        );
    }
}
