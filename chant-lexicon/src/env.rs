//! Env declarations: what each env declares, one typed part per lexicon, and the registry of the
//! functions that build them.
//!
//! An [`EnvDeclaration`] is open: any type implementing [`Declaration`] (chant's files and
//! PostgreSQL declarations, or a user crate's own) is added with [`EnvDeclaration::with`]; one
//! part per lexicon, a second part of the same lexicon replacing the first. The parts are kept in
//! lexicon-name order, which is the order of the env's status rows. A project registers one
//! declaration function per env with [`DeclaredEnv`]; two registrations of one env are an error
//! when the env is looked up, never a silent pick.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

use super::binding::Binding;
use super::bound::BoundLexicon;
use super::plugin::EnvLexicon;
use super::registry::{BindError, Declaration, registration_of};
use chant_store::ledger::{Ledger, ShardKey};

/// One part of an env declaration, with its type erased so parts of any lexicon sit side by side.
trait ErasedPart: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn clone_part(&self) -> Box<dyn ErasedPart>;
    fn eq_part(&self, other: &dyn ErasedPart) -> bool;
    fn fmt_part(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn bind(&self, binding: &Binding<'_>, ledger: &Ledger, key: &ShardKey) -> Result<BoundLexicon, BindError>;
}

impl<D: Declaration> ErasedPart for D {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_part(&self) -> Box<dyn ErasedPart> {
        Box::new(self.clone())
    }

    fn eq_part(&self, other: &dyn ErasedPart) -> bool {
        other.as_any().downcast_ref::<D>().is_some_and(|o| o == self)
    }

    fn fmt_part(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }

    fn bind(&self, binding: &Binding<'_>, ledger: &Ledger, key: &ShardKey) -> Result<BoundLexicon, BindError> {
        if registration_of::<D>()?.is_none() {
            return Err(BindError::Unregistered {
                lexicon: D::LEXICON.to_owned(),
                env: binding.env().to_owned(),
                type_name: std::any::type_name::<D>().to_owned(),
            });
        }
        let last = ledger
            .latest_typed::<<D::Lexicon as EnvLexicon>::Record>(key)
            .map_err(|source| BindError::LastApply { lexicon: D::LEXICON.to_owned(), source: Box::new(source) })?
            .record
            .map(|stored| stored.record);
        let lexicon = Declaration::bind(self, binding, last)?;
        Ok(BoundLexicon::new(D::LEXICON, lexicon))
    }
}

/// Everything an env declares: one typed part per lexicon.
#[derive(Default)]
pub struct EnvDeclaration {
    parts: BTreeMap<&'static str, Box<dyn ErasedPart>>,
}

impl EnvDeclaration {
    /// Creates a declaration that declares nothing.
    pub fn new() -> Self {
        EnvDeclaration::default()
    }

    /// Adds the part of `D`'s lexicon, replacing any earlier part of that lexicon.
    #[must_use]
    pub fn with<D: Declaration>(mut self, part: D) -> Self {
        self.parts.insert(D::LEXICON, Box::new(part));
        self
    }

    /// Returns the part of `D`'s lexicon, if the env declares one of type `D`.
    pub fn get<D: Declaration>(&self) -> Option<&D> {
        self.parts.get(D::LEXICON).and_then(|p| p.as_any().downcast_ref::<D>())
    }

    /// Returns the names of the lexicons the env declares a part for, sorted.
    pub fn lexicons(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.parts.keys().copied()
    }

    /// Returns true when the env declares nothing.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Binds the part of `lexicon` to an env, handing it the newest record of its type under
    /// `key` (the env's apply key of that lexicon) on `ledger`. `None` when the env declares no
    /// part of `lexicon`.
    ///
    /// # Errors
    ///
    /// [`BindError::Unregistered`] when the part's type is not registered in this binary,
    /// [`BindError::LastApply`] when the ledger cannot be read; the lexicon's own [`BindError`].
    pub fn bind(
        &self,
        lexicon: &str,
        binding: &Binding<'_>,
        ledger: &Ledger,
        key: &ShardKey,
    ) -> Option<Result<BoundLexicon, BindError>> {
        self.parts.get(lexicon).map(|p| p.bind(binding, ledger, key))
    }
}

impl Clone for EnvDeclaration {
    fn clone(&self) -> Self {
        EnvDeclaration { parts: self.parts.iter().map(|(k, v)| (*k, v.clone_part())).collect() }
    }
}

impl PartialEq for EnvDeclaration {
    fn eq(&self, other: &Self) -> bool {
        self.parts.len() == other.parts.len()
            && self.parts.iter().all(|(k, v)| other.parts.get(k).is_some_and(|o| v.eq_part(o.as_ref())))
    }
}

impl fmt::Debug for EnvDeclaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Part<'a>(&'a dyn ErasedPart);
        impl fmt::Debug for Part<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt_part(f)
            }
        }
        f.debug_map().entries(self.parts.iter().map(|(k, v)| (k, Part(v.as_ref())))).finish()
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
