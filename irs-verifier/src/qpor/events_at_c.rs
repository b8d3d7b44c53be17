//! A run's operations as the unfolding sees them (000 §3, Alg. 1 line 4): the action of a step
//! (its thread, site, kind and objects, with race-free words elided), its predecessors at `C`
//! and the event it is there, made if `U` lacks it. Lookup and creation only: nothing here
//! changes `C` or the path.

use super::{site_text, Verifier};
use crate::cex;
use crate::object_table::{ObjClass, ObjIdx};
use crate::race_free_words::WordUse;
use crate::thread_names::RunThreads;
use crate::unfolding::{action_kind, ActionIdx, EventIdx};
use shared_proto::dependence::{objects_of, ObjectKey};
use shared_proto::equivalence::reads_only;
use crate::update_labels::{self, Source};
use shared_proto::{AccessKind, Event, EventKind, ObjectRef, PendingOp, ThreadId};

/// A pending operation as the event it would be (its `k` does not matter here).
pub(super) fn as_event(op: &PendingOp) -> Event {
    Event { tid: op.tid, k: 0, site: op.site, kind: op.kind, object: op.object, value: op.value }
}

impl Verifier<'_> {
    /// The action of thread `tid` performing `events` (one operation), and the thread's own
    /// object.
    pub(super) fn action_for(&mut self, threads: &RunThreads, tid: ThreadId, site: Option<shared_proto::SiteId>, kind: EventKind, events: &[Event]) -> (ActionIdx, ObjIdx) {
        let me = threads.stable(tid);
        // Most operations are one event on one object (or on a mutex and its word, a function of
        // the mutex): then the action is a function of the thread, the site, the kind and that
        // object, looked up at once.
        let single = match events {
            [e] if kind != EventKind::Create && kind != EventKind::SemInit && kind != EventKind::BarrierInit => {
                let mut keys = objects_of(e);
                match (keys.next(), keys.next(), keys.next()) {
                    (Some(k), None, None) | (Some(k @ ObjectKey::Mutex(..)), Some(ObjectKey::Word(..)), None) => Some((me, site, action_kind(kind), crate::object_table::stable(k, threads))),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(hit) = single.and_then(|k| self.action_cache.get(&k)) {
            return *hit;
        }
        let own = self.objects.thread(me);
        let mut objs = std::mem::take(&mut self.objs_buf);
        let mut elided = std::mem::take(&mut self.elided_buf);
        objs.clear();
        elided.clear();
        objs.push(own);
        // An atomic block is one event of its thread and the blocks' object: its accesses'
        // words are never its objects (see `race_free_words`).
        let in_block = kind == EventKind::Atomic;
        let mut choice = 0;
        if kind == EventKind::Create {
            // The child is "the n-th thread `me` creates": runtime ids depend on what other
            // threads created first, and a pending create's id may not be the final one.
            let nth = self.path.iter().filter_map(|n| n.event).filter(|&e| self.u.event_kind(e) == EventKind::Create && self.u.thread(e) == me).count();
            let child = self.names.intern(Some(me), nth as u32);
            objs.push(self.objects.thread(child));
        } else {
            for e in events {
                match (e.kind, e.object) {
                    (EventKind::Nondet, ObjectRef::Choice { value, .. }) => choice = value,
                    // An init is another action for every count it sets (`cex::semaphore`).
                    (EventKind::SemInit, ObjectRef::Sem { value, .. }) | (EventKind::BarrierInit, ObjectRef::Barrier { value, .. }) => choice = value,
                    _ => {}
                }
                for k in objects_of(e) {
                    let o = self.objects.of_run(k, threads);
                    if self.objects.class(o) == ObjClass::Native && self.readers.on() {
                        // Posts commute, and so do arrivals and departures: each is on its
                        // thread's copy, every other operation on the primitive and every copy
                        // (as a word's reads and writes).
                        // A barrier that more threads use than its count orders its arrivals
                        // (the last of a generation disables the next one's until the release:
                        // `cex::barrier`); learnt at the first arrival beyond the count.
                        if e.kind.commutes_natively() {
                            self.readers.read(o, me, || format!("T{} {}s{} on a primitive that operations explored so far did not know it used", tid.0, e.kind.name(), site_text(self.ex, e.site)));
                            if let (EventKind::BarrierArrive, ObjectRef::Barrier { value: count, .. }) = (e.kind, e.object) {
                                let users = self.readers.readers(o).len();
                                if users > count as usize {
                                    self.readers.order(o, || format!("T{} arrives at a barrier{} that {users} threads use, more than its count ({count}): its arrivals are ordered", tid.0, site_text(self.ex, e.site)));
                                }
                            }
                        }
                        let commutes = e.kind.commutes_natively() && !self.readers.ordered(o);
                        self.push_copies(&mut objs, o, me, commutes);
                        continue;
                    }
                    if self.objects.class(o) != ObjClass::Memory {
                        objs.push(o);
                        continue;
                    }
                    let read = reads_only(e.kind);
                    if read {
                        self.readers.read(o, me, || format!("T{} reads a word{} that writes explored so far did not know it read", tid.0, site_text(self.ex, e.site)));
                    }
                    match self.words.classify(self.objects.key(o), e.kind, in_block, || site_text(self.ex, e.site)) {
                        WordUse::Elided => elided.push(o),
                        // Reads commute: a read is on its thread's copy of the word, a write on
                        // the word and every copy (see `word_readers`).
                        WordUse::Object if self.readers.on() => self.push_copies(&mut objs, o, me, read),
                        WordUse::Object => objs.push(o),
                        WordUse::Guarded => objs.push(self.objects.atomic()),
                    }
                }
            }
        }
        objs.sort_unstable();
        objs.dedup();
        elided.sort_unstable();
        elided.dedup();
        // A word both elided and not (a memcpy whose two halves are a plain and an atomic
        // access) is an object; the restart this asks for follows.
        elided.retain(|o| objs.binary_search(o).is_err());
        if in_block {
            // The block's race-free words are checked (`record_accesses`), but what the block
            // accesses depends on what it reads, and a block moved before another reads other
            // values: they are not part of what the action is.
            self.block_words.clear();
            self.block_words.extend_from_slice(&elided);
            elided.clear();
        }
        let a = self.u.intern_action(me, own, site, action_kind(kind), &objs, &elided, choice);
        self.objs_buf = objs;
        self.elided_buf = elided;
        if let Some(k) = single {
            self.action_cache.insert(k, (a, own));
        }
        (a, own)
    }

    /// The objects of an operation by thread `me` on `o`, an object with per-thread copies (a
    /// word under reads-commute, a semaphore): an operation that commutes with its kind (a read,
    /// a post) is on `me`'s copy only; any other on `o` and every known copy (see
    /// `word_readers`).
    fn push_copies(&mut self, objs: &mut Vec<ObjIdx>, o: ObjIdx, me: crate::thread_names::StableThread, commutes: bool) {
        if commutes {
            objs.push(self.objects.reads_copy(o, me));
            return;
        }
        objs.push(o);
        self.readers.wrote(o);
        for &r in self.readers.readers(o) {
            objs.push(self.objects.reads_copy(o, r));
        }
    }

    /// The action's predecessors at `C` (into `preds_buf`), and its kind there (a trylock fails
    /// where the mutex is held).
    pub(super) fn at_c(&mut self, a: ActionIdx, kind: EventKind) -> EventKind {
        self.preds_buf.clear();
        for &o in self.u.actions(a).objects.iter() {
            self.preds_buf.push(self.c.last(o));
        }
        match kind {
            EventKind::TryLock | EventKind::TryLockFail => {
                let m = self.u.actions(a).objects.iter().copied().find(|&o| self.objects.class(o) == crate::object_table::ObjClass::Mutex);
                match m {
                    Some(m) if !cex::mutex_free_after(&self.u, m, self.c.last(m)) => EventKind::TryLockFail,
                    _ => EventKind::TryLock,
                }
            }
            k if k.on_semaphore() => {
                let objs = &self.u.actions(a).objects;
                cex::semaphore::placed(k, cex::semaphore::count_after(&self.u, &self.objects, objs, &self.preds_buf)).unwrap_or(k)
            }
            k if k.on_rwlock() => {
                let objs = &self.u.actions(a).objects;
                cex::rwlock::placed(k, cex::rwlock::holders_after(&self.u, &self.objects, objs, &self.preds_buf)).unwrap_or(k)
            }
            k => k,
        }
    }

    /// The event of action `a` at `C` (whether it is new), created with `gap` if it is (with
    /// what the value model follows of it, `src`).
    pub(super) fn event_at_c(&mut self, a: ActionIdx, kind: EventKind, gap: u32, src: Source) -> (EventIdx, bool) {
        let kind = self.at_c(a, kind);
        update_labels::make(&mut self.u, &self.objects, a, &self.preds_buf, kind, gap, src)
    }

    /// [`action_for`](Self::action_for) one event, as the value model labels it at `C`: an update
    /// that leaves memory as it was there is the read version (`update_labels`). Also its kind
    /// (the event's, relabelled).
    pub(super) fn labeled_action(&mut self, threads: &RunThreads, tid: ThreadId, e: &Event) -> (ActionIdx, ObjIdx, EventKind) {
        let (a, own) = self.action_for(threads, tid, e.site, e.kind, std::slice::from_ref(e));
        if !update_labels::is_update(e.kind) {
            return (a, own, e.kind);
        }
        self.at_c(a, e.kind);
        let label = update_labels::label(&self.u, &self.objects, a, &self.preds_buf, e.kind, update_labels::source_of(e));
        if label == e.kind {
            return (a, own, label);
        }
        let relabeled = Event { kind: label, ..*e };
        let (a, own) = self.action_for(threads, tid, e.site, label, &[relabeled]);
        (a, own, label)
    }

    /// The other version of an update `e` (already labelled) that the value model follows: the
    /// write version of a read, the read version of a write (`update_labels`), as an action of
    /// thread `tid` and its kind.
    /// `action`: `e`'s. The read version of a write only where some placement finds a value it
    /// leaves unchanged (`update_labels::read_version_possible`).
    pub(super) fn alternate(&mut self, threads: &RunThreads, tid: ThreadId, e: &Event, action: ActionIdx) -> Option<(ActionIdx, EventKind)> {
        let src = update_labels::source_of(e);
        let operand = src.and_then(|(_, op)| op).filter(|_| update_labels::is_update(e.kind))?;
        let other = match e.kind {
            EventKind::Access(AccessKind::UnchangedUpdate) => EventKind::Access(shared_proto::value_model::update_kind(operand)),
            _ if update_labels::read_version_possible(&self.u, &self.objects, action, |o| self.c.last(o), src) => EventKind::Access(AccessKind::UnchangedUpdate),
            _ => return None,
        };
        let (a, _) = self.action_for(threads, tid, e.site, other, &[Event { kind: other, ..*e }]);
        (!self.no_event(a)).then_some((a, other))
    }

    /// Whether a step of action `a` is no event: an access to race-free words only.
    pub(super) fn no_event(&self, a: ActionIdx) -> bool {
        let a = self.u.actions(a);
        a.objects.len() == 1 && !a.elided.is_empty()
    }
}
