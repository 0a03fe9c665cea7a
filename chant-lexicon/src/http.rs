//! The `http_check` step: a real HTTP GET with a timeout; only a 2xx answer passes, and redirects
//! are not followed (a 3xx fails, naming where it pointed).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

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

/// Why a build without the `tls` feature refuses `url`: it is `https://` (compared without regard
/// to case). `None` when the URL can be sent, always so in a build with the feature.
pub fn tls_refusal(url: &str) -> Option<String> {
    let https = url.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://"));
    (https && !cfg!(feature = "tls")).then(|| {
        "https:// needs chant's `tls` feature, which this binary was built without \
         (add \"tls\" to the features of the chant dependency in Cargo.toml)"
            .to_owned()
    })
}

/// ureq's resolver, except that a host that is an IP address is taken as it is: ureq resolves a
/// name under a timeout on a thread of its own, which a probe of `127.0.0.1` every second need
/// not start.
#[derive(Debug, Default)]
struct Literal(DefaultResolver);

impl Resolver for Literal {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.host().and_then(|h| h.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok());
        let port = uri.port_u16().or_else(|| match uri.scheme_str() {
            Some("http") => Some(80),
            Some("https") => Some(443),
            _ => None,
        });
        match (literal, port) {
            (Some(ip), Some(port)) => {
                let mut addrs = self.empty();
                addrs.push(SocketAddr::new(ip, port));
                Ok(addrs)
            }
            _ => self.0.resolve(uri, config, timeout),
        }
    }
}

/// Performs the check and returns the status code of a 2xx answer.
///
/// # Errors
///
/// [`CheckError::Status`] for a non-2xx answer, [`CheckError::Transport`] for no answer.
pub fn check(url: &str, timeout: Duration) -> Result<u16, CheckError> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .build();
    if let Some(message) = tls_refusal(url) {
        return Err(CheckError::Transport { url: url.to_owned(), message });
    }
    let agent = ureq::Agent::with_parts(config, DefaultConnector::new(), Literal::default());
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

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// Answers each of `answers` connections with one status line, on 127.0.0.1.
    fn server(statuses: Vec<u16>) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for status in statuses {
                let (mut conn, _) = listener.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let head = format!(
                    "HTTP/1.1 {status} X\r\nlocation: /elsewhere\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                conn.write_all(head.as_bytes()).unwrap();
            }
        });
        port
    }

    #[test]
    fn https_is_refused_naming_the_feature_only_in_a_build_without_tls() {
        assert_eq!(tls_refusal("http://127.0.0.1/"), None);
        let refused = tls_refusal("HTTPS://127.0.0.1:9/");
        assert_eq!(refused.is_some(), !cfg!(feature = "tls"));
        if let Some(why) = refused {
            assert!(why.contains("`tls` feature"), "{why}");
            let Err(CheckError::Transport { message, .. }) = check("https://127.0.0.1:9/", Duration::from_secs(1))
            else {
                panic!("an https check without tls did not fail as a transport error");
            };
            assert_eq!(message, why);
        }
    }

    #[test]
    fn an_address_and_a_name_are_both_reached_and_only_2xx_passes() {
        let port = server(vec![200, 200, 503, 302]);
        assert_eq!(check(&format!("http://127.0.0.1:{port}/health"), Duration::from_secs(5)), Ok(200));
        // A name still goes through ureq's own resolver.
        assert_eq!(check(&format!("http://localhost:{port}/health"), Duration::from_secs(5)), Ok(200));
        let url = format!("http://127.0.0.1:{port}/health");
        assert_eq!(check(&url, Duration::from_secs(5)), Err(CheckError::Status { url: url.clone(), status: 503 }));
        assert_eq!(check(&url, Duration::from_secs(5)), Err(CheckError::Status { url, status: 302 }));
        // Nothing listens any more: a transport error, not a hang.
        let refused = check(&format!("http://127.0.0.1:{port}/health"), Duration::from_secs(5)).unwrap_err();
        assert!(matches!(refused, CheckError::Transport { .. }), "{refused}");
    }
}
