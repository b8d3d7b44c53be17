//! A small stable 64-bit hash (FNV-1a). Used for module and program ids, which must be the same
//! in every build of the same input and on every machine, so std's randomised hashers won't do.

#[derive(Clone, Copy, Debug)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl StableHasher {
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// FNV-1a over 8-byte little-endian words (the tail byte by byte): the same on every
    /// machine, a multiply per word instead of per byte (prefix tables run to megabytes and
    /// are checked at every start of a run). Any change of one word changes the result: xor,
    /// a multiply by an odd number and an xor-shift are all one-to-one.
    pub fn write_words(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.0 ^= u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            // A multiply only carries a difference upwards: without folding the high half down,
            // the same high bit flipped in two words would cancel out.
            self.0 ^= self.0 >> 29;
        }
        self.write(chunks.remainder());
    }
    pub fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
    pub fn finish(self) -> u64 {
        self.0
    }
}

pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut h = StableHasher::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn known_fnv1a_values() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_change_of_any_byte_changes_the_word_hash() {
        let words = |b: &[u8]| {
            let mut h = StableHasher::default();
            h.write_words(b);
            h.finish()
        };
        let base: Vec<u8> = (0..37u8).collect();
        for i in 0..base.len() {
            let mut b = base.clone();
            b[i] ^= 0x40;
            assert_ne!(words(&b), words(&base), "byte {i}");
        }
        assert_ne!(words(&base[..36]), words(&base), "the tail counts");
        let mut high = base.clone();
        high[7] ^= 0x80;
        high[15] ^= 0x80;
        assert_ne!(words(&high), words(&base), "the top bit of two words");
    }
}
