//! Random identifiers: UUID v4 strings for ticks, runs and fencing tokens, and short random hex
//! for holder ids, all from the operating system's generator (`getrandom`).
//!
//! There is no fallback: when the generator fails, every function here fails with
//! [`Unavailable`], and the caller refuses to mint the token or the record. A fencing token
//! guessed from the clock and the pid would let two holders believe they hold the same lease.

/// The operating system's random number generator failed.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the operating system's random number generator failed, so no id or fencing token can be minted")]
pub struct Unavailable(#[source] getrandom::Error);

/// Returns `N` random bytes.
///
/// # Errors
///
/// [`Unavailable`] when the generator fails.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], Unavailable> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(Unavailable)?;
    Ok(bytes)
}

/// Returns a random `u64`.
///
/// # Errors
///
/// [`Unavailable`] when the generator fails.
pub fn random_u64() -> Result<u64, Unavailable> {
    random_bytes::<8>().map(u64::from_le_bytes)
}

/// Returns a random UUID v4 (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
///
/// # Errors
///
/// [`Unavailable`] when the generator fails.
pub fn uuid() -> Result<String, Unavailable> {
    let mut b = random_bytes::<16>()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]))
}

/// Returns `n` random hex characters (at most 32).
///
/// # Errors
///
/// [`Unavailable`] when the generator fails.
pub fn hex(n: usize) -> Result<String, Unavailable> {
    let bytes = random_bytes::<16>()?;
    Ok(bytes.iter().map(|x| format!("{x:02x}")).collect::<String>().chars().take(n).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_v4_and_distinct() {
        let a = super::uuid().unwrap();
        let b = super::uuid().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        assert_eq!(super::hex(8).unwrap().len(), 8);
        assert_ne!(super::random_u64().unwrap(), super::random_u64().unwrap());
    }
}
