//! The synchronisation primitives the runtime builds from internal locks and choices (DESIGN §3
//! "Objects and dependence"): condition variables, semaphores, barriers, rwlocks, `pthread_once`,
//! spin locks, mutex kinds, the operations they are made of (`sync_ops`, dispatching to the mode),
//! the runtime's own locks and the table of their state.

pub(crate) mod sync_ops;
pub(crate) mod condvar;
pub(crate) mod semaphore;
pub(crate) mod barrier;
pub(crate) mod rwlock;
pub(crate) mod rwlock_native;
pub(crate) mod once;
pub(crate) mod spin_lock;
pub(crate) mod mutex;
pub(crate) mod mutex_kind;
pub(crate) mod rt_lock;
pub(crate) mod object_table;
pub(crate) mod futex;

/// The tables of state that only the modes outside EXPLORE use (semaphores', barriers' and
/// rwlocks' states, the runtime's own locks): a persistent EXPLORE worker leaves them out of the
/// memory it restores after each execution (each 64 KiB; they were 43% of it).
pub fn outside_explore_tables() -> [(usize, usize); 4] {
    [semaphore::SEMS.region(), barrier::BARRIERS.region(), rwlock::RWLOCKS.region(), rt_lock::LOCKS.region()]
}
