//! The resource-mode observer: the read-only step (`observe: ...`) whose reading a tick plans
//! from, run and parsed. A reading that cannot be trusted (the observer failed, printed something
//! other than `{resources: [{name, status, detail?}]}`, named a resource twice) is an
//! [`ObserveError`]: the tick records it and converges nothing.

use crate::project::{self, Project};
use chant_lexicon::model::{ResourceStatus, ResourceSymptom, Step};

/// Why a tick's observation cannot be trusted. Returned by [`super::observe`] and
/// [`parse_observation`]; the tick records its text as the record's `error`.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// The env's lexicons could not be assessed (a declaration or ledger error).
    #[error("{}", .0.chain())]
    Assess(project::Error),
    /// An estate reader a rule reads a count of failed (`ambientCount` and the like).
    #[error("{0}")]
    Estate(String),
    /// A `${VAR}` in the observer's command is unset or malformed.
    #[error("{0}")]
    Expand(#[from] chant_lexicon::model::template::ExpandError),
    /// The observer could not be started.
    #[error("the observer could not start: {0}")]
    Start(chant_store::process::Error),
    /// The observer ended other than with exit 0.
    #[error("the observer step failed ({how}): {stderr}")]
    Failed {
        /// How it ended (`exit 1`, `timed out after 2m`).
        how: String,
        /// The first line of its stderr, sanitised.
        stderr: String,
    },
    /// A lexicon's observer step failed.
    #[error("{}", chant_store::error::chain(&**.0))]
    Registered(chant_lexicon::steps::StepRunError),
    /// The step is no observer this binary can run: a built-in that does not observe, or a kind
    /// no linked lexicon registers.
    #[error("the observer `{0}` is not available in this binary")]
    Unavailable(String),
    /// Its stdout is not JSON.
    #[error("the observer step's stdout is not JSON: {0}")]
    NotJson(String),
    /// Its reading has no `resources` array.
    #[error(
        "the observer step returned no `resources` array: it must print {{\"resources\": [{{\"name\", \"status\"}}]}}"
    )]
    NoResources,
    /// An entry has no name.
    #[error("the observer step's resources[{0}] has no name")]
    Nameless(usize),
    /// An entry's status is not one of the three.
    #[error("the observer step's resource \"{name}\" has status {status}: it must be in-sync, drifted or unknown")]
    BadStatus {
        /// The resource.
        name: String,
        /// The status as printed (`(none)` when absent).
        status: String,
    },
    /// A resource is named twice.
    #[error("the observer step reported resource \"{0}\" twice")]
    Duplicate(String),
}

/// Runs the observer `step` of a resource-mode tick in `env` and parses its reading.
pub(super) fn observe_resources(
    project: &Project,
    step: &Step,
    env: &str,
    member: Option<&str>,
) -> Result<Vec<ResourceSymptom>, ObserveError> {
    match step {
        Step::Shell { args, .. } => {
            let cmd = crate::runner::expand::expand(&args.cmd, "shell", "cmd", &crate::runner::expand::from_env)?;
            let mut spec = chant_store::process::Spec::shell(&cmd);
            spec.timeout = std::time::Duration::from_secs(120);
            spec.cwd = Some(project.root.clone());
            let out = chant_store::process::run(&spec).map_err(ObserveError::Start)?;
            if !out.success() {
                return Err(ObserveError::Failed {
                    how: out.describe(spec.timeout),
                    stderr: chant_lexicon::redact::sanitise(&out.stderr),
                });
            }
            parse_observation(&out.stdout, env)
        }
        Step::Apply { .. } | Step::Teardown { .. } | Step::HttpCheck { .. } | Step::Gate { .. } | Step::User { .. } => {
            Err(ObserveError::Unavailable(step.kind().to_owned()))
        }
        Step::Lexicon(registered) => {
            let kind = registered.kind.as_str();
            let found = chant_lexicon::steps::find(kind)
                .filter(|k| k.class == chant_lexicon::model::ClassKind::ReadOnly)
                .ok_or_else(|| ObserveError::Unavailable(kind.to_owned()))?;
            let from_env = crate::runner::expand::from_env;
            let input = chant_lexicon::steps::StepInput {
                kind,
                args: &registered.args,
                root: &project.root,
                member,
                resource: None,
                var: &from_env,
            };
            let v = (found.run)(&input).map_err(ObserveError::Registered)?;
            parse_observation(&v.to_string(), env)
        }
    }
}

/// Parses an observer's reading (`{resources: [{name, status, detail?}]}`), refusing a malformed
/// one: no array, a nameless entry, an unknown status, a duplicate name.
///
/// # Errors
///
/// [`ObserveError`] naming what is wrong.
pub fn parse_observation(stdout: &str, env: &str) -> Result<Vec<ResourceSymptom>, ObserveError> {
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|_| ObserveError::NotJson(stdout.chars().take(120).collect::<String>()))?;
    let Some(items) = v.get("resources").and_then(serde_json::Value::as_array) else {
        return Err(ObserveError::NoResources);
    };
    let mut out: Vec<ResourceSymptom> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = item.get("name").and_then(serde_json::Value::as_str).filter(|n| !n.is_empty());
        let Some(name) = name else { return Err(ObserveError::Nameless(i)) };
        let status = match item.get("status").and_then(serde_json::Value::as_str) {
            Some("in-sync") => ResourceStatus::InSync,
            Some("drifted") => ResourceStatus::Drifted,
            Some("unknown") => ResourceStatus::Unknown,
            _ => {
                return Err(ObserveError::BadStatus {
                    name: name.to_owned(),
                    status: item.get("status").map(ToString::to_string).unwrap_or_else(|| "(none)".into()),
                });
            }
        };
        if out.iter().any(|r| r.resource == name) {
            return Err(ObserveError::Duplicate(name.to_owned()));
        }
        let detail = item.get("detail").and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
        let readings = item.get("readings");
        let reading = |k: &str| readings.and_then(|r| r.get(k)).and_then(serde_json::Value::as_u64);
        out.push(ResourceSymptom {
            env: env.to_owned(),
            resource: name.to_owned(),
            status,
            detail,
            mem_mb: reading("memMb"),
            cpu_percent: reading("cpuPercent"),
            file_age_secs: reading("fileAgeSecs"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_observation;

    #[test]
    fn parses_and_refuses_readings() {
        let ok = parse_observation(
            r#"{"resources":[{"name":"app","status":"drifted","detail":"stopped"},{"name":"hud","status":"in-sync"}]}"#,
            "box",
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].detail, "stopped");
        let read = parse_observation(
            r#"{"resources":[{"name":"app","status":"drifted","readings":{"memMb":250,"cpuPercent":3,"fileAgeSecs":"x"}}]}"#,
            "box",
        )
        .unwrap();
        assert_eq!((read[0].mem_mb, read[0].cpu_percent, read[0].file_age_secs), (Some(250), Some(3), None));
        for (bad, needle) in [
            ("not json", "not JSON"),
            (r#"{"items":[]}"#, "no `resources` array"),
            (r#"{"resources":[{"status":"drifted"}]}"#, "has no name"),
            (r#"{"resources":[{"name":"a","status":"broken"}]}"#, "must be in-sync"),
            (r#"{"resources":[{"name":"a","status":"drifted"},{"name":"a","status":"drifted"}]}"#, "twice"),
        ] {
            assert!(parse_observation(bad, "box").unwrap_err().to_string().contains(needle), "{bad}");
        }
    }
}
