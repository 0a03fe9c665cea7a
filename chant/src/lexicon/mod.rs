//! Lexicons: readers and writers of one kind of substrate each (files, PostgreSQL, a box's
//! services, or a user crate's own), the plugin interface they all implement, and the env
//! declarations they read.
//!
//! A project declares what each env should contain in Rust: a plain function returning an
//! [`EnvDeclaration`], one typed part per lexicon, registered under the env's name with
//! `inventory` (re-exported here, so the project needs no dependency of its own):
//!
//! ```
//! use chant::lexicon::{DeclaredEnv, EnvDeclaration};
//! use chant::lexicon::files::FilesDeclaration;
//!
//! fn staging() -> EnvDeclaration {
//!     EnvDeclaration::new().with(FilesDeclaration::new().file("app.conf", "port = 8080\n", 0o644))
//! }
//!
//! chant::lexicon::inventory::submit! { DeclaredEnv::new("staging", staging) }
//!
//! let declared = chant::lexicon::declaration("staging").unwrap().unwrap();
//! assert_eq!(declared.get::<FilesDeclaration>().unwrap().files().len(), 1);
//! ```
//!
//! Why a registered function rather than a macro or a trait: the declaration is ordinary Rust
//! (loops, constants, `include_str!`), built only when an env is observed or applied; the
//! registry is keyed by name like the op registry, so the project binary and every process it
//! dispatches find the same declaration without the project wiring anything into `main`; and no
//! new macro surface has to be checked at compile time. Bindings (the files root) stay in
//! chant.toml; the declaration says only *what*, never *where*.
//!
//! # The plugin interface
//!
//! Every lexicon, chant's own included, is a plugin through the same three pieces, and the
//! project layer names none of them:
//!
//! - a declaration type implementing [`Declaration`]: its name, the `chant.toml` keys it reads
//!   under `[env.<name>]` ([`BindingKey`]), and how it binds to one env ([`Binding`], plus the
//!   newest record of its apply on the env's ledger);
//! - registered once with `inventory::submit! { chant::lexicon::Registration::of::<MyDeclaration>() }`
//!   ([`registry`]), which is what makes `chant.toml` accept its keys;
//! - for a step of its own (`sprite_apply_services(box = true)`), one [`steps::StepKind`] per
//!   step, submitted the same way: its kind, class and runner, which the runtime finds by kind;
//!   and one step macro per step, named after it, which declares it to `op!` and `converge_op!`
//!   (see `docs/architecture.md`, "Write a lexicon with its own steps");
//! - the bound lexicon implementing [`Lexicon`](crate::observe::Lexicon) (describe, the one
//!   required read) and [`EnvLexicon`] (declared entities, last apply, and the optional `apply` /
//!   `teardown` hooks, whose default is [`HookError::NotImplemented`]).
//!
//! The core binds each part of an env's declaration ([`BoundLexicon`]), observes them for ticks
//! and `lifecycle diff`, applies and tears them down for the `apply` and `teardown` steps, appends
//! their records to the ledger, and subscribes to their change streams in the operator.

#[cfg(feature = "import")]
pub use chant_lexicon::export;
pub use chant_lexicon::{
    Applied, AppliedRecord, ApprovedPlan, BindError, Binding, BindingKey, BindingKind, BoundLexicon, Declaration,
    DeclarationError, DeclaredEnv, DeleteMode, EnvDeclaration, EnvLexicon, Hook, HookError, Registration,
    RegistryError, artifacts, binding, bound, declaration, declared_envs, env, estate, inventory, plugin, references,
    registry, steps,
};

/// The box services lexicon: a box's services under the `sprite-env` supervisor.
#[cfg(feature = "box")]
pub use chant_box as sprite;
/// The files lexicon: files under a root directory, observed, applied and torn down.
pub use chant_files as files;
/// The PostgreSQL lexicon: tables, columns and roles.
#[cfg(feature = "postgres")]
pub use chant_postgres as postgres;
