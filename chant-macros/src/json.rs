//! The byte form of op.json: the typed [`OpDocument`] serialised by serde in its declared field
//! order (maps are `BTreeMap`s), pretty-printed, with a trailing newline. The embedded copy and the
//! exported file are these same bytes, and the runtime's round-trip test re-serialises them
//! identically.

use chant_core::op::OpDocument;

/// Returns the op.json bytes of `doc`.
///
/// # Errors
///
/// Returns serde's error, which the model's types make unreachable in practice.
pub(crate) fn to_bytes(doc: &OpDocument) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}
