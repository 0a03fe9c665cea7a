//! `serve [--addr 127.0.0.1:7878]`: the read-only web dashboard over the ledger
//! ([`crate::serve`]). A project binary serves the ledger plus each rule's `why` and the live
//! diff of its envs. The stock binary hands `serve` to the project binary inside a project that
//! has one (as it does `lifecycle`); outside a project, in one without a Cargo workspace, or in
//! one of several project binaries, it serves the ledger alone (no whys, no live diffs).
//!
//! It binds loopback by default and says where it listens on stderr; binding another address
//! needs `--addr` and is warned about. Exit codes: 2 for a usage or configuration error (an
//! address that does not parse, no repository), 1 when the socket cannot be bound or fails; it
//! serves until stopped.

use std::sync::Arc;

use clap::Args;

use super::{Binary, CommandError, Exit, open_ledger, open_project};
use crate::serve::{Bound, DEFAULT_ADDR, Dashboard, routes};

/// Serve a read-only web dashboard of the ledger (estate, ops, pending gates)
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on; anything but loopback is reachable from other machines.
    #[arg(long, default_value = DEFAULT_ADDR)]
    pub addr: String,
}

/// Runs `serve`.
///
/// # Errors
///
/// A usage error for an address that does not parse or no repository; a failure when the socket
/// cannot be bound or fails.
pub fn cmd_serve(binary: Binary, args: &ServeArgs) -> Result<Exit, CommandError> {
    if args.addr.parse::<std::net::SocketAddr>().is_err() {
        return Err(CommandError::usage(format!(
            "--addr {:?} is not an address and port such as {DEFAULT_ADDR}",
            args.addr
        )));
    }
    let dashboard = match binary {
        Binary::Stock => Dashboard::new(open_ledger()?, Vec::new(), None),
        Binary::Project => {
            let project = open_project()?;
            let carried = project.catalog.converge_ops().cloned().collect();
            let ledger = project.ledger.clone();
            Dashboard::new(ledger, carried, Some(Arc::new(project)))
        }
    };
    let bound = Bound::bind(&args.addr)?;
    let addr = bound.local_addr();
    if bound.is_loopback() {
        eprintln!("chant serve: read-only dashboard on http://{addr}/ (loopback only; --addr binds elsewhere)");
    } else {
        eprintln!(
            "chant serve: read-only dashboard on http://{addr}/ — warning: not loopback, so anyone who can reach \
             this address reads the ledger"
        );
    }
    bound.serve(routes::router(Arc::new(dashboard)))?;
    Ok(Exit::Done)
}
