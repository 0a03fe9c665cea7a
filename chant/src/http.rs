//! The `http_check` step: a real HTTP GET with a timeout; only a 2xx answer passes, and redirects
//! are not followed (a 3xx fails, naming where it pointed).

use std::time::Duration;

/// Why a check failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The server answered outside 2xx.
    #[error("GET {url} answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// No answer: refused, unreachable, timed out, or not HTTP.
    #[error("GET {url} failed: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
}

/// Performs the check and returns the status code of a 2xx answer.
///
/// # Errors
///
/// [`CheckError::Status`] for a non-2xx answer, [`CheckError::Transport`] for no answer.
pub fn check(url: &str, timeout: Duration) -> Result<u16, CheckError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    match agent.get(url).call() {
        Ok(resp) => {
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                Ok(status)
            } else {
                Err(CheckError::Status { url: url.to_owned(), status })
            }
        }
        Err(e) => Err(CheckError::Transport { url: url.to_owned(), message: e.to_string() }),
    }
}
