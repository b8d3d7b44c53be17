//! A fast, non-cryptographic hasher for the verifier's and the runtime's tables (the
//! rotate–xor–multiply scheme of Firefox and rustc). The unfolding hashes every pending
//! operation of every step of every run, the runtime an address at every operation on a
//! condition variable, semaphore, rwlock or barrier and every spin-watched access; std's SipHash
//! is built to resist adversarial keys, which addresses and ids made by this process are not,
//! and cost several times as much here (a third of a relaxed run's time on an rwlock-heavy
//! program, by `perf`).

use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
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
        self.hash
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;
pub type FxHashSet<K> = std::collections::HashSet<K, FxBuild>;

/// A map whose keys are already hashes: the hasher passes the `u64` through.
#[derive(Clone, Copy, Default)]
pub struct PassHasher(u64);

impl Hasher for PassHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed with this; anything else still works, just slower.
        let mut h = FxHasher { hash: self.0 };
        h.write(bytes);
        self.0 = h.hash;
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type PassHashMap<V> = std::collections::HashMap<u64, V, BuildHasherDefault<PassHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    #[test]
    fn equal_keys_hash_equal_and_different_keys_spread() {
        let b = FxBuild::default();
        let h = |k: &(u32, Option<u32>)| b.hash_one(k);
        assert_eq!(h(&(1, Some(2))), h(&(1, Some(2))));
        let mut seen: Vec<u64> = (0..1000u32).flat_map(|a| [h(&(a, None)), h(&(a, Some(a)))]).collect();
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() >= 1990, "few collisions among small distinct keys: {}", 2000 - seen.len());
        let mut p = PassHasher::default();
        42u64.hash(&mut p);
        assert_eq!(p.finish(), 42);
    }
}
