//! The names a server answers to: every request's `Host` must be one of them, or it is refused
//! with 421 (Misdirected Request) and a one-line reason.
//!
//! A page on any site can make a browser send requests to `127.0.0.1:7878` under a name of its
//! own (DNS rebinding: `evil.example` first resolves to the attacker, then to 127.0.0.1), and
//! the browser then lets that page read the answers, since to the browser they come from
//! `evil.example`. What such a request cannot hide is its `Host` header, which names
//! `evil.example`. So the dashboard and the metrics endpoint serve only:
//!
//! - the loopback names `localhost`, `127.0.0.1` and `[::1]`, with the served port;
//! - the bound address itself (`192.0.2.7:7878`), unless it is unspecified (`0.0.0.0`, `[::]`);
//! - when the address is unspecified, any IP literal with the served port (a page cannot make a
//!   browser send an IP literal it was not loaded from, so this admits no rebinding);
//! - the names given with `--allow-host` (`dash.internal`, `dash.internal:443` behind a reverse
//!   proxy): a name without a port is allowed with the served port and with none (a proxy's
//!   default port).
//!
//! Names are compared without regard to case. A request with no `Host` at all (HTTP/1.0) cannot
//! come from a browser and is served.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The `Host` values a server answers to ([`AllowedHosts::admits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts {
    /// Lowercase `name:port` or `name` (a name given without a port admits both).
    exact: Vec<String>,
    /// The served port.
    port: u16,
    /// Whether any IP literal with the served port is admitted (an unspecified bound address).
    any_ip: bool,
}

/// A name `--allow-host` cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--allow-host {name:?} is not a host name or address (with an optional :port), such as dash.internal or dash.internal:443"
)]
pub struct BadHost {
    /// The name given.
    pub name: String,
}

impl AllowedHosts {
    /// Returns the names a server bound at `addr` answers to by default.
    pub fn for_addr(addr: SocketAddr) -> AllowedHosts {
        let port = addr.port();
        let mut exact: Vec<String> =
            ["localhost", "127.0.0.1", "[::1]"].iter().map(|name| format!("{name}:{port}")).collect();
        let any_ip = addr.ip().is_unspecified();
        if !any_ip {
            let bound = SocketAddr::new(addr.ip(), port).to_string().to_ascii_lowercase();
            if !exact.contains(&bound) {
                exact.push(bound);
            }
        }
        AllowedHosts { exact, port, any_ip }
    }

    /// Adds `name` (`dash.internal`, `dash.internal:8443`, `192.0.2.7`, `[2001:db8::1]`).
    ///
    /// # Errors
    ///
    /// [`BadHost`] for anything else (a scheme, a path, a space, a port that is not a number).
    pub fn allow(&mut self, name: &str) -> Result<(), BadHost> {
        let bad = || BadHost { name: name.to_owned() };
        let lower = name.trim().to_ascii_lowercase();
        let (host, port) = split(&lower).ok_or_else(bad)?;
        let valid_name =
            !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
        let valid_ip = host.starts_with('[') && host[1..host.len() - 1].parse::<std::net::Ipv6Addr>().is_ok();
        if !(valid_name || valid_ip) {
            return Err(bad());
        }
        match port {
            Some(p) => self.exact.push(format!("{host}:{p}")),
            None => {
                self.exact.push(format!("{host}:{}", self.port));
                self.exact.push(host.to_owned());
            }
        }
        Ok(())
    }

    /// Returns the allowed values, for a refusal's reason and the start-up line.
    pub fn names(&self) -> Vec<String> {
        let mut names = self.exact.clone();
        if self.any_ip {
            names.push(format!("<any IP address>:{}", self.port));
        }
        names
    }

    /// Returns true when a request whose `Host` is `host` is served.
    pub fn admits(&self, host: &str) -> bool {
        let lower = host.trim().to_ascii_lowercase();
        if self.exact.contains(&lower) {
            return true;
        }
        // `localhost` with the default port of the scheme when the served port is 80.
        if self.port == 80 && self.exact.contains(&format!("{lower}:80")) {
            return true;
        }
        if self.any_ip
            && let Some((ip, Some(port))) = split(&lower)
        {
            let literal = ip.trim_start_matches('[').trim_end_matches(']');
            return port == self.port && literal.parse::<IpAddr>().is_ok();
        }
        false
    }
}

/// Splits `host[:port]` (an IPv6 literal in brackets); `None` when the port is not a number.
fn split(value: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if value.starts_with('[') {
        let end = value.find(']')?;
        let rest = &value[end + 1..];
        (&value[..=end], rest.strip_prefix(':'))
    } else {
        match value.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        }
    };
    match port {
        None => Some((host, None)),
        Some(p) => p.parse().ok().map(|p| (host, Some(p))),
    }
}

/// Refuses a request whose `Host` (or absolute URI's authority) `hosts` does not admit, with
/// 421 and a one-line reason; passes the others on.
pub async fn check(State(hosts): State<std::sync::Arc<AllowedHosts>>, request: Request, next: Next) -> Response {
    let named =
        request.uri().authority().map(|a| a.as_str().to_owned()).or_else(|| {
            request.headers().get(header::HOST).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        });
    match named {
        Some(host) if !hosts.admits(&host) => {
            let shown: String = host.chars().filter(|c| c.is_ascii_graphic()).take(100).collect();
            let body = format!(
                "refused: this server does not answer to the name {shown:?} (it answers to {}); \
                 a name it should answer to is given with --allow-host\n",
                hosts.names().join(", ")
            );
            (
                StatusCode::MISDIRECTED_REQUEST,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
                body,
            )
                .into_response()
        }
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_the_served_port_are_admitted_and_others_are_not() {
        let hosts = AllowedHosts::for_addr("127.0.0.1:7878".parse().unwrap());
        for ok in ["localhost:7878", "LOCALHOST:7878", "127.0.0.1:7878", "[::1]:7878"] {
            assert!(hosts.admits(ok), "{ok}");
        }
        for refused in ["evil.example:7878", "localhost:80", "localhost", "127.0.0.1:7879", "a.localhost:7878", ""] {
            assert!(!hosts.admits(refused), "{refused}");
        }
    }

    #[test]
    fn an_unspecified_address_admits_ip_literals_and_allowed_names_only() {
        let mut hosts = AllowedHosts::for_addr("0.0.0.0:9464".parse().unwrap());
        assert!(hosts.admits("192.0.2.7:9464"));
        assert!(hosts.admits("[2001:db8::1]:9464"));
        assert!(!hosts.admits("192.0.2.7:9465"));
        assert!(!hosts.admits("metrics.internal:9464"));
        hosts.allow("Metrics.Internal").unwrap();
        assert!(hosts.admits("metrics.internal:9464"));
        assert!(hosts.admits("metrics.internal"), "a proxy's default port");
        hosts.allow("dash.example:443").unwrap();
        assert!(hosts.admits("dash.example:443"));
        assert!(!hosts.admits("dash.example"));
        for bad in ["http://x", "a b", "x:port", "x/y", "", "[nope]"] {
            assert!(hosts.allow(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bound_address_is_admitted_by_its_own_name() {
        let hosts = AllowedHosts::for_addr("[::1]:8080".parse().unwrap());
        assert!(hosts.admits("[::1]:8080"));
        assert!(!hosts.admits("[::2]:8080"));
        let hosts = AllowedHosts::for_addr("192.0.2.7:8080".parse().unwrap());
        assert!(hosts.admits("192.0.2.7:8080"));
        assert!(!hosts.admits("192.0.2.8:8080"));
    }
}
