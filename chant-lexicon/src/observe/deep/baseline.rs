//! The accepted baseline: deviations an env has accepted as permanent facts, subtracted from
//! every deep report by core, above the reader.
//!
//! The document is `<member prefix><env>/observation-baseline.json` on the ledger branch
//! (DESIGN.md section 15): `{version: 1, env, accepted: [{entity, path, value, acceptedAt,
//! acceptedBy}]}`. Acceptance is **value-bound**: a path whose live value is the accepted one is
//! reported as baselined and stops alerting; a live value that moved away from it is reported
//! again, with all three values (declared, live, baseline). Everything here is pure; reading and
//! writing the document is the project's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{BaselinedPath, ComponentDeep, EntityDeep};

/// The baseline document's file name under the env's directory on the ledger branch.
pub const FILE: &str = "observation-baseline.json";

/// The version this chant writes and reads.
pub const VERSION: u32 = 1;

/// One accepted path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Accepted {
    /// The entity's name.
    pub entity: String,
    /// The path, in the grammar of [`super::path`].
    pub path: String,
    /// The accepted live value (`null` for an accepted absence).
    pub value: Value,
    /// When it was accepted (RFC 3339 UTC).
    pub accepted_at: String,
    /// Who accepted it.
    pub accepted_by: String,
}

/// An env's accepted baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    /// The document's version ([`VERSION`]).
    pub version: u32,
    /// The env.
    pub env: String,
    /// The accepted paths, sorted by entity and path.
    #[serde(default)]
    pub accepted: Vec<Accepted>,
}

/// A baseline document that cannot be used. Returned by [`Baseline::parse`].
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The document is not a baseline.
    #[error("{path}: not an observation baseline (ignored for this run; fix or clear it)")]
    Parse {
        /// Where the document is (`chant/lifecycle:staging/observation-baseline.json`).
        path: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The document names another env than the one whose path holds it.
    #[error("{path}: the baseline names env {named:?}, not {env:?} (ignored: its paths are reported as drift)")]
    OtherEnv {
        /// Where the document is.
        path: String,
        /// The env it names.
        named: String,
        /// The env whose path holds it.
        env: String,
    },
    /// The document was not written by chant's own command (`lifecycle diff --update-baseline`,
    /// `lifecycle baseline --clear`/`--reset`): the newest commit that changed it is not chant's
    /// document write.
    #[error(
        "{path}: not written by chant (commit {commit} by {author} changed it outside `lifecycle diff --update-baseline` / `lifecycle baseline`); ignored: its paths are reported as drift. Reset it with `chant lifecycle baseline {env} --reset`"
    )]
    Foreign {
        /// Where the document is.
        path: String,
        /// The env.
        env: String,
        /// The commit that wrote it.
        commit: String,
        /// That commit's author (`name <email>`).
        author: String,
    },
    /// The document has a version this chant does not read.
    #[error(
        "{path}: baseline version {found} is not supported (this chant reads version {VERSION}; ignored for this run)"
    )]
    Version {
        /// Where the document is.
        path: String,
        /// The version found.
        found: u32,
    },
}

/// A path the run reported that could be accepted: `(entity, path, live value)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The entity.
    pub entity: String,
    /// The path.
    pub path: String,
    /// The live value to accept (`null` when nothing is live at the path).
    pub value: Value,
}

impl Baseline {
    /// Creates an empty baseline for `env`.
    pub fn new(env: impl Into<String>) -> Self {
        Baseline { version: VERSION, env: env.into(), accepted: Vec::new() }
    }

    /// Parses a baseline document read from `path` (named in the error).
    ///
    /// # Errors
    ///
    /// [`BaselineError`] when it does not parse or has another version.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Self, BaselineError> {
        let baseline: Baseline =
            serde_json::from_slice(bytes).map_err(|source| BaselineError::Parse { path: path.to_owned(), source })?;
        if baseline.version != VERSION {
            return Err(BaselineError::Version { path: path.to_owned(), found: baseline.version });
        }
        Ok(baseline)
    }

    /// Parses the baseline document of `env` read from `path`: as [`Baseline::parse`], and the
    /// document must name `env`.
    ///
    /// # Errors
    ///
    /// [`BaselineError`]; [`BaselineError::OtherEnv`] when it names another env.
    pub fn parse_for(bytes: &[u8], path: &str, env: &str) -> Result<Self, BaselineError> {
        let baseline = Self::parse(bytes, path)?;
        if baseline.env != env {
            return Err(BaselineError::OtherEnv { path: path.to_owned(), named: baseline.env, env: env.to_owned() });
        }
        Ok(baseline)
    }

    /// How many paths of `components` the baseline subtracted (after [`Baseline::subtract_component`]).
    pub fn baselined_count(components: &[ComponentDeep]) -> u64 {
        components.iter().flat_map(|c| c.entities.iter()).map(|e| e.baselined.len() as u64).sum()
    }

    /// Returns the document as written: pretty JSON with a final newline.
    pub fn to_document(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Returns the accepted entry for `entity`'s `path`.
    pub fn get(&self, entity: &str, path: &str) -> Option<&Accepted> {
        self.accepted.iter().find(|a| a.entity == entity && a.path == path)
    }

    /// Accepts one value (replacing an earlier acceptance of the same path).
    pub fn accept(&mut self, candidate: &Candidate, at: &str, by: &str) {
        self.accepted.retain(|a| !(a.entity == candidate.entity && a.path == candidate.path));
        self.accepted.push(Accepted {
            entity: candidate.entity.clone(),
            path: candidate.path.clone(),
            value: candidate.value.clone(),
            accepted_at: at.to_owned(),
            accepted_by: by.to_owned(),
        });
        self.accepted.sort_by(|a, b| (&a.entity, &a.path).cmp(&(&b.entity, &b.path)));
    }

    /// Clears one accepted path; returns false when it was not accepted.
    pub fn clear(&mut self, entity: &str, path: &str) -> bool {
        let before = self.accepted.len();
        self.accepted.retain(|a| !(a.entity == entity && a.path == path));
        self.accepted.len() != before
    }

    /// Subtracts the baseline from one entity's report: a path at its accepted value moves to
    /// `baselined`; one that moved away stays, carrying the accepted value as `baseline`.
    pub fn subtract(&self, report: &mut EntityDeep) {
        let mut baselined = Vec::new();
        report.drift.retain_mut(|d| match self.get(&report.entity, &d.path) {
            Some(a) if a.value == d.live.clone().unwrap_or(Value::Null) => {
                baselined.push(BaselinedPath {
                    path: d.path.clone(),
                    value: a.value.clone(),
                    declared: Some(d.declared.clone()),
                });
                false
            }
            Some(a) => {
                d.baseline = Some(a.value.clone());
                true
            }
            None => true,
        });
        report.unclaimed.retain_mut(|u| match self.get(&report.entity, &u.path) {
            Some(a) if a.value == u.value => {
                baselined.push(BaselinedPath { path: u.path.clone(), value: a.value.clone(), declared: None });
                false
            }
            Some(a) => {
                u.baseline = Some(a.value.clone());
                true
            }
            None => true,
        });
        baselined.sort_by(|a, b| a.path.cmp(&b.path));
        report.baselined = baselined;
    }

    /// Subtracts the baseline from every entity of a component.
    pub fn subtract_component(&self, component: &mut ComponentDeep) {
        for entity in &mut component.entities {
            self.subtract(entity);
        }
    }
}

/// Returns every path a report shows that could be accepted (drift and unclaimed), in order.
pub fn candidates(components: &[ComponentDeep]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for entity in components.iter().flat_map(|c| c.entities.iter()) {
        for d in &entity.drift {
            out.push(Candidate {
                entity: entity.entity.clone(),
                path: d.path.clone(),
                value: d.live.clone().unwrap_or(Value::Null),
            });
        }
        for u in &entity.unclaimed {
            out.push(Candidate { entity: entity.entity.clone(), path: u.path.clone(), value: u.value.clone() });
        }
    }
    out
}

/// Splits `<entity>.<path>` against the entity names a run reported (entity names may contain
/// dots, `public.users`): the longest entity name that is a prefix followed by `.` or `[`.
pub fn split_target<'a>(target: &'a str, entities: &[&str]) -> Option<(&'a str, &'a str)> {
    entities
        .iter()
        .filter(|e| {
            target.len() > e.len() && target.starts_with(**e) && matches!(target.as_bytes()[e.len()], b'.' | b'[')
        })
        .max_by_key(|e| e.len())
        .map(|e| {
            let rest = &target[e.len()..];
            (&target[..e.len()], rest.strip_prefix('.').unwrap_or(rest))
        })
}
