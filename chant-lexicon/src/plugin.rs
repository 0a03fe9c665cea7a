//! The lexicon plugin interface: what a lexicon bound to one env offers the core beyond the
//! observation contract.
//!
//! A lexicon is three types. Its **declaration** (what an env declares of this substrate) implements
//! [`Declaration`](super::Declaration) and is registered with `inventory` together with the
//! `chant.toml` keys it reads ([`Registration`](super::Registration)); binding a declaration to an
//! env yields the **bound lexicon**, which implements [`Lexicon`] (the read: `describe_resources`,
//! the one hook a lexicon must implement, plus its read paths, ownership channel and change
//! stream) and [`EnvLexicon`] (the declared entities, the last recorded apply it was handed, and
//! the optional `apply` and `teardown` hooks); an apply or teardown returns its **record**, which
//! the core appends to the ledger under `ShardKey::apply(member, env, <lexicon name>)` and reads
//! back for the next binding. The lexicon holds no storage.
//!
//! Every hook past describe has a default that answers [`HookError::NotImplemented`] (or, for the
//! change stream, [`SubscribeError::NotImplemented`](crate::observe::SubscribeError)): a typed "no"
//! that the core reads as "this lexicon does not do that", never a panic.
//!
//! # Planned extension points
//!
//! The deep read is built: [`Lexicon::observe_resources_deep`] (declared and live property trees
//! with optional field owners, the `observeResourcesDeep` read path) and
//! [`Lexicon::substrate_written_paths`] (the lexicon's one prune table), both with defaults that
//! leave a lexicon without them exactly as before; core classifies the trees
//! ([`crate::observe::deep`]).
//!
//! The reference catalog hooks exist: [`EnvLexicon::reference_catalog`] (how resources refer to
//! each other, as data: [`ReferenceCatalog`]), [`EnvLexicon::enrich_live_attrs`] (the reference
//! attributes a thin describe does not carry) and [`EnvLexicon::declared_attrs`] (the same for
//! the declared entities); `graph` rebuilds edges from them (the runtime's `graph` module).
//!
//! Export exists, deliberately not here: `export_resources` and `generate` are associated
//! functions of the [`Declaration`](super::Declaration) (its `// --- export hooks ---` block),
//! reached through the [`Registration`](super::Registration), and return the branded
//! `lexicon::export::ExportedTemplate` (the `import` feature), so the bound lexicon the lifecycle
//! paths hold has no export method at all.
//!
//! The estate readers exist: dependencies (`referencedBy`), ambient resources (and their kinds),
//! the teardown plan (with its holes), stack status and artifacts are read-only hooks of
//! [`Lexicon`] (`observe_dependencies`, `ambient_kinds` + `observe_ambient`, `teardown_owned`,
//! `stack_units` + `describe_stack_status`, `list_artifacts`), each answering
//! [`EstateError::NotImplemented`](crate::observe::EstateError) by default; their types and the
//! core's checks (a dependency without a referrer refused, the teardown plan's fallback on the
//! marker) are in [`crate::observe::estate`].

use std::fmt;

use super::references::{Attrs, ReferenceCatalog};
use crate::observe::estate::TeardownPlan;
use crate::observe::{DeclaredEntity, LastApply, Lexicon, LexiconError};

/// Whether an apply may remove what chant owns and no longer declares (and make the changes a
/// plain apply only reports): the `delete_mode` argument of an `apply` step, the model's type.
pub use crate::model::DeleteMode;

/// A hook of the plugin interface past describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hook {
    /// [`EnvLexicon::apply`].
    Apply,
    /// [`EnvLexicon::teardown`].
    Teardown,
    /// [`EnvLexicon::enrich_live_attrs`].
    EnrichLiveAttrs,
    /// [`EnvLexicon::declared_attrs`].
    DeclaredAttrs,
}

impl Hook {
    /// Returns the hook's name as written in messages (`apply`).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::Apply => "apply",
            Hook::Teardown => "teardown",
            Hook::EnrichLiveAttrs => "enrichLiveAttrs",
            Hook::DeclaredAttrs => "declaredAttrs",
        }
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of an apply or teardown hook.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The lexicon does not implement the hook (the default of every optional hook).
    #[error("lexicon {lexicon} does not implement {hook}")]
    NotImplemented {
        /// The lexicon's name.
        lexicon: String,
        /// The hook.
        hook: Hook,
    },
    /// The hook ran and failed; what it changed before failing is in the cause.
    #[error("{lexicon} {hook} failed")]
    Failed {
        /// The lexicon's name.
        lexicon: String,
        /// The hook.
        hook: Hook,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl HookError {
    /// Creates the answer of a hook the lexicon does not implement.
    pub fn not_implemented(lexicon: impl Into<String>, hook: Hook) -> Self {
        HookError::NotImplemented { lexicon: lexicon.into(), hook }
    }

    /// Creates the error of a hook that ran and failed.
    pub fn failed(
        lexicon: impl Into<String>,
        hook: Hook,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        HookError::Failed { lexicon: lexicon.into(), hook, source: source.into() }
    }

    /// Returns true for [`HookError::NotImplemented`].
    pub fn is_not_implemented(&self) -> bool {
        matches!(self, HookError::NotImplemented { .. })
    }
}

/// What an apply or teardown did: the record for the ledger, and what to say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied<R> {
    /// The record the core appends to the ledger and hands back as the last apply.
    pub record: R,
    /// One line per thing worth saying (`2 of 2 declared file(s) written`), in order.
    pub said: Vec<String>,
}

impl<R> Applied<R> {
    /// Creates an outcome with nothing said yet.
    pub fn new(record: R) -> Self {
        Applied { record, said: Vec::new() }
    }

    /// Adds one line to say.
    #[must_use]
    pub fn say(mut self, line: impl Into<String>) -> Self {
        self.said.push(line.into());
        self
    }
}

/// The plan an approval bound, as an apply behind a gate receives it
/// ([`EnvLexicon::apply_approved`]).
#[derive(Clone, Copy)]
pub struct ApprovedPlan<'a> {
    /// The approved change lines, every component's (`update postgres/app.users.bio (type:
    /// character varying(200) -> text)`), as
    /// [`ChangeEntry::apply_line`](crate::observe::ChangeEntry::apply_line) writes them.
    pub changes: &'a [String],
    /// The redactor the approved lines passed; a lexicon passes the lines it compares through it.
    pub redact: &'a dyn Fn(&str) -> String,
}

impl std::fmt::Debug for ApprovedPlan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovedPlan").field("changes", &self.changes).finish_non_exhaustive()
    }
}

/// A lexicon bound to one env: the declared entities, the last recorded apply, and the optional
/// hooks that change the substrate.
///
/// # Guarantees the core gives
///
/// - `describe_resources` (from [`Lexicon`]) is called with exactly [`EnvLexicon::declared_entities`].
/// - The record of a successful [`EnvLexicon::apply`] or [`EnvLexicon::teardown`] is appended to
///   the ledger (under its key, in its encoding) before the step reports success, and the newest
///   record of its type under that key is handed to the next
///   [`Declaration::bind`](super::Declaration::bind).
///
/// # What the lexicon must do
///
/// Keep the observation contract ([`crate::observe`]); hold no storage of its own; never delete
/// under [`DeleteMode::Never`].
pub trait EnvLexicon: Lexicon {
    /// The record an apply or teardown returns for the ledger: a [`Record`](chant_store::ledger::Record)
    /// whose key is the env's apply key of this lexicon
    /// (`ShardKey::apply(member, env, <lexicon name>)`).
    type Record: chant_store::ledger::Record + 'static;

    /// Returns the entities the env declares for this lexicon, as handed to `describe_resources`
    /// and to the change-set builder.
    ///
    /// # Errors
    ///
    /// [`LexiconError::InvalidDeclaration`] when the declaration cannot be turned into entities.
    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError>;

    /// Returns the last recorded apply the lexicon was bound with: whether one exists and what it
    /// owned. "Never applied" by default.
    fn last_apply(&self) -> LastApply {
        LastApply::none()
    }

    /// Converges the substrate to the declaration and returns the record for the ledger.
    ///
    /// # Errors
    ///
    /// [`HookError::NotImplemented`] by default; [`HookError::Failed`] when the apply failed.
    fn apply(&self, mode: DeleteMode) -> Result<Applied<Self::Record>, HookError> {
        let _ = mode;
        Err(HookError::not_implemented(self.name(), Hook::Apply))
    }

    /// Converges the substrate as [`EnvLexicon::apply`] does, behind an approved gate plan: a
    /// lexicon that plans again under its own lock checks what it is about to do against
    /// `approved` there, and fails without changing anything when the two differ (the substrate
    /// changed after the run checked the approval's digest). By default it applies without that
    /// check: the run's digest check is then the only one.
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::apply`]; [`HookError::Failed`] when what it would do was not approved.
    fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &ApprovedPlan<'_>,
    ) -> Result<Applied<Self::Record>, HookError> {
        let _ = approved;
        self.apply(mode)
    }

    /// Executes `plan`, this lexicon's teardown plan as [`crate::observe::estate::teardown_plan`]
    /// answered it (what `lifecycle teardown <env>` printed), and returns the record for the
    /// ledger (a record that makes the env read as never applied). Removes exactly the plan's
    /// candidates that are still there and still owned; anything the lexicon would own now that
    /// the plan does not list is left, and said. The core has already refused a plan with holes
    /// unless the step allows them.
    ///
    /// # Errors
    ///
    /// [`HookError::NotImplemented`] by default; [`HookError::Failed`] when the teardown failed.
    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<Self::Record>, HookError> {
        let _ = plan;
        Err(HookError::not_implemented(self.name(), Hook::Teardown))
    }

    // --- reference catalog hooks ---

    /// Returns how this lexicon's resources refer to each other ([`ReferenceCatalog`]), as data;
    /// `None` (the default) when it declares no references: its resources are graph nodes
    /// without edges.
    fn reference_catalog(&self) -> Option<&'static ReferenceCatalog> {
        None
    }

    /// Returns attributes of the live resources that their describe is too thin to carry, with
    /// references resolved to the referenced resource's name (node name -> attributes), merged
    /// into the observed nodes before the live graph is rebuilt. Read-only.
    ///
    /// # Errors
    ///
    /// [`HookError::NotImplemented`] by default; [`HookError::Failed`] when the read failed.
    fn enrich_live_attrs(&self) -> Result<Attrs, HookError> {
        Err(HookError::not_implemented(self.name(), Hook::EnrichLiveAttrs))
    }

    /// Returns the reference attributes of the declared entities (node name -> attributes), for
    /// the declared graph; pure, no I/O.
    ///
    /// # Errors
    ///
    /// [`HookError::NotImplemented`] by default.
    fn declared_attrs(&self) -> Result<Attrs, HookError> {
        Err(HookError::not_implemented(self.name(), Hook::DeclaredAttrs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Observation;

    struct ReadOnly;

    impl Lexicon for ReadOnly {
        fn name(&self) -> &str {
            "read-only"
        }

        fn describe_resources(&self, _: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
            Ok(Observation::new())
        }
    }

    #[derive(Debug, serde::Serialize, serde::Deserialize)]
    struct Nothing;

    impl chant_store::ledger::Record for Nothing {
        const KIND: chant_store::ledger::RecordKind = chant_store::ledger::RecordKind::Apply;
        const NAME: &'static str = "nothing";

        fn shard_key(&self, member: Option<&str>) -> Result<chant_store::ledger::ShardKey, chant_store::ledger::Error> {
            chant_store::ledger::ShardKey::apply(member, "env", "read-only")
        }
    }

    impl EnvLexicon for ReadOnly {
        type Record = Nothing;

        fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn every_optional_hook_answers_not_implemented() {
        let apply = ReadOnly.apply(DeleteMode::Never).unwrap_err();
        assert!(apply.is_not_implemented());
        assert_eq!(apply.to_string(), "lexicon read-only does not implement apply");
        let teardown = ReadOnly.teardown(&TeardownPlan::new()).unwrap_err();
        assert_eq!(teardown.to_string(), "lexicon read-only does not implement teardown");
        assert_eq!(ReadOnly.last_apply(), LastApply::none());
        assert_eq!(ReadOnly.reference_catalog(), None);
        let enrich = ReadOnly.enrich_live_attrs().unwrap_err();
        assert_eq!(enrich.to_string(), "lexicon read-only does not implement enrichLiveAttrs");
        assert!(ReadOnly.declared_attrs().unwrap_err().is_not_implemented());
    }

    #[test]
    fn delete_modes_parse_as_written() {
        for mode in DeleteMode::ALL {
            assert_eq!(DeleteMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(DeleteMode::parse("always"), None);
        assert_eq!(DeleteMode::default(), DeleteMode::Never);
    }
}
