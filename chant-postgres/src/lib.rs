//! The postgres lexicon: declared schemas, tables, columns and comments in a real PostgreSQL
//! database, observed from `pg_catalog` and applied in one transaction.
//!
//! An env binds the *name* of the variable holding its DSN (`postgres_dsn_var` under
//! `[env.<name>]` in chant.toml) and declares its tables in Rust with a
//! [`PostgresDeclaration`]. A [`PostgresLexicon`] joins the two and answers the observation
//! contract ([`chant_lexicon::observe`]). Every reason arises from a real condition:
//!
//! | condition | verdict |
//! |---|---|
//! | the env binds no variable, or the variable is unset or unparseable | every entity `no-binding` |
//! | the server refuses the credentials (wrong password, none supplied, no `pg_hba` entry) | every entity `no-credentials` |
//! | the server cannot be reached, or the catalog read fails | every entity `read-failed` |
//! | a declared table in a schema the role has no USAGE on | that table and its columns `read-failed` |
//! | a declared materialized view (no reader) | `unsupported-kind` |
//! | the owned filter on, a declared table that is not chant's | `filtered` |
//!
//! Each unobserved entity carries the address asked (`postgres://app@127.0.0.1:55432/app`,
//! never with a password). Ownership is read from the COMMENT marker
//! (`[chant managed-by=chant stack=<project> env=<env>]`, see [`marker`]) on the
//! `describeResources` path, the lexicon's declared [`OwnershipChannel`]. The catalog is read in
//! [`catalog::QUERIES`] queries whatever its size ([`catalog`]); [`verdict`] turns it into an
//! observation.
//!
//! [`PostgresLexicon::apply`] runs in one transaction under an advisory lock keyed by project and
//! env (a second apply waits for the first, up to [`LOCK_TIMEOUT`], then finds nothing left to
//! do), converging only what is safe and reporting the rest ([`plan`]);
//! [`PostgresLexicon::teardown`] drops only what its teardown plan lists and still carries this
//! project's and env's marker. Both return a [`PostgresApplyRecord`] for the caller to append to
//! the ledger.
//!
//! Beyond the declared estate ([`estate`], one catalog read plus one foreign-key query): the
//! tables declared tables reference (and their schemas), the ambient views, tables and orphan
//! sequences of the declared schemas, the teardown plan of the marked tables (a hole where the
//! role lost USAGE) and each declared schema's status as a deploy unit.
//!
//! Like every lexicon it is a plugin: [`PostgresDeclaration`] implements
//! [`Declaration`](chant_lexicon::Declaration), registered with the key `postgres_dsn_var` (a
//! secret variable, so its value is redacted everywhere), and [`PostgresLexicon`] implements
//! [`EnvLexicon`](chant_lexicon::EnvLexicon).

pub mod catalog;
pub mod client;
#[cfg(feature = "import")]
pub mod codegen;
pub mod declaration;
pub mod deep;
pub mod estate;
#[cfg(feature = "import")]
pub mod export;
pub mod marker;
pub mod plan;
mod plugin;
pub mod references;
pub mod verdict;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::Config;
use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;

use self::client::{Bounds, Client, GenericClient};
use serde::{Deserialize, Serialize};

pub use declaration::{Column, Constraint, Index, PostgresDeclaration, Table};
pub use marker::Identity;
pub use plan::DeleteMode;

use self::catalog::Snapshot;
use chant_lexicon::model::UnobservedReason;
use chant_lexicon::observe::deep::{DeepError, DeepObservation};
use chant_lexicon::observe::estate::{Ambient, Dependencies, StackStatus, TeardownPlan};
use chant_lexicon::observe::{
    ChangeAction, ComponentInput, DeclaredEntity, EstateError, EstateHook, LastApply, Lexicon, LexiconError,
    Observation, OwnershipChannel, ReadPath, Unobserved, observe_component,
};

/// The component name of the postgres lexicon, used in status rows and apply records.
pub const COMPONENT: &str = "postgres";

/// The `chant.toml` key under `[env.<name>]` naming the variable that holds the env's DSN.
pub const DSN_VAR_KEY: &str = "postgres_dsn_var";

/// How long an apply waits for another apply of the same project and env to finish.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a login may take (TCP connect, startup and authentication, as libpq bounds it),
/// unless the DSN's `connect_timeout` says otherwise.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one query (a transaction's start and commit included) may wait for the server,
/// unless the binding's [`QUERY_TIMEOUT_KEY`] says otherwise. Longer than [`LOCK_TIMEOUT`], so an
/// apply waiting on another's lock meets the lock's timeout first.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(60);

/// The `chant.toml` key under `[env.<name>]` bounding each query of the env's binding
/// (`postgres_query_timeout = "20s"`; default [`QUERY_TIMEOUT`]).
pub const QUERY_TIMEOUT_KEY: &str = "postgres_query_timeout";

/// How many executed statements an apply record lists (the count is always complete).
const RECORDED_STATEMENTS: usize = 100;

/// The errors of the postgres lexicon's declaration, apply and teardown. Returned by
/// [`PostgresDeclaration::validate`], [`PostgresLexicon::apply`], [`PostgresLexicon::teardown`]
/// and [`PostgresLexicon::read_snapshot`]. No message ever holds a password.
#[derive(Debug, thiserror::Error)]
pub enum PostgresError {
    /// A declared identifier, type or default is refused.
    #[error("invalid postgres declaration for {entity}: {reason}")]
    InvalidDeclaration {
        /// The entity at fault.
        entity: String,
        /// Why.
        reason: String,
    },
    /// The env resolves to no database.
    #[error("env {env} has no usable PostgreSQL binding: {detail}")]
    NoBinding {
        /// The env.
        env: String,
        /// What is missing.
        detail: String,
    },
    /// The server refused the credentials.
    #[error("no credentials accepted by {address}: {detail}")]
    NoCredentials {
        /// The address (no password).
        address: String,
        /// The server's answer.
        detail: String,
    },
    /// The server could not be reached, or a read failed.
    #[error("cannot read {address}: {detail}")]
    Unreachable {
        /// The address (no password).
        address: String,
        /// What failed.
        detail: String,
    },
    /// Another apply of the same project and env held the advisory lock past the timeout.
    #[error(
        "another apply of env {env} holds the advisory lock on {address}; nothing was applied (lock wait timed out)"
    )]
    Locked {
        /// The env.
        env: String,
        /// The address (no password).
        address: String,
    },
    /// The apply ran behind an approved plan, and what it found to do under its lock differs
    /// from what was approved (the catalog changed after the approval, or after the run checked
    /// it); nothing was applied.
    #[error("apply to {address} rolled back: the plan approved for env {env} no longer holds: {difference}")]
    Unapproved {
        /// The address (no password).
        address: String,
        /// The env.
        env: String,
        /// The line planned under the lock that was not approved, and the line approved for the
        /// same entity.
        difference: String,
    },
    /// A statement failed; the whole transaction was rolled back.
    #[error("apply to {address} rolled back: `{statement}` failed: {detail}")]
    Statement {
        /// The address (no password).
        address: String,
        /// The statement.
        statement: String,
        /// The server's answer.
        detail: String,
    },
}

/// What one apply or teardown did, for the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostgresApplyRecord {
    /// The env.
    pub env: String,
    /// The component (`postgres`).
    pub component: String,
    /// The binding: the name of the variable holding the DSN.
    pub binding: String,
    /// `apply` or `teardown`.
    pub action: String,
    /// The delete mode of an apply (`never`, `owned-only`).
    pub delete_mode: String,
    /// How many statements ran.
    pub executed_count: usize,
    /// The first statements that ran (at most 100).
    pub executed: Vec<String>,
    /// Changes reported but not made.
    pub reported: Vec<String>,
    /// The declared entities this apply owns (empty after a teardown).
    pub owned: Vec<String>,
}

/// Whether `inner`, the `a, b, c` of an update line, lists `item` as one of its parts.
fn lists(inner: &str, item: &str) -> bool {
    inner == item
        || inner.starts_with(&format!("{item}, "))
        || inner.ends_with(&format!(", {item}"))
        || inner.contains(&format!(", {item}, "))
}

/// An apply or teardown record goes under `<env>/_apply/postgres`, in declared field order, as it
/// always has been written.
impl chant_store::ledger::Record for PostgresApplyRecord {
    const KIND: chant_store::ledger::RecordKind = chant_store::ledger::RecordKind::Apply;
    const NAME: &'static str = "postgres apply";
    const ENCODING: chant_store::ledger::Encoding = chant_store::ledger::Encoding::Declared;

    fn shard_key(&self, member: Option<&str>) -> Result<chant_store::ledger::ShardKey, chant_store::ledger::Error> {
        chant_store::ledger::ShardKey::apply(member, &self.env, &self.component)
    }
}

impl PostgresApplyRecord {
    /// Returns the record as the last recorded apply of `binding`: a teardown, or an apply of
    /// another binding, is "never applied".
    pub fn last_apply_for(&self, binding: &str) -> LastApply {
        if self.component == COMPONENT && self.binding == binding && self.action == "apply" {
            LastApply::recorded(self.owned.iter().cloned())
        } else {
            LastApply::none()
        }
    }

    /// Returns one line saying what it did.
    pub fn summary(&self) -> String {
        let mut s = format!("postgres {}: {} statement(s) executed", self.action, self.executed_count);
        if !self.reported.is_empty() {
            s.push_str(&format!(
                "; {} change(s) reported, not applied: {}",
                self.reported.len(),
                self.reported.join("; ")
            ));
        }
        s
    }
}

/// Why a connection could not be had.
enum ConnectFailure {
    NoBinding(String),
    NoCredentials { address: String, detail: String },
    Failed { address: String, detail: String, timed_out: bool },
}

/// The postgres lexicon bound to one env.
#[derive(Debug, Clone)]
pub struct PostgresLexicon {
    env: String,
    identity: Identity,
    /// Shared with the thread of an observation's second connection ([`read_catalog`]).
    declaration: std::sync::Arc<PostgresDeclaration>,
    var: Option<String>,
    dsn: Option<String>,
    /// The bound of each query ([`QUERY_TIMEOUT`] when `None`).
    query_timeout: Option<Duration>,
    owned_only: bool,
    last_apply: LastApply,
    /// The estate snapshot this binding's estate hooks answer from, read by the first of them.
    estate: std::sync::OnceLock<estate::EstateSnapshot>,
    /// The failure of a login the server did not answer within its bound: every later
    /// connection of this binding (a binding lives for one command or tick) fails with it at
    /// once instead of waiting out the bound again. Shared by clones.
    unanswered: std::sync::Arc<std::sync::OnceLock<(String, String)>>,
}

impl PostgresLexicon {
    /// Creates the lexicon for `env` of project `stack`, with no binding and no recorded apply.
    pub fn new(env: impl Into<String>, stack: impl Into<String>, declaration: PostgresDeclaration) -> Self {
        let env = env.into();
        PostgresLexicon {
            identity: Identity { stack: stack.into(), env: env.clone() },
            env,
            declaration: std::sync::Arc::new(declaration),
            var: None,
            dsn: None,
            query_timeout: None,
            owned_only: false,
            last_apply: LastApply::none(),
            estate: std::sync::OnceLock::new(),
            unanswered: std::sync::Arc::default(),
        }
    }

    /// Binds the name of the variable holding the DSN and its value (`None` when unset).
    #[must_use]
    pub fn with_binding(mut self, var: Option<String>, dsn: Option<String>) -> Self {
        self.var = var;
        self.dsn = dsn.filter(|d| !d.trim().is_empty());
        self.estate = std::sync::OnceLock::new();
        self.unanswered = std::sync::Arc::default();
        self
    }

    /// Binds the variable `var`, reading its value from the process environment.
    #[must_use]
    pub fn with_var(self, var: impl Into<String>) -> Self {
        let var = var.into();
        let dsn = std::env::var(&var).ok();
        self.with_binding(Some(var), dsn)
    }

    /// Bounds each query (a transaction's start and commit included) by `timeout` instead of
    /// [`QUERY_TIMEOUT`].
    #[must_use]
    pub fn with_query_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = Some(timeout);
        self
    }

    /// Returns how long a login and each query of this binding may wait for the server: the
    /// login by the DSN's `connect_timeout` (else [`CONNECT_TIMEOUT`]), each query by
    /// [`PostgresLexicon::with_query_timeout`] (else [`QUERY_TIMEOUT`]).
    pub fn bounds(&self, config: &Config) -> Bounds {
        Bounds {
            login: config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT),
            query: self.query_timeout.unwrap_or(QUERY_TIMEOUT),
        }
    }

    /// Turns the owned filter on: only chant's own resources are returned; a declared table that
    /// is not chant's is `filtered`.
    #[must_use]
    pub fn owned_only(mut self, on: bool) -> Self {
        self.owned_only = on;
        self
    }

    /// Sets the env's last recorded apply.
    #[must_use]
    pub fn with_last_apply(mut self, last_apply: LastApply) -> Self {
        self.last_apply = last_apply;
        self
    }

    /// Returns the declaration.
    pub fn declaration(&self) -> &PostgresDeclaration {
        &self.declaration
    }

    /// Returns the identity stamped in markers.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Returns the binding apply records carry: the variable's name.
    pub fn binding(&self) -> Option<&str> {
        self.var.as_deref()
    }

    /// Returns the address asked, without a password, when the DSN parses.
    pub fn address(&self) -> Option<String> {
        let dsn = self.dsn.as_deref()?;
        Config::from_str(dsn).ok().map(|c| address(&c))
    }

    /// Returns the declared entities.
    pub fn declared(&self) -> Vec<DeclaredEntity> {
        self.declaration.entities()
    }

    /// Observes and returns everything the observe core needs to assess this component.
    pub fn component_input(&self, delete_counts_as_drift: bool) -> ComponentInput {
        let declared = self.declared();
        let observation = observe_component(self, &declared);
        ComponentInput {
            component: COMPONENT.to_owned(),
            declared,
            observation,
            last_apply: self.last_apply.clone(),
            delete_counts_as_drift,
        }
    }

    /// The connection config of the binding, with chant's connect timeout and application name
    /// unless the DSN sets them.
    fn config(&self) -> Result<Config, ConnectFailure> {
        let Some(var) = &self.var else {
            return Err(ConnectFailure::NoBinding(format!(
                "env {} binds no DSN variable (set `postgres_dsn_var` under `[env.{}]` in chant.toml)",
                self.env, self.env
            )));
        };
        let Some(dsn) = &self.dsn else {
            return Err(ConnectFailure::NoBinding(format!(
                "the variable {var} holding the DSN is not set; export it (`export {var}=postgres://user@host/db`)"
            )));
        };
        let mut config = Config::from_str(dsn).map_err(|e| {
            ConnectFailure::NoBinding(format!(
                "the DSN in {var} does not parse: {}",
                chant_lexicon::redact::strip_url_password(&e.to_string())
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("chant");
        }
        Ok(config)
    }

    fn connect(&self) -> Result<(Client, String), ConnectFailure> {
        let config = self.config()?;
        self.unless_unanswered()?;
        connect_with(&config, self.bounds(&config)).map_err(|f| self.remember(f))
    }

    /// Fails at once when an earlier login of this binding was not answered within its bound.
    fn unless_unanswered(&self) -> Result<(), ConnectFailure> {
        match self.unanswered.get() {
            Some((address, detail)) => {
                Err(ConnectFailure::Failed { address: address.clone(), detail: detail.clone(), timed_out: true })
            }
            None => Ok(()),
        }
    }

    /// Keeps `failure` when it is a login the server did not answer, for [`Self::unless_unanswered`].
    fn remember(&self, failure: ConnectFailure) -> ConnectFailure {
        if let ConnectFailure::Failed { address, detail, timed_out: true } = &failure {
            let _ = self.unanswered.set((address.clone(), detail.clone()));
        }
        failure
    }

    fn connect_or_error(&self) -> Result<(Client, String), PostgresError> {
        self.connect().map_err(|f| self.connect_error(f))
    }

    fn connect_error(&self, failure: ConnectFailure) -> PostgresError {
        match failure {
            ConnectFailure::NoBinding(detail) => PostgresError::NoBinding { env: self.env.clone(), detail },
            ConnectFailure::NoCredentials { address, detail } => PostgresError::NoCredentials { address, detail },
            ConnectFailure::Failed { address, detail, .. } => PostgresError::Unreachable { address, detail },
        }
    }

    /// Connects through the binding and runs `read` in one read-only, repeatable-read
    /// transaction (one consistent snapshot of the catalog), returning its answer with the
    /// address asked (no password).
    ///
    /// # Errors
    ///
    /// [`PostgresError::NoBinding`], [`PostgresError::NoCredentials`] or
    /// [`PostgresError::Unreachable`] (the connection, the read or the commit failed).
    pub(crate) fn read_in_snapshot<T>(
        &self,
        read: impl FnOnce(&mut client::Transaction<'_>) -> Result<T, client::Error>,
    ) -> Result<(T, String), PostgresError> {
        let (mut client, address) = self.connect_or_error()?;
        let answer = catalog::in_one_snapshot(&mut client, read)
            .map_err(|e| PostgresError::Unreachable { address: address.clone(), detail: describe(&e) })?;
        Ok((answer, address))
    }

    /// Reads the live catalog as an observation does: in one snapshot, over two connections,
    /// the second importing the snapshot the first's read-only, repeatable-read
    /// transaction exports (see [`catalog`]).
    ///
    /// # Errors
    ///
    /// [`PostgresError::NoBinding`], [`PostgresError::NoCredentials`] or
    /// [`PostgresError::Unreachable`].
    pub fn read_snapshot(&self) -> Result<(Snapshot, String), PostgresError> {
        let (snapshot, address) = self
            .config()
            .and_then(|config| {
                self.unless_unanswered()?;
                read_catalog(&config, self.bounds(&config), |columns, _| columns, |_, _| ())
                    .map_err(|f| self.remember(f))
            })
            .map_err(|f| self.connect_error(f))?;
        let snapshot = snapshot
            .map(catalog::Read::snapshot)
            .map_err(|e| PostgresError::Unreachable { address: address.clone(), detail: describe(&e) })?;
        Ok((snapshot, address))
    }

    /// Reads the reference attributes of the live catalog ([`references::read_live_attrs`]), in
    /// one read-only, repeatable-read transaction.
    ///
    /// # Errors
    ///
    /// As [`PostgresLexicon::read_snapshot`].
    pub fn read_live_attrs(&self) -> Result<chant_lexicon::references::Attrs, PostgresError> {
        self.read_in_snapshot(|tx| references::read_live_attrs(tx)).map(|(attrs, _)| attrs)
    }

    /// Reads the catalog and its foreign keys (in one read-only, repeatable-read transaction),
    /// for the estate readers ([`estate`]).
    ///
    /// # Errors
    ///
    /// As [`PostgresLexicon::read_snapshot`].
    pub fn read_estate(&self) -> Result<(estate::EstateSnapshot, String), PostgresError> {
        self.read_in_snapshot(|tx| estate::read(tx))
    }

    /// The estate snapshot of this binding: read once, by the first estate hook asked (a failed
    /// read is not kept, so the next hook reads again), so that the dependencies, the ambient
    /// resources, the teardown plan and the units' status of one binding are of one instant and
    /// cost one read ([`estate::QUERIES`] queries). A binding lives for one command or tick; the
    /// teardown itself reads afresh under its lock.
    fn estate_or(&self, hook: EstateHook) -> Result<&estate::EstateSnapshot, EstateError> {
        if let Some(snapshot) = self.estate.get() {
            return Ok(snapshot);
        }
        let (snapshot, _) = self.read_estate().map_err(|e| EstateError::failed(COMPONENT, hook, e))?;
        Ok(self.estate.get_or_init(|| snapshot))
    }

    /// Applies the declaration in one transaction under the env's advisory lock; see [`plan`].
    ///
    /// # Errors
    ///
    /// An invalid declaration, a binding, credential or connection failure, the lock held past
    /// [`LOCK_TIMEOUT`], or a failing statement (everything rolled back).
    pub fn apply(&self, mode: DeleteMode) -> Result<PostgresApplyRecord, PostgresError> {
        self.apply_checked(mode, None)
    }

    /// Applies the declaration as [`PostgresLexicon::apply`] does, behind the approved plan
    /// `approved` (the change lines of the gate plan an approval bound, every component's; the
    /// `postgres/` ones are read), whose lines passed its redactor. Under the advisory lock, after
    /// reading the catalog and before any statement runs, it plans the declared tables and
    /// columns as the gate plan does
    /// ([`ChangeEntry::apply_line`](chant_lexicon::observe::ChangeEntry::apply_line)) and rolls
    /// back unless every create it finds is an approved line and every update delta, with the
    /// value it changes from and to, is in the approved update line of the same entity (a
    /// column that became `text` after `varchar(200) -> varchar(100)` was approved is refused,
    /// not truncated). Doing less than approved is not refused. Deletes (owned-only) and what
    /// the deep read plans are not re-checked here; the run's digest check covers them up to the
    /// apply.
    ///
    /// # Errors
    ///
    /// As [`PostgresLexicon::apply`], and [`PostgresError::Unapproved`] when the plans differ.
    pub fn apply_approved(
        &self,
        mode: DeleteMode,
        approved: &chant_lexicon::ApprovedPlan<'_>,
    ) -> Result<PostgresApplyRecord, PostgresError> {
        self.apply_checked(mode, Some(approved))
    }

    fn apply_checked(
        &self,
        mode: DeleteMode,
        approved: Option<&chant_lexicon::ApprovedPlan<'_>>,
    ) -> Result<PostgresApplyRecord, PostgresError> {
        self.declaration.validate()?;
        let (plan, address) = self.in_locked_transaction(|snapshot, deep_catalog, address| {
            if let Some(approved) = approved {
                self.check_approved(snapshot, address, approved.changes, approved.redact)?;
            }
            let mut plan = plan::apply(&self.declaration, snapshot, &self.identity, mode);
            let created: Vec<String> = self
                .declaration
                .tables()
                .iter()
                .filter(|(entity, table)| {
                    !snapshot.relations.contains_key(*entity)
                        && snapshot.schemas.get(&table.schema).is_none_or(|s| s.usage)
                })
                .map(|(entity, _)| entity.clone())
                .collect();
            deep::plan(&mut plan, &self.declaration, deep_catalog, &self.identity, &created);
            Ok(plan)
        })?;
        Ok(self.record("apply", mode, &plan, self.declaration.tables().keys().cloned().collect(), &address))
    }

    /// Executes the teardown plan `planned` (what [`Lexicon::teardown_owned`] answered, and
    /// `lifecycle teardown <env>` printed) in one transaction under the env's advisory lock: drops
    /// each table it lists that still carries this project's and env's marker, then each schema
    /// it lists; nothing it does not list is touched, and the record reports what was left.
    ///
    /// # Errors
    ///
    /// As [`PostgresLexicon::apply`].
    pub fn teardown(&self, planned: &TeardownPlan) -> Result<PostgresApplyRecord, PostgresError> {
        let (plan, address) =
            self.in_locked_transaction(|snapshot, _, _| Ok(plan::teardown(snapshot, &self.identity, planned)))?;
        Ok(self.record("teardown", DeleteMode::OwnedOnly, &plan, Vec::new(), &address))
    }

    fn record(
        &self,
        action: &str,
        mode: DeleteMode,
        plan: &plan::Plan,
        owned: Vec<String>,
        _address: &str,
    ) -> PostgresApplyRecord {
        let executed: Vec<String> = plan.statements.iter().map(|s| s.sql.clone()).collect();
        PostgresApplyRecord {
            env: self.env.clone(),
            component: COMPONENT.to_owned(),
            binding: self.var.clone().unwrap_or_default(),
            action: action.to_owned(),
            delete_mode: mode.as_str().to_owned(),
            executed_count: executed.len(),
            executed: executed.into_iter().take(RECORDED_STATEMENTS).collect(),
            reported: plan.reported.clone(),
            owned,
        }
    }

    /// Connects, opens a transaction, takes the advisory lock, reads the catalog, plans with
    /// `make`, runs the plan and commits. Returns the plan as run (tentative statements that
    /// failed moved to `reported`).
    fn in_locked_transaction(
        &self,
        make: impl FnOnce(&Snapshot, &deep::DeepCatalog, &str) -> Result<plan::Plan, PostgresError>,
    ) -> Result<(plan::Plan, String), PostgresError> {
        let (mut client, address) = self.connect_or_error()?;
        let failed = |statement: &str, e: &client::Error| PostgresError::Statement {
            address: address.clone(),
            statement: statement.to_owned(),
            detail: describe(e),
        };
        let mut tx = client.transaction().map_err(|e| failed("BEGIN", &e))?;
        let timeout = format!("SET LOCAL lock_timeout = '{}s'", LOCK_TIMEOUT.as_secs());
        tx.batch_execute(&timeout).map_err(|e| failed(&timeout, &e))?;
        if let Err(e) = tx.execute("SELECT pg_catalog.pg_advisory_xact_lock($1)", &[&self.lock_key()]) {
            if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) {
                return Err(PostgresError::Locked { env: self.env.clone(), address });
            }
            return Err(failed("SELECT pg_advisory_xact_lock(...)", &e));
        }
        let snapshot = catalog::read(&mut tx).map_err(|e| failed("(catalog read)", &e))?;
        let tables: Vec<String> = self.declaration.tables().keys().cloned().collect();
        let deep_catalog = deep::read(&mut tx, &tables).map_err(|e| failed("(deep catalog read)", &e))?;
        // An error here drops the transaction, which rolls it back.
        let mut plan = make(&snapshot, &deep_catalog, &address)?;
        let mut ran = Vec::new();
        for statement in std::mem::take(&mut plan.statements) {
            match &statement.tentative {
                None => {
                    tx.batch_execute(&statement.sql).map_err(|e| failed(&statement.sql, &e))?;
                    ran.push(statement);
                }
                Some(why) => {
                    let mut sp = tx.savepoint("chant_tentative").map_err(|e| failed("SAVEPOINT", &e))?;
                    match sp.batch_execute(&statement.sql) {
                        Ok(()) => {
                            sp.commit().map_err(|e| failed("RELEASE SAVEPOINT", &e))?;
                            ran.push(statement);
                        }
                        Err(_) => {
                            sp.rollback().map_err(|e| failed("ROLLBACK TO SAVEPOINT", &e))?;
                            plan.reported.push(why.clone());
                        }
                    }
                }
            }
        }
        tx.commit().map_err(|e| failed("COMMIT", &e))?;
        plan.statements = ran;
        Ok((plan, address))
    }

    /// Checks that every create and update of a declared entity `snapshot` calls for is in
    /// `approved`: a create as its line, an update delta by delta with the value it changes from
    /// and to; see [`PostgresLexicon::apply_approved`].
    fn check_approved(
        &self,
        snapshot: &Snapshot,
        address: &str,
        approved: &[String],
        redact: &dyn Fn(&str) -> String,
    ) -> Result<(), PostgresError> {
        let ctx = verdict::ReadContext { identity: &self.identity, owned_only: self.owned_only, address };
        let observation = verdict::observation(&self.declaration, snapshot, &ctx);
        let declared = self.declared();
        let change_set =
            chant_lexicon::observe::change_set::build_change_set(COMPONENT, &declared, &observation, &self.last_apply);
        let names: std::collections::BTreeSet<&str> = declared.iter().map(|d| d.name.as_str()).collect();
        let approved_line = |verb: &str, name: &str| {
            approved.iter().find(|l| {
                l.strip_prefix(verb)
                    .and_then(|l| l.strip_prefix(COMPONENT))
                    .and_then(|l| l.strip_prefix('/'))
                    .and_then(|l| l.strip_prefix(name))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(" ("))
            })
        };
        let unapproved = |line: String, name: &str| {
            let then = approved_line("update ", name)
                .or_else(|| approved_line("create ", name))
                .map_or_else(|| "nothing".to_owned(), |l| format!("`{l}`"));
            PostgresError::Unapproved {
                address: address.to_owned(),
                env: self.env.clone(),
                difference: format!("`{}` was not approved (approved for it: {then})", redact(&line)),
            }
        };
        for entry in change_set.entries.iter().filter(|e| names.contains(e.name.as_str())) {
            let Some(line) = entry.apply_line(COMPONENT) else { continue };
            match entry.action {
                ChangeAction::Create if approved_line("create ", &entry.name).is_none() => {
                    return Err(unapproved(line, &entry.name));
                }
                ChangeAction::Update => {
                    let Some(then) = approved_line("update ", &entry.name) else {
                        return Err(unapproved(line, &entry.name));
                    };
                    let inner = then.split_once(" (").and_then(|(_, rest)| rest.strip_suffix(')')).unwrap_or("");
                    for delta in &entry.deltas {
                        let live = delta.live.as_deref().unwrap_or("(none)");
                        let text = redact(&format!("{}: {live} -> {}", delta.property, delta.declared));
                        if !lists(inner, &text) {
                            return Err(unapproved(line, &entry.name));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The advisory lock key of this project and env.
    fn lock_key(&self) -> i64 {
        let key = format!("chant:postgres:{}:{}", self.identity.stack, self.identity.env);
        i64::from_ne_bytes(chant_lexicon::model::contract::fnv1a64(key.as_bytes()).to_ne_bytes())
    }

    fn all_unobserved(
        &self,
        declared: &[DeclaredEntity],
        reason: UnobservedReason,
        detail: &str,
        address: Option<&str>,
    ) -> Observation {
        let mut observation = Observation::new();
        for entity in declared {
            let mut verdict = Unobserved::new(reason).detail(detail);
            verdict.kind = entity.kind.clone();
            verdict.queried = address.map(Arc::from);
            observation.insert_unobserved(entity.name.clone(), verdict);
        }
        observation
    }
}

impl Lexicon for PostgresLexicon {
    fn name(&self) -> &str {
        COMPONENT
    }

    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        self.declaration
            .validate()
            .map_err(|e| LexiconError::InvalidDeclaration { lexicon: COMPONENT.to_owned(), detail: e.to_string() })?;
        // The verdicts the schemas and relations decide are made on the second connection's
        // thread as soon as it has read them; the columns' verdicts and the `queried` map as
        // soon as the first has read the columns. Each is made while the other connection may
        // still be reading.
        // The columns are handed over: their values move into the verdicts.
        let prepare = |columns: catalog::NamedColumns, address: &str| {
            let ctx = verdict::ReadContext { identity: &self.identity, owned_only: self.owned_only, address };
            let catalog::NamedColumns { mut columns, names } = columns;
            // Of equal names the last read stays, as filing them under their names keeps it.
            let by_table: std::collections::HashMap<&str, usize> =
                names.iter().enumerate().map(|(i, name)| (name.as_str(), i)).collect();
            verdict::prepare(&self.declaration, &ctx, |entity| {
                let list = by_table.get(entity).and_then(|&i| columns.get_mut(i)).map(|(_, list)| std::mem::take(list));
                verdict::LiveColumns::Owned(list.unwrap_or_default())
            })
        };
        let relation_verdicts = {
            let declaration = std::sync::Arc::clone(&self.declaration);
            let identity = self.identity.clone();
            let owned_only = self.owned_only;
            move |relations: &catalog::Relations, address: &str| {
                let ctx = verdict::ReadContext { identity: &identity, owned_only, address };
                verdict::relation_verdicts(&declaration, &relations.schemas, &relations.relations, &ctx)
            }
        };
        let read = self.config().and_then(|config| {
            self.unless_unanswered()?;
            read_catalog(&config, self.bounds(&config), prepare, relation_verdicts).map_err(|f| self.remember(f))
        });
        let (snapshot, address) = match read {
            Ok(read) => read,
            Err(ConnectFailure::NoBinding(detail)) => {
                return Ok(self.all_unobserved(declared, UnobservedReason::NoBinding, &detail, None));
            }
            Err(ConnectFailure::NoCredentials { address, detail }) => {
                return Ok(self.all_unobserved(declared, UnobservedReason::NoCredentials, &detail, Some(&address)));
            }
            Err(ConnectFailure::Failed { address, detail, .. }) => {
                return Ok(self.all_unobserved(declared, UnobservedReason::ReadFailed, &detail, Some(&address)));
            }
        };
        match snapshot {
            Ok(catalog::Read::Shared { made, early, .. }) => {
                Ok(verdict::observation_of(&self.declaration, made, early, self.owned_only))
            }
            Ok(catalog::Read::Whole(snapshot)) => {
                let ctx =
                    verdict::ReadContext { identity: &self.identity, owned_only: self.owned_only, address: &address };
                Ok(verdict::observation(&self.declaration, &snapshot, &ctx))
            }
            Err(e) => Ok(self.all_unobserved(
                declared,
                UnobservedReason::ReadFailed,
                &format!("the catalog read failed: {}", describe(&e)),
                Some(&address),
            )),
        }
    }

    fn ownership_channel(&self) -> Option<OwnershipChannel> {
        Some(marker::channel())
    }

    fn read_paths(&self) -> &[ReadPath] {
        &[ReadPath::DescribeResources, ReadPath::ObserveResourcesDeep]
    }

    // --- deep read hooks ---

    fn observe_resources_deep(&self, _declared: &[DeclaredEntity]) -> Result<DeepObservation, DeepError> {
        Ok(self
            .read_deep()
            .map(|(catalog, _)| deep::observation(&self.declaration, &catalog))
            .map_err(|e| LexiconError::read_failed(COMPONENT, "the deep catalog read failed", e))?)
    }

    // --- estate hooks ---

    fn observe_dependencies(&self, _: &[DeclaredEntity]) -> Result<Dependencies, EstateError> {
        Ok(estate::dependencies(&self.declaration, self.estate_or(EstateHook::Dependencies)?))
    }

    fn ambient_kinds(&self) -> Vec<String> {
        estate::AMBIENT_KINDS.iter().map(|k| (*k).to_owned()).collect()
    }

    fn observe_ambient(&self, _: &[DeclaredEntity], _: &Observation) -> Result<Ambient, EstateError> {
        Ok(estate::ambient(&self.declaration, self.estate_or(EstateHook::Ambient)?))
    }

    fn teardown_owned(&self, _: &[DeclaredEntity]) -> Result<TeardownPlan, EstateError> {
        Ok(estate::teardown_plan(&self.estate_or(EstateHook::TeardownOwned)?.catalog, &self.identity))
    }

    fn stack_units(&self) -> Vec<String> {
        self.declaration.schemas().into_iter().collect()
    }

    fn describe_stack_status(&self, unit: &str) -> Result<StackStatus, EstateError> {
        Ok(estate::stack_status(&self.declaration, &self.estate_or(EstateHook::StackStatus)?.catalog, unit))
    }
}

impl PostgresLexicon {
    /// Reads the deep catalog of the declared tables (in one read-only, repeatable-read
    /// transaction, [`deep::QUERIES`] queries).
    ///
    /// # Errors
    ///
    /// As [`PostgresLexicon::read_snapshot`].
    pub fn read_deep(&self) -> Result<(deep::DeepCatalog, String), PostgresError> {
        let tables: Vec<String> = self.declaration.tables().keys().cloned().collect();
        self.read_in_snapshot(|tx| deep::read(tx, &tables))
    }
}

/// Connects with `config`, telling refused credentials from other failures.
fn connect_with(config: &Config, bounds: Bounds) -> Result<(Client, String), ConnectFailure> {
    match client::connect(config, bounds) {
        Ok(client) => Ok((client, address(config))),
        Err(e) => Err(failure(config, &e)),
    }
}

/// The failure a refused or failed login is reported as.
fn failure(config: &Config, e: &client::Error) -> ConnectFailure {
    let (address, detail) = (address(config), describe(e));
    if is_auth_failure(e) {
        ConnectFailure::NoCredentials { address, detail }
    } else {
        ConnectFailure::Failed { address, detail, timed_out: e.is_timeout() }
    }
}

/// Whether a login was refused by a connection limit (SQLSTATE 53300, `too many connections`).
fn over_connection_limit(e: &client::Error) -> bool {
    e.code() == Some(&SqlState::TOO_MANY_CONNECTIONS)
}

/// What [`read_catalog`] returns: the read (with what its `meanwhile` made of the columns and
/// its `beside` of the schemas and relations, when it went over two connections), or the read's
/// failure; and the address asked.
type CatalogRead<P, B> = (Result<catalog::Read<P, B>, client::Error>, String);

/// The catalog read of an observation ([`catalog::read_shared`]): two connections are opened
/// at once, the second on a thread of its own, and the second reads the schemas and relations
/// in the snapshot the first exports while the first reads the columns. The first connection's
/// failure is the observation's, with one exception: when the first is refused and the second
/// got in (a role allowed one connection, or a server with one slot left, gave the slot to the
/// second), the second reads everything alone, in one snapshot of its own. Otherwise the
/// second is an optimisation: when it fails, or has not answered within as long again as the
/// first's read has taken (and [`SHARE_GRACE`]), the first reads everything itself. A DSN of
/// several hosts reads over one connection (the second could reach another server).
///
/// Each connection's thread works on what it has read as soon as it has it, while the other
/// may still be reading: `meanwhile` is handed the columns and given the address on the first,
/// `beside` the schemas and relations and the address on the second (or on the first, when
/// that one read them itself). Returns the snapshot with both answers (`None` when the read
/// went over one connection), or the read's failure, with the address asked.
fn read_catalog<P, B, F>(
    config: &Config,
    bounds: Bounds,
    meanwhile: impl FnOnce(catalog::NamedColumns, &str) -> P,
    beside: F,
) -> Result<CatalogRead<P, B>, ConnectFailure>
where
    B: Send + 'static,
    F: Fn(&catalog::Relations, &str) -> B + Send + Sync + 'static,
{
    if config.get_hosts().len() > 1 || config.get_hostaddrs().len() > 1 {
        // With several hosts the second connection could reach another server: one connection.
        let (mut client, address) = connect_with(config, bounds)?;
        let snapshot = catalog::in_one_snapshot(&mut client, |tx| catalog::read(tx)).map(catalog::Read::Whole);
        client.close_in_background();
        return Ok((snapshot, address));
    }
    let started = Instant::now();
    let (share, shared) = std::sync::mpsc::channel::<catalog::Share>();
    let (answer, answered) = std::sync::mpsc::sync_channel(1);
    let (connected, second_in) = std::sync::mpsc::sync_channel(1);
    let second = config.clone();
    let beside = std::sync::Arc::new(beside);
    let second_beside = std::sync::Arc::clone(&beside);
    // Both logins at once: the second's no longer waits for the first's. Not joined: the first
    // connection never waits on the second past its own read (a pooler with one server
    // connection would make it wait for the first's own transaction). Its channel closes when
    // `share` is dropped, on every path out of here; it then ends once its own connection
    // attempt does.
    std::thread::spawn(move || {
        let address = address(&second);
        catalog::second_reader(
            &second,
            bounds,
            connected,
            &shared,
            |relations| second_beside(relations, &address),
            |read| {
                let _ = answer.send(read);
            },
        );
    });
    let (mut client, address) = match client::connect(config, bounds) {
        Ok(first) => (first, address(config)),
        Err(e) => {
            // The slot the first was refused may be the second's: then the second reads alone.
            let second_got_in = second_in.recv().unwrap_or(false);
            if second_got_in
                && share.send(catalog::Share::Alone).is_ok()
                && let Ok(Some(catalog::SecondRead::Alone(snapshot))) = answered.recv()
            {
                return Ok((snapshot.map(catalog::Read::Whole), address(config)));
            }
            // A connection limit both logins met at once (each counted the other): one more
            // login, alone, reads everything.
            if !second_got_in && over_connection_limit(&e) {
                drop(share);
                let (mut client, address) = connect_with(config, bounds)?;
                let snapshot = catalog::in_one_snapshot(&mut client, |tx| catalog::read(tx)).map(catalog::Read::Whole);
                client.close_in_background();
                return Ok((snapshot, address));
            }
            return Err(failure(config, &e));
        }
    };
    let snapshot = catalog::read_shared(
        &mut client,
        share,
        || {
            // As long again as the first connection's read has taken, and a second more: a second
            // connection slower than that is waiting on something else, and the first reads alone.
            match answered.recv_timeout(started.elapsed() + SHARE_GRACE) {
                Ok(Some(catalog::SecondRead::Relations(relations, made))) => Some((relations, made)),
                _ => None,
            }
        },
        |columns| meanwhile(columns, &address),
        |relations| beside(relations, &address),
    );
    // Read: the session ends (its goodbye ends the read-only transaction on the server) without
    // the observation waiting for it.
    client.close_in_background();
    Ok((snapshot, address))
}

/// How much longer than the first connection's read the first waits for the second's answer.
const SHARE_GRACE: Duration = Duration::from_secs(1);

/// Renders the address of a connection config without its password:
/// `postgres://<user>@<host>:<port>/<dbname>`.
pub fn address(config: &Config) -> String {
    let user = config.get_user().unwrap_or("");
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) if h.contains(':') => format!("[{h}]"),
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() { String::new() } else { format!("{user}@") };
    format!("postgres://{at}{host}:{port}/{db}")
}

/// Returns true when the error is the server refusing the credentials (or the client having
/// none to give).
fn is_auth_failure(e: &client::Error) -> bool {
    if let Some(code) = e.code()
        && (code == &SqlState::INVALID_PASSWORD || code == &SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        return true;
    }
    let text = e.to_string();
    text.contains("password missing") || text.contains("no password supplied")
}

/// Renders an error in one line, with the server's message when there is one, and no password.
fn describe(e: &client::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => chant_store::error::chain(e),
    };
    chant_lexicon::redact::sanitise(&chant_lexicon::redact::strip_url_password(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_never_carries_the_password() {
        let c = Config::from_str("postgres://app:hunter2@127.0.0.1:55432/app").unwrap();
        assert_eq!(address(&c), "postgres://app@127.0.0.1:55432/app");
        let c = Config::from_str("host=127.0.0.1 port=5 user=u password=secret dbname=d").unwrap();
        assert_eq!(address(&c), "postgres://u@127.0.0.1:5/d");
    }

    #[test]
    fn no_binding_without_a_variable_or_a_value() {
        let declaration = PostgresDeclaration::new().table(Table::new("public", "t").column(Column::new("id", "int")));
        let lexicon = PostgresLexicon::new("prod", "p", declaration.clone());
        let observation = observe_component(&lexicon, &lexicon.declared());
        assert!(observation.unobserved.values().all(|u| u.reason == UnobservedReason::NoBinding));
        assert!(observation.unobserved["public.t"].detail.as_deref().unwrap().contains("postgres_dsn_var"));
        let unset = PostgresLexicon::new("prod", "p", declaration.clone()).with_binding(Some("PG_URL".into()), None);
        let o = observe_component(&unset, &unset.declared());
        assert_eq!(
            o.unobserved["public.t"].detail.as_deref(),
            Some("the variable PG_URL holding the DSN is not set; export it (`export PG_URL=postgres://user@host/db`)")
        );
        let bad = PostgresLexicon::new("prod", "p", declaration)
            .with_binding(Some("PG_URL".into()), Some("postgres://a:b@[".into()));
        let o = observe_component(&bad, &bad.declared());
        assert_eq!(o.unobserved["public.t"].reason, UnobservedReason::NoBinding);
        assert!(!o.unobserved["public.t"].detail.as_deref().unwrap().contains(":b@"));
        assert!(matches!(bad.apply(DeleteMode::Never), Err(PostgresError::NoBinding { .. })));
    }

    #[test]
    fn the_channel_is_declared_on_an_implemented_path() {
        let lexicon = PostgresLexicon::new("prod", "p", PostgresDeclaration::new());
        chant_lexicon::observe::check_lexicon(&lexicon).unwrap();
    }
}
