//! The pthread functions the pass routes to the runtime (DESIGN §3, §5). Each takes the site id
//! as an extra last argument. In OFF mode they only call the real function.

use crate::mode::{self, Mode};
use crate::mutex_kind;
use crate::chaos;
use crate::enforcer;
use crate::recorder;
use crate::scheduler;
use crate::serial::{self, Op};
use crate::thread_flag;
use crate::thread_state;
use shared_proto::{EventKind, ObjectRef, SiteId, ThreadId};
use std::ffi::{c_int, c_void};

type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

/// What a new thread needs before its start routine: its logical id in the recording and its
/// logical id in the prefix (each when that mode is on).
struct Start {
    routine: StartRoutine,
    arg: *mut c_void,
    recorded: Option<ThreadId>,
    enforced: Option<u32>,
    /// Its id in a serialised run.
    serial: Option<u32>,
    /// Its name by creation path (`thread_state::child_name`).
    name: u64,
}

/// Where a creator leaves a new thread's [`Start`]: fixed slots, so that neither side allocates.
/// (A thread's first `malloc` or `free` makes glibc give it an arena of its own: a mapping of
/// 64 MiB, trimmed, tens of µs per thread that the plain build never pays. Freeing a boxed
/// `Start` in each new thread cost the 15- and 16-thread benchmarks of the IRS paper 5% of
/// their run time under an empty prefix.) When every slot is taken, a box is used after all.
struct StartSlot {
    /// Set while a creator's `Start` waits in the slot for its thread.
    busy: std::sync::atomic::AtomicBool,
    start: std::cell::UnsafeCell<std::mem::MaybeUninit<Start>>,
}

// SAFETY: a slot's `start` is written only by the creator that set `busy`, then read only by the
// one thread it was handed to, which clears `busy` after reading (see `claim` and `take`).
unsafe impl Sync for StartSlot {}

const START_SLOTS: usize = 128;
#[allow(clippy::declare_interior_mutable_const)]
const FREE_SLOT: StartSlot = StartSlot { busy: std::sync::atomic::AtomicBool::new(false), start: std::cell::UnsafeCell::new(std::mem::MaybeUninit::uninit()) };
static START_SLOTS_TABLE: [StartSlot; START_SLOTS] = [FREE_SLOT; START_SLOTS];

/// The argument of `trampoline`: a slot of [`START_SLOTS_TABLE`] or a leaked box.
fn hand_over(start: Start) -> *mut c_void {
    for slot in START_SLOTS_TABLE.iter() {
        // Acquire: the previous thread's read of this slot happened before we overwrite it (it
        // cleared `busy` with release).
        if slot.busy.compare_exchange(false, true, std::sync::atomic::Ordering::Acquire, std::sync::atomic::Ordering::Relaxed).is_ok() {
            // SAFETY: the slot is ours until the thread we hand it to clears `busy`.
            unsafe { (*slot.start.get()).write(start) };
            return slot as *const StartSlot as *mut c_void;
        }
    }
    Box::into_raw(Box::new(start)) as *mut c_void
}

/// Take the `Start` handed over by `hand_over` (in the new thread, or in the creator when the
/// thread could not be created).
///
/// # Safety
/// `p` must come from `hand_over` and be taken exactly once.
unsafe fn take(p: *mut c_void) -> Start {
    let slots = START_SLOTS_TABLE.as_ptr_range();
    if (slots.start as *const c_void..slots.end as *const c_void).contains(&(p as *const c_void)) {
        // SAFETY: `p` points into the static table (checked just above).
        let slot = unsafe { &*(p as *const StartSlot) };
        // SAFETY: written by the creator before pthread_create, which orders it before this
        // thread; read once.
        let start = unsafe { (*slot.start.get()).assume_init_read() };
        // Release: our read happened before the next creator's write.
        slot.busy.store(false, std::sync::atomic::Ordering::Release);
        start
    } else {
        // SAFETY: a box leaked by `hand_over`, taken once.
        *unsafe { Box::from_raw(p as *mut Start) }
    }
}

extern "C" fn trampoline(start: *mut c_void) -> *mut c_void {
    // SAFETY: `start` was handed over by __irs_pthread_create to this thread only.
    let start = unsafe { take(start) };
    thread_state::set_name(start.name);
    if let Some(t) = start.recorded {
        thread_state::register(t);
    }
    if enforcing() {
        serial::started(start.serial);
        enforcer::start_thread(start.enforced);
    }
    if recording() || mode::get() == Mode::Chaos {
        thread_flag::set_active(true);
    }
    let ret = (start.routine)(start.arg);
    thread_ends();
    ret
}

/// The calling thread's exit event: its rules, then recorded, then published.
fn thread_ends() {
    if enforcing() {
        enforcer::exit_before();
    }
    if recording() {
        recorder::thread_exit();
    }
    if enforcing() {
        enforcer::exit_after();
        // SAFETY: no preconditions.
        serial::thread_exited(unsafe { libc::pthread_self() } as u64);
    }
}

/// Run `op` as one event: under ENFORCE, its rules before and its count after (the count is
/// published after `op` returns, so a recorded event precedes every event that waited for it).
pub(crate) fn enforced<R>(site: u64, op: impl FnOnce() -> R) -> R {
    if matches!(mode::get(), Mode::Chaos | Mode::Enforce) {
        chaos::perturb();
    }
    if enforcing() && !crate::signal_state::inside() && enforcer::constrained() {
        enforcer::before(Some(SiteId(site)));
        let r = op();
        enforcer::after();
        r
    } else {
        op()
    }
}

/// RECORD mode, or ENFORCE with a trace being recorded alongside.
pub(crate) fn recording() -> bool {
    recorder::active()
}

pub(crate) fn enforcing() -> bool {
    mode::get() == Mode::Enforce
}

/// EXPLORE: every thread is a fiber of the controlled scheduler; mutexes and joins are modelled
/// there (one fiber runs at a time, so the real pthread objects are not used).
pub(crate) fn explore() -> bool {
    mode::get() == Mode::Explore
}

/// Nothing to do but the call itself (OFF, or a mode that does not watch this).
pub(crate) fn plain() -> bool {
    mode::get() == Mode::Off
}

/// # Safety
/// Same contract as `pthread_create`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
    site: u64,
) -> c_int {
    if explore() {
        return scheduler::create(thread as *mut u64, routine, arg, site);
    }
    if plain() {
        // SAFETY: forwarded unchanged from the caller.
        return unsafe { libc::pthread_create(thread, attr, routine, arg) };
    }
    let enforced_id = if enforcing() { enforcer::child_identity() } else { None };
    enforced(site, || {
        // Recording: hold the recorder across the creation, so the child's first event follows
        // its creation in the trace.
        let mut rec = recording().then(recorder::lock);
        let recorded = rec.as_mut().map(|r| r.new_child());
        let serial_id = if enforcing() { serial::creating() } else { None };
        let name = thread_state::next_child_name();
        let start = hand_over(Start { routine, arg, recorded, enforced: enforced_id, serial: serial_id, name });
        // SAFETY: the caller's arguments, with our trampoline owning `start`.
        let rc = unsafe { libc::pthread_create(thread, attr, trampoline, start) };
        if rc == 0 && enforcing() {
            // SAFETY: pthread_create succeeded and filled `*thread`.
            enforcer::bind_handle(enforced_id, unsafe { *thread } as u64);
            // SAFETY: as above.
            serial::created(unsafe { *thread } as u64);
        }
        if rc != 0 {
            // SAFETY: the thread was not created, so `start` is still ours.
            drop(unsafe { take(start) });
            if enforcing() {
                serial::creation_failed(serial_id);
            }
            if let (Some(r), Some(t)) = (rec.as_mut(), recorded) {
                r.forget_child(t);
            }
            return rc;
        }
        thread_state::created();
        if let (Some(r), Some(t)) = (rec.as_mut(), recorded) {
            // SAFETY: pthread_create succeeded and filled `*thread`.
            r.bind_pthread(unsafe { *thread } as u64, t);
            r.push(Some(SiteId(site)), EventKind::Create, ObjectRef::Thread(t));
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_join`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_join(thread: libc::pthread_t, retval: *mut *mut c_void, site: u64) -> c_int {
    if explore() {
        return scheduler::join(thread as u64, retval, site);
    }
    if serial::mine() {
        // Serialised: a join is enabled once the thread has ended.
        serial::acquire(Op::Join(thread as u64));
    }
    enforced(site, || {
        // SAFETY: forwarded unchanged. Blocks without holding the recorder lock.
        let rc = unsafe { libc::pthread_join(thread, retval) };
        if rc == 0 && recording() {
            let mut r = recorder::lock();
            if let Some(tid) = r.thread_of(thread as u64) {
                r.push(Some(SiteId(site)), EventKind::Join, ObjectRef::Thread(tid));
            }
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_exit(retval: *mut c_void, _site: u64) -> ! {
    if explore() {
        scheduler::exit_thread(retval);
    }
    thread_ends();
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_exit(retval) }
}

/// # Safety
/// Same contract as `pthread_mutex_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_init(
    m: *mut libc::pthread_mutex_t,
    attr: *const libc::pthread_mutexattr_t,
    site: u64,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let init = || unsafe { libc::pthread_mutex_init(m, attr) };
    if plain() {
        return init();
    }
    if explore() {
        // The real mutex is not used in EXPLORE (the scheduler models it).
        scheduler::mutex_reinit(m as u64, site);
        return init();
    }
    // A mutex destroyed while locked (glibc's destroy fails with `EBUSY` and leaves it locked)
    // and initialised again is a fresh, unlocked one. Held by the initialising thread, the init
    // releases it: an unlock event (as in EXPLORE), so that a recorded trace has it. (Whether
    // the caller holds it is read from what glibc keeps in it, its lock word and owner: memory
    // that was never a mutex holds neither the caller's thread id as its owner.)
    if !(mutex_kind::locked(m as u64) && mutex_kind::held_by_me(m as u64)) {
        if serial::on() {
            serial::unlocked(m as usize);
        }
        return init();
    }
    let release = || {
        let rec = recording().then(recorder::lock);
        let rc = init();
        if serial::on() {
            serial::unlocked(m as usize);
        }
        if let Some(mut r) = rec {
            r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    };
    if serial::mine() {
        serial::acquire(Op::Step);
        return release();
    }
    enforced(site, release)
}

/// # Safety
/// Same contract as `pthread_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::lock(m as u64, site);
    }
    if no_event_relock(m) {
        // SAFETY: forwarded unchanged: a recursive relock, or an error-checking one (EDEADLK).
        return unsafe { libc::pthread_mutex_lock(m) };
    }
    if serial::mine() {
        return serial_lock(m, site);
    }
    enforced(site, || {
        // SAFETY: forwarded unchanged. Blocks without holding the recorder lock.
        let rc = unsafe { libc::pthread_mutex_lock(m) };
        if rc == 0 && recording() {
            recorder::lock().push(Some(SiteId(site)), EventKind::Lock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// A lock of a recursive or error-checking mutex by its owner: again (recursive) or `EDEADLK`,
/// nothing another thread can see, so no event (as in EXPLORE, `mutex_kind`).
fn no_event_relock(m: *mut libc::pthread_mutex_t) -> bool {
    mutex_kind::kind(m as u64) != mutex_kind::NORMAL && mutex_kind::held_by_me(m as u64)
}

/// An unlock that releases nothing another thread can see: of a recursive mutex locked more
/// than once, or of a recursive or error-checking one the caller does not hold (`EPERM`).
fn no_event_unlock(m: *mut libc::pthread_mutex_t) -> bool {
    let a = m as u64;
    match mutex_kind::kind(a) {
        mutex_kind::NORMAL => false,
        mutex_kind::RECURSIVE => !mutex_kind::held_by_me(a) || mutex_kind::depth(a) > 1,
        _ => !mutex_kind::held_by_me(a),
    }
}

/// A lock in a serialised run: it waits for its turn with the mutex free, then takes it without
/// blocking (a mutex locked before the run was serialised is found held: the thread waits for
/// its unlock like any other).
fn serial_lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    loop {
        serial::acquire(Op::Lock(m as usize));
        // SAFETY: the caller's mutex; trylock never blocks.
        let rc = unsafe { libc::pthread_mutex_trylock(m) };
        if rc == libc::EBUSY {
            serial::locked(m as usize);
            continue;
        }
        if rc == 0 {
            serial::locked(m as usize);
            if recording() {
                recorder::lock().push(Some(SiteId(site)), EventKind::Lock, ObjectRef::Mutex { addr: m as u64, logical: None });
            }
        }
        return rc;
    }
}

/// # Safety
/// Same contract as `pthread_mutex_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_unlock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::unlock(m as u64, site);
    }
    if no_event_unlock(m) {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_mutex_unlock(m) };
    }
    enforced(site, || {
        // Recording: unlock under the recorder lock, so no later lock of `m` precedes it there.
        let rec = recording().then(recorder::lock);
        // SAFETY: forwarded unchanged; unlocking never blocks.
        let rc = unsafe { libc::pthread_mutex_unlock(m) };
        if rc == 0 && serial::mine() {
            serial::unlocked(m as usize);
        }
        if let (0, Some(mut r)) = (rc, rec) {
            r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_mutex_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_trylock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::trylock(m as u64, site);
    }
    if mutex_kind::kind(m as u64) == mutex_kind::RECURSIVE && mutex_kind::held_by_me(m as u64) {
        // SAFETY: forwarded unchanged: a recursive relock.
        return unsafe { libc::pthread_mutex_trylock(m) };
    }
    enforced(site, || {
        let rec = recording().then(recorder::lock);
        // SAFETY: forwarded unchanged; trylock never blocks.
        let rc = unsafe { libc::pthread_mutex_trylock(m) };
        if rc == 0 && serial::mine() {
            serial::locked(m as usize);
        }
        if let Some(mut r) = rec {
            let kind = if rc == 0 { EventKind::TryLock } else { EventKind::TryLockFail };
            r.push(Some(SiteId(site)), kind, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_mutex_timedlock`. The timeout is an outcome the exploration
/// explores, not real time: in EXPLORE a timed lock is a trylock (`ETIMEDOUT` for `EBUSY`): it
/// may time out wherever the mutex is held, and takes it wherever it is free (POSIX: never a
/// timeout when it can be locked at once).
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_timedlock(m: *mut libc::pthread_mutex_t, abstime: *const libc::timespec, site: u64) -> c_int {
    timedlock(m, libc::CLOCK_REALTIME, abstime, site)
}

extern "C" {
    fn pthread_mutex_clocklock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
}

/// # Safety
/// Same contract as `pthread_mutex_clocklock` (as `pthread_mutex_timedlock`, on `clock`).
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_clocklock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    timedlock(m, clock, abstime, site)
}

fn timedlock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    let real = || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { pthread_mutex_clocklock(m, clock, abstime) }
    };
    if plain() {
        return real();
    }
    if explore() {
        return match scheduler::trylock(m as u64, site) {
            libc::EBUSY => libc::ETIMEDOUT,
            rc => rc,
        };
    }
    if no_event_relock(m) {
        return real();
    }
    if serial::mine() {
        // Serialised: tried at its turn (a deterministic outcome).
        // SAFETY: the caller's mutex; trylock never blocks.
        return match unsafe { __irs_pthread_mutex_trylock(m, site) } {
            libc::EBUSY => libc::ETIMEDOUT,
            rc => rc,
        };
    }
    enforced(site, || {
        let rc = real();
        if rc == 0 && serial::mine() {
            serial::locked(m as usize);
        }
        if recording() {
            let kind = if rc == 0 { EventKind::TryLock } else { EventKind::TryLockFail };
            recorder::lock().push(Some(SiteId(site)), kind, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// `sched_yield`, `pthread_yield`: no visible operation (every schedule is explored anyway, and
/// ENFORCE orders what matters); the C library's call outside EXPLORE, after a serialised run
/// lets the other threads go first (as for a sleep: a thread that polls with `sched_yield` until
/// another has moved would otherwise keep the turn for good).
#[no_mangle]
pub extern "C" fn __irs_sched_yield(_site: u64) -> c_int {
    if explore() {
        return 0;
    }
    if crate::mode::get() == crate::mode::Mode::Enforce {
        crate::serial::yield_turn();
    }
    // SAFETY: no preconditions.
    unsafe { libc::sched_yield() }
}

// ---- what glibc keeps per OS thread: per logical thread in EXPLORE -------------------------

#[no_mangle]
pub extern "C" fn __irs_pthread_self(_site: u64) -> libc::pthread_t {
    if explore() {
        return scheduler::self_handle() as libc::pthread_t;
    }
    // SAFETY: no preconditions.
    unsafe { libc::pthread_self() }
}

/// # Safety
/// Same contract as `pthread_detach`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_detach(thread: libc::pthread_t, _site: u64) -> c_int {
    if explore() {
        return 0; // a fiber's resources are the execution's; nothing to release early
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_detach(thread) }
}

/// # Safety
/// Same contract as `pthread_key_create`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_key_create(
    key: *mut libc::pthread_key_t,
    destructor: Option<unsafe extern "C" fn(*mut c_void)>,
    _site: u64,
) -> c_int {
    if explore() {
        // SAFETY: a C destructor with the C ABI; called only with values the program stored.
        let d: Option<extern "C" fn(*mut c_void)> = destructor.map(|f| unsafe { std::mem::transmute(f) });
        return scheduler::key_create(key, d);
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_key_create(key, destructor) }
}

#[no_mangle]
pub extern "C" fn __irs_pthread_key_delete(key: libc::pthread_key_t, _site: u64) -> c_int {
    if explore() {
        return scheduler::key_delete(key);
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_key_delete(key) }
}

#[no_mangle]
pub extern "C" fn __irs_pthread_getspecific(key: libc::pthread_key_t, _site: u64) -> *mut c_void {
    if explore() {
        return scheduler::get_specific(key);
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_getspecific(key) }
}

/// # Safety
/// Same contract as `pthread_setspecific`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_setspecific(key: libc::pthread_key_t, value: *const c_void, _site: u64) -> c_int {
    if explore() {
        return scheduler::set_specific(key, value as *mut c_void);
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::pthread_setspecific(key, value) }
}
