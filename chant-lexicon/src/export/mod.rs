//! Live export: the full input configuration of an env's live resources, read from the substrate
//! so that `chant import --from <env>` can write it back as a declaration.
//!
//! Export is the other half of observation, and deliberately a separate one. `describe_resources`
//! returns scrubbed metadata for diffing; an export returns what regenerates a resource (column
//! defaults, file contents), which may carry secrets. So its result is a type of its own,
//! [`ExportedTemplate`], with no conversion into any observation type (no `From`, no shared
//! trait), and the hook is not on the bound lexicon at all: it is an associated function of the
//! lexicon's [`Declaration`](super::Declaration) (`export_resources`, with `generate`, the
//! lexicon's template generator), reached through its [`Registration`](super::Registration).
//! The lifecycle paths (ticks, `lifecycle diff`, apply, teardown) hold a
//! [`BoundLexicon`](super::BoundLexicon) or a `&dyn Lexicon`, the observation view, which has no
//! export method, so a full-fidelity export cannot flow into diffing or planning:
//!
//! ```compile_fail
//! // A template is not an observation, and does not convert into one.
//! fn diff(template: chant_lexicon::export::ExportedTemplate) -> chant_lexicon::observe::Observation {
//!     template.into()
//! }
//! ```
//!
//! ```compile_fail
//! // The observation view the lifecycle paths hold has no export method.
//! fn leak(lexicon: &dyn chant_lexicon::observe::Lexicon, options: &chant_lexicon::export::ExportOptions) {
//!     let _ = lexicon.export_resources(options);
//! }
//! ```
//!
//! ```compile_fail
//! // Nor has the bound lexicon the project layer assesses and applies.
//! fn leak(bound: &chant_lexicon::BoundLexicon, options: &chant_lexicon::export::ExportOptions) {
//!     let _ = bound.export_resources(options);
//! }
//! ```
//!
//! Options ([`ExportOptions`]): `owned` (only what carries this project's and env's ownership
//! marker), a [`Selector`] (`type` and `name` globs) and `verbatim` (keep what the server created
//! or defaulted; stripped by default). All I/O is in a lexicon's `export_resources`; the cleaning
//! and the building of the template are pure functions of what was read, and [`module`] turns
//! the lexicons' [`Generated`] parts into the Rust source `import` writes.

pub mod layout;
pub mod module;
pub mod selector;

use std::collections::BTreeMap;

pub use self::module::{Generated, Secret, render_module};
pub use self::selector::{Selector, SelectorError};

/// What an export reads, and how much of it it keeps.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Only resources carrying this project's and env's ownership marker. A lexicon that cannot
    /// read a marker on its export path exports nothing under it (and says so in a note).
    pub owned: bool,
    /// Which resources, by kind and name.
    pub selector: Selector,
    /// Keep what the server created or defaulted (system-created objects, implied indexes,
    /// markers inside comments); stripped by default.
    pub verbatim: bool,
}

/// Whether an exported resource is chant's, read from the lexicon's ownership marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportOwnership {
    /// It carries this project's and env's marker.
    Owned,
    /// It carries no marker, or another project's or env's.
    Foreign,
    /// The export path cannot read a marker.
    Unknown,
}

/// One attribute value of an exported resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attr {
    /// Text (a type, a default expression, a comment, a definition).
    Text(String),
    /// A flag (`not_null`).
    Flag(bool),
    /// A file mode.
    Mode(u32),
    /// Raw bytes (a file's content).
    Bytes(Vec<u8>),
    /// Names, in order (an index's columns).
    Names(Vec<String>),
}

/// One exported resource: its kind, its name, whether it is chant's, its attributes and the
/// resources it contains (a table's columns, constraints and indexes), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedResource {
    /// The kind (`schema`, `table`, `column`, `constraint`, `index`, `file`).
    pub kind: String,
    /// The name: the entity name the lexicon observes it under (`app.users`, `conf/app.toml`);
    /// a child's is its own name within its parent.
    pub name: String,
    /// Whether it is chant's.
    pub ownership: ExportOwnership,
    /// Its attributes, by key.
    pub attrs: BTreeMap<String, Attr>,
    /// What it contains, in order.
    pub children: Vec<ExportedResource>,
}

impl ExportedResource {
    /// Creates a resource with no attributes and no children.
    pub fn new(kind: impl Into<String>, name: impl Into<String>, ownership: ExportOwnership) -> Self {
        ExportedResource {
            kind: kind.into(),
            name: name.into(),
            ownership,
            attrs: BTreeMap::new(),
            children: Vec::new(),
        }
    }

    /// Sets an attribute.
    #[must_use]
    pub fn attr(mut self, key: impl Into<String>, value: Attr) -> Self {
        self.attrs.insert(key.into(), value);
        self
    }

    /// Adds a child.
    #[must_use]
    pub fn child(mut self, child: ExportedResource) -> Self {
        self.children.push(child);
        self
    }

    /// Returns the text attribute `key`, if it is one.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.attrs.get(key) {
            Some(Attr::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// Returns the names attribute `key`, if it is one.
    pub fn names(&self, key: &str) -> Option<&[String]> {
        match self.attrs.get(key) {
            Some(Attr::Names(n)) => Some(n),
            _ => None,
        }
    }

    /// Returns the flag attribute `key` (false when absent).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.attrs.get(key), Some(Attr::Flag(true)))
    }
}

/// The full input configuration of one lexicon's live resources in one env: what
/// `export_resources` returns and a lexicon's `generate` turns into Rust.
///
/// Branded: it converts into no observation type and implements no trait the observation code
/// takes, so it can only go where export is asked for (see the module docs' compile-fail cases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedTemplate {
    lexicon: String,
    env: String,
    source: String,
    read_at: String,
    resources: Vec<ExportedResource>,
    notes: Vec<String>,
}

impl ExportedTemplate {
    /// Creates an empty template of `lexicon` for `env`, read from `source` (an address without
    /// a password, or a path) at `read_at` (RFC 3339).
    pub fn new(
        lexicon: impl Into<String>,
        env: impl Into<String>,
        source: impl Into<String>,
        read_at: impl Into<String>,
    ) -> Self {
        ExportedTemplate {
            lexicon: lexicon.into(),
            env: env.into(),
            source: source.into(),
            read_at: read_at.into(),
            resources: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a resource.
    pub fn push(&mut self, resource: ExportedResource) {
        self.resources.push(resource);
    }

    /// Adds a note: something read but not exported, or something the reader could not do.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Returns the lexicon's name.
    pub fn lexicon(&self) -> &str {
        &self.lexicon
    }

    /// Returns the env.
    pub fn env(&self) -> &str {
        &self.env
    }

    /// Returns where it was read (never with a password).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Returns when it was read (RFC 3339).
    pub fn read_at(&self) -> &str {
        &self.read_at
    }

    /// Returns the exported resources, in the order the lexicon listed them.
    pub fn resources(&self) -> &[ExportedResource] {
        &self.resources
    }

    /// Returns the notes.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// The error of an export or of generating its declaration: returned by a lexicon's
/// `export_resources` and `generate`, and by [`render_module`].
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The lexicon does not implement export (the default).
    #[error("lexicon {lexicon} does not implement export")]
    NotImplemented {
        /// The lexicon.
        lexicon: String,
    },
    /// The env binds nothing this lexicon could read from.
    #[error("env {env} binds no {key} for lexicon {lexicon} in chant.toml")]
    NotBound {
        /// The lexicon.
        lexicon: String,
        /// The env.
        env: String,
        /// The binding key it needs.
        key: String,
    },
    /// The read failed.
    #[error("cannot export lexicon {lexicon} of env {env}")]
    Read {
        /// The lexicon.
        lexicon: String,
        /// The env.
        env: String,
        /// What failed (never holding a password).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The export cannot honour an option, and says why rather than export less in silence.
    #[error("lexicon {lexicon} cannot export under {option}: {reason}")]
    Unsupported {
        /// The lexicon.
        lexicon: String,
        /// The option (`--owned`).
        option: String,
        /// Why, and what would have been left out.
        reason: String,
    },
    /// The declaration could not be generated.
    #[error("cannot generate the {lexicon} declaration: {detail}")]
    Generate {
        /// The lexicon.
        lexicon: String,
        /// Why.
        detail: String,
    },
    /// The module as written would not build, or would not read as it compiles (a character
    /// rustc refuses, or one that reorders or hides the text around it): nothing is written.
    #[error("the generated module would not build: {detail}")]
    Unbuildable {
        /// Where and what.
        detail: String,
    },
}

impl ExportError {
    /// Creates the answer of a lexicon that does not implement export.
    pub fn not_implemented(lexicon: impl Into<String>) -> Self {
        ExportError::NotImplemented { lexicon: lexicon.into() }
    }

    /// Returns true for [`ExportError::NotImplemented`] and [`ExportError::NotBound`]: the
    /// lexicon has nothing to export in this env, which `import` skips.
    pub fn is_nothing_to_export(&self) -> bool {
        matches!(self, ExportError::NotImplemented { .. } | ExportError::NotBound { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_keeps_what_it_was_given_in_order() {
        let mut t =
            ExportedTemplate::new("postgres", "legacy", "postgres://app@127.0.0.1:5432/app", "2026-01-01T00:00:00Z");
        t.push(
            ExportedResource::new("table", "app.b", ExportOwnership::Foreign)
                .attr("comment", Attr::Text("B".into()))
                .child(
                    ExportedResource::new("column", "id", ExportOwnership::Foreign).attr("not_null", Attr::Flag(true)),
                ),
        );
        t.push(ExportedResource::new("table", "app.a", ExportOwnership::Owned));
        t.note("1 view not exported");
        let names: Vec<&str> = t.resources().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["app.b", "app.a"]);
        assert_eq!(t.resources()[0].text("comment"), Some("B"));
        assert!(t.resources()[0].children[0].flag("not_null"));
        assert!(!t.resources()[0].flag("not_null"));
        assert_eq!((t.lexicon(), t.env(), t.notes().len()), ("postgres", "legacy", 1));
    }

    #[test]
    fn nothing_to_export_is_told_apart_from_a_failed_read() {
        assert!(ExportError::not_implemented("sprite").is_nothing_to_export());
        let failed = ExportError::Read { lexicon: "postgres".into(), env: "e".into(), source: "boom".into() };
        assert!(!failed.is_nothing_to_export());
        assert_eq!(failed.to_string(), "cannot export lexicon postgres of env e");
    }
}
