//! An env's estate beyond its declaration, across its bound lexicons: the teardown plan (every
//! lexicon's candidates and holes), the deploy units' status, and per lexicon the
//! dependencies, ambient resources and artifact diff `lifecycle diff --live` shows.
//!
//! Each reader is asked through the core's checks in [`crate::observe::estate`], so a lexicon
//! without a hook reads as not implemented (`null`), a failed one as an error, and neither as
//! an empty answer. Everything here is read-only.

use std::collections::BTreeMap;

use serde::Serialize;

use super::artifacts::{ArtifactSnapshot, last_snapshot, write_snapshot};
use super::bound::BoundLexicon;
use crate::observe::estate::{
    Ambient, ArtifactDiff, ArtifactListing, Dependencies, Reading, TeardownPlan, UnitStatus, ambient_of,
    dependencies_of, diff_artifacts, stack_status, teardown_plan,
};
use crate::observe::{LexiconError, observe_component};
use chant_store::ledger::{self, Ledger};

/// One lexicon's part of an env's teardown plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LexiconTeardown {
    /// The lexicon.
    pub lexicon: String,
    /// Its plan.
    #[serde(flatten)]
    pub plan: TeardownPlan,
}

/// The teardown plan of an env: what `lifecycle teardown <env>` prints and the `teardown` step
/// executes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvTeardownPlan {
    /// The env.
    pub env: String,
    /// One plan per bound lexicon, in lexicon-name order.
    pub lexicons: Vec<LexiconTeardown>,
    /// How many candidates, across lexicons.
    pub candidate_count: usize,
    /// How many holes, across lexicons.
    pub hole_count: usize,
}

impl EnvTeardownPlan {
    /// Returns true when no lexicon's plan has a hole.
    pub fn is_complete(&self) -> bool {
        self.hole_count == 0
    }

    /// Returns every hole in words, prefixed by its lexicon (`postgres: other.t (table) — ...`).
    pub fn hole_lines(&self) -> Vec<String> {
        self.lexicons
            .iter()
            .flat_map(|l| l.plan.holes.iter().map(move |h| format!("{}: {}", l.lexicon, h.describe())))
            .collect()
    }
}

/// Plans the teardown of every lexicon bound to `env`.
///
/// # Errors
///
/// A lexicon whose declared entities cannot be listed.
pub fn teardown_plans(env: &str, lexicons: &[BoundLexicon]) -> Result<EnvTeardownPlan, LexiconError> {
    let mut out = Vec::new();
    for lexicon in lexicons {
        let declared = lexicon.declared_entities()?;
        out.push(LexiconTeardown {
            lexicon: lexicon.name().to_owned(),
            plan: teardown_plan(lexicon.lexicon(), &declared),
        });
    }
    let candidate_count = out.iter().map(|l| l.plan.candidates.len()).sum();
    let hole_count = out.iter().map(|l| l.plan.holes.len()).sum();
    Ok(EnvTeardownPlan { env: env.to_owned(), lexicons: out, candidate_count, hole_count })
}

/// The status of every deploy unit the env's lexicons name, lexicon by lexicon.
pub fn unit_statuses(lexicons: &[BoundLexicon]) -> Vec<UnitStatus> {
    lexicons
        .iter()
        .flat_map(|l| l.lexicon().stack_units().into_iter().map(move |unit| stack_status(l.lexicon(), &unit)))
        .collect()
}

/// What one lexicon reads beyond its declaration, for `lifecycle diff --live`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexiconEstate {
    /// Its dependencies.
    pub dependencies: Reading<Dependencies>,
    /// Its ambient resources (and, in [`LexiconEstate::ambient_kinds`], the kinds they can be of).
    pub ambient: Reading<Ambient>,
    /// The kinds of which ambient resources are possible.
    pub ambient_kinds: Vec<String>,
    /// Its artifacts against the last snapshot.
    pub artifacts: Reading<ArtifactDiff>,
}

impl LexiconEstate {
    /// Returns `(ambientCount, dependencyUnobservedCount, artifactChangedCount)`: what the
    /// lexicon adds to the symptom's counts (a reader that failed counts nothing here; its failure
    /// is in the reading).
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.ambient.read().map_or(0, Ambient::count),
            self.dependencies.read().map_or(0, Dependencies::unobserved_count),
            self.artifacts.read().map_or(0, ArtifactDiff::changed_count),
        )
    }
}

/// An env's estate per lexicon, and the artifact snapshots to take.
#[derive(Debug, Clone, Default)]
pub struct EnvEstate {
    /// Per lexicon name.
    pub lexicons: BTreeMap<String, LexiconEstate>,
    /// The listings read now, per lexicon, for `--snapshot-artifacts`.
    pub listings: BTreeMap<String, ArtifactListing>,
}

/// Reads the estate of every lexicon bound to `env`: dependencies, ambient resources (excluding
/// what describe observed and what is a dependency), artifacts against the last snapshot.
///
/// # Errors
///
/// A lexicon whose declared entities cannot be listed. A snapshot that does not parse is the
/// artifacts reading's failure (naming its path and line), never an empty snapshot.
pub fn env_estate(
    ledger: &Ledger,
    member: Option<&str>,
    env: &str,
    lexicons: &[BoundLexicon],
) -> Result<EnvEstate, LexiconError> {
    let mut out = EnvEstate::default();
    for lexicon in lexicons {
        let read = lexicon.lexicon();
        let declared = lexicon.declared_entities()?;
        let observed = observe_component(read, &declared);
        let dependencies = dependencies_of(read, &declared);
        let ambient = ambient_of(read, &declared, &observed, dependencies.read());
        let artifacts = match read.list_artifacts() {
            Err(e) if e.is_not_implemented() => Reading::NotImplemented,
            Err(e) => Reading::Failed(e.chain()),
            Ok(listing) => {
                let reading = match last_snapshot(ledger, member, env, lexicon.name()) {
                    Ok(snapshot) => Reading::Read(diff_artifacts(snapshot.map(|s| s.listing()).as_ref(), &listing)),
                    Err(e) => Reading::Failed(chant_store::error::chain(&e)),
                };
                out.listings.insert(lexicon.name().to_owned(), listing);
                reading
            }
        };
        out.lexicons.insert(
            lexicon.name().to_owned(),
            LexiconEstate { dependencies, ambient, ambient_kinds: read.ambient_kinds(), artifacts },
        );
    }
    Ok(out)
}

/// Writes a snapshot of every listing to the ledger, each lexicon's as its own document
/// (`<env>/artifacts/<lexicon>.json`, one commit each, replacing the previous); returns how many.
///
/// # Errors
///
/// The first write that fails.
pub fn snapshot_artifacts(
    ledger: &Ledger,
    member: Option<&str>,
    env: &str,
    listings: &BTreeMap<String, ArtifactListing>,
) -> Result<usize, ledger::Error> {
    let taken_at = chant_store::clock::format(ledger.clock().now());
    for (lexicon, listing) in listings {
        write_snapshot(ledger, member, &ArtifactSnapshot::new(env, lexicon, taken_at.clone(), listing.clone()))?;
    }
    Ok(listings.len())
}
