//! The admissible prefix as bytes (DESIGN §4, §6): what the runtime maps from the shared-memory
//! segment `/dev/shm/irs-<program-id>`, and what a prefix file holds (the same bytes).
//!
//! Layout, little-endian, every section 8-aligned:
//! - header: magic `IRSPRFX1`, format version, thread count, program id, row count,
//!   requirement count, cutoff-log capacity, published cutoff count, site-table length;
//! - threads: per thread its first row, row count, parent and creation index;
//! - rows: per event `(t, k)` its site and its requirements (a range of the next section);
//! - requirements: `(thread, count)` pairs;
//! - the cutoff log: `capacity` vectors of `threads` counts; the first `published` are valid,
//!   each no larger than the one before (a prefix only ever shrinks). A writer fills a vector
//!   completely before it raises `published` (release), a reader reads `published` (acquire)
//!   before the vectors it covers;
//! - the program's site table (bincode), for people (`irs prefix show`).
//!
//! [`PrefixView::parse`] validates everything before anything is used: a corrupt, truncated,
//! foreign or other-version segment is an error, never undefined behaviour.

use crate::le::{get32, get64, put32, put64};
use crate::ids::{ProgramId, SiteId, ThreadId};
use crate::requirement_table::{Requirement, RequirementTable};
use crate::site::SiteInfo;
use crate::trace::ThreadInfo;

/// Where a program's installed prefix lives (DESIGN §6): one segment per program id.
pub fn segment_path(program: ProgramId) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/dev/shm/irs-{program}"))
}

pub const PREFIX_MAGIC: u64 = u64::from_le_bytes(*b"IRSPRFX1");
pub const PREFIX_VERSION: u32 = 1;
const HEADER: usize = 64;
const THREAD: usize = 16;
const ROW: usize = 16;
const REQ: usize = 8;

// Header fields.
const MAGIC: usize = 0;
const VERSION: usize = 8;
const N_THREADS: usize = 12;
const PROGRAM: usize = 16;
const N_ROWS: usize = 24;
const N_REQS: usize = 28;
const LOG_CAPACITY: usize = 32;
/// Byte offset of the published-cutoff count (a u32, 4-aligned): writers of a live segment
/// update it with a release store, readers load it with acquire.
pub const PUBLISHED_OFFSET: usize = 36;
const SITES_LEN: usize = 40;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PrefixError {
    #[error("not an irs prefix (bad magic)")]
    NotAPrefix,
    #[error("an irs prefix of format version {0}; this irs reads version {PREFIX_VERSION}")]
    Version(u32),
    #[error("the prefix belongs to another program (prefix {found}, program {expected})")]
    ForeignProgram { found: ProgramId, expected: ProgramId },
    #[error("corrupt or truncated prefix: {0}")]
    Corrupt(String),
    #[error("cutoff vector: {0}")]
    BadCutoff(String),
}

fn corrupt(m: impl Into<String>) -> PrefixError {
    PrefixError::Corrupt(m.into())
}

fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Section offsets, from the counts in the header.
#[derive(Clone, Copy, Debug)]
struct Layout {
    threads: usize,
    rows: usize,
    reqs: usize,
    log: usize,
    sites: usize,
    end: usize,
}

impl Layout {
    fn of(n_threads: usize, n_rows: usize, n_reqs: usize, capacity: usize, sites_len: usize) -> Option<Layout> {
        let threads = HEADER;
        let rows = threads.checked_add(n_threads.checked_mul(THREAD)?)?;
        let reqs = rows.checked_add(n_rows.checked_mul(ROW)?)?;
        let log = align8(reqs.checked_add(n_reqs.checked_mul(REQ)?)?);
        let sites = align8(log.checked_add(capacity.checked_mul(n_threads)?.checked_mul(4)?)?);
        let end = sites.checked_add(sites_len)?;
        Some(Layout { threads, rows, reqs, log, sites, end })
    }
}

/// Encode a prefix: the table, the program's sites, a log of `capacity` cutoffs with `first`
/// published as the first one.
pub fn build(table: &RequirementTable, program: ProgramId, sites: &[(SiteId, SiteInfo)], capacity: usize, first: &[u32]) -> Result<Vec<u8>, PrefixError> {
    let n = table.threads.len();
    check_cutoff(table, first)?;
    let n_rows: usize = table.rows.iter().map(|r| r.len()).sum();
    let n_reqs: usize = table.rows.iter().flatten().map(|r| r.requires.len()).sum();
    let sites_blob = crate::codec::encode(&sites.to_vec());
    let capacity = capacity.max(1);
    let l = Layout::of(n, n_rows, n_reqs, capacity, sites_blob.len()).ok_or_else(|| corrupt("too large"))?;
    let mut b = vec![0u8; l.end];
    put64(&mut b, MAGIC, PREFIX_MAGIC);
    put32(&mut b, VERSION, PREFIX_VERSION);
    put32(&mut b, N_THREADS, n as u32);
    put64(&mut b, PROGRAM, program.0);
    put32(&mut b, N_ROWS, n_rows as u32);
    put32(&mut b, N_REQS, n_reqs as u32);
    put32(&mut b, LOG_CAPACITY, capacity as u32);
    put32(&mut b, SITES_LEN, sites_blob.len() as u32);
    let (mut row, mut req) = (0usize, 0usize);
    for (t, rows) in table.rows.iter().enumerate() {
        let at = l.threads + t * THREAD;
        let info = &table.threads[t];
        put32(&mut b, at, row as u32);
        put32(&mut b, at + 4, rows.len() as u32);
        put32(&mut b, at + 8, info.parent.map_or(u32::MAX, |p| p.0));
        put32(&mut b, at + 12, info.nth_child);
        for r in rows {
            let at = l.rows + row * ROW;
            put64(&mut b, at, r.site.map_or(0, |s| s.0));
            put32(&mut b, at + 8, req as u32);
            put32(&mut b, at + 12, r.requires.len() as u32);
            for q in &r.requires {
                put32(&mut b, l.reqs + req * REQ, q.thread.0);
                put32(&mut b, l.reqs + req * REQ + 4, q.count);
                req += 1;
            }
            row += 1;
        }
    }
    b[l.sites..l.end].copy_from_slice(&sites_blob);
    for (t, c) in first.iter().enumerate() {
        put32(&mut b, l.log + t * 4, *c);
    }
    put32(&mut b, PUBLISHED_OFFSET, 1);
    Ok(b)
}

fn check_cutoff(table: &RequirementTable, cut: &[u32]) -> Result<(), PrefixError> {
    if cut.len() != table.threads.len() {
        return Err(PrefixError::BadCutoff(format!("{} entries for {} threads", cut.len(), table.threads.len())));
    }
    if let Some((t, c)) = cut.iter().enumerate().find(|(t, c)| **c as usize > table.rows[*t].len()) {
        return Err(PrefixError::BadCutoff(format!("T{t} has {} events, the cutoff asks for {c}", table.rows[t].len())));
    }
    if !table.is_downward_closed(cut) {
        return Err(PrefixError::BadCutoff("it is not downward closed (an event in it requires one outside it)".into()));
    }
    Ok(())
}

/// A validated prefix.
pub struct PrefixView<'a> {
    b: &'a [u8],
    l: Layout,
    n_threads: usize,
    capacity: usize,
}

impl<'a> PrefixView<'a> {
    /// Validate every section and every cross-reference; `expected` checks the program id.
    pub fn parse(b: &'a [u8], expected: Option<ProgramId>) -> Result<PrefixView<'a>, PrefixError> {
        if b.len() < HEADER || get64(b, MAGIC) != PREFIX_MAGIC {
            return Err(PrefixError::NotAPrefix);
        }
        if get32(b, VERSION) != PREFIX_VERSION {
            return Err(PrefixError::Version(get32(b, VERSION)));
        }
        let found = ProgramId(get64(b, PROGRAM));
        if let Some(expected) = expected {
            if found != expected {
                return Err(PrefixError::ForeignProgram { found, expected });
            }
        }
        let (n, n_rows, n_reqs, cap, sites_len) =
            (get32(b, N_THREADS) as usize, get32(b, N_ROWS) as usize, get32(b, N_REQS) as usize, get32(b, LOG_CAPACITY) as usize, get32(b, SITES_LEN) as usize);
        let l = Layout::of(n, n_rows, n_reqs, cap, sites_len).ok_or_else(|| corrupt("impossible sizes"))?;
        if l.end > b.len() {
            return Err(corrupt(format!("{} bytes where the header announces {}", b.len(), l.end)));
        }
        if n == 0 || cap == 0 {
            return Err(corrupt("no threads or no cutoff log"));
        }
        let v = PrefixView { b, l, n_threads: n, capacity: cap };
        // Threads tile the rows in order; every requirement names a thread and a count it has.
        let mut next_row = 0usize;
        for t in 0..n {
            let at = l.threads + t * THREAD;
            let (first, count, parent) = (get32(b, at) as usize, get32(b, at + 4) as usize, get32(b, at + 8));
            if first != next_row || first + count > n_rows {
                return Err(corrupt(format!("thread {t}'s rows are out of place")));
            }
            if (t == 0) != (parent == u32::MAX) || (parent != u32::MAX && parent as usize >= t) {
                return Err(corrupt(format!("thread {t} has an impossible creator")));
            }
            next_row += count;
        }
        if next_row != n_rows {
            return Err(corrupt("rows not covered by threads"));
        }
        let mut next_req = 0usize;
        for r in 0..n_rows {
            let at = l.rows + r * ROW;
            let (first, count) = (get32(b, at + 8) as usize, get32(b, at + 12) as usize);
            if first != next_req || first + count > n_reqs {
                return Err(corrupt(format!("row {r}'s requirements are out of place")));
            }
            next_req += count;
        }
        if next_req != n_reqs {
            return Err(corrupt("requirements not covered by rows"));
        }
        for q in 0..n_reqs {
            let (t, c) = (get32(b, l.reqs + q * REQ) as usize, get32(b, l.reqs + q * REQ + 4));
            if t >= n || c == 0 || c > v.thread_rows(ThreadId(t as u32)) {
                return Err(corrupt(format!("requirement {q} names T{t}'s event {c}, which does not exist")));
            }
        }
        let published = get32(b, PUBLISHED_OFFSET) as usize;
        if published == 0 || published > cap {
            return Err(corrupt(format!("{published} published cutoffs in a log of {cap}")));
        }
        for i in 0..published {
            let c = v.cutoff(i);
            if c.iter().enumerate().any(|(t, k)| *k > v.thread_rows(ThreadId(t as u32))) {
                return Err(corrupt(format!("cutoff {i} reaches past the table")));
            }
            if i > 0 && c.iter().zip(v.cutoff(i - 1)).any(|(a, b)| *a > b) {
                return Err(corrupt(format!("cutoff {i} is larger than the one before")));
            }
        }
        Ok(v)
    }

    pub fn program_id(&self) -> ProgramId {
        ProgramId(get64(self.b, PROGRAM))
    }
    pub fn threads(&self) -> usize {
        self.n_threads
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn published(&self) -> usize {
        get32(self.b, PUBLISHED_OFFSET) as usize
    }
    pub fn thread_rows(&self, t: ThreadId) -> u32 {
        get32(self.b, self.l.threads + t.index() * THREAD + 4)
    }
    pub fn thread_info(&self, t: ThreadId) -> ThreadInfo {
        let at = self.l.threads + t.index() * THREAD;
        let p = get32(self.b, at + 8);
        ThreadInfo { id: t, parent: (p != u32::MAX).then_some(ThreadId(p)), nth_child: get32(self.b, at + 12) }
    }
    /// The site and requirements of event `(t, k)` (`k < thread_rows(t)`).
    pub fn row(&self, t: ThreadId, k: u32) -> (Option<SiteId>, impl Iterator<Item = Requirement> + '_) {
        let r = get32(self.b, self.l.threads + t.index() * THREAD) as usize + k as usize;
        let at = self.l.rows + r * ROW;
        let site = get64(self.b, at);
        let (first, count) = (get32(self.b, at + 8) as usize, get32(self.b, at + 12) as usize);
        let reqs = (first..first + count).map(move |q| Requirement {
            thread: ThreadId(get32(self.b, self.l.reqs + q * REQ)),
            count: get32(self.b, self.l.reqs + q * REQ + 4),
        });
        ((site != 0).then_some(SiteId(site)), reqs)
    }
    /// Cutoff vector `i` of the log (`i < published()`).
    pub fn cutoff(&self, i: usize) -> Vec<u32> {
        let at = self.l.log + i * self.n_threads * 4;
        (0..self.n_threads).map(|t| get32(self.b, at + t * 4)).collect()
    }
    /// Byte offset of cutoff slot `i` (for writers that publish with atomics).
    pub fn cutoff_offset(&self, i: usize) -> usize {
        self.l.log + i * self.n_threads * 4
    }
    pub fn constraints_within(&self, cut: &[u32]) -> usize {
        (0..self.n_threads).map(|t| (0..cut[t]).map(|k| self.row(ThreadId(t as u32), k).1.count()).sum::<usize>()).sum()
    }
    pub fn sites(&self) -> Vec<(SiteId, SiteInfo)> {
        crate::codec::decode(&self.b[self.l.sites..self.l.end]).unwrap_or_default()
    }
}

/// Append `cut` to the log of a prefix held in `b` (a file's bytes; a live segment's writer
/// does the same with a release store of the count). It must be no larger than the latest.
pub fn append_cutoff(b: &mut [u8], cut: &[u32]) -> Result<usize, PrefixError> {
    let (slot, published) = {
        let v = PrefixView::parse(b, None)?;
        let published = v.published();
        if published >= v.capacity() {
            return Err(PrefixError::BadCutoff("the cutoff log is full".into()));
        }
        let latest = v.cutoff(published - 1);
        if cut.len() != latest.len() {
            return Err(PrefixError::BadCutoff(format!("{} entries for {} threads", cut.len(), latest.len())));
        }
        if cut.iter().zip(&latest).any(|(a, b)| a > b) {
            return Err(PrefixError::BadCutoff(format!("{cut:?} is larger than the latest {latest:?}: a prefix only shrinks")));
        }
        (v.cutoff_offset(published), published)
    };
    for (t, c) in cut.iter().enumerate() {
        put32(b, slot + t * 4, *c);
    }
    put32(b, PUBLISHED_OFFSET, published as u32 + 1);
    Ok(published)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requirement_table::Row;

    fn table() -> RequirementTable {
        let r = |t, c| Requirement { thread: ThreadId(t), count: c };
        RequirementTable {
            threads: vec![
                ThreadInfo { id: ThreadId(0), parent: None, nth_child: 0 },
                ThreadInfo { id: ThreadId(1), parent: Some(ThreadId(0)), nth_child: 0 },
            ],
            rows: vec![
                vec![Row { site: Some(SiteId(5)), requires: vec![] }, Row { site: Some(SiteId(6)), requires: vec![r(1, 1)] }],
                vec![Row { site: Some(SiteId(7)), requires: vec![r(0, 1)] }],
            ],
            order: vec![(ThreadId(0), 0), (ThreadId(1), 0), (ThreadId(0), 1)],
        }
    }

    #[test]
    fn round_trip_append_and_validation() {
        let t = table();
        let mut b = build(&t, ProgramId(42), &[], 4, &[2, 1]).unwrap();
        let v = PrefixView::parse(&b, Some(ProgramId(42))).unwrap();
        assert_eq!((v.threads(), v.published(), v.cutoff(0)), (2, 1, vec![2, 1]));
        let (site, reqs) = v.row(ThreadId(0), 1);
        assert_eq!((site, reqs.collect::<Vec<_>>()), (Some(SiteId(6)), vec![Requirement { thread: ThreadId(1), count: 1 }]));
        assert_eq!(v.constraints_within(&[2, 1]), 2);
        assert_eq!(append_cutoff(&mut b, &[1, 1]), Ok(1));
        assert!(matches!(append_cutoff(&mut b, &[2, 1]), Err(PrefixError::BadCutoff(_))), "never larger");
        assert_eq!(append_cutoff(&mut b, &[0, 0]), Ok(2));
        assert_eq!(PrefixView::parse(&b, None).unwrap().cutoff(2), vec![0, 0]);

        assert!(matches!(PrefixView::parse(&b, Some(ProgramId(7))), Err(PrefixError::ForeignProgram { .. })));
        assert!(matches!(PrefixView::parse(&b[..b.len() - 1], None), Err(PrefixError::Corrupt(_))));
        assert!(matches!(PrefixView::parse(b"nonsense", None), Err(PrefixError::NotAPrefix)));
        let mut v2 = b.clone();
        v2[VERSION] = 2;
        assert_eq!(PrefixView::parse(&v2, None).err(), Some(PrefixError::Version(2)));
        let mut bad = b.clone();
        let req_at = Layout::of(2, 3, 2, 4, 0).unwrap().reqs;
        bad[req_at] = 9; // a requirement on thread 9
        assert!(matches!(PrefixView::parse(&bad, None), Err(PrefixError::Corrupt(_))));
        let mut grown = b.clone();
        let log = Layout::of(2, 3, 2, 4, b.len() - Layout::of(2, 3, 2, 4, 0).unwrap().end).unwrap().log;
        grown[log + 16] = 2; // cutoff 2 becomes [2, 0], larger than cutoff 1 [1, 1] for T0
        assert!(matches!(PrefixView::parse(&grown, None), Err(PrefixError::Corrupt(_))));
        assert!(build(&t, ProgramId(1), &[], 4, &[0, 1]).is_err(), "T1's first event needs main's");
    }
}
