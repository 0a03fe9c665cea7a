//! The data model: Ops, ConvergeOps, rules, predicates, actions and symptoms, as op.json and the
//! tick records spell them.
//!
//! The model is the `chant-core` crate, shared with `chant-macros` so the compile-time refusals
//! and the runtime backstop have one source of truth; this module re-exports it under its
//! historical path, so `chant_lexicon::model::OpDocument` and `chant_lexicon::model::contract::...` keep working.

pub use chant_core::*;
