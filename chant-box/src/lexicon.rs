//! The box services lexicon on the plugin interface: [`BoxLexicon`] is one member's box block
//! joined with its supervisor, and every box step and the operator's change stream go through it.
//!
//! - **describe**: one declared entity per non-optional service, with the property
//!   `state = in-sync`; a service the supervisor does not list is absent (a `create`), a listed one
//!   is present with the state [`judge`](super::judge) gives it (`in-sync`, or `drifted`: an
//!   `update`), and one that cannot be judged (no health URL, not running) is unobserved
//!   `read-failed`. An unreadable supervisor is a whole-lexicon failure. The supervisor carries no
//!   ownership marker, so every present service is `unknown` (no ownership channel).
//! - **ambient**: the services the supervisor lists that no box block declares (kind
//!   `service`), for `search --ambient` and `lifecycle diff --live`.
//! - **change stream**: the stand-in supervisor's, when it runs one ([`super::subscribe_changes`]).
//! - **apply**: defines the declared services and starts them ([`super::apply`], never deleting).
//!
//! The resource-mode reading of the `sprite_services_observe` step ([`BoxLexicon::reading`]),
//! a restart ([`BoxLexicon::restart`]) and `sprite_apply_services` ([`BoxLexicon::apply_services`])
//! are methods of the same lexicon. An env may also declare a member's box in env mode with
//! [`BoxServices`], registered like every other declaration.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ApplyOptions, BoxDeclaration, PROJECT_DIR_VAR, Settings, SpriteError};
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::estate::{Ambient, AmbientResource, StackStatus, TeardownPlan};
use chant_lexicon::observe::{
    ChangeSink, DeclaredEntity, EstateError, EstateHook, LastApply, Lexicon, LexiconError, Observation, Ownership,
    PresentResource, SubscribeError, Subscription, Unobserved,
};
use chant_lexicon::{
    Applied, BindError, Binding, BindingKey, Declaration, DeleteMode, EnvLexicon, Hook, HookError, Registration,
};

/// The lexicon's name: its status rows' component and its ledger path segment.
pub const LEXICON: &str = "box-services";

/// The one property a service is compared on.
const STATE: &str = "state";

/// The kind of every service, declared or ambient.
const AMBIENT_KIND: &str = "service";

/// What `describe_resources` queries, for the record.
const QUERIED: &str = "sprite-env services list";

fn from_env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// One member's box block joined with its supervisor.
pub struct BoxLexicon<'a> {
    env: String,
    root_text: String,
    member: Option<String>,
    declaration: BoxDeclaration,
    var: &'a dyn Fn(&str) -> Option<String>,
    settings: Settings,
    last_apply: LastApply,
}

impl<'a> BoxLexicon<'a> {
    /// Reads the box block of `member` from the workspace file in `root` and joins it with the
    /// supervisor chosen by the `CHANT_SPRITE_*` variables `var` looks up ([`Settings::from_env`]);
    /// `var` also expands `${VAR}` in commands, with `CHANT_PROJECT_DIR` defaulting to `root`.
    ///
    /// # Errors
    ///
    /// [`SpriteError::Declaration`] when the block cannot be read.
    pub fn open(
        root: &Path,
        member: Option<&str>,
        var: &'a dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SpriteError> {
        let declaration = BoxDeclaration::read(root, member)?;
        Ok(BoxLexicon::new(root, member, declaration, var))
    }

    /// Joins an already read block with its supervisor (see [`BoxLexicon::open`]).
    pub fn new(
        root: &Path,
        member: Option<&str>,
        declaration: BoxDeclaration,
        var: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut lexicon = BoxLexicon {
            env: String::new(),
            root_text: root.display().to_string(),
            member: member.map(str::to_owned),
            declaration,
            var,
            settings: Settings::default(),
            last_apply: LastApply::none(),
        };
        lexicon.settings = Settings::from_env(&|k| lexicon.var(k));
        lexicon
    }

    /// Looks a variable up, `CHANT_PROJECT_DIR` defaulting to the project root.
    fn var(&self, k: &str) -> Option<String> {
        (self.var)(k).or_else(|| (k == PROJECT_DIR_VAR).then(|| self.root_text.clone()))
    }

    /// Returns the box block.
    pub fn declaration(&self) -> &BoxDeclaration {
        &self.declaration
    }

    /// Returns the member whose block this is.
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// Returns the supervisor and its timings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Returns the resource-mode reading of every declared service (the output of the
    /// `sprite_services_observe` step): `{resources: [{name, status, detail}], skipped: [names]}`.
    pub fn reading(&self) -> Value {
        super::observe(&self.declaration, &self.settings, Path::new(&self.root_text))
    }

    /// Restarts `name` and waits for its health URL (the `sprite_service_restart` step).
    ///
    /// # Errors
    ///
    /// As [`super::restart`].
    pub fn restart(&self, name: &str) -> Result<Value, SpriteError> {
        super::restart(&self.declaration, name, &self.settings, &|k| self.var(k))
    }

    /// Defines the declared services through the supervisor (the `sprite_apply_services` step).
    ///
    /// # Errors
    ///
    /// As [`super::apply`].
    pub fn apply_services(&self, options: &ApplyOptions) -> Result<Value, SpriteError> {
        super::apply(&self.declaration, options, &self.settings, &|k| self.var(k))
    }
}

impl Lexicon for BoxLexicon<'_> {
    fn name(&self) -> &str {
        LEXICON
    }

    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        let listed = super::list(&self.settings)
            .map_err(|e| LexiconError::read_failed(LEXICON, "the supervisor could not be read", e))?;
        let mut observation = Observation::new();
        for entity in declared {
            observation.insert_queried(&entity.name, QUERIED);
            let Some(service) = self.declaration.get(&entity.name) else {
                let verdict = Unobserved::new(UnobservedReason::UnsupportedKind)
                    .detail("the box block declares no such service")
                    .queried(QUERIED);
                observation.insert_unobserved(&entity.name, verdict);
                continue;
            };
            let Some(l) = listed.iter().find(|l| l.name == service.name) else { continue };
            match super::judge(service, l, &self.settings) {
                ("unknown", detail) => observation.insert_unobserved(
                    &entity.name,
                    Unobserved::new(UnobservedReason::ReadFailed).kind("service").detail(detail).queried(QUERIED),
                ),
                (state, _) => observation.insert_present(
                    &entity.name,
                    PresentResource::new(Ownership::Unknown).kind("service").property(STATE, state),
                ),
            }
        }
        Ok(observation)
    }

    fn subscribe_changes(&self, sink: ChangeSink) -> Result<Subscription, SubscribeError> {
        super::subscribe_changes(sink).map_err(|e| SubscribeError::Unavailable(Box::new(e)))
    }

    // --- estate hooks ---

    /// The supervisor runs whatever it was told to, so a service no box block declares can be
    /// listed: `service` is the one kind of which ambient resources are possible.
    fn ambient_kinds(&self) -> Vec<String> {
        vec![AMBIENT_KIND.to_owned()]
    }

    /// The services the supervisor lists that the box block does not declare (optional ones
    /// included: declared, so not ambient), each with its listed status and command.
    fn observe_ambient(&self, _: &[DeclaredEntity], _: &Observation) -> Result<Ambient, EstateError> {
        let listed = super::list(&self.settings).map_err(|e| EstateError::failed(LEXICON, EstateHook::Ambient, e))?;
        let mut ambient = Ambient::default();
        for l in listed.into_iter().filter(|l| self.declaration.get(&l.name).is_none()) {
            let mut resource = AmbientResource::new(AMBIENT_KIND);
            if let Some(status) = l.status {
                resource = resource.property("status", status);
            }
            if let Some(cmd) = l.cmd {
                resource = resource.property("cmd", cmd);
            }
            ambient.resources.insert(l.name, resource);
        }
        Ok(ambient)
    }

    /// The lexicon removes nothing (it has no teardown), so its plan is empty and complete.
    fn teardown_owned(&self, _: &[DeclaredEntity]) -> Result<TeardownPlan, EstateError> {
        Ok(TeardownPlan::new())
    }

    fn stack_units(&self) -> Vec<String> {
        self.declaration.services().iter().map(|s| s.name.clone()).collect()
    }

    /// A service by name: absent when the supervisor does not list it; present and healthy when
    /// it is judged in sync (running, its health URL answering); present and unhealthy otherwise;
    /// unknown when the supervisor cannot be read. An undeclared listed service is healthy when
    /// running.
    fn describe_stack_status(&self, unit: &str) -> Result<StackStatus, EstateError> {
        let listed =
            super::list(&self.settings).map_err(|e| EstateError::failed(LEXICON, EstateHook::StackStatus, e))?;
        let Some(l) = listed.iter().find(|l| l.name == unit) else { return Ok(StackStatus::Absent) };
        let (healthy, detail) = match self.declaration.get(unit) {
            Some(service) => {
                let (state, detail) = super::judge(service, l, &self.settings);
                (state == "in-sync", detail)
            }
            None => {
                let state = l.status.clone().unwrap_or_else(|| "listed".into());
                (state == "running", format!("{state} (not declared)"))
            }
        };
        Ok(StackStatus::Present { healthy, detail: Some(detail) })
    }
}

/// What an env-mode apply of a box did, for the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BoxApplyRecord {
    /// The env.
    pub env: String,
    /// The component (`box-services`).
    pub component: String,
    /// The member whose block was applied.
    pub member: Option<String>,
    /// The services created or replaced.
    pub applied: Vec<String>,
    /// Every declared, non-optional service.
    pub owned: Vec<String>,
}

/// An env-mode apply record goes under `<env>/_apply/box-services`, in canonical JSON.
impl chant_store::ledger::Record for BoxApplyRecord {
    const KIND: chant_store::ledger::RecordKind = chant_store::ledger::RecordKind::Apply;
    const NAME: &'static str = "box-services apply";

    fn shard_key(&self, member: Option<&str>) -> Result<chant_store::ledger::ShardKey, chant_store::ledger::Error> {
        chant_store::ledger::ShardKey::apply(member, &self.env, &self.component)
    }
}

impl EnvLexicon for BoxLexicon<'static> {
    type Record = BoxApplyRecord;

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        Ok(self
            .declaration
            .services()
            .iter()
            .filter(|s| !s.optional)
            .map(|s| DeclaredEntity::new(&s.name).kind("service").property(STATE, "in-sync"))
            .collect())
    }

    fn last_apply(&self) -> LastApply {
        self.last_apply.clone()
    }

    fn apply(&self, mode: DeleteMode) -> Result<Applied<BoxApplyRecord>, HookError> {
        let _ = mode; // the box lexicon never deletes a service
        let options = ApplyOptions { only: None, start: true, restart: false };
        let result = self.apply_services(&options).map_err(|e| HookError::failed(LEXICON, Hook::Apply, e))?;
        let applied: Vec<String> = result
            .get("applied")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let owned = self.declaration.services().iter().filter(|s| !s.optional).map(|s| s.name.clone()).collect();
        let said = super::describe_services(&result);
        let record = BoxApplyRecord {
            env: self.env.clone(),
            component: LEXICON.to_owned(),
            member: self.member.clone(),
            applied,
            owned,
        };
        Ok(Applied::new(record).say(said))
    }
}

/// The env-mode declaration of a box: "the services of this member's box block", read from the
/// workspace file beside `chant.toml` when the env is bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxServices {
    member: Option<String>,
}

impl BoxServices {
    /// Declares the box block of `member`.
    pub fn of_member(member: impl Into<String>) -> Self {
        BoxServices { member: Some(member.into()) }
    }
}

impl Declaration for BoxServices {
    const LEXICON: &'static str = LEXICON;
    const BINDING_KEYS: &'static [BindingKey] = &[];
    type Lexicon = BoxLexicon<'static>;

    fn bind(&self, binding: &Binding<'_>, last: Option<BoxApplyRecord>) -> Result<BoxLexicon<'static>, BindError> {
        let root: PathBuf = binding.root().to_path_buf();
        let failed = |e: SpriteError| BindError::Failed {
            lexicon: LEXICON.to_owned(),
            env: binding.env().to_owned(),
            source: Box::new(e),
        };
        let mut lexicon = BoxLexicon::open(&root, self.member.as_deref(), &from_env).map_err(failed)?;
        lexicon.env = binding.env().to_owned();
        if let Some(r) = last.filter(|r| r.member == self.member) {
            lexicon.last_apply = LastApply::recorded(r.owned);
        }
        Ok(lexicon)
    }
}

inventory::submit! { Registration::of::<BoxServices>() }
