//! The pthread thread functions the pass routes to the runtime (DESIGN §3, §5): create, join,
//! exit, detach, self, yield and thread-specific keys (mutexes are `sync::mutex`). Each takes
//! the site id as an extra last argument. In OFF mode they only call the real function.

use crate::mode::{self, enforcing, explore, Mode};
use crate::enforce::event::{enforced, recording};
use crate::enforce::enforcer;
use crate::record::recorder;
use crate::explore::scheduler;
use crate::enforce::serial::{self, Op};
use crate::thread::thread_flag;
use crate::thread::thread_state;
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
    if crate::enforce::relaxed::forwarded() {
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
        let start = hand_over(Start { routine, arg, recorded, enforced: enforced_id, serial: serial_id });
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
    if crate::enforce::relaxed::forwarded() {
        // SAFETY: forwarded unchanged from the caller.
        return unsafe { libc::pthread_join(thread, retval) };
    }
    if serial::mine() {
        // Serialised: a join is enabled once the thread has ended.
        serial::acquire(Op::Join(thread as u64));
    }
    enforced(site, || {
        // SAFETY: forwarded unchanged. Blocks without holding the recorder lock, away for a
        // run serialised meanwhile.
        let rc = crate::enforce::enforcer::blocking(|| unsafe { libc::pthread_join(thread, retval) });
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

/// `sched_yield`, `pthread_yield`: no visible operation (every schedule is explored anyway, and
/// ENFORCE orders what matters); the C library's call outside EXPLORE, after a serialised run
/// lets the other threads go first (as for a sleep: a thread that polls with `sched_yield` until
/// another has moved would otherwise keep the turn for good).
#[no_mangle]
pub extern "C" fn __irs_sched_yield(_site: u64) -> c_int {
    // A sleep of no time: a hint to EXPLORE's default policy, the turn given away in a
    // serialised run.
    // SAFETY: no preconditions.
    crate::abi::sleeps::sleep_call(0, || 0, || unsafe { libc::sched_yield() })
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
