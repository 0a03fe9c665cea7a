//! chant's runtime: what runs ops and keeps envs converged, over the lexicon API.
//!
//! Running an op ([`runner`]), a ConvergeOp's tick ([`tick`]), gate facts, plans and seals
//! ([`gate`]), schedules ([`schedule`]), the operator's rounds under a lease ([`operator`]), the
//! project around the ops ([`project`], [`config`], [`catalog`], [`registry`]), the env as a graph
//! ([`graph`]), its diff ([`diff`]) and behaviour prediction ([`behaviour`]).
//!
//! The runtime names no lexicon: it binds, observes, applies and tears down whatever lexicons the
//! binary registered through `chant-lexicon`, and runs their step kinds by name. Users reach it
//! through the `chant` facade.

pub mod approval;
pub mod behaviour;
pub mod catalog;
pub mod config;
pub mod diff;
pub mod gate;
pub mod graph;
pub mod notification;
pub mod operator;
pub mod project;
pub mod registry;
pub mod runner;
pub mod schedule;
pub mod scheduler;
pub mod search;
pub mod step;
pub mod terminal;
pub mod textdiff;
pub mod tick;

// The unit tests run with chant's own lexicons registered; naming the crates links them.
#[cfg(test)]
use chant_files as _;
#[cfg(test)]
use chant_postgres as _;
