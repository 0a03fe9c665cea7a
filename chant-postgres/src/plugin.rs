//! The postgres lexicon's face on the plugin interface: [`PostgresDeclaration`] binds to an env
//! through its `postgres_dsn_var` key (the DSN is read from that variable; an unbound env or an
//! unset variable observes as `no-binding`), and [`PostgresLexicon`] applies and tears down, each
//! returning the [`PostgresApplyRecord`] the core appends.

use super::references;
use super::{COMPONENT, DSN_VAR_KEY, PostgresApplyRecord, PostgresDeclaration, PostgresLexicon, QUERY_TIMEOUT_KEY};
#[cfg(feature = "import")]
use super::{PostgresError, codegen, export};
#[cfg(feature = "import")]
use chant_lexicon::export::{ExportError, ExportOptions, ExportedTemplate, Generated};
use chant_lexicon::observe::estate::TeardownPlan;
use chant_lexicon::observe::{DeclaredEntity, LastApply, LexiconError};
#[cfg(feature = "import")]
use chant_lexicon::redact::Redactor;
use chant_lexicon::references::{Attrs, ReferenceCatalog};
use chant_lexicon::{
    Applied, ApprovedPlan, BindError, Binding, BindingKey, Declaration, DeleteMode, EnvLexicon, Hook, HookError,
    Registration,
};

impl Declaration for PostgresDeclaration {
    const LEXICON: &'static str = COMPONENT;
    const BINDING_KEYS: &'static [BindingKey] = &[
        BindingKey::secret_var(DSN_VAR_KEY, "the name of the variable holding the env's PostgreSQL DSN"),
        BindingKey::text(
            QUERY_TIMEOUT_KEY,
            "how long one query of the env's PostgreSQL binding may wait for the server (default 60s)",
        ),
    ];
    type Lexicon = PostgresLexicon;

    fn bind(&self, binding: &Binding<'_>, last: Option<PostgresApplyRecord>) -> Result<PostgresLexicon, BindError> {
        let mut lexicon = PostgresLexicon::new(binding.env(), binding.project(), self.clone());
        if let Some(text) = binding.value(QUERY_TIMEOUT_KEY) {
            let invalid = |reason: String| BindError::InvalidValue {
                lexicon: COMPONENT.to_owned(),
                env: binding.env().to_owned(),
                key: QUERY_TIMEOUT_KEY.to_owned(),
                reason,
            };
            let timeout = chant_core::duration::parse(text).map_err(|e| invalid(e.to_string()))?;
            if timeout.is_zero() {
                return Err(invalid("a query timeout must be longer than zero".to_owned()));
            }
            lexicon = lexicon.with_query_timeout(timeout);
        }
        let Some(var) = binding.value(DSN_VAR_KEY) else { return Ok(lexicon) };
        let last = last.map(|r| r.last_apply_for(var)).unwrap_or_else(LastApply::none);
        Ok(lexicon.with_var(var).with_last_apply(last))
    }

    // --- export hooks ---

    #[cfg(feature = "import")]
    fn export_resources(binding: &Binding<'_>, options: &ExportOptions) -> Result<ExportedTemplate, ExportError> {
        let Some(var) = binding.value(DSN_VAR_KEY) else {
            return Err(ExportError::NotBound {
                lexicon: COMPONENT.into(),
                env: binding.env().into(),
                key: DSN_VAR_KEY.into(),
            });
        };
        let lexicon = PostgresLexicon::new(binding.env(), binding.project(), PostgresDeclaration::new()).with_var(var);
        let read_failed = |e: PostgresError| ExportError::Read {
            lexicon: COMPONENT.into(),
            env: binding.env().into(),
            source: Box::new(e),
        };
        let (snapshot, address) = export::read(&lexicon).map_err(read_failed)?;
        let read_at = chant_store::clock::now().map(chant_store::clock::format).map_err(|e| ExportError::Read {
            lexicon: COMPONENT.into(),
            env: binding.env().into(),
            source: Box::new(e),
        })?;
        let ctx = export::TemplateContext {
            env: binding.env(),
            identity: lexicon.identity(),
            address: &address,
            read_at: &read_at,
            options,
        };
        Ok(export::template(&snapshot, &ctx))
    }

    #[cfg(feature = "import")]
    fn generate(template: &ExportedTemplate, redactor: &Redactor) -> Result<Generated, ExportError> {
        codegen::generate(template, redactor)
    }
}

chant_lexicon::inventory::submit! { Registration::of::<PostgresDeclaration>() }

impl EnvLexicon for PostgresLexicon {
    type Record = PostgresApplyRecord;

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        Ok(self.declared())
    }

    fn last_apply(&self) -> LastApply {
        self.last_apply.clone()
    }

    fn apply(&self, mode: DeleteMode) -> Result<Applied<PostgresApplyRecord>, HookError> {
        let record = PostgresLexicon::apply(self, mode).map_err(|e| HookError::failed(COMPONENT, Hook::Apply, e))?;
        let said = record.summary();
        Ok(Applied::new(record).say(said))
    }

    /// Re-checks the approved plan under the apply's lock ([`PostgresLexicon::apply_approved`]).
    fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &ApprovedPlan<'_>,
    ) -> Result<Applied<PostgresApplyRecord>, HookError> {
        let record = PostgresLexicon::apply_approved(self, mode, approved)
            .map_err(|e| HookError::failed(COMPONENT, Hook::Apply, e))?;
        let said = record.summary();
        Ok(Applied::new(record).say(said))
    }

    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<PostgresApplyRecord>, HookError> {
        let record =
            PostgresLexicon::teardown(self, plan).map_err(|e| HookError::failed(COMPONENT, Hook::Teardown, e))?;
        let said = record.summary();
        Ok(Applied::new(record).say(said))
    }

    // --- reference catalog hooks ---

    fn reference_catalog(&self) -> Option<&'static ReferenceCatalog> {
        Some(&references::CATALOG)
    }

    fn enrich_live_attrs(&self) -> Result<Attrs, HookError> {
        self.read_live_attrs().map_err(|e| HookError::failed(COMPONENT, Hook::EnrichLiveAttrs, e))
    }

    fn declared_attrs(&self) -> Result<Attrs, HookError> {
        Ok(references::declared_attrs(self.declaration()))
    }
}
