//! The one fast hasher of the crate: rustc's multiplicative `FxHasher`, for
//! the tables that lowering, printing and analysis consult once or more per
//! node or token (names, graph numbers, node addresses, ids). SipHash, the
//! standard hasher, made those lookups a fifth of the time lowering a large
//! model took; its resistance to chosen collisions buys nothing for a file
//! the user edits.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hash map with [`FxHasher`].
pub type FxMap<K, V> = HashMap<K, V, FxBuild>;
/// A hash set with [`FxHasher`].
#[allow(dead_code)]
pub type FxSet<K> = HashSet<K, FxBuild>;
/// What `HashMap::default()` needs to make an [`FxHasher`].
pub type FxBuild = BuildHasherDefault<FxHasher>;

#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0xf135_7aea_2e62_a9c5;

    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            // The length keeps `ab` and `ab\0` apart.
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The product's best bits are its high ones; hash tables index
        // buckets with the low ones (and addresses end in zero bits).
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash(value: impl Hash) -> u64 {
        let mut h = FxHasher::default();
        value.hash(&mut h);
        h.finish()
    }

    #[test]
    fn distinguishes_trailing_zero_bytes_and_nearby_addresses() {
        assert_ne!(hash(b"ab".as_slice()), hash(b"ab\0".as_slice()));
        assert_ne!(hash("x"), hash("y"));
        // Addresses 16 bytes apart land in different low bits.
        let buckets: HashSet<u64> = (0..64u64)
            .map(|i| hash(0x7f00_0000_1000 + 16 * i) & 63)
            .collect();
        assert!(buckets.len() > 32, "{} buckets", buckets.len());
    }
}
