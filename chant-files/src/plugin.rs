//! The files lexicon's face on the plugin interface: [`FilesDeclaration`] binds to an env through
//! its `files_root` key, and [`FilesLexicon`] applies (removing owned, undeclared files only under
//! `owned-only`) and tears down, each returning the [`ApplyRecord`] the core appends.

use std::path::Path;

#[cfg(feature = "import")]
use super::export;
use super::{ApplyRecord, COMPONENT, FULL_READ_KEY, FilesDeclaration, FilesLexicon, ROOT_KEY};
#[cfg(feature = "import")]
use chant_lexicon::export::{ExportError, ExportOptions, ExportedTemplate, Generated};
use chant_lexicon::observe::estate::TeardownPlan;
use chant_lexicon::observe::{DeclaredEntity, LastApply, LexiconError};
#[cfg(feature = "import")]
use chant_lexicon::redact::Redactor;
use chant_lexicon::references::ReferenceCatalog;
use chant_lexicon::{
    Applied, BindError, Binding, BindingKey, Declaration, DeleteMode, EnvLexicon, Hook, HookError, Registration,
};

impl Declaration for FilesDeclaration {
    const LEXICON: &'static str = COMPONENT;
    const BINDING_KEYS: &'static [BindingKey] = &[
        BindingKey::path(ROOT_KEY, "the directory the env's declared files live under"),
        BindingKey::path(
            super::estate::ARTIFACTS_KEY,
            "the directory of the env's runtime artifacts (build outputs, uploads), diffed against the last snapshot",
        ),
        BindingKey::text(
            FULL_READ_KEY,
            "how often a long-running operator reads every file whole (default 10m; 0s: every tick); between, an unchanged lstat keeps its digest",
        ),
    ];
    type Lexicon = FilesLexicon;

    fn bind(&self, binding: &Binding<'_>, last: Option<ApplyRecord>) -> Result<FilesLexicon, BindError> {
        let mut lexicon = FilesLexicon::new(binding.env(), binding.path(ROOT_KEY), self.clone())
            .with_artifacts_dir(binding.path(super::estate::ARTIFACTS_KEY));
        if let Some(every) = binding.value(FULL_READ_KEY) {
            let every = chant_core::duration::parse(every).map_err(|e| BindError::InvalidValue {
                lexicon: COMPONENT.to_owned(),
                env: binding.env().to_owned(),
                key: FULL_READ_KEY.to_owned(),
                reason: format!("{e} (a duration such as `10m`, `1h` or `0s`)"),
            })?;
            lexicon = lexicon.with_full_read_every(every);
        }
        if let Some(configured) = binding.value(ROOT_KEY) {
            let last = last.map(|r| r.last_apply_for(configured)).unwrap_or_else(LastApply::none);
            lexicon = lexicon.with_binding(configured).with_last_apply(last);
        }
        Ok(lexicon)
    }

    // --- export hooks ---

    #[cfg(feature = "import")]
    fn export_resources(binding: &Binding<'_>, options: &ExportOptions) -> Result<ExportedTemplate, ExportError> {
        let (Some(configured), Some(root)) = (binding.value(ROOT_KEY), binding.path(ROOT_KEY)) else {
            return Err(ExportError::NotBound {
                lexicon: COMPONENT.into(),
                env: binding.env().into(),
                key: ROOT_KEY.into(),
            });
        };
        let failed = |e: Box<dyn std::error::Error + Send + Sync>| ExportError::Read {
            lexicon: COMPONENT.into(),
            env: binding.env().into(),
            source: e,
        };
        let walk = export::read(&root).map_err(|e| failed(format!("cannot read {}: {e}", root.display()).into()))?;
        export::check_owned(&walk, configured, options)?;
        let read_at = chant_store::clock::now().map(chant_store::clock::format).map_err(|e| failed(Box::new(e)))?;
        Ok(export::template(&walk, binding.env(), configured, &read_at, options))
    }

    #[cfg(feature = "import")]
    fn generate(template: &ExportedTemplate, redactor: &Redactor) -> Result<Generated, ExportError> {
        export::generate(template, redactor)
    }
}

chant_lexicon::inventory::submit! { Registration::of::<FilesDeclaration>() }

impl EnvLexicon for FilesLexicon {
    type Record = ApplyRecord;

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        self.declared()
            .map_err(|e| LexiconError::InvalidDeclaration { lexicon: COMPONENT.to_owned(), detail: e.to_string() })
    }

    fn last_apply(&self) -> LastApply {
        self.last_apply.clone()
    }

    fn apply(&self, mode: DeleteMode) -> Result<Applied<ApplyRecord>, HookError> {
        let failed = |e| HookError::failed(COMPONENT, Hook::Apply, e);
        // A root that is not there is made by the apply: right for a first apply, and a new
        // estate somewhere else when `files_root` is mistyped, so it is said.
        let missing_root = self.root().filter(|root| std::fs::symlink_metadata(root).is_err()).map(Path::to_path_buf);
        let record = FilesLexicon::apply(self).map_err(failed)?;
        let said = format!("{} of {} declared file(s) written", record.written.len(), record.owned.len());
        let mut applied = Applied::new(record).say(said);
        if let Some(root) = missing_root {
            applied = applied.say(format!(
                "created the files root {} (it did not exist; if the estate lives elsewhere, set `files_root` under `[env.{}]` in chant.toml)",
                root.display(),
                self.env()
            ));
        }
        if mode == DeleteMode::OwnedOnly {
            let removal = self.remove_owned_undeclared().map_err(failed)?;
            applied = applied.say(format!("{} owned undeclared file(s) removed", removal.removed.len()));
            applied.said.extend(removal.kept.iter().map(|k| format!("kept {k}")));
        }
        Ok(applied)
    }

    fn teardown(&self, plan: &TeardownPlan) -> Result<Applied<ApplyRecord>, HookError> {
        let (removal, record) =
            FilesLexicon::teardown(self, plan).map_err(|e| HookError::failed(COMPONENT, Hook::Teardown, e))?;
        let mut applied = Applied::new(record).say(format!("{} owned file(s) removed", removal.removed.len()));
        applied.said.extend(removal.kept.iter().map(|k| format!("kept {k}")));
        Ok(applied)
    }

    // --- reference catalog hooks ---

    /// Files refer to nothing of each other: a catalog without rules, so the graph's edges of
    /// the files lexicon are computed, and there are none.
    fn reference_catalog(&self) -> Option<&'static ReferenceCatalog> {
        Some(&ReferenceCatalog::EMPTY)
    }
}
