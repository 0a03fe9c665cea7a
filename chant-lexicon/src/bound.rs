//! A lexicon bound to one env, as the core holds it: any [`EnvLexicon`], its record type erased
//! into an [`AppliedRecord`] the core appends.
//!
//! The project layer holds an env's lexicons as a list of [`BoundLexicon`]s and knows none by
//! name: assessing, applying, tearing down and subscribing iterate the list. The record of an
//! apply or teardown keeps its own [`Record`] type behind the erasure, so it is appended under
//! the key and in the encoding that type declares ([`chant_store::ledger::encode`]).

use std::fmt;

use super::plugin::{Applied, ApprovedPlan, DeleteMode, EnvLexicon, HookError};
use super::references::{Attrs, ReferenceCatalog};
use crate::observe::estate::TeardownPlan;
use crate::observe::{
    ChangeSink, ComponentInput, DeclaredEntity, LastApply, Lexicon, LexiconError, SubscribeError, Subscription,
    observe_component,
};
use chant_store::ledger::{self, AppendReceipt, Ledger, Record, ShardKey};

/// The object-safe face of a [`Record`].
trait ErasedRecord {
    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error>;
    fn append_to(&self, ledger: &Ledger, member: Option<&str>) -> Result<AppendReceipt, ledger::Error>;
}

impl<R: Record> ErasedRecord for R {
    fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        Record::shard_key(self, member)
    }

    fn append_to(&self, ledger: &Ledger, member: Option<&str>) -> Result<AppendReceipt, ledger::Error> {
        ledger.append_record_or_keep(member, self)
    }
}

/// The record of an apply or teardown, its type erased: what the core appends to the ledger.
pub struct AppliedRecord(Box<dyn ErasedRecord>);

impl AppliedRecord {
    /// Returns the key the record goes under in workspace member `member`.
    ///
    /// # Errors
    ///
    /// [`ledger::Error::InvalidName`] when a name in the record cannot be part of a ledger path.
    pub fn shard_key(&self, member: Option<&str>) -> Result<ShardKey, ledger::Error> {
        self.0.shard_key(member)
    }

    /// Appends the record to `ledger`, kept for the next write when it cannot be appended now
    /// (the apply already happened; see [`Ledger::append_record_or_keep`]).
    ///
    /// # Errors
    ///
    /// As [`Ledger::append_record_or_keep`].
    pub fn append_to(&self, ledger: &Ledger, member: Option<&str>) -> Result<AppendReceipt, ledger::Error> {
        self.0.append_to(ledger, member)
    }
}

impl fmt::Debug for AppliedRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AppliedRecord")
    }
}

/// The object-safe face of an [`EnvLexicon`].
trait ErasedLexicon {
    fn lexicon(&self) -> &dyn Lexicon;
    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError>;
    fn last_apply(&self) -> LastApply;
    fn apply(&self, mode: DeleteMode) -> Result<Applied<AppliedRecord>, HookError>;
    fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &ApprovedPlan<'_>,
    ) -> Result<Applied<AppliedRecord>, HookError>;
    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<AppliedRecord>, HookError>;
    // --- reference catalog hooks ---
    fn reference_catalog(&self) -> Option<&'static ReferenceCatalog>;
    fn enrich_live_attrs(&self) -> Result<Attrs, HookError>;
    fn declared_attrs(&self) -> Result<Attrs, HookError>;
}

impl<L: EnvLexicon> ErasedLexicon for L {
    fn lexicon(&self) -> &dyn Lexicon {
        self
    }

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        EnvLexicon::declared_entities(self)
    }

    fn last_apply(&self) -> LastApply {
        EnvLexicon::last_apply(self)
    }

    fn apply(&self, mode: DeleteMode) -> Result<Applied<AppliedRecord>, HookError> {
        EnvLexicon::apply(self, mode).map(erase)
    }

    fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &ApprovedPlan<'_>,
    ) -> Result<Applied<AppliedRecord>, HookError> {
        EnvLexicon::apply_approved(self, mode, approved).map(erase)
    }

    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<AppliedRecord>, HookError> {
        EnvLexicon::teardown(self, plan).map(erase)
    }

    fn reference_catalog(&self) -> Option<&'static ReferenceCatalog> {
        EnvLexicon::reference_catalog(self)
    }

    fn enrich_live_attrs(&self) -> Result<Attrs, HookError> {
        EnvLexicon::enrich_live_attrs(self)
    }

    fn declared_attrs(&self) -> Result<Attrs, HookError> {
        EnvLexicon::declared_attrs(self)
    }
}

fn erase<R: Record + 'static>(applied: Applied<R>) -> Applied<AppliedRecord> {
    Applied { record: AppliedRecord(Box::new(applied.record)), said: applied.said }
}

/// One lexicon bound to one env.
pub struct BoundLexicon {
    name: &'static str,
    inner: Box<dyn ErasedLexicon>,
}

impl BoundLexicon {
    /// Wraps a bound lexicon registered as `name`.
    pub fn new<L: EnvLexicon + 'static>(name: &'static str, lexicon: L) -> Self {
        BoundLexicon { name, inner: Box::new(lexicon) }
    }

    /// Returns the lexicon's registered name: its component and its ledger path segment.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Returns the lexicon's read side (for the conformance suite, or a direct describe).
    pub fn lexicon(&self) -> &dyn Lexicon {
        self.inner.lexicon()
    }

    /// Returns the last recorded apply the lexicon was bound with.
    pub fn last_apply(&self) -> LastApply {
        self.inner.last_apply()
    }

    /// Observes the declared entities and returns everything the observe core needs to assess
    /// this component. A failed read is in the observation (every entity `read-failed`), never an
    /// error.
    ///
    /// # Errors
    ///
    /// The declared entities cannot be listed.
    pub fn component_input(&self, delete_counts_as_drift: bool) -> Result<ComponentInput, LexiconError> {
        let declared = self.inner.declared_entities()?;
        let observation = observe_component(self.inner.lexicon(), &declared);
        Ok(ComponentInput {
            component: self.name.to_owned(),
            declared,
            observation,
            last_apply: self.inner.last_apply(),
            delete_counts_as_drift,
        })
    }

    /// Applies the declaration (see [`EnvLexicon::apply`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::apply`].
    pub fn apply(&self, mode: DeleteMode) -> Result<Applied<AppliedRecord>, HookError> {
        self.inner.apply(mode)
    }

    /// Applies the declaration behind the approved plan `approved` (see
    /// [`EnvLexicon::apply_approved`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::apply_approved`].
    pub fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &ApprovedPlan<'_>,
    ) -> Result<Applied<AppliedRecord>, HookError> {
        self.inner.apply_approved(mode, approved)
    }

    /// Executes this lexicon's teardown plan `plan` (see [`EnvLexicon::teardown`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::teardown`].
    pub fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<AppliedRecord>, HookError> {
        self.inner.teardown(plan)
    }

    /// Returns the declared entities (see [`EnvLexicon::declared_entities`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::declared_entities`].
    pub fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        self.inner.declared_entities()
    }

    // --- reference catalog hooks ---

    /// Returns the lexicon's reference catalog (see [`EnvLexicon::reference_catalog`]).
    pub fn reference_catalog(&self) -> Option<&'static ReferenceCatalog> {
        self.inner.reference_catalog()
    }

    /// Reads the live reference attributes (see [`EnvLexicon::enrich_live_attrs`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::enrich_live_attrs`].
    pub fn enrich_live_attrs(&self) -> Result<Attrs, HookError> {
        self.inner.enrich_live_attrs()
    }

    /// Returns the declared reference attributes (see [`EnvLexicon::declared_attrs`]).
    ///
    /// # Errors
    ///
    /// As [`EnvLexicon::declared_attrs`].
    pub fn declared_attrs(&self) -> Result<Attrs, HookError> {
        self.inner.declared_attrs()
    }

    /// Subscribes to the lexicon's change stream (see [`Lexicon::subscribe_changes`]).
    ///
    /// # Errors
    ///
    /// [`SubscribeError::NotImplemented`] when the lexicon has no stream.
    pub fn subscribe_changes(&self, sink: ChangeSink) -> Result<Subscription, SubscribeError> {
        self.inner.lexicon().subscribe_changes(sink)
    }
}

impl fmt::Debug for BoundLexicon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundLexicon").field("name", &self.name).finish_non_exhaustive()
    }
}
