//! Procedural macros of chant: `op!`, `converge_op!`, `when!` and `main!`. Private to the `chant`
//! crate, which re-exports them; users never name this crate.
//!
//! This file only holds the shims. The work is done on `proc_macro2` tokens, in stages: `parse`
//! reads the input into the syntax tree of `ast`, `check` validates it against the shared
//! `model` (collecting every error in a `ctxt::Ctxt`) and builds the op.json document, `json`
//! gives its bytes, `export` writes the file under `$CHANT_OPS_DIR`, and `expand` emits the code.

mod ast;
mod check;
mod ctxt;
mod env;
mod expand;
mod export;
mod json;
mod model;
mod parse;
mod symbol;

use proc_macro::TokenStream;

/// Declares an Op: a pipeline of phases of steps. See the `chant` crate's documentation.
#[proc_macro]
pub fn op(input: TokenStream) -> TokenStream {
    expand::op(input.into()).into()
}

/// Declares a ConvergeOp: a rule table evaluated on each tick. See the `chant` crate's documentation.
#[proc_macro]
pub fn converge_op(input: TokenStream) -> TokenStream {
    expand::converge_op(input.into()).into()
}

/// A rule of a `converge_op!` table; valid only inside `converge_op! { rules: [ ... ] }`.
#[proc_macro]
pub fn when(_input: TokenStream) -> TokenStream {
    expand::when().into()
}

/// Turns a bin target into a project binary: `chant::main!()` or
/// `chant::main!(default = tick("<converge op>"))`.
#[proc_macro]
pub fn main(input: TokenStream) -> TokenStream {
    expand::main(input.into()).into()
}
