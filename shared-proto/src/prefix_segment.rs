//! The admissible prefix as bytes (DESIGN §4, §6): what the runtime maps from the shared-memory
//! segment `/dev/shm/irs-<program-id>`, and what a prefix file holds (the same bytes).
//!
//! Layout (format version 5), little-endian, every section 8-aligned:
//! - header (64 bytes): magic `IRSPRFX1` (0), format version (8), thread count (12), program
//!   id (16), row count (24), requirement count (28), cutoff-log capacity (32), published cutoff
//!   count (36), site-table length (40), object-index entry count (44), table checksum (48,
//!   u64), flags (56, u64: bit 0, the object index is precise);
//! - threads: per thread its first row, row count, parent and creation index;
//! - rows: per event `(t, k)` its site, its requirements (a range of the next section) and, for
//!   a choice, its value in the trace (`u32::MAX` for none; then 4 reserved bytes);
//! - requirements: `(thread, count)` pairs;
//! - the object index (`prefix_objects`), from the next 8-aligned offset: per entry its key
//!   (u64), thread (u32) and event index times two plus one if it writes (u32), sorted;
//! - the cutoff log: `capacity` slots, each a vector of `threads` counts (padded to 8 bytes)
//!   followed by the slot's checksum (u64); the first `published` are valid, each no larger
//!   than the one before (a prefix only ever shrinks). A writer fills a slot completely, vector
//!   and checksum, before it raises `published` (release), a reader reads `published`
//!   (acquire) before the slots it covers;
//! - the program's site table (bincode), for people (`irs prefix show`).
//!
//! Checksums. The *table checksum* covers everything the runtime uses except the cutoff log and
//! the published count: the header (with the published count and the checksum field taken as
//! zero), the threads, rows and requirements (with the padding up to the log) and the site
//! table. Each *slot checksum* covers the slot's index, its vector and the table checksum, so a
//! slot copied from another place or another prefix does not verify; it is never zero, so an
//! all-zero (unwritten) slot never verifies, and a published count raised over an unwritten
//! slot is detected. Both are [`StableHasher`] (FNV-1a, 64 bits) under a domain seed: they
//! catch accidents (bit flips, torn or stray writes, files mixed up), not malice; whoever can
//! write the user's `/dev/shm` can write a valid prefix anyway (the runtime's defence there is
//! the owner and mode check, `enforcer::check_segment_owner`). Lowering the published count, or
//! changing a slot past it, changes nothing that is enforced, and is not detected.
//!
//! [`PrefixView::parse`] validates everything before anything is used, including both kinds of
//! checksum for every published slot: a corrupt, truncated, foreign or other-version segment is
//! an error, never undefined behaviour. A reader of a live segment checks each slot published
//! later with [`PrefixView::cutoff_checked`]. A run's start ([`PrefixView::parse_for_run`])
//! checks only the cutoffs a run reads (the first and the latest), and leaves the rows
//! unchecked when the latest is empty: it never reads them.

use crate::hash::StableHasher;
use crate::le::{get32, get64, put32, put64};
use crate::ids::{ProgramId, SiteId, ThreadId};
use crate::prefix_objects::{Entries, Entry};
use crate::requirement_table::{Requirement, RequirementTable};
use crate::site::SiteInfo;
use crate::trace::ThreadInfo;

/// Where a program's installed prefix lives (DESIGN §6): one segment per program id.
pub fn segment_path(program: ProgramId) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/dev/shm/irs-{program}"))
}

pub const PREFIX_MAGIC: u64 = u64::from_le_bytes(*b"IRSPRFX1");
/// 3: the table checksum hashes 8-byte words (`StableHasher::write_words`); 4: a row holds a
/// choice's value (a run that chooses otherwise is not the trace's), and the word hash folds
/// its high half down (the same top bit flipped in two words no longer cancels out); 5: the
/// object index.
pub const PREFIX_VERSION: u32 = 5;
const HEADER: usize = 64;
const THREAD: usize = 16;
const ROW: usize = 24;
/// A row's choice field when its event is no choice.
const NO_CHOICE: u32 = u32::MAX;
const REQ: usize = 8;
const OBJ: usize = 16;

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
const N_OBJS: usize = 44;
/// The table checksum (u64, 8-aligned).
const TABLE_SUM: usize = 48;
const FLAGS: usize = 56;
/// Flag: the object index names every indexed event (`prefix_objects`).
const PRECISE: u64 = 1;
/// Domain seeds of the two checksums (mixed in first, so neither is plain FNV-1a of the bytes).
const TABLE_SEED: u64 = u64::from_le_bytes(*b"IRStable");
const SLOT_SEED: u64 = u64::from_le_bytes(*b"IRScutof");

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
    /// A checksum does not match: the bytes were changed by something other than irs.
    #[error("corrupt prefix: {0} checksum mismatch (the file was changed by something other than irs)")]
    Checksum(String),
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
    objs: usize,
    log: usize,
    /// Bytes per cutoff slot: the vector, padded to 8, then its u64 checksum.
    slot: usize,
    /// Offset of the checksum within a slot.
    slot_sum: usize,
    sites: usize,
    end: usize,
}

impl Layout {
    fn of(n_threads: usize, n_rows: usize, n_reqs: usize, n_objs: usize, capacity: usize, sites_len: usize) -> Option<Layout> {
        let threads = HEADER;
        let rows = threads.checked_add(n_threads.checked_mul(THREAD)?)?;
        let reqs = rows.checked_add(n_rows.checked_mul(ROW)?)?;
        let objs = align8(reqs.checked_add(n_reqs.checked_mul(REQ)?)?);
        let log = objs.checked_add(n_objs.checked_mul(OBJ)?)?;
        let slot_sum = align8(n_threads.checked_mul(4)?);
        let slot = slot_sum.checked_add(8)?;
        let sites = log.checked_add(capacity.checked_mul(slot)?)?;
        let end = sites.checked_add(sites_len)?;
        Some(Layout { threads, rows, reqs, objs, log, slot, slot_sum, sites, end })
    }
    fn slot_at(&self, i: usize) -> usize {
        self.log + i * self.slot
    }
}

/// The table checksum of `b` laid out as `l`: the header without the published count and the
/// checksum itself, the threads, rows and requirements up to the log, the site table.
fn table_checksum(b: &[u8], l: &Layout) -> u64 {
    let mut h = StableHasher::default();
    h.write_u64(TABLE_SEED);
    h.write_words(&b[..PUBLISHED_OFFSET]);
    h.write_words(&[0; 4]);
    h.write_words(&b[PUBLISHED_OFFSET + 4..TABLE_SUM]);
    h.write_words(&[0; 8]);
    h.write_words(&b[TABLE_SUM + 8..l.log]);
    h.write_words(&b[l.sites..l.end]);
    h.finish()
}

/// The checksum of cutoff slot `index` holding `cut`, in a prefix whose table checksum is
/// `table`. Never zero: an unwritten slot never verifies.
fn slot_checksum(table: u64, index: usize, cut: &[u32]) -> u64 {
    let mut h = StableHasher::default();
    h.write_u64(SLOT_SEED);
    h.write_u64(table);
    h.write_u64(index as u64);
    for c in cut {
        h.write(&c.to_le_bytes());
    }
    h.finish().max(1)
}

/// Write slot `index` (vector and checksum) of a prefix laid out as `l`.
fn write_slot(b: &mut [u8], l: &Layout, table: u64, index: usize, cut: &[u32]) {
    let at = l.slot_at(index);
    for (t, c) in cut.iter().enumerate() {
        put32(b, at + t * 4, *c);
    }
    put64(b, at + l.slot_sum, slot_checksum(table, index, cut));
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
    let objs: &[Entry] = table.objects.as_deref().unwrap_or(&[]);
    let l = Layout::of(n, n_rows, n_reqs, objs.len(), capacity, sites_blob.len()).ok_or_else(|| corrupt("too large"))?;
    let mut b = vec![0u8; l.end];
    put64(&mut b, MAGIC, PREFIX_MAGIC);
    put32(&mut b, VERSION, PREFIX_VERSION);
    put32(&mut b, N_THREADS, n as u32);
    put64(&mut b, PROGRAM, program.0);
    put32(&mut b, N_ROWS, n_rows as u32);
    put32(&mut b, N_REQS, n_reqs as u32);
    put32(&mut b, LOG_CAPACITY, capacity as u32);
    put32(&mut b, SITES_LEN, sites_blob.len() as u32);
    put32(&mut b, N_OBJS, objs.len() as u32);
    put64(&mut b, FLAGS, if table.objects.is_some() { PRECISE } else { 0 });
    for (i, o) in objs.iter().enumerate() {
        let at = l.objs + i * OBJ;
        put64(&mut b, at, o.key);
        put32(&mut b, at + 8, o.thread);
        put32(&mut b, at + 12, o.k << 1 | o.writes as u32);
    }
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
            put32(&mut b, at + 16, r.choice.unwrap_or(NO_CHOICE));
            for q in &r.requires {
                put32(&mut b, l.reqs + req * REQ, q.thread.0);
                put32(&mut b, l.reqs + req * REQ + 4, q.count);
                req += 1;
            }
            row += 1;
        }
    }
    b[l.sites..l.end].copy_from_slice(&sites_blob);
    let sum = table_checksum(&b, &l);
    put64(&mut b, TABLE_SUM, sum);
    write_slot(&mut b, &l, sum, 0, first);
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
    table_sum: u64,
    /// Were the rows, requirements and site table checked (always, but for
    /// [`PrefixView::parse_for_run`] under an empty cutoff)?
    rows_checked: bool,
}

/// Which published cutoffs a parse checks.
#[derive(Clone, Copy)]
enum Slots {
    All,
    FirstAndLatest,
}

impl<'a> PrefixView<'a> {
    /// Validate every section and every cross-reference; `expected` checks the program id.
    pub fn parse(b: &'a [u8], expected: Option<ProgramId>) -> Result<PrefixView<'a>, PrefixError> {
        Self::parse_with(b, expected, false)
    }

    /// As [`PrefixView::parse`], for a run that only enforces. Of the published cutoffs, only
    /// the first and the latest are checked (a run starts under the first, adopts the latest,
    /// and later ones only if no larger; a long verification publishes hundreds). When the
    /// latest is empty, the rows, requirements and site table are not checked (nor hashed): a
    /// run under an empty cutoff never reads them. The header and the threads are checked as
    /// always, and a slot's checksum covers the table checksum the header holds, so a segment
    /// whose header was changed fails there. Every start of a program whose verification has
    /// finished would otherwise hash its whole first trace.
    pub fn parse_for_run(b: &'a [u8], expected: Option<ProgramId>) -> Result<PrefixView<'a>, PrefixError> {
        Self::parse_with(b, expected, true)
    }

    /// Were the rows checked (false only for [`PrefixView::parse_for_run`] under an empty
    /// cutoff: then [`PrefixView::row`] must not be asked for)?
    pub fn rows_checked(&self) -> bool {
        self.rows_checked
    }

    fn parse_with(b: &'a [u8], expected: Option<ProgramId>, lazy: bool) -> Result<PrefixView<'a>, PrefixError> {
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
        let n_objs = get32(b, N_OBJS) as usize;
        let l = Layout::of(n, n_rows, n_reqs, n_objs, cap, sites_len).ok_or_else(|| corrupt("impossible sizes"))?;
        if get64(b, FLAGS) & !PRECISE != 0 || (n_objs > 0 && get64(b, FLAGS) & PRECISE == 0) {
            return Err(corrupt("unknown flags"));
        }
        if l.end > b.len() {
            return Err(corrupt(format!("{} bytes where the header announces {}", b.len(), l.end)));
        }
        if n == 0 || cap == 0 {
            return Err(corrupt("no threads or no cutoff log"));
        }
        let table_sum = get64(b, TABLE_SUM);
        // Before anything else is looked at (but for a lazy parse, below): the rest validates
        // structure, this catches changes that keep the structure (a site, a requirement, a
        // thread's creator).
        let table_ok = || if table_checksum(b, &l) != table_sum { Err(PrefixError::Checksum("table".into())) } else { Ok(()) };
        if !lazy {
            table_ok()?;
        }
        let mut v = PrefixView { b, l, n_threads: n, capacity: cap, table_sum, rows_checked: true };
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
        if lazy {
            v.check_cutoffs(Slots::FirstAndLatest)?;
            if v.cutoff(v.published() - 1).iter().all(|c| *c == 0) {
                v.rows_checked = false;
                return Ok(v);
            }
            table_ok()?;
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
        let objects = v.objects();
        for i in 0..n_objs {
            let o = objects.get(i);
            if o.thread as usize >= n || o.k >= v.thread_rows(ThreadId(o.thread)) || (i > 0 && objects.get(i - 1) >= o) {
                return Err(corrupt(format!("object-index entry {i} is out of place or names an event that does not exist")));
            }
        }
        if !lazy {
            v.check_cutoffs(Slots::All)?;
        }
        Ok(v)
    }

    /// The object index (`prefix_objects`), or `None` when it is imprecise: every event past a
    /// cut then waits for all of the prefix. (The rows checked.)
    pub fn object_index(&self) -> Option<ObjectEntries<'a>> {
        (self.rows_checked && get64(self.b, FLAGS) & PRECISE != 0).then(|| self.objects())
    }

    fn objects(&self) -> ObjectEntries<'a> {
        ObjectEntries { b: self.b, at: self.l.objs, n: get32(self.b, N_OBJS) as usize }
    }

    /// The published cutoffs of `slots` (`All`: every one; `FirstAndLatest`: what a run reads,
    /// the first and the latest) each verify, lie within the threads' rows and are no larger
    /// than the one checked before.
    fn check_cutoffs(&self, slots: Slots) -> Result<(), PrefixError> {
        let (published, cap) = (self.published(), self.capacity);
        if published == 0 || published > cap {
            return Err(corrupt(format!("{published} published cutoffs in a log of {cap}")));
        }
        let indices: Vec<usize> = match slots {
            Slots::All => (0..published).collect(),
            Slots::FirstAndLatest => [0, published - 1][..published.min(2)].to_vec(),
        };
        let mut prev: Option<Vec<u32>> = None;
        for i in indices {
            prev = Some(self.cutoff_within(i, prev.as_deref())?);
        }
        Ok(())
    }

    /// Cutoff `i` if its slot verifies, it lies within the threads' rows, and it is no larger
    /// than `than` (the one before it, or the one in force).
    pub fn cutoff_within(&self, i: usize, than: Option<&[u32]>) -> Result<Vec<u32>, PrefixError> {
        let c = self.cutoff_checked(i)?;
        if c.iter().enumerate().any(|(t, k)| *k > self.thread_rows(ThreadId(t as u32))) {
            return Err(corrupt(format!("cutoff {i} reaches past the table")));
        }
        if than.is_some_and(|p| c.iter().zip(p).any(|(a, b)| a > b)) {
            return Err(corrupt(format!("cutoff {i} is larger than the one before")));
        }
        Ok(c)
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
    /// The site and requirements of event `(t, k)` (`k < thread_rows(t)`; the rows checked).
    pub fn row(&self, t: ThreadId, k: u32) -> (Option<SiteId>, impl Iterator<Item = Requirement> + '_) {
        assert!(self.rows_checked, "a row of a prefix parsed for an empty cutoff");
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
    /// The value event `(t, k)` chose in the trace, if it is a choice (`k < thread_rows(t)`).
    pub fn choice(&self, t: ThreadId, k: u32) -> Option<u32> {
        assert!(self.rows_checked, "a row of a prefix parsed for an empty cutoff");
        let r = get32(self.b, self.l.threads + t.index() * THREAD) as usize + k as usize;
        let v = get32(self.b, self.l.rows + r * ROW + 16);
        (v != NO_CHOICE).then_some(v)
    }
    /// Cutoff vector `i` of the log (`i < capacity()`), unchecked: [`PrefixView::parse`] has
    /// checked those published when it ran; one published later is read with
    /// [`PrefixView::cutoff_checked`].
    pub fn cutoff(&self, i: usize) -> Vec<u32> {
        let at = self.l.slot_at(i);
        (0..self.n_threads).map(|t| get32(self.b, at + t * 4)).collect()
    }
    /// Thread `t`'s entry of cutoff vector `i` (`i < capacity()`, `t < threads()`), unchecked
    /// as [`PrefixView::cutoff`] is; no allocation.
    pub fn cutoff_entry(&self, i: usize, t: usize) -> u32 {
        get32(self.b, self.l.slot_at(i) + t * 4)
    }
    /// Cutoff vector `i` of the log if its slot checksum verifies (`i < capacity()`). It says
    /// the slot was written by irs, as slot `i` of this prefix; whether it is in range and no
    /// larger than the one before is the caller's to check.
    pub fn cutoff_checked(&self, i: usize) -> Result<Vec<u32>, PrefixError> {
        if i >= self.capacity {
            return Err(PrefixError::BadCutoff(format!("slot {i} of a log of {}", self.capacity)));
        }
        let c = self.cutoff(i);
        if get64(self.b, self.l.slot_at(i) + self.l.slot_sum) != slot_checksum(self.table_sum, i, &c) {
            return Err(PrefixError::Checksum(format!("cutoff {i}")));
        }
        Ok(c)
    }
    /// Byte offset of cutoff slot `i` (for writers that publish with atomics).
    pub fn cutoff_offset(&self, i: usize) -> usize {
        self.l.slot_at(i)
    }
    /// The bytes of cutoff slot `i`, vector and checksum: what a writer must have written
    /// before it raises the published count over it.
    pub fn cutoff_slot(&self, i: usize) -> std::ops::Range<usize> {
        self.l.slot_at(i)..self.l.slot_at(i) + self.l.slot
    }
    pub fn constraints_within(&self, cut: &[u32]) -> usize {
        (0..self.n_threads).map(|t| (0..cut[t]).map(|k| self.row(ThreadId(t as u32), k).1.count()).sum::<usize>()).sum()
    }
    pub fn sites(&self) -> Vec<(SiteId, SiteInfo)> {
        crate::codec::decode(&self.b[self.l.sites..self.l.end]).unwrap_or_default()
    }
}

/// The object index of a mapped prefix (`prefix_objects::Entries`).
#[derive(Clone, Copy)]
pub struct ObjectEntries<'a> {
    b: &'a [u8],
    at: usize,
    n: usize,
}

impl Entries for ObjectEntries<'_> {
    fn len(&self) -> usize {
        self.n
    }
    fn get(&self, i: usize) -> Entry {
        let at = self.at + i * OBJ;
        let kw = get32(self.b, at + 12);
        Entry { key: get64(self.b, at), thread: get32(self.b, at + 8), k: kw >> 1, writes: kw & 1 != 0 }
    }
}

/// Append `cut` to the log of a prefix held in `b` (a file's bytes; a live segment's writer
/// does the same with a release store of the count): its slot, vector and checksum, then the
/// count. It must be no larger than the latest.
pub fn append_cutoff(b: &mut [u8], cut: &[u32]) -> Result<usize, PrefixError> {
    let (layout, table_sum, published) = {
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
        (v.l, v.table_sum, published)
    };
    write_slot(b, &layout, table_sum, published, cut);
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
                vec![Row { site: Some(SiteId(5)), requires: vec![], choice: None }, Row { site: Some(SiteId(6)), requires: vec![r(1, 1)], choice: Some(2) }],
                vec![Row { site: Some(SiteId(7)), requires: vec![r(0, 1)], choice: None }],
            ],
            order: vec![(ThreadId(0), 0), (ThreadId(1), 0), (ThreadId(0), 1)],
            objects: Some(vec![Entry { key: 3, thread: 0, k: 1, writes: true }, Entry { key: 3, thread: 1, k: 0, writes: false }]),
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
        let objects = v.object_index().unwrap();
        assert_eq!((0..objects.len()).map(|i| objects.get(i)).collect::<Vec<_>>(), t.objects.clone().unwrap());
        assert_eq!(v.constraints_within(&[2, 1]), 2);
        assert_eq!((v.choice(ThreadId(0), 0), v.choice(ThreadId(0), 1)), (None, Some(2)));
        assert_eq!(append_cutoff(&mut b, &[1, 1]), Ok(1));
        assert!(matches!(append_cutoff(&mut b, &[2, 1]), Err(PrefixError::BadCutoff(_))), "never larger");
        assert_eq!(append_cutoff(&mut b, &[0, 0]), Ok(2));
        assert_eq!(PrefixView::parse(&b, None).unwrap().cutoff(2), vec![0, 0]);

        assert!(matches!(PrefixView::parse(&b, Some(ProgramId(7))), Err(PrefixError::ForeignProgram { .. })));
        assert!(matches!(PrefixView::parse(&b[..b.len() - 1], None), Err(PrefixError::Corrupt(_))));
        assert!(matches!(PrefixView::parse(b"nonsense", None), Err(PrefixError::NotAPrefix)));
        let mut v1 = b.clone();
        v1[VERSION] = 1;
        assert_eq!(PrefixView::parse(&v1, None).err(), Some(PrefixError::Version(1)));
        let l = Layout::of(2, 3, 2, 2, 4, b.len() - Layout::of(2, 3, 2, 2, 4, 0).unwrap().end).unwrap();
        assert_eq!((l.slot, l.slot_sum, l.sites - l.log), (16, 8, 64));
        let mut bad = b.clone();
        bad[l.reqs] = 9; // a requirement on thread 9
        assert_eq!(PrefixView::parse(&bad, None).err(), Some(PrefixError::Checksum("table".into())));
        // The structural checks still stand behind the checksum: with it recomputed, refused.
        let sum = table_checksum(&bad, &l);
        put64(&mut bad, TABLE_SUM, sum);
        assert!(matches!(PrefixView::parse(&bad, None), Err(PrefixError::Corrupt(m)) if m.contains("requirement 0")));
        // An index entry naming an event that does not exist, checksum recomputed: refused.
        let mut bad = b.clone();
        put32(&mut bad, l.objs + 12, 7 << 1);
        let sum = table_checksum(&bad, &l);
        put64(&mut bad, TABLE_SUM, sum);
        assert!(matches!(PrefixView::parse(&bad, None), Err(PrefixError::Corrupt(m)) if m.contains("object-index entry 0")));
        let mut grown = b.clone();
        grown[l.slot_at(2)] = 2; // cutoff 2 becomes [2, 0], larger than cutoff 1 [1, 1] for T0
        assert_eq!(PrefixView::parse(&grown, None).err(), Some(PrefixError::Checksum("cutoff 2".into())));
        // ... and with a valid slot checksum, the monotonicity check refuses it.
        let sum = get64(&grown, TABLE_SUM);
        write_slot(&mut grown, &l, sum, 2, &[2, 0]);
        assert!(matches!(PrefixView::parse(&grown, None), Err(PrefixError::Corrupt(m)) if m.contains("larger than the one before")));
        assert!(build(&t, ProgramId(1), &[], 4, &[0, 1]).is_err(), "T1's first event needs main's");
    }

    #[test]
    fn slot_checksums_bind_index_table_and_content() {
        let t = table();
        let mut b = build(&t, ProgramId(42), &[], 4, &[2, 1]).unwrap();
        append_cutoff(&mut b, &[1, 1]).unwrap();
        let v = PrefixView::parse(&b, None).unwrap();
        assert_eq!((v.cutoff_checked(0), v.cutoff_checked(1)), (Ok(vec![2, 1]), Ok(vec![1, 1])));
        assert_eq!(v.cutoff_checked(2), Err(PrefixError::Checksum("cutoff 2".into())), "unwritten");
        assert!(matches!(v.cutoff_checked(4), Err(PrefixError::BadCutoff(_))));
        assert_eq!(v.cutoff_slot(1), v.cutoff_offset(1)..v.cutoff_offset(2));
        let (slot0, slot1) = (v.cutoff_slot(0), v.cutoff_slot(1));
        // A published count raised over an unwritten (all-zero) slot.
        let mut raised = b.clone();
        put32(&mut raised, PUBLISHED_OFFSET, 3);
        assert_eq!(PrefixView::parse(&raised, None).err(), Some(PrefixError::Checksum("cutoff 2".into())));
        // A slot copied to another index does not verify there.
        let mut moved = b.clone();
        moved.copy_within(slot1.clone(), slot0.start);
        assert_eq!(PrefixView::parse(&moved, None).err(), Some(PrefixError::Checksum("cutoff 0".into())));
        // Nor in another prefix of the same shape (another program id: another table checksum).
        let mut other = build(&t, ProgramId(43), &[], 4, &[2, 1]).unwrap();
        append_cutoff(&mut other, &[2, 0]).unwrap();
        other[slot1.clone()].copy_from_slice(&b[slot1]);
        assert_eq!(PrefixView::parse(&other, None).err(), Some(PrefixError::Checksum("cutoff 1".into())));
        // Lowering the count is harmless and accepted.
        let mut lowered = b.clone();
        put32(&mut lowered, PUBLISHED_OFFSET, 1);
        assert_eq!(PrefixView::parse(&lowered, None).map(|v| v.published()), Ok(1));
    }

    #[test]
    fn a_run_under_an_empty_cutoff_leaves_the_rows_unchecked_and_only_then() {
        let t = table();
        let mut b = build(&t, ProgramId(42), &[], 4, &[2, 1]).unwrap();
        let l = Layout::of(2, 3, 2, 2, 4, b.len() - Layout::of(2, 3, 2, 2, 4, 0).unwrap().end).unwrap();
        let mut constrained = b.clone();
        constrained[l.reqs] = 9; // a requirement on thread 9, the table checksum left as it was
        assert_eq!(PrefixView::parse_for_run(&constrained, None).err(), Some(PrefixError::Checksum("table".into())), "a cutoff with constraints");
        append_cutoff(&mut b, &[0, 0]).unwrap();
        b[l.reqs] = 9;
        let v = PrefixView::parse_for_run(&b, None).unwrap();
        assert!(!v.rows_checked() && v.cutoff(1) == vec![0, 0]);
        assert_eq!(PrefixView::parse(&b, None).err(), Some(PrefixError::Checksum("table".into())), "a full parse checks the rows");
        // The published slots are checked all the same, against the header's table checksum.
        let mut header = b.clone();
        put64(&mut header, TABLE_SUM, get64(&b, TABLE_SUM) ^ 1);
        assert_eq!(PrefixView::parse_for_run(&header, None).err(), Some(PrefixError::Checksum("cutoff 0".into())));
        let mut foreign = b.clone();
        put64(&mut foreign, PROGRAM, 7);
        assert!(matches!(PrefixView::parse_for_run(&foreign, Some(ProgramId(42))), Err(PrefixError::ForeignProgram { .. })));
    }

    #[test]
    fn a_run_checks_the_first_and_the_latest_cutoff_and_not_the_ones_between() {
        let t = table();
        let mut b = build(&t, ProgramId(42), &[], 4, &[2, 1]).unwrap();
        append_cutoff(&mut b, &[1, 1]).unwrap();
        append_cutoff(&mut b, &[1, 0]).unwrap();
        let l = Layout::of(2, 3, 2, 2, 4, b.len() - Layout::of(2, 3, 2, 2, 4, 0).unwrap().end).unwrap();
        let mut between = b.clone();
        between[l.slot_at(1)] ^= 1;
        assert_eq!(PrefixView::parse(&between, None).err(), Some(PrefixError::Checksum("cutoff 1".into())), "a full parse checks every slot");
        assert_eq!(PrefixView::parse_for_run(&between, None).map(|v| v.cutoff(2)), Ok(vec![1, 0]), "a run never reads cutoff 1");
        let mut latest = b.clone();
        latest[l.slot_at(2)] ^= 1;
        assert_eq!(PrefixView::parse_for_run(&latest, None).err(), Some(PrefixError::Checksum("cutoff 2".into())));
        let mut first = b.clone();
        first[l.slot_at(0)] ^= 1;
        assert_eq!(PrefixView::parse_for_run(&first, None).err(), Some(PrefixError::Checksum("cutoff 0".into())));
        // The latest larger than the first, with valid checksums: refused.
        let mut grown = b.clone();
        let sum = get64(&grown, TABLE_SUM);
        write_slot(&mut grown, &l, sum, 2, &[2, 2]);
        assert!(matches!(PrefixView::parse_for_run(&grown, None), Err(PrefixError::Corrupt(m)) if m.contains("past the table")));
        write_slot(&mut grown, &l, sum, 2, &[1, 1]);
        write_slot(&mut grown, &l, sum, 0, &[1, 0]);
        assert!(matches!(PrefixView::parse_for_run(&grown, None), Err(PrefixError::Corrupt(m)) if m.contains("cutoff 2 is larger than the one before")));
    }

    #[test]
    fn checksum_error_reads_clearly() {
        let t = table();
        let mut b = build(&t, ProgramId(42), &[], 4, &[2, 1]).unwrap();
        b[HEADER] ^= 1;
        let e = PrefixView::parse(&b, None).err().unwrap().to_string();
        assert_eq!(e, "corrupt prefix: table checksum mismatch (the file was changed by something other than irs)");
    }
}
