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

/// Serve a read-only web dashboard: estate, op histories, env resources, live diffs, graphs, gates
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on; anything but loopback is reachable from other machines.
    #[arg(long, default_value = DEFAULT_ADDR)]
    pub addr: String,
    /// Also answer requests whose Host is NAME (the name a reverse proxy or a browser uses, e.g.
    /// dash.internal or dash.internal:443); repeatable. Loopback names and the bound address are
    /// always answered; any other Host is refused (421), so no DNS-rebinding page can read it.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
}

/// Runs `serve`.
///
/// # Errors
///
/// A usage error for an address that does not parse or no repository; a failure when the socket
/// cannot be bound or fails.
pub fn cmd_serve(binary: Binary, args: &ServeArgs) -> Result<Exit, CommandError> {
    // `localhost:<port>` is what people type: the loopback address it names here.
    let addr = match args.addr.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => args.addr.clone(),
    };
    if addr.parse::<std::net::SocketAddr>().is_err() {
        return Err(CommandError::usage(format!(
            "--addr {:?} is not an address and port such as {DEFAULT_ADDR} (or localhost:<port>)",
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
    let mut bound = Bound::bind(&addr).map_err(|e| {
        let in_use =
            matches!(&e, crate::serve::Error::Serve { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse);
        let e = CommandError::from(e);
        if in_use {
            e.hint("another process serves on that port: choose another with --addr 127.0.0.1:<port>")
        } else {
            e
        }
    })?;
    for name in &args.allow_host {
        bound.allow_host(name).map_err(CommandError::usage)?;
    }
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
