//! Components: named parts of an op's phases that run on their own.
//!
//! A phase may belong to a component (`phase("Deploy api", [...], component = "api")`). A plain
//! `run <op>` runs every phase; `run <op> --components api,web` runs the phases of the named
//! components and the phases that belong to none (the op's shared steps), and skips the rest.
//! A gate in a component's phase is the component's: its facts are recorded under the component
//! (`_gates/<component>`), it stops that component pending `chant approve <component> <gate>`,
//! and the other components of the run go on. Several phases may belong to one component (its
//! composition, in phase order); several ops may name the same component (its gates are then one
//! ledger, whose approvals still answer only the run that asked).
//!
//! The rules ([`check`]): a component is a name (`[a-z][a-z0-9-]*`), not the op's own name (both
//! would own `_gates/<name>`), and failure phases belong to the whole op.

use std::collections::BTreeSet;
use std::fmt;

use crate::contract::did_you_mean;
use crate::op::{OpDocument, Phase};

/// What is wrong with an op's components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentProblem {
    /// A component has the op's own name.
    OpName {
        /// The phase.
        phase: String,
        /// The component.
        component: String,
    },
    /// A failure phase names a component.
    FailurePhase {
        /// The phase.
        phase: String,
        /// The component.
        component: String,
    },
}

impl ComponentProblem {
    /// The phase the problem is about.
    pub fn phase(&self) -> &str {
        match self {
            ComponentProblem::OpName { phase, .. } | ComponentProblem::FailurePhase { phase, .. } => phase,
        }
    }
}

impl fmt::Display for ComponentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentProblem::OpName { phase, component } => write!(
                f,
                "phase \"{phase}\" belongs to component \"{component}\", the op's own name; a component's gates are recorded under its name, so name it apart from the op"
            ),
            ComponentProblem::FailurePhase { phase, component } => write!(
                f,
                "failure phase \"{phase}\" names component \"{component}\"; failure phases belong to the whole op, so remove `component`"
            ),
        }
    }
}

/// Checks the components of `doc`.
pub fn check(doc: &OpDocument) -> Vec<ComponentProblem> {
    let mut problems = Vec::new();
    for p in &doc.phases {
        if let Some(c) = p.component.as_ref().filter(|c| c.as_str() == doc.name.as_str()) {
            problems.push(ComponentProblem::OpName { phase: p.name.clone(), component: c.to_string() });
        }
    }
    for p in &doc.on_failure {
        if let Some(c) = &p.component {
            problems.push(ComponentProblem::FailurePhase { phase: p.name.clone(), component: c.to_string() });
        }
    }
    problems
}

/// The components `doc` declares, in the order their first phase comes.
pub fn declared(doc: &OpDocument) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in doc.phases.iter().filter_map(|p| p.component.as_ref()) {
        if !out.contains(&c.as_str()) {
            out.push(c.as_str());
        }
    }
    out
}

/// Who owns the gates of `phase`: its component, or the op.
pub fn owner<'a>(doc: &'a OpDocument, phase: &'a Phase) -> &'a str {
    phase.component.as_ref().map_or(doc.name.as_str(), |c| c.as_str())
}

/// A `--components` list that names something the op does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The op declares no component.
    #[error(
        "op `{op}` declares no components (a phase joins one with `component = \"<name>\"`), so --components selects nothing"
    )]
    NoComponents {
        /// The op.
        op: String,
    },
    /// A name is not one of the op's components.
    #[error("op `{op}` has no component `{name}`{}; its components are {}", .suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default(), .declared.join(", "))]
    Unknown {
        /// The op.
        op: String,
        /// The name given.
        name: String,
        /// The closest declared component.
        suggestion: Option<String>,
        /// The components declared.
        declared: Vec<String>,
    },
    /// The list is empty.
    #[error("--components names no component; give one or more, separated by commas")]
    Empty,
}

/// Checks a `--components` list against `doc`'s components and returns the selection.
///
/// # Errors
///
/// [`SelectError`] naming the first name that is not declared, with the closest declared one.
pub fn select(doc: &OpDocument, names: &[String]) -> Result<BTreeSet<String>, SelectError> {
    let declared = declared(doc);
    if declared.is_empty() {
        return Err(SelectError::NoComponents { op: doc.name.to_string() });
    }
    let mut out = BTreeSet::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !declared.contains(&name) {
            return Err(SelectError::Unknown {
                op: doc.name.to_string(),
                name: name.to_owned(),
                suggestion: did_you_mean(name, declared.iter().copied()).map(str::to_owned),
                declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            });
        }
        out.insert(name.to_owned());
    }
    if out.is_empty() {
        return Err(SelectError::Empty);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> OpDocument {
        serde_json::from_value(json!({
            "version": 1, "name": "release", "overview": "o", "class": "read-only",
            "phases": [
                {"name": "Build", "steps": []},
                {"name": "Api", "component": "api", "steps": []},
                {"name": "Web", "component": "web", "steps": []},
                {"name": "Api check", "component": "api", "steps": []},
            ],
        }))
        .unwrap()
    }

    #[test]
    fn components_are_listed_once_in_phase_order_and_selected_by_name() {
        let d = doc();
        assert_eq!(declared(&d), ["api", "web"]);
        assert_eq!(owner(&d, &d.phases[0]), "release");
        assert_eq!(owner(&d, &d.phases[1]), "api");
        let picked = select(&d, &["web".into(), " api".into()]).unwrap();
        assert_eq!(picked.into_iter().collect::<Vec<_>>(), ["api", "web"]);
        let e = select(&d, &["wbe".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "op `release` has no component `wbe`; did you mean `web`?; its components are api, web"
        );
        assert_eq!(select(&d, &[String::new()]), Err(SelectError::Empty));
        let mut none = d.clone();
        none.phases.iter_mut().for_each(|p| p.component = None);
        assert!(matches!(select(&none, &["api".into()]), Err(SelectError::NoComponents { .. })));
        assert_eq!(check(&d), []);
    }

    #[test]
    fn a_component_named_like_the_op_or_on_a_failure_phase_is_refused() {
        let mut d = doc();
        d.phases[1].component = Some(d.name.clone());
        d.on_failure = vec![d.phases[2].clone()];
        let problems = check(&d);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].to_string().contains("the op's own name"));
        assert_eq!(problems[1].phase(), "Web");
    }
}
