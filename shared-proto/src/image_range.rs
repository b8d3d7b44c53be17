//! Where a program's own statics lie: its executable's image, from its first byte to the end of
//! its `.bss`. An address inside is named by its offset from the image's start, which is the
//! same in every process of one binary whatever address the loader chose (ASLR), so that a
//! prefix built from one process's trace names the statics of another (the prefix's object
//! index, `prefix_objects`; DESIGN §4's prefix barrier as docs/src/enforce.md restates it).

use serde::{Deserialize, Serialize};

/// The executable's image in one process (`start..end`; both 0 when unknown: nothing is inside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageRange {
    pub start: u64,
    pub end: u64,
}

impl ImageRange {
    /// `addr`'s offset in the image, if it lies inside.
    pub fn offset(&self, addr: u64) -> Option<u64> {
        (addr >= self.start && addr < self.end).then(|| addr - self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_named_by_its_offset_inside_the_image_only() {
        let here = ImageRange { start: 0x5000, end: 0x9000 };
        let there = ImageRange { start: 0x7f00_0000, end: 0x7f00_4000 };
        assert_eq!(here.offset(0x5010), there.offset(0x7f00_0010));
        assert_eq!(here.offset(0x9000), None);
        assert_eq!(here.offset(0x4fff), None);
        assert_eq!(ImageRange::default().offset(0), None);
    }
}
