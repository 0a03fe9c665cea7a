//! A project: its configuration (`chant.toml`), its ledger (the repository it runs in), the ops
//! compiled into this binary, and the redactor built from the configured secret variables.
//!
//! This is the seam between the pure core and the world: it observes and applies an env's
//! lexicons, reads and appends records, and implements [`runner::Services`] for a run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::catalog::{Catalog, InvalidCatalog};
use crate::config::{self, Config};
use crate::gate::GateFact;
use crate::gate::plan::{GatePlan, PlanVerb};
use crate::runner::{self, ServiceError};
use chant_lexicon::model::OpDocument;
use chant_lexicon::observe::{ComponentInput, EnvAssessment, LexiconError};
use chant_lexicon::redact::Redactor;
use chant_lexicon::{AppliedRecord, BindError, Binding, BoundLexicon, DeclarationError, DeleteMode, HookError};
use chant_store::ledger::{self, Ledger, LedgerConfig, ShardKey};

mod deep;
mod teardown;

pub use deep::DeepAssessment;
pub use teardown::gate_plan as teardown_gate_plan;

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
    /// `chant.toml` binds an env that nothing in this binary declares (a typo, or a declaration
    /// that was removed): its binding would silently do nothing.
    #[error(
        "{file}: [env.{env}] binds an env no declaration uses (declared envs: {}); declare it with `DeclaredEnv::new(\"{env}\", ...)` or remove the section",
        if declared.is_empty() { "none".to_owned() } else { declared.join(", ") }
    )]
    UnusedBinding {
        /// The `chant.toml` path.
        file: String,
        /// The bound env.
        env: String,
        /// The envs this binary declares.
        declared: Vec<String>,
    },
    /// An `apply` or `teardown` of an env that declares nothing for any lexicon: it would change
    /// nothing, and a success would claim a change that never happened.
    #[error(
        "env {env} declares nothing to {verb}: this binary has no declaration for it, or one with no lexicon's part; declare what the env should contain (`DeclaredEnv::new(\"{env}\", ...)` returning an `EnvDeclaration` with at least one part), or name another env"
    )]
    NothingDeclared {
        /// The env.
        env: String,
        /// What was asked (`apply`, `tear down`).
        verb: String,
    },
    /// The env's declaration could not be looked up.
    #[error("env {env}: cannot read its declaration")]
    Declaration {
        /// The env.
        env: String,
        /// What is wrong.
        #[source]
        source: DeclarationError,
    },
    /// A part of the env's declaration could not be bound to the env.
    #[error("env {env}: cannot bind lexicon {lexicon}")]
    Bind {
        /// The env.
        env: String,
        /// The lexicon.
        lexicon: String,
        /// What is wrong.
        #[source]
        source: Box<BindError>,
    },
    /// A lexicon's declared entities could not be listed.
    #[error("env {env}: lexicon {lexicon} cannot list its declared entities")]
    Declared {
        /// The env.
        env: String,
        /// The lexicon.
        lexicon: String,
        /// What is wrong.
        #[source]
        source: Box<LexiconError>,
    },
    /// A lexicon's apply or teardown failed.
    #[error(transparent)]
    Hook(HookError),
    /// A lexicon changed the substrate and its record could not be appended to the ledger.
    #[error("the {lexicon} change was made but not recorded")]
    Unrecorded {
        /// The lexicon.
        lexicon: String,
        /// Why the append failed.
        #[source]
        source: ledger::Error,
    },
    /// A lexicon's record names another key than the env's apply key of that lexicon.
    #[error("lexicon {lexicon} returned a record for {found}, not for {expected}")]
    MisplacedRecord {
        /// The lexicon.
        lexicon: String,
        /// The key the record names.
        found: String,
        /// The env's apply key of the lexicon.
        expected: String,
    },
    /// The teardown plan has holes (what it cannot see) and the step does not allow them.
    #[error(
        "teardown of env {env} refused: its plan has {} hole(s) it cannot see into ({}); fix the access, or set `allow_holes = true` on the teardown step",
        holes.len(), holes.join("; ")
    )]
    TeardownHoles {
        /// The env.
        env: String,
        /// Each hole, in words.
        holes: Vec<String>,
    },
    /// The teardown plan is not the plan the gate guarding the step approved.
    #[error(
        "teardown of env {env} refused: its plan is not the plan the gate approved (approved {approved}, now {now}: {}); nothing was changed, run the op again to approve the new plan",
        if lines.is_empty() { "nothing to remove".to_owned() } else { lines.join(", ") }
    )]
    TeardownPlanChanged {
        /// The env.
        env: String,
        /// The digest the gate let through.
        approved: String,
        /// The digest of the plan now.
        now: String,
        /// The plan now, one change a line.
        lines: Vec<String>,
    },
    /// A record could not be serialised.
    #[error("cannot serialise a record")]
    Serialise(#[from] serde_json::Error),
    /// `CHANT_NOW` does not parse.
    #[error(transparent)]
    Clock(#[from] chant_store::clock::BadNow),
}

impl Error {
    /// Returns the message with every cause appended, as one line (`a: b: c`).
    pub fn chain(&self) -> String {
        chant_store::error::chain(self)
    }
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
        let declared = chant_lexicon::declared_envs();
        // In a workspace, other members' binaries declare the envs this one does not, so only a
        // single-binary project can tell an unused binding (chant.workspace.json absent).
        if !config.root.join("chant.workspace.json").exists()
            && let Some(env) = config.envs.keys().find(|e| !declared.contains(&e.as_str()))
        {
            return Err(Error::UnusedBinding {
                file: config.root.join("chant.toml").display().to_string(),
                env: env.clone(),
                declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            });
        }
        let catalog = Catalog::embedded_declared(&declared)?;
        let clock = chant_store::clock::Clock::from_env()?;
        let ledger_config = config.ledger.ledger_config(LedgerConfig { clock, ..LedgerConfig::default() });
        let ledger = Ledger::open(&config.root, ledger_config)?;
        let redactor = Redactor::from_env_vars(config.secret_vars());
        Ok(Project { root: config.root.clone(), config, ledger, catalog, redactor })
    }

    /// Returns the commit HEAD points at in the project's repository, when there is one.
    pub fn git_sha(&self) -> Option<String> {
        // The ledger's repository is the one holding the project root: no second discovery (a
        // tick asks this once, and opening a repository cost more than the rest of a trivial tick).
        self.ledger.repo().local().head_commit().map(|id| id.to_string())
    }

    /// Binds every lexicon `env` declares, in lexicon-name order: each part of the env's
    /// declaration, with the env's `chant.toml` values and the newest record of that lexicon's
    /// apply on the env's ledger. Empty when the binary registers no declaration for `env`.
    ///
    /// # Errors
    ///
    /// [`Error::Declaration`] and [`Error::Bind`]; ledger errors reading the last apply.
    pub fn lexicons(&self, member: Option<&str>, env: &str) -> Result<Vec<BoundLexicon>, Error> {
        let declaration =
            chant_lexicon::declaration(env).map_err(|source| Error::Declaration { env: env.to_owned(), source })?;
        let Some(declaration) = declaration else { return Ok(Vec::new()) };
        let none = BTreeMap::new();
        let values = self.config.env(env).map(config::EnvBinding::values).unwrap_or(&none);
        let binding = Binding::new(env, &self.config.project.name, &self.root, values);
        let mut out = Vec::new();
        for lexicon in declaration.lexicons() {
            let key = ShardKey::apply(member, env, lexicon)?;
            if let Some(bound) = declaration.bind(lexicon, &binding, &self.ledger, &key) {
                out.push(bound.map_err(|e| Error::Bind {
                    env: env.to_owned(),
                    lexicon: lexicon.to_owned(),
                    source: Box::new(e),
                })?);
            }
        }
        Ok(out)
    }

    /// Appends a lexicon's apply or teardown record to the env's ledger, under the env's apply
    /// key of that lexicon (where the next binding reads it back).
    fn record(&self, member: Option<&str>, env: &str, lexicon: &str, record: &AppliedRecord) -> Result<(), Error> {
        let expected = ShardKey::apply(member, env, lexicon)?;
        let found = record.shard_key(member)?;
        if found != expected {
            return Err(Error::MisplacedRecord {
                lexicon: lexicon.to_owned(),
                found: found.label(),
                expected: expected.label(),
            });
        }
        let receipt = record
            .append_to(&self.ledger, member)
            .map_err(|source| Error::Unrecorded { lexicon: lexicon.to_owned(), source })?;
        for w in &receipt.warnings {
            eprintln!("warning: {w}");
        }
        Ok(())
    }

    /// Returns true when some op in this binary applies `env` with `delete_mode = "owned-only"`,
    /// which makes an owned, undeclared entity drift.
    pub fn deletes_owned(&self, env: &str) -> bool {
        self.catalog.ops().flat_map(OpDocument::steps).any(|s| {
            matches!(s, chant_lexicon::model::Step::Apply { args, .. }
                if args.env == env && args.delete_mode == Some(chant_lexicon::model::DeleteMode::OwnedOnly))
        })
    }

    /// Observes every lexicon bound to `env` and derives its change sets, status rows and symptom.
    ///
    /// # Errors
    ///
    /// Declaration, binding and ledger errors. Observation failures are not errors: they become
    /// unobserved entities.
    ///
    /// Lexicons with a deep read are read deep too, the env's accepted baseline subtracted, and
    /// what still drifts folded into their change sets ([`Project::assess_deep`]); a baseline
    /// that cannot be read is reported on stderr and ignored for this call.
    pub fn assess(&self, member: Option<&str>, env: &str) -> Result<EnvAssessment, Error> {
        let deep = self.assess_deep(member, env)?;
        if let Some(warning) = &deep.baseline_error {
            eprintln!("warning: {warning}");
        }
        Ok(deep.assessment)
    }

    /// Observes every lexicon bound to `env` (thin and deep) and returns its component inputs.
    fn component_inputs(&self, member: Option<&str>, env: &str) -> Result<Vec<(BoundLexicon, ComponentInput)>, Error> {
        let deletes_owned = self.deletes_owned(env);
        let mut inputs = Vec::new();
        for lexicon in self.lexicons(member, env)? {
            let input = lexicon.component_input(deletes_owned).map_err(|e| Error::Declared {
                env: env.to_owned(),
                lexicon: lexicon.name().to_owned(),
                source: Box::new(e),
            })?;
            inputs.push((lexicon, input));
        }
        Ok(inputs)
    }

    /// Applies every lexicon `env` declares, records each apply on the ledger, and says what
    /// changed. `mode` is [`DeleteMode::Never`] (nothing is deleted) or [`DeleteMode::OwnedOnly`]
    /// (also removes what chant owns and no longer declares, and makes the changes a plain apply
    /// only reports). A lexicon that does not implement apply is observed only, and said so.
    ///
    /// # Errors
    ///
    /// The first lexicon that fails (the ones before it are applied and recorded).
    pub fn apply_env(&self, member: Option<&str>, env: &str, mode: DeleteMode) -> Result<String, Error> {
        self.change_env(member, env, |l| l.apply(mode), "apply")
    }

    /// Applies every lexicon `env` declares as [`Project::apply_env`] does, behind the approved
    /// gate plan lines `approved` (redacted by the project's redactor, as the gate plan was):
    /// each lexicon that plans again under its own lock re-checks them there and fails, changing
    /// nothing, when what it would do was not approved
    /// ([`chant_lexicon::EnvLexicon::apply_approved`]).
    ///
    /// # Errors
    ///
    /// As [`Project::apply_env`].
    pub fn apply_env_approved(
        &self,
        member: Option<&str>,
        env: &str,
        mode: DeleteMode,
        approved: &[String],
    ) -> Result<String, Error> {
        let redact = |line: &str| self.redactor.redact(line);
        let approved = chant_lexicon::ApprovedPlan { changes: approved, redact: &redact };
        self.change_env(member, env, |l| l.apply_approved(mode, &approved), "apply")
    }

    fn change_env(
        &self,
        member: Option<&str>,
        env: &str,
        change: impl Fn(&BoundLexicon) -> Result<chant_lexicon::Applied<AppliedRecord>, HookError>,
        verb: &str,
    ) -> Result<String, Error> {
        let mut said = Vec::new();
        for lexicon in self.lexicons(member, env)? {
            match change(&lexicon) {
                Ok(applied) => {
                    self.record(member, env, lexicon.name(), &applied.record)?;
                    said.extend(applied.said);
                }
                Err(e) if e.is_not_implemented() => said.push(format!("{e}: observed only")),
                Err(e) => return Err(Error::Hook(e)),
            }
        }
        if said.is_empty() {
            return Err(Error::NothingDeclared { env: env.to_owned(), verb: verb.to_owned() });
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

    /// Brings the local ledger up to the remote's before a gate decision, when `[ledger] remote`
    /// names one, so that a run (and so a tick, whose dispatches are runs) walks through on an
    /// approval recorded from another clone, and never asks again beside one. Without a remote
    /// it does nothing and says nothing; when the remote cannot be read it says so on stderr,
    /// once per process, and the run decides on the local copy.
    pub fn sync_before_gate(&self) {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let Some(remote) = self.ledger.config().remote.as_deref() else { return };
        let why = match self.ledger.sync() {
            Ok(report) => match report.push {
                ledger::PushStatus::NotPushed { reason, .. } => reason,
                ledger::PushStatus::LocalOnly | ledger::PushStatus::Pushed { .. } => return,
            },
            Err(e) => chant_store::error::chain(&e),
        };
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "warning: the gate ledger could not be synchronised with {} before deciding ({}); deciding on the local copy",
                crate::terminal::printable(remote),
                crate::terminal::printable(&why)
            );
        }
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
    fn apply(&self, env: &str, mode: DeleteMode, approved: Option<&GatePlan>) -> Result<String, ServiceError> {
        match approved {
            None => self.project.apply_env(self.member, env, mode),
            Some(plan) => self.project.apply_env_approved(self.member, env, mode, &plan.changes),
        }
        .map_err(ServiceError::failed)
    }

    fn teardown(&self, env: &str, allow_holes: bool, approved: Option<&str>) -> Result<String, ServiceError> {
        self.project.teardown_env(self.member, env, allow_holes, approved).map_err(ServiceError::failed)
    }

    /// Synchronises with the remote first ([`Project::sync_before_gate`]).
    fn gate_facts(&self, op: &str) -> Result<Vec<GateFact>, ServiceError> {
        self.project.sync_before_gate();
        self.project.gate_facts(self.member, op).map(|(f, _)| f).map_err(ServiceError::failed)
    }

    fn append_gate_fact(&self, fact: &GateFact) -> Result<(), ServiceError> {
        self.project.ledger.append_record(self.member, fact).map(|_| ()).map_err(ServiceError::failed)
    }

    /// The plan of an apply from the env's live change sets ([`Project::assess`], what a tick
    /// and `lifecycle diff` use); of a teardown, from the teardown plan the step executes
    /// ([`teardown_gate_plan`]).
    fn plan(&self, verb: PlanVerb, env: &str) -> Result<Option<GatePlan>, ServiceError> {
        let redact = |line: &str| self.project.redactor.redact(line);
        if verb == PlanVerb::Teardown {
            let plan = self.project.teardown_plan(self.member, env).map_err(ServiceError::failed)?;
            return Ok(Some(teardown_gate_plan(&plan).redacted(redact)));
        }
        let assessment = self.project.assess(self.member, env).map_err(ServiceError::failed)?;
        Ok(Some(GatePlan::from_change_sets(verb, env, &assessment.change_sets).redacted(redact)))
    }

    /// Verifies against `[gates] allowed_signers` of `chant.toml`, relative to the project root,
    /// as the commit HEAD points at holds it (never an uncommitted edit).
    fn verify_seal(&self, fact: &GateFact, pending: &GateFact) -> Result<String, crate::gate::seal::SealError> {
        let Some(file) = &self.project.config.gates.allowed_signers else {
            return Err(crate::gate::seal::SealError::NoAllowedSigners);
        };
        let repo = self.project.ledger.repo().local();
        crate::gate::seal::verify_committed(fact, pending, &repo, &self.project.config.resolve(file))
    }
}
