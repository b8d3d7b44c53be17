//! Names raw addresses after the program's globals (`counter`, `arr+8`), for people and tests.

use serde::{Deserialize, Serialize};

/// Where a global of the program lives in one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalRange {
    pub name: String,
    pub addr: u64,
    pub size: u64,
}

/// Sorted, non-overlapping global ranges with lookup by address.
#[derive(Clone, Debug, Default)]
pub struct Symbolizer {
    ranges: Vec<GlobalRange>,
}

impl Symbolizer {
    pub fn new(mut ranges: Vec<GlobalRange>) -> Symbolizer {
        ranges.sort_by_key(|r| r.addr);
        Symbolizer { ranges }
    }

    /// `name` or `name+off` for an address inside a global; `None` otherwise.
    pub fn name(&self, addr: u64) -> Option<String> {
        let i = self.ranges.partition_point(|r| r.addr <= addr);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        let off = addr - r.addr;
        if off >= r.size.max(1) {
            return None;
        }
        Some(if off == 0 { r.name.clone() } else { format!("{}+{off}", r.name) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_addresses_inside_globals_only() {
        let s = Symbolizer::new(vec![
            GlobalRange { name: "b".into(), addr: 200, size: 16 },
            GlobalRange { name: "a".into(), addr: 100, size: 4 },
        ]);
        assert_eq!(s.name(100).as_deref(), Some("a"));
        assert_eq!(s.name(103).as_deref(), Some("a+3"));
        assert_eq!(s.name(104), None);
        assert_eq!(s.name(208).as_deref(), Some("b+8"));
        assert_eq!(s.name(99), None);
        assert_eq!(s.name(216), None);
    }
}
