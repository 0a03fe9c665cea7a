//! The gate audit: turns gate ledger lines into typed audit entries and reports what the ledger
//! is missing. [`derive()`] is a pure function: it takes lines (with their [`Source`]), the applies
//! and decision records a caller passes in, and returns entries and gaps; it touches no git,
//! clock or file. `operator audit` feeds it the real ledger's history.
//!
//! Entries, in the order met: `approval-requested` and `override-requested` (pending facts),
//! `approved` and `override-recorded` (resolutions), `expired` (chant's `approve --expire`),
//! `revoked` (a line a commit removed), `applied` and `override-spent` (chant's `passed` facts
//! and the caller's applies, each with the approval it ran under in `under`; an approval admits
//! one apply, as a gate admits one run) and `hook` (each outcome of a decision record). Gaps:
//! `approval-without-request`, `unsealed` (a gate that needs a seal approved without one),
//! `misplaced-seal` (a sealed approval that answers no standing request: a replayed seal),
//! `approval` and `override` (an apply with nothing behind it), `carried-without-source` and
//! `malformed-line`. An override gate is one of op `policy-override` or named `override-<rule>`,
//! unless the caller's `is_override` says otherwise.

mod hooks;
mod lines;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

pub use hooks::{Decision, Hook};
pub use lines::{LOG_FORMAT, Source, file_lines, lines_from_log};

use super::{FactKind, GateFact};

/// The lines of one op's gate ledger, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateLedger {
    /// The op that owns the gate file.
    pub op: String,
    /// Its lines, in ledger (or log) order.
    pub lines: Vec<Source>,
}

/// An apply a caller ran, to be matched with the approval it ran under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Apply {
    /// The caller's reference for it (a report, a run id).
    pub reference: String,
    /// When it ran (RFC 3339).
    pub at: String,
    /// The op whose gate admitted it; any op when `None`.
    pub op: Option<String>,
    /// The gate.
    pub gate: String,
    /// The plan digest it applied; an approval with another digest does not admit it.
    pub digest: Option<String>,
}

/// The kind of an audit entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A run reached a gate and asked.
    ApprovalRequested,
    /// Someone approved.
    Approved,
    /// A run reached an override gate.
    OverrideRequested,
    /// Someone recorded an override (the reason in `note`).
    OverrideRecorded,
    /// A standing request was cleared without approving (`approve --expire`).
    Expired,
    /// A commit removed a line.
    Revoked,
    /// An apply ran under an approval.
    Applied,
    /// An apply ran under an override.
    OverrideSpent,
    /// One hook outcome of a decision record.
    Hook,
}

/// How an approval was authorised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Seal {
    /// Through a pull-request review (`via: "pr-review"`, or a `review` field), sealed or not.
    Review,
    /// Sealed with a signature, with no review.
    Sealed,
    /// Neither.
    Unsigned,
}

pub use super::carry::CarriedFrom;

/// One audit entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its id: by default `sha256:` of the source and the record; the caller's `id` may replace it.
    pub id: String,
    /// What it records.
    pub kind: EntryKind,
    /// The op.
    pub op: String,
    /// The gate.
    pub gate: String,
    /// When: the fact's timestamp, the apply's or decision's `at`, or the removing commit's date.
    pub at: String,
    /// The env the fact names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// The resource of a resource-mode gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Who approved (`resolvedBy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    /// Who relayed the approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    /// The author of the commit that added the line (approvals and overrides read from the log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub committed_by: Option<String>,
    /// Whether that commit's author is neither the approver nor the relayer the line names (by
    /// name, e-mail or the e-mail's local part, ignoring case). Not judged for commits by chant's
    /// own identity `chant <chant@localhost>`: older versions wrote every commit so, and it is
    /// the fallback when git knows no identity.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub committer_mismatch: bool,
    /// How an approval was authorised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seal: Option<Seal>,
    /// Whether the line carries a seal.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sealed: bool,
    /// Who sealed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The review the approval came through, as the line has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Value>,
    /// The note (an override's reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The approval link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The plan digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
    /// The entry this one ran under (an approval or override) or revokes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// A hook's applied entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<String>,
    /// The gate an approval was carried from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<CarriedFrom>,
    /// A hook outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<Hook>,
    /// A hook's wave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave: Option<String>,
    /// The caller's reference (applies and decisions).
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The ledger line (ledger entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// The kind of a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapKind {
    /// An approval (or override) with no request before it.
    ApprovalWithoutRequest,
    /// A gate that needs a seal approved without one.
    Unsealed,
    /// A sealed approval that does not answer the request standing when it was appended (it
    /// names another `runId` or plan digest, or none), or repeats an earlier sealed line: a
    /// replayed or misplaced seal, which opens nothing.
    MisplacedSeal,
    /// An apply with no approval behind it.
    Approval,
    /// An apply of an override gate with no override behind it.
    Override,
    /// A carried approval citing a pending fact its old ledger does not hold.
    CarriedWithoutSource,
    /// A line (or decision record) that could not be read.
    MalformedLine,
    /// An env's observation baseline written by something other than chant's baseline command
    /// (found by `operator audit`, which reads the baselines' history).
    ForeignBaseline,
}

/// Something the ledger is missing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gap {
    /// What is missing.
    pub kind: GapKind,
    /// The op, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The gate, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// What is wrong, in words.
    pub message: String,
    /// The entry it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The caller's reference (applies and decisions).
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The ledger line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// The audit: entries and gaps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Audit {
    /// The entries, in the order met: ledgers in the order given, then applies, then hooks.
    pub entries: Vec<Entry>,
    /// The gaps, in the order found.
    pub gaps: Vec<Gap>,
}

/// What the audit reads, and the caller's policies.
pub struct Input<'a> {
    /// The gate ledgers (pass an alias's old op too, to check carried approvals).
    pub ledgers: &'a [GateLedger],
    /// Applies to match with approvals.
    pub applies: &'a [Apply],
    /// Decision records whose hook outcomes become entries.
    pub decisions: &'a [Decision],
    /// Whether a gate needs a seal.
    pub sealed: &'a dyn Fn(&str, &str) -> bool,
    /// Whether a gate is an override gate.
    pub is_override: &'a dyn Fn(&str, &str) -> bool,
    /// The id of an entry, given the entry with its default id.
    pub id: &'a dyn Fn(&Entry) -> String,
}

impl<'a> Input<'a> {
    /// The audit of `ledgers` alone, with the default policies: no gate needs a seal, override
    /// gates by name, default ids.
    pub fn new(ledgers: &'a [GateLedger]) -> Self {
        Input { ledgers, applies: &[], decisions: &[], sealed: &no_seal, is_override: &is_override, id: &default_id }
    }
}

fn no_seal(_: &str, _: &str) -> bool {
    false
}

fn default_id(entry: &Entry) -> String {
    entry.id.clone()
}

/// The default override rule: op `policy-override`, or a gate named `override-<rule>`.
pub fn is_override(op: &str, gate: &str) -> bool {
    op == "policy-override" || gate.strip_prefix("override-").is_some_and(|rule| !rule.is_empty())
}

/// The default id of an entry: the digest of its source (or reference) and its record.
fn digest_id(what: &Value, record: &Value) -> String {
    let text = chant_store::canonical::to_string(&serde_json::json!({ "record": record, "source": what }))
        .unwrap_or_else(|_| format!("{what}{record}"));
    super::plan::sha256(text.as_bytes())
}

/// An approval (or override) seen so far, for matching.
struct Approval {
    id: String,
    op: String,
    gate: String,
    resource: Option<String>,
    digest: Option<String>,
    at: String,
    text: String,
    revoked: bool,
    spent: bool,
}

/// A request seen so far.
struct Request {
    id: String,
    run_id: String,
    digest: Option<String>,
    op: String,
    gate: String,
    resource: Option<String>,
    at: String,
    text: String,
    /// The request says its gate opens only on a sealed approval.
    sealed: bool,
}

#[derive(Default)]
struct State {
    audit: Audit,
    requests: Vec<Request>,
    approvals: Vec<Approval>,
}

/// Derives the audit of `input`.
pub fn derive(input: &Input<'_>) -> Audit {
    let mut st = State::default();
    for ledger in input.ledgers {
        for source in &ledger.lines {
            line(input, &mut st, ledger, source);
        }
    }
    for apply in input.applies {
        applied(input, &mut st, apply);
    }
    hooks::derive(input, &mut st.audit);
    st.audit
}

impl Entry {
    /// An entry of `kind` for `op`'s `gate` at `at`, every other field empty (its id is given
    /// when it is pushed).
    fn new(kind: EntryKind, op: String, gate: String, at: String) -> Entry {
        Entry {
            id: String::new(),
            kind,
            op,
            gate,
            at,
            env: None,
            resource: None,
            approver: None,
            relayed_by: None,
            committed_by: None,
            committer_mismatch: false,
            seal: None,
            sealed: false,
            signer: None,
            review: None,
            note: None,
            url: None,
            plan_digest: None,
            under: None,
            applied: None,
            carried_from: None,
            hook: None,
            wave: None,
            reference: None,
            source: None,
        }
    }
}

fn blank(kind: EntryKind, fact: &GateFact) -> Entry {
    Entry {
        env: Some(fact.env.clone()).filter(|e| !e.is_empty()),
        resource: fact.resource.clone(),
        note: fact.note.clone(),
        url: fact.url.clone(),
        plan_digest: fact.plan_digest.clone(),
        ..Entry::new(kind, fact.op.clone(), fact.gate.clone(), fact.timestamp.clone())
    }
}

/// Gives `entry` its id (the default, then the caller's), pushes it and returns the id.
fn push(input: &Input<'_>, audit: &mut Audit, mut entry: Entry, what: &Value, record: &Value) -> String {
    entry.id = digest_id(what, record);
    entry.id = (input.id)(&entry);
    let id = entry.id.clone();
    audit.entries.push(entry);
    id
}

fn gap(kind: GapKind, op: Option<&str>, gate: Option<&str>, message: String) -> Gap {
    Gap {
        kind,
        op: op.map(str::to_owned),
        gate: gate.map(str::to_owned),
        message,
        entry: None,
        reference: None,
        source: None,
    }
}

fn line(input: &Input<'_>, st: &mut State, ledger: &GateLedger, source: &Source) {
    let parsed =
        serde_json::from_str::<Value>(&source.text).map_err(|e| format!("not JSON: {e}")).and_then(|v| {
            match v.is_object() {
                true => serde_json::from_value::<GateFact>(v.clone()).map(|f| (v, f)).map_err(|e| e.to_string()),
                false => Err("not a JSON object".to_owned()),
            }
        });
    let (value, fact) = match parsed {
        Ok(ok) => ok,
        Err(reason) => {
            let mut g = gap(
                GapKind::MalformedLine,
                Some(&ledger.op),
                None,
                format!("{}:{}: not a gate fact: {reason}", source.path, source.line),
            );
            g.source = Some(source.clone());
            st.audit.gaps.push(g);
            return;
        }
    };
    let what = serde_json::to_value(source).unwrap_or(Value::Null);
    let over = (input.is_override)(&fact.op, &fact.gate);
    if source.removed {
        let mut e = blank(EntryKind::Revoked, &fact);
        e.at = source.date.clone().unwrap_or_else(|| fact.timestamp.clone());
        e.under = st
            .approvals
            .iter_mut()
            .rev()
            .find(|a| a.text == source.text && !a.revoked)
            .map(|a| {
                a.revoked = true;
                a.id.clone()
            })
            .or_else(|| st.requests.iter().rev().find(|r| r.text == source.text).map(|r| r.id.clone()));
        e.source = Some(source.clone());
        push(input, &mut st.audit, e, &what, &value);
        return;
    }
    match fact.kind {
        FactKind::Pending => {
            let kind = if over { EntryKind::OverrideRequested } else { EntryKind::ApprovalRequested };
            let mut e = blank(kind, &fact);
            e.note = fact.description.clone().or(e.note);
            e.source = Some(source.clone());
            let id = push(input, &mut st.audit, e, &what, &value);
            st.requests.push(Request {
                id,
                run_id: fact.run_id.clone(),
                digest: fact.plan_digest.clone(),
                op: fact.op.clone(),
                gate: fact.gate.clone(),
                resource: fact.resource.clone(),
                at: fact.timestamp.clone(),
                text: source.text.clone(),
                sealed: fact.sealed,
            });
        }
        FactKind::Resolution => resolution(input, st, source, &what, &value, &fact, over),
        FactKind::Expired => {
            let mut e = blank(EntryKind::Expired, &fact);
            e.approver = fact.resolved_by.clone();
            e.source = Some(source.clone());
            push(input, &mut st.audit, e, &what, &value);
        }
        FactKind::Passed => {
            let kind = if over { EntryKind::OverrideSpent } else { EntryKind::Applied };
            let mut e = blank(kind, &fact);
            e.approver = fact.resolved_by.clone();
            e.source = Some(source.clone());
            let under = spend(st, Some(&fact.op), &fact.gate, fact.resource.as_deref(), None, &fact.timestamp);
            e.under = under.clone();
            let id = push(input, &mut st.audit, e, &what, &value);
            if under.is_none() {
                let (kind, what) = if over { (GapKind::Override, "override") } else { (GapKind::Approval, "approval") };
                let mut g = gap(
                    kind,
                    Some(&fact.op),
                    Some(&fact.gate),
                    format!(
                        "{}:{}: a run passed gate {:?} with no {what} behind it",
                        source.path, source.line, fact.gate
                    ),
                );
                g.entry = Some(id);
                g.source = Some(source.clone());
                st.audit.gaps.push(g);
            }
        }
    }
}

/// What is wrong with the approval a carried resolution (recorded at `carried_at`) cites, when
/// it names one (chant's carries do; the original's alias lines name only the request): the
/// source ledger holds no standing approval of that gate at that time, or the carry came after
/// the declared window.
fn carried_source_problem(st: &State, c: &CarriedFrom, carried_at: &str) -> Option<String> {
    let approved_at = c.approved_at.as_deref()?;
    let held = st.approvals.iter().any(|a| a.op == c.op && a.gate == c.gate && a.at == approved_at && !a.revoked);
    if !held {
        return Some(format!(
            "approval carried from {}/{} approved at {approved_at}, an approval that ledger does not hold (or a commit revoked)",
            c.op, c.gate
        ));
    }
    let window = c.within.as_deref().and_then(|w| chant_lexicon::duration::parse(w).ok())?;
    let (from, to) = (chant_store::clock::parse(approved_at)?, chant_store::clock::parse(carried_at)?);
    let age = to.duration_since(from);
    let limit = jiff::SignedDuration::try_from(window).ok()?;
    (age > limit).then(|| {
        format!(
            "approval carried from {}/{} approved at {approved_at} was carried at {carried_at}, past its {} window: expired",
            c.op,
            c.gate,
            c.within.as_deref().unwrap_or_default()
        )
    })
}

fn resolution(
    input: &Input<'_>,
    st: &mut State,
    source: &Source,
    what: &Value,
    value: &Value,
    fact: &GateFact,
    over: bool,
) {
    let kind = if over { EntryKind::OverrideRecorded } else { EntryKind::Approved };
    let mut e = blank(kind, fact);
    e.approver = fact.resolved_by.clone();
    e.relayed_by = fact.relayed_by.clone();
    e.committed_by = source.commit.as_ref().and(source.author.clone());
    e.committer_mismatch = committer_mismatch(source, fact);
    let seal = value.get("seal").filter(|s| !s.is_null());
    e.review = value.get("review").filter(|r| !r.is_null()).cloned();
    let via_review = value.get("via").and_then(Value::as_str) == Some("pr-review");
    e.sealed = seal.is_some();
    e.signer =
        seal.and_then(|s| s.get("signer").or_else(|| s.get("principal"))).and_then(Value::as_str).map(str::to_owned);
    e.seal = Some(if via_review || e.review.is_some() {
        Seal::Review
    } else if e.sealed {
        Seal::Sealed
    } else {
        Seal::Unsigned
    });
    e.carried_from = value.get("carriedFrom").and_then(|c| serde_json::from_value::<CarriedFrom>(c.clone()).ok());
    e.source = Some(source.clone());
    // A sealed gate by the binary's ops, or by the request it answers (which says `sealed`): the
    // stock binary, which carries no ops, still finds an unsealed approval of a sealed gate.
    let asked_sealed = st
        .requests
        .iter()
        .rev()
        .find(|r| r.op == fact.op && r.gate == fact.gate && r.resource == fact.resource)
        .is_some_and(|r| r.sealed);
    let sealed_gate = (input.sealed)(&fact.op, &fact.gate) || asked_sealed;
    let carried = e.carried_from.clone();
    let is_sealed = e.sealed;
    let id = push(input, &mut st.audit, e, what, value);
    let at = |g: &mut Gap| {
        g.entry = Some(id.clone());
        g.source = Some(source.clone());
    };
    let place = format!("{}:{}", source.path, source.line);
    match &carried {
        Some(c) if input.ledgers.iter().any(|l| l.op == c.op) => {
            let of_gate: Vec<&Request> = st.requests.iter().filter(|r| r.op == c.op && r.gate == c.gate).collect();
            if of_gate.is_empty() {
                let mut g = gap(
                    GapKind::ApprovalWithoutRequest,
                    Some(&fact.op),
                    Some(&fact.gate),
                    format!("{place}: approval carried from {}/{} with no request there", c.op, c.gate),
                );
                at(&mut g);
                st.audit.gaps.push(g);
            } else if !of_gate.iter().any(|r| r.at == c.at) {
                let mut g = gap(
                    GapKind::CarriedWithoutSource,
                    Some(&fact.op),
                    Some(&fact.gate),
                    format!(
                        "{place}: approval carried from {}/{} at {}, a pending fact that ledger does not hold",
                        c.op, c.gate, c.at
                    ),
                );
                at(&mut g);
                st.audit.gaps.push(g);
            } else if let Some(why) = carried_source_problem(st, c, &fact.timestamp) {
                let mut g =
                    gap(GapKind::CarriedWithoutSource, Some(&fact.op), Some(&fact.gate), format!("{place}: {why}"));
                at(&mut g);
                st.audit.gaps.push(g);
            }
        }
        Some(_) => {}
        None => {
            let asked =
                st.requests.iter().any(|r| r.op == fact.op && r.gate == fact.gate && r.resource == fact.resource);
            if !asked {
                let what = if over { "override" } else { "approval" };
                let mut g = gap(
                    GapKind::ApprovalWithoutRequest,
                    Some(&fact.op),
                    Some(&fact.gate),
                    format!(
                        "{place}: {what} of gate {:?} by {} with no request before it",
                        fact.gate,
                        fact.resolved_by.as_deref().unwrap_or("unknown")
                    ),
                );
                at(&mut g);
                st.audit.gaps.push(g);
            }
        }
    }
    if is_sealed && carried.is_none() {
        let standing =
            st.requests.iter().rev().find(|r| r.op == fact.op && r.gate == fact.gate && r.resource == fact.resource);
        let repeated = st.approvals.iter().any(|a| a.text == source.text);
        let why = match standing {
            _ if repeated => Some("it repeats an earlier sealed approval line".to_owned()),
            // The original's pairs name no run on either side: the approval answers the request
            // it follows.
            Some(r) if fact.run_id != r.run_id => {
                let named = if fact.run_id.is_empty() { "no run".to_owned() } else { format!("run {}", fact.run_id) };
                Some(format!("it names {named}, the standing request is run {}", r.run_id))
            }
            Some(r) if !r.run_id.is_empty() && fact.plan_digest != r.digest => Some(format!(
                "it names plan {}, the standing request plan {}",
                fact.plan_digest.as_deref().unwrap_or("none"),
                r.digest.as_deref().unwrap_or("none")
            )),
            _ => None,
        };
        if let Some(why) = why {
            let mut g = gap(
                GapKind::MisplacedSeal,
                Some(&fact.op),
                Some(&fact.gate),
                format!(
                    "{place}: sealed approval of gate {:?} by {} answers no standing request ({why}): a replayed or misplaced seal, which opens nothing",
                    fact.gate,
                    fact.resolved_by.as_deref().unwrap_or("unknown")
                ),
            );
            at(&mut g);
            st.audit.gaps.push(g);
        }
    }
    if sealed_gate && !is_sealed {
        let mut g = gap(
            GapKind::Unsealed,
            Some(&fact.op),
            Some(&fact.gate),
            format!("{place}: gate {:?} needs a sealed approval, and this one carries no seal", fact.gate),
        );
        at(&mut g);
        st.audit.gaps.push(g);
    }
    st.approvals.push(Approval {
        id,
        op: fact.op.clone(),
        gate: fact.gate.clone(),
        resource: fact.resource.clone(),
        digest: fact.plan_digest.clone(),
        at: fact.timestamp.clone(),
        text: source.text.clone(),
        revoked: false,
        spent: false,
    });
}

/// Whether the commit that added `fact`'s line was authored by someone the line does not name.
fn committer_mismatch(source: &Source, fact: &GateFact) -> bool {
    let (Some(_), Some(author)) = (&source.commit, &source.author) else { return false };
    let email = source.email.as_deref().unwrap_or_default();
    if author == "chant" && (email.is_empty() || email == "chant@localhost") {
        return false;
    }
    let local = email.split('@').next().unwrap_or_default();
    let named = [fact.resolved_by.as_deref(), fact.relayed_by.as_deref()];
    !named
        .into_iter()
        .flatten()
        .any(|n| [author.as_str(), email, local].iter().any(|c| !c.is_empty() && c.eq_ignore_ascii_case(n)))
}

/// Whether instant `a` is at or before `b` (RFC 3339; text order when either does not parse).
fn not_after(a: &str, b: &str) -> bool {
    match (chant_store::clock::parse(a), chant_store::clock::parse(b)) {
        (Some(a), Some(b)) => a <= b,
        _ => a <= b,
    }
}

/// Spends the newest live approval of the gate at or before `at` (matching `digest` when both
/// carry one) and returns its id.
fn spend(
    st: &mut State,
    op: Option<&str>,
    gate: &str,
    resource: Option<&str>,
    digest: Option<&str>,
    at: &str,
) -> Option<String> {
    let a = st.approvals.iter_mut().rev().find(|a| {
        !a.revoked
            && !a.spent
            && a.gate == gate
            && op.is_none_or(|o| a.op == o)
            && (resource.is_none() || a.resource.as_deref() == resource)
            && match (digest, a.digest.as_deref()) {
                (Some(d), Some(ad)) => d == ad,
                _ => true,
            }
            && not_after(&a.at, at)
    })?;
    a.spent = true;
    Some(a.id.clone())
}

fn applied(input: &Input<'_>, st: &mut State, apply: &Apply) {
    let under = spend(st, apply.op.as_deref(), &apply.gate, None, apply.digest.as_deref(), &apply.at);
    let op = match &under {
        Some(id) => st.audit.entries.iter().find(|e| &e.id == id).map(|e| e.op.clone()),
        None => apply.op.clone(),
    }
    .unwrap_or_default();
    let over = (input.is_override)(&op, &apply.gate);
    let kind = if over { EntryKind::OverrideSpent } else { EntryKind::Applied };
    let entry = Entry {
        plan_digest: apply.digest.clone(),
        under: under.clone(),
        reference: Some(apply.reference.clone()),
        ..Entry::new(kind, op.clone(), apply.gate.clone(), apply.at.clone())
    };
    let record = serde_json::json!({ "at": apply.at, "digest": apply.digest, "gate": apply.gate, "op": apply.op });
    let id = push(input, &mut st.audit, entry, &Value::from(apply.reference.clone()), &record);
    if under.is_none() {
        let (kind, what) = if over { (GapKind::Override, "override") } else { (GapKind::Approval, "approval") };
        let digest = apply.digest.as_deref().map(|d| format!(" of plan {d}")).unwrap_or_default();
        let mut g = gap(
            kind,
            Some(&op).filter(|o| !o.is_empty()).map(String::as_str),
            Some(&apply.gate),
            format!(
                "{}: apply{digest} at {} through gate {:?} with no {what} behind it",
                apply.reference, apply.at, apply.gate
            ),
        );
        g.entry = Some(id);
        g.reference = Some(apply.reference.clone());
        st.audit.gaps.push(g);
    }
}
