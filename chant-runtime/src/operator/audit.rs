//! `operator audit`: the gate audit ([`crate::gate::audit`]) over the real ledger. Every gate
//! file of the ledger branch (the original's `_gates/<op>.jsonl` and chant's shards under
//! `_gates/<op>/`) is read from `git log -p --unified=0` of the branch, so each line keeps the
//! commit that added it, and a line a later commit removed is a revocation by that commit's
//! author. A gate file the log shows nothing of (a shallow clone) is read from the tree as it
//! stands instead: its lines without a commit, records re-encoded as canonical JSON.
//!
//! Beside the gates, the audit lists every write of an env's accepted observation baseline
//! (`*/observation-baseline.json`) with the commit, its author and whether it is chant's own
//! document write (the `Chant-Document:` trailer naming the path, and no other change); one that
//! is not is a `foreign-baseline` gap: chant does not honour it.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use crate::gate::audit::{self, Audit, GateLedger, Input, Source};
use crate::terminal::printable;
use chant_store::ledger::{BRANCH, Ledger, RecordKind, ShardKey};

/// Why the audit could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] chant_store::ledger::Error),
    /// git could not be run.
    #[error("cannot read the gate ledger's history")]
    Git(#[source] chant_store::git::cmd::Error),
    /// git refused the log.
    #[error("git log of {path} refused: {message}")]
    Log {
        /// The gate file or directory.
        path: String,
        /// git's words.
        message: String,
    },
    /// `--op` is not an op name.
    #[error("invalid op {0:?}: names are lowercase letters, digits and -, starting with a letter")]
    InvalidOp(String),
}

/// The audit as `operator audit --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditView {
    /// Always 1.
    pub version: u32,
    /// The ops whose gate ledgers were read, sorted.
    pub ops: Vec<String>,
    /// The entries and gaps.
    #[serde(flatten)]
    pub audit: Audit,
    /// Every write of an env's observation baseline, oldest first.
    pub baselines: Vec<BaselineWrite>,
}

/// One commit that wrote an env's accepted observation baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineWrite {
    /// The document's path on the ledger branch.
    pub path: String,
    /// The commit.
    pub commit: String,
    /// Its author date.
    pub at: String,
    /// Its author.
    pub committed_by: String,
    /// The author's e-mail.
    pub email: String,
    /// Whether it is chant's own write (`lifecycle diff --update-baseline`, `lifecycle baseline`).
    pub by_chant: bool,
}

/// The format of the baseline log: record separator, id, date, author, e-mail, the
/// `Chant-Document:` trailer values, then the names git lists after it.
const BASELINE_LOG: &str = "%x1e%H%x1f%aI%x1f%an%x1f%ae%x1f%(trailers:key=Chant-Document,valueonly,separator=%x1d)%x1f";

/// Parses the output of `git log --full-diff --name-only --format=`[`BASELINE_LOG`].
fn baseline_writes(log: &str) -> Vec<BaselineWrite> {
    let mut out = Vec::new();
    for record in log.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let fields: Vec<&str> = record.split('\u{1f}').collect();
        let [commit, at, author, email, trailers, names] = fields.as_slice() else { continue };
        let names: Vec<&str> = names.lines().map(str::trim).filter(|n| !n.is_empty()).collect();
        let documents: Vec<&str> = trailers.split('\u{1d}').map(str::trim).filter(|t| !t.is_empty()).collect();
        for path in names.iter().filter(|n| n.ends_with("observation-baseline.json")) {
            out.push(BaselineWrite {
                path: (*path).to_owned(),
                commit: (*commit).to_owned(),
                at: (*at).to_owned(),
                committed_by: (*author).to_owned(),
                email: (*email).to_owned(),
                by_chant: names.len() == 1 && documents == [*path],
            });
        }
    }
    out
}

/// Every write of an env baseline on the ledger branch.
fn baselines(ledger: &Ledger) -> Result<Vec<BaselineWrite>, Error> {
    let format = format!("--format={BASELINE_LOG}");
    let args = [
        "log",
        "--first-parent",
        "--reverse",
        "--full-diff",
        "--name-only",
        &format,
        BRANCH,
        "--",
        ":(glob)**/observation-baseline.json",
    ];
    let out = ledger.git().run("log", &args).map_err(Error::Git)?;
    if !out.success() {
        return Err(Error::Log { path: "observation baselines".to_owned(), message: out.stderr.trim().to_owned() });
    }
    Ok(baseline_writes(&out.stdout))
}

/// Reads the gate ledgers of every op (or only `op`) with their history, and audits them with
/// `sealed` saying which gates need a seal.
///
/// # Errors
///
/// Ledger and git errors; [`Error::InvalidOp`] for a bad `op`.
pub fn audit(ledger: &Ledger, op: Option<&str>, sealed: &dyn Fn(&str, &str) -> bool) -> Result<AuditView, Error> {
    if let Some(o) = op.filter(|o| !super::is_name(o)) {
        return Err(Error::InvalidOp(o.to_owned()));
    }
    let mut keys: Vec<ShardKey> =
        ledger.keys()?.into_iter().filter(|k| k.kind() == RecordKind::Gate && op.is_none_or(|o| k.op() == o)).collect();
    keys.sort();
    let mut ledgers = Vec::new();
    if ledger.tip()?.is_some() {
        for key in &keys {
            ledgers.push(GateLedger { op: key.op().to_owned(), lines: lines(ledger, key)? });
        }
    }
    let ops: BTreeSet<String> = keys.iter().map(|k| k.op().to_owned()).collect();
    let mut input = Input::new(&ledgers);
    input.sealed = sealed;
    let mut derived = audit::derive(&input);
    let baselines = if op.is_none() && ledger.tip()?.is_some() { baselines(ledger)? } else { Vec::new() };
    for b in baselines.iter().filter(|b| !b.by_chant) {
        derived.gaps.push(audit::Gap {
            kind: audit::GapKind::ForeignBaseline,
            op: None,
            gate: None,
            message: format!(
                "{}: written by {} <{}> in {}, not by chant's baseline command; chant does not honour it",
                b.path, b.committed_by, b.email, b.commit
            ),
            entry: None,
            reference: Some(b.commit.clone()),
            source: None,
        });
    }
    Ok(AuditView { version: 1, ops: ops.into_iter().collect(), audit: derived, baselines })
}

/// The lines of one gate key: its history from the log, then any line of the tree the log did
/// not show.
fn lines(ledger: &Ledger, key: &ShardKey) -> Result<Vec<Source>, Error> {
    let dir = key.dir();
    let legacy = key.legacy_path();
    let mut paths: Vec<&str> = vec![&dir];
    if let Some(l) = &legacy {
        paths.insert(0, l);
    }
    let log = ledger
        .git()
        .log_patches(BRANCH, &paths, audit::LOG_FORMAT)
        .map_err(Error::Git)?
        .map_err(|e| Error::Log { path: dir.clone(), message: e.0 })?;
    let mut out = audit::lines_from_log(&log);
    // What the tree holds now, to catch lines with no history here (a shallow clone).
    let now = ledger.read(key)?;
    let mut standing: Vec<Source> = now
        .records
        .iter()
        .map(|r| (r.path.clone(), r.line, chant_store::canonical::to_string(&r.value).unwrap_or_default()))
        .chain(now.unreadable.iter().map(|u| (u.path.clone(), u.line, u.text.clone())))
        .map(|(path, line, text)| Source::at(&path, line, &text))
        .collect();
    let logged: BTreeSet<&str> = out.iter().filter(|s| !s.removed).map(|s| s.path.as_str()).collect();
    standing.retain(|s| !logged.contains(s.path.as_str()));
    out.extend(standing);
    Ok(out)
}

/// The human form: one line per entry, then the gaps. Every text read from the ledger is shown
/// escaped ([`printable`]), so no line can drive the reader's terminal or forge another.
pub fn render(view: &AuditView) -> String {
    let p = printable;
    let mut s = String::new();
    for e in &view.audit.entries {
        let _ = write!(s, "{}  {:<20}  {}/{}", p(&e.at), kind(e.kind), p(&e.op), p(&e.gate));
        if let Some(a) = &e.approver {
            let _ = write!(s, " by {}", p(a));
        }
        if let Some(r) = &e.relayed_by {
            let _ = write!(s, ", relayed by {}", p(r));
        }
        if let Some(seal) = e.seal {
            let _ = write!(
                s,
                " [{}]",
                serde_json::to_value(seal).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
            );
        }
        if let Some(c) = &e.committed_by {
            let _ = write!(s, " committed by {}", p(c));
            if e.committer_mismatch {
                s.push_str(" (not the approver)");
            }
        }
        if let Some(src) = &e.source {
            let _ = write!(s, "  ({}:{}", p(&src.path), src.line);
            if let Some(c) = &src.commit {
                let short: String = c.chars().take(8).collect();
                let _ = write!(s, " @{}", p(&short));
                if src.removed {
                    let _ = write!(s, " removed by {}", p(src.author.as_deref().unwrap_or("?")));
                }
            }
            s.push(')');
        }
        s.push('\n');
    }
    for b in &view.baselines {
        let by = if b.by_chant { "" } else { " (not by chant)" };
        let _ = writeln!(
            s,
            "{}  baseline              {} by {} <{}>{by}  (@{})",
            p(&b.at),
            p(&b.path),
            p(&b.committed_by),
            p(&b.email),
            p(&b.commit.chars().take(8).collect::<String>())
        );
    }
    if view.audit.gaps.is_empty() {
        let _ = writeln!(s, "no gaps ({} entries over {} gate ledgers)", view.audit.entries.len(), view.ops.len());
    } else {
        let _ = writeln!(s, "gaps ({}):", view.audit.gaps.len());
        for g in &view.audit.gaps {
            let _ = writeln!(s, "  {}  {}", gap_kind(g.kind), p(&g.message));
        }
    }
    s
}

fn kind(k: audit::EntryKind) -> String {
    serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn gap_kind(k: audit::GapKind) -> String {
    serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_writes_are_chants_only_with_the_trailer_and_no_other_change() {
        let log = "\u{1e}c1\u{1f}2026-03-01T10:00:00+00:00\u{1f}Lee\u{1f}lee@example.org\u{1f}site/observation-baseline.json\u{1f}\n\nsite/observation-baseline.json\n\
                   \u{1e}c2\u{1f}2026-03-01T11:00:00+00:00\u{1f}mallory\u{1f}m@example.org\u{1f}\u{1f}\n\nsite/observation-baseline.json\n\
                   \u{1e}c3\u{1f}2026-03-01T12:00:00+00:00\u{1f}mallory\u{1f}m@example.org\u{1f}site/observation-baseline.json\u{1f}\n\nsite/observation-baseline.json\nsite/x/0/0.jsonl\n";
        let writes = baseline_writes(log);
        let seen: Vec<(&str, &str, bool)> =
            writes.iter().map(|w| (w.commit.as_str(), w.committed_by.as_str(), w.by_chant)).collect();
        assert_eq!(seen, [("c1", "Lee", true), ("c2", "mallory", false), ("c3", "mallory", false)]);
    }
}
