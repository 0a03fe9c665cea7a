//! Symptoms: the typed records a rule table is evaluated against.
//!
//! A [`ConvergeSymptom`] says how an environment differs from its declaration (environment mode);
//! a [`ResourceSymptom`] says the same of one resource an observer step reported (resource mode).
//! Their fields and value domains are fixed by [`super::contract`]; a test holds the two to each
//! other.

use serde::{Deserialize, Serialize};

use super::rule::{FieldValue, Symptom};

/// The verdict on an environment or one of its components, most cautious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvStatus {
    /// Something declared could not be observed.
    Unknown,
    /// Recorded, and the live state differs from the declaration.
    Drifted,
    /// Recorded, but nothing declared is live.
    Stale,
    /// Never applied.
    Unrecorded,
    /// Recorded and in sync.
    Reconciled,
}

impl EnvStatus {
    /// Returns the status as written in records (`drifted`).
    pub fn as_str(self) -> &'static str {
        match self {
            EnvStatus::Unknown => "unknown",
            EnvStatus::Drifted => "drifted",
            EnvStatus::Stale => "stale",
            EnvStatus::Unrecorded => "unrecorded",
            EnvStatus::Reconciled => "reconciled",
        }
    }

    /// Returns the worst (most cautious) of several statuses; `reconciled` for none.
    pub fn worst(statuses: impl IntoIterator<Item = EnvStatus>) -> EnvStatus {
        statuses.into_iter().min().unwrap_or(EnvStatus::Reconciled)
    }
}

/// Why a declared entity was not observed. The set is total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnobservedReason {
    /// The environment resolves to no concrete target.
    NoBinding,
    /// No usable credentials for the target.
    NoCredentials,
    /// The lexicon has no reader for this kind of entity.
    UnsupportedKind,
    /// The provider was reached and the read failed.
    ReadFailed,
    /// Reached, but withheld by the owned-only filter.
    Filtered,
}

impl UnobservedReason {
    /// Every reason, in the stable order `unobservedReasons` uses (sorted by their human text).
    pub const ALL: [UnobservedReason; 5] = [
        UnobservedReason::NoBinding,
        UnobservedReason::NoCredentials,
        UnobservedReason::UnsupportedKind,
        UnobservedReason::ReadFailed,
        UnobservedReason::Filtered,
    ];

    /// Returns the reason's code (`read-failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            UnobservedReason::NoBinding => "no-binding",
            UnobservedReason::NoCredentials => "no-credentials",
            UnobservedReason::UnsupportedKind => "unsupported-kind",
            UnobservedReason::ReadFailed => "read-failed",
            UnobservedReason::Filtered => "filtered",
        }
    }

    /// Returns the reason in words (`read failed`).
    pub fn text(self) -> &'static str {
        match self {
            UnobservedReason::NoBinding => "no binding for this environment",
            UnobservedReason::NoCredentials => "no credentials",
            UnobservedReason::UnsupportedKind => "no reader for this resource kind",
            UnobservedReason::ReadFailed => "read failed",
            UnobservedReason::Filtered => "withheld by the owned filter",
        }
    }
}

/// The status row of one component (a lexicon binding of the env).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentRow {
    /// The component's name (the binding, e.g. `files`).
    pub component: String,
    /// The env.
    pub env: String,
    /// Whether a successful apply of this binding is on the ledger.
    pub recorded: bool,
    /// Whether at least one declared entity was observed present.
    pub live: bool,
    /// The row's verdict.
    pub reconciliation: EnvStatus,
    /// One line of explanation.
    pub detail: String,
}

impl ComponentRow {
    /// Returns the row for a person, `drifted: 1 update (app.conf)`: its status, then its detail
    /// without the status again when the detail already opens with it.
    pub fn status_line(&self) -> String {
        let status = self.reconciliation.as_str();
        let detail = self.detail.strip_prefix(status).and_then(|d| d.strip_prefix(": ")).unwrap_or(&self.detail);
        format!("{status}: {detail}")
    }
}

/// How an environment differs from its declaration, as one record per tick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConvergeSymptom {
    /// The env.
    pub env: String,
    /// The worst row's status.
    pub status: EnvStatus,
    /// The status rows.
    pub components: Vec<ComponentRow>,
    /// Change-set `create` entries.
    pub create_count: u64,
    /// Change-set `update` entries.
    pub update_count: u64,
    /// Change-set `delete` entries.
    pub delete_count: u64,
    /// Change-set `adopt` entries.
    pub adopt_count: u64,
    /// Change-set `runtime` entries.
    pub runtime_count: u64,
    /// Change-set `unobserved` entries.
    pub unobserved_count: u64,
    /// The distinct reasons of the unobserved entries, in [`UnobservedReason::ALL`] order.
    pub unobserved_reasons: Vec<UnobservedReason>,
    /// Every change-set entry, `noop` included.
    pub total_count: u64,
    /// Resources of the declared kinds that nothing declares and nothing references (read only
    /// when a rule reads it; absent from records when zero, so older records read and re-encode
    /// unchanged).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ambient_count: u64,
    /// Resources the estate references that could not be read (dependency holes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dependency_unobserved_count: u64,
    /// Artifacts added, removed or changed since the last snapshot.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub artifact_changed_count: u64,
    /// Deep paths that differ from the declaration and that the env's accepted baseline
    /// subtracted (not counted as drift, but always counted here and shown as `baselined=N`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub baselined_count: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The verdict on one resource an observer reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceStatus {
    /// As declared.
    InSync,
    /// Differs from its declaration.
    Drifted,
    /// Could not be observed.
    Unknown,
}

impl ResourceStatus {
    /// Returns the status as written (`in-sync`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceStatus::InSync => "in-sync",
            ResourceStatus::Drifted => "drifted",
            ResourceStatus::Unknown => "unknown",
        }
    }
}

/// One resource's symptom in resource mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSymptom {
    /// The env.
    pub env: String,
    /// The resource's name.
    pub resource: String,
    /// Its verdict.
    pub status: ResourceStatus,
    /// The observer's line, or empty.
    pub detail: String,
    /// The resident memory of its process tree in MB, when the observer read it (a box
    /// service's resource checks).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "memMb")]
    pub mem_mb: Option<u64>,
    /// The CPU its process tree used, in percent of one core, when the observer read it.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "cpuPercent")]
    pub cpu_percent: Option<u64>,
    /// The age of the file the service keeps fresh, in seconds, when the observer read it.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "fileAgeSecs")]
    pub file_age_secs: Option<u64>,
}

impl ResourceSymptom {
    /// A resource's symptom without readings.
    pub fn new(
        env: impl Into<String>,
        resource: impl Into<String>,
        status: ResourceStatus,
        detail: impl Into<String>,
    ) -> Self {
        ResourceSymptom {
            env: env.into(),
            resource: resource.into(),
            status,
            detail: detail.into(),
            mem_mb: None,
            cpu_percent: None,
            file_age_secs: None,
        }
    }
}

fn count(n: u64) -> FieldValue<'static> {
    // Counts are far below 2^53, so the conversion is exact.
    #[expect(clippy::cast_precision_loss, reason = "counts stay far below 2^53, where f64 is exact")]
    FieldValue::Num(n as f64)
}

impl Symptom for ConvergeSymptom {
    fn field(&self, name: &str) -> Option<FieldValue<'_>> {
        Some(match name {
            "env" => FieldValue::Str(&self.env),
            "status" => FieldValue::Str(self.status.as_str()),
            "components" => FieldValue::List(self.components.len()),
            "createCount" => count(self.create_count),
            "updateCount" => count(self.update_count),
            "deleteCount" => count(self.delete_count),
            "adoptCount" => count(self.adopt_count),
            "runtimeCount" => count(self.runtime_count),
            "unobservedCount" => count(self.unobserved_count),
            "unobservedReasons" => FieldValue::List(self.unobserved_reasons.len()),
            "totalCount" => count(self.total_count),
            "ambientCount" => count(self.ambient_count),
            "dependencyUnobservedCount" => count(self.dependency_unobserved_count),
            "artifactChangedCount" => count(self.artifact_changed_count),
            _ => return None,
        })
    }
}

impl Symptom for ResourceSymptom {
    fn field(&self, name: &str) -> Option<FieldValue<'_>> {
        Some(match name {
            "env" => FieldValue::Str(&self.env),
            "resource" => FieldValue::Str(&self.resource),
            "status" => FieldValue::Str(self.status.as_str()),
            "detail" => FieldValue::Str(&self.detail),
            "memMb" => count(self.mem_mb?),
            "cpuPercent" => count(self.cpu_percent?),
            "fileAgeSecs" => count(self.file_age_secs?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_says_the_status_once() {
        let row = |detail: &str| ComponentRow {
            component: "files".into(),
            env: "site".into(),
            recorded: true,
            live: true,
            reconciliation: EnvStatus::Drifted,
            detail: detail.into(),
        };
        assert_eq!(row("drifted: 1 update (app.conf)").status_line(), "drifted: 1 update (app.conf)");
        assert_eq!(row("1 update (app.conf)").status_line(), "drifted: 1 update (app.conf)");
        assert_eq!(row("drifted-ish").status_line(), "drifted: drifted-ish", "only a whole word is the status");
    }
}
