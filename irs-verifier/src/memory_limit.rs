//! The verifier's memory limit (DESIGN §8, the exploration's limits beside executions and
//! time): the verifier's resident set size, read from `/proc/self/statm`, against a limit in
//! bytes. An exploration that reaches it stops with the verdict `incomplete`, naming the limit,
//! instead of growing until the machine runs out (these machines have no swap).
//!
//! The default is half the machine's RAM: the verifier runs beside the program it verifies
//! (whose own processes are not counted here) and whatever else the machine does, and an
//! exploration that needs more than half of a machine is better stopped with a schedule to
//! go on from than allowed to push everything else out.

use std::fmt;
use std::time::{Duration, Instant};

/// When `/proc/meminfo` cannot be read: a limit most machines can afford.
const FALLBACK_LIMIT: u64 = 4 << 30;

/// A size in bytes, printed for people (`4 GiB`, `512 MiB`, `1.5 GiB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
        for (name, unit) in UNITS {
            if self.0 >= unit {
                let v = self.0 as f64 / unit as f64;
                return if self.0.is_multiple_of(unit) { write!(f, "{} {name}", self.0 / unit) } else { write!(f, "{v:.1} {name}") };
            }
        }
        write!(f, "{} bytes", self.0)
    }
}

/// Why a size given by a user is not one.
#[derive(Debug, PartialEq, Eq)]
pub struct BadSize(pub String);

impl fmt::Display for BadSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a size: give a number of bytes with a unit, e.g. 512M, 4G or 4GiB (K, M, G, T are powers of 1024)", self.0)
    }
}

impl std::error::Error for BadSize {}

/// Parse `4G`, `4GiB`, `4 GB`, `512m`, `1.5G`, `1048576` (bytes): units are powers of 1024.
/// Zero is no size (an exploration that may use no memory cannot start).
pub fn parse_size(s: &str) -> Result<u64, BadSize> {
    let bad = || BadSize(s.to_string());
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    let bytes = v * (1u64 << shift) as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// The machine's RAM (`MemTotal` of `/proc/meminfo`).
pub fn machine_ram() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The default limit: half the machine's RAM (see the module doc).
pub fn default_limit() -> u64 {
    machine_ram().map_or(FALLBACK_LIMIT, |r| r / 2)
}

/// This process's resident set size, in bytes (the second field of `/proc/self/statm`, in
/// pages): one small read, no allocation beyond the buffer.
pub fn rss_bytes() -> Option<u64> {
    use std::io::Read;
    let mut buf = [0u8; 128];
    let mut f = std::fs::File::open("/proc/self/statm").ok()?;
    let n = f.read(&mut buf).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

/// How often the exploration reads its RSS at most: a read costs microseconds, an execution
/// often less, and memory grows by at most what a few executions add in that time.
const CHECK_EVERY: Duration = Duration::from_millis(20);

/// The limit and when it was last checked.
pub struct MemoryLimit {
    limit: u64,
    last: Option<Instant>,
    /// The largest RSS read.
    pub peak: u64,
}

impl MemoryLimit {
    pub fn new(limit: u64) -> MemoryLimit {
        MemoryLimit { limit, last: None, peak: 0 }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the RSS has reached the limit (read at most every [`CHECK_EVERY`]).
    pub fn reached(&mut self) -> bool {
        if self.last.is_some_and(|t| t.elapsed() < CHECK_EVERY) {
            return false;
        }
        self.last = Some(Instant::now());
        let Some(rss) = rss_bytes() else { return false };
        self.peak = self.peak.max(rss);
        rss >= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("4 gb"), Ok(4 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        for bad in ["", "G", "4X", "-1G", "0", "0M", "1e3", "4 G B"] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Size(4 << 30).to_string(), "4 GiB");
        assert_eq!(Size(3 << 29).to_string(), "1.5 GiB");
        assert_eq!(Size(100).to_string(), "100 bytes");
    }

    #[test]
    fn rss_is_read_and_a_tiny_limit_is_reached() {
        let rss = rss_bytes().expect("Linux has /proc/self/statm");
        assert!(rss > 1 << 20, "{rss}");
        let mut m = MemoryLimit::new(1 << 20);
        assert!(m.reached());
        assert!(m.peak >= rss / 2);
        let mut big = MemoryLimit::new(u64::MAX);
        assert!(!big.reached());
        assert!(default_limit() > 0);
    }
}
