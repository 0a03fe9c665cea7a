//! The demo project: the `docs` env, declared as two JSON documents built from typed Rust values,
//! and the ops that keep it converged.
//!
//! - `docs-converge` ticks the env: the first tick applies (`unrecorded`), a hand edit of a
//!   document is `drifted` and re-applied, an unowned document is reported, never claimed;
//! - `docs-apply` applies the declaration, then keeps a copy of every document under
//!   `snapshots/` with the lexicon's own step, `docs_snapshot`; `docs-teardown` (destructive, run only by hand)
//!   removes every document carrying this project's marker.
//!
//! The env is bound in the project's `chant.toml`: `[env.docs] jsondocs_root = "<dir>"`.

use chant::lexicon::{DeclaredEnv, EnvDeclaration};
use chant::prelude::*;
use serde::Serialize;

use crate::lexicon::DocsDeclaration;

/// The service's configuration document.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceConfig {
    /// The port it listens on.
    pub port: u16,
    /// Its log level.
    pub log_level: &'static str,
    /// Its upstreams, in order.
    pub upstreams: Vec<&'static str>,
}

/// The feature flags document.
#[derive(Debug, Clone, Serialize)]
pub struct Flags {
    /// Whether the new checkout flow is on.
    pub new_checkout: bool,
    /// The share of traffic that sees it, in percent.
    pub rollout_percent: u8,
}

/// Declares the `docs` env: `service.json` and `flags.json`.
pub fn docs() -> EnvDeclaration {
    EnvDeclaration::new().with(
        DocsDeclaration::new()
            .document(
                "service",
                &ServiceConfig { port: 8080, log_level: "info", upstreams: vec!["10.0.0.1:9000", "10.0.0.2:9000"] },
            )
            .document("flags", &Flags { new_checkout: true, rollout_percent: 25 }),
    )
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("docs", docs) }

op! {
    name: "docs-apply",
    overview: "Write the docs env's declared JSON documents, and keep a copy of each.",
    env: "docs",
    phases: [
        phase("Apply", [ apply(env = "docs") ]),
        phase("Snapshot", [ docs_snapshot(env = "docs", into = "snapshots") ]),
    ],
}

op! {
    name: "docs-teardown",
    overview: "Remove every JSON document this project owns in the docs env.",
    env: "docs",
    phases: [ phase("Teardown", [ teardown(env = "docs") ]) ],
}

converge_op! {
    name: "docs-converge",
    env: "docs",
    dial: apply,
    rules: [
        when!(eq(status, "drifted") => run("docs-apply"), id = "drift-apply",
              why = "A document drifted from its declaration; re-applying converges it."),
        when!(eq(status, "unrecorded") => run("docs-apply"), id = "first-apply",
              why = "Nothing has been applied yet; the first apply writes the documents."),
        when!(gt(adopt_count, 0) => report("unowned documents present"), id = "adopt-report",
              why = "A document chant does not own is reported for a human, never claimed."),
        when!(eq(status, "unknown") => report("documents could not be fully observed"),
              id = "unknown-report", why = "unknown never remediates."),
    ],
}
