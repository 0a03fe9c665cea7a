//! A lexicon written the way a user's crate writes one, outside chant: a directory of JSON
//! documents, and a small project that converges it.
//!
//! - [`lexicon`] is the lexicon: [`DocsDeclaration`] (documents by name, each a typed value
//!   serialised to a JSON object) implements [`chant::lexicon::Declaration`] and registers itself
//!   with the `chant.toml` key `jsondocs_root`; [`DocsLexicon`] reads the directory
//!   (`describe_resources`), declares its ownership channel (the `"_chant": {"stack", "env"}` key
//!   inside each document), and implements `apply` (atomic writes; owned undeclared documents
//!   removed only under `owned-only`) and `teardown`;
//! - [`declaration`] is what an env declares, [`error`] what can go wrong;
//! - [`store`] reads and writes the documents on disk;
//! - [`steps`] is a step kind of the lexicon's own, `docs_snapshot`: its runner, registered with
//!   the runtime, and its step macro, which declares it to `op!` and `converge_op!`;
//! - [`demo`] is the project: the `docs` env's declaration and the ops that keep it converged,
//!   ticked by the `docs` project binary.
//!
//! Nothing here is special to chant: the same traits and the same registration serve chant's own
//! files and PostgreSQL lexicons.

// First, so the step macro it defines is in scope in the modules below it (`demo` uses it).
#[macro_use]
pub mod steps;

pub mod declaration;
pub mod demo;
pub mod error;
pub mod lexicon;
pub mod store;

pub use lexicon::{DocsDeclaration, DocsError, DocsLexicon, DocsRecord, LEXICON, MARKER_KEY, ROOT_KEY};
