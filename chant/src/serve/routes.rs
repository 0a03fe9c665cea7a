//! The dashboard's routes: every one a `GET`, each answering HTML, or JSON when the request's
//! `Accept` header names `application/json`. Ledger reads are blocking (gix), so each request
//! reads on tokio's blocking pool.
//!
//! Every response carries `Vary: Accept`, `X-Content-Type-Options: nosniff`,
//! `Referrer-Policy: no-referrer`, `Cache-Control: no-store`, and HTML a
//! `Content-Security-Policy` that allows no inline script, no frame and no fetch: only the
//! inline stylesheet and the dashboard's own script, `/assets/copy.js` (its copy buttons).

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::Markup;
use serde::{Deserialize, Serialize};

use super::timeline::DEFAULT_TICKS;
use super::{Dashboard, Error, html};

/// The most ticks one op page shows.
pub const MAX_TICKS: usize = 1000;

/// The policy every HTML page is served with: the inline stylesheet, the dashboard's own script
/// (`/assets/copy.js`, never an inline one) and nothing else.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'self'; \
                       frame-ancestors 'none'; form-action 'none'; base-uri 'none'";

/// Returns the dashboard's router over `dashboard`.
pub fn router(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/", get(estate))
        .route("/gates", get(gates))
        .route("/ops/{env}/{op}", get(op))
        .route("/envs/{env}/diff", get(super::diff::page))
        .route("/envs/{env}/graph", get(super::graph::page))
        .route("/envs/{env}", get(super::env::page))
        .route(super::assets::COPY_JS_PATH, get(super::assets::copy_js))
        .fallback(not_found)
        .with_state(dashboard)
}

/// Returns true when the request asks for JSON.
pub fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|t| t.split(';').next().is_some_and(|t| t.trim() == "application/json")))
}

fn common(kind: &'static str) -> [(HeaderName, HeaderValue); 5] {
    [
        (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
        (header::VARY, HeaderValue::from_static("Accept")),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ]
}

pub(super) fn html_response(status: StatusCode, page: Markup) -> Response {
    let csp = [(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP))];
    (status, common("text/html; charset=utf-8"), csp, page.into_string()).into_response()
}

pub(super) fn json_response(status: StatusCode, doc: &impl Serialize) -> Response {
    match serde_json::to_string(doc) {
        Ok(body) => json_text_response(status, body),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot render the document: {e}")).into_response(),
    }
}

/// Answers `body`, a JSON document's text already rendered.
pub(super) fn json_text_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    (status, common("application/json"), body.into()).into_response()
}

pub(super) fn now_text() -> String {
    crate::clock::now().map(crate::clock::format).unwrap_or_default()
}

pub(super) fn error_response(json: bool, dashboard: &Dashboard, err: &Error) -> Response {
    let status = match err {
        Error::NoSuchOp { .. } | Error::NoSuchEnv { .. } | Error::NoDeclarations => StatusCode::NOT_FOUND,
        Error::AmbiguousOp { .. } | Error::BadQuery { .. } => StatusCode::BAD_REQUEST,
        Error::TooManyDiffs { .. } => StatusCode::SERVICE_UNAVAILABLE,
        Error::DiffTimedOut { .. } | Error::GraphTimedOut { .. } => StatusCode::GATEWAY_TIMEOUT,
        Error::Read(_) | Error::Diff(_) | Error::Graph { .. } | Error::Serve { .. } => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    let message = dashboard.redact(&crate::error::chain(err));
    if json {
        json_response(status, &serde_json::json!({ "error": message }))
    } else {
        html_response(status, html::error(status.as_u16(), &message, &now_text()))
    }
}

/// Runs `read` on the blocking pool and answers with its document as JSON or as the page
/// `page` renders.
pub(super) async fn answer<T, R, P>(dashboard: Arc<Dashboard>, headers: HeaderMap, read: R, page: P) -> Response
where
    T: Serialize + Send + 'static,
    R: FnOnce(&Dashboard) -> Result<T, Error> + Send + 'static,
    P: FnOnce(&Dashboard, &T) -> Markup,
{
    let json = wants_json(&headers);
    let reader = Arc::clone(&dashboard);
    match tokio::task::spawn_blocking(move || read(&reader)).await {
        Ok(read) => render(json, &dashboard, read, page),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("the read did not finish: {e}")).into_response(),
    }
}

/// Answers with `read`'s document as JSON or as the page `page` renders, or with its error.
pub(super) fn render<T: Serialize>(
    json: bool,
    dashboard: &Dashboard,
    read: Result<T, Error>,
    page: impl FnOnce(&Dashboard, &T) -> Markup,
) -> Response {
    match read {
        Ok(doc) if json => json_response(StatusCode::OK, &doc),
        Ok(doc) => html_response(StatusCode::OK, page(dashboard, &doc)),
        Err(e) => error_response(json, dashboard, &e),
    }
}

async fn estate(State(d): State<Arc<Dashboard>>, headers: HeaderMap) -> Response {
    answer(d, headers, Dashboard::estate, |d, v| html::estate(v, &d.diffable_envs())).await
}

async fn gates(State(d): State<Arc<Dashboard>>, headers: HeaderMap) -> Response {
    answer(d, headers, Dashboard::gates, |_, v| html::gates(v)).await
}

/// The op page's query: `?member=M&limit=N`.
#[derive(Debug, Deserialize)]
struct OpQuery {
    member: Option<String>,
    limit: Option<usize>,
}

async fn op(
    State(d): State<Arc<Dashboard>>,
    Path((env, op)): Path<(String, String)>,
    q: Result<Query<OpQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    // A query that cannot be read answers as every other error does (`{error}` for JSON).
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return bad_request(wants_json(&headers), &e.body_text()),
    };
    let limit = q.limit.unwrap_or(DEFAULT_TICKS).clamp(1, MAX_TICKS);
    let read = move |d: &Dashboard| d.op(q.member.as_deref(), &env, &op, limit);
    answer(d, headers, read, |_, v| html::op(v)).await
}

/// A 400 with `message`: `{error}` as JSON when `json`, else an error page.
pub(super) fn bad_request(json: bool, message: &str) -> Response {
    let status = StatusCode::BAD_REQUEST;
    if json {
        json_response(status, &serde_json::json!({ "error": message }))
    } else {
        html_response(status, html::error(status.as_u16(), message, &now_text()))
    }
}

async fn not_found(headers: HeaderMap) -> Response {
    let message = "no page at this address: the dashboard serves /, /gates, /ops/{env}/{op}, /envs/{env}, /envs/{env}/diff and /envs/{env}/graph";
    if wants_json(&headers) {
        json_response(StatusCode::NOT_FOUND, &serde_json::json!({ "error": message }))
    } else {
        html_response(StatusCode::NOT_FOUND, html::error(404, message, &now_text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_chosen_only_when_accept_names_it() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_static(v));
            wants_json(&h)
        };
        assert!(with("application/json"));
        assert!(with("text/html, application/json;q=0.9"));
        assert!(!with("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"));
        assert!(!with("application/jsonp"));
        assert!(!wants_json(&HeaderMap::new()));
    }
}
