//! The objects events synchronise on (DESIGN §3), interned as dense [`ObjIdx`]es. An event
//! belongs to its own thread's object and to the objects [`shared_proto::dependence::objects_of`]
//! gives it (memory words, mutexes, the threads it creates or joins); every thread id inside an
//! object is translated into its [`StableThread`] name first, so that the same object has the
//! same index in every execution.
//!
//! Under the reads-commute equivalence a word that is an object has one *copy* per thread that
//! reads it (DESIGN §3's refinement): a read by `t` is on the copy `(w, t)`, a write on the word
//! itself and on every copy (see `word_readers`). A copy is a memory object like the word. A
//! semaphore has one copy per thread that posts it, the same way: a post is on its thread's
//! copy, every other operation on the semaphore and every copy (see `cex::semaphore`); a
//! barrier one per thread that waits at it, for its arrivals and departures (`cex::barrier`).

use crate::thread_names::{RunThreads, StableThread};
use shared_proto::dependence::ObjectKey;
use shared_proto::{Region, ThreadId};
use crate::fx_hash::FxHashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjIdx(pub u32);

/// What kind of object: what may be reordered on it (see `cex`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjClass {
    Memory,
    Mutex,
    /// A thread's life: its events, its creation, its joins, its kill at the process's end. Only
    /// a kill is reordered on it (see `cex`).
    Thread,
    /// The process: its end.
    Process,
    /// Atomic blocks, and accesses to words that race with them (see `race_free_words`): moved
    /// like a memory word's accesses.
    Atomic,
    /// A primitive modelled natively (a semaphore, a barrier), or one thread's copy of it for
    /// its operations that commute (see `cex::semaphore`, `cex::barrier`).
    Native,
}

/// An object: one of the program's, or a word's copy for the reads of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Shared(ObjectKey),
    Reads(ObjectKey, StableThread),
}

#[derive(Default)]
pub struct ObjectTable {
    index: FxHashMap<Key, ObjIdx>,
    keys: Vec<Key>,
}

fn stable_region(r: Region, threads: &RunThreads) -> Region {
    match r {
        Region::Static => Region::Static,
        Region::Heap { thread, alloc } => Region::Heap { thread: ThreadId(threads.stable(thread).0), alloc },
        Region::Stack { thread } => Region::Stack { thread: ThreadId(threads.stable(thread).0) },
    }
}

/// `key` as one execution names it, with its thread ids as stable names: the same in every
/// execution.
pub fn stable(key: ObjectKey, threads: &RunThreads) -> ObjectKey {
    match key {
        ObjectKey::Word(r, w) => ObjectKey::Word(stable_region(r, threads), w),
        ObjectKey::Mutex(r, a) => ObjectKey::Mutex(stable_region(r, threads), a),
        ObjectKey::Thread(t) => ObjectKey::Thread(threads.stable(ThreadId(t)).0),
        ObjectKey::Process => ObjectKey::Process,
        ObjectKey::Atomic => ObjectKey::Atomic,
        ObjectKey::Sem(r, a) => ObjectKey::Sem(stable_region(r, threads), a),
        ObjectKey::Barrier(r, a) => ObjectKey::Barrier(stable_region(r, threads), a),
        ObjectKey::RwLock(r, a) => ObjectKey::RwLock(stable_region(r, threads), a),
    }
}

impl ObjectTable {
    fn intern(&mut self, key: ObjectKey) -> ObjIdx {
        self.intern_key(Key::Shared(key))
    }

    fn intern_key(&mut self, key: Key) -> ObjIdx {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = ObjIdx(self.keys.len() as u32);
        self.keys.push(key);
        self.index.insert(key, i);
        i
    }

    /// The atomic blocks' object.
    pub fn atomic(&mut self) -> ObjIdx {
        self.intern(ObjectKey::Atomic)
    }

    pub fn thread(&mut self, t: StableThread) -> ObjIdx {
        self.intern(ObjectKey::Thread(t.0))
    }

    /// The object of `key` as one execution names it.
    pub fn of_run(&mut self, key: ObjectKey, threads: &RunThreads) -> ObjIdx {
        self.intern(stable(key, threads))
    }

    /// The copy of word `word` (an object of [`ObjClass::Memory`]) for the reads of thread `t`
    /// (of a semaphore or barrier, [`ObjClass::Native`], for its operations that commute).
    pub fn reads_copy(&mut self, word: ObjIdx, t: StableThread) -> ObjIdx {
        let key = self.key(word);
        self.intern_key(Key::Reads(key, t))
    }

    pub fn class(&self, o: ObjIdx) -> ObjClass {
        match self.key(o) {
            ObjectKey::Word(..) => ObjClass::Memory,
            ObjectKey::Mutex(..) => ObjClass::Mutex,
            ObjectKey::Thread(_) => ObjClass::Thread,
            ObjectKey::Process => ObjClass::Process,
            ObjectKey::Atomic => ObjClass::Atomic,
            ObjectKey::Sem(..) | ObjectKey::Barrier(..) | ObjectKey::RwLock(..) => ObjClass::Native,
        }
    }

    /// Whether `o` is one thread's copy of a word or semaphore (see [`ObjectTable::reads_copy`]).
    pub fn is_copy(&self, o: ObjIdx) -> bool {
        matches!(self.keys[o.0 as usize], Key::Reads(..))
    }

    /// The object's key (as every execution names it; a copy's is its word's).
    pub fn key(&self, o: ObjIdx) -> ObjectKey {
        match self.keys[o.0 as usize] {
            Key::Shared(k) | Key::Reads(k, _) => k,
        }
    }
}

impl ObjectTable {
    /// The thread whose life object `o` is.
    pub fn thread_of(&self, o: ObjIdx) -> Option<StableThread> {
        match self.key(o) {
            ObjectKey::Thread(t) => Some(StableThread(t)),
            _ => None,
        }
    }
}
