//! A project: its configuration (`chant.toml`), its ledger (the repository it runs in), the ops
//! compiled into this binary, and the redactor built from the configured secret variables.
//!
//! This is the seam between the pure core and the world: it observes and applies an env's
//! lexicons, reads and appends records, and implements [`runner::Services`] for a run.

use std::path::{Path, PathBuf};

use crate::catalog::{Catalog, InvalidCatalog};
use crate::config::{self, Config};
use crate::gate::GateFact;
use crate::ledger::{self, Ledger, LedgerConfig, ShardKey};
use crate::lexicon::files::{ApplyRecord, FilesLexicon};
#[cfg(feature = "postgres")]
use crate::lexicon::postgres::{DeleteMode, PostgresApplyRecord, PostgresLexicon};
use crate::model::OpDocument;
use crate::observe::{ComponentInput, EnvAssessment, LastApply, assess};
use crate::redact::Redactor;
use crate::runner;

/// Errors of opening a project and of its operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `chant.toml` is missing or invalid.
    #[error(transparent)]
    Config(#[from] config::Error),
    /// The embedded ops do not validate.
    #[error(transparent)]
    Catalog(#[from] InvalidCatalog),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] ledger::Error),
    /// The env's declaration could not be read.
    #[error("env {env}: {message}")]
    Declaration {
        /// The env.
        env: String,
        /// What is wrong.
        message: String,
    },
    /// A record could not be serialised.
    #[error("cannot serialise a record")]
    Serialise(#[from] serde_json::Error),
    /// `CHANT_NOW` does not parse.
    #[error(transparent)]
    Clock(#[from] crate::clock::BadNow),
}

/// A project, opened from a working directory.
pub struct Project {
    /// The project root (the directory of `chant.toml`).
    pub root: PathBuf,
    /// The configuration.
    pub config: Config,
    /// The ledger of the repository the project is in.
    pub ledger: Ledger,
    /// The ops compiled into this binary.
    pub catalog: Catalog,
    /// The redactor for everything printed or recorded.
    pub redactor: Redactor,
}

impl Project {
    /// Opens the project containing `cwd`: finds `chant.toml`, opens the ledger of the repository
    /// holding it, validates the embedded ops.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; each names the file or the op at fault.
    pub fn open(cwd: &Path) -> Result<Project, Error> {
        let config = Config::discover(cwd)?;
        let catalog = Catalog::embedded()?;
        let clock = crate::clock::Clock::from_env()?;
        let ledger_config = LedgerConfig { remote: config.ledger.remote.clone(), clock, ..LedgerConfig::default() };
        let ledger = Ledger::open(&config.root, ledger_config)?;
        let redactor = Redactor::from_env_vars(config.secret_vars());
        Ok(Project { root: config.root.clone(), config, ledger, catalog, redactor })
    }

    /// Returns the commit HEAD points at in the project's repository, when there is one.
    pub fn git_sha(&self) -> Option<String> {
        let repo = gix::discover(&self.root).ok()?;
        repo.head_id().ok().map(|id| id.to_string())
    }

    /// Returns the files lexicon of `env`, or `None` when the env declares no files.
    ///
    /// # Errors
    ///
    /// [`Error::Declaration`] when the declaration cannot be built; ledger errors reading the last
    /// apply.
    pub fn files_lexicon(&self, member: Option<&str>, env: &str) -> Result<Option<FilesLexicon>, Error> {
        let declaration = crate::lexicon::declaration(env)
            .map_err(|e| Error::Declaration { env: env.to_owned(), message: e.to_string() })?;
        let Some(files) = declaration.and_then(|d| d.files) else { return Ok(None) };
        let binding = self.config.env(env).and_then(|b| b.files_root.clone());
        let root = binding.as_deref().map(|b| self.config.resolve(b));
        let mut lexicon = FilesLexicon::new(env, root, files);
        if let Some(b) = &binding {
            lexicon = lexicon.with_binding(b.clone());
            let last = self.last_apply(member, env)?;
            lexicon = lexicon.with_last_apply(last.map(|r| r.last_apply_for(b)).unwrap_or_else(LastApply::none));
        }
        Ok(Some(lexicon))
    }

    /// Returns the last recorded apply of the files of `env`.
    ///
    /// # Errors
    ///
    /// Ledger errors.
    pub fn last_apply(&self, member: Option<&str>, env: &str) -> Result<Option<ApplyRecord>, Error> {
        let key = ShardKey::apply(member, env, crate::lexicon::files::COMPONENT)?;
        Ok(self.ledger.latest_typed::<ApplyRecord>(&key)?.record.map(|stored| stored.record))
    }

    /// Returns the postgres lexicon of `env`, or `None` when the env declares no PostgreSQL part.
    /// The DSN is read from the variable the env binds (`postgres_dsn_var`); an unbound env or an
    /// unset variable observes as `no-binding`.
    ///
    /// # Errors
    ///
    /// [`Error::Declaration`] when the declaration cannot be built; ledger errors reading the last
    /// apply.
    #[cfg(feature = "postgres")]
    pub fn postgres_lexicon(&self, member: Option<&str>, env: &str) -> Result<Option<PostgresLexicon>, Error> {
        let declaration = crate::lexicon::declaration(env)
            .map_err(|e| Error::Declaration { env: env.to_owned(), message: e.to_string() })?;
        let Some(postgres) = declaration.and_then(|d| d.postgres) else { return Ok(None) };
        let lexicon = PostgresLexicon::new(env, self.config.project.name.clone(), postgres);
        let Some(var) = self.config.env(env).and_then(|b| b.postgres_dsn_var.clone()) else { return Ok(Some(lexicon)) };
        let key = ShardKey::apply(member, env, crate::lexicon::postgres::COMPONENT)?;
        let last = self
            .ledger
            .latest_typed::<PostgresApplyRecord>(&key)?
            .record
            .map(|stored| stored.record.last_apply_for(&var))
            .unwrap_or_else(LastApply::none);
        Ok(Some(lexicon.with_var(var).with_last_apply(last)))
    }

    /// Appends a lexicon's apply or teardown record to the env's ledger.
    fn record_apply<R: ledger::Record>(&self, member: Option<&str>, component: &str, record: &R) -> Result<(), String> {
        let receipt = self
            .ledger
            .append_record(member, record)
            .map_err(|e| format!("the {component} change was made but not recorded: {e}"))?;
        for w in &receipt.warnings {
            eprintln!("warning: {w}");
        }
        Ok(())
    }

    /// Returns true when some op in this binary applies `env` with `delete_mode = "owned-only"`,
    /// which makes an owned, undeclared entity drift.
    pub fn deletes_owned(&self, env: &str) -> bool {
        self.catalog.ops().flat_map(OpDocument::steps).any(|s| {
            matches!(s, crate::model::Step::Apply { args, .. }
                if args.env == env && args.delete_mode == Some(crate::model::DeleteMode::OwnedOnly))
        })
    }

    /// Observes every lexicon bound to `env` and derives its change sets, status rows and symptom.
    ///
    /// # Errors
    ///
    /// Declaration and ledger errors. Observation failures are not errors: they become unobserved
    /// entities.
    pub fn assess(&self, member: Option<&str>, env: &str) -> Result<EnvAssessment, Error> {
        let mut inputs: Vec<ComponentInput> = Vec::new();
        if let Some(files) = self.files_lexicon(member, env)? {
            let input = files
                .component_input(self.deletes_owned(env))
                .map_err(|e| Error::Declaration { env: env.to_owned(), message: e.to_string() })?;
            inputs.push(input);
        }
        #[cfg(feature = "postgres")]
        if let Some(postgres) = self.postgres_lexicon(member, env)? {
            inputs.push(postgres.component_input(self.deletes_owned(env)));
        }
        Ok(assess(env, &inputs))
    }

    /// Applies every lexicon `env` declares (files, postgres), records each apply on the ledger,
    /// and says what changed. `delete_mode` is `never` (the default: nothing is deleted) or
    /// `owned-only` (also removes what chant owns and no longer declares, and makes the changes a
    /// plain apply only reports).
    ///
    /// # Errors
    ///
    /// One line saying what failed.
    pub fn apply_env(&self, member: Option<&str>, env: &str, delete_mode: &str) -> Result<String, String> {
        let owned_only = match delete_mode {
            "never" => false,
            "owned-only" => true,
            other => return Err(format!("unknown delete_mode \"{other}\": use \"never\" or \"owned-only\"")),
        };
        let mut said = Vec::new();
        if let Some(files) = self.files_lexicon(member, env).map_err(|e| e.to_string())? {
            let record = files.apply().map_err(|e| e.to_string())?;
            self.record_apply(member, crate::lexicon::files::COMPONENT, &record)?;
            said.push(format!("{} of {} declared file(s) written", record.written.len(), record.owned.len()));
            if owned_only {
                let removal = files.remove_owned_undeclared().map_err(|e| e.to_string())?;
                said.push(format!("{} owned undeclared file(s) removed", removal.removed.len()));
                said.extend(removal.kept.iter().map(|k| format!("kept {k}")));
            }
        }
        #[cfg(feature = "postgres")]
        if let Some(postgres) = self.postgres_lexicon(member, env).map_err(|e| e.to_string())? {
            let mode = if owned_only { DeleteMode::OwnedOnly } else { DeleteMode::Never };
            let record = postgres.apply(mode).map_err(|e| e.to_string())?;
            self.record_apply(member, crate::lexicon::postgres::COMPONENT, &record)?;
            said.push(record.summary());
        }
        if said.is_empty() {
            return Ok(format!("env {env} declares nothing to apply"));
        }
        Ok(said.join("; "))
    }

    /// Tears down every lexicon `env` declares, removing only what chant owns there (the files of
    /// its last recorded apply; the tables and schemas carrying this project's and env's marker),
    /// and records each teardown on the ledger.
    ///
    /// # Errors
    ///
    /// One line saying what failed.
    pub fn teardown_env(&self, member: Option<&str>, env: &str) -> Result<String, String> {
        let mut said = Vec::new();
        if let Some(files) = self.files_lexicon(member, env).map_err(|e| e.to_string())? {
            let (removal, record) = files.teardown().map_err(|e| e.to_string())?;
            self.record_apply(member, crate::lexicon::files::COMPONENT, &record)?;
            said.push(format!("{} owned file(s) removed", removal.removed.len()));
            said.extend(removal.kept.iter().map(|k| format!("kept {k}")));
        }
        #[cfg(feature = "postgres")]
        if let Some(postgres) = self.postgres_lexicon(member, env).map_err(|e| e.to_string())? {
            let record = postgres.teardown().map_err(|e| e.to_string())?;
            self.record_apply(member, crate::lexicon::postgres::COMPONENT, &record)?;
            said.push(record.summary());
        }
        if said.is_empty() {
            return Ok(format!("env {env} declares nothing to tear down"));
        }
        Ok(said.join("; "))
    }

    /// Returns the gate facts of `op`, in ledger order.
    ///
    /// # Errors
    ///
    /// Ledger errors.
    pub fn gate_facts(&self, member: Option<&str>, op: &str) -> Result<(Vec<GateFact>, usize), Error> {
        let records = self.ledger.read_typed::<GateFact>(&ShardKey::gate(member, op)?)?;
        let facts = records.records.into_iter().map(|stored| stored.record).collect();
        Ok((facts, records.unreadable.len()))
    }
}

/// The services of one run: the project, and the member the op belongs to.
pub struct RunServices<'a> {
    /// The project.
    pub project: &'a Project,
    /// The op's member.
    pub member: Option<&'a str>,
}

impl runner::Services for RunServices<'_> {
    fn apply(&self, env: &str, delete_mode: &str) -> Result<String, String> {
        self.project.apply_env(self.member, env, delete_mode)
    }

    fn teardown(&self, env: &str) -> Result<String, String> {
        self.project.teardown_env(self.member, env)
    }

    fn gate_facts(&self, op: &str) -> Result<Vec<GateFact>, String> {
        self.project.gate_facts(self.member, op).map(|(f, _)| f).map_err(|e| e.to_string())
    }

    fn append_gate_fact(&self, fact: &GateFact) -> Result<(), String> {
        self.project.ledger.append_record(self.member, fact).map(|_| ()).map_err(|e| e.to_string())
    }
}
