//! Little-endian fields of fixed-layout byte records (the explore buffer, the prefix segment,
//! the fork-server frames). The plain accessors panic on an out-of-range offset (callers check
//! sizes first); the `try_` ones return `None`, for decoding untrusted input. The plain ones are
//! `#[inline]`: the runtime's buffer writes (generic, so compiled in the runtime's crate) call
//! them at every decision.

#[inline]
pub fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[inline]
pub fn get64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[inline]
pub fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub fn try_get32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

pub fn try_get64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trip_and_bounds() {
        let mut b = [0u8; 12];
        put32(&mut b, 0, 7);
        put64(&mut b, 4, u64::MAX - 1);
        assert_eq!((get32(&b, 0), get64(&b, 4)), (7, u64::MAX - 1));
        assert_eq!(try_get32(&b, 9), None);
        assert_eq!(try_get64(&b, usize::MAX), None);
    }
}
