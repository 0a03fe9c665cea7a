//! The JSON documents lexicon: declared documents by name under a directory bound in
//! `chant.toml` (`jsondocs_root` under `[env.<name>]`), owned through a marker inside each one.
//!
//! - **describe** reads every declared document and every other `*.json` in the root: a declared
//!   one missing is absent (the only verdict that becomes a `create`), one that cannot be read as
//!   a JSON object is unobserved `read-failed` with the reason, an unbound root makes every
//!   declared document `no-binding`, and a root that cannot be listed is a whole-lexicon failure.
//!   A present document carries its content (canonical JSON without the marker) as the one
//!   compared property, and its ownership from its marker: `owned` when the marker names this
//!   project and env, `foreign` otherwise. The marker is read on `describeResources`, the
//!   lexicon's declared ownership channel, so it never answers `unknown`.
//! - **apply** writes each declared document that differs, atomically, stamped with the marker;
//!   under `owned-only` it also removes the undeclared documents carrying this project's and
//!   env's marker. It never touches a document it does not own otherwise.
//! - **teardown** removes every document carrying the marker, and records that the env is no
//!   longer applied.
//!
//! The lexicon holds no storage: its last apply is the [`DocsRecord`] the core read from the
//! ledger and handed to [`Declaration::bind`].

use std::path::{Path, PathBuf};

use chant::lexicon::{
    Applied, BindError, Binding, BindingKey, Declaration, DeleteMode, EnvLexicon, Hook, HookError, Registration,
};
use chant::model::UnobservedReason;
use chant::observe::estate::TeardownPlan;
use chant::observe::{
    ChannelKeys, DeclaredEntity, LastApply, Lexicon, LexiconError, Marker, Observation, Ownership, OwnershipChannel,
    PresentResource, ReadPath, Unobserved,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::declaration::DocsDeclaration;
pub use crate::error::DocsError;
pub use crate::store::MARKER_KEY;
use crate::store::{self, Found};

/// The lexicon's name: its status rows' component and its ledger path segment.
pub const LEXICON: &str = "jsondocs";

/// The `chant.toml` key binding an env's directory of documents.
pub const ROOT_KEY: &str = "jsondocs_root";

/// The entity kind of every document.
pub const KIND: &str = "document";

/// The one property a document is compared on: its content without the marker.
pub const CONTENT: &str = "content";

/// What one apply or teardown did, for the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DocsRecord {
    /// The env.
    pub env: String,
    /// The component (`jsondocs`).
    pub component: String,
    /// The root binding, as configured.
    pub binding: String,
    /// `apply` or `teardown`.
    pub action: String,
    /// The documents written (those that differed), sorted.
    pub written: Vec<String>,
    /// The documents removed, sorted.
    pub removed: Vec<String>,
    /// The documents this apply owns: every declared one (none after a teardown).
    pub owned: Vec<String>,
}

/// A record goes under the env's apply key of this lexicon (`<env>/_apply/jsondocs`), in
/// canonical JSON.
impl chant::ledger::Record for DocsRecord {
    const KIND: chant::ledger::RecordKind = chant::ledger::RecordKind::Apply;
    const NAME: &'static str = "jsondocs apply";

    fn shard_key(&self, member: Option<&str>) -> Result<chant::ledger::ShardKey, chant::ledger::Error> {
        chant::ledger::ShardKey::apply(member, &self.env, &self.component)
    }
}

impl DocsRecord {
    /// Returns the record as the last recorded apply of `binding`: a teardown, or an apply of
    /// another binding, is "never applied".
    pub fn last_apply_for(&self, binding: &str) -> LastApply {
        if self.component == LEXICON && self.binding == binding && self.action == "apply" {
            LastApply::recorded(self.owned.iter().cloned())
        } else {
            LastApply::none()
        }
    }
}

/// The JSON documents lexicon bound to one env.
#[derive(Debug, Clone)]
pub struct DocsLexicon {
    env: String,
    stack: String,
    root: Option<PathBuf>,
    binding: Option<String>,
    declaration: DocsDeclaration,
    last_apply: LastApply,
}

impl DocsLexicon {
    /// Returns the directory of documents, when the env binds one.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    fn ownership(&self, document: &Map<String, Value>) -> (Ownership, Option<Marker>) {
        match store::marker(document) {
            Some((stack, env)) => {
                let ours = stack == self.stack && env == self.env;
                let ownership = if ours { Ownership::Owned } else { Ownership::Foreign };
                (ownership, Some(Marker::new(stack, env)))
            }
            None => (Ownership::Foreign, None),
        }
    }

    fn observe_one(&self, root: &Path, name: &str, out: &mut Observation) {
        let path = store::path(root, name);
        let address = path.display().to_string();
        out.insert_queried(name, address.clone());
        match store::read(&path) {
            Found::Absent => {}
            Found::Unreadable(why) => out.insert_unobserved(
                name,
                Unobserved::new(UnobservedReason::ReadFailed).kind(KIND).detail(why).queried(address),
            ),
            Found::Document(document) => {
                let (ownership, marker) = self.ownership(&document);
                let mut resource =
                    PresentResource::new(ownership).kind(KIND).property(CONTENT, store::canonical(&document));
                if let Some(marker) = marker {
                    resource = resource.marker(marker);
                }
                out.insert_present(name, resource);
            }
        }
    }

    fn bound_root(&self) -> Result<&Path, DocsError> {
        self.root.as_deref().ok_or_else(|| DocsError::NoBinding { env: self.env.clone() })
    }

    /// The undeclared documents under `root` carrying this project's and env's marker.
    fn owned_undeclared(&self, root: &Path) -> Result<Vec<String>, DocsError> {
        let names = store::names(root).map_err(|source| DocsError::Io { what: "list", path: root.into(), source })?;
        Ok(names
            .unwrap_or_default()
            .into_iter()
            .filter(|n| !self.declaration.declares(n))
            .filter(|n| match store::read(&store::path(root, n)) {
                Found::Document(d) => self.ownership(&d).0 == Ownership::Owned,
                _ => false,
            })
            .collect())
    }

    fn remove(root: &Path, names: &[String]) -> Result<(), DocsError> {
        for name in names {
            let path = store::path(root, name);
            std::fs::remove_file(&path).map_err(|source| DocsError::Io { what: "remove", path, source })?;
        }
        Ok(())
    }

    fn record(&self, action: &str, written: Vec<String>, removed: Vec<String>, owned: Vec<String>) -> DocsRecord {
        DocsRecord {
            env: self.env.clone(),
            component: LEXICON.to_owned(),
            binding: self.binding.clone().unwrap_or_default(),
            action: action.to_owned(),
            written,
            removed,
            owned,
        }
    }

    /// Writes every declared document that differs; see the module documentation.
    ///
    /// # Errors
    ///
    /// An invalid declaration, an unbound root, or a path that holds something other than a
    /// regular file refuse the apply before anything is written; an I/O failure stops it.
    pub fn write(&self, mode: DeleteMode) -> Result<DocsRecord, DocsError> {
        self.declaration.validate()?;
        let root = self.bound_root()?;
        std::fs::create_dir_all(root).map_err(|source| DocsError::Io {
            what: "create the root",
            path: root.into(),
            source,
        })?;
        for (name, _) in self.declaration.objects() {
            let path = store::path(root, name);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
                return Err(DocsError::Refused { name: name.clone(), reason: "it is not a regular file".into() });
            }
        }
        let mut written = Vec::new();
        for (name, content) in self.declaration.objects() {
            let path = store::path(root, name);
            let bytes = store::render(content, &self.stack, &self.env);
            if store::holds(&path, &bytes) {
                continue;
            }
            store::write_atomically(&path, &bytes).map_err(|source| DocsError::Io { what: "write", path, source })?;
            written.push(name.clone());
        }
        let removed = match mode {
            DeleteMode::Never => Vec::new(),
            DeleteMode::OwnedOnly => {
                let removed = self.owned_undeclared(root)?;
                Self::remove(root, &removed)?;
                removed
            }
        };
        let owned = self.declaration.names().map(str::to_owned).collect();
        Ok(self.record("apply", written, removed, owned))
    }

    /// Removes every document the teardown plan `plan` lists that still carries this project's
    /// and env's marker; nothing the plan does not list.
    ///
    /// # Errors
    ///
    /// An unbound root, or an I/O failure.
    pub fn remove_owned(&self, plan: &TeardownPlan) -> Result<DocsRecord, DocsError> {
        let root = self.bound_root()?;
        let names = store::names(root).map_err(|source| DocsError::Io { what: "list", path: root.into(), source })?;
        let removed: Vec<String> = names
            .unwrap_or_default()
            .into_iter()
            .filter(|n| plan.candidates.contains_key(n.as_str()))
            .filter(|n| match store::read(&store::path(root, n)) {
                Found::Document(d) => self.ownership(&d).0 == Ownership::Owned,
                _ => false,
            })
            .collect();
        Self::remove(root, &removed)?;
        Ok(self.record("teardown", Vec::new(), removed, Vec::new()))
    }
}

impl Lexicon for DocsLexicon {
    fn name(&self) -> &str {
        LEXICON
    }

    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        let Some(root) = &self.root else {
            let detail = format!("env {} binds no documents root (set `{ROOT_KEY}` in chant.toml)", self.env);
            return Ok(Observation::unobserved_all(declared, UnobservedReason::NoBinding, Some(&detail)));
        };
        let listed = store::names(root)
            .map_err(|e| LexiconError::read_failed(LEXICON, format!("cannot list {}", root.display()), e))?;
        let mut names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
        names.extend(listed.iter().flatten().map(String::as_str));
        names.sort_unstable();
        names.dedup();
        let mut observation = Observation::new();
        for name in names {
            self.observe_one(root, name, &mut observation);
        }
        Ok(observation)
    }

    fn ownership_channel(&self) -> Option<OwnershipChannel> {
        Some(OwnershipChannel {
            keys: ChannelKeys { managed_by: MARKER_KEY.into(), stack: "stack".into(), env: "env".into() },
            reads: vec![ReadPath::DescribeResources],
        })
    }
}

impl EnvLexicon for DocsLexicon {
    type Record = DocsRecord;

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        self.declaration
            .validate()
            .map_err(|e| LexiconError::InvalidDeclaration { lexicon: LEXICON.into(), detail: e.to_string() })?;
        Ok(self
            .declaration
            .objects()
            .map(|(name, content)| {
                DeclaredEntity::new(name.clone())
                    .kind(KIND)
                    .property(CONTENT, Value::Object(content.clone()).to_string())
            })
            .collect())
    }

    fn last_apply(&self) -> LastApply {
        self.last_apply.clone()
    }

    fn apply(&self, mode: DeleteMode) -> Result<Applied<DocsRecord>, HookError> {
        let record = self.write(mode).map_err(|e| HookError::failed(LEXICON, Hook::Apply, e))?;
        let said = format!("{} of {} declared document(s) written", record.written.len(), record.owned.len());
        let removed = record.removed.len();
        let applied = Applied::new(record).say(said);
        Ok(if mode == DeleteMode::OwnedOnly {
            applied.say(format!("{removed} owned undeclared document(s) removed"))
        } else {
            applied
        })
    }

    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<DocsRecord>, HookError> {
        let record = self.remove_owned(plan).map_err(|e| HookError::failed(LEXICON, Hook::Teardown, e))?;
        let said = format!("{} owned document(s) removed", record.removed.len());
        Ok(Applied::new(record).say(said))
    }
}

impl Declaration for DocsDeclaration {
    const LEXICON: &'static str = LEXICON;
    const BINDING_KEYS: &'static [BindingKey] =
        &[BindingKey::path(ROOT_KEY, "the directory holding the env's JSON documents")];
    type Lexicon = DocsLexicon;

    fn bind(&self, binding: &Binding<'_>, last: Option<DocsRecord>) -> Result<DocsLexicon, BindError> {
        let configured = binding.value(ROOT_KEY).map(str::to_owned);
        let last_apply = match (&configured, last) {
            (Some(b), Some(record)) => record.last_apply_for(b),
            _ => LastApply::none(),
        };
        Ok(DocsLexicon {
            env: binding.env().to_owned(),
            stack: binding.project().to_owned(),
            root: binding.path(ROOT_KEY),
            binding: configured,
            declaration: self.clone(),
            last_apply,
        })
    }
}

chant::lexicon::inventory::submit! { Registration::of::<DocsDeclaration>() }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_apply_of_the_same_binding_is_recorded() {
        let record = DocsRecord {
            env: "docs".into(),
            component: LEXICON.into(),
            binding: "estate".into(),
            action: "apply".into(),
            written: vec![],
            removed: vec![],
            owned: vec!["service".into()],
        };
        assert_eq!(record.last_apply_for("estate"), LastApply::recorded(["service"]));
        assert_eq!(record.last_apply_for("elsewhere"), LastApply::none());
        let torn = DocsRecord { action: "teardown".into(), ..record };
        assert_eq!(torn.last_apply_for("estate"), LastApply::none());
    }
}
