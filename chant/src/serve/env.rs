//! The env page, `/envs/{env}`: every resource of an env, one row each (lexicon, kind, name,
//! [`Verdict`], owner, what differs), linked to its line of the live diff page.
//!
//! Tick records do not keep per-resource verdicts (keeping them would grow every ledger record by
//! the size of the env), so the rows are built from a live observation: the same
//! [`crate::diff::diff_of`] document `lifecycle diff <env> --live --json` prints, over the
//! assessment a tick decides on ([`crate::project::Project::assess_deep`], whose deep verdict
//! says which entries sit at an accepted baseline value). The header shows the last tick's
//! health and age, read from the ledger.
//!
//! Observing waits on the env's substrate, so it never runs on the reading pool and never makes a
//! page wait long ([`Observations`]):
//!
//! - each env has at most one observation running; it runs on a thread of its own and takes one
//!   of the live-diff slots ([`super::diff::MAX_LIVE_DIFFS`] at once, shared with
//!   `/envs/{env}/diff`);
//! - its result is kept for [`FRESH_FOR`]: every page and JSON client asking within that time
//!   gets the same observation (the page says how old it is);
//! - an HTML request waits at most [`PAGE_WAIT`] for a running observation, then answers a page
//!   saying "observing since N s" (the previous observation below it, when there is one) that
//!   reloads itself every [`PROGRESS_REFRESH_SECS`] s; a JSON request waits at most
//!   [`super::diff::LIVE_DIFF_WAIT`] (then 504), as the diff page does;
//! - the page with its rows reloads itself every [`REFRESH_SECS`] s.
//!
//! An unobserved resource is always shown as `unobserved` with its reason, never as missing.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::health::Health;
use super::routes::{bad_request, error_response, html_response, json_response, now_text, wants_json};
use super::{Dashboard, Error, html, view};
use crate::diff::Diff;
use crate::observe::deep::ComponentDeep;
use crate::observe::{ChangeAction, ChangeEntry, unobserved_by_cause, unobserved_cause};

/// How long an observation is reused before the next request observes again.
pub const FRESH_FOR: Duration = Duration::from_secs(15);

/// How long an HTML request waits for a running observation before answering the progress page.
pub const PAGE_WAIT: Duration = Duration::from_secs(2);

/// How often the env page with its rows reloads itself, in seconds.
pub const REFRESH_SECS: u32 = 30;

/// How often the progress page reloads itself, in seconds.
pub const PROGRESS_REFRESH_SECS: u32 = 2;

/// Where a resource stands, as the env page shows it: a change-set action in a person's words,
/// or `ambient`, or `baselined` (in sync at an accepted baseline value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Declared, present, as declared (`noop`).
    InSync,
    /// Declared, present, as declared once the env's accepted baseline is subtracted.
    Baselined,
    /// Declared, present, differs (`update`).
    Drifted,
    /// Declared, observed absent (`create`).
    Missing,
    /// Not declared, present, and chant's (`delete`: an apply removes it).
    Orphaned,
    /// Not declared, present, not chant's (`adopt`).
    Unowned,
    /// Not declared, present, belonging to a declared resource (`runtime`).
    Runtime,
    /// Nothing declares it and nothing declared references it (the lexicon's ambient reader).
    Ambient,
    /// Could not be read: no conclusion (never shown as missing).
    Unobserved,
}

impl Verdict {
    /// Every verdict, in the order the page lists its filters.
    pub const ALL: [Verdict; 9] = [
        Verdict::Drifted,
        Verdict::Missing,
        Verdict::Unobserved,
        Verdict::Orphaned,
        Verdict::Unowned,
        Verdict::Runtime,
        Verdict::Ambient,
        Verdict::Baselined,
        Verdict::InSync,
    ];

    /// Returns the word the page, its JSON and its `?verdict=` filter use (`in-sync`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::InSync => "in-sync",
            Verdict::Baselined => "baselined",
            Verdict::Drifted => "drifted",
            Verdict::Missing => "missing",
            Verdict::Orphaned => "orphaned",
            Verdict::Unowned => "unowned",
            Verdict::Runtime => "runtime",
            Verdict::Ambient => "ambient",
            Verdict::Unobserved => "unobserved",
        }
    }

    /// Parses a `?verdict=` value: one word or several separated by commas.
    ///
    /// # Errors
    ///
    /// The first word that is not a verdict, with every verdict in the message.
    pub fn parse_list(text: &str) -> Result<Vec<Verdict>, String> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let Some(v) = Verdict::ALL.into_iter().find(|v| v.as_str() == word) else {
                let known: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
                return Err(format!(
                    "?verdict={}: not a verdict; the verdicts are {} (several separated by commas)",
                    crate::terminal::printable(word),
                    known.join(", ")
                ));
            };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        Ok(out)
    }
}

/// One resource of the env.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// The lexicon binding (the change set's `component`).
    pub lexicon: String,
    /// The resource's kind, when the lexicon says.
    pub kind: Option<String>,
    /// Its name.
    pub name: String,
    /// Where it stands.
    pub verdict: Verdict,
    /// The change set's action it comes from (`update`); `null` for an ambient resource.
    pub action: Option<ChangeAction>,
    /// Who owns it: the observed ownership (`owned`, `foreign`, `unknown`), or for a `runtime`
    /// resource the declared resource it belongs to.
    pub owner: Option<String>,
    /// What differs, one item per property (`mode: 0600 -> 0644`; the content of a text file
    /// whose unified diff the diff page shows is `content: text diff`).
    pub differs: Vec<String>,
    /// Why it could not be read (`unobserved` only), as `lifecycle diff` groups it.
    pub reason: Option<String>,
    /// The address its lexicon asked, when it said.
    pub queried: Option<String>,
    /// Its line on the diff page (`/envs/{env}/diff#<anchor>`), when that page has one.
    pub anchor: Option<String>,
    /// What deep observation reports of it, path by path, with the declared, live and accepted
    /// (baseline) values side by side (`lifecycle diff --deep`'s `drift` and `baselined`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathRow>,
}

/// One path deep observation reports on a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathRow {
    /// The path inside the entity (`document.port`, `mode`).
    pub path: String,
    /// `drift` (differs from the declaration, not accepted) or `baselined` (differs, and the
    /// env's baseline accepts the live value).
    pub state: &'static str,
    /// The declared value as JSON text; `null` when nothing declares it.
    pub declared: Option<String>,
    /// The live value as JSON text; `null` when the path is absent live.
    pub live: Option<String>,
    /// The value the baseline accepted, as JSON text; `null` without one.
    pub baseline: Option<String>,
}

impl ResourceRow {
    fn redact(&mut self, redact: &dyn Fn(&str) -> String) {
        for text in [&mut self.lexicon, &mut self.name] {
            *text = redact(text);
        }
        for text in [&mut self.kind, &mut self.owner, &mut self.reason, &mut self.queried].into_iter().flatten() {
            *text = redact(text);
        }
        for text in &mut self.differs {
            *text = redact(text);
        }
        for p in &mut self.paths {
            p.path = redact(&p.path);
            for text in [&mut p.declared, &mut p.live, &mut p.baseline].into_iter().flatten() {
                *text = redact(text);
            }
        }
    }
}

/// The anchor of a change entry's line on the diff page: `d-<component>~<name>`, each byte that
/// is not an ASCII letter, digit, `-` or `.` written `_XX`, so it is a valid id and URL fragment.
pub fn anchor(component: &str, name: &str) -> String {
    format!("d-{}~{}", fragment(component), fragment(name))
}

/// The anchor of the diff page's line of a component's `index`th cause of unobserved entries.
pub fn unobserved_anchor(component: &str, index: usize) -> String {
    format!("u-{}~{index}", fragment(component))
}

fn fragment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02X}"));
        }
    }
    out
}

/// The rows of a diff document, in change-set order then the ambient resources, with the deep
/// verdicts that say which in-sync entries sit at an accepted baseline value. Pure.
pub fn rows_of(diff: &Diff, deep: &[ComponentDeep]) -> Vec<ResourceRow> {
    let mut rows = Vec::new();
    for cs in &diff.change_sets {
        let causes = unobserved_by_cause(&cs.entries);
        let component_deep = deep.iter().find(|d| d.component == cs.component);
        let baselined = baselined_names(component_deep);
        let mut paths = deep_paths(component_deep);
        for entry in &cs.entries {
            let texts = diff.text_changes.iter().any(|t| t.component == cs.component && t.name == entry.name);
            let reason = unobserved_cause(entry);
            let anchor = match entry.action {
                ChangeAction::Noop => None,
                ChangeAction::Unobserved => reason
                    .as_ref()
                    .and_then(|r| causes.iter().position(|(c, _)| c == r))
                    .map(|i| unobserved_anchor(&cs.component, i)),
                _ => Some(anchor(&cs.component, &entry.name)),
            };
            rows.push(ResourceRow {
                lexicon: cs.component.clone(),
                kind: entry.kind.as_deref().map(str::to_owned),
                name: entry.name.clone(),
                verdict: verdict_of(entry, baselined.contains(entry.name.as_str())),
                action: Some(entry.action),
                owner: owner_of(entry),
                differs: differs_of(entry, texts),
                reason,
                queried: entry.queried.as_deref().map(str::to_owned),
                anchor,
                paths: news(entry, paths.remove(entry.name.as_str()).unwrap_or_default()),
            });
        }
    }
    for (lexicon, reading) in &diff.ambient {
        let Some(ambient) = reading.read() else { continue };
        for (name, resource) in &ambient.resources {
            rows.push(ResourceRow {
                lexicon: lexicon.clone(),
                kind: Some(resource.kind.clone()),
                name: name.clone(),
                verdict: Verdict::Ambient,
                action: None,
                owner: None,
                differs: Vec::new(),
                reason: None,
                queried: None,
                anchor: None,
                paths: Vec::new(),
            });
        }
    }
    rows
}

/// The entries of a component on which the env's baseline accepted a path.
fn baselined_names(deep: Option<&ComponentDeep>) -> std::collections::BTreeSet<&str> {
    let mut names = std::collections::BTreeSet::new();
    for report in deep.map(|d| d.entities.as_slice()).unwrap_or_default() {
        for accepted in &report.baselined {
            names.insert(crate::observe::deep::fold::target(report, &accepted.path).0);
        }
    }
    names
}

/// The paths deep observation reports of a component, by the entry each lands on: every drift,
/// then every accepted path, with their values as JSON text.
fn deep_paths(deep: Option<&ComponentDeep>) -> BTreeMap<&str, Vec<PathRow>> {
    let text = |v: &serde_json::Value| v.to_string();
    let mut out: BTreeMap<&str, Vec<PathRow>> = BTreeMap::new();
    for report in deep.map(|d| d.entities.as_slice()).unwrap_or_default() {
        for d in &report.drift {
            let name = crate::observe::deep::fold::target(report, &d.path).0;
            out.entry(name).or_default().push(PathRow {
                path: d.path.clone(),
                state: "drift",
                declared: Some(text(&d.declared)),
                live: d.live.as_ref().map(text),
                baseline: d.baseline.as_ref().map(text),
            });
        }
        for b in &report.baselined {
            let name = crate::observe::deep::fold::target(report, &b.path).0;
            out.entry(name).or_default().push(PathRow {
                path: b.path.clone(),
                state: "baselined",
                declared: b.declared.as_ref().map(text),
                live: Some(text(&b.value)),
                baseline: Some(text(&b.value)),
            });
        }
    }
    out
}

/// The deep paths that say more than the entry's own `differs`: every accepted path and every
/// drift with an accepted value, and a drift only where no property of the entry already says
/// it (a file's `content` and `size` are its deltas; a JSON key `document.port` is not).
fn news(entry: &ChangeEntry, paths: Vec<PathRow>) -> Vec<PathRow> {
    paths
        .into_iter()
        .filter(|p| p.state != "drift" || p.baseline.is_some() || !entry.deltas.iter().any(|d| d.property == p.path))
        .collect()
}

fn verdict_of(entry: &ChangeEntry, baselined: bool) -> Verdict {
    match entry.action {
        ChangeAction::Noop if baselined => Verdict::Baselined,
        ChangeAction::Noop => Verdict::InSync,
        ChangeAction::Update => Verdict::Drifted,
        ChangeAction::Create => Verdict::Missing,
        ChangeAction::Delete => Verdict::Orphaned,
        ChangeAction::Adopt => Verdict::Unowned,
        ChangeAction::Runtime => Verdict::Runtime,
        ChangeAction::Unobserved => Verdict::Unobserved,
    }
}

fn owner_of(entry: &ChangeEntry) -> Option<String> {
    match (&entry.runtime_owner, entry.ownership) {
        (Some(owner), _) => Some(format!("belongs to {owner}")),
        (None, Some(ownership)) => Some(ownership.as_str().to_owned()),
        (None, None) => None,
    }
}

fn differs_of(entry: &ChangeEntry, text_diff: bool) -> Vec<String> {
    match entry.action {
        ChangeAction::Update => entry
            .deltas
            .iter()
            .map(|d| if text_diff && d.property == "content" { "content: text diff".to_owned() } else { d.text() })
            .collect(),
        ChangeAction::Create => vec!["declared, absent".to_owned()],
        ChangeAction::Delete => vec!["present, chant's, no longer declared".to_owned()],
        ChangeAction::Adopt => vec!["present, not declared".to_owned()],
        _ => Vec::new(),
    }
}

/// One observation of an env, its rows redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// When it finished (`generatedAt` style).
    pub observed_at: String,
    /// The env's status in the rules' words (`drifted`).
    pub status: String,
    /// The same in the health vocabulary.
    pub health: String,
    /// Every resource.
    pub rows: Vec<ResourceRow>,
    /// What the page should say beside the rows (a baseline that was ignored, an ambient scan
    /// that failed).
    pub notes: Vec<String>,
    /// How long observing took.
    pub took: Duration,
    /// The diff page's document: `lifecycle diff <env> --live --json`'s, redacted.
    pub diff: super::diff::DiffView,
    /// The diff page's lines.
    pub lines: Vec<super::diff::DiffLine>,
}

/// An observation that ended, and when.
#[derive(Debug)]
pub struct Outcome {
    finished: Instant,
    result: Result<Observed, String>,
}

impl Outcome {
    /// Returns what it observed, or why it could not (redacted).
    pub fn result(&self) -> Result<&Observed, &str> {
        self.result.as_ref().map_err(String::as_str)
    }

    /// Returns how long ago it ended.
    pub fn age(&self) -> Duration {
        self.finished.elapsed()
    }
}

/// One env's observation: the one running, and the last that ended.
#[derive(Debug, Default)]
struct Entry {
    running: Option<Running>,
    last: Option<Arc<Outcome>>,
}

#[derive(Debug)]
struct Running {
    since: Instant,
    done: watch::Receiver<Option<Arc<Outcome>>>,
}

/// The env pages' observations: at most one running per env, each result kept for
/// [`FRESH_FOR`]. Keyed by env; only envs the binary declares get an entry.
#[derive(Debug, Default)]
pub struct Observations(Mutex<HashMap<String, Entry>>);

/// What a request finds.
enum Found {
    /// An observation younger than [`FRESH_FOR`].
    Fresh(Arc<Outcome>),
    /// One is running, since then; the last that ended, if any.
    Running(Instant, watch::Receiver<Option<Arc<Outcome>>>, Option<Arc<Outcome>>),
    /// None is running and none could start: every slot is taken.
    Busy(Option<Arc<Outcome>>),
}

impl Observations {
    /// Finds `env`'s observation, starting one when none is fresh or running.
    fn find(&self, dashboard: &Arc<Dashboard>, env: &str) -> std::io::Result<Found> {
        let mut envs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = envs.entry(env.to_owned()).or_default();
        if let Some(running) = &entry.running {
            let ended = running.done.borrow().clone();
            // A thread that ended without an answer (it cannot, short of a panic) has dropped its
            // sender: its observation is over, and failed.
            let gone = running.done.has_changed().is_err();
            match ended {
                Some(outcome) => {
                    entry.last = Some(outcome);
                    entry.running = None;
                }
                None if gone => {
                    let result = Err("the observation ended without an answer".to_owned());
                    entry.last = Some(Arc::new(Outcome { finished: Instant::now(), result }));
                    entry.running = None;
                }
                None => return Ok(Found::Running(running.since, running.done.clone(), entry.last.clone())),
            }
        }
        if let Some(last) = entry.last.as_ref().filter(|o| o.finished.elapsed() < FRESH_FOR) {
            return Ok(Found::Fresh(Arc::clone(last)));
        }
        let Some(slot) = dashboard.diff_slots().take() else { return Ok(Found::Busy(entry.last.clone())) };
        let (tx, rx) = watch::channel(None);
        let reader = Arc::clone(dashboard);
        let name = env.to_owned();
        std::thread::Builder::new().name("chant-serve-env".into()).spawn(move || {
            let started = Instant::now();
            let result = reader.observe_env(&name, started).map_err(|e| reader.redact(&crate::error::chain(&e)));
            drop(slot);
            let _ = tx.send(Some(Arc::new(Outcome { finished: Instant::now(), result })));
        })?;
        let since = Instant::now();
        entry.running = Some(Running { since, done: rx.clone() });
        Ok(Found::Running(since, rx, entry.last.clone()))
    }
}

/// Waits at most `bound` for a running observation to end (`None`: it is still running).
async fn wait(mut done: watch::Receiver<Option<Arc<Outcome>>>, bound: Duration) -> Option<Arc<Outcome>> {
    match tokio::time::timeout(bound, done.wait_for(Option::is_some)).await {
        Ok(Ok(outcome)) => outcome.clone(),
        Ok(Err(_)) => {
            let result = Err("the observation ended without an answer".to_owned());
            Some(Arc::new(Outcome { finished: Instant::now(), result }))
        }
        Err(_) => None,
    }
}

/// How many of each ConvergeOp's newest ticks the env page's health strips show.
pub const HISTORY_TICKS: usize = 30;

/// The last ticks of an env, for the page's header: read from the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvTicks {
    /// The worst health of the env's ConvergeOps (as on the estate), `null` when none.
    pub health: Option<Health>,
    /// Seconds since the env's newest tick, `null` without one.
    pub age_seconds: Option<i64>,
    /// Each ConvergeOp of the env with its health and its last tick's age.
    pub ops: Vec<EnvOp>,
}

/// One ConvergeOp of the env in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvOp {
    /// The op.
    pub op: String,
    /// Its workspace member.
    pub member: Option<String>,
    /// Its health.
    pub health: Health,
    /// Seconds since its last tick.
    pub age_seconds: Option<i64>,
    /// Its newest [`HISTORY_TICKS`] ticks, oldest first: the health strip of the env's page.
    pub history: Vec<super::history::Point>,
}

/// The env page's document (`Accept: application/json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvPage {
    /// The shape's version, 1.
    pub version: u32,
    /// The env.
    pub env: String,
    /// When the page was built.
    pub generated_at: String,
    /// When the observation the rows come from ended.
    pub observed_at: String,
    /// Seconds since then.
    pub observed_age_seconds: u64,
    /// How long that observation took, in milliseconds.
    pub observe_millis: u64,
    /// Seconds a newer observation has been running for (the rows are the previous one's).
    pub observing_seconds: Option<u64>,
    /// The env's status from the observation (`lifecycle diff`'s `status`).
    pub status: String,
    /// The same in the health vocabulary (`lifecycle diff`'s `health`).
    pub health: String,
    /// The last ticks, from the ledger.
    pub ticks: EnvTicks,
    /// The verdicts asked for with `?verdict=`, `null` for all.
    pub filter: Option<Vec<Verdict>>,
    /// How many resources have each verdict (before filtering).
    pub counts: BTreeMap<Verdict, usize>,
    /// The resources (those of the filter's verdicts).
    pub resources: Vec<ResourceRow>,
    /// Notes beside the rows.
    pub notes: Vec<String>,
}

impl Dashboard {
    /// Checks that `env` is an env this binary can observe (as `lifecycle diff` checks it).
    ///
    /// # Errors
    ///
    /// [`Error::NoDeclarations`] in the stock binary, [`Error::NoSuchEnv`] for an undeclared env.
    pub fn check_env(&self, env: &str) -> Result<(), Error> {
        if self.project.is_none() {
            return Err(Error::NoDeclarations);
        }
        if !crate::operator::is_name(env) || !crate::lexicon::declared_envs().contains(&env) {
            return Err(Error::NoSuchEnv { env: env.to_owned() });
        }
        Ok(())
    }

    /// Observes `env` as `lifecycle diff <env> --live --json` does (the same document, built by
    /// [`crate::diff::diff_of`] over [`crate::project::Project::assess_deep`]) and returns its
    /// rows, that document and its lines for the diff page, redacted.
    ///
    /// # Errors
    ///
    /// [`Error::NoDeclarations`] in the stock binary, [`Error::NoSuchEnv`] for an env this binary
    /// has no declaration for (as `lifecycle diff` refuses it), [`Error::Diff`] when observing
    /// fails.
    pub fn observe_env(&self, env: &str, started: Instant) -> Result<Observed, Error> {
        self.check_env(env)?;
        let project = self.project.as_ref().ok_or(Error::NoDeclarations)?;
        let member = crate::diff::member_of(project, env);
        let deep = project.assess_deep(member.as_deref(), env).map_err(Error::Diff)?;
        let mut notes: Vec<String> = deep.baseline_error.iter().cloned().collect();
        let diff = crate::diff::diff_of(project, member.as_deref(), env, deep.assessment).map_err(Error::Diff)?;
        let mut rows = rows_of(&diff, &deep.deep);
        let (view, lines) = super::diff::lines_of(project, &diff).map_err(Error::Diff)?;
        let redact = |t: &str| project.redactor.redact(t);
        for row in &mut rows {
            row.redact(&redact);
        }
        for (lexicon, reading) in &diff.ambient {
            match reading {
                crate::observe::estate::Reading::Failed(why) => {
                    notes.push(format!("{lexicon}: the ambient resources could not be listed: {why}"));
                }
                crate::observe::estate::Reading::Read(a) if !a.holes.is_empty() => {
                    let scopes: Vec<&str> = a.holes.keys().map(String::as_str).collect();
                    notes.push(format!("{lexicon}: ambient resources not listed in {}", scopes.join(", ")));
                }
                _ => {}
            }
        }
        let notes = notes.iter().map(|n| redact(n)).collect();
        Ok(Observed {
            observed_at: now_text(),
            status: diff.status.as_str().to_owned(),
            health: diff.health.as_str().to_owned(),
            rows,
            notes,
            took: started.elapsed(),
            diff: view,
            lines,
        })
    }

    /// Reads the env's ConvergeOps from the ledger for the page's header.
    ///
    /// # Errors
    ///
    /// Ledger, lease and clock errors.
    pub fn env_ticks(&self, env: &str) -> Result<EnvTicks, Error> {
        let now = crate::clock::now().map_err(crate::operator::Error::from)?;
        let (refs, status) = self.status_of(Some(env), None)?;
        let estate = view::estate(status, now);
        let rows: Vec<&view::OpRow> =
            estate.members.iter().flat_map(|m| &m.envs).filter(|e| e.env == env).flat_map(|e| &e.ops).collect();
        let mut ops = Vec::with_capacity(rows.len());
        for r in &rows {
            let op_ref = refs.iter().find(|o| o.op == r.status.op && o.member == r.status.member && o.env == env);
            let history = match op_ref {
                Some(o) => super::history::points(
                    crate::operator::log::newest_ticks(&self.ledger, o, HISTORY_TICKS)?.iter().rev(),
                ),
                None => Vec::new(),
            };
            ops.push(EnvOp {
                op: r.status.op.clone(),
                member: r.status.member.clone(),
                health: r.health,
                age_seconds: r.age_seconds,
                history,
            });
        }
        Ok(EnvTicks {
            health: Health::worst(rows.iter().map(|r| r.health)),
            age_seconds: rows.iter().filter_map(|r| r.age_seconds).min(),
            ops,
        })
    }

    /// Returns the env pages' observations.
    pub fn observations(&self) -> &Observations {
        &self.observations
    }
}

/// Builds the page's document from an observation.
fn page_of(
    env: &str,
    observed: &Observed,
    finished: Instant,
    observing: Option<Instant>,
    ticks: EnvTicks,
    filter: Option<Vec<Verdict>>,
) -> EnvPage {
    let mut counts = BTreeMap::new();
    for row in &observed.rows {
        *counts.entry(row.verdict).or_insert(0) += 1;
    }
    let resources =
        observed.rows.iter().filter(|r| filter.as_ref().is_none_or(|f| f.contains(&r.verdict))).cloned().collect();
    EnvPage {
        version: 1,
        env: env.to_owned(),
        generated_at: now_text(),
        observed_at: observed.observed_at.clone(),
        observed_age_seconds: finished.elapsed().as_secs(),
        observe_millis: u64::try_from(observed.took.as_millis()).unwrap_or(u64::MAX),
        observing_seconds: observing.map(|s| s.elapsed().as_secs()),
        status: observed.status.clone(),
        health: observed.health.clone(),
        ticks,
        filter,
        counts,
        resources,
        notes: observed.notes.clone(),
    }
}

/// The env page's query: `?verdict=drifted[,missing...]`.
#[derive(Debug, Deserialize)]
pub struct EnvQuery {
    verdict: Option<String>,
}

/// `GET /envs/{env}[?verdict=...]`.
pub async fn page(
    State(d): State<Arc<Dashboard>>,
    Path(env): Path<String>,
    q: Result<Query<EnvQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let json = wants_json(&headers);
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return bad_request(json, &e.body_text()),
    };
    let filter = match q.verdict.as_deref().map(Verdict::parse_list).transpose() {
        Ok(f) => f.filter(|f| !f.is_empty()),
        Err(message) => return bad_request(json, &message),
    };
    if let Err(e) = d.check_env(&env) {
        return error_response(json, &d, &e);
    }
    let reader = Arc::clone(&d);
    let name = env.clone();
    let ticks = match tokio::task::spawn_blocking(move || reader.env_ticks(&name)).await {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => return error_response(json, &d, &e),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, format!("the read did not finish: {e}")).into_response(),
    };
    let (outcome, observing) = match kept(&d, &env, json).await {
        Ok(Kept::Ended(outcome, observing)) => (outcome, observing),
        Ok(Kept::Observing(since)) => {
            return html_response(StatusCode::OK, html::env_progress(&env, since, &ticks, &now_text()));
        }
        Err(response) => return response,
    };
    let observed = match outcome.result() {
        Ok(o) => o,
        Err(message) => return observe_failed(json, &env, message),
    };
    let doc = page_of(&env, observed, outcome.finished, observing, ticks, filter);
    if json { json_response(StatusCode::OK, &doc) } else { html_response(StatusCode::OK, html::env(&doc)) }
}

/// What a request gets of an env's kept observation.
pub(super) enum Kept {
    /// An observation that ended (it may have failed), and since when a newer one is running
    /// (then the outcome is the previous one's).
    Ended(Arc<Outcome>, Option<Instant>),
    /// The env's first observation has been running for this many seconds and an HTML request
    /// waited [`PAGE_WAIT`] for it: the caller answers its progress page.
    Observing(u64),
}

/// Finds `env`'s kept observation for a request, starting one when none is fresh or running, and
/// waits for a running one at most [`PAGE_WAIT`] (HTML) or [`super::diff::LIVE_DIFF_WAIT`]
/// (JSON). The error is a response already made: 503 when every live slot is taken and nothing
/// was observed before, 504 when a JSON request's wait ran out, 500 when no thread could start.
pub(super) async fn kept(d: &Arc<Dashboard>, env: &str, json: bool) -> Result<Kept, Response> {
    let found = d.observations().find(d, env).map_err(|e| {
        (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot start the observation: {e}")).into_response()
    })?;
    match found {
        Found::Fresh(o) | Found::Busy(Some(o)) => Ok(Kept::Ended(o, None)),
        Found::Busy(None) => Err(error_response(json, d, &Error::TooManyDiffs { limit: super::diff::MAX_LIVE_DIFFS })),
        Found::Running(since, done, last) => {
            let bound = if json { super::diff::LIVE_DIFF_WAIT } else { PAGE_WAIT };
            match (wait(done, bound).await, last) {
                (Some(o), _) => Ok(Kept::Ended(o, None)),
                (None, _) if json => {
                    let err = Error::DiffTimedOut { env: env.to_owned(), after: super::diff::LIVE_DIFF_WAIT };
                    Err(error_response(json, d, &err))
                }
                (None, Some(last)) => Ok(Kept::Ended(last, Some(since))),
                (None, None) => Ok(Kept::Observing(since.elapsed().as_secs())),
            }
        }
    }
}

/// Answers 500 saying why `env` could not be observed.
pub(super) fn observe_failed(json: bool, env: &str, message: &str) -> Response {
    let status = StatusCode::INTERNAL_SERVER_ERROR;
    let message = format!("cannot observe env {env:?}: {message}");
    if json {
        json_response(status, &serde_json::json!({ "error": message }))
    } else {
        html_response(status, html::error(status.as_u16(), &message, &now_text()))
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_filters_parse_and_a_bad_word_names_every_verdict() {
        assert_eq!(Verdict::parse_list("drifted"), Ok(vec![Verdict::Drifted]));
        assert_eq!(
            Verdict::parse_list("missing, drifted,missing"),
            Ok(vec![Verdict::Missing, Verdict::Drifted]),
            "trimmed, each once"
        );
        assert_eq!(Verdict::parse_list(""), Ok(vec![]));
        let err = Verdict::parse_list("drifted,absent").unwrap_err();
        assert!(err.contains("?verdict=absent: not a verdict"), "{err}");
        assert!(err.contains("in-sync") && err.contains("unobserved") && err.contains("baselined"), "{err}");
    }

    #[test]
    fn anchors_are_ids_and_fragments_and_tell_names_apart() {
        assert_eq!(anchor("files", "app.conf"), "d-files~app.conf");
        assert_eq!(anchor("files", "bin/start.sh"), "d-files~bin_2Fstart.sh");
        assert_ne!(anchor("a", "b_2F"), anchor("a", "b/"));
        assert!(anchor("x", "<a b>\"").bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)));
        assert_eq!(unobserved_anchor("postgres", 1), "u-postgres~1");
    }

    fn entry(name: &str, action: ChangeAction) -> ChangeEntry {
        use crate::observe::Evidence;
        let live = !matches!(action, ChangeAction::Create | ChangeAction::Unobserved);
        ChangeEntry {
            name: name.into(),
            kind: Some("file".into()),
            action,
            evidence: Evidence {
                declared: true,
                in_last_apply: true,
                live,
                observed: action != ChangeAction::Unobserved,
            },
            deltas: Vec::new(),
            ownership: None,
            unobserved_reason: None,
            unobserved_detail: None,
            queried: None,
            runtime_owner: None,
        }
    }

    #[test]
    fn each_action_has_its_verdict_and_an_unobserved_entry_is_never_missing() {
        use crate::observe::Delta;
        let mut drifted = entry("app.conf", ChangeAction::Update);
        drifted.deltas = vec![
            Delta { property: "content".into(), declared: "sha1:b".into(), live: Some("sha1:a".into()) },
            Delta { property: "mode".into(), declared: "0644".into(), live: Some("0600".into()) },
        ];
        let mut blind = entry("secret.conf", ChangeAction::Unobserved);
        blind.unobserved_detail = Some("permission denied".into());
        let mut runtime = entry("app.conf.lock", ChangeAction::Runtime);
        runtime.runtime_owner = Some("app.conf".into());
        assert_eq!(verdict_of(&drifted, false), Verdict::Drifted);
        assert_eq!(verdict_of(&blind, false), Verdict::Unobserved);
        assert_eq!(verdict_of(&entry("a", ChangeAction::Create), false), Verdict::Missing);
        assert_eq!(verdict_of(&entry("a", ChangeAction::Noop), true), Verdict::Baselined);
        assert_eq!(verdict_of(&entry("a", ChangeAction::Noop), false), Verdict::InSync);
        assert_eq!(verdict_of(&entry("a", ChangeAction::Adopt), false), Verdict::Unowned);
        assert_eq!(verdict_of(&entry("a", ChangeAction::Delete), false), Verdict::Orphaned);
        assert_eq!(differs_of(&drifted, true), ["content: text diff", "mode: 0600 -> 0644"]);
        assert_eq!(differs_of(&drifted, false)[0], "content: sha1:a -> sha1:b");
        assert_eq!(owner_of(&runtime).as_deref(), Some("belongs to app.conf"));
        assert!(unobserved_cause(&blind).is_some_and(|c| c.contains("permission denied")));
        assert!(differs_of(&blind, false).is_empty(), "nothing is concluded of what was not read");
    }

    #[test]
    fn a_deep_path_its_deltas_already_say_is_left_out_unless_a_baseline_accepted_a_value() {
        use crate::observe::Delta;
        let mut file = entry("app.json", ChangeAction::Update);
        file.deltas =
            vec![Delta { property: "content".into(), declared: "sha1:b".into(), live: Some("sha1:a".into()) }];
        let path = |path: &str, state: &'static str, baseline: Option<&str>| PathRow {
            path: path.into(),
            state,
            declared: Some("1".into()),
            live: Some("2".into()),
            baseline: baseline.map(str::to_owned),
        };
        let kept = news(
            &file,
            vec![
                path("content", "drift", None),
                path("document.port", "drift", None),
                path("content", "drift", Some("3")),
                path("mode", "baselined", Some("2")),
            ],
        );
        let kept: Vec<(&str, Option<&str>)> = kept.iter().map(|p| (p.path.as_str(), p.baseline.as_deref())).collect();
        assert_eq!(kept, [("document.port", None), ("content", Some("3")), ("mode", Some("2"))]);
    }
}
