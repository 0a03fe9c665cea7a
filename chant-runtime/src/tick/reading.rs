//! What a predicate read: a rule's predicate written back in the DSL's words
//! (`eq(status, "drifted")`, fields in snake_case as the user wrote them), and, against one
//! symptom, every leaf with the value it read and whether it held. Pure.
//!
//! `tick --plan` shows the DSL form beside each rule; `explain` shows each leaf's reading, so a
//! person sees why a rule fired from the recorded symptom alone.

use std::fmt::Write as _;

use serde::Serialize;

use chant_lexicon::model::contract::camel_to_snake;
use chant_lexicon::model::{FieldValue, Literal, Predicate, Symptom, evaluate};

/// One leaf of a predicate, read against a symptom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Leaf {
    /// The leaf in the DSL's words (`gt(adopt_count, 0)`).
    pub predicate: String,
    /// The field, as the DSL spells it (`adopt_count`).
    pub field: String,
    /// The value the field had (`"drifted"`, `2`, `3 item(s)`, `(absent)`).
    pub read: String,
    /// Whether the leaf held.
    pub holds: bool,
}

/// Writes `predicate` as the DSL spells it: `eq(status, "drifted")`, `truthy(components)`,
/// `all_of(p, q)`.
pub fn dsl(predicate: &Predicate) -> String {
    match predicate {
        Predicate::FieldComparison { field, op, value } => {
            format!("{}({}, {})", op.as_str(), camel_to_snake(field), literal(value))
        }
        Predicate::FieldTruthiness { field, op } => format!("{}({})", op.as_str(), camel_to_snake(field)),
        Predicate::AllOf { predicates } => format!("all_of({})", list(predicates)),
        Predicate::AnyOf { predicates } => format!("any_of({})", list(predicates)),
    }
}

fn list(predicates: &[Predicate]) -> String {
    predicates.iter().map(dsl).collect::<Vec<_>>().join(", ")
}

fn literal(value: &Literal) -> String {
    match value {
        Literal::Bool(b) => b.to_string(),
        Literal::Number(n) => n.to_string(),
        Literal::Str(s) => format!("{s:?}"),
    }
}

/// Reads every leaf of `predicate` against `symptom`, in the order written.
pub fn read(predicate: &Predicate, symptom: &dyn Symptom) -> Vec<Leaf> {
    let mut out = Vec::new();
    walk(predicate, symptom, &mut out);
    out
}

fn walk(predicate: &Predicate, symptom: &dyn Symptom, out: &mut Vec<Leaf>) {
    let field = match predicate {
        Predicate::FieldComparison { field, .. } | Predicate::FieldTruthiness { field, .. } => field,
        Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
            for p in predicates {
                walk(p, symptom, out);
            }
            return;
        }
    };
    out.push(Leaf {
        predicate: dsl(predicate),
        field: camel_to_snake(field),
        read: value_text(symptom.field(field)),
        holds: evaluate(predicate, symptom),
    });
}

/// Renders a field's value for a person.
fn value_text(value: Option<FieldValue<'_>>) -> String {
    match value {
        None => "(absent)".to_owned(),
        Some(FieldValue::Str(s)) => format!("{s:?}"),
        Some(FieldValue::Bool(b)) => b.to_string(),
        Some(FieldValue::List(n)) => format!("{n} item(s)"),
        Some(FieldValue::Num(n)) => {
            let mut s = String::new();
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                // Whole numbers below 2^53 print without a fraction, as the symptom wrote them.
                #[expect(clippy::cast_possible_truncation, reason = "whole and far below 2^53")]
                let whole = n as i64;
                let _ = write!(s, "{whole}");
            } else {
                let _ = write!(s, "{n}");
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lexicon::model::{ComparisonOp, ConvergeSymptom, EnvStatus, TruthinessOp};

    fn symptom() -> ConvergeSymptom {
        ConvergeSymptom {
            env: "site".into(),
            status: EnvStatus::Drifted,
            components: Vec::new(),
            create_count: 0,
            update_count: 1,
            delete_count: 0,
            adopt_count: 2,
            runtime_count: 0,
            unobserved_count: 0,
            unobserved_reasons: Vec::new(),
            total_count: 4,
            ambient_count: 0,
            dependency_unobserved_count: 0,
            artifact_changed_count: 0,
            baselined_count: 0,
        }
    }

    #[test]
    fn predicates_read_back_in_the_dsl_words_with_the_values_they_saw() {
        let p = Predicate::AllOf {
            predicates: vec![
                Predicate::FieldComparison {
                    field: "status".into(),
                    op: ComparisonOp::Eq,
                    value: Literal::Str("drifted".into()),
                },
                Predicate::FieldComparison {
                    field: "adoptCount".into(),
                    op: ComparisonOp::Gt,
                    value: Literal::Number(3.into()),
                },
                Predicate::FieldTruthiness { field: "components".into(), op: TruthinessOp::Falsy },
            ],
        };
        assert_eq!(dsl(&p), r#"all_of(eq(status, "drifted"), gt(adopt_count, 3), falsy(components))"#);
        let leaves = read(&p, &symptom());
        let got: Vec<(&str, &str, bool)> =
            leaves.iter().map(|l| (l.field.as_str(), l.read.as_str(), l.holds)).collect();
        assert_eq!(
            got,
            vec![("status", "\"drifted\"", true), ("adopt_count", "2", false), ("components", "0 item(s)", true)]
        );
        assert!(!evaluate(&p, &symptom()));
        let missing = Predicate::FieldTruthiness { field: "nope".into(), op: TruthinessOp::Truthy };
        assert_eq!(read(&missing, &symptom())[0].read, "(absent)");
    }
}
