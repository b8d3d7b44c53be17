//! The one bincode configuration every IRS file and embedded table uses: fixed-width
//! little-endian integers, and a size limit on decoding so that a corrupt length field cannot
//! make a reader allocate without bound.

use bincode::Options;

pub fn options() -> impl Options {
    bincode::DefaultOptions::new().with_fixint_encoding().with_little_endian()
}

pub fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    options().serialize(value).expect("serialising into memory cannot fail")
}

/// Decode exactly `bytes` (no trailing bytes) with allocations bounded by a multiple of its size.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, bincode::Error> {
    options().with_limit(bytes.len() as u64 * 8 + 1024).reject_trailing_bytes().deserialize(bytes)
}
