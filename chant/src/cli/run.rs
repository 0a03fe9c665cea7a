//! `run <op>` and `tick <converge-op>`.

use clap::Args;

use super::{Binary, Exit};

/// Run an op once
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The op's name.
    pub op: String,
    /// Print the run record as one JSON line on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Run one tick of a ConvergeOp
#[derive(Debug, Args)]
pub struct TickArgs {
    /// The ConvergeOp's name.
    pub op: String,
    /// Print the tick record as one JSON line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not take the op's lease.
    #[arg(long)]
    pub no_lease: bool,
}

impl TickArgs {
    /// Returns the arguments of a bare invocation of `chant::main!(default = tick("x"))`.
    pub fn for_op(op: &str) -> Self {
        TickArgs { op: op.to_owned(), json: false, no_lease: false }
    }
}

/// Runs `run`.
pub fn cmd_run(binary: Binary, args: &RunArgs) -> Exit {
    not_here(binary, "run", &args.op)
}

/// Runs `tick`.
pub fn cmd_tick(binary: Binary, args: &TickArgs) -> Exit {
    not_here(binary, "tick", &args.op)
}

fn not_here(binary: Binary, verb: &str, op: &str) -> Exit {
    if crate::registry::find(op).is_none() {
        match binary {
            Binary::Stock => eprintln!(
                "error: the stock chant binary contains no ops, so it cannot {verb} `{op}`; use the project's own binary (`cargo run --bin <project-bin> -- {verb} {op}`)"
            ),
            Binary::Project => {
                let names: Vec<&str> = crate::registry::ops().iter().map(|o| o.name).collect();
                let hint = crate::model::contract::did_you_mean(op, names.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                eprintln!("error: no op named `{op}` is compiled into this binary{hint} (see `ops`)");
            }
        }
        return Exit::Usage;
    }
    eprintln!("error: `{verb}` is not available in this version of chant yet (it arrives with the tick runner)");
    Exit::Usage
}
