//! The lexicon registry: every lexicon linked into this binary, registered with `inventory` under
//! its declaration type, with the `chant.toml` binding keys it reads.
//!
//! A lexicon's declaration type implements [`Declaration`]; one line registers it, the same way
//! ops and env declarations register
//! (`inventory::submit! { Registration::of::<MyDeclaration>() }`). The files lexicon registers
//! itself this way, and `chant-files`' crate docs read the registry back.
//!
//! The registry is what `chant.toml` parsing asks for the keys it accepts under `[env.<name>]`, and
//! what the core asks whether an env's declaration part belongs to a registered lexicon. It is
//! checked whole whenever it is read: two lexicons of one name, a key declared twice, a name that
//! is not a valid ledger path segment or a key that shadows chant's own `redact` are each an
//! error naming the registrations at fault, never a silent pick.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::fmt;

use super::binding::{Binding, BindingKey};
#[cfg(feature = "import")]
use super::export::{ExportError, ExportOptions, ExportedTemplate, Generated};
use super::plugin::EnvLexicon;
#[cfg(feature = "import")]
use crate::redact::Redactor;

/// The key every `[env.<name>]` accepts whatever lexicons are registered: variables to redact.
pub const REDACT_KEY: &str = "redact";

/// The declaration type of a lexicon: what an env declares of one substrate, and how it is bound
/// to an env.
///
/// Implement it on your declaration type, register it with
/// `inventory::submit! { chant_lexicon::Registration::of::<MyDeclaration>() }`, and add it to an
/// env with [`EnvDeclaration::with`](super::EnvDeclaration::with).
pub trait Declaration: fmt::Debug + Clone + PartialEq + Send + Sync + 'static {
    /// The lexicon's name (`files`): its status rows' component, and its ledger path segment
    /// (`[a-z][a-z0-9-]*`).
    const LEXICON: &'static str;

    /// The keys it reads under `[env.<name>]` in `chant.toml`.
    const BINDING_KEYS: &'static [BindingKey];

    /// The lexicon a binding produces.
    type Lexicon: EnvLexicon;

    /// Binds the declaration to one env: its `chant.toml` values, and the newest record of this
    /// lexicon's apply or teardown on the env's ledger (`None` when there is none, or it does not
    /// parse as [`EnvLexicon::Record`]).
    ///
    /// # Errors
    ///
    /// [`BindError`] when the binding cannot be used at all; a binding the lexicon can observe as
    /// `no-binding` is not an error.
    fn bind(
        &self,
        binding: &Binding<'_>,
        last: Option<<Self::Lexicon as EnvLexicon>::Record>,
    ) -> Result<Self::Lexicon, BindError>;

    // --- export hooks (the `import` feature) ---

    /// Reads the full input configuration of the live resources `binding`'s env holds of this
    /// substrate ([`crate::export`]), whatever the env declares. An associated function,
    /// not a method of the bound lexicon, so the lifecycle paths cannot reach it.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotImplemented`] by default; [`ExportError::NotBound`] when the env binds
    /// nothing to read; [`ExportError::Read`] when the read failed.
    #[cfg(feature = "import")]
    fn export_resources(binding: &Binding<'_>, options: &ExportOptions) -> Result<ExportedTemplate, ExportError> {
        let _ = (binding, options);
        Err(ExportError::not_implemented(Self::LEXICON))
    }

    /// Turns an export of this lexicon into the Rust that declares it with this lexicon's
    /// builders (its template generator); values `redactor` recognises as credentials are left
    /// out and read from variables instead.
    ///
    /// # Errors
    ///
    /// [`ExportError::NotImplemented`] by default; [`ExportError::Generate`] when the template
    /// cannot be expressed.
    #[cfg(feature = "import")]
    fn generate(template: &ExportedTemplate, redactor: &Redactor) -> Result<Generated, ExportError> {
        let _ = (template, redactor);
        Err(ExportError::not_implemented(Self::LEXICON))
    }
}

/// A lexicon's `export_resources`, as its registration holds it.
#[cfg(feature = "import")]
pub type ExportFn = fn(&Binding<'_>, &ExportOptions) -> Result<ExportedTemplate, ExportError>;

/// A lexicon's `generate`, as its registration holds it.
#[cfg(feature = "import")]
pub type GenerateFn = fn(&ExportedTemplate, &Redactor) -> Result<Generated, ExportError>;

/// The error of binding a declaration to an env.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The env declares a part whose type no registration in this binary names.
    #[error(
        "env {env} declares a part of lexicon {lexicon} ({type_name}), which this binary does not register: add \
         `chant::lexicon::inventory::submit! {{ chant::lexicon::Registration::of::<{type_name}>() }}`"
    )]
    Unregistered {
        /// The lexicon.
        lexicon: String,
        /// The env.
        env: String,
        /// The declaration type.
        type_name: String,
    },
    /// The registry is inconsistent.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The newest record of the lexicon's apply could not be read.
    #[error("cannot read the last apply of lexicon {lexicon}")]
    LastApply {
        /// The lexicon.
        lexicon: String,
        /// The ledger's error.
        #[source]
        source: Box<chant_store::ledger::Error>,
    },
    /// A value in `chant.toml` cannot be used.
    #[error("[env.{env}] {key} cannot be used by lexicon {lexicon}: {reason}")]
    InvalidValue {
        /// The lexicon.
        lexicon: String,
        /// The env.
        env: String,
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
    /// The binding failed for another reason.
    #[error("cannot bind lexicon {lexicon} to env {env}")]
    Failed {
        /// The lexicon.
        lexicon: String,
        /// The env.
        env: String,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// One lexicon linked into this binary: its name, its binding keys and its declaration type.
/// Created with [`Registration::of`] inside `inventory::submit!`.
pub struct Registration {
    /// The lexicon's name.
    pub lexicon: &'static str,
    /// The keys it reads under `[env.<name>]`.
    pub binding_keys: &'static [BindingKey],
    declaration: fn() -> TypeId,
    type_name: fn() -> &'static str,
    // --- export hooks (the `import` feature) ---
    /// Its `export_resources` ([`Declaration::export_resources`]).
    #[cfg(feature = "import")]
    pub export: ExportFn,
    /// Its template generator ([`Declaration::generate`]).
    #[cfg(feature = "import")]
    pub generate: GenerateFn,
}

impl Registration {
    /// Creates the registration of the lexicon whose declaration type is `D`.
    pub const fn of<D: Declaration>() -> Self {
        Registration {
            lexicon: D::LEXICON,
            binding_keys: D::BINDING_KEYS,
            declaration: TypeId::of::<D>,
            type_name: std::any::type_name::<D>,
            #[cfg(feature = "import")]
            export: D::export_resources,
            #[cfg(feature = "import")]
            generate: D::generate,
        }
    }

    /// Returns the Rust name of the declaration type (for messages).
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }

    fn is<D: 'static>(&self) -> bool {
        (self.declaration)() == TypeId::of::<D>()
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("lexicon", &self.lexicon)
            .field("binding_keys", &self.binding_keys)
            .field("declaration", &self.type_name())
            .finish()
    }
}

inventory::collect!(Registration);

/// A registry that cannot be used: the registrations at fault are named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two registrations share a lexicon name.
    #[error("lexicon {lexicon} is registered {count} times ({types}): register each lexicon once, under one name")]
    DuplicateLexicon {
        /// The name.
        lexicon: String,
        /// How many registrations carry it.
        count: usize,
        /// Their declaration types.
        types: String,
    },
    /// A lexicon name is not a valid ledger path segment.
    #[error("lexicon name {lexicon:?} ({type_name}) must match [a-z][a-z0-9-]*")]
    InvalidName {
        /// The name.
        lexicon: String,
        /// The declaration type.
        type_name: String,
    },
    /// A binding key is not lowercase snake case, or shadows `redact`.
    #[error("lexicon {lexicon} declares the binding key {key:?}: a key is [a-z][a-z0-9_]* and not `redact`")]
    InvalidKey {
        /// The lexicon.
        lexicon: String,
        /// The key.
        key: String,
    },
    /// Two lexicons (or one, twice) declare the same binding key.
    #[error("the binding key {key} is declared by {lexicons}: each key belongs to one lexicon")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The lexicons declaring it.
        lexicons: String,
    },
}

/// Returns every registered lexicon, sorted by name, after checking the registry whole.
///
/// # Errors
///
/// [`RegistryError`] naming the first problem found.
pub fn registrations() -> Result<Vec<&'static Registration>, RegistryError> {
    let mut all: Vec<&'static Registration> = inventory::iter::<Registration>.into_iter().collect();
    all.sort_by(|a, b| a.lexicon.cmp(b.lexicon).then(a.type_name().cmp(b.type_name())));
    check(&all)?;
    Ok(all)
}

/// Returns the registration of the lexicon whose declaration type is `D`, or `None` when `D` is
/// not registered in this binary.
///
/// # Errors
///
/// [`RegistryError`] when the registry is inconsistent.
pub fn registration_of<D: 'static>() -> Result<Option<&'static Registration>, RegistryError> {
    Ok(registrations()?.into_iter().find(|r| r.is::<D>()))
}

/// Returns every binding key of every registered lexicon, with the lexicon declaring it, sorted
/// by key.
///
/// # Errors
///
/// [`RegistryError`] when the registry is inconsistent.
pub fn binding_keys() -> Result<Vec<(&'static str, BindingKey)>, RegistryError> {
    let mut keys: Vec<(&'static str, BindingKey)> =
        registrations()?.into_iter().flat_map(|r| r.binding_keys.iter().map(|k| (r.lexicon, *k))).collect();
    keys.sort_by(|a, b| a.1.name.cmp(b.1.name));
    Ok(keys)
}

fn check(all: &[&'static Registration]) -> Result<(), RegistryError> {
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut by_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in all {
        if crate::model::Name::parse("lexicon name", r.lexicon).is_err() {
            return Err(RegistryError::InvalidName {
                lexicon: r.lexicon.to_owned(),
                type_name: r.type_name().to_owned(),
            });
        }
        by_name.entry(r.lexicon).or_default().push(r.type_name());
        for key in r.binding_keys {
            if !BindingKey::is_valid_name(key.name) || key.name == REDACT_KEY {
                return Err(RegistryError::InvalidKey { lexicon: r.lexicon.to_owned(), key: key.name.to_owned() });
            }
            by_key.entry(key.name).or_default().push(r.lexicon);
        }
    }
    if let Some((lexicon, types)) = by_name.into_iter().find(|(_, t)| t.len() > 1) {
        return Err(RegistryError::DuplicateLexicon {
            lexicon: lexicon.to_owned(),
            count: types.len(),
            types: types.join(", "),
        });
    }
    if let Some((key, lexicons)) = by_key.into_iter().find(|(_, l)| l.len() > 1) {
        return Err(RegistryError::DuplicateKey { key: key.to_owned(), lexicons: lexicons.join(", ") });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake<T: 'static>(lexicon: &'static str, keys: &'static [BindingKey]) -> Registration {
        Registration {
            lexicon,
            binding_keys: keys,
            declaration: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
            #[cfg(feature = "import")]
            export: |_, _| Err(ExportError::not_implemented("fake")),
            #[cfg(feature = "import")]
            generate: |_, _| Err(ExportError::not_implemented("fake")),
        }
    }

    #[test]
    fn an_inconsistent_registry_names_what_is_wrong() {
        const ROOT: &[BindingKey] = &[BindingKey::path("root", "a root")];
        const REDACT: &[BindingKey] = &[BindingKey::text("redact", "shadows")];
        let leak = |r: Registration| -> &'static Registration { Box::leak(Box::new(r)) };
        let twice = [leak(fake::<u8>("a", &[])), leak(fake::<u16>("a", &[]))];
        assert!(matches!(check(&twice), Err(RegistryError::DuplicateLexicon { count: 2, .. })));
        let keys = [leak(fake::<u8>("a", ROOT)), leak(fake::<u16>("b", ROOT))];
        assert_eq!(
            check(&keys).unwrap_err().to_string(),
            "the binding key root is declared by a, b: each key belongs to one lexicon"
        );
        assert!(matches!(check(&[leak(fake::<u8>("Bad", &[]))]), Err(RegistryError::InvalidName { .. })));
        assert!(matches!(check(&[leak(fake::<u8>("a", REDACT))]), Err(RegistryError::InvalidKey { .. })));
        assert_eq!(check(&[leak(fake::<u8>("a", ROOT))]), Ok(()));
    }
}
