//! The catalog: the op.json documents embedded in this binary, parsed and re-validated as one
//! set before anything runs.
//!
//! The registry hands over raw embedded JSON; the catalog is the only path from there to a typed
//! [`OpDocument`], so every op the runtime touches has passed the same checks `chant ops check`
//! applies to files.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chant_lexicon::model::validate::{self, Problem};
use chant_lexicon::model::{OpDocument, Step};

/// The ops of this binary, validated. A project's catalog also holds every ConvergeOp reading an
/// env's symptom, and every `apply` and `teardown` step, to its env being declared in the binary
/// ([`Catalog::embedded_declared`]): an env nobody declared is never reconciled, applied or torn
/// down.
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

    /// [`Catalog::embedded`], and refuses an op naming an env that is not among `declared` (the
    /// envs this binary registers a declaration for; see [`Catalog::undeclared`]): what a project
    /// loads before anything runs.
    ///
    /// # Errors
    ///
    /// Returns every problem when the set does not validate, or an env is undeclared.
    pub fn embedded_declared(declared: &[&str]) -> Result<Catalog, InvalidCatalog> {
        let catalog = Catalog::embedded()?;
        let entries = crate::registry::ops();
        let origin_of = |name: &str| {
            entries
                .iter()
                .find(|o| o.name == name)
                .map_or_else(|| format!("embedded:{name}"), |o| format!("embedded:{}/{}", o.krate, o.name))
        };
        let problems = catalog.undeclared(declared, &origin_of);
        if problems.is_empty() { Ok(catalog) } else { Err(InvalidCatalog(problems)) }
    }

    /// Returns a problem for every op that names an env with no declaration among `declared`:
    ///
    /// - a ConvergeOp whose rules read the env's symptom (no `observe:` step supplies the
    ///   verdicts): its ticks would find nothing declared and call the env `reconciled`, whatever
    ///   is there;
    /// - an `apply` or `teardown` step whose env is written out (no `${VAR}`): it would change
    ///   nothing and report success, and a tick that dispatched it would claim a repair.
    ///
    /// Each names the op, the step, the env and the closest declared env.
    pub fn undeclared(&self, declared: &[&str], origin_of: &dyn Fn(&str) -> String) -> Vec<Problem> {
        let hint = |env: &str| {
            chant_lexicon::model::contract::did_you_mean(env, declared.iter().copied())
                .map(|s| format!(" (did you mean \"{s}\"?)"))
                .unwrap_or_default()
        };
        let closest = |env: &str| {
            declared
                .iter()
                .min_by_key(|d| chant_lexicon::model::contract::levenshtein(env, d))
                .map_or_else(|| " (it declares none)".to_owned(), |d| format!(" (the closest declared env is \"{d}\")"))
        };
        let problem = |d: &OpDocument, message: String| Problem {
            origin: origin_of(&d.name),
            op: Some(d.name.to_string()),
            rule: None,
            message,
        };
        let mut problems = Vec::new();
        for d in self.ops.values() {
            if let (Some(env), Some(c)) = (d.env.as_deref(), d.converge.as_ref())
                && c.observe.is_none()
                && !declared.contains(&env)
            {
                problems.push(problem(d, format!(
                    "env \"{env}\" has no declaration in this binary{}, so its ticks would find nothing declared and call it reconciled; register one (`inventory::submit! {{ DeclaredEnv::new(\"{env}\", ...) }}`), or give the ConvergeOp an `observe:` step that supplies the verdicts",
                    hint(env)
                )));
            }
            let phases =
                d.phases.iter().map(|p| ("phase", p)).chain(d.on_failure.iter().map(|p| ("on_failure phase", p)));
            for (which, phase) in phases {
                for (i, step) in phase.steps.iter().enumerate() {
                    let env = match step {
                        Step::Apply { args, .. } => &args.env,
                        Step::Teardown { args, .. } => &args.env,
                        _ => continue,
                    };
                    if env.contains("${") || declared.contains(&env.as_str()) {
                        continue;
                    }
                    problems.push(problem(d, format!(
                        "step {} of {which} \"{}\", `{}(env = \"{env}\")`, names an env with no declaration in this binary{}; it would {} nothing and say it succeeded. Name a declared env, or register a declaration for \"{env}\" (`inventory::submit! {{ DeclaredEnv::new(\"{env}\", ...) }}`)",
                        i + 1,
                        phase.name,
                        step.kind(),
                        closest(env),
                        if matches!(step, Step::Apply { .. }) { "apply" } else { "tear down" },
                    )));
                }
            }
        }
        problems
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Catalog;

    fn converge(name: &str, env: &str, observe: bool) -> String {
        let mut doc = json!({"version": 1, "name": name, "overview": "o", "env": env,
            "labels": {"Converge": "true", "Dial": "observe", "Env": env},
            "class": "read-only", "phases": [],
            "converge": {"dial": "observe", "budget": 3, "rules": [{"id": "r", "why": "w",
                "when": {"kind": "field-comparison", "field": "status", "op": "eq", "value": "drifted"},
                "then": {"kind": "report", "reason": "drifted"}}]}});
        if observe {
            doc["converge"]["observe"] = json!({"kind": "shell", "class": "read-only", "args": {"cmd": "echo '{\"resources\":[]}'", "class": "read_only"}});
        }
        doc.to_string()
    }

    #[test]
    fn a_converge_op_on_an_undeclared_env_is_refused_unless_its_observer_supplies_the_verdicts() {
        let texts = [converge("ghost-converge", "sitee", false), converge("watch-converge", "elsewhere", true)];
        let catalog = Catalog::from_texts([("a", texts[0].as_str()), ("b", texts[1].as_str())]).unwrap();
        let origin = |name: &str| format!("embedded:x/{name}");
        let problems = catalog.undeclared(&["site", "blind"], &origin);
        assert_eq!(problems.len(), 1, "{problems:?}");
        let text = problems[0].to_string();
        assert!(
            text.starts_with("embedded:x/ghost-converge: op \"ghost-converge\": env \"sitee\" has no declaration"),
            "{text}"
        );
        assert!(text.contains("did you mean \"site\"?") && text.contains("observe:"), "{text}");
        assert!(catalog.undeclared(&["sitee"], &origin).is_empty());
    }

    fn applying(name: &str, steps: serde_json::Value) -> String {
        json!({"version": 1, "name": name, "overview": "o", "class": "destructive",
            "phases": [{"name": "Apply", "steps": steps}]})
        .to_string()
    }

    #[test]
    fn an_apply_or_teardown_of_an_undeclared_env_is_refused_naming_the_step_and_the_closest_env() {
        let typo = applying(
            "db-apply",
            json!([{"kind": "apply", "class": "mutating", "args": {"env": "bd"}},
                   {"kind": "teardown", "class": "destructive", "args": {"env": "staging"}},
                   {"kind": "apply", "class": "mutating", "args": {"env": "${TARGET}"}}]),
        );
        let catalog = Catalog::from_texts([("a", typo.as_str())]).unwrap();
        let origin = |name: &str| format!("embedded:x/{name}");
        let problems = catalog.undeclared(&["db", "staging"], &origin);
        assert_eq!(problems.len(), 1, "a declared env and a variable are not refused: {problems:?}");
        let text = problems[0].to_string();
        assert!(text.starts_with("embedded:x/db-apply: op \"db-apply\": step 1 of phase \"Apply\""), "{text}");
        assert!(text.contains("`apply(env = \"bd\")`"), "{text}");
        assert!(text.contains("(the closest declared env is \"db\")"), "{text}");
        let gone = catalog.undeclared(&["db"], &origin);
        assert_eq!(gone.len(), 2, "{gone:?}");
        assert!(gone[1].to_string().contains("it would tear down nothing"), "{}", gone[1]);
    }
}
