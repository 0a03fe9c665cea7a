//! `graph <env> [--live] [--json | --dot | --mermaid]`: the env's estate as a graph
//! ([`crate::graph`]).
//!
//! With `--live` the nodes are what the env's lexicons observe and the edges are rebuilt through
//! their reference catalogs; without it, the declared entities and the declared references, so
//! the two can be drawn side by side. References whose target no node answers to are listed as
//! dangling and never drawn. Output is text for a person, one JSON document on one line
//! (`--json`), Graphviz DOT (`--dot`, containment as clusters) or a Mermaid flowchart
//! (`--mermaid`, containment as subgraphs). Everything printed goes through the project's
//! redactor.

use clap::Args;

use super::error::println;
use super::lifecycle::{check_declared, member_of};
use super::{Binary, CommandError, Exit};
use crate::graph::{self, Graph};

/// Draw an env's estate as a graph
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The env.
    pub env: String,
    /// Draw the live estate (nodes observed, edges rebuilt from identifiers); without it, the
    /// declared graph.
    #[arg(long)]
    pub live: bool,
    /// Print one JSON document on one line.
    #[arg(long, conflicts_with_all = ["dot", "mermaid"])]
    pub json: bool,
    /// Print Graphviz DOT (containment as clusters).
    #[arg(long, conflicts_with = "mermaid")]
    pub dot: bool,
    /// Print a Mermaid flowchart (containment as subgraphs).
    #[arg(long)]
    pub mermaid: bool,
}

/// Builds the graph `args` asks for.
///
/// # Errors
///
/// A usage error for an env this binary does not declare; a failure when the project or a
/// declaration cannot be read.
pub fn build(binary: Binary, env: &str, live: bool) -> Result<(Graph, crate::project::Project), CommandError> {
    crate::model::Name::parse("env name", env)?;
    let command = format!("graph {env}{}", if live { " --live" } else { "" });
    stock_refusal(binary, env, &command)?;
    check_declared(binary, env)?;
    let project = super::open_project()?;
    let member = member_of(&project, env);
    let lexicons =
        project.lexicons(member.as_deref(), env).map_err(|e| CommandError::from(e).redact(&project.redactor))?;
    let graph = if live { graph::live(env, &lexicons) } else { graph::declared(env, &lexicons) };
    let graph = graph.map_err(|e| CommandError::failed(e).redact(&project.redactor))?;
    Ok((graph, project))
}

/// Refuses the stock binary, which carries no env declarations, pointing at the project's own
/// binary running `command` (`graph prod --live`).
///
/// # Errors
///
/// A usage error when `binary` is the stock one.
pub fn stock_refusal(binary: Binary, env: &str, command: &str) -> Result<(), CommandError> {
    if binary != Binary::Stock {
        return Ok(());
    }
    Err(CommandError::usage(format!(
        "the stock chant binary carries no env declarations, so it cannot draw or predict env `{env}`; use the project's own binary (`cargo run --bin <project-bin> -- {command}`)"
    )))
}

/// Runs `graph`.
pub fn cmd_graph(binary: Binary, args: &GraphArgs) -> Result<Exit, CommandError> {
    let (graph, project) = build(binary, &args.env, args.live)?;
    let text = if args.json {
        super::error::to_json(&graph, "the graph")?
    } else if args.dot {
        graph::render_dot(&graph).trim_end().to_owned()
    } else if args.mermaid {
        graph::render_mermaid(&graph).trim_end().to_owned()
    } else {
        graph::render_text(&graph).join("\n")
    };
    println(&project.redactor.redact(&text))?;
    Ok(Exit::Done)
}
