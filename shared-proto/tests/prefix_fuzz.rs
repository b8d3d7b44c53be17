//! Prefix files changed by anything but irs are rejected (the checksums of `prefix_segment`):
//! random bit flips anywhere in a realistic prefix either make `PrefixView::parse` fail, or
//! leave everything the runtime would enforce as it was (the table, and published cutoffs that
//! are among the original's: a lowered published count, or a changed unused slot, is harmless).

use shared_proto::prefix_segment::{append_cutoff, build, PrefixView, PUBLISHED_OFFSET};
use shared_proto::requirement_table::{Requirement, RequirementTable, Row};
use shared_proto::{AccessKind, ProgramId, SiteId, SiteInfo, SiteKind, ThreadId, ThreadInfo};

/// splitmix64: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PROGRAM: ProgramId = ProgramId(0x1234_5678_9abc_def0);

/// A table as a recorded run gives one: main creates T1 and T2, T1 creates T3; each thread's
/// first event requires its creation; events of an interleaving require, now and then, the
/// latest event of another thread (lock hand-overs, conflicting accesses); each thread ends
/// with its exit (no site).
fn realistic_table(rng: &mut Rng) -> RequirementTable {
    let len = [12u32, 9, 8, 7];
    // (creator, its event that creates, nth child)
    let created: [Option<(u32, u32, u32)>; 4] = [None, Some((0, 1, 0)), Some((0, 3, 1)), Some((1, 2, 0))];
    let threads = (0..4)
        .map(|t| ThreadInfo { id: ThreadId(t), parent: created[t as usize].map(|c| ThreadId(c.0)), nth_child: created[t as usize].map_or(0, |c| c.2) })
        .collect();
    let mut rows: Vec<Vec<Row>> = vec![Vec::new(); 4];
    let mut order = Vec::new();
    let mut done = [0u32; 4];
    while done.iter().zip(&len).any(|(d, l)| d < l) {
        let t = rng.below(4);
        if done[t] == len[t] {
            continue;
        }
        let k = done[t];
        let mut requires = Vec::new();
        if k == 0 {
            if let Some((c, at, _)) = created[t] {
                if done[c as usize] <= at {
                    continue; // not created yet
                }
                requires.push(Requirement { thread: ThreadId(c), count: at + 1 });
            }
        } else if rng.below(2) == 0 {
            let u = rng.below(4);
            if u != t && done[u] > 0 {
                requires.push(Requirement { thread: ThreadId(u as u32), count: done[u] });
            }
        }
        let site = (k + 1 < len[t]).then(|| SiteId(0x5100 + (t as u64) * 0x100 + k as u64));
        let choice = (rng.below(3) == 0).then(|| rng.below(4) as u32);
        rows[t].push(Row { site, requires, choice });
        order.push((ThreadId(t as u32), k));
        done[t] += 1;
    }
    RequirementTable { threads, rows, order, objects: None }
}

fn sites(table: &RequirementTable) -> Vec<(SiteId, SiteInfo)> {
    let kinds = [SiteKind::Access(AccessKind::Load), SiteKind::Access(AccessKind::Store), SiteKind::Lock, SiteKind::Unlock, SiteKind::Create];
    table
        .rows
        .iter()
        .flatten()
        .filter_map(|r| r.site)
        .enumerate()
        .map(|(i, s)| {
            let info = SiteInfo {
                kind: kinds[i % kinds.len()],
                function: format!("worker_{}", i % 3),
                file: "bank.c".into(),
                line: 10 + i as u32,
                column: 3,
                target: "global balance".into(),
            };
            (s, info)
        })
        .collect()
}

/// A prefix with 5 published cutoffs (the full one, then smaller ones) in a log of `capacity`.
fn realistic_prefix_in(capacity: usize) -> (RequirementTable, Vec<(SiteId, SiteInfo)>, Vec<u8>) {
    let mut rng = Rng(7);
    let table = realistic_table(&mut rng);
    let sites = sites(&table);
    let full = table.full_cut();
    let mut b = build(&table, PROGRAM, &sites, capacity, &full).unwrap();
    let total = table.constraints_within(&full);
    assert!(total >= 8, "a table with constraints: {total}");
    for n in [total * 3 / 4, total / 2, total / 4, 0] {
        append_cutoff(&mut b, &table.cut_keeping(n)).unwrap();
    }
    (table, sites, b)
}

/// In a log of 12: most of the file is checked bytes.
fn realistic_prefix() -> (RequirementTable, Vec<(SiteId, SiteInfo)>, Vec<u8>) {
    realistic_prefix_in(12)
}

/// Everything the runtime would enforce from `v` is what `orig` has: the table, the sites, and
/// each published cutoff one of the original's.
fn harmless(v: &PrefixView, orig: &PrefixView) -> Result<(), String> {
    if v.program_id() != orig.program_id() || v.threads() != orig.threads() || v.sites() != orig.sites() {
        return Err("header or sites differ".into());
    }
    for t in 0..v.threads() {
        let t = ThreadId(t as u32);
        if v.thread_rows(t) != orig.thread_rows(t) || v.thread_info(t) != orig.thread_info(t) {
            return Err(format!("{t} differs"));
        }
        for k in 0..v.thread_rows(t) {
            let (s1, r1) = v.row(t, k);
            let (s2, r2) = orig.row(t, k);
            if s1 != s2 || !r1.eq(r2) || v.choice(t, k) != orig.choice(t, k) {
                return Err(format!("row {t}#{k} differs"));
            }
        }
    }
    let originals: Vec<Vec<u32>> = (0..orig.published()).map(|i| orig.cutoff(i)).collect();
    for i in 0..v.published() {
        if !originals.contains(&v.cutoff(i)) {
            return Err(format!("published cutoff {i} {:?} is none of {originals:?}", v.cutoff(i)));
        }
    }
    Ok(())
}

#[test]
fn the_realistic_prefix_round_trips() {
    let (table, sites, b) = realistic_prefix();
    let v = PrefixView::parse(&b, Some(PROGRAM)).unwrap();
    assert_eq!((v.threads(), v.published(), v.capacity()), (4, 5, 12));
    assert_eq!(v.sites(), sites);
    for t in 0..4 {
        let t = ThreadId(t);
        assert_eq!(v.thread_info(t), table.threads[t.index()]);
        for (k, row) in table.rows[t.index()].iter().enumerate() {
            let (site, reqs) = v.row(t, k as u32);
            assert_eq!((site, reqs.collect::<Vec<_>>(), v.choice(t, k as u32)), (row.site, row.requires.clone(), row.choice));
        }
    }
    assert_eq!(v.cutoff(4), vec![0; 4]);
    assert!((0..5).all(|i| v.cutoff_checked(i) == Ok(v.cutoff(i))));
}

/// Flip 4 random bits of `b`, `n` times: (rejected, accepted and harmless); panics on a
/// harmful one accepted.
fn fuzz(b: &[u8], n: usize, seed: u64) -> (usize, usize) {
    let orig = PrefixView::parse(b, None).unwrap();
    let mut rng = Rng(seed);
    let (mut rejected, mut accepted) = (0, 0);
    for i in 0..n {
        let mut m = b.to_vec();
        let mut flips = Vec::new();
        for _ in 0..4 {
            let bit = rng.below(m.len() * 8);
            m[bit / 8] ^= 1 << (bit % 8);
            flips.push(bit);
        }
        match PrefixView::parse(&m, None) {
            Err(_) => rejected += 1,
            Ok(v) => {
                if let Err(e) = harmless(&v, &orig) {
                    panic!("iteration {i}: bits {flips:?} (of {} bytes) accepted, and {e}", m.len());
                }
                accepted += 1;
            }
        }
    }
    println!("{n} prefixes of {} bytes with 4 random bit flips: {rejected} rejected, {accepted} accepted (harmless)", b.len());
    (rejected, accepted)
}

#[test]
fn four_random_bit_flips_are_rejected_or_harmless() {
    // A small log: nearly every flip lands in checked bytes.
    let (rejected, _) = fuzz(&realistic_prefix().2, 5000, 0x1b5_f122);
    assert!(rejected > 4900, "{rejected} of 5000");
    // The log of `irs constrain` (4096 slots): most of the file is unused slots, where flips
    // are harmless; those that reach the table or a published slot are caught.
    let (rejected, accepted) = fuzz(&realistic_prefix_in(4096).2, 2000, 0xf1_1ee);
    assert!(rejected > 0 && accepted > 0, "{rejected} rejected, {accepted} accepted");
}

/// Every single bit flip in the table (header but for the published count, threads, rows,
/// requirements, padding, sites) or in a published cutoff slot is rejected.
#[test]
fn every_single_bit_flip_in_the_table_or_a_published_slot_is_rejected() {
    let (_, _, b) = realistic_prefix();
    let v = PrefixView::parse(&b, None).unwrap();
    let log = v.cutoff_offset(0);
    let sites_at = v.cutoff_offset(v.capacity());
    let published_slots = v.cutoff_offset(0)..v.cutoff_offset(v.published());
    let checked = (0..log).filter(|&i| !(PUBLISHED_OFFSET..PUBLISHED_OFFSET + 4).contains(&i)).chain(published_slots).chain(sites_at..b.len());
    let mut n = 0;
    for byte in checked {
        for bit in 0..8 {
            let mut m = b.clone();
            m[byte] ^= 1 << bit;
            assert!(PrefixView::parse(&m, None).is_err(), "byte {byte} bit {bit} flipped: accepted");
            n += 1;
        }
    }
    println!("{n} single bit flips in {} checked bytes: all rejected", n / 8);
    assert!(n / 8 > b.len() / 2);
}

/// The published count raised over slots irs never wrote, or a slot irs never wrote filled
/// with a plausible vector by someone else, is rejected.
#[test]
fn unwritten_or_foreign_slots_are_rejected() {
    let (_, _, b) = realistic_prefix();
    let v = PrefixView::parse(&b, None).unwrap();
    for count in 6..=12u32 {
        let mut m = b.clone();
        m[PUBLISHED_OFFSET..PUBLISHED_OFFSET + 4].copy_from_slice(&count.to_le_bytes());
        assert!(PrefixView::parse(&m, None).is_err(), "published {count}");
    }
    // Slot 5 written with slot 4's vector (all zeros, valid by every other rule), checksum
    // copied along: it is slot 4's, not slot 5's.
    let mut m = b.clone();
    let (s4, s5) = (v.cutoff_slot(4), v.cutoff_slot(5));
    m.copy_within(s4, s5.start);
    m[PUBLISHED_OFFSET..PUBLISHED_OFFSET + 4].copy_from_slice(&6u32.to_le_bytes());
    assert!(PrefixView::parse(&m, None).is_err());
    assert!(PrefixView::parse(&b, None).unwrap().cutoff_checked(5).is_err());
}
