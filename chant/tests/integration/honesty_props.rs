//! Honesty properties, checked over generated inputs rather than chosen cases: the classifier
//! (declared x observed x ownership x reason x last apply) and the planner (rule tables x dials x
//! budgets x symptoms x flap runs).
//!
//! - an unobserved entity is never a `create` or a `delete`;
//! - a resource that is not owned is never a `delete`, and only a declared entity observed
//!   absent is a `create`;
//! - an env with anything unobserved is `unknown`, and an `unknown` tick dispatches nothing;
//! - a rule that reads `adopt_count` never dispatches a mutating op, whatever the table says;
//! - a dispatch never exceeds the dial's authority, and never the budget;
//! - no outcome stays `ran` (remediated) when the observation after the dispatch still satisfies
//!   its rule's predicate, and none when that observation is `unknown`.

use std::collections::{BTreeMap, BTreeSet};

use chant::model::contract::{ClassKind, DialKind};
use chant::model::{
    Action as RuleAction, ComparisonOp, ConvergeSymptom, EnvStatus, Literal, Name, Predicate, Rule, TruthinessOp,
    UnobservedReason,
};
use chant::observe::{
    ChangeAction, ComponentInput, DeclaredEntity, LastApply, Observation, Ownership, PresentResource, Unobserved,
    assess, build_change_set,
};
use chant::tick::verify::{After, verify};
use chant::tick::{Action, DispatchResult, FlapEntry, PlanInput, Subject, plan, record_dispatch};
use proptest::prelude::*;

const NAMES: [&str; 6] = ["a.conf", "b.conf", "app.users", "app.users.id", "motd", "x"];

/// What the lexicon saw of one name.
#[derive(Debug, Clone)]
enum Seen {
    Absent,
    Present { ownership: Ownership, content: u8, runtime_owner: bool },
    Unobserved(UnobservedReason),
}

fn ownership() -> impl Strategy<Value = Ownership> {
    prop::sample::select(Ownership::ALL.to_vec())
}

fn reason() -> impl Strategy<Value = UnobservedReason> {
    prop::sample::select(UnobservedReason::ALL.to_vec())
}

fn seen() -> impl Strategy<Value = Seen> {
    prop_oneof![
        Just(Seen::Absent),
        (ownership(), 0u8..3, any::<bool>()).prop_map(|(ownership, content, runtime_owner)| Seen::Present {
            ownership,
            content,
            runtime_owner
        }),
        reason().prop_map(Seen::Unobserved),
    ]
}

/// One component: which names are declared (with their declared content), what was seen of each
/// name, and the last recorded apply.
#[derive(Debug, Clone)]
struct Component {
    declared: BTreeMap<&'static str, u8>,
    seen: BTreeMap<&'static str, Seen>,
    recorded: bool,
    owned: BTreeSet<&'static str>,
    delete_counts_as_drift: bool,
}

fn component() -> impl Strategy<Value = Component> {
    (
        prop::collection::btree_map(prop::sample::select(NAMES.to_vec()), 0u8..3, 0..=NAMES.len()),
        prop::collection::btree_map(prop::sample::select(NAMES.to_vec()), seen(), 0..=NAMES.len()),
        any::<bool>(),
        prop::collection::btree_set(prop::sample::select(NAMES.to_vec()), 0..=NAMES.len()),
        any::<bool>(),
    )
        .prop_map(|(declared, seen, recorded, owned, delete_counts_as_drift)| Component {
            declared,
            seen,
            recorded,
            owned,
            delete_counts_as_drift,
        })
}

impl Component {
    fn declared_entities(&self) -> Vec<DeclaredEntity> {
        self.declared.iter().map(|(n, c)| DeclaredEntity::new(*n).property("content", c.to_string())).collect()
    }

    fn observation(&self) -> Observation {
        let mut o = Observation::new();
        let first_declared = self.declared.keys().next().copied();
        for (name, seen) in &self.seen {
            match seen {
                Seen::Absent => {}
                Seen::Present { ownership, content, runtime_owner } => {
                    let mut r = PresentResource::new(*ownership).property("content", content.to_string());
                    if *runtime_owner && let Some(owner) = first_declared.filter(|d| d != name) {
                        r.runtime_owner = Some(owner.to_owned());
                    }
                    o.resources.insert((*name).to_owned(), r);
                }
                Seen::Unobserved(reason) => {
                    o.unobserved.insert((*name).to_owned(), Unobserved::new(*reason));
                }
            }
        }
        o
    }

    fn last_apply(&self) -> LastApply {
        if self.recorded { LastApply::recorded(self.owned.iter().copied()) } else { LastApply::none() }
    }

    fn input(&self, name: &str) -> ComponentInput {
        ComponentInput {
            component: name.to_owned(),
            declared: self.declared_entities(),
            observation: self.observation(),
            last_apply: self.last_apply(),
            delete_counts_as_drift: self.delete_counts_as_drift,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn the_classifier_never_concludes_from_what_it_did_not_see(c in component()) {
        let observation = c.observation();
        let set = build_change_set("files", &c.declared_entities(), &observation, &c.last_apply());
        for entry in &set.entries {
            let name = entry.name.as_str();
            if observation.unobserved.contains_key(name) {
                prop_assert_eq!(entry.action, ChangeAction::Unobserved, "{} was not observed", name);
            }
            match entry.action {
                ChangeAction::Create => {
                    prop_assert!(c.declared.contains_key(name), "create of undeclared {}", name);
                    prop_assert!(!observation.resources.contains_key(name) && !observation.unobserved.contains_key(name),
                        "create of {} which was not observed absent", name);
                }
                ChangeAction::Delete => {
                    prop_assert!(!c.declared.contains_key(name), "delete of declared {}", name);
                    let owned = observation.resources.get(name).map(|r| r.ownership);
                    prop_assert_eq!(owned, Some(Ownership::Owned), "delete of {} which is not owned", name);
                }
                _ => {}
            }
        }
        // Every declared name has exactly one entry.
        for name in c.declared.keys() {
            prop_assert_eq!(set.entries.iter().filter(|e| e.name == *name).count(), 1);
        }
    }

    #[test]
    fn an_env_with_anything_unobserved_is_unknown(a in component(), b in component()) {
        let assessment = assess("staging", &[a.input("files"), b.input("postgres")]);
        let unobserved: u64 = assessment
            .change_sets
            .iter()
            .flat_map(|s| s.entries.iter())
            .filter(|e| e.action == ChangeAction::Unobserved)
            .count() as u64;
        prop_assert_eq!(assessment.symptom.unobserved_count, unobserved);
        if unobserved > 0 {
            prop_assert_eq!(assessment.symptom.status, EnvStatus::Unknown);
            prop_assert!(!assessment.symptom.unobserved_reasons.is_empty());
        } else {
            prop_assert_ne!(assessment.symptom.status, EnvStatus::Unknown);
        }
    }
}

// ---- the planner ----

const OPS: [(&str, ClassKind); 4] = [
    ("check", ClassKind::ReadOnly),
    ("apply", ClassKind::Mutating),
    ("teardown", ClassKind::Destructive),
    ("missing", ClassKind::ReadOnly), // not in the catalog: class_of answers None
];

fn class_of(name: &str) -> Option<ClassKind> {
    OPS.iter().find(|(n, _)| *n == name && *n != "missing").map(|(_, c)| *c)
}

fn leaf() -> impl Strategy<Value = Predicate> {
    let status = prop::sample::select(vec!["reconciled", "drifted", "stale", "unrecorded", "unknown"]);
    let count_field =
        prop::sample::select(vec!["adoptCount", "createCount", "updateCount", "deleteCount", "unobservedCount"]);
    let op = prop::sample::select(vec![
        ComparisonOp::Eq,
        ComparisonOp::Neq,
        ComparisonOp::Gt,
        ComparisonOp::Gte,
        ComparisonOp::Lt,
        ComparisonOp::Lte,
    ]);
    prop_oneof![
        status.prop_map(|s| Predicate::FieldComparison {
            field: "status".into(),
            op: ComparisonOp::Eq,
            value: Literal::Str(s.into())
        }),
        (count_field, op, 0i64..3).prop_map(|(f, op, n)| Predicate::FieldComparison {
            field: f.into(),
            op,
            value: Literal::Number(n.into())
        }),
        (prop::sample::select(vec!["components", "unobservedReasons"]), any::<bool>()).prop_map(|(f, t)| {
            Predicate::FieldTruthiness {
                field: f.into(),
                op: if t { TruthinessOp::Truthy } else { TruthinessOp::Falsy },
            }
        }),
    ]
}

fn predicate() -> impl Strategy<Value = Predicate> {
    leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|predicates| Predicate::AllOf { predicates }),
            prop::collection::vec(inner, 0..3).prop_map(|predicates| Predicate::AnyOf { predicates }),
        ]
    })
}

fn rules() -> impl Strategy<Value = Vec<Rule>> {
    let action = prop_oneof![
        prop::sample::select(OPS.iter().map(|(n, _)| *n).collect::<Vec<_>>())
            .prop_map(|op| RuleAction::Run { op: Name::new(op).unwrap() }),
        Just(RuleAction::Report { reason: "look".into() }),
    ];
    prop::collection::vec((predicate(), action, prop::option::of(1u64..4)), 1..6).prop_map(|rs| {
        rs.into_iter()
            .enumerate()
            .map(|(i, (when, then, flap_threshold))| Rule {
                id: Name::new(format!("rule-{i}")).unwrap(),
                when,
                then,
                why: "generated".into(),
                flap_threshold,
                source: None,
            })
            .collect()
    })
}

fn symptom() -> impl Strategy<Value = ConvergeSymptom> {
    (
        prop::sample::select(vec![
            EnvStatus::Reconciled,
            EnvStatus::Drifted,
            EnvStatus::Stale,
            EnvStatus::Unrecorded,
            EnvStatus::Unknown,
        ]),
        prop::collection::vec(0u64..3, 5),
        prop::collection::vec(reason(), 0..3),
    )
        .prop_map(|(status, counts, reasons)| {
            let mut reasons = reasons;
            reasons.sort_by_key(|r| r.as_str());
            reasons.dedup();
            ConvergeSymptom {
                env: "staging".into(),
                status,
                components: Vec::new(),
                create_count: counts[0],
                update_count: counts[1],
                delete_count: counts[2],
                adopt_count: counts[3],
                runtime_count: 0,
                unobserved_count: counts[4],
                unobserved_reasons: reasons,
                total_count: counts.iter().sum(),
                ambient_count: 0,
                dependency_unobserved_count: 0,
                artifact_changed_count: 0,
                baselined_count: 0,
            }
        })
}

fn dial() -> impl Strategy<Value = DialKind> {
    prop::sample::select(vec![DialKind::Observe, DialKind::Reconcile, DialKind::Apply])
}

fn flap(rules: &[Rule]) -> impl Strategy<Value = Vec<FlapEntry>> + use<> {
    let ids: Vec<String> = rules.iter().map(|r| r.id.to_string()).collect();
    prop::collection::vec((prop::sample::select(ids), 0u64..5), 0..4).prop_map(|runs| {
        let mut seen = BTreeSet::new();
        runs.into_iter()
            .filter(|(id, _)| seen.insert(id.clone()))
            .map(|(rule_id, run)| FlapEntry { rule_id, resource: None, run, damped_at: None })
            .collect()
    })
}

/// A planner case and the symptom the observation after the tick's dispatches reads.
fn verified_case() -> impl Strategy<Value = (Vec<Rule>, DialKind, u64, ConvergeSymptom, Vec<FlapEntry>, ConvergeSymptom)>
{
    (planner_case(), symptom())
        .prop_map(|((rules, dial, budget, before, flap), after)| (rules, dial, budget, before, flap, after))
}

fn planner_case() -> impl Strategy<Value = (Vec<Rule>, DialKind, u64, ConvergeSymptom, Vec<FlapEntry>)> {
    rules().prop_flat_map(|rules| {
        let f = flap(&rules);
        (Just(rules), dial(), 0u64..4, symptom(), f)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn the_planner_never_dispatches_beyond_the_contract((rules, dial, budget, symptom, flap) in planner_case()) {
        let input = PlanInput { rules: &rules, dial, budget, subject: Subject::Env(&symptom), previous_flap: &flap };
        let p = plan(&input, &class_of);
        let ran: Vec<_> = p.outcomes.iter().filter(|o| o.action == Action::Ran).collect();
        prop_assert!(ran.len() as u64 <= budget, "{} dispatches over a budget of {}", ran.len(), budget);
        if symptom.status == EnvStatus::Unknown {
            prop_assert!(ran.is_empty(), "an unknown symptom dispatched {:?}", ran);
        }
        for o in &ran {
            let target = o.op.as_deref().unwrap_or_default();
            let class = class_of(target);
            prop_assert!(class.is_some(), "dispatched {} which is not in the catalog", target);
            let class = class.unwrap_or(ClassKind::Destructive);
            prop_assert_ne!(class, ClassKind::Destructive, "dispatched destructive {}", target);
            if class == ClassKind::Mutating {
                prop_assert_eq!(dial, DialKind::Apply, "mutating {} under {:?}", target, dial);
            }
            let rule = rules.iter().find(|r| r.id == o.rule_id);
            prop_assert!(rule.is_some());
            if let Some(rule) = rule && class != ClassKind::ReadOnly {
                prop_assert!(!rule.when.references("adoptCount"), "rule {} reads adoptCount and dispatched {}", rule.id, target);
            }
        }
        // Every outcome traces to a rule of the table.
        for o in &p.outcomes {
            prop_assert!(rules.iter().any(|r| r.id == o.rule_id));
        }
    }

    #[test]
    fn no_record_claims_a_repair_the_observation_after_it_does_not_back(
        (rules, dial, budget, before, flap, after) in verified_case()
    ) {
        let input = PlanInput { rules: &rules, dial, budget, subject: Subject::Env(&before), previous_flap: &flap };
        let p = plan(&input, &class_of);
        let mut outcomes = p.outcomes.clone();
        for o in outcomes.iter_mut().filter(|o| o.action == Action::Ran) {
            record_dispatch(o, DispatchResult::Ok);
        }
        let dispatched = outcomes.iter().filter(|o| o.action == Action::Ran).count();
        verify(&mut outcomes, &rules, After::Observed(Subject::Env(&after), &[]));
        for o in outcomes.iter().filter(|o| o.action == Action::Ran) {
            let rule = rules.iter().find(|r| r.id == o.rule_id);
            prop_assert!(rule.is_some());
            if let Some(rule) = rule {
                prop_assert!(!chant::model::evaluate(&rule.when, &after), "rule {} is remediated while its predicate still holds", rule.id);
            }
            prop_assert_ne!(after.status, EnvStatus::Unknown, "remediated on an unknown observation");
        }
        // Verification only judges: every dispatch is still one, and nothing else changed.
        prop_assert_eq!(outcomes.iter().filter(|o| o.is_dispatch()).count(), dispatched);
        prop_assert_eq!(outcomes.len(), p.outcomes.len());
    }
}
