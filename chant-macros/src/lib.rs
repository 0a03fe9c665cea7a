//! Procedural macros of chant: `op!`, `converge_op!`, `when!` and `main!`. Private to the `chant`
//! crate, which re-exports them; users never name this crate.
//!
//! This file only holds the shims. The work is done on `proc_macro2` tokens, in stages: `parse`
//! reads the input into the syntax tree of `ast`, `check` validates it against the shared model
//! crate `chant-core` (collecting every error in a `ctxt::Ctxt`; `known` tells it which ops the
//! crate's sources declare) and builds the op.json document, `json` gives its bytes, `export`
//! writes the file under `$CHANT_OPS_DIR`, and `expand` emits the code.

mod ast;
mod check;
mod ctxt;
mod env;
mod expand;
mod export;
mod json;
mod known;
mod lexicon;
mod parse;
mod symbol;

use proc_macro::TokenStream;

/// Declares an Op: a pipeline of phases of steps, run start to finish.
///
/// ```text
/// op! {
///     name: "staging-apply",                        // [a-z][a-z0-9-]*
///     overview: "Apply the staging declaration.",
///     env: "staging",                               // optional
///     phases: [ phase("Apply", [ apply(env = "staging") ]) ],
///     on_failure: [ phase("Report", [ shell(cmd = "echo apply failed") ]) ],   // optional
/// }
/// ```
///
/// Steps are `name(arg = value, ...)`: `apply(env, delete_mode?)`, `teardown(env, allow_holes?)`,
/// `http_check(url, timeout?)`, `shell(cmd, class?, timeout?)`, `gate("name", description?,
/// sealed?, timeout?)` (`sealed = true`: it opens only on a signed approval),
/// a step of your own, `step("name", class = destructive, run = path::to_fn)` with
/// `fn(&StepContext<'_>) -> StepResult`, and the steps a lexicon declares through its step macro
/// in scope (the box lexicon's `sprite_services_observe(box)`, `sprite_service_restart(box,
/// name?)`, `sprite_apply_services(box, start?, restart?, only?)` under chant's `box` feature),
/// checked against that declaration like a built-in step (see docs/architecture.md, "Write a
/// lexicon with its own steps").
/// String arguments keep `${VAR}` for run time. The Op's verb class is folded from its steps; the
/// op registers itself with the project binary, embeds its op.json, and `cargo build` exports it
/// to `$CHANT_OPS_DIR/<crate>/<name>.json`.
#[proc_macro]
pub fn op(input: TokenStream) -> TokenStream {
    expand::op(input.into()).into()
}

/// Declares a ConvergeOp: a rule table evaluated against a symptom on each tick.
///
/// ```text
/// converge_op! {
///     name: "staging-converge",
///     env: "staging",
///     dial: apply,               // observe (default) | reconcile | apply
///     budget: 3,                 // run() dispatches per tick (default 3)
///     schedule: "*/10 * * * *",  // optional 5-field cron, UTC unless `tz: "Europe/Berlin"`
///     observe: sprite_services_observe(box = true),   // optional: resource mode
///     rules: [
///         when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply",
///               why = "Live state drifted; re-applying converges it.", flap_threshold = 3),
///     ],
/// }
/// ```
///
/// Predicates: `eq, neq, gt, gte, lt, lte(field, literal)`, `truthy(field)`, `falsy(field)`,
/// `all_of(...)`, `any_of(...)` over the snake_case fields of ConvergeSymptom (ResourceSymptom with
/// `observe:`). Actions: `run("<op>")`, `report("<reason>")`, `propose("<op>")` (dials `reconcile` and
/// `apply`: the Op's change written on a proposal branch for review, never made by the tick). Every refusal of the contract (a
/// missing `why`, an unknown field or value, a `run()` of an undeclared Op, a target the dial or
/// the adopt rule forbids, a non-read-only observer, duplicate ids, a bad cron, ...) is a compile
/// error at the offending token, and all of one invocation's errors are reported together.
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
