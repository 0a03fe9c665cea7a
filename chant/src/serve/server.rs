//! The HTTP server under the dashboard (and the operator's metrics endpoint): a socket bound
//! before anything is served, so the caller can say where it listens (and whether that is
//! loopback only), then axum on a current-thread tokio runtime whose blocking pool does the
//! ledger reads. Every router it serves answers only to the names [`AllowedHosts`] admits
//! (a DNS-rebinding page is refused by its `Host`).

use std::net::{SocketAddr, TcpListener};

use axum::Router;

use super::Error;
use super::host::{AllowedHosts, BadHost};

/// The address `chant serve` binds without `--addr`: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7878";

/// The most threads reading the ledger at once.
const READERS: usize = 4;

/// A bound, not yet serving, socket.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    addr: SocketAddr,
    hosts: AllowedHosts,
}

impl Bound {
    /// Binds `addr` (`127.0.0.1:7878`, `[::1]:0`, `0.0.0.0:80`).
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when `addr` is not a socket address or cannot be bound.
    pub fn bind(addr: &str) -> Result<Bound, Error> {
        let serve_error = |source| Error::Serve { addr: addr.to_owned(), source };
        let parsed: SocketAddr = addr.parse().map_err(|e: std::net::AddrParseError| {
            serve_error(std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))
        })?;
        let listener = TcpListener::bind(parsed).map_err(serve_error)?;
        listener.set_nonblocking(true).map_err(serve_error)?;
        let addr = listener.local_addr().map_err(serve_error)?;
        Ok(Bound { listener, addr, hosts: AllowedHosts::for_addr(addr) })
    }

    /// Also answers to `name` (`dash.internal`, `dash.internal:443`): a name a reverse proxy or
    /// a scraper reaches this server by.
    ///
    /// # Errors
    ///
    /// [`BadHost`] when `name` is not a host name or address with an optional port.
    pub fn allow_host(&mut self, name: &str) -> Result<(), BadHost> {
        self.hosts.allow(name)
    }

    /// Returns the `Host` values this server answers to.
    pub fn allowed_hosts(&self) -> Vec<String> {
        self.hosts.names()
    }

    /// The address actually bound (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Returns true when only this machine can connect (a loopback address).
    pub fn is_loopback(&self) -> bool {
        self.addr.ip().is_loopback()
    }

    /// Serves `router` on the socket until the process ends, refusing every request whose `Host`
    /// is not an allowed name with 421 ([`super::host::check`]).
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the runtime cannot start or the socket fails.
    pub fn serve(self, router: Router) -> Result<(), Error> {
        let addr = self.addr.to_string();
        let serve_error = |source| Error::Serve { addr: addr.clone(), source };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(READERS)
            .thread_name("chant-serve")
            .build()
            .map_err(serve_error)?;
        let hosts = std::sync::Arc::new(self.hosts);
        let router = router.layer(axum::middleware::from_fn_with_state(hosts, super::host::check));
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::from_std(self.listener).map_err(serve_error)?;
            axum::serve(listener, router).await.map_err(serve_error)
        })
    }
}
