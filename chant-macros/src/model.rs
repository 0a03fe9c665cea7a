//! The pure model shared with the `chant` runtime, compiled in by path.
//!
//! `chant-macros` must not depend on `chant` (a proc-macro crate cannot depend on the crate that
//! re-exports it), yet the compile-time refusals and the runtime backstop must share one source
//! of truth. So the runtime's pure model files are compiled into this crate as well: the same
//! field tables, value domains, dial x class matrix, step table, name rule, cron validation and
//! serde types decide both here and in `chant ops check`.

// These modules are the runtime's public API, compiled here for their checks only: the macros use
// a part of it, so the rest is dead code here, and its `pub` items are unreachable from outside
// this proc-macro crate by construction.
#![allow(dead_code, unreachable_pub)]

#[path = "../../chant/src/model/contract.rs"]
pub(crate) mod contract;
#[path = "../../chant/src/model/cron.rs"]
pub(crate) mod cron;
#[path = "../../chant/src/model/op.rs"]
pub(crate) mod op;
#[path = "../../chant/src/model/rule.rs"]
pub(crate) mod rule;
