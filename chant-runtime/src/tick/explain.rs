//! `explain <tick-id>`: why one recorded tick did what it did, from the ledger and the
//! repository alone.
//!
//! For each outcome of the tick: the rule id, its `why` and its predicate (from the table
//! compiled into this binary; the record says when that table is not the one the tick ran), the
//! predicate's leaves with the values they read from the recorded symptom, the dispatched op and
//! the run record it wrote (a run of that op, for that resource, that started while the tick
//! ran), and the rule's source line (as the tick recorded it) with `git blame` of it: commit,
//! author, date and summary, at the commit the tick ran from (`gitSha`), or `HEAD` when that
//! commit is not in the repository.
//!
//! [`find`] looks a tick up by its id, or by a prefix of at least [`MIN_PREFIX`] characters (as
//! `operator log` shows it), streaming each op's records; a miss names each op's known range.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde::Serialize;

use crate::project::Project;
use crate::runner::RunRecord;
use chant_lexicon::model::{OpDocument, Rule, Source, Symptom};
use chant_store::git::blame::BlameLine;
use chant_store::ledger::{self, ShardKey, Visit};

use super::reading::{Leaf, dsl, read};
use super::record::{Action, Outcome, PlannedSymptom, TickRecord};

/// The shortest id prefix [`find`] accepts (what `operator log` shows).
pub const MIN_PREFIX: usize = 8;

/// The recorded ticks of one op, for a miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// The ConvergeOp.
    pub op: String,
    /// How many ticks it has recorded.
    pub count: u64,
    /// Its oldest tick: id and timestamp.
    pub first: Option<(String, String)>,
    /// Its newest tick: id and timestamp.
    pub last: Option<(String, String)>,
}

/// What [`find`] found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// One tick, of this op.
    Found(Box<TickRecord>, Box<OpDocument>),
    /// No tick has that id: each op's range.
    NotFound(Vec<Range>),
    /// A prefix that several ticks share: their ids.
    Ambiguous(Vec<String>),
}

/// Looks up the tick `id` (or id prefix) among the ticks of `docs`.
///
/// # Errors
///
/// Ledger errors.
pub fn find(ledger: &ledger::Ledger, docs: &[&OpDocument], id: &str) -> Result<Lookup, ledger::Error> {
    let prefix = id.chars().count() >= MIN_PREFIX;
    let mut found: Vec<(TickRecord, OpDocument)> = Vec::new();
    let mut ranges = Vec::new();
    for doc in docs {
        let key = ShardKey::converge(doc.member.as_deref(), doc.env.as_deref().unwrap_or_default(), &doc.name)?;
        let mut range = Range { op: doc.name.to_string(), count: 0, first: None, last: None };
        ledger.stream_typed::<TickRecord>(&key, None, |item| {
            if let Visit::Record(stored) = item {
                let r = stored.record;
                range.count += 1;
                let seen = Some((r.id.clone(), r.timestamp.clone()));
                if range.first.is_none() {
                    range.first.clone_from(&seen);
                }
                range.last = seen;
                if !r.id.is_empty() && (r.id == id || (prefix && r.id.starts_with(id))) {
                    found.push((r, (*doc).clone()));
                }
            }
            ControlFlow::Continue(())
        })?;
        ranges.push(range);
    }
    Ok(match found.len() {
        0 => Lookup::NotFound(ranges),
        1 => {
            let (record, doc) = found.remove(0);
            Lookup::Found(Box::new(record), Box::new(doc))
        }
        _ => Lookup::Ambiguous(found.into_iter().map(|(r, _)| r.id).collect()),
    })
}

/// Returns the newest recorded tick of the ConvergeOp `doc` (`None` when it has none), for
/// `explain <op>`.
///
/// # Errors
///
/// Ledger read errors, and an op whose env, member or name makes no ledger key.
pub fn newest(ledger: &ledger::Ledger, doc: &OpDocument) -> Result<Option<TickRecord>, ledger::Error> {
    let key = ShardKey::converge(doc.member.as_deref(), doc.env.as_deref().unwrap_or_default(), &doc.name)?;
    Ok(ledger.latest_typed::<TickRecord>(&key)?.record.map(|stored| stored.record))
}

/// The tick an explanation is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TickInfo {
    /// Its id.
    pub id: String,
    /// The ConvergeOp.
    pub op: String,
    /// The env.
    pub env: String,
    /// When it started.
    pub started_at: String,
    /// When it was recorded.
    pub timestamp: String,
    /// Its summary line.
    pub log: String,
    /// The commit the project was at.
    pub git_sha: Option<String>,
    /// The digest of the op.json it ran.
    pub op_digest: String,
    /// True when the table compiled into this binary is not the one the tick ran (the `why`
    /// and predicate shown are today's).
    pub table_changed: bool,
    /// Why the tick failed, when it did.
    pub error: Option<String>,
}

/// The run record a dispatch wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSeen {
    /// The run's id.
    pub id: String,
    /// `ok`, `failed`, `gated`.
    pub status: String,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// Why it failed.
    pub error: Option<String>,
}

/// One outcome, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explained {
    /// The rule.
    pub rule_id: String,
    /// The resource, in resource mode.
    pub resource: Option<String>,
    /// What happened.
    pub action: Action,
    /// The op a `run()` rule targets.
    pub op: Option<String>,
    /// The recorded reason.
    pub reason: Option<String>,
    /// The rule's `why`, from this binary's table (`None`: the rule is no longer in it).
    pub why: Option<String>,
    /// The rule's predicate, in the DSL's words.
    pub when: Option<String>,
    /// Each leaf of the predicate with the value it read from the recorded symptom.
    pub reads: Vec<Leaf>,
    /// The run record of the dispatch, when one was found.
    pub run: Option<RunSeen>,
    /// Where the rule was written, as the tick recorded it.
    pub source: Option<Source>,
    /// `git blame` of that line.
    pub blame: Option<BlameLine>,
    /// The revision blamed (`gitSha`, or `HEAD`).
    pub blamed_at: Option<String>,
    /// Why the line could not be blamed.
    pub blame_error: Option<String>,
}

/// A whole explanation, as `explain --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// The shape's version, 1.
    pub version: u32,
    /// The tick.
    pub tick: TickInfo,
    /// The symptom it planned from (absent in records older than symptoms on records).
    pub symptom: Option<PlannedSymptom>,
    /// One per outcome, in record order.
    pub outcomes: Vec<Explained>,
}

/// Explains `record`, a tick of `doc`.
///
/// # Errors
///
/// Ledger errors reading the run records.
pub fn explain(project: &Project, doc: &OpDocument, record: &TickRecord) -> Result<Explanation, ledger::Error> {
    let rules: &[Rule] = doc.converge.as_ref().map_or(&[], |c| c.rules.as_slice());
    let digest = super::execute::op_digest(doc).unwrap_or_default();
    let tick = TickInfo {
        id: record.id.clone(),
        op: record.op.clone(),
        env: record.env.clone(),
        started_at: record.started_at.clone(),
        timestamp: record.timestamp.clone(),
        log: record.log.clone(),
        git_sha: record.git_sha.clone(),
        op_digest: record.op_digest.clone(),
        table_changed: !record.op_digest.is_empty() && record.op_digest != digest,
        error: record.error.clone(),
    };
    let mut runs = Runs::new(project, doc, record);
    let mut blames = Blames::new(project, record.git_sha.as_deref());
    let mut outcomes = Vec::new();
    for o in &record.outcomes {
        let rule = rules.iter().find(|r| r.id == o.rule_id);
        let reads = match (rule, symptom_of(record, o)) {
            (Some(rule), Some(symptom)) => read(&rule.when, symptom),
            _ => Vec::new(),
        };
        let run = if dispatched(o) { runs.take(o)? } else { None };
        let (blame, blamed_at, blame_error) = match &o.source {
            Some(src) => blames.blame(src),
            None => (None, None, None),
        };
        outcomes.push(Explained {
            rule_id: o.rule_id.clone(),
            resource: o.resource.clone(),
            action: o.action,
            op: o.op.clone(),
            reason: o.reason.clone(),
            why: rule.map(|r| r.why.clone()),
            when: rule.map(|r| dsl(&r.when)),
            reads,
            run,
            source: o.source.clone(),
            blame,
            blamed_at,
            blame_error,
        });
    }
    Ok(Explanation { version: 1, tick, symptom: record.symptom.clone(), outcomes })
}

/// The symptom an outcome's rule read: the env's, or its resource's.
fn symptom_of<'a>(record: &'a TickRecord, o: &Outcome) -> Option<&'a dyn Symptom> {
    match record.symptom.as_ref()? {
        PlannedSymptom::Env(s) => Some(s),
        PlannedSymptom::Resources(rs) => {
            let r = rs.iter().find(|r| Some(&r.resource) == o.resource.as_ref())?;
            Some(r)
        }
    }
}

/// True when the outcome started a run: it ran, stopped at a gate, or its dispatch failed.
fn dispatched(o: &Outcome) -> bool {
    o.is_dispatch() || o.action == Action::Gated || o.dispatch_failed == Some(true)
}

/// The run records of the ops a tick dispatched, in its window, handed out in order.
struct Runs<'a> {
    project: &'a Project,
    doc: &'a OpDocument,
    record: &'a TickRecord,
    by_op: BTreeMap<String, Vec<RunRecord>>,
}

impl<'a> Runs<'a> {
    fn new(project: &'a Project, doc: &'a OpDocument, record: &'a TickRecord) -> Self {
        Runs { project, doc, record, by_op: BTreeMap::new() }
    }

    /// The first unclaimed run of the outcome's op and resource in the tick's window.
    fn take(&mut self, o: &Outcome) -> Result<Option<RunSeen>, ledger::Error> {
        let Some(op) = &o.op else { return Ok(None) };
        if !self.by_op.contains_key(op) {
            let runs = self.load(op)?;
            self.by_op.insert(op.clone(), runs);
        }
        let Some(runs) = self.by_op.get_mut(op) else { return Ok(None) };
        let Some(at) = runs.iter().position(|r| r.resource == o.resource) else { return Ok(None) };
        let r = runs.remove(at);
        Ok(Some(RunSeen {
            id: r.id,
            status: r.status.as_str().to_owned(),
            started_at: r.started_at,
            ended_at: r.ended_at,
            error: r.error,
        }))
    }

    /// Runs of `op` that started while the tick ran, oldest first. A run goes to its op's env,
    /// or to the dispatching tick's when the op has none.
    fn load(&self, op: &str) -> Result<Vec<RunRecord>, ledger::Error> {
        let target = self.project.catalog.get(op);
        let env = target.and_then(|t| t.env.as_deref()).map_or_else(|| self.record.env.clone(), str::to_owned);
        let member = target.map_or(self.doc.member.as_deref(), |t| t.member.as_deref());
        let key = ShardKey::run(member, Some(&env), op)?;
        let (from, to) =
            (chant_store::clock::parse(&self.record.started_at), chant_store::clock::parse(&self.record.timestamp));
        let mut out = Vec::new();
        self.project.ledger.stream_typed::<RunRecord>(&key, None, |item| {
            if let Visit::Record(stored) = item
                && let (Some(from), Some(to), Some(at)) =
                    (from, to, chant_store::clock::parse(&stored.record.started_at))
                && from <= at
                && at <= to
            {
                out.push(stored.record);
            }
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }
}

type Blamed = (Option<BlameLine>, Option<String>, Option<String>);

/// `git blame` of rule source lines, at the tick's commit (or `HEAD`), each line once.
struct Blames<'a> {
    project: &'a Project,
    sha: Option<&'a str>,
    seen: BTreeMap<(String, u32), Blamed>,
}

impl<'a> Blames<'a> {
    fn new(project: &'a Project, sha: Option<&'a str>) -> Self {
        Blames { project, sha, seen: BTreeMap::new() }
    }

    fn blame(&mut self, src: &Source) -> Blamed {
        let key = (src.file.clone(), src.line);
        if let Some(done) = self.seen.get(&key) {
            return done.clone();
        }
        let git = self.project.ledger.git();
        let mut revisions: Vec<&str> = self.sha.into_iter().collect();
        if self.project.ledger.repo().local().head_commit().is_none() {
            // A fresh `chant init` project before its first commit: nothing to blame at HEAD.
            if revisions.is_empty() {
                let why = format!("the repository has no commit yet: commit {} to see who wrote this rule", src.file);
                let done = (None, None, Some(why));
                self.seen.insert(key, done.clone());
                return done;
            }
        } else {
            revisions.push("HEAD");
        }
        let mut last_error = None;
        let mut done = None;
        for rev in revisions {
            match git.blame_line(rev, &src.file, src.line) {
                Ok(Ok(line)) => {
                    done = Some((Some(line), Some(rev.to_owned()), None));
                    break;
                }
                Ok(Err(refused)) => last_error = Some(format!("git blame at {rev}: {}", refused.0)),
                Err(e) => last_error = Some(format!("git blame at {rev}: {}", chant_store::error::chain(&e))),
            }
        }
        let done = done.unwrap_or((None, None, last_error.map(|e| self.project.redactor.record(&e))));
        self.seen.insert(key, done.clone());
        done
    }
}
