//! `chant serve`: a read-only web dashboard over the ledger.
//!
//! A **dashboard** ([`Dashboard`]) reads what `operator status` and `operator log` read (the
//! ledger and the local lease refs, through [`crate::operator::status`] and
//! [`crate::operator::log`]) and shows it as server-rendered HTML, one page per URL, with the same
//! data as JSON at each URL when the request says `Accept: application/json`:
//!
//! | URL | page |
//! |---|---|
//! | `/` | the estate: every member, env and ConvergeOp with its rolled-up [`Health`], last tick and its age, lease holder and expiry |
//! | `/ops/{env}/{op}[?member=M][&limit=N]` | one ConvergeOp: its ticks as a timeline, each outcome with its rule, `why`, source line and dispatched run |
//! | `/gates` | every standing gate, with the exact approve command and the approval URL |
//! | `/envs/{env}/diff` | the live diff of an env (project binary only, observed when this page is asked for) |
//! | `/envs/{env}/graph[?live=1]` | the env's reference graph drawn as inline SVG, declared or live ([`graph`]; project binary only) |
//! | `/envs/{env}[?verdict=V]` | every resource of an env with its verdict, from a live observation kept a few seconds ([`mod@env`]) |
//! | `/assets/copy.js` | the one script: the copy buttons of long commands ([`assets`]) |
//!
//! # Guarantees
//!
//! - It never writes: every route is a `GET`; there is no approve or tick button (approving stays
//!   a recorded, out-of-band act). A live diff observes, as `lifecycle diff --live` does.
//! - Every value read from the ledger is escaped: pages are built with `maud`, which escapes each
//!   interpolated value, and every page is served with a `Content-Security-Policy` that allows
//!   no inline script (only the dashboard's own `/assets/copy.js`), so a `why` or a service name
//!   holding `<script>` is shown, never run.
//! - Nothing is fetched from elsewhere: the one stylesheet is inline, there are no external assets.
//! - The overview never observes anything live; only `/envs/{env}/diff` and
//!   `/envs/{env}/graph?live=1` do.
//! - It answers only to its own names ([`host`]): a request whose `Host` is not a loopback name,
//!   the bound address or an `--allow-host` name is refused with 421, so a DNS-rebinding page
//!   reads nothing and starts no live diff.
//! - A live diff never holds another page: it runs on a thread of its own, at most
//!   [`diff::MAX_LIVE_DIFFS`] at once, waited for at most [`diff::LIVE_DIFF_WAIT`]; a live graph
//!   ([`graph`]) takes one of the same places.
//!
//! # Caveats
//!
//! - A page is read from the ledger when it is asked for; the estate page asks the browser to
//!   reload it every 30 seconds (a `<meta http-equiv="refresh">`, no script).
//! - The stock binary carries no op.json, so it shows no rule's `why` and serves no live diff.

pub mod assets;
pub mod chart;
pub mod diff;
pub mod env;
pub mod graph;
pub mod graph_svg;
pub mod health;
pub mod history;
pub mod host;
pub mod html;
pub mod layout;
pub mod routes;
pub mod server;
pub mod timeline;
pub mod view;

use std::sync::Arc;

pub use health::Health;
pub use host::{AllowedHosts, BadHost};
pub use server::{Bound, DEFAULT_ADDR};

use crate::lease::LeaseStore;
use crate::ledger::Ledger;
use crate::model::OpDocument;
use crate::operator::{self, status};
use crate::project::Project;

/// What a dashboard read fails with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the ledger, the leases or the clock failed.
    #[error("cannot read the ledger")]
    Read(#[from] operator::Error),
    /// The live diff failed.
    #[error("cannot observe the env")]
    Diff(#[source] crate::project::Error),
    /// The URL names no ConvergeOp the ledger or this binary knows.
    #[error("no ConvergeOp {op:?} in env {env:?} is recorded on the ledger or carried by this binary")]
    NoSuchOp {
        /// The env asked for.
        env: String,
        /// The op asked for.
        op: String,
    },
    /// The URL names an op that several workspace members have, and no `?member=`.
    #[error("ConvergeOp {op:?} in env {env:?} is in several members ({}); name one with ?member=", members.join(", "))]
    AmbiguousOp {
        /// The env asked for.
        env: String,
        /// The op asked for.
        op: String,
        /// The members that have it.
        members: Vec<String>,
    },
    /// The URL names an env that is not a valid env name, or one this binary does not carry.
    #[error("no env {env:?} is declared by this binary")]
    NoSuchEnv {
        /// The env asked for.
        env: String,
    },
    /// As many live diffs as may run at once are running.
    #[error("{limit} live diffs are running already (a live graph counts as one); ask again once one has finished")]
    TooManyDiffs {
        /// [`diff::MAX_LIVE_DIFFS`].
        limit: usize,
    },
    /// The live diff did not finish while the page waited.
    #[error("the live diff of env {env:?} did not finish within {}", crate::duration::format(*.after))]
    DiffTimedOut {
        /// The env.
        env: String,
        /// [`diff::LIVE_DIFF_WAIT`].
        after: std::time::Duration,
    },
    /// The stock binary was asked for a live diff.
    #[error(
        "the stock chant binary carries no declarations, so it cannot diff an env live or draw its graph; run `serve` from the project's own binary"
    )]
    NoDeclarations,
    /// The env's graph could not be built.
    #[error("cannot draw the graph of env {env:?}")]
    Graph {
        /// The env.
        env: String,
        /// Why.
        #[source]
        source: crate::graph::GraphError,
    },
    /// The live graph did not finish while the page waited.
    #[error("the live graph of env {env:?} did not finish within {}", crate::duration::format(*.after))]
    GraphTimedOut {
        /// The env.
        env: String,
        /// [`diff::LIVE_DIFF_WAIT`].
        after: std::time::Duration,
    },
    /// The request's query cannot be read.
    #[error("{message}")]
    BadQuery {
        /// What is wrong and how to ask instead.
        message: String,
    },
    /// Binding or serving the socket failed.
    #[error("cannot serve on {addr}")]
    Serve {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Where a dashboard reads from: the ledger, the ConvergeOps this binary carries, and (in the
/// project binary) the project, for live diffs.
pub struct Dashboard {
    ledger: Ledger,
    carried: Vec<OpDocument>,
    whys: timeline::Whys,
    project: Option<Arc<Project>>,
    diffs: diff::Slots,
    observations: env::Observations,
}

impl Dashboard {
    /// Returns a dashboard over `ledger` showing the ConvergeOps on it plus those `carried`, with
    /// live diffs through `project` when given.
    pub fn new(ledger: Ledger, carried: Vec<OpDocument>, project: Option<Arc<Project>>) -> Dashboard {
        let carried: Vec<OpDocument> = carried.into_iter().filter(OpDocument::is_converge).collect();
        let whys = timeline::Whys::new(&carried);
        Dashboard {
            ledger,
            carried,
            whys,
            project,
            diffs: diff::Slots::default(),
            observations: env::Observations::default(),
        }
    }

    /// Returns true when this dashboard can diff an env live (the project binary).
    pub fn has_project(&self) -> bool {
        self.project.is_some()
    }

    /// Returns the envs this dashboard can diff live: those the project binary declares (as
    /// `lifecycle diff` requires), none in the stock binary.
    pub fn diffable_envs(&self) -> Vec<&'static str> {
        if self.project.is_some() { crate::lexicon::declared_envs() } else { Vec::new() }
    }

    /// Redacts `text` with the project's redactor (the stock binary has none: ledger text was
    /// redacted when it was recorded).
    pub fn redact(&self, text: &str) -> String {
        self.project.as_ref().map_or_else(|| text.to_owned(), |p| p.redactor.redact(text))
    }

    fn status_of(
        &self,
        env: Option<&str>,
        op: Option<&str>,
    ) -> Result<(Vec<status::OpRef>, status::StatusView), Error> {
        let now = crate::clock::now().map_err(operator::Error::from)?;
        let ops = status::discover(&self.ledger, &self.carried, env, op)?;
        let view = status::status(&self.ledger, &LeaseStore::new(&self.ledger), &ops, now)?;
        Ok((ops, view))
    }

    /// Reads the estate.
    ///
    /// # Errors
    ///
    /// Ledger, lease and clock errors.
    pub fn estate(&self) -> Result<view::EstateView, Error> {
        let now = crate::clock::now().map_err(operator::Error::from)?;
        let (_, status) = self.status_of(None, None)?;
        Ok(view::estate(status, now))
    }

    /// Reads the standing gates.
    ///
    /// # Errors
    ///
    /// Ledger, lease and clock errors.
    pub fn gates(&self) -> Result<view::GatesView, Error> {
        let now = crate::clock::now().map_err(operator::Error::from)?;
        let (_, status) = self.status_of(None, None)?;
        Ok(view::gates(status, now))
    }

    /// Reads one ConvergeOp's page, its newest `limit` ticks.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchOp`] for an op neither the ledger nor this binary knows in that env and
    /// member; ledger, lease and clock errors.
    pub fn op(&self, member: Option<&str>, env: &str, op: &str, limit: usize) -> Result<timeline::OpView, Error> {
        let no_such = || Error::NoSuchOp { env: env.to_owned(), op: op.to_owned() };
        if !operator::is_name(env) || !operator::is_name(op) {
            return Err(no_such());
        }
        let now = crate::clock::now().map_err(operator::Error::from)?;
        let (refs, status) = self.status_of(Some(env), Some(op))?;
        let (refs, rows): (Vec<status::OpRef>, Vec<status::OpStatus>) = refs.into_iter().zip(status.ops).unzip();
        let (refs, rows): (Vec<status::OpRef>, Vec<status::OpStatus>) = match in_member(refs, member) {
            Picked::One(i, r) => (vec![r], rows.into_iter().nth(i).into_iter().collect()),
            Picked::None => return Err(no_such()),
            Picked::Several(members) => {
                return Err(Error::AmbiguousOp { env: env.to_owned(), op: op.to_owned(), members });
            }
        };
        let (Some(row), true) = (rows.into_iter().next(), refs.len() == 1) else { return Err(no_such()) };
        let timeline = operator::log::timeline(&self.ledger, &refs, &operator::log::Filter::default())?;
        let mut view = timeline::op_view(row, timeline, &self.whys, limit, now);
        let m = &mut view.malformed;
        m.converge = m.converge.max(status.malformed.converge);
        m.gates = m.gates.max(status.malformed.gates);
        Ok(view)
    }

    /// Returns the slots of the live diffs running now.
    pub fn diff_slots(&self) -> &diff::Slots {
        &self.diffs
    }
}

/// Which of an op's rows a page shows.
#[derive(Debug, PartialEq, Eq)]
enum Picked {
    /// The one row, at this index.
    One(usize, status::OpRef),
    /// None in the member asked for.
    None,
    /// Several members have it and no member was asked for: their names.
    Several(Vec<String>),
}

/// Picks the op's row of `member` (`?member=`); without one, the op in whichever member has it
/// when exactly one does (a flat project's ops have no member), as docs/dashboard.md says.
fn in_member(refs: Vec<status::OpRef>, member: Option<&str>) -> Picked {
    let mut found: Vec<(usize, status::OpRef)> =
        refs.into_iter().enumerate().filter(|(_, r)| member.is_none_or(|m| r.member.as_deref() == Some(m))).collect();
    match found.len() {
        0 => Picked::None,
        1 => found.pop().map_or(Picked::None, |(i, r)| Picked::One(i, r)),
        _ => Picked::Several(found.into_iter().map(|(_, r)| r.member.unwrap_or_else(|| "(none)".to_owned())).collect()),
    }
}

#[cfg(test)]
mod member_tests {
    use super::*;

    fn op_in(member: Option<&str>) -> status::OpRef {
        status::OpRef { op: "converge".into(), env: "box".into(), member: member.map(str::to_owned) }
    }

    #[test]
    fn an_op_page_without_a_member_finds_the_op_in_the_one_member_that_has_it() {
        assert_eq!(in_member(vec![op_in(Some("box"))], None), Picked::One(0, op_in(Some("box"))));
        assert_eq!(in_member(vec![op_in(None)], None), Picked::One(0, op_in(None)), "a flat project");
        assert_eq!(in_member(vec![op_in(Some("box"))], Some("box")), Picked::One(0, op_in(Some("box"))));
        assert_eq!(in_member(vec![op_in(Some("box"))], Some("web")), Picked::None);
        assert_eq!(
            in_member(vec![op_in(Some("a")), op_in(Some("b"))], None),
            Picked::Several(vec!["a".into(), "b".into()])
        );
        assert_eq!(in_member(vec![op_in(Some("a")), op_in(Some("b"))], Some("b")), Picked::One(1, op_in(Some("b"))));
    }
}
