//! The objects events synchronise on (DESIGN §3), interned as dense [`ObjIdx`]es. An event
//! belongs to its own thread's object and to the objects [`shared_proto::dependence::objects_of`]
//! gives it (memory words, mutexes, the threads it creates or joins); every thread id inside an
//! object is translated into its [`StableThread`] name first, so that the same object has the
//! same index in every execution.

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
}

#[derive(Default)]
pub struct ObjectTable {
    index: FxHashMap<ObjectKey, ObjIdx>,
    keys: Vec<ObjectKey>,
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
    }
}

impl ObjectTable {
    fn intern(&mut self, key: ObjectKey) -> ObjIdx {
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

    pub fn class(&self, o: ObjIdx) -> ObjClass {
        match self.keys[o.0 as usize] {
            ObjectKey::Word(..) => ObjClass::Memory,
            ObjectKey::Mutex(..) => ObjClass::Mutex,
            ObjectKey::Thread(_) => ObjClass::Thread,
            ObjectKey::Process => ObjClass::Process,
            ObjectKey::Atomic => ObjClass::Atomic,
        }
    }

    /// The object's key (as every execution names it).
    pub fn key(&self, o: ObjIdx) -> ObjectKey {
        self.keys[o.0 as usize]
    }
}

impl ObjectTable {
    /// The thread whose life object `o` is.
    pub fn thread_of(&self, o: ObjIdx) -> Option<StableThread> {
        match self.keys[o.0 as usize] {
            ObjectKey::Thread(t) => Some(StableThread(t)),
            _ => None,
        }
    }
}
