//! The catalog: the op.json documents embedded in this binary, parsed and re-validated as one
//! set before anything runs.
//!
//! The registry hands over raw embedded JSON; the catalog is the only path from there to a typed
//! [`OpDocument`], so every op the runtime touches has passed the same checks `chant ops check`
//! applies to files.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::OpDocument;
use crate::model::validate::{self, Problem};

/// The ops of this binary, validated.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    ops: BTreeMap<String, OpDocument>,
}

/// The embedded op.json documents did not validate.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} embedded op.json document(s) are invalid:\n{}", .0.len(), render(.0))]
pub struct InvalidCatalog(pub Vec<Problem>);

fn render(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

impl Catalog {
    /// Loads and validates every op registered in this binary.
    ///
    /// # Errors
    ///
    /// Returns every problem when the set does not validate.
    pub fn embedded() -> Result<Catalog, InvalidCatalog> {
        let entries = crate::registry::ops();
        let origins: Vec<String> = entries.iter().map(|o| format!("embedded:{}/{}", o.krate, o.name)).collect();
        Catalog::from_texts(origins.iter().map(String::as_str).zip(entries.iter().map(|o| o.json)))
    }

    /// Loads and validates a set of op.json texts given as `(origin, text)` pairs.
    ///
    /// # Errors
    ///
    /// Returns every problem when the set does not validate.
    pub fn from_texts<'a>(inputs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Catalog, InvalidCatalog> {
        let report = validate::check_set(inputs);
        if !report.is_valid() {
            return Err(InvalidCatalog(report.problems));
        }
        Ok(Catalog { ops: report.documents.into_iter().map(|(_, d)| (d.name.to_string(), d)).collect() })
    }

    /// Returns the op named `name`.
    pub fn get(&self, name: &str) -> Option<&OpDocument> {
        self.ops.get(name)
    }

    /// Returns every op, sorted by name.
    pub fn ops(&self) -> impl Iterator<Item = &OpDocument> {
        self.ops.values()
    }

    /// Returns the ConvergeOps, sorted by name.
    pub fn converge_ops(&self) -> impl Iterator<Item = &OpDocument> {
        self.ops.values().filter(|d| d.is_converge())
    }

    /// Returns true when the binary carries no ops.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// Renders the catalog as an aligned table, one op per line.
pub fn render_table(catalog: &Catalog) -> String {
    let mut rows =
        vec![["NAME".to_owned(), "KIND".into(), "CLASS".into(), "ENV".into(), "SCHEDULE".into(), "RULES".into()]];
    for d in catalog.ops() {
        let (kind, rules) = match &d.converge {
            Some(c) => (
                if c.observe.is_some() { "converge (resource)" } else { "converge" },
                format!("{} (dial {}, budget {})", c.rules.len(), c.dial.as_str(), c.budget),
            ),
            None => ("op", "-".to_owned()),
        };
        let schedule = d
            .schedule
            .as_ref()
            .map(|s| match &s.tz {
                Some(tz) => format!("{} ({tz})", s.cron),
                None => s.cron.clone(),
            })
            .unwrap_or_else(|| "-".into());
        rows.push([
            d.name.to_string(),
            kind.into(),
            d.class.as_str().into(),
            d.env.as_ref().map_or_else(|| "-".into(), ToString::to_string),
            schedule,
            rules,
        ]);
    }
    let mut widths = [0usize; 6];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(widths.iter()).enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
