//! `approve <op> <gate>`: record a resolution (or, with `--expire`, clear the standing pending
//! fact) on the ledger. Works in the stock binary too: it needs only the ledger. With a remote
//! configured it syncs first, so it decides on the request standing on the remote; the
//! resolution copies that request's `runId` and answers nothing else.

use clap::Args;

use super::error::println;
use super::{Binary, CommandError, Exit};
use crate::approval::{ApprovalUrl, Approver};
use crate::gate::{Decision, FactKind, GateFact};
use crate::ledger::{Ledger, RecordKind, ShardKey};
use crate::terminal::printable as p;

/// Approve a gate a run stopped at, or clear it with --expire
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The op that owns the gate, or the component (`chant approve <component> <gate>`) for a gate
    /// in a component's phases.
    pub op: String,
    /// The gate's name.
    pub gate: String,
    /// The resource, for a gate reached by a resource-mode dispatch.
    #[arg(long)]
    pub resource: Option<String>,
    /// Who approves (default: $USER): a printable one-line name of at most 64 characters.
    #[arg(long)]
    pub actor: Option<String>,
    /// Where the approval happened (an http:// or https:// URL with a host, no credentials).
    #[arg(long)]
    pub url: Option<String>,
    /// A note.
    #[arg(long)]
    pub note: Option<String>,
    /// Clear the standing pending fact without approving.
    #[arg(long)]
    pub expire: bool,
    /// Seal the approval with an SSH signature (`ssh-keygen -Y sign`, namespace `chant-gate`), as
    /// the actor; a gate declared `sealed = true` opens only on a sealed approval.
    #[arg(long, conflicts_with = "expire")]
    pub sign: bool,
    /// The private key to sign with (default: ~/.ssh/id_ed25519).
    #[arg(long, requires = "sign")]
    pub key: Option<std::path::PathBuf>,
    /// Print the plan the standing pending fact asks to approve, and record nothing.
    #[arg(long, conflicts_with = "expire")]
    pub show: bool,
    /// The workspace member whose ledger holds the gate, when the op name is ambiguous.
    #[arg(long)]
    pub member: Option<String>,
    /// Print one JSON document on stdout: `{version, outcome, recorded, fact}`, the fact
    /// recorded (or the standing resolution, or with --show the pending fact).
    #[arg(long)]
    pub json: bool,
}

/// What `approve --json` prints.
#[derive(Debug, serde::Serialize)]
struct Answer<'a> {
    /// The shape's version, 1.
    version: u32,
    /// `approved`, `cleared`, `already-approved` or `pending` (--show).
    outcome: &'static str,
    /// Whether a fact was appended to the ledger.
    recorded: bool,
    /// The fact appended, the resolution already standing, or the pending fact shown.
    fact: &'a GateFact,
}

fn answer(outcome: &'static str, recorded: bool, fact: &GateFact) -> Result<(), CommandError> {
    let line = super::error::to_json(&Answer { version: 1, outcome, recorded, fact }, "the approval")?;
    println(&line)
}

/// Who a person's recorded decision names (an approval, a suspend, a resume, an undamp):
/// `--actor`, else `$USER`, else the name of the git identity the ledger's commits are written
/// as, so a shell without `$USER` still records who decided.
///
/// # Errors
///
/// A name [`Approver::parse`] refuses, naming where it came from.
pub(super) fn actor(flag: Option<&str>, ledger: &crate::ledger::Ledger) -> Result<Approver, CommandError> {
    match (flag, std::env::var("USER")) {
        (Some(a), _) => Approver::parse(a).map_err(|e| CommandError::usage_with("--actor", e)),
        (None, Ok(user)) if !user.trim().is_empty() => {
            Approver::parse(&user).map_err(|e| CommandError::usage_with("$USER", e).hint("pass --actor"))
        }
        (None, _) => Approver::parse(&ledger.identity().name)
            .map_err(|e| CommandError::usage_with("git config user.name", e).hint("pass --actor")),
    }
}

/// Runs `approve`.
pub fn cmd_approve(binary: Binary, args: &ApproveArgs) -> Result<Exit, CommandError> {
    let url = args.url.as_deref().map(ApprovalUrl::parse).transpose();
    let url = url.map_err(|e| CommandError::usage_with("--url", e))?;
    let ledger = super::open_ledger()?;
    let actor = actor(args.actor.as_deref(), &ledger)?;
    sync_first(&ledger);
    // The owner is an op, or a component of the ops this binary carries (`chant approve
    // <component> <gate>`): its gates are recorded under its name.
    let compiled = compiled_ops();
    let owning: Vec<&crate::model::OpDocument> = compiled
        .iter()
        .filter(|d| d.name.as_str() == args.op || crate::model::component::declared(d).contains(&args.op.as_str()))
        .collect();
    // The stock binary never carries ops, and approving from it is the documented way: only a
    // project binary without the op is worth a word (a typo, or another project's op).
    if owning.is_empty() && binary != Binary::Stock {
        eprintln!(
            "warning: op `{}` is not compiled into this binary (this binary has no such op or component); recording against the ledger anyway",
            p(&args.op)
        );
    }
    let key = find_key(&ledger, args, owning.first().map(|d| d.member.clone()))?;
    let facts: Vec<GateFact> = match ledger.read_typed::<GateFact>(&key) {
        Ok(r) => r.records.into_iter().map(|stored| stored.record).collect(),
        Err(e) => return Err(e.into()),
    };
    check_gate_name(args, &owning, &facts)?;
    let now = ledger.clock().now();
    let pending = match crate::gate::decide(&facts, &args.op, &args.gate, args.resource.as_deref(), now) {
        Decision::Waiting { pending } => pending,
        // A sealed approval may follow one that is not (a sealed gate ignores those).
        Decision::Approved { pending, .. } if args.sign => pending,
        Decision::Approved { resolution, .. } => {
            eprintln!(
                "gate \"{}\" of {} is already approved by {} at {}; nothing recorded",
                p(&args.gate),
                p(&args.op),
                p(resolution.resolved_by.as_deref().unwrap_or("unknown")),
                p(&resolution.timestamp)
            );
            if args.json {
                answer("already-approved", false, &resolution)?;
            }
            return Ok(Exit::Done);
        }
        Decision::Ask => {
            let res = args.resource.as_deref().map(|r| format!(" for resource {}", p(r))).unwrap_or_default();
            return Err(CommandError::usage(format!(
                "gate \"{}\" of {}{res} has no standing pending fact (never reached, expired, or already used); nothing recorded. Run the op to reach the gate first",
                p(&args.gate),
                p(&args.op)
            )));
        }
    };
    // The plan shown and the digest approved are one: a request whose listed plan does not hash to
    // its recorded digest is refused before it is shown or approved (clearing it stays possible).
    if !args.expire {
        crate::gate::plan::check_recorded(&pending).map_err(|e| {
            CommandError::failed_with("refusing the request: its plan and digest disagree; nothing recorded", e)
                .hint("clear it with `chant approve --expire` and run the op again to record a fresh plan")
        })?;
    }
    if args.show {
        if args.json {
            answer("pending", false, &pending)?;
            return Ok(Exit::Done);
        }
        return show(args, &pending);
    }
    // Inside a pull- or merge-request job, that request is where the approval happens.
    let url = match url {
        Some(u) => Some(u.as_str().to_owned()),
        None => crate::gate::url::approval_url(&|name| std::env::var(name).ok()),
    };
    let mut fact = GateFact {
        version: 1,
        kind: if args.expire { FactKind::Expired } else { FactKind::Resolution },
        op: args.op.clone(),
        gate: args.gate.clone(),
        env: pending.env.clone(),
        resource: args.resource.clone(),
        description: None,
        resolved_by: Some(actor.as_str().to_owned()),
        note: args.note.clone(),
        url: url.clone(),
        run_id: pending.run_id.clone(),
        git_sha: pending.git_sha.clone(),
        timestamp: crate::clock::format(now),
        expires_at: None,
        plan_digest: pending.plan_digest.clone(),
        plan: None,
        relayed_by: None,
        seal: None,
        sealed: false,
        carried_from: None,
    };
    if args.sign {
        let path = match &args.key {
            Some(k) => k.clone(),
            None => match std::env::var_os("HOME") {
                Some(home) => std::path::Path::new(&home).join(".ssh/id_ed25519"),
                None => return Err(CommandError::usage("--sign: HOME is not set; pass --key <private key>")),
            },
        };
        let seal = crate::gate::seal::sign(&fact, &path, actor.as_str())
            .map_err(|e| CommandError::failed_with(format!("cannot seal the approval with {}", path.display()), e))?;
        fact.seal = Some(seal);
    }
    // The commit is authored by the actor the resolution names (committed by the repository's
    // git identity), so the audit can tell a resolution from the commit that pushed it.
    let receipt = ledger.with_actor(actor.as_str()).append_record(key.member(), &fact)?;
    for w in &receipt.warnings {
        eprintln!("warning: {w}");
    }
    let (gate, op, since) = (p(&args.gate), p(&args.op), p(&pending.timestamp));
    if args.json {
        answer(if args.expire { "cleared" } else { "approved" }, true, &fact)?;
    } else if args.expire {
        println(&format!("cleared gate \"{gate}\" of {op} (pending since {since}); the next run asks again"))?;
    } else {
        let at = url.as_deref().map(|u| format!(" ({})", p(u))).unwrap_or_default();
        println(&format!(
            "approved gate \"{gate}\" of {op} as {}{at} (pending since {since}, run {}); the next run walks through it",
            p(actor.as_str()),
            p(if pending.run_id.is_empty() { "unrecorded" } else { &pending.run_id })
        ))?;
        if let Some(seal) = &fact.seal {
            println(&format!("sealed as {} (namespace {})", seal.signer, crate::gate::seal::NAMESPACE))?;
        }
        if let Some(d) = &pending.plan_digest {
            println(&format!(
                "this approves the plan {d}, and only that plan: a run that finds another plan asks again"
            ))?;
        }
    }
    Ok(Exit::Done)
}

/// Brings the local ledger up to the remote's before deciding, when a remote is configured, so
/// the resolution answers the request standing there; when the remote cannot be read it says so
/// and decides on the local copy (the resolution still answers only the run it names).
fn sync_first(ledger: &Ledger) {
    let Some(remote) = ledger.config().remote.as_deref() else { return };
    let why = match ledger.sync() {
        Ok(report) => match report.push {
            crate::ledger::PushStatus::NotPushed { reason, .. } => reason,
            _ => return,
        },
        Err(e) => crate::error::chain(&e),
    };
    eprintln!(
        "warning: the ledger could not be synchronised with {} before deciding ({}); deciding on the local copy",
        p(remote),
        p(&why)
    );
}

/// Prints the plan the standing pending fact asks to approve (`approve --show`).
fn show(args: &ApproveArgs, pending: &GateFact) -> Result<Exit, CommandError> {
    let mut out = format!("gate \"{}\" of {} (pending since {})\n", p(&args.gate), p(&args.op), p(&pending.timestamp));
    if let Some(d) = &pending.description {
        out.push_str(&format!("  {}\n", p(d)));
    }
    match (&pending.plan_digest, &pending.plan) {
        (Some(d), Some(plan)) => {
            out.push_str(&format!("plan {d}\n"));
            for line in plan.lines() {
                out.push_str(&format!("  {line}\n"));
            }
        }
        (Some(d), None) => out.push_str(&format!("plan {d} (the pending fact records its digest only)\n")),
        (None, _) => out.push_str("this gate guards no planned change: approving it lets the next run through\n"),
    }
    super::error::print(&out)?;
    Ok(Exit::Done)
}

/// The op documents compiled into this binary (none in the stock binary).
fn compiled_ops() -> Vec<crate::model::OpDocument> {
    crate::registry::ops().iter().filter_map(|o| serde_json::from_str(o.json).ok()).collect()
}

/// Refuses a gate name the owner has never had: neither declared for it in the ops this binary
/// carries nor named by any fact of its ledger, with the closest such name (exit 2, nothing
/// recorded). A name the ledger knows is left to the decision (it may have expired or been used).
fn check_gate_name(
    args: &ApproveArgs,
    owning: &[&crate::model::OpDocument],
    facts: &[GateFact],
) -> Result<(), CommandError> {
    let mut names: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for doc in owning {
        for phase in &doc.phases {
            if crate::model::component::owner(doc, phase) != args.op {
                continue;
            }
            names.extend(phase.steps.iter().filter_map(|s| match s {
                crate::model::Step::Gate { name, .. } => Some(name.as_str()),
                _ => None,
            }));
        }
    }
    names.extend(facts.iter().filter(|f| f.op == args.op).map(|f| f.gate.as_str()));
    if names.is_empty() || names.contains(args.gate.as_str()) {
        return Ok(());
    }
    let hint = crate::model::contract::did_you_mean(&args.gate, names.iter().copied())
        .map(|s| format!("; did you mean \"{s}\"?"))
        .unwrap_or_default();
    let known: Vec<String> = names.iter().map(|n| format!("\"{}\"", p(n))).collect();
    Err(CommandError::usage(format!(
        "{} has no gate \"{}\"{hint} (its gates: {}); nothing recorded",
        p(&args.op),
        p(&args.gate),
        known.join(", ")
    )))
}

/// Finds the gate shard of the op: the known op's member, `--member`, or the one member whose
/// ledger has gate facts for the op (exit 2 listing them when several do).
fn find_key(
    ledger: &Ledger,
    args: &ApproveArgs,
    known_member: Option<Option<String>>,
) -> Result<ShardKey, CommandError> {
    if let Some(m) = &args.member {
        return Ok(ShardKey::gate(Some(m), &args.op)?);
    }
    if let Some(m) = known_member {
        return Ok(ShardKey::gate(m.as_deref(), &args.op)?);
    }
    let keys = ledger.keys()?;
    let matches: Vec<ShardKey> =
        keys.into_iter().filter(|k| k.kind() == RecordKind::Gate && k.op() == args.op).collect();
    let no_facts = || {
        CommandError::usage(format!(
            "no gate facts for op `{}` on the ledger; nothing recorded. Run the op to reach the gate first",
            p(&args.op)
        ))
    };
    match matches.len() {
        0 => Err(no_facts()),
        1 => matches.into_iter().next().ok_or_else(no_facts),
        _ => {
            // One message over several lines, each candidate on its own.
            let mut message =
                format!("op `{}` has gate facts in several members; pass --member with one of:", p(&args.op));
            for k in &matches {
                message.push_str(&format!("\n  --member {}", k.member().unwrap_or("(flat)")));
            }
            Err(CommandError::usage(message))
        }
    }
}
