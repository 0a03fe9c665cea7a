//! The **diff** of an env: how its live estate differs from its declaration, as one document —
//! the status rows and change sets a tick derives its symptom from ([`Project::assess`]), the
//! health word, what each lexicon asked (`resources.queried`), the text changes of created and
//! updated entities ([`text`]), and the estate sections past the declaration (dependencies,
//! ambient resources and their kinds, artifacts against the last snapshot).
//!
//! `lifecycle diff --live --json` prints this document and the dashboard's `/envs/{env}/diff`
//! serves it: both build it here, so the two can never carry different keys. Serialised:
//! `{version, env, status, health, components, changeSets, symptom, resources: {<lexicon>:
//! {queried}}, textChanges?, dependencies, ambient, ambientKinds, artifacts}`.

pub use crate::textdiff as text;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::project::{self, Project};
use crate::tick::health::HealthState;
use chant_lexicon::model::{ComponentRow, ConvergeSymptom, EnvStatus};
use chant_lexicon::observe::estate::{Ambient, ArtifactDiff, ArtifactListing, Dependencies, Reading};
use chant_lexicon::observe::{ChangeAction, ChangeSet, EnvAssessment};

pub use text::{TextChange, text_change};

/// The diff of one env: what `lifecycle diff --json` prints and the dashboard serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    /// The document's version.
    pub version: u32,
    /// The env.
    pub env: String,
    /// The env's status (the worst row), in the rules' words.
    pub status: EnvStatus,
    /// The same, in the health vocabulary (`in-sync` for `reconciled`).
    pub health: HealthState,
    /// The status rows: exactly what a tick records as `components`.
    pub components: Vec<ComponentRow>,
    /// One change set per component, in the order of `components`.
    pub change_sets: Vec<ChangeSet>,
    /// The symptom a tick's rules would read.
    pub symptom: ConvergeSymptom,
    /// Per lexicon, what the observation asked: `{<lexicon>: {queried: {<entity>: <address>}}}`
    /// (the seed's `resources.queried`); each change-set row, unobserved ones included, carries
    /// its own address as `queried` too.
    pub resources: BTreeMap<String, LexiconResources>,
    /// The text diffs of created and updated entities whose lexicon keeps their content.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub text_changes: Vec<TextChange>,
    /// Per lexicon, what the estate references and does not declare (`null`: the lexicon has no
    /// such reader; `{"error": ...}`: it failed).
    pub dependencies: BTreeMap<String, Reading<Dependencies>>,
    /// Per lexicon, the resources nothing declares and nothing references.
    pub ambient: BTreeMap<String, Reading<Ambient>>,
    /// Per lexicon, the kinds of which ambient resources are possible.
    pub ambient_kinds: BTreeMap<String, Vec<String>>,
    /// Per lexicon, the artifacts against the last snapshot (never a create or a delete).
    pub artifacts: BTreeMap<String, Reading<ArtifactDiff>>,
    /// The artifact listings read now, per lexicon: what `--snapshot-artifacts` records.
    #[serde(skip)]
    pub artifact_listings: BTreeMap<String, ArtifactListing>,
}

/// What one lexicon's observation asked, in [`Diff::resources`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LexiconResources {
    /// Entity name -> the address actually asked (a path, a DSN without its password).
    pub queried: BTreeMap<String, String>,
}

/// What a diff answers a gate in CI, worst first: the answer is incomplete, or something is to
/// change, or nothing differs. Ordered by severity (`Same < Differs < Unobserved`), so the worst of
/// several answers is their `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing is unobserved and nothing is to be created, updated or deleted.
    Same,
    /// Something is to be created, updated or deleted (and everything was observed).
    Differs,
    /// Something is unobserved: the answer is incomplete, which outranks a change.
    Unobserved,
}

impl Diff {
    /// Returns the diff's [`Verdict`]: `Unobserved` when any entry is unobserved, else `Differs`
    /// when any is to be created, updated or deleted, else `Same`.
    pub fn verdict(&self) -> Verdict {
        let entries = || self.change_sets.iter().flat_map(|cs| cs.entries.iter());
        if entries().any(|e| e.action == ChangeAction::Unobserved) {
            Verdict::Unobserved
        } else if entries()
            .any(|e| matches!(e.action, ChangeAction::Create | ChangeAction::Update | ChangeAction::Delete))
        {
            Verdict::Differs
        } else {
            Verdict::Same
        }
    }
}

/// Returns the member whose ledger paths hold `env`'s records: that of the first op in this
/// binary bound to `env` (none in a flat layout or the stock binary).
pub fn member_of(project: &Project, env: &str) -> Option<String> {
    project.catalog.ops().find(|o| o.env.as_deref() == Some(env)).and_then(|o| o.member.clone())
}

/// Computes the live diff of `env`, through [`Project::assess`] (what a tick uses).
///
/// # Errors
///
/// Declaration and ledger errors.
pub fn diff(project: &Project, member: Option<&str>, env: &str) -> Result<Diff, project::Error> {
    diff_of(project, member, env, project.assess(member, env)?)
}

/// Builds the diff of `env` from an assessment already made.
///
/// # Errors
///
/// Declaration and ledger errors binding the lexicons again for their texts and estate.
pub fn diff_of(
    project: &Project,
    member: Option<&str>,
    env: &str,
    assessment: EnvAssessment,
) -> Result<Diff, project::Error> {
    let mut text_changes = Vec::new();
    let lexicons = project.lexicons(member, env)?;
    for cs in &assessment.change_sets {
        let Some(lexicon) = lexicons.iter().find(|l| l.name() == cs.component) else { continue };
        for entry in cs.entries.iter().filter(|e| matches!(e.action, ChangeAction::Create | ChangeAction::Update)) {
            if let Some(change) =
                lexicon.lexicon().texts(&entry.name).and_then(|t| text_change(&cs.component, &entry.name, &t))
            {
                text_changes.push(change);
            }
        }
    }
    let resources = assessment
        .change_sets
        .iter()
        .map(|cs| {
            let queried = cs
                .entries
                .iter()
                .filter_map(|e| e.queried.as_deref().map(|q| (e.name.clone(), q.to_owned())))
                .collect();
            (cs.component.clone(), LexiconResources { queried })
        })
        .collect();
    let estate = chant_lexicon::estate::env_estate(&project.ledger, member, env, &lexicons).map_err(|e| {
        project::Error::Declared { env: env.to_owned(), lexicon: "estate".to_owned(), source: Box::new(e) }
    })?;
    let mut dependencies = BTreeMap::new();
    let mut ambient = BTreeMap::new();
    let mut ambient_kinds = BTreeMap::new();
    let mut artifacts = BTreeMap::new();
    for (name, lexicon) in &estate.lexicons {
        dependencies.insert(name.clone(), lexicon.dependencies.clone());
        ambient.insert(name.clone(), lexicon.ambient.clone());
        ambient_kinds.insert(name.clone(), lexicon.ambient_kinds.clone());
        artifacts.insert(name.clone(), lexicon.artifacts.clone());
    }
    Ok(Diff {
        artifact_listings: estate.listings,
        dependencies,
        ambient,
        ambient_kinds,
        artifacts,
        version: 1,
        env: env.to_owned(),
        status: assessment.symptom.status,
        health: HealthState::of_env_status(assessment.symptom.status),
        components: assessment.symptom.components.clone(),
        change_sets: assessment.change_sets,
        symptom: assessment.symptom,
        resources,
        text_changes,
    })
}
