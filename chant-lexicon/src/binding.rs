//! Bindings: the `chant.toml` keys a lexicon reads under `[env.<name>]`, and the values one env
//! binds, as handed to a declaration when the core binds it.
//!
//! A lexicon declares its keys ([`BindingKey`]) when it registers; `chant.toml` parsing accepts
//! exactly the keys the registered lexicons declare (plus chant's own `redact`) and refuses any
//! other, naming the file, the env and the known keys. Every value is a string; its
//! [`BindingKind`] says how chant reads it: a path anchored at the project root, the *name* of a
//! variable, or the name of a variable whose value is a secret (redacted from everything chant
//! prints or records). Secrets never live in `chant.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How chant reads the value of a binding key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingKind {
    /// A path relative to the project root (`files_root = "examples/estates/staging"`).
    Path,
    /// The name of a variable read from the process environment.
    Var,
    /// The name of a variable whose value is a secret (a DSN): its value is redacted everywhere.
    SecretVar,
    /// Plain text.
    Text,
}

/// One `chant.toml` key a lexicon reads under `[env.<name>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BindingKey {
    /// The key as written in `chant.toml` (`files_root`): lowercase snake case.
    pub name: &'static str,
    /// How its value is read.
    pub kind: BindingKind,
    /// One line saying what it binds, for error messages and docs.
    pub about: &'static str,
}

impl BindingKey {
    /// Declares a key whose value is a path anchored at the project root.
    pub const fn path(name: &'static str, about: &'static str) -> Self {
        BindingKey { name, kind: BindingKind::Path, about }
    }

    /// Declares a key whose value names a variable.
    pub const fn var(name: &'static str, about: &'static str) -> Self {
        BindingKey { name, kind: BindingKind::Var, about }
    }

    /// Declares a key whose value names a variable holding a secret (redacted everywhere).
    pub const fn secret_var(name: &'static str, about: &'static str) -> Self {
        BindingKey { name, kind: BindingKind::SecretVar, about }
    }

    /// Declares a key whose value is plain text.
    pub const fn text(name: &'static str, about: &'static str) -> Self {
        BindingKey { name, kind: BindingKind::Text, about }
    }

    /// Returns true when `name` is lowercase snake case (`[a-z][a-z0-9_]*`).
    pub fn is_valid_name(name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }
}

/// What one env binds, as handed to [`Declaration::bind`](super::Declaration::bind): the env, the
/// project, its root, and the values of the binding keys `chant.toml` sets for the env.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    env: &'a str,
    project: &'a str,
    root: &'a Path,
    values: &'a BTreeMap<String, String>,
}

impl<'a> Binding<'a> {
    /// Creates the binding of `env` in `project` rooted at `root`, with the key values `values`
    /// (empty when `chant.toml` has no `[env.<env>]`).
    pub fn new(env: &'a str, project: &'a str, root: &'a Path, values: &'a BTreeMap<String, String>) -> Self {
        Binding { env, project, root, values }
    }

    /// Returns the env.
    pub fn env(&self) -> &'a str {
        self.env
    }

    /// Returns the project's name (`[project] name`, the stack stamped into ownership markers).
    pub fn project(&self) -> &'a str {
        self.project
    }

    /// Returns the project root (the directory of `chant.toml`).
    pub fn root(&self) -> &'a Path {
        self.root
    }

    /// Returns the value bound to `key`, as written, or `None` when the env does not set it.
    pub fn value(&self, key: &str) -> Option<&'a str> {
        self.values.get(key).map(String::as_str)
    }

    /// Returns the value bound to `key` as a path anchored at the project root.
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        self.value(key).map(|v| self.root.join(v))
    }

    /// Returns the variable named by `key` and its value in the process environment (`None` when
    /// unset), or `None` when the env does not set `key`.
    pub fn var(&self, key: &str) -> Option<(&'a str, Option<String>)> {
        self.value(key).map(|name| (name, std::env::var(name).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_paths_and_names() {
        let values = BTreeMap::from([("files_root".to_owned(), "estates/a".to_owned())]);
        let b = Binding::new("a", "p", Path::new("/proj"), &values);
        assert_eq!(b.value("files_root"), Some("estates/a"));
        assert_eq!(b.path("files_root"), Some(PathBuf::from("/proj/estates/a")));
        assert_eq!(b.value("other"), None);
        assert_eq!((b.env(), b.project()), ("a", "p"));
        assert!(BindingKey::is_valid_name("postgres_dsn_var"));
        for bad in ["", "Files", "1x", "a-b", "a b"] {
            assert!(!BindingKey::is_valid_name(bad), "{bad}");
        }
    }
}
