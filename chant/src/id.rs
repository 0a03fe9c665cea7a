//! Record ids: random UUID v4 strings for ticks and runs, and fencing tokens.

use std::io::Read;

/// Returns a random UUID v4 (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
pub fn uuid() -> String {
    let mut b = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// Returns `n` random hex characters (at most 32).
pub fn hex(n: usize) -> String {
    random_bytes().iter().map(|x| format!("{x:02x}")).collect::<String>().chars().take(n).collect()
}

fn random_bytes() -> [u8; 16] {
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok();
    if !ok {
        // No /dev/urandom: fall back to the clock, the pid and a hash; unique enough for ids.
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let seed = format!("{nanos}:{}", std::process::id());
        let h1 = crate::model::contract::fnv1a64(seed.as_bytes());
        let h2 = crate::model::contract::fnv1a64(&h1.to_le_bytes());
        b[..8].copy_from_slice(&h1.to_le_bytes());
        b[8..].copy_from_slice(&h2.to_le_bytes());
    }
    b
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_v4_and_distinct() {
        let a = super::uuid();
        let b = super::uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert_eq!(super::hex(8).len(), 8);
    }
}
