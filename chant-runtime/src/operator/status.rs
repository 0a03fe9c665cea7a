//! `operator status`: where each ConvergeOp is now, from the ledger and local refs alone.
//!
//! One row per ConvergeOp (those with ticks on the ledger, plus those the binary carries): its
//! last tick and summary line, its lease (holder and expiry, from the local lease ref or the
//! last fetched remote copy, whichever is fresher), and its pending gates with the approve
//! command and URL; then the standing gates no converge tick dispatched. Unreadable ledger lines
//! met on the way are counted. `--json` prints [`StatusView`], whose shape never changes: every
//! key is always present, `null` or empty when there is nothing to say.

use crate::tick::health::Health;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use jiff::Timestamp;
use serde::Serialize;

use crate::gate::{self, FactKind, GateFact};
use crate::terminal::printable;
use crate::tick::{Action, LeaseStamp, TickRecord};
use chant_lexicon::model::OpDocument;
use chant_store::lease::{LeaseKey, LeaseStore};
use chant_store::ledger::{Ledger, RecordKind, STALE_LOCK_AGE, ShardKey};

use super::Error;

/// A ConvergeOp the views cover.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpRef {
    /// The op.
    pub op: String,
    /// Its env.
    pub env: String,
    /// Its workspace member.
    pub member: Option<String>,
}

/// Counts of ledger lines that could not be read, per kind of record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Malformed {
    /// Tick records.
    pub converge: usize,
    /// Gate facts.
    pub gates: usize,
    /// Run records.
    pub runs: usize,
    /// Notification records (`operator log` reads them; `status` does not).
    pub notifications: usize,
}

impl Malformed {
    /// Returns the total.
    pub fn total(&self) -> usize {
        self.converge + self.gates + self.runs + self.notifications
    }

    /// Returns the warning for a human, when any line was unreadable.
    pub fn warning(&self, what: &str) -> Option<String> {
        (self.total() > 0).then(|| {
            format!(
                "{} ledger line(s) were unreadable and are missing from this {what} (converge: {}, gates: {}, runs: {}{})",
                self.total(),
                self.converge,
                self.gates,
                self.runs,
                // Only `operator log` reads notifications: named when it met an unreadable one.
                if self.notifications > 0 { format!(", notifications: {}", self.notifications) } else { String::new() }
            )
        })
    }
}

/// The whole `operator status` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    /// The shape's version, 1.
    pub version: u32,
    /// One row per ConvergeOp, sorted by op then env.
    pub ops: Vec<OpStatus>,
    /// Standing gates no converge tick dispatched (reached by hand runs).
    pub pending_gates: Vec<PendingGateView>,
    /// Unreadable ledger lines met.
    pub malformed: Malformed,
    /// The configured remote's reachability, as the last fetch or push found it; absent when no
    /// remote is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteView>,
    /// Lock files a killed writer left behind (older than [`STALE_LOCK_AGE`], and no other chant
    /// process of the repository alive) on `packed-refs`, the ledger branch or a lease ref, each
    /// with its fix; absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale_locks: Vec<StaleLockView>,
}

/// A lock file older than [`STALE_LOCK_AGE`] while no other chant process of the repository is
/// alive: no write of chant holds a lock that long, so its writer was killed mid-write (a
/// `kill -9`). Removing it is a human's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleLockView {
    /// The lock file.
    pub path: String,
    /// Its age in whole seconds.
    pub age_secs: u64,
    /// What blocks while it stays: `every ledger append`, `the lease of <op>`, or for
    /// `packed-refs.lock` the deletion of references that `git pack-refs` packed.
    pub blocks: String,
    /// The fix: `rm <path>`, once no git or chant process of this repository is running.
    pub fix: String,
}

/// Whether the configured remote answered the last fetch or push of the ledger or a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteView {
    /// The remote, as configured.
    pub name: String,
    /// False when the last exchange with it failed before it could answer.
    pub reachable: bool,
    /// When the current row of failures began, `null` while reachable.
    pub unreachable_since: Option<String>,
    /// The newest failure's first line, `null` while reachable.
    pub error: Option<String>,
}

/// One ConvergeOp's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpStatus {
    /// The op.
    pub op: String,
    /// Its env.
    pub env: String,
    /// Its workspace member, `null` in a flat project.
    pub member: Option<String>,
    /// Its health, rolled up from its newest tick ([`crate::tick::health`]).
    pub health: Health,
    /// Its newest readable tick, `null` when none is recorded.
    pub last_tick: Option<LastTickView>,
    /// Its lease, `null` when free.
    pub lease: Option<LeaseStatus>,
    /// Gates its last tick's dispatches (or the op itself) wait on.
    pub pending_gates: Vec<PendingGateView>,
    /// The suspension that stands (`operator suspend`); absent when the operator ticks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspended: Option<super::suspend::Suspension>,
}

/// The parts of a tick record status shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastTickView {
    /// The tick's id.
    pub id: String,
    /// When it started.
    pub started_at: String,
    /// When it was recorded.
    pub timestamp: String,
    /// Its summary line.
    pub log: String,
    /// How long before the status was read it was recorded, in seconds (`null` when its time
    /// does not read, or lies ahead of the status's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_secs: Option<u64>,
    /// Why it failed, `null` when it did not.
    pub error: Option<String>,
    /// The lease it ran under.
    pub lease: Option<LeaseStamp>,
    /// Set when the op's sync windows held the tick ([`crate::tick::window`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<crate::tick::window::Held>,
}

/// A lease as status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseStatus {
    /// The holder.
    pub holder: String,
    /// The fencing token.
    pub token: String,
    /// When the holder took it.
    pub acquired_at: String,
    /// When it lapses.
    pub expires_at: String,
    /// Whether it is still live now (not expired, and not stale).
    pub live: bool,
    /// Whether its expiry lies further ahead than the maximum TTL (24h): a clock far ahead or a
    /// blob written by hand, which the next acquire takes over.
    pub stale: bool,
    /// Where it was read: `local` (the lease ref) or `remote` (the last fetched remote copy).
    pub source: String,
}

/// A standing pending gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingGateView {
    /// The op that owns the gate.
    pub op: String,
    /// The gate.
    pub gate: String,
    /// The env the run was in.
    pub env: String,
    /// The resource, in resource mode.
    pub resource: Option<String>,
    /// The rule whose dispatch reached it, when a tick did.
    pub rule: Option<String>,
    /// The gate's description.
    pub description: Option<String>,
    /// When the pending fact stops standing.
    pub expires_at: Option<String>,
    /// Where approval happens, when known.
    pub url: Option<String>,
    /// The command that approves it.
    pub approve: String,
    /// The digest of the plan the gate guards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
    /// The plan the gate guards: what approving it lets through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::gate::plan::GatePlan>,
}

/// Returns the ConvergeOps the views cover: every (member, env, op) with tick records on the
/// ledger, plus the ConvergeOps `carried` by this binary, filtered by `env` and `op`, sorted.
///
/// # Errors
///
/// Ledger errors; [`Error::InvalidName`] for a malformed filter.
pub fn discover<'a>(
    ledger: &Ledger,
    carried: impl IntoIterator<Item = &'a OpDocument>,
    env: Option<&str>,
    op: Option<&str>,
) -> Result<Vec<OpRef>, Error> {
    for (what, name) in [("env", env), ("op", op)] {
        if let Some(name) = name.filter(|n| !super::is_name(n)) {
            return Err(Error::InvalidName { what, name: name.to_owned() });
        }
    }
    let mut found = BTreeSet::new();
    for key in ledger.keys()? {
        if key.kind() == RecordKind::Converge
            && let Some(e) = key.env()
        {
            found.insert(OpRef { op: key.op().to_owned(), env: e.to_owned(), member: key.member().map(str::to_owned) });
        }
    }
    for doc in carried.into_iter().filter(|d| d.is_converge()) {
        found.insert(OpRef {
            op: doc.name.to_string(),
            env: doc.env.as_deref().unwrap_or_default().to_owned(),
            member: doc.member.clone(),
        });
    }
    Ok(found.into_iter().filter(|r| env.is_none_or(|e| r.env == e) && op.is_none_or(|o| r.op == o)).collect())
}

/// Reads the gate facts of `(member, op)` once per call site, counting unreadable lines.
pub(super) struct GateReader<'a> {
    ledger: &'a Ledger,
    cache: BTreeMap<ShardKey, Vec<GateFact>>,
    pub(super) unreadable: usize,
}

impl<'a> GateReader<'a> {
    pub(super) fn new(ledger: &'a Ledger) -> Self {
        GateReader { ledger, cache: BTreeMap::new(), unreadable: 0 }
    }

    pub(super) fn facts(&mut self, member: Option<&str>, op: &str) -> Result<&[GateFact], Error> {
        let key = ShardKey::gate(member, op)?;
        if !self.cache.contains_key(&key) {
            let records = self.ledger.read_typed::<GateFact>(&key)?;
            self.unreadable += records.unreadable.len();
            let facts = records.records.into_iter().map(|stored| stored.record).collect();
            self.cache.insert(key.clone(), facts);
        }
        Ok(self.cache.get(&key).map(Vec::as_slice).unwrap_or_default())
    }
}

/// The standing pending gates among `facts`: unanswered ones, and sealed ones answered only by
/// approvals that carry no seal.
fn standing(facts: &[GateFact], now: Timestamp) -> Vec<gate::PendingGate> {
    let mut out = gate::pending(facts, now);
    out.extend(gate::seal::unsealed_standing(facts, now));
    out
}

fn pending_view(fact: &GateFact, rule: Option<String>) -> PendingGateView {
    let resource = fact.resource.as_deref().map(|r| format!(" --resource {r}")).unwrap_or_default();
    PendingGateView {
        op: fact.op.clone(),
        gate: fact.gate.clone(),
        env: fact.env.clone(),
        resource: fact.resource.clone(),
        rule,
        description: fact.description.clone(),
        expires_at: fact.expires_at.clone(),
        url: fact.url.clone(),
        approve: format!("chant approve {} {}{resource}", fact.op, fact.gate),
        plan_digest: fact.plan_digest.clone(),
        plan: fact.plan.clone(),
    }
}

/// Builds the status of `ops` at `now` from the ledger and local lease refs.
///
/// # Errors
///
/// Ledger and lease storage errors.
pub fn status(ledger: &Ledger, leases: &LeaseStore, ops: &[OpRef], now: Timestamp) -> Result<StatusView, Error> {
    let mut malformed = Malformed::default();
    // The original's converge file is shared by every op of an env: count each bad line once.
    let mut bad_lines: BTreeSet<(String, usize)> = BTreeSet::new();
    let mut gates = GateReader::new(ledger);
    let mut shown: BTreeSet<(String, String, Option<String>, String)> = BTreeSet::new();
    let mut rows = Vec::new();
    for r in ops {
        let key = ShardKey::converge(r.member.as_deref(), &r.env, &r.op)?;
        // A record the original wrote lacks fields chant's own records carry: they read as defaults.
        let latest = ledger.latest_typed::<TickRecord>(&key)?;
        bad_lines.extend(latest.unreadable.iter().map(|u| (u.path.clone(), u.line)));
        let tick: Option<TickRecord> = latest.record.map(|stored| stored.record);
        let mut gate_ops: BTreeSet<String> = BTreeSet::from([r.op.clone()]);
        let mut rules: BTreeMap<(String, String), String> = BTreeMap::new();
        for o in tick.iter().flat_map(|t| &t.outcomes).filter(|o| o.action == Action::Gated) {
            if let (Some(op), Some(g)) = (&o.op, &o.gate_name) {
                gate_ops.insert(op.clone());
                rules.insert((op.clone(), g.clone()), o.rule_id.clone());
            }
        }
        let mut pending = Vec::new();
        for op in &gate_ops {
            for p in standing(gates.facts(r.member.as_deref(), op)?, now) {
                if !p.fact.in_env(&r.env) {
                    continue;
                }
                shown.insert((p.fact.op.clone(), p.fact.gate.clone(), p.fact.resource.clone(), p.fact.env.clone()));
                let rule = rules.get(&(p.fact.op.clone(), p.fact.gate.clone())).cloned();
                pending.push(pending_view(&p.fact, rule));
            }
        }
        let lease_view = leases.read(
            &LeaseKey::new(r.member.as_deref(), &r.op)
                .map_err(|_| Error::InvalidName { what: "op", name: r.op.clone() })?,
        );
        let lease = match lease_view {
            Ok(view) => view.current().map(|(rec, source)| LeaseStatus {
                holder: rec.holder.clone(),
                token: rec.token.clone(),
                acquired_at: rec.acquired_at.clone(),
                expires_at: rec.expires_at.clone(),
                live: rec.is_live(now),
                stale: rec.is_stale(now),
                source: source.to_owned(),
            }),
            Err(_) => None,
        };
        rows.push(OpStatus {
            op: r.op.clone(),
            env: r.env.clone(),
            member: r.member.clone(),
            health: Health::of_tick(tick.as_ref()),
            last_tick: tick.map(|t| LastTickView {
                age_secs: chant_store::clock::parse(&t.timestamp)
                    .and_then(|at| u64::try_from(now.as_second().saturating_sub(at.as_second())).ok()),
                id: t.id,
                started_at: t.started_at,
                timestamp: t.timestamp,
                log: t.log,
                error: t.error,
                lease: t.lease,
                held: t.held,
            }),
            lease,
            pending_gates: pending,
            suspended: super::suspend::suspension(
                ledger,
                &ShardKey::control(r.member.as_deref(), &r.env, &r.op)?,
                now,
            )?,
        });
    }
    let envs: BTreeSet<&str> = ops.iter().map(|r| r.env.as_str()).collect();
    let mut standalone = Vec::new();
    for key in ledger.keys()?.into_iter().filter(|k| k.kind() == RecordKind::Gate) {
        for p in standing(gates.facts(key.member(), key.op())?, now) {
            let id = (p.fact.op.clone(), p.fact.gate.clone(), p.fact.resource.clone(), p.fact.env.clone());
            if shown.contains(&id) || !(p.fact.env.is_empty() || envs.contains(p.fact.env.as_str()) || ops.is_empty()) {
                continue;
            }
            standalone.push(pending_view(&p.fact, None));
        }
    }
    malformed.gates = gates.unreadable;
    malformed.converge += bad_lines.len();
    let remote = ledger.config().remote.clone().map(|name| {
        let down = ledger.remote_unreachable();
        RemoteView {
            name,
            reachable: down.is_none(),
            unreachable_since: down.as_ref().map(|d| d.since.clone()),
            error: down.map(|d| d.error),
        }
    });
    let stale_locks = stale_locks(ledger);
    Ok(StatusView { version: 1, ops: rows, pending_gates: standalone, malformed, remote, stale_locks })
}

/// The lock files older than [`STALE_LOCK_AGE`] chant's writes can meet, when no other chant
/// process of the repository is alive (one that is may still be writing them).
fn stale_locks(ledger: &Ledger) -> Vec<StaleLockView> {
    let repo = ledger.repo().local();
    if !repo.other_processes_alive().is_empty() {
        return Vec::new();
    }
    let common = repo.common_dir().to_owned();
    let lease_dir = chant_store::lease::REF_PREFIX.trim_end_matches('/');
    repo.lock_files_older_than(STALE_LOCK_AGE, &[chant_store::ledger::BRANCH, lease_dir])
        .into_iter()
        .map(|(path, age)| {
            let name = path.strip_prefix(&common).ok().map(|p| p.display().to_string()).unwrap_or_default();
            let name = name.strip_suffix(".lock").unwrap_or(&name);
            let blocks = if name == "packed-refs" {
                "deleting a reference that `git pack-refs` packed (chant's appends and leases do not take it)"
                    .to_owned()
            } else if name == chant_store::ledger::BRANCH {
                "every ledger append".to_owned()
            } else {
                match name.strip_prefix(chant_store::lease::REF_PREFIX) {
                    Some(presence) if presence.starts_with(chant_store::lease::PRESENCE_DIR) => {
                        format!("an operator's presence lease ({presence})")
                    }
                    Some(op) => format!("the lease of {op}"),
                    None => format!("updates of {name}"),
                }
            };
            StaleLockView {
                fix: format!("rm {}", path.display()),
                path: path.display().to_string(),
                age_secs: age.as_secs(),
                blocks,
            }
        })
        .collect()
}

/// `just now`, `4 min ago`, `3 h ago`, `12 days ago`: how long ago, in words.
pub fn ago(secs: u64) -> String {
    match secs {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..172_800 => format!("{} h ago", secs / 3_600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// Renders the status for a human. Every text read from the ledger goes through
/// [`printable`], so no record can drive the reader's terminal or forge a line.
pub fn render(view: &StatusView) -> String {
    let p = printable;
    let mut s = String::new();
    if let Some(r) = view.remote.as_ref().filter(|r| !r.reachable) {
        let since = r.unreachable_since.as_deref().unwrap_or("?");
        let _ = writeln!(s, "remote: unreachable since {since} ({})", r.error.as_deref().unwrap_or(""));
    }
    for lock in &view.stale_locks {
        let _ = writeln!(
            s,
            "stale lock: {} ({}s old) blocks {}; a killed writer left it: remove it (`{}`) once no git or chant \
             process of this repository is running",
            lock.path, lock.age_secs, lock.blocks, lock.fix
        );
    }
    if !view.stale_locks.is_empty() {
        s.push('\n');
    }
    for row in &view.ops {
        let _ = writeln!(s, "{} ({})", p(&row.op), p(&row.env));
        // The word first, then how old it is: health read away from the tick says when it was true.
        let observed = row.last_tick.as_ref().and_then(|t| t.age_secs).map(|a| format!(", observed {}", ago(a)));
        let detail = row.health.detail.as_deref().map(|d| format!(" ({})", p(d))).unwrap_or_default();
        let _ = writeln!(s, "  health    : {}{}{detail}", row.health.state, observed.unwrap_or_default());
        if let Some(sus) = &row.suspended {
            let _ = writeln!(
                s,
                "  suspended : {} (by {} at {}; the operator does not tick it until `operator resume {}`)",
                p(&sus.describe()),
                p(&sus.by),
                p(&sus.since),
                p(&row.op)
            );
        }
        match &row.last_tick {
            None => s.push_str("  no ticks recorded yet\n"),
            Some(t) => {
                let _ = writeln!(s, "  last tick : {}", p(&t.timestamp));
                if let Some(h) = &t.held {
                    let _ = writeln!(
                        s,
                        "  held      : {} (its sync windows let it dispatch nothing mutating)",
                        p(&h.describe())
                    );
                }
                let _ = writeln!(s, "  {}", p(&t.log));
                if let Some(e) = &t.error {
                    let _ = writeln!(s, "  error     : {}", p(e));
                }
            }
        }
        match &row.lease {
            Some(l) if l.stale => {
                let _ = writeln!(
                    s,
                    "  lease     : stale (held by {} until {}, further ahead than the 24h maximum TTL; the next acquire takes it over)",
                    p(&l.holder),
                    p(&l.expires_at)
                );
            }
            Some(l) if l.live => {
                let _ = writeln!(s, "  lease     : held by {} (expires {})", p(&l.holder), p(&l.expires_at));
            }
            Some(l) => {
                let _ = writeln!(s, "  lease     : free (last held by {}, expired {})", p(&l.holder), p(&l.expires_at));
            }
            None => s.push_str("  lease     : free\n"),
        }
        if !row.pending_gates.is_empty() {
            s.push_str("  pending gates:\n");
            for g in &row.pending_gates {
                let rule = g.rule.as_deref().map(|r| format!(" (rule {})", p(r))).unwrap_or_default();
                let _ = writeln!(s, "    - {} gate \"{}\"{rule} — resolve: {}", p(&g.op), p(&g.gate), p(&g.approve));
                if let Some(e) = &g.expires_at {
                    let _ = writeln!(s, "      expires: {}", p(e));
                }
                if let Some(u) = &g.url {
                    let _ = writeln!(s, "      approve at: {}", p(u));
                }
                plan_lines(&mut s, g, "      ");
            }
        }
        s.push('\n');
    }
    if !view.pending_gates.is_empty() {
        s.push_str("pending gates (no converge tick)\n");
        for g in &view.pending_gates {
            let _ = writeln!(s, "  - {} gate \"{}\" — resolve: {}", p(&g.op), p(&g.gate), p(&g.approve));
            if let Some(d) = &g.description {
                let _ = writeln!(s, "    {}", p(d));
            }
            if let Some(e) = &g.expires_at {
                let _ = writeln!(s, "    expires: {}", p(e));
            }
            if let Some(u) = &g.url {
                let _ = writeln!(s, "    approve at: {}", p(u));
            }
            plan_lines(&mut s, g, "    ");
        }
        s.push('\n');
    }
    s
}

/// The plan a pending gate guards, under it.
fn plan_lines(s: &mut String, g: &PendingGateView, indent: &str) {
    if let Some(d) = &g.plan_digest {
        let _ = writeln!(s, "{indent}plan: {}", printable(d));
    }
    // A plan that does not hash to the recorded digest is not what an approval binds: say so
    // instead of showing it.
    if let Some(plan) = &g.plan
        && g.plan_digest.as_deref() != Some(plan.digest().as_str())
    {
        let _ = writeln!(
            s,
            "{indent}  the plan listed hashes to {}, not to the recorded digest: not shown (see `approve --show`)",
            plan.digest()
        );
        return;
    }
    for line in g.plan.iter().flat_map(crate::gate::plan::GatePlan::lines) {
        let _ = writeln!(s, "{indent}  {}", printable(&line));
    }
}

/// Returns true for a fact that resolves a gate (for the log's timeline).
pub(super) fn is_resolution(fact: &GateFact) -> bool {
    fact.kind == FactKind::Resolution
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn an_age_reads_in_words() {
        let words: Vec<String> = [0, 59, 60, 3_599, 3_600, 172_799, 172_800].into_iter().map(ago).collect();
        assert_eq!(words, ["just now", "just now", "1 min ago", "59 min ago", "1 h ago", "47 h ago", "2 days ago"]);
    }
}
