//! The lexicon API: the interface every lexicon implements (chant's files, PostgreSQL and box
//! lexicons, which are crates of their own, and a user crate's), the observation contract they
//! answer to with its conformance suite, and the env declarations they read.
//!
//! Users reach all of it through the `chant` facade (`chant_lexicon`, `chant_lexicon::observe`); a
//! lexicon crate depends on this crate alone (with `chant-core` and `chant-store`), never on the
//! runtime that ticks it.
//!
//! A project declares what each env should contain in Rust: a plain function returning an
//! [`EnvDeclaration`], one typed part per lexicon, registered under the env's name with
//! `inventory` (re-exported here, so the project needs no dependency of its own); the facade's
//! `chant_lexicon` module shows one.
//!
//! # The plugin interface
//!
//! Every lexicon, chant's own included, is a plugin through the same three pieces, and the
//! project layer names none of them:
//!
//! - a declaration type implementing [`Declaration`]: its name, the `chant.toml` keys it reads
//!   under `[env.<name>]` ([`BindingKey`]), and how it binds to one env ([`Binding`], plus the
//!   newest record of its apply on the env's ledger);
//! - registered once with `inventory::submit! { chant_lexicon::Registration::of::<MyDeclaration>() }`
//!   ([`registry`]), which is what makes `chant.toml` accept its keys;
//! - for a step of its own (`sprite_apply_services(box = true)`), one [`steps::StepKind`] per
//!   step, submitted the same way: its kind, class and runner, which the runtime finds by kind;
//! - the bound lexicon implementing [`Lexicon`](crate::observe::Lexicon) (describe, the one
//!   required read) and [`EnvLexicon`] (declared entities, last apply, and the optional `apply` /
//!   `teardown` hooks, whose default is [`HookError::NotImplemented`]).
//!
//! The core binds each part of an env's declaration ([`BoundLexicon`]), observes them for ticks
//! and `lifecycle diff`, applies and tears them down for the `apply` and `teardown` steps, appends
//! their records to the ledger, and subscribes to their change streams in the operator.
//!
//! The modules below the lexicons live here too: the model and durations (re-exported from
//! `chant-core`), the observation contract ([`observe`]), redaction ([`redact`]), the tick's
//! hand-off variables ([`handoff`]) and the loopback-or-TLS HTTP GET ([`http`]).

// The storage layer (git, the ledger, leases) and what it stands on, under the paths the modules
// here name them by.
pub use chant_store::{backoff, canonical, clock, error, git, id, lease, ledger, process};

pub mod artifacts;
pub mod binding;
pub mod bound;
pub mod duration;
pub mod env;
pub mod estate;
#[cfg(feature = "import")]
pub mod export;
pub mod handoff;
pub mod http;
pub mod model;
pub mod observe;
pub mod plugin;
pub mod redact;
pub mod references;
pub mod registry;
pub mod steps;

pub use inventory;

pub use self::binding::{Binding, BindingKey, BindingKind};
pub use self::bound::{AppliedRecord, BoundLexicon};
pub use self::env::{DeclarationError, DeclaredEnv, EnvDeclaration, declaration, declared_envs};
pub use self::plugin::{Applied, ApprovedPlan, DeleteMode, EnvLexicon, Hook, HookError};
pub use self::registry::{BindError, Declaration, Registration, RegistryError};
