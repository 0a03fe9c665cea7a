//! The dashboard's one script, served by the dashboard itself: `/assets/copy.js`, the copy
//! buttons of long commands (a plain `<button>` and the Clipboard API, no library).
//!
//! Pages load it with `<script src="/assets/copy.js" defer>` under a `Content-Security-Policy`
//! of `script-src 'self'` (no inline script is ever allowed). It is progressive: each button is
//! rendered `hidden` and only the script shows it, so without the script (or without a Clipboard
//! API, as on a plain-HTTP address that is not loopback) the command is selectable text and no
//! button is shown.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Where the script is served.
pub const COPY_JS_PATH: &str = "/assets/copy.js";

/// The script.
pub const COPY_JS: &str = include_str!("assets/copy.js");

/// `GET /assets/copy.js`.
pub async fn copy_js() -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8")),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        ],
        COPY_JS,
    )
        .into_response()
}
