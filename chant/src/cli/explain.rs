//! `explain <tick-id> [--op <converge-op>] [--json]`: for each outcome of one recorded tick, the
//! rule, its `why`, the predicate with the symptom values it read, the dispatched op and its run
//! record, and the rule's source line with `git blame` of it ([`crate::tick::explain`]).
//!
//! The id may be a prefix of at least eight characters (as `operator log` shows it), or the name
//! of a ConvergeOp, which explains its newest tick (a name wins over an id it could also be the
//! prefix of). An id no tick has exits 2 naming each op's known range; a prefix several ticks
//! share exits 2 listing them.

use std::fmt::Write as _;

use clap::Args;

use super::error::{print, println};
use super::{Binary, CommandError, Exit};
use crate::model::OpDocument;
use crate::tick::explain::{Explanation, Lookup, MIN_PREFIX, explain, find, newest};

/// Explain one recorded tick: each outcome's rule, predicate readings, run and blamed source line
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The tick's id, a prefix of at least 8 characters, or a ConvergeOp's name for its newest
    /// tick.
    pub tick: String,
    /// Only look among this ConvergeOp's ticks.
    #[arg(long)]
    pub op: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `explain`.
///
/// # Errors
///
/// A [`CommandError`]: a usage error from the stock binary, for an unknown `--op`, an id no
/// tick has (naming each op's known range) or a prefix several ticks share; a failure when the
/// ledger cannot be read or stdout cannot be written.
pub fn cmd_explain(binary: Binary, args: &ExplainArgs) -> Result<Exit, CommandError> {
    if binary == Binary::Stock {
        return Err(CommandError::usage(format!(
            "the stock chant binary contains no rule tables, so it cannot explain a tick; use the project's own binary (`cargo run --bin <project-bin> -- explain {}`)",
            args.tick
        )));
    }
    let project = super::open_project()?;
    let docs: Vec<&OpDocument> = match &args.op {
        None => project.catalog.converge_ops().collect(),
        Some(op) => match project.catalog.get(op).filter(|d| d.is_converge()) {
            Some(doc) => vec![doc],
            None => {
                return Err(CommandError::usage(format!(
                    "no ConvergeOp named `{op}` is compiled into this binary (see `ops`)"
                )));
            }
        },
    };
    // `explain <op>`: a ConvergeOp's newest tick; an `op!` has no ticks to explain.
    if args.op.is_none()
        && let Some(doc) = project.catalog.get(&args.tick)
    {
        if !doc.is_converge() {
            return Err(CommandError::usage(format!(
                "`{}` is an `op!`, not a ConvergeOp: only a ConvergeOp's ticks are explained",
                args.tick
            )));
        }
        let Some(record) = newest(&project.ledger, doc)? else {
            return Err(CommandError::usage(format!("`{}` has no recorded tick yet", args.tick))
                .hint(format!("run one: `tick {}`", args.tick)));
        };
        return show(&project, &explain(&project, doc, &record)?, args.json);
    }
    let (record, doc) = match find(&project.ledger, &docs, &args.tick)? {
        Lookup::Found(record, doc) => (record, doc),
        Lookup::NotFound(ranges) => {
            let short = if args.tick.chars().count() < MIN_PREFIX {
                format!(" (a prefix needs at least {MIN_PREFIX} characters)")
            } else {
                String::new()
            };
            let mut error = CommandError::usage(format!("no recorded tick has the id {:?}{short}", args.tick));
            // A misspelt ConvergeOp name: the op meant.
            if let Some(meant) = crate::model::contract::did_you_mean(
                &args.tick,
                project.catalog.converge_ops().map(|d| d.name.as_str()),
            ) {
                error = error.hint(format!(
                    "did you mean the ConvergeOp `{meant}`? (`explain {meant}` explains its newest tick)"
                ));
            }
            for r in ranges {
                error = error.hint(match (&r.first, &r.last) {
                    (Some((first_id, first_at)), Some((last_id, last_at))) => format!(
                        "{}: {} tick(s), from {first_at} [{}] to {last_at} [{}]",
                        r.op,
                        r.count,
                        short_id(first_id),
                        short_id(last_id)
                    ),
                    _ => format!("{}: no ticks recorded", r.op),
                });
            }
            return Err(error);
        }
        Lookup::Ambiguous(ids) => {
            return Err(CommandError::usage(format!(
                "{} ticks have ids starting with {:?}: {}",
                ids.len(),
                args.tick,
                ids.join(", ")
            )));
        }
    };
    show(&project, &explain(&project, &doc, &record)?, args.json)
}

/// Prints `explanation`, as JSON when `json`, through the project's redactor.
fn show(project: &crate::project::Project, explanation: &Explanation, json: bool) -> Result<Exit, CommandError> {
    if json {
        let line = super::error::to_json(explanation, "the explanation")?;
        println(&project.redactor.redact(&line))?;
    } else {
        print(&project.redactor.redact(&render(explanation)))?;
    }
    Ok(Exit::Done)
}

fn short_id(id: &str) -> String {
    if id.is_empty() { "--------".to_owned() } else { id.chars().take(8).collect() }
}

/// Renders an explanation for a person.
pub fn render(x: &Explanation) -> String {
    let t = &x.tick;
    let mut s = String::new();
    let _ = writeln!(s, "tick {} of {}@{}, {} → {}", t.id, t.op, t.env, t.started_at, t.timestamp);
    let _ = writeln!(s, "  {}", t.log);
    if let Some(sha) = &t.git_sha {
        let _ = writeln!(s, "  ran from commit {sha}");
    }
    if t.table_changed {
        let _ = writeln!(
            s,
            "  the rule table compiled into this binary is not the one this tick ran ({}): why and when below are today's",
            t.op_digest
        );
    }
    if x.symptom.is_none() {
        let _ = writeln!(s, "  no symptom is recorded on this tick: predicates cannot be read back");
    }
    if let Some(e) = &t.error {
        let _ = writeln!(s, "  error: {e}");
    }
    if x.outcomes.is_empty() {
        let _ = writeln!(s, "  no rule fired");
    }
    for o in &x.outcomes {
        let res = o.resource.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let target = o.op.as_deref().map(|op| format!(" → {op}")).unwrap_or_default();
        let _ = writeln!(s, "\n{}{res}: {}{target}", o.rule_id, o.action.as_str());
        if let Some(reason) = &o.reason {
            let _ = writeln!(s, "  reason: {reason}");
        }
        match (&o.why, &o.when) {
            (Some(why), Some(when)) => {
                let _ = writeln!(s, "  why: {why}");
                let _ = writeln!(s, "  when: {when}");
            }
            _ => {
                let _ = writeln!(s, "  the rule is no longer in the table compiled into this binary");
            }
        }
        for leaf in &o.reads {
            let holds = if leaf.holds { "holds" } else { "does not hold" };
            let _ = writeln!(s, "    {} read {} = {}: {holds}", leaf.predicate, leaf.field, leaf.read);
        }
        if let Some(run) = &o.run {
            let err = run.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            let _ = writeln!(s, "  run: {} {}, {} → {}{err}", run.id, run.status, run.started_at, run.ended_at);
        }
        if let Some(src) = &o.source {
            let _ = writeln!(s, "  source: {}:{}", src.file, src.line);
        }
        match (&o.blame, &o.blame_error) {
            (Some(b), _) => {
                let _ = writeln!(
                    s,
                    "  blame ({}): {} {} <{}> {} {:?}",
                    o.blamed_at.as_deref().unwrap_or("HEAD"),
                    b.commit,
                    b.author,
                    b.author_mail,
                    b.date,
                    b.summary
                );
                let _ = writeln!(s, "    {}", b.text.trim());
            }
            (None, Some(e)) => {
                let _ = writeln!(s, "  blame: {e}");
            }
            (None, None) => {}
        }
    }
    s
}
