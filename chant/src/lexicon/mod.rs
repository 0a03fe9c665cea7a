//! Lexicons: readers and writers of one kind of substrate each (files, PostgreSQL, a box's
//! services), and the env declarations they read.
//!
//! A project declares what each env should contain in Rust: a plain function returning an
//! [`EnvDeclaration`], registered under the env's name with `inventory` (re-exported here, so the
//! project needs no dependency of its own):
//!
//! ```
//! use chant::lexicon::{DeclaredEnv, EnvDeclaration};
//! use chant::lexicon::files::FilesDeclaration;
//!
//! fn staging() -> EnvDeclaration {
//!     EnvDeclaration::new().files(FilesDeclaration::new().file("app.conf", "port = 8080\n", 0o644))
//! }
//!
//! chant::lexicon::inventory::submit! { DeclaredEnv::new("staging", staging) }
//!
//! let declared = chant::lexicon::declaration("staging").unwrap().unwrap();
//! assert_eq!(declared.files.unwrap().files().len(), 1);
//! ```
//!
//! Why a registered function rather than a macro or a trait: the declaration is ordinary Rust
//! (loops, constants, `include_str!`), built only when an env is observed or applied; the
//! registry is keyed by name like the op registry, so the project binary and every process it
//! dispatches find the same declaration without the project wiring anything into `main`; and no
//! new macro surface has to be checked at compile time. Two registrations of one env are an
//! error when the env is looked up, never a silent pick. Bindings (the files root) stay in
//! chant.toml; the declaration says only *what*, never *where*.

pub mod files;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "box")]
pub mod sprite;

pub use inventory;

use self::files::FilesDeclaration;
#[cfg(feature = "postgres")]
use self::postgres::PostgresDeclaration;

/// Everything an env declares, one optional part per lexicon.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvDeclaration {
    /// The files the env declares, if it uses the files lexicon.
    pub files: Option<FilesDeclaration>,
    /// The PostgreSQL schemas and tables the env declares, if it uses the postgres lexicon.
    #[cfg(feature = "postgres")]
    pub postgres: Option<PostgresDeclaration>,
}

impl EnvDeclaration {
    /// Creates a declaration that declares nothing.
    pub fn new() -> Self {
        EnvDeclaration::default()
    }

    /// Sets the env's files.
    #[must_use]
    pub fn files(mut self, files: FilesDeclaration) -> Self {
        self.files = Some(files);
        self
    }

    /// Sets the env's PostgreSQL declaration.
    #[cfg(feature = "postgres")]
    #[must_use]
    pub fn postgres(mut self, postgres: PostgresDeclaration) -> Self {
        self.postgres = Some(postgres);
        self
    }
}

/// One env's declaration function, registered with `inventory::submit!`.
#[derive(Debug)]
pub struct DeclaredEnv {
    /// The env's name.
    pub env: &'static str,
    /// Builds the env's declaration.
    pub declare: fn() -> EnvDeclaration,
}

impl DeclaredEnv {
    /// Creates a registration of `declare` for `env` (usable in `inventory::submit!`).
    pub const fn new(env: &'static str, declare: fn() -> EnvDeclaration) -> Self {
        DeclaredEnv { env, declare }
    }
}

inventory::collect!(DeclaredEnv);

/// The errors of looking up a registered declaration. Returned by [`declaration`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    /// More than one declaration function is registered for the env.
    #[error("env {env} has {count} registered declarations: register exactly one `DeclaredEnv` per env")]
    Duplicate {
        /// The env.
        env: String,
        /// How many are registered.
        count: usize,
    },
}

/// Builds the declaration registered for `env`; `None` when the binary registers none.
///
/// # Errors
///
/// [`DeclarationError::Duplicate`] when several are registered.
pub fn declaration(env: &str) -> Result<Option<EnvDeclaration>, DeclarationError> {
    let found: Vec<&DeclaredEnv> = inventory::iter::<DeclaredEnv>.into_iter().filter(|d| d.env == env).collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((one.declare)())),
        many => Err(DeclarationError::Duplicate { env: env.to_owned(), count: many.len() }),
    }
}

/// Returns the envs this binary registers a declaration for, sorted and distinct.
pub fn declared_envs() -> Vec<&'static str> {
    let mut envs: Vec<&'static str> = inventory::iter::<DeclaredEnv>.into_iter().map(|d| d.env).collect();
    envs.sort_unstable();
    envs.dedup();
    envs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> EnvDeclaration {
        EnvDeclaration::new().files(FilesDeclaration::new().file("a", "x", 0o644))
    }

    fn empty() -> EnvDeclaration {
        EnvDeclaration::new()
    }

    inventory::submit! { DeclaredEnv::new("unit-one", one) }
    inventory::submit! { DeclaredEnv::new("unit-twice", one) }
    inventory::submit! { DeclaredEnv::new("unit-twice", empty) }

    #[test]
    fn lookup_by_env() {
        assert_eq!(declaration("unit-one").unwrap(), Some(one()));
        assert_eq!(declaration("unit-none").unwrap(), None);
        assert_eq!(
            declaration("unit-twice").unwrap_err(),
            DeclarationError::Duplicate { env: "unit-twice".into(), count: 2 }
        );
        let envs = declared_envs();
        assert!(envs.contains(&"unit-one") && envs.iter().filter(|e| **e == "unit-twice").count() == 1);
    }
}
