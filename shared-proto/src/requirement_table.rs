//! The requirement table of an admissible prefix (DESIGN §4; IRS paper §3): for each event
//! `(t, k)` of a complete trace `τ`, the events of other threads that must have completed
//! before it, i.e. its cross-thread happens-before predecessors in `τ` among dependent events,
//! transitively reduced, under the equivalence the trace was verified in (two reads of a word
//! are never ordered by a constraint under reads-commute). A *scheduling constraint* is one
//! such edge.

use crate::dependence::{objects_of, ObjectKey};
use crate::equivalence::{Equivalence, LastAccesses};
use crate::event::{EventKind, ObjectRef};
use crate::ids::{SiteId, ThreadId};
use crate::trace::{ThreadInfo, Trace};
use crate::vector_clock::VectorClock;
use std::collections::HashMap;

/// Thread `thread` must have completed `count` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Requirement {
    pub thread: ThreadId,
    pub count: u32,
}

/// The row of one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The event's site in `τ`: a run whose event `(t, k)` has another site has left `τ`.
    pub site: Option<SiteId>,
    pub requires: Vec<Requirement>,
    /// A choice's value in `τ` (which waiter a signal wakes, a `__VERIFIER_nondet_*` value):
    /// what the run must choose there, for the events after it to be `τ`'s. `None` for every
    /// other event.
    pub choice: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequirementTable {
    pub threads: Vec<ThreadInfo>,
    /// `rows[t][k]`: the row of event `(t, k)`.
    pub rows: Vec<Vec<Row>>,
    /// The events of `τ` in trace order, as `(thread, k)`: what "trace order" means for `--keep`.
    pub order: Vec<(ThreadId, u32)>,
    /// The objects `τ`'s events touch, as another process names them (`prefix_objects`;
    /// `None`: some could not be named).
    pub objects: Option<Vec<crate::prefix_objects::Entry>>,
}

impl RequirementTable {
    /// The table of `trace`, verified under `eq`. Under reads-commute, an update that left
    /// memory as it was is a read as the value model labels it (`crate::value_model`, as the
    /// exploration did): no constraint orders it with another thread's read. (A trace the model
    /// contradicts, which no verification ends on, keeps its updates as writes.)
    pub fn from_trace(trace: &Trace, eq: Equivalence) -> RequirementTable {
        let n = trace.threads.len();
        let labeled;
        let events: &[crate::event::Event] = match eq {
            Equivalence::ReadsCommute => {
                let mut l = trace.events.clone();
                labeled = match crate::value_model::label_trace(&mut l) {
                    None => l,
                    Some(_) => trace.events.clone(),
                };
                &labeled
            }
            Equivalence::Mazurkiewicz => &trace.events,
        };
        let mut clocks: Vec<VectorClock> = Vec::with_capacity(events.len());
        let mut thread_clock = vec![VectorClock::new(n); n];
        let mut last_on = LastAccesses::new(eq);
        let mut created_by: HashMap<u32, usize> = HashMap::new();
        // Each thread's last event so far: a kill at the process's end follows it (the kill is
        // dependent with every event of the thread it cuts off, DESIGN §3).
        let mut last_of: Vec<Option<usize>> = vec![None; n];
        let mut rows: Vec<Vec<Row>> = vec![Vec::new(); n];
        for (i, e) in events.iter().enumerate() {
            let mut direct: Vec<usize> = Vec::new();
            if e.k == 0 {
                direct.extend(created_by.get(&e.tid.0).copied());
            }
            if let (EventKind::Kill, ObjectRef::Thread(v)) = (e.kind, e.object) {
                direct.extend(last_of.get(v.index()).copied().flatten());
            }
            let keys: Vec<ObjectKey> = objects_of(e).collect();
            for key in &keys {
                last_on.before(key, e, &mut direct);
            }
            // A thread's own earlier events precede it in program order: no constraint.
            direct.retain(|&j| events[j].tid != e.tid);
            // Per source thread only its latest event matters.
            direct.sort_by_key(|&j| (events[j].tid, std::cmp::Reverse(events[j].k)));
            direct.dedup_by_key(|j| events[*j].tid);
            let before = &thread_clock[e.tid.index()];
            let requires: Vec<Requirement> = direct
                .iter()
                .filter(|&&j| {
                    let (u, k) = (events[j].tid, events[j].k);
                    // Implied by program order, or by another direct predecessor: not a constraint.
                    !before.covers(u, k) && !direct.iter().any(|&o| o != j && clocks[o].covers(u, k))
                })
                .map(|&j| Requirement { thread: events[j].tid, count: events[j].k + 1 })
                .collect();
            let mut vc = before.clone();
            for &j in &direct {
                vc.join(&clocks[j]);
            }
            vc.set(e.tid, e.k + 1);
            for key in keys {
                last_on.record(key, e, i);
            }
            if let (EventKind::Create, ObjectRef::Thread(child)) = (e.kind, e.object) {
                created_by.insert(child.0, i);
            }
            thread_clock[e.tid.index()] = vc.clone();
            last_of[e.tid.index()] = Some(i);
            clocks.push(vc);
            let choice = match e.object {
                ObjectRef::Choice { value, .. } => Some(value),
                _ => None,
            };
            rows[e.tid.index()].push(Row { site: e.site, requires, choice });
        }
        let objects = crate::prefix_objects::index(events, trace.image);
        RequirementTable { threads: trace.threads.clone(), rows, order: events.iter().map(|e| (e.tid, e.k)).collect(), objects }
    }

    /// Constraints of the events inside `cut` (`cut[t]` events of each thread `t`).
    pub fn constraints_within(&self, cut: &[u32]) -> usize {
        self.rows
            .iter()
            .enumerate()
            .map(|(t, rows)| rows.iter().take(cut.get(t).copied().unwrap_or(0) as usize).map(|r| r.requires.len()).sum::<usize>())
            .sum()
    }

    /// The cut of the whole trace.
    pub fn full_cut(&self) -> Vec<u32> {
        self.rows.iter().map(|r| r.len() as u32).collect()
    }

    /// The shortest prefix of the trace (in trace order) that holds at least `n` constraints
    /// (all of them if there are fewer); `n = 0` gives the empty prefix: no constraint at all.
    pub fn cut_keeping(&self, n: usize) -> Vec<u32> {
        let mut cut = vec![0u32; self.rows.len()];
        let mut kept = 0;
        for &(t, k) in &self.order {
            if kept >= n {
                break;
            }
            kept += self.rows[t.index()][k as usize].requires.len();
            cut[t.index()] = k + 1;
        }
        if kept < n {
            return self.full_cut();
        }
        cut
    }

    /// Is `cut` downward closed: does it contain every requirement of every event inside it?
    pub fn is_downward_closed(&self, cut: &[u32]) -> bool {
        cut.len() == self.rows.len()
            && self.rows.iter().enumerate().all(|(t, rows)| {
                cut[t] as usize <= rows.len()
                    && rows[..cut[t] as usize].iter().all(|r| r.requires.iter().all(|q| cut[q.thread.index()] >= q.count))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;
    use crate::event::Event;
    use crate::outcome::Outcome;
    use std::sync::Arc;

    fn ev(tid: u32, k: u32, kind: EventKind, object: ObjectRef) -> Event {
        Event { tid: ThreadId(tid), k, site: None, kind, object, value: None }
    }
    fn mem(addr: u64) -> ObjectRef {
        ObjectRef::Memory { addr, size: 4, logical: None }
    }
    const LOAD: EventKind = EventKind::Access(AccessKind::Load);
    const STORE: EventKind = EventKind::Access(AccessKind::Store);

    /// main creates T1; T1 writes x; main writes y, then x; main joins T1.
    fn sample() -> Trace {
        Trace {
            program_id: Default::default(),
            argv: vec![],
            sites: Arc::new(vec![]),
            globals: Arc::new(vec![]),
            image: Default::default(),
            threads: vec![
                ThreadInfo { id: ThreadId(0), parent: None, nth_child: 0 },
                ThreadInfo { id: ThreadId(1), parent: Some(ThreadId(0)), nth_child: 0 },
            ],
            events: vec![
                ev(0, 0, EventKind::Create, ObjectRef::Thread(ThreadId(1))),
                ev(1, 0, STORE, mem(0x10)),
                ev(0, 1, STORE, mem(0x20)),
                ev(1, 1, LOAD, mem(0x20)),
                ev(0, 2, STORE, mem(0x10)),
                ev(1, 2, EventKind::Exit, ObjectRef::Thread(ThreadId(1))),
                ev(0, 3, EventKind::Join, ObjectRef::Thread(ThreadId(1))),
            ],
            steps: vec![],
            outcome: Outcome::Exit(0),
        }
    }

    #[test]
    fn builds_reduced_cross_thread_edges() {
        let t = RequirementTable::from_trace(&sample(), Equivalence::Mazurkiewicz);
        let req = |th: usize, k: usize| t.rows[th][k].requires.clone();
        let r = |thread, count| Requirement { thread: ThreadId(thread), count };
        assert_eq!(req(1, 0), vec![r(0, 1)], "T1 starts after its creation");
        assert_eq!(req(1, 1), vec![r(0, 2)], "T1 reads y after main wrote it");
        // main's write of x follows T1's write of x; nothing else orders them.
        assert_eq!(req(0, 2), vec![r(1, 1)]);
        assert_eq!(req(0, 3), vec![r(1, 3)], "join after exit");
        assert_eq!(req(0, 0), vec![]);
        assert_eq!(t.constraints_within(&t.full_cut()), 4);
        assert_eq!(t.cut_keeping(0), vec![0, 0]);
        assert_eq!(t.cut_keeping(1), vec![1, 1]);
        assert_eq!(t.cut_keeping(99), t.full_cut());
        for n in 0..=4 {
            assert!(t.is_downward_closed(&t.cut_keeping(n)));
        }
        assert!(!t.is_downward_closed(&[0, 1]), "T1's first event needs main's create");
    }

    #[test]
    fn implied_edges_are_not_constraints() {
        // T1 writes x then y; main reads x then y: main's read of y is ordered after T1's write
        // of y directly, and its read of x after T1's write of x; both edges are needed. But if
        // main reads y then x, reading x after T1's write of x is implied by y's edge.
        let mut tr = sample();
        tr.events = vec![
            ev(0, 0, EventKind::Create, ObjectRef::Thread(ThreadId(1))),
            ev(1, 0, STORE, mem(0x10)),
            ev(1, 1, STORE, mem(0x20)),
            ev(0, 1, LOAD, mem(0x20)),
            ev(0, 2, LOAD, mem(0x10)),
        ];
        let t = RequirementTable::from_trace(&tr, Equivalence::Mazurkiewicz);
        assert_eq!(t.rows[0][1].requires, vec![Requirement { thread: ThreadId(1), count: 2 }]);
        assert_eq!(t.rows[0][2].requires, vec![], "implied by the read of y");
    }

    /// Two threads read what main wrote, then main writes again: under reads-commute the
    /// reads are not ordered with each other, and the second write follows both (under
    /// Mazurkiewicz the reads are a chain and the write follows the last).
    #[test]
    fn reads_of_a_word_are_never_ordered_by_a_constraint_under_reads_commute() {
        let mut tr = sample();
        tr.threads.push(ThreadInfo { id: ThreadId(2), parent: Some(ThreadId(0)), nth_child: 1 });
        tr.events = vec![
            ev(0, 0, STORE, mem(0x10)),
            ev(0, 1, EventKind::Create, ObjectRef::Thread(ThreadId(1))),
            ev(0, 2, EventKind::Create, ObjectRef::Thread(ThreadId(2))),
            ev(1, 0, LOAD, mem(0x10)),
            ev(2, 0, LOAD, mem(0x10)),
            ev(0, 3, STORE, mem(0x10)),
        ];
        let r = |thread, count| Requirement { thread: ThreadId(thread), count };
        let rc = RequirementTable::from_trace(&tr, Equivalence::ReadsCommute);
        assert_eq!(rc.rows[2][0].requires, vec![r(0, 3)], "T2's read follows its creation only");
        assert_eq!(rc.rows[0][3].requires, vec![r(1, 1), r(2, 1)], "the write follows both reads");
        let mz = RequirementTable::from_trace(&tr, Equivalence::Mazurkiewicz);
        assert_eq!(mz.rows[2][0].requires, vec![r(0, 3), r(1, 1)], "T2's read follows T1's");
        assert_eq!(mz.rows[0][3].requires, vec![r(2, 1)]);
    }

    /// main stores 0; T1's compare-exchange 0 -> 1 succeeds, T2's then fails (a read, by the
    /// value model), and T1 loads: the failed one is not ordered with T1's later load, only
    /// after T1's write; taken as a write (no values: a RECORD trace) it would be.
    #[test]
    fn a_failed_compare_exchange_is_no_constraint_for_a_read() {
        use crate::value_model::{raw, Operand, Valued};
        let at = |tid, k, kind, operand: Option<Operand>, changed| Event { value: operand.map(|operand| Valued { operand, changed }), ..ev(tid, k, kind, mem(0x10)) };
        let cas = |e, d| Some(Operand::Cas { expected: raw(e), desired: raw(d) });
        let mut tr = sample();
        tr.threads.push(ThreadInfo { id: ThreadId(2), parent: Some(ThreadId(0)), nth_child: 1 });
        let cmpxchg = EventKind::Access(AccessKind::CmpXchg);
        tr.events = vec![
            at(0, 0, STORE, Some(Operand::Store(raw(0))), false),
            ev(0, 1, EventKind::Create, ObjectRef::Thread(ThreadId(1))),
            ev(0, 2, EventKind::Create, ObjectRef::Thread(ThreadId(2))),
            at(1, 0, cmpxchg, cas(0, 1), true),
            at(2, 0, cmpxchg, cas(0, 2), false),
            at(1, 1, LOAD, None, false),
        ];
        let r = |thread, count| Requirement { thread: ThreadId(thread), count };
        let rc = RequirementTable::from_trace(&tr, Equivalence::ReadsCommute);
        assert_eq!(rc.rows[2][0].requires, vec![r(0, 3), r(1, 1)], "after the creation and T1's write");
        assert_eq!(rc.rows[1][1].requires, vec![], "T1's load is not ordered after T2's failed exchange");
        for e in &mut tr.events {
            e.value = None;
        }
        let unlabeled = RequirementTable::from_trace(&tr, Equivalence::ReadsCommute);
        assert_eq!(unlabeled.rows[1][1].requires, vec![r(2, 1)], "without values it is a write");
    }
}
