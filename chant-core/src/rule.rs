//! A rule: a typed predicate over a symptom, an action, and the mandatory `why`.
//!
//! Rules are data, not closures: every type here serialises to the original's JSON form
//! (`{kind: "field-comparison", field, op, value}` and friends) so a rule table survives the trip
//! into op.json and back. [`evaluate`] is the pure interpreter; [`check_predicate`] the
//! well-formedness check shared with the macros through [`super::contract`].

use serde::{Deserialize, Serialize};

use super::contract::{self, LeafProblem, LiteralKind, SymptomKind};
use super::name::Name;

/// A comparison operator of a `field-comparison` predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComparisonOp {
    /// Strict equality.
    Eq,
    /// Strict inequality.
    Neq,
    /// Greater than (numbers only).
    Gt,
    /// Greater than or equal (numbers only).
    Gte,
    /// Less than (numbers only).
    Lt,
    /// Less than or equal (numbers only).
    Lte,
}

impl ComparisonOp {
    /// Returns the operator's name (`eq`).
    pub fn as_str(self) -> &'static str {
        match self {
            ComparisonOp::Eq => "eq",
            ComparisonOp::Neq => "neq",
            ComparisonOp::Gt => "gt",
            ComparisonOp::Gte => "gte",
            ComparisonOp::Lt => "lt",
            ComparisonOp::Lte => "lte",
        }
    }
}

/// A truthiness operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruthinessOp {
    /// Non-empty string or array, non-zero number, `true`.
    Truthy,
    /// The negation of truthy.
    Falsy,
}

impl TruthinessOp {
    /// Returns the operator's name (`truthy`).
    pub fn as_str(self) -> &'static str {
        match self {
            TruthinessOp::Truthy => "truthy",
            TruthinessOp::Falsy => "falsy",
        }
    }
}

/// A literal a field is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Literal {
    /// A boolean.
    Bool(bool),
    /// A number, kept as written (an integer stays an integer).
    Number(serde_json::Number),
    /// A string.
    Str(String),
}

impl Literal {
    /// Returns the literal's kind for the contract checks.
    pub fn kind(&self) -> LiteralKind<'_> {
        match self {
            Literal::Bool(_) => LiteralKind::Bool,
            Literal::Number(_) => LiteralKind::Number,
            Literal::Str(s) => LiteralKind::Str(s),
        }
    }
}

/// A predicate over a symptom: the evaluable subset and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Predicate {
    /// `eq/neq/gt/gte/lt/lte(field, value)`.
    #[serde(rename = "field-comparison")]
    FieldComparison {
        /// The camelCase field name.
        field: String,
        /// The operator.
        op: ComparisonOp,
        /// The literal.
        value: Literal,
    },
    /// `truthy(field)` / `falsy(field)`.
    #[serde(rename = "field-truthiness")]
    FieldTruthiness {
        /// The camelCase field name.
        field: String,
        /// The operator.
        op: TruthinessOp,
    },
    /// Every child holds (an empty list holds).
    #[serde(rename = "all-of")]
    AllOf {
        /// The children.
        predicates: Vec<Predicate>,
    },
    /// Some child holds (an empty list does not).
    #[serde(rename = "any-of")]
    AnyOf {
        /// The children.
        predicates: Vec<Predicate>,
    },
}

impl Predicate {
    /// Returns true when any leaf names `field` (camelCase), recursing through all-of/any-of.
    pub fn references(&self, field: &str) -> bool {
        match self {
            Predicate::FieldComparison { field: f, .. } | Predicate::FieldTruthiness { field: f, .. } => f == field,
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().any(|p| p.references(field))
            }
        }
    }

    /// Returns a short slug of the predicate (`status-eq-drifted`), used to derive rule ids.
    pub fn slug(&self) -> String {
        match self {
            Predicate::FieldComparison { field, op, value } => {
                let v = match value {
                    Literal::Bool(b) => b.to_string(),
                    Literal::Number(n) => n.to_string(),
                    Literal::Str(s) => s.clone(),
                };
                format!("{}-{}-{}", contract::camel_to_snake(field), op.as_str(), v)
            }
            Predicate::FieldTruthiness { field, op } => format!("{}-{}", contract::camel_to_snake(field), op.as_str()),
            Predicate::AllOf { predicates } => {
                format!("all-{}", predicates.iter().map(Predicate::slug).collect::<Vec<_>>().join("-and-"))
            }
            Predicate::AnyOf { predicates } => {
                format!("any-{}", predicates.iter().map(Predicate::slug).collect::<Vec<_>>().join("-or-"))
            }
        }
    }
}

/// What a rule does when its predicate holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Action {
    /// Dispatch a declared Op by name.
    Run {
        /// The Op's name.
        op: Name,
    },
    /// Log and record only.
    Report {
        /// Why it is reported.
        reason: String,
    },
    /// Write what a declared Op would change as a commit on the proposal branch
    /// `chant/proposals/<env>/<rule>` of the project repository, for a person to review; the
    /// estate is not touched. Dials `reconcile` and `apply` only.
    Propose {
        /// The Op whose change is proposed.
        op: Name,
    },
}

impl Action {
    /// Returns the op the action names: a `run()` or `propose()` target.
    pub fn target(&self) -> Option<&Name> {
        match self {
            Action::Run { op } | Action::Propose { op } => Some(op),
            Action::Report { .. } => None,
        }
    }

    /// Returns a short slug of the action (`run-staging-apply`).
    pub fn slug(&self) -> String {
        match self {
            Action::Run { op } => format!("run-{op}"),
            Action::Report { reason } => format!("report-{reason}"),
            Action::Propose { op } => format!("propose-{op}"),
        }
    }
}

/// Where a rule was written: a path relative to the root of the git repository holding its crate
/// (its manifest directory when the crate is in no repository), and a 1-based line, so `git blame
/// <file> -L <line>` at the repository root finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The file, relative to the repository root (`examples/staging/src/ops.rs`).
    pub file: String,
    /// The 1-based line of the `when!`.
    pub line: u32,
}

/// Why [`Rule::derive_id`] could not derive an id.
#[derive(Debug, thiserror::Error)]
pub enum DeriveIdError {
    /// The predicate or action could not be serialised.
    #[error("cannot serialise the rule")]
    Serialise(#[from] serde_json::Error),
    /// The derived slug is not a valid name.
    #[error(transparent)]
    Name(#[from] crate::name::InvalidName),
}

/// One rule of a ConvergeOp's table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The rule's id: flap counters and history are keyed by it.
    pub id: Name,
    /// The predicate.
    pub when: Predicate,
    /// The action.
    pub then: Action,
    /// Why the rule exists. Mandatory and non-blank.
    pub why: String,
    /// Consecutive dispatching ticks before the rule is damped (default 3).
    #[serde(rename = "flapThreshold", skip_serializing_if = "Option::is_none", default, deserialize_with = "written")]
    pub flap_threshold: Option<u64>,
    /// Where the rule was written.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "written")]
    pub source: Option<Source>,
}

/// An optional field that is absent or written out: `null` is refused, as the op.json loader
/// refuses it (a rule's optional keys are left out when they have no value, never `null`).
fn written<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

impl Rule {
    /// Derives the id a rule gets when none is written, from its predicate and action only.
    ///
    /// # Errors
    ///
    /// Returns a [`DeriveIdError`] only if the predicate or action cannot be serialised or the
    /// slug breaks the name rule, which the types here make impossible in practice.
    pub fn derive_id(when: &Predicate, then: &Action) -> Result<Name, DeriveIdError> {
        let p = serde_json::to_string(when)?;
        let a = serde_json::to_string(then)?;
        Ok(Name::parse("rule id", contract::derive_rule_id(&p, &a, &format!("{}-{}", when.slug(), then.slug())))?)
    }

    /// Returns the flap threshold in force.
    pub fn flap_threshold(&self) -> u64 {
        self.flap_threshold.unwrap_or(contract::DEFAULT_FLAP_THRESHOLD)
    }
}

/// The value of one symptom field, as the evaluator sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldValue<'a> {
    /// A string.
    Str(&'a str),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// An array, by length.
    List(usize),
}

/// A record a predicate can be evaluated against.
pub trait Symptom {
    /// Returns the value of the camelCase field `name`, or `None` when the record has no such field.
    fn field(&self, name: &str) -> Option<FieldValue<'_>>;
}

impl Symptom for serde_json::Map<String, serde_json::Value> {
    fn field(&self, name: &str) -> Option<FieldValue<'_>> {
        match self.get(name)? {
            serde_json::Value::String(s) => Some(FieldValue::Str(s)),
            serde_json::Value::Number(n) => n.as_f64().map(FieldValue::Num),
            serde_json::Value::Bool(b) => Some(FieldValue::Bool(*b)),
            serde_json::Value::Array(a) => Some(FieldValue::List(a.len())),
            serde_json::Value::Object(_) | serde_json::Value::Null => None,
        }
    }
}

/// Evaluates a predicate against a symptom.
///
/// Equality is strict (no coercion: `1` never equals `"1"`, arrays never equal anything); the
/// ordering operators hold only between two numbers; truthiness means a non-empty string or
/// array, a non-zero number or `true`; all-of of nothing holds, any-of of nothing does not; a
/// missing field is unequal to everything and falsy.
pub fn evaluate(predicate: &Predicate, symptom: &dyn Symptom) -> bool {
    match predicate {
        Predicate::FieldComparison { field, op, value } => {
            let actual = symptom.field(field);
            match op {
                ComparisonOp::Eq => strict_eq(actual, value),
                ComparisonOp::Neq => !strict_eq(actual, value),
                ComparisonOp::Gt | ComparisonOp::Gte | ComparisonOp::Lt | ComparisonOp::Lte => {
                    let (Some(FieldValue::Num(a)), Literal::Number(b)) = (actual, value) else {
                        return false;
                    };
                    let Some(b) = b.as_f64() else { return false };
                    match op {
                        ComparisonOp::Gt => a > b,
                        ComparisonOp::Gte => a >= b,
                        ComparisonOp::Lt => a < b,
                        _ => a <= b,
                    }
                }
            }
        }
        Predicate::FieldTruthiness { field, op } => {
            let truthy = match symptom.field(field) {
                None => false,
                Some(FieldValue::Str(s)) => !s.is_empty(),
                Some(FieldValue::Num(n)) => n != 0.0 && !n.is_nan(),
                Some(FieldValue::Bool(b)) => b,
                Some(FieldValue::List(n)) => n > 0,
            };
            match op {
                TruthinessOp::Truthy => truthy,
                TruthinessOp::Falsy => !truthy,
            }
        }
        Predicate::AllOf { predicates } => predicates.iter().all(|p| evaluate(p, symptom)),
        Predicate::AnyOf { predicates } => predicates.iter().any(|p| evaluate(p, symptom)),
    }
}

fn strict_eq(actual: Option<FieldValue<'_>>, value: &Literal) -> bool {
    match (actual, value) {
        (Some(FieldValue::Str(a)), Literal::Str(b)) => a == b,
        (Some(FieldValue::Num(a)), Literal::Number(b)) => b.as_f64() == Some(a),
        (Some(FieldValue::Bool(a)), Literal::Bool(b)) => a == *b,
        _ => false,
    }
}

/// A predicate problem with the path to the offending leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredicateProblem {
    /// The problem.
    pub problem: LeafProblem,
    /// The field as written.
    pub field: String,
    /// The operator as written.
    pub op: String,
    /// The string literal, if the leaf had one.
    pub value: Option<String>,
}

impl PredicateProblem {
    /// Renders the problem in plain words, naming op.json's camelCase fields.
    pub fn message(&self, kind: SymptomKind) -> String {
        self.problem.message(&self.field, &self.op, self.value.as_deref(), kind, false)
    }
}

/// Checks every leaf of a predicate against the contract for `kind`, returning every problem.
pub fn check_predicate(predicate: &Predicate, kind: SymptomKind) -> Vec<PredicateProblem> {
    let mut out = Vec::new();
    walk(predicate, kind, &mut out);
    out
}

fn walk(p: &Predicate, kind: SymptomKind, out: &mut Vec<PredicateProblem>) {
    let (field, op, lit) = match p {
        Predicate::FieldComparison { field, op, value } => (field, op.as_str(), Some(value)),
        Predicate::FieldTruthiness { field, op } => (field, op.as_str(), None),
        Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
            for c in predicates {
                walk(c, kind, out);
            }
            return;
        }
    };
    if let Err(problem) = contract::check_leaf(kind, field, op, lit.map(Literal::kind)) {
        out.push(PredicateProblem {
            problem,
            field: field.clone(),
            op: op.to_owned(),
            value: match lit {
                Some(Literal::Str(s)) => Some(s.clone()),
                _ => None,
            },
        });
    }
}

/// Returns true when the predicate is inside the evaluable subset for `kind`: every field is one
/// the symptom produces, every literal has the field's type and domain, arrays are only tested
/// for truthiness.
pub fn is_well_formed(predicate: &Predicate, kind: SymptomKind) -> bool {
    check_predicate(predicate, kind).is_empty()
}
