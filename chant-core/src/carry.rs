//! Gates that carry an approval: `gate("deploy-prod", carries = "deploy-staging", within =
//! "24h")` declares that an approval of `deploy-staging`, recorded at most 24 hours before a run
//! reaches `deploy-prod`, answers `deploy-prod` too, so one human decision opens both.
//!
//! The rules a declaration must follow are checked here, by the macros at compile time and by the
//! loader for an op.json that did not come through them ([`check`]):
//!
//! - `carries` and `within` come together, and `within` is a duration (`24h`, `90m`);
//! - the source is another gate of the same op, declared before the carrying gate in the main
//!   phases (a typo gets a "did you mean"), and of the same component (a component's gates are
//!   recorded under the component, so a carry never reads another owner's approvals);
//! - a sealed gate carries nothing: a seal binds an approval to exactly the request it signed, and
//!   a carry would open the sealed gate on an approval nobody signed for it;
//! - a gate of a failure phase carries nothing (it cannot wait, so it is never answered).
//!
//! What a run does with a carry (which approvals carry, and what it records) is the runtime's
//! (`chant::gate::carry`).

use std::fmt;

use crate::component::owner;
use crate::contract::did_you_mean;
use crate::op::{OpDocument, Step};

/// What is wrong with a gate's carry declaration. Each names the gate; [`fmt::Display`] says how to
/// fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CarryProblem {
    /// `within` without `carries`.
    WithinWithoutCarries {
        /// The gate.
        gate: String,
    },
    /// `carries` without `within`.
    CarriesWithoutWithin {
        /// The gate.
        gate: String,
    },
    /// The gate names itself.
    Itself {
        /// The gate.
        gate: String,
    },
    /// The source is no gate of the op declared before this one.
    UnknownSource {
        /// The gate.
        gate: String,
        /// The source named.
        source: String,
        /// The closest gate declared before it, if one is close.
        suggestion: Option<String>,
        /// Whether the source is a gate declared after this one.
        later: bool,
        /// The gates declared before it.
        before: Vec<String>,
    },
    /// The source belongs to another component (or the op, when this gate is a component's).
    OtherOwner {
        /// The gate.
        gate: String,
        /// The source.
        source: String,
        /// This gate's owner (its component, or the op).
        owner: String,
        /// The source's owner.
        source_owner: String,
    },
    /// A sealed gate declares a carry.
    Sealed {
        /// The gate.
        gate: String,
    },
    /// A gate of a failure phase declares a carry.
    FailurePhase {
        /// The gate.
        gate: String,
    },
}

impl CarryProblem {
    /// The gate the problem is about.
    pub fn gate(&self) -> &str {
        match self {
            CarryProblem::WithinWithoutCarries { gate }
            | CarryProblem::CarriesWithoutWithin { gate }
            | CarryProblem::Itself { gate }
            | CarryProblem::UnknownSource { gate, .. }
            | CarryProblem::OtherOwner { gate, .. }
            | CarryProblem::Sealed { gate }
            | CarryProblem::FailurePhase { gate } => gate,
        }
    }

    /// The argument the problem is about (`carries`, `within` or `sealed`), for spanning it.
    pub fn argument(&self) -> &'static str {
        match self {
            CarryProblem::WithinWithoutCarries { .. } => "within",
            CarryProblem::Sealed { .. } => "sealed",
            _ => "carries",
        }
    }
}

impl fmt::Display for CarryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CarryProblem::WithinWithoutCarries { gate } => write!(
                f,
                "gate \"{gate}\" has `within` but no `carries`; `within` is how old an approval of the gate named by `carries` may be, so add `carries = \"<gate>\"` or remove `within`"
            ),
            CarryProblem::CarriesWithoutWithin { gate } => write!(
                f,
                "gate \"{gate}\" carries an approval with no window; add `within = \"24h\"` (how old the approval may be)"
            ),
            CarryProblem::Itself { gate } => {
                write!(f, "gate \"{gate}\" carries its own approval; name another gate declared before it")
            }
            CarryProblem::UnknownSource { gate, source, suggestion, later, before } => {
                write!(f, "gate \"{gate}\" carries \"{source}\", ")?;
                if *later {
                    write!(
                        f,
                        "which is declared after it; a carry reads an approval of a gate the op reaches first, so declare \"{source}\" before \"{gate}\""
                    )
                } else {
                    write!(f, "which is no gate of this op declared before it")?;
                    match (suggestion, before.is_empty()) {
                        (Some(s), _) => write!(f, "; did you mean \"{s}\"?"),
                        (None, true) => write!(f, " (no gate is declared before it)"),
                        (None, false) => write!(f, " (declared before it: {})", before.join(", ")),
                    }
                }
            }
            CarryProblem::OtherOwner { gate, source, owner, source_owner } => write!(
                f,
                "gate \"{gate}\" (of {owner}) carries \"{source}\", a gate of {source_owner}; a carry reads the approvals of a gate of the same component, so move one of them"
            ),
            CarryProblem::Sealed { gate } => write!(
                f,
                "gate \"{gate}\" is sealed and carries an approval; a sealed gate opens only on an approval sealed for its own request, so a carry cannot answer it: remove `carries` or `sealed`"
            ),
            CarryProblem::FailurePhase { gate } => write!(
                f,
                "gate \"{gate}\" is in a failure phase, where a gate cannot wait, so it carries nothing; remove `carries`"
            ),
        }
    }
}

/// Checks every carry declaration of `doc`.
pub fn check(doc: &OpDocument) -> Vec<CarryProblem> {
    let mut problems = Vec::new();
    // (gate, owner) of the main phases, in order.
    let mut gates: Vec<(&str, &str)> = Vec::new();
    for phase in &doc.phases {
        for step in &phase.steps {
            if let Step::Gate { name, .. } = step {
                gates.push((name.as_str(), owner(doc, phase)));
            }
        }
    }
    let mut seen = 0;
    for (failure, phase) in doc.phases.iter().map(|p| (false, p)).chain(doc.on_failure.iter().map(|p| (true, p))) {
        for step in &phase.steps {
            let Step::Gate { name, args, .. } = step else { continue };
            let gate = name.to_string();
            let before: &[(&str, &str)] = if failure { &gates } else { &gates[..seen] };
            if !failure {
                seen += 1;
            }
            let Some(source) = &args.carries else {
                if args.within.is_some() {
                    problems.push(CarryProblem::WithinWithoutCarries { gate });
                }
                continue;
            };
            if failure {
                problems.push(CarryProblem::FailurePhase { gate });
                continue;
            }
            if args.sealed {
                problems.push(CarryProblem::Sealed { gate: gate.clone() });
            }
            if args.within.is_none() {
                problems.push(CarryProblem::CarriesWithoutWithin { gate: gate.clone() });
            }
            let source = source.as_str();
            if source == gate {
                problems.push(CarryProblem::Itself { gate });
                continue;
            }
            let mine = owner(doc, phase);
            match before.iter().find(|(g, _)| *g == source) {
                Some((_, theirs)) if *theirs != mine => problems.push(CarryProblem::OtherOwner {
                    gate,
                    source: source.to_owned(),
                    owner: describe(doc, mine),
                    source_owner: describe(doc, theirs),
                }),
                Some(_) => {}
                None => {
                    let names: Vec<String> = before.iter().map(|(g, _)| (*g).to_owned()).collect();
                    problems.push(CarryProblem::UnknownSource {
                        suggestion: did_you_mean(source, names.iter().map(String::as_str)).map(str::to_owned),
                        later: gates.iter().any(|(g, _)| *g == source),
                        gate,
                        source: source.to_owned(),
                        before: names,
                    });
                }
            }
        }
    }
    problems
}

fn describe(doc: &OpDocument, owner: &str) -> String {
    if owner == doc.name.as_str() { format!("op {owner}") } else { format!("component {owner}") }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(phases: serde_json::Value, on_failure: serde_json::Value) -> OpDocument {
        serde_json::from_value(json!({
            "version": 1, "name": "release", "overview": "o", "class": "read-only",
            "phases": phases, "onFailure": on_failure,
        }))
        .unwrap()
    }

    fn gate(name: &str, args: serde_json::Value) -> serde_json::Value {
        json!({"kind": "gate", "name": name, "class": "read-only", "args": args})
    }

    #[test]
    fn a_carry_from_an_earlier_gate_of_the_same_owner_is_accepted() {
        let d = doc(
            json!([{"name": "S", "steps": [gate("staging", json!({}))]},
                   {"name": "P", "steps": [gate("prod", json!({"carries": "staging", "within": "24h"}))]}]),
            json!([]),
        );
        assert_eq!(check(&d), []);
    }

    #[test]
    fn each_broken_rule_is_named() {
        let d = doc(
            json!([{"name": "S", "steps": [
                gate("staging", json!({})),
                gate("prod", json!({"carries": "stagign", "within": "24h"})),
                gate("early", json!({"carries": "late", "within": "1h"})),
                gate("late", json!({"within": "1h"})),
                gate("self", json!({"carries": "self", "within": "1h"})),
                gate("force", json!({"carries": "staging", "sealed": true})),
            ]}, {"name": "api", "component": "api", "steps": [gate("api-go", json!({"carries": "staging", "within": "1h"}))]}]),
            json!([{"name": "F", "steps": [gate("undo", json!({"carries": "staging", "within": "1h"}))]}]),
        );
        let problems = check(&d);
        let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(texts[0].contains("did you mean \"staging\"?"), "{texts:?}");
        assert!(texts[1].contains("declared after it"), "{texts:?}");
        assert_eq!(problems[2], CarryProblem::WithinWithoutCarries { gate: "late".into() });
        assert_eq!(problems[3], CarryProblem::Itself { gate: "self".into() });
        assert_eq!(problems[4], CarryProblem::Sealed { gate: "force".into() });
        assert_eq!(problems[5], CarryProblem::CarriesWithoutWithin { gate: "force".into() });
        assert!(texts[6].contains("component api") && texts[6].contains("op release"), "{texts:?}");
        assert_eq!(problems[7], CarryProblem::FailurePhase { gate: "undo".into() });
        assert_eq!(problems.len(), 8, "{texts:?}");
        assert_eq!(problems[4].argument(), "sealed");
    }

    /// The loader refuses what the macros refuse, in an op.json edited by hand: a sealed gate
    /// given a carry, and a component named like another op of the set.
    #[test]
    fn the_loader_refuses_a_carry_onto_a_sealed_gate_and_a_component_named_like_an_op() {
        let release = json!({"version": 1, "name": "release", "overview": "o", "class": "read-only", "phases": [
            {"name": "S", "steps": [gate("staging", json!({}))]},
            {"name": "P", "component": "api", "steps": [gate("prod", json!({"carries": "staging", "within": "1h", "sealed": true}))]},
        ]});
        let api = json!({"version": 1, "name": "api", "overview": "o", "class": "read-only", "phases": []});
        let (a, b) = (release.to_string(), api.to_string());
        let report = crate::validate::check_set([("release.json", a.as_str()), ("api.json", b.as_str())]);
        let texts: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        assert!(texts.iter().any(|t| t.contains("gate \"prod\" is sealed and carries an approval")), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("component \"api\" has the name of op \"api\"")), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("a gate of op release")), "{texts:?}");
        assert!(texts.iter().all(|t| t.starts_with("release.json: op \"release\"")), "{texts:?}");
    }
}
