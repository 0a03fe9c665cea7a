//! `replay <converge-op> [--since T] [--limit N] [--json] [--rules <op.json>]`: re-decide the
//! op's recorded ticks with the rule table compiled into this binary (or one from a file), oldest
//! first, and print every tick whose decisions differ, with a summary.
//!
//! The records are streamed one shard at a time ([`crate::ledger::Ledger::stream_typed`]), so
//! memory does not grow with history; only the differing ticks are kept, for `--json`.
//! `--limit N` replays the newest N of chant's own records (the one before them anchors the flap
//! runs); `--since` replays the records recorded at or after T (earlier ones anchor). A table
//! from `--rules` is checked by the same validation as `ops check`, together with the other ops
//! of this binary (its `run()` targets): a refused table exits 1 with the messages `ops check`
//! prints. Exit 0 when the replay ran, whatever it found.

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::error::{print, println};
use super::{Binary, CommandError, Exit};
use crate::ledger::{ShardKey, Visit};
use crate::model::{ClassKind, OpDocument};
use crate::tick::TickRecord;
use crate::tick::replay::{Decision, Replayer, Table, TickDiff, Totals, Verdict};

/// Replay recorded ticks of a ConvergeOp against a rule table
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The ConvergeOp whose recorded ticks are replayed.
    pub op: String,
    /// Only ticks recorded at or after this RFC 3339 instant (2026-08-25T00:00:00Z).
    #[arg(long)]
    pub since: Option<String>,
    /// Only the newest N recorded ticks.
    #[arg(long)]
    pub limit: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Replay the rule table of this op.json file (an export of another build) instead of the
    /// one compiled into this binary.
    #[arg(long, value_name = "OP_JSON")]
    pub rules: Option<PathBuf>,
}

/// The `replay --json` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    version: u32,
    op: &'a str,
    env: &'a str,
    /// `compiled`, or the path of the `--rules` file.
    table: String,
    /// The digest of the op.json whose table was replayed.
    op_digest: String,
    ticks: Vec<TickDiff>,
    summary: Totals,
    /// Lines of the op's history that are not tick records.
    unreadable: u64,
}

/// Runs `replay`.
///
/// # Errors
///
/// A [`CommandError`]: a usage error for a malformed `--since` or `--limit`, an op that is not a
/// ConvergeOp of this binary, or a `--rules` file that is not its table; a failure when the
/// ledger cannot be read or stdout cannot be written.
pub fn cmd_replay(binary: Binary, args: &ReplayArgs) -> Result<Exit, CommandError> {
    let since = match args.since.as_deref() {
        None => None,
        Some(s) => {
            let now = crate::clock::Clock::from_env()?.now();
            Some(crate::clock::parse_since(s, now).ok_or_else(|| {
                CommandError::usage(format!(
                    "--since must be an RFC 3339 instant such as 2026-08-25T00:00:00Z or a time ago such as 1h, 30m, 2d (got {s:?})"
                ))
            })?)
        }
    };
    let limit = match args.limit.as_deref() {
        None => None,
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(CommandError::usage(format!("--limit must be a positive integer (got {text:?})"))),
        },
    };
    let (project, doc) = super::run::open(binary, "replay", &args.op)?;
    if !doc.is_converge() {
        return Err(CommandError::usage(format!("`{}` is not a ConvergeOp: only ticks are replayed", doc.name)));
    }
    let (table_doc, others) = match &args.rules {
        None => (doc.clone(), project.catalog.ops().cloned().collect::<Vec<_>>()),
        Some(path) => match from_file(&doc, path)? {
            Some(x) => x,
            None => return Ok(Exit::Failed),
        },
    };
    let Some(spec) = &table_doc.converge else {
        return Err(CommandError::usage(format!("`{}` is not a ConvergeOp", table_doc.name)));
    };
    let class_of =
        |name: &str| -> Option<ClassKind> { others.iter().find(|d| d.name == name).map(OpDocument::folded_class) };
    let table = Table {
        rules: &spec.rules,
        dial: spec.dial,
        budget: spec.budget,
        resource_mode: spec.observe.is_some(),
        class_of: &class_of,
    };
    let env = doc.env.as_deref().unwrap_or_default().to_owned();
    let key = ShardKey::converge(doc.member.as_deref(), &env, &doc.name)?;
    // --limit: start at the record before the newest N (it anchors the flap runs).
    let (from, anchor_seq) = match limit {
        None => (None, None),
        Some(n) => match project.ledger.sharded_len(&key)? {
            len if n < len => (Some(len - n - 1), Some(len - n - 1)),
            _ => (None, None),
        },
    };
    let table_name = args.rules.as_ref().map_or_else(|| "compiled".to_owned(), |p| p.display().to_string());
    let digest = crate::tick::execute::op_digest(&table_doc).unwrap_or_default();
    if !args.json {
        let what = match &args.rules {
            None => "the rule table compiled into this binary".to_owned(),
            Some(p) => format!("the rule table of {}", p.display()),
        };
        println(&format!("replay {}@{env} with {what} ({digest})", doc.name))?;
    }
    let mut replayer = Replayer::new(table);
    let mut diffs: Vec<TickDiff> = Vec::new();
    let mut unreadable = 0u64;
    let mut written: Result<(), CommandError> = Ok(());
    project.ledger.stream_typed::<TickRecord>(&key, from, |item| {
        match item {
            Visit::Unreadable(u) => {
                unreadable += 1;
                replayer.gap();
                eprintln!("warning: unreadable ledger line {}:{} ({}), not replayed", u.path, u.line, u.reason);
            }
            Visit::Record(stored) => {
                let record = stored.record;
                let before = since.is_some_and(|t| crate::clock::parse(&record.timestamp).is_none_or(|at| at < t));
                if (anchor_seq.is_some() && stored.seq == anchor_seq) || before {
                    replayer.anchor(&record);
                } else if let Verdict::Differs(diff) = replayer.replay(&record) {
                    if args.json {
                        diffs.push(diff);
                    } else if let Err(e) = print(&render(&diff)) {
                        written = Err(e);
                        return ControlFlow::Break(());
                    }
                }
            }
        }
        ControlFlow::Continue(())
    })?;
    written?;
    let totals = replayer.totals();
    if args.json {
        let report = Report {
            version: 1,
            op: &doc.name,
            env: &env,
            table: table_name,
            op_digest: digest,
            ticks: diffs,
            summary: totals,
            unreadable,
        };
        let line = super::error::to_json(&report, "the replay")?;
        println(&line)?;
    } else {
        println(&totals.line(&doc.name))?;
    }
    if totals.ticks == 0 {
        eprintln!("warning: no tick of {} is recorded in this window", doc.name);
    }
    Ok(Exit::Done)
}

/// Reads and validates the `--rules` file, together with this binary's other ops (its `run()`
/// targets), as `ops check` would; returns its document and the set its targets resolve in, or
/// `None` after printing the problems `ops check` prints.
fn from_file(doc: &OpDocument, path: &std::path::Path) -> Result<Option<(OpDocument, Vec<OpDocument>)>, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::usage_with(format!("cannot read {}", path.display()), e))?;
    let origin = path.display().to_string();
    let named = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("name").and_then(serde_json::Value::as_str).map(str::to_owned));
    if let Some(name) = named.filter(|n| *n != *doc.name) {
        return Err(CommandError::usage(format!(
            "{} holds the op `{name}`, not the ConvergeOp `{}` whose ticks are replayed",
            path.display(),
            doc.name
        )));
    }
    let others: Vec<(String, &str)> = crate::registry::ops()
        .into_iter()
        .filter(|o| o.name != &*doc.name)
        .map(|o| (format!("embedded:{}/{}", o.krate, o.name), o.json))
        .collect();
    let inputs = std::iter::once((origin.as_str(), text.as_str())).chain(others.iter().map(|(o, t)| (o.as_str(), *t)));
    let report = crate::model::validate::check_set(inputs);
    if !report.is_valid() {
        for p in &report.problems {
            eprintln!("error: {p}");
        }
        eprintln!("{} problem(s) in 1 op.json file(s)", report.problems.len());
        return Ok(None);
    }
    let mut docs: Vec<OpDocument> = report.documents.into_iter().map(|(_, d)| d).collect();
    let table = docs.remove(0);
    if table.converge.is_none() {
        return Err(CommandError::usage(format!(
            "{} holds the op `{}`, which is not a ConvergeOp",
            path.display(),
            table.name
        )));
    }
    if table.converge.as_ref().map(|c| c.observe.is_some()) != doc.converge.as_ref().map(|c| c.observe.is_some()) {
        return Err(CommandError::usage(format!(
            "the table of {} reads another symptom than the ticks of `{}` record: one has `observe:` and the other has not",
            path.display(),
            doc.name
        )));
    }
    docs.push(table.clone());
    Ok(Some((table, docs)))
}

/// One differing tick, for a person: a header line, then one line per rule.
fn render(diff: &TickDiff) -> String {
    let id: String = if diff.id.is_empty() { "--------".into() } else { diff.id.chars().take(8).collect() };
    let mut s = format!(
        "{}  [{id}]  differs: dispatches +{} -{}\n",
        diff.timestamp, diff.dispatches_added, diff.dispatches_removed
    );
    for d in &diff.differences {
        let res = d.resource.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let _ = writeln!(
            s,
            "    {}{res}: recorded {}, replayed {}",
            d.rule_id,
            decision(d.recorded.as_ref()),
            decision(d.replayed.as_ref())
        );
    }
    s
}

fn decision(d: Option<&Decision>) -> String {
    match d {
        None => "not fired".to_owned(),
        Some(d) => match (&d.op, d.dispatched()) {
            (Some(op), true) => format!("ran → {op}"),
            _ => d.action.as_str().to_owned(),
        },
    }
}
