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

/// Verifies the seal of `fact` against the allowed-signers file at `allowed`; returns the
/// principal it names.
///
/// # Errors
///
/// [`SealError::Unsealed`] without a seal, [`SealError::MissingAllowedSigners`],
/// [`SealError::Refused`] when the signature does not verify for that principal (another key, a
/// principal the file does not list, a line edited after signing).
pub fn verify(fact: &GateFact, allowed: &Path) -> Result<String, SealError> {
    let Some(seal) = fact.seal.as_ref().filter(|_| fact.kind == FactKind::Resolution) else {
        return Err(SealError::Unsealed);
    };
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

/// The resolutions that answer the standing pending fact of (`op`, `gate`, `resource`), in
/// ledger order: those after it, up to the first fact that spends or clears it.
pub fn answering<'a>(facts: &'a [GateFact], op: &str, gate: &str, resource: Option<&str>) -> Vec<&'a GateFact> {
    let mine: Vec<&GateFact> = facts.iter().filter(|f| f.is_for(op, gate, resource)).collect();
    let Some(pi) = mine.iter().rposition(|f| f.kind == FactKind::Pending) else { return Vec::new() };
    mine[pi + 1..]
        .iter()
        .take_while(|f| !matches!(f.kind, FactKind::Expired | FactKind::Passed))
        .filter(|f| f.kind == FactKind::Resolution)
        .copied()
        .collect()
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
