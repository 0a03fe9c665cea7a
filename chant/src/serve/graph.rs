//! The graph page, `/envs/{env}/graph[?live=1]`: an env's reference graph, built by the library
//! `graph <env> [--live]` prints ([`crate::graph`]), drawn server-side as inline SVG
//! ([`super::graph_svg`], placed by [`super::layout`]), with the dangling references and the
//! entities not observed listed as text. Its JSON is exactly `graph <env> [--live] --json`'s
//! document, redacted the same way (the whole line through the project's redactor).
//!
//! The declared graph reads declarations only, on the blocking pool like the other pages. The
//! live graph observes the env, so it runs on a thread of its own, holding one of the live
//! [`super::diff::Slots`] (at most [`super::diff::MAX_LIVE_DIFFS`] live observations at once,
//! the env and diff pages' observations and the live graphs together; one more is refused with
//! 503), and its page waits for it at most [`super::diff::LIVE_DIFF_WAIT`] (then 504). Laying the graph out (a `dot`
//! child bounded by [`super::layout::DOT_TIMEOUT`]) happens on that same thread, never on the
//! server's event loop; a JSON request lays nothing out.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::layout::Layout;
use super::routes::{answer, error_response, render, wants_json};
use super::{Dashboard, Error, graph_svg, html};
use crate::graph::{self as graphs, Graph};
use crate::redact::Redactor;

/// The graph page's document and what the page draws.
#[derive(Debug, Clone)]
pub struct GraphPage {
    /// The graph, every name redacted, for the page.
    pub graph: Graph,
    /// `graph <env> [--live] --json`'s document, redacted as that command redacts its line.
    pub doc: Value,
    /// Where the boxes go; `None` for a JSON request.
    pub layout: Option<Layout>,
    /// When it was read.
    pub generated_at: String,
}

impl Serialize for GraphPage {
    /// The document alone, as the command prints it.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.doc.serialize(s)
    }
}

impl Dashboard {
    /// Builds the declared (or, with `live`, the observed) graph of `env` (project binary only),
    /// laid out when `draw`.
    ///
    /// # Errors
    ///
    /// [`Error::NoDeclarations`] in the stock binary, [`Error::NoSuchEnv`] for an env this binary
    /// does not declare (as `graph` refuses it), [`Error::Diff`] when the project's lexicons
    /// cannot be bound, [`Error::Graph`] when a declaration cannot be listed.
    pub fn graph(&self, env: &str, live: bool, draw: bool) -> Result<GraphPage, Error> {
        let project = self.project.as_ref().ok_or(Error::NoDeclarations)?;
        if !crate::operator::is_name(env) || !crate::lexicon::declared_envs().contains(&env) {
            return Err(Error::NoSuchEnv { env: env.to_owned() });
        }
        let member = crate::diff::member_of(project, env);
        let lexicons = project.lexicons(member.as_deref(), env).map_err(Error::Diff)?;
        let built = if live { graphs::live(env, &lexicons) } else { graphs::declared(env, &lexicons) };
        let graph = built.map_err(|source| Error::Graph { env: env.to_owned(), source })?;
        let line = serde_json::to_string(&graph).map_err(|e| Error::Diff(e.into()))?;
        let doc: Value = serde_json::from_str(&project.redactor.redact(&line)).map_err(|e| Error::Diff(e.into()))?;
        let graph = redacted(graph, &project.redactor);
        let layout = draw.then(|| graph_svg::lay_out(&graph));
        let at = crate::clock::now().map(crate::clock::format).unwrap_or_default();
        Ok(GraphPage { graph, doc, layout, generated_at: at })
    }
}

/// `graph` with every name and text the page shows passed through `redactor`.
fn redacted(mut graph: Graph, redactor: &Redactor) -> Graph {
    let r = |s: &mut String| *s = redactor.redact(s);
    for n in &mut graph.nodes {
        r(&mut n.id);
        r(&mut n.name);
        if let Some(k) = n.kind.as_mut() {
            r(k);
        }
        n.properties.clear();
        n.attrs.clear();
    }
    for e in &mut graph.edges {
        r(&mut e.from);
        r(&mut e.to);
        r(&mut e.label);
    }
    for d in &mut graph.dangling {
        r(&mut d.from);
        r(&mut d.target);
        r(&mut d.label);
        r(&mut d.path);
    }
    for u in &mut graph.unobserved {
        r(&mut u.name);
        if let Some(d) = u.detail.as_mut() {
            r(d);
        }
    }
    for l in &mut graph.lexicons {
        if let Some(n) = l.note.as_mut() {
            r(n);
        }
    }
    graph
}

/// The graph page's query: `?live=1`.
#[derive(Debug, Deserialize)]
pub(super) struct GraphQuery {
    live: Option<String>,
}

/// Reads `?live=`: `1`/`true` for the live graph, `0`/`false` (or none) for the declared one.
fn live_asked(q: &GraphQuery) -> Result<bool, String> {
    match q.live.as_deref() {
        None | Some("0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(other) => Err(format!(
            "?live={other:?} is neither 1 nor 0: ask for ?live=1 (the observed graph) or leave it out (the declared graph)"
        )),
    }
}

/// `GET /envs/{env}/graph[?live=1]`.
pub(super) async fn page(
    State(d): State<Arc<Dashboard>>,
    Path(env): Path<String>,
    q: Result<Query<GraphQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let json = wants_json(&headers);
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return super::routes::bad_request(json, &e.body_text()),
    };
    let live = match live_asked(&q) {
        Ok(live) => live,
        Err(message) => return error_response(json, &d, &Error::BadQuery { message }),
    };
    if !live {
        let read = move |d: &Dashboard| d.graph(&env, false, !json);
        return answer(d, headers, read, |_, p| html::graph(p)).await;
    }
    match live_graph(&d, env, json).await {
        Ok(read) => render(json, &d, read, |_, p| html::graph(p)),
        Err(response) => response,
    }
}

/// Draws `env`'s live graph on a thread of its own holding one of the live
/// [`super::diff::Slots`] (none free: [`Error::TooManyDiffs`]), waiting for it at most
/// [`super::diff::LIVE_DIFF_WAIT`] (then [`Error::GraphTimedOut`]). The outer error is a
/// response already made: the thread could not start, or it ended without an answer.
async fn live_graph(d: &Arc<Dashboard>, env: String, json: bool) -> Result<Result<GraphPage, Error>, Response> {
    let Some(slot) = d.diff_slots().take() else {
        return Ok(Err(Error::TooManyDiffs { limit: super::diff::MAX_LIVE_DIFFS }));
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let reader = Arc::clone(d);
    let name = env.clone();
    let started = std::thread::Builder::new().name("chant-serve-graph".into()).spawn(move || {
        let answer = reader.graph(&name, true, !json);
        drop(slot);
        let _ = tx.send(answer);
    });
    if let Err(e) = started {
        let message = format!("cannot start the live graph: {e}");
        return Err((StatusCode::INTERNAL_SERVER_ERROR, message).into_response());
    }
    match tokio::time::timeout(super::diff::LIVE_DIFF_WAIT, rx).await {
        Ok(Ok(read)) => Ok(read),
        Ok(Err(_)) => {
            Err((StatusCode::INTERNAL_SERVER_ERROR, "the live graph ended without an answer").into_response())
        }
        Err(_) => Ok(Err(Error::GraphTimedOut { env, after: super::diff::LIVE_DIFF_WAIT })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_is_one_or_true_and_anything_unknown_is_refused_by_name() {
        let q = |v: Option<&str>| GraphQuery { live: v.map(str::to_owned) };
        assert_eq!(live_asked(&q(None)), Ok(false));
        assert_eq!(live_asked(&q(Some("0"))), Ok(false));
        assert_eq!(live_asked(&q(Some("1"))), Ok(true));
        assert_eq!(live_asked(&q(Some("true"))), Ok(true));
        let err = live_asked(&q(Some("yes"))).unwrap_err();
        assert!(err.contains("?live=\"yes\"") && err.contains("?live=1"), "{err}");
    }

    #[test]
    fn redaction_reaches_every_name_the_page_shows() {
        use std::collections::BTreeMap;
        let redactor = Redactor::new(["hunter2".to_owned()]);
        let node = crate::graph::Node::new("pg", "t_hunter2", None, BTreeMap::from([("k".into(), "hunter2".into())]));
        let graph = Graph {
            version: 1,
            env: "e".into(),
            source: crate::graph::Source::Live,
            lexicons: Vec::new(),
            nodes: vec![node],
            edges: Vec::new(),
            dangling: Vec::new(),
            unobserved: Vec::new(),
        };
        let shown = redacted(graph, &redactor);
        assert!(!format!("{shown:?}").contains("hunter2"), "{shown:?}");
    }
}
