//! Sealed approvals. `approve --sign` seals a resolution with an SSH signature
//! (`ssh-keygen -Y sign`, namespace [`NAMESPACE`]) over its canonical line without the seal
//! ([`payload`]); a gate declared `gate("force", sealed = true)` opens only on a resolution whose
//! seal verifies (`ssh-keygen -Y verify`) against the project's allowed-signers file
//! (`[gates] allowed_signers` in `chant.toml`) for the principal the seal names. A line edited
//! after signing no longer verifies. Both run `ssh-keygen` through [`chant_store::process`].

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{FactKind, GateFact};

/// The signature namespace of gate approvals.
pub const NAMESPACE: &str = "chant-gate";

/// How long `ssh-keygen` may take (a passphrase prompt never comes: stdin is the payload).
const TIMEOUT: Duration = Duration::from_secs(30);

/// The seal on a resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSeal {
    /// The principal that signed, as the allowed-signers file names it.
    pub signer: String,
    /// The armoured SSH signature (`-----BEGIN SSH SIGNATURE-----`).
    pub signature: String,
}

/// Why a resolution could not be sealed, or its seal does not open a gate.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The resolution carries no seal.
    #[error("the approval carries no seal (approve with --sign)")]
    Unsealed,
    /// No allowed-signers file is configured.
    #[error("chant.toml names no allowed-signers file: add `[gates] allowed_signers = \"<path>\"`")]
    NoAllowedSigners,
    /// The allowed-signers file is missing.
    #[error("the allowed-signers file {path} does not exist")]
    MissingAllowedSigners {
        /// Its path.
        path: String,
    },
    /// The allowed-signers file is not in the commit HEAD points at (a file only in the work
    /// tree, or edited and never committed, is not trusted).
    #[error("the allowed-signers file {path} is not committed (HEAD holds no such file); commit it")]
    UncommittedAllowedSigners {
        /// Its path.
        path: String,
    },
    /// The committed allowed-signers file could not be read.
    #[error("cannot read the committed allowed-signers file {path}")]
    ReadAllowedSigners {
        /// Its path.
        path: String,
        /// Why.
        #[source]
        source: chant_store::git::Error,
    },
    /// `ssh-keygen` refused to sign or the seal did not verify.
    #[error("ssh-keygen -Y {verb}: {message}")]
    Refused {
        /// `sign` or `verify`.
        verb: &'static str,
        /// What it said.
        message: String,
    },
    /// `ssh-keygen` could not be run.
    #[error("cannot run ssh-keygen")]
    Spawn(#[source] chant_store::process::Error),
    /// A scratch file for the signature could not be written.
    #[error("cannot write the signature to a scratch file")]
    Scratch(#[source] std::io::Error),
    /// The line could not be encoded.
    #[error(transparent)]
    Encode(#[from] chant_store::ledger::Error),
    /// The sealed line answers another request than the standing one (a replayed or misplaced
    /// seal), or names none.
    #[error("the seal covers {sealed}, not the standing request {standing}")]
    OtherRequest {
        /// The request the sealed line names (`run <id>, plan <digest>`).
        sealed: String,
        /// The standing request.
        standing: String,
    },
}

/// The request a fact names, in words: `run <id>`, its plan digest when it has one, and where it
/// stands (`gate force of site-force in env site`).
fn request(fact: &GateFact) -> String {
    let run = if fact.run_id.is_empty() { "no run".to_owned() } else { format!("run {}", fact.run_id) };
    let plan = fact.plan_digest.as_deref().map(|d| format!(", plan {d}")).unwrap_or_default();
    let res = fact.resource.as_deref().map(|r| format!(" resource {r}")).unwrap_or_default();
    format!("{run}{plan} (gate {} of {}{res} in env {})", fact.gate, fact.op, fact.env)
}

/// Checks that resolution `fact` answers `pending`: the same op, gate, resource and env, the
/// `runId` it copied (never empty) and the same plan digest. These fields are part of the signed
/// line, so a seal that passes this check and [`verify`] was made for this request.
///
/// # Errors
///
/// [`SealError::OtherRequest`] naming both requests.
pub fn covers(fact: &GateFact, pending: &GateFact) -> Result<(), SealError> {
    let same = !fact.run_id.is_empty()
        && fact.run_id == pending.run_id
        && fact.op == pending.op
        && fact.gate == pending.gate
        && fact.resource == pending.resource
        && fact.env == pending.env
        && fact.plan_digest == pending.plan_digest;
    if same {
        return Ok(());
    }
    Err(SealError::OtherRequest { sealed: request(fact), standing: request(pending) })
}

/// The bytes a seal signs: the fact's canonical line, without its seal.
///
/// # Errors
///
/// [`SealError::Encode`], which the types make impossible in practice.
pub fn payload(fact: &GateFact) -> Result<String, SealError> {
    let mut bare = fact.clone();
    bare.seal = None;
    Ok(chant_store::ledger::encode(&bare)?)
}

fn keygen(args: &[&str], stdin: &str, verb: &'static str) -> Result<String, SealError> {
    let mut spec = chant_store::process::Spec::new("ssh-keygen");
    spec.args = args.iter().map(|a| (*a).to_owned()).collect();
    spec.stdin = Some(stdin.as_bytes().to_vec());
    spec.timeout = TIMEOUT;
    let out = chant_store::process::run(&spec).map_err(SealError::Spawn)?;
    if out.success() {
        return Ok(out.stdout);
    }
    let said = out.stderr.lines().chain(out.stdout.lines()).map(str::trim).find(|l| !l.is_empty());
    Err(SealError::Refused { verb, message: said.unwrap_or("failed").to_owned() })
}

/// Seals `fact` (a resolution) with the private key at `key`, as principal `signer`.
///
/// # Errors
///
/// [`SealError::Refused`] when `ssh-keygen` will not sign (no such key, a passphrase it cannot
/// ask for), [`SealError::Spawn`] when it cannot be run.
pub fn sign(fact: &GateFact, key: &Path, signer: &str) -> Result<GateSeal, SealError> {
    let key = key.to_string_lossy();
    let signature = keygen(&["-Y", "sign", "-f", &key, "-n", NAMESPACE], &payload(fact)?, "sign")?;
    Ok(GateSeal { signer: signer.to_owned(), signature })
}

/// Verifies the seal of `fact`, a resolution of the standing request `pending`, against the
/// allowed-signers file at `allowed`; returns the principal it names.
///
/// # Errors
///
/// [`SealError::Unsealed`] without a seal, [`SealError::OtherRequest`] when the sealed line
/// answers another request ([`covers`]), [`SealError::MissingAllowedSigners`],
/// [`SealError::Refused`] when the signature does not verify for that principal (another key, a
/// principal the file does not list, a line edited after signing).
pub fn verify(fact: &GateFact, pending: &GateFact, allowed: &Path) -> Result<String, SealError> {
    let Some(seal) = fact.seal.as_ref().filter(|_| fact.kind == FactKind::Resolution) else {
        return Err(SealError::Unsealed);
    };
    covers(fact, pending)?;
    if !allowed.is_file() {
        return Err(SealError::MissingAllowedSigners { path: allowed.display().to_string() });
    }
    let mut sig = tempfile::NamedTempFile::new().map_err(SealError::Scratch)?;
    std::io::Write::write_all(&mut sig, seal.signature.as_bytes()).map_err(SealError::Scratch)?;
    let allowed = allowed.to_string_lossy();
    let sig_path = sig.path().to_string_lossy().into_owned();
    let args = ["-Y", "verify", "-f", &allowed, "-I", &seal.signer, "-n", NAMESPACE, "-s", &sig_path];
    keygen(&args, &payload(fact)?, "verify")?;
    Ok(seal.signer.clone())
}

/// As [`verify`], against the allowed-signers file `allowed` as the commit HEAD of `repo` holds
/// it, never the work tree's copy: an edit nobody committed (a key added to let oneself in) is
/// not honoured.
///
/// # Errors
///
/// As [`verify`]; [`SealError::UncommittedAllowedSigners`] when HEAD holds no such file,
/// [`SealError::ReadAllowedSigners`] when it cannot be read.
pub fn verify_committed(
    fact: &GateFact,
    pending: &GateFact,
    repo: &chant_store::git::Repo,
    allowed: &Path,
) -> Result<String, SealError> {
    if fact.seal.is_none() || fact.kind != FactKind::Resolution {
        return Err(SealError::Unsealed);
    }
    covers(fact, pending)?;
    let path = || allowed.display().to_string();
    let bytes =
        repo.committed_file(allowed).map_err(|source| SealError::ReadAllowedSigners { path: path(), source })?;
    let Some(bytes) = bytes else {
        return Err(if allowed.is_file() {
            SealError::UncommittedAllowedSigners { path: path() }
        } else {
            SealError::MissingAllowedSigners { path: path() }
        });
    };
    let mut copy = tempfile::NamedTempFile::new().map_err(SealError::Scratch)?;
    std::io::Write::write_all(&mut copy, &bytes).map_err(SealError::Scratch)?;
    verify(fact, pending, copy.path())
}

/// The resolutions after the standing pending fact of (`op`, `gate`, `resource`), in ledger
/// order, up to the first fact that spends or clears it, whichever request they name (a run
/// checks each against the request with [`verify`], and says why one does not count).
pub fn after_standing<'a>(facts: &'a [GateFact], op: &str, gate: &str, resource: Option<&str>) -> Vec<&'a GateFact> {
    let mine: Vec<&GateFact> = facts.iter().filter(|f| f.is_for(op, gate, resource)).collect();
    let Some(pi) = mine.iter().rposition(|f| f.kind == FactKind::Pending) else { return Vec::new() };
    mine[pi + 1..]
        .iter()
        .take_while(|f| !matches!(f.kind, FactKind::Expired | FactKind::Passed))
        .filter(|f| f.kind == FactKind::Resolution)
        .copied()
        .collect()
}

/// The resolutions that answer the standing pending fact of (`op`, `gate`, `resource`), in
/// ledger order: those of [`after_standing`] that carry its `runId` (or, the original's, none).
/// A resolution of another request is never among them.
pub fn answering<'a>(facts: &'a [GateFact], op: &str, gate: &str, resource: Option<&str>) -> Vec<&'a GateFact> {
    let mine: Vec<&GateFact> = facts.iter().filter(|f| f.is_for(op, gate, resource)).collect();
    let Some(pending) = mine.iter().rev().find(|f| f.kind == FactKind::Pending) else { return Vec::new() };
    after_standing(facts, op, gate, resource).into_iter().filter(|f| f.answers(pending)).collect()
}

/// The pending facts of sealed gates among `facts` that resolutions answer but none carries a
/// seal: for views that read the ledger alone (and cannot verify a seal), such a gate still
/// stands. One per (op, gate, resource), in the order met.
pub fn unsealed_standing(facts: &[GateFact], now: jiff::Timestamp) -> Vec<super::PendingGate> {
    let mut out: Vec<super::PendingGate> = Vec::new();
    for f in facts.iter().filter(|f| f.kind == FactKind::Pending && f.sealed) {
        let (op, gate, resource) = (f.op.as_str(), f.gate.as_str(), f.resource.as_deref());
        if out.iter().any(|p| p.fact.is_for(op, gate, resource)) {
            continue;
        }
        if let super::Decision::Approved { pending, .. } = super::decide(facts, op, gate, resource, now)
            && pending.sealed
            && answering(facts, op, gate, resource).iter().all(|r| r.seal.is_none())
        {
            out.push(super::PendingGate { fact: *pending });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(kind: FactKind, run: &str) -> GateFact {
        let line = serde_json::json!({"version": 1, "kind": kind, "op": "site-force", "gate": "force", "env": "site",
            "runId": run, "timestamp": "2026-03-01T10:00:00.000Z", "planDigest": "sha256:aa", "resolvedBy": "alex",
            "expiresAt": "2026-03-01T11:00:00.000Z"});
        serde_json::from_value(line).unwrap()
    }

    #[test]
    fn a_seal_covers_only_the_request_whose_run_and_plan_it_names() {
        let pending = fact(FactKind::Pending, "r2");
        assert!(covers(&fact(FactKind::Resolution, "r2"), &pending).is_ok());
        let old = covers(&fact(FactKind::Resolution, "r1"), &pending).unwrap_err().to_string();
        assert!(old.contains("covers run r1, plan sha256:aa"), "{old}");
        assert!(old.contains("not the standing request run r2, plan sha256:aa"), "{old}");
        let mut other_plan = fact(FactKind::Resolution, "r2");
        other_plan.plan_digest = Some("sha256:bb".into());
        assert!(covers(&other_plan, &pending).is_err());
        let mut other_env = fact(FactKind::Resolution, "r2");
        other_env.env = "prod".into();
        assert!(covers(&other_env, &pending).is_err());
        // An older writer's sealed line that names no run answers no request.
        let mut unnamed = fact(FactKind::Resolution, "");
        unnamed.run_id = String::new();
        let mut original = pending.clone();
        original.run_id = String::new();
        assert!(covers(&unnamed, &original).is_err());
    }

    #[test]
    fn a_resolution_of_another_request_is_not_answering() {
        let facts = [fact(FactKind::Pending, "r2"), fact(FactKind::Resolution, "r1"), fact(FactKind::Resolution, "r2")];
        assert_eq!(after_standing(&facts, "site-force", "force", None).len(), 2);
        let answering = answering(&facts, "site-force", "force", None);
        assert_eq!(answering.len(), 1);
        assert_eq!(answering[0].run_id, "r2");
    }
}
