//! `operator log`: the history behind `operator status`, from the ledger alone.
//!
//! One timeline, oldest first, merging every tick of the ConvergeOps covered, the run records of
//! the ops their ticks dispatched (in the same env), the gate resolutions recorded against
//! those ops and the ConvergeOps themselves, and the notification records of the ConvergeOps
//! (what the operator sent for a tick, and whether each sink took it). Entries sort by time;
//! ties keep the order tick, run, gate resolution, notification, and ledger order within a kind. `--since` (inclusive) filters first, then
//! `--limit` keeps the newest n, still printed oldest first. With either, each key is read
//! newest shard first and only as far back as the filter can reach, so `--limit 50` costs the
//! same at the millionth record as at the thousandth. `--json` prints [`Timeline`], one
//! stable shape with the unreadable lines counted per kind.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::ControlFlow;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use crate::gate::GateFact;
use crate::notification::NotifyRecord;
use crate::runner::RunRecord;
use crate::terminal::printable;
use crate::tick::{Outcome, TickRecord};
use chant_store::ledger::{Ledger, RECORDS_PER_SHARD, ShardKey, Stored, Unreadable, Visit};

use super::Error;
use super::status::{GateReader, Malformed, OpRef, is_resolution};

/// Which entries to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Entries at or after this instant.
    pub since: Option<Timestamp>,
    /// Only the newest n.
    pub limit: Option<usize>,
}

/// The kind of a timeline entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A tick record.
    Tick,
    /// A run record of a dispatched op.
    Run,
    /// A gate resolution.
    GateResolution,
    /// A notification record: the events sent for a tick, and each sink's delivery.
    Notification,
    /// A person's decision about the op: `operator suspend`, `resume` or `undamp`.
    Control,
}

/// One entry of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// When: a tick's `timestamp`, a run's `endedAt`, a resolution's `timestamp`.
    pub timestamp: String,
    /// The op the record belongs to.
    pub op: String,
    /// The env.
    pub env: String,
    /// The workspace member, `null` in a flat project.
    pub member: Option<String>,
    /// The record, as stored.
    pub record: Value,
    /// The record, decoded.
    #[serde(skip)]
    pub read: Read,
}

/// A timeline entry's record, decoded: what the human rendering reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// A tick record.
    Tick(Box<TickRecord>),
    /// A run record.
    Run(Box<RunRecord>),
    /// A gate resolution.
    Gate(Box<GateFact>),
    /// A notification record.
    Notification(Box<NotifyRecord>),
    /// A control fact.
    Control(Box<crate::tick::control::ControlFact>),
}

/// The whole `operator log` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// The shape's version, 1.
    pub version: u32,
    /// The entries, oldest first.
    pub entries: Vec<Entry>,
    /// Unreadable ledger lines met.
    pub malformed: Malformed,
}

/// Builds the timeline of `ops`.
///
/// Without a filter every record is read. With `--limit` or `--since`, each key is read newest
/// first, one shard at a time, and reading it stops at the end of the shard in which it reached
/// `limit` records at or after `since`, or met a record older than `since` (`window`): the
/// cost follows the limit, not the history. The unreadable lines counted are then those of the
/// shards read.
///
/// # Errors
///
/// Ledger errors.
pub fn timeline(ledger: &Ledger, ops: &[OpRef], filter: &Filter) -> Result<Timeline, Error> {
    let mut malformed = Malformed::default();
    // The original's converge file is shared by every op of an env: count each bad line once.
    let mut bad_lines: BTreeSet<(String, usize)> = BTreeSet::new();
    let mut entries: Vec<(Option<Timestamp>, Entry)> = Vec::new();
    let mut run_keys: BTreeSet<(Option<String>, String, String)> = BTreeSet::new();
    let mut gate_ops: BTreeSet<(Option<String>, String, String)> = BTreeSet::new();
    for r in ops {
        let key = ShardKey::converge(r.member.as_deref(), &r.env, &r.op)?;
        let (records, unreadable) = window::<TickRecord>(ledger, &key, filter, |t| &t.timestamp)?;
        bad_lines.extend(unreadable.iter().map(|u| (u.path.clone(), u.line)));
        gate_ops.insert((r.member.clone(), r.env.clone(), r.op.clone()));
        for stored in records {
            let tick = stored.record;
            if tick.timestamp.is_empty() {
                malformed.converge += 1;
                continue;
            }
            for target in tick.outcomes.iter().filter_map(|o| o.op.as_deref()) {
                run_keys.insert((r.member.clone(), r.env.clone(), target.to_owned()));
                gate_ops.insert((r.member.clone(), r.env.clone(), target.to_owned()));
            }
            entries.push(entry(Read::Tick(Box::new(tick)), &r.op, &r.env, &r.member, stored.value));
        }
        let key = ShardKey::notify(r.member.as_deref(), &r.env, &r.op)?;
        let (records, unreadable) = window::<NotifyRecord>(ledger, &key, filter, |n| &n.timestamp)?;
        malformed.notifications += unreadable.len();
        for stored in records {
            entries.push(entry(Read::Notification(Box::new(stored.record)), &r.op, &r.env, &r.member, stored.value));
        }
        let key = ShardKey::control(r.member.as_deref(), &r.env, &r.op)?;
        let (records, unreadable) =
            window::<crate::tick::control::ControlFact>(ledger, &key, filter, |c| &c.timestamp)?;
        malformed.converge += unreadable.len();
        for stored in records {
            entries.push(entry(Read::Control(Box::new(stored.record)), &r.op, &r.env, &r.member, stored.value));
        }
    }
    for (member, env, op) in &run_keys {
        let Ok(key) = ShardKey::run(member.as_deref(), Some(env), op) else { continue };
        let (records, unreadable) = window::<RunRecord>(ledger, &key, filter, |r| &r.ended_at)?;
        malformed.runs += unreadable.len();
        for stored in records {
            entries.push(entry(Read::Run(Box::new(stored.record)), op, env, member, stored.value));
        }
    }
    let mut gates = GateReader::new(ledger);
    for (member, env, op) in &gate_ops {
        let Ok(facts) = gates.facts(member.as_deref(), op) else { continue };
        for fact in facts.iter().filter(|f| is_resolution(f) && f.in_env(env)) {
            let record = serde_json::to_value(fact).unwrap_or(Value::Null);
            entries.push(entry(Read::Gate(Box::new(fact.clone())), op, env, member, record));
        }
    }
    malformed.gates = gates.unreadable;
    malformed.converge += bad_lines.len();
    entries.sort_by(|(ta, a), (tb, b)| ta.cmp(tb).then(a.kind.cmp(&b.kind)));
    if let Some(since) = filter.since {
        entries.retain(|(t, _)| t.is_some_and(|t| t >= since));
    }
    if let Some(limit) = filter.limit {
        let skip = entries.len().saturating_sub(limit);
        entries.drain(..skip);
    }
    Ok(Timeline { version: 1, entries: entries.into_iter().map(|(_, e)| e).collect(), malformed })
}

impl Read {
    /// The kind of entry the record makes.
    fn kind(&self) -> EntryKind {
        match self {
            Read::Tick(_) => EntryKind::Tick,
            Read::Run(_) => EntryKind::Run,
            Read::Gate(_) => EntryKind::GateResolution,
            Read::Notification(_) => EntryKind::Notification,
            Read::Control(_) => EntryKind::Control,
        }
    }

    /// When it happened: a tick's `timestamp`, a run's `endedAt`, a resolution's or a
    /// notification's `timestamp`.
    fn timestamp(&self) -> &str {
        match self {
            Read::Tick(t) => &t.timestamp,
            Read::Run(r) => &r.ended_at,
            Read::Gate(f) => &f.timestamp,
            Read::Notification(n) => &n.timestamp,
            Read::Control(c) => &c.timestamp,
        }
    }
}

/// The timeline entry of `op` in `env` for a decoded record (`record` as stored), with the
/// instant it sorts by; its kind and time come from the record.
fn entry(read: Read, op: &str, env: &str, member: &Option<String>, record: Value) -> (Option<Timestamp>, Entry) {
    let timestamp = read.timestamp().to_owned();
    let at = chant_store::clock::parse(&timestamp);
    let kind = read.kind();
    (at, Entry { kind, timestamp, op: op.to_owned(), env: env.to_owned(), member: member.clone(), record, read })
}

/// The newest `limit` tick records of `op`, oldest first, for a chart of its recent history.
///
/// Reads the op's converge key newest first and stops at the end of the shard in which it has
/// `limit` records (as [`timeline`] does with `--limit`): the cost follows `limit`, not the
/// history. Lines that cannot be read and records without a timestamp are skipped (the timeline
/// counts them as malformed).
///
/// # Errors
///
/// Ledger errors, and a name that cannot make a key.
pub fn newest_ticks(ledger: &Ledger, op: &OpRef, limit: usize) -> Result<Vec<TickRecord>, Error> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let key = ShardKey::converge(op.member.as_deref(), &op.env, &op.op)?;
    let filter = Filter { since: None, limit: Some(limit) };
    let (records, _) = window::<TickRecord>(ledger, &key, &filter, |t| &t.timestamp)?;
    let ticks: Vec<TickRecord> = records.into_iter().map(|s| s.record).filter(|t| !t.timestamp.is_empty()).collect();
    let skip = ticks.len().saturating_sub(limit);
    Ok(ticks.into_iter().skip(skip).collect())
}

/// The records of `key` the filtered timeline can show, oldest first, and the unreadable lines
/// met. Without a filter: every record. With one: newest first, shard by shard, up to the end of
/// the shard in which the key reached `filter.limit` records at or after `filter.since`, or met a
/// record (with a readable `stamp`) older than `filter.since`. One key's records are appended in
/// time order, so an older shard holds no record the timeline would keep (a clock that ran
/// backwards by more than a shard's span is the exception, and `operator log` without a filter
/// shows everything).
fn window<R: chant_store::ledger::Record>(
    ledger: &Ledger,
    key: &ShardKey,
    filter: &Filter,
    stamp: impl Fn(&R) -> &str,
) -> Result<(Vec<Stored<R>>, Vec<Unreadable>), Error> {
    if filter.limit.is_none() && filter.since.is_none() {
        let all = ledger.read_typed::<R>(key)?;
        return Ok((all.records, all.unreadable));
    }
    let mut records = Vec::new();
    let mut unreadable = Vec::new();
    let mut kept = 0_usize;
    // The shard (`None`: the original's file) in which the window was full, once it was.
    let mut last_shard: Option<Option<u64>> = None;
    ledger.stream_newest_typed::<R>(key, |visit| match visit {
        Visit::Unreadable(u) => {
            unreadable.push(u);
            ControlFlow::Continue(())
        }
        Visit::Record(stored) => {
            let shard = stored.seq.map(|seq| seq / RECORDS_PER_SHARD);
            if last_shard.is_some_and(|full| full != shard) {
                return ControlFlow::Break(());
            }
            let at = chant_store::clock::parse(stamp(&stored.record));
            let older = matches!((filter.since, at), (Some(since), Some(at)) if at < since);
            if !older {
                kept += 1;
            }
            if last_shard.is_none() && (older || filter.limit.is_some_and(|limit| kept >= limit)) {
                last_shard = Some(shard);
            }
            records.push(stored);
            ControlFlow::Continue(())
        }
    })?;
    records.reverse();
    unreadable.reverse();
    Ok((records, unreadable))
}

/// Renders the timeline for a human: one line per entry (two spaces between fields), each tick
/// followed by one line per outcome with its rule's source line.
pub fn render(timeline: &Timeline) -> String {
    let p = printable;
    let mut s = String::new();
    for e in &timeline.entries {
        let (at, op, env) = (p(&e.timestamp), p(&e.op), p(&e.env));
        match &e.read {
            Read::Tick(tick) => {
                let _ = writeln!(s, "{at}  {op}@{env}  [{}]  {}", p(&short_id(&tick.id)), p(&tick.log));
                if let Some(err) = &tick.error {
                    let _ = writeln!(s, "    error  {}", p(err));
                }
                // A text file's content is said by its text change below, not by two digests.
                let texts = |path: &crate::tick::DriftedPath| {
                    tick.text_changes.iter().flatten().any(|t| t.component == path.component && t.name == path.entity)
                };
                for path in tick.drifted_paths.iter().flatten().filter(|d| d.path != "content" || !texts(d)) {
                    let _ = writeln!(s, "    drifted  {}", p(&path.line()));
                }
                // A text change as text, as `lifecycle diff` shows it: live `-`, declared `+`.
                for t in tick.text_changes.iter().flatten() {
                    let _ = writeln!(s, "    text  {}/{}", p(&t.component), p(&t.name));
                    for line in t.diff.lines() {
                        let _ = writeln!(s, "      {}", p(line));
                    }
                }
                for o in &tick.outcomes {
                    let _ = writeln!(s, "    {}", outcome_line(o));
                }
            }
            Read::Run(run) => {
                let _ = writeln!(
                    s,
                    "{at}  {op}@{env}  [{}]  run {} phases={} steps={}",
                    p(&short_id(&run.id)),
                    run.status.as_str(),
                    run.phases.len(),
                    run.outcomes.len()
                );
            }
            Read::Gate(fact) => {
                let url = fact.url.as_deref().map(|u| format!("  {}", p(u))).unwrap_or_default();
                let by = p(fact.resolved_by.as_deref().unwrap_or("unknown"));
                let _ = writeln!(s, "{at}  gate-resolved  {op}/{} by {by}{url}", p(&fact.gate));
            }
            Read::Notification(sent) => {
                let events: Vec<&str> = sent.events.iter().map(|e| e.event.as_str()).collect();
                let _ =
                    writeln!(s, "{at}  {op}@{env}  [{}]  notified {}", p(&short_id(&sent.tick_id)), events.join(", "));
                for d in &sent.sinks {
                    let result = match &d.error {
                        _ if d.ok => "delivered".to_owned(),
                        Some(error) => format!("not delivered: {}", p(error)),
                        None => "not delivered".to_owned(),
                    };
                    let _ = writeln!(s, "    {}  {}  {result}", d.event.as_str(), p(&d.sink));
                }
            }
            Read::Control(fact) => {
                let what = match (fact.kind.as_str(), &fact.rule, &fact.reason, &fact.until) {
                    ("suspend", _, reason, until) => format!(
                        "suspended: {}{}",
                        p(reason.as_deref().unwrap_or("no reason given")),
                        until.as_deref().map(|u| format!(", until {}", p(u))).unwrap_or_default()
                    ),
                    ("resume", ..) => "resumed".to_owned(),
                    ("undamp", Some(rule), ..) => format!("undamped rule {}", p(rule)),
                    ("undamp", None, ..) => "undamped every rule".to_owned(),
                    (other, ..) => p(other).to_string(),
                };
                let _ = writeln!(s, "{at}  {op}@{env}  {what} by {}", p(&fact.by));
            }
        }
    }
    s
}

/// The first eight characters of a record id, or dashes for a record without one (the
/// original's records before ids existed).
fn short_id(id: &str) -> String {
    if id.is_empty() { "--------".to_owned() } else { id.chars().take(8).collect() }
}

fn outcome_line(o: &Outcome) -> String {
    let p = printable;
    let mut line = format!("{}  {}", o.action.as_str(), p(&o.rule_id));
    if let Some(res) = &o.resource {
        let _ = write!(line, " [{}]", p(res));
    }
    if !o.entities.is_empty() {
        let names: Vec<String> = o.entities.iter().map(|n| p(n).to_string()).collect();
        let _ = write!(line, " [{}]", names.join(", "));
    }
    if let Some(op) = &o.op {
        let _ = write!(line, " → {}", p(op));
    }
    if let Some(g) = &o.gate_name {
        let _ = write!(line, " gate \"{}\"", p(g));
    }
    if let Some(reason) = &o.reason {
        let _ = write!(line, ": {}", p(reason));
    }
    if let Some(src) = &o.source {
        let _ = write!(line, "  ({}:{})", p(&src.file), src.line);
    }
    if let Some(u) = &o.url {
        let _ = write!(line, "  {}", p(u));
    }
    line
}
