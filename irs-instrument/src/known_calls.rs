//! What the pass knows about library functions by name (DESIGN §5): which calls are routed to
//! runtime wrappers, which ones raise violations, and which ones provably do not keep a pointer
//! argument (so passing a local's address to them does not make the local shared).

use shared_proto::{SiteKind, ViolationKind};

/// A pthread call the runtime wraps: calls to `name` become calls to `wrapper` with the site id
/// appended as a last `i64` argument.
pub struct RoutedCall {
    pub name: &'static str,
    pub wrapper: &'static str,
    pub kind: SiteKind,
}

impl RoutedCall {
    /// Must the plain body of a function (what a thread with nothing to record or enforce runs)
    /// route this call too? Thread creation must: the runtime gives every thread its logical id and
    /// sets its flag. Exit too, so that the runtime always learns that a thread ended. Mutex
    /// operations and joins of such a thread need nothing from the runtime. A file opened for
    /// reading is checked against the verified input in every thread, also in one that runs free
    /// (DESIGN §4 "Inputs"). Condition variables, semaphores, rwlocks, barriers and `pthread_once`
    /// are the runtime's own in every thread, so that a free thread and a constrained one use one
    /// implementation of an object (`shared_proto::sync_object`). A signal handler is installed
    /// behind the runtime's trampoline by whichever thread installs it: it may interrupt a
    /// constrained one.
    pub fn needed_when_free(&self) -> bool {
        matches!(self.kind, SiteKind::Create | SiteKind::ThreadExit | SiteKind::InputOpen | SiteKind::InputRead | SiteKind::Sync | SiteKind::SignalHandler)
    }
}

pub const ROUTED_CALLS: &[RoutedCall] = &[
    RoutedCall { name: "pthread_create", wrapper: "__irs_pthread_create", kind: SiteKind::Create },
    RoutedCall { name: "pthread_join", wrapper: "__irs_pthread_join", kind: SiteKind::Join },
    RoutedCall { name: "pthread_exit", wrapper: "__irs_pthread_exit", kind: SiteKind::ThreadExit },
    RoutedCall {
        name: "pthread_mutex_init",
        wrapper: "__irs_pthread_mutex_init",
        kind: SiteKind::MutexInit,
    },
    RoutedCall { name: "pthread_mutex_lock", wrapper: "__irs_pthread_mutex_lock", kind: SiteKind::Lock },
    RoutedCall {
        name: "pthread_mutex_unlock",
        wrapper: "__irs_pthread_mutex_unlock",
        kind: SiteKind::Unlock,
    },
    RoutedCall {
        name: "pthread_mutex_trylock",
        wrapper: "__irs_pthread_mutex_trylock",
        kind: SiteKind::TryLock,
    },
    // Heap blocks are named by allocating thread and count (logical addresses, DESIGN §3).
    RoutedCall { name: "malloc", wrapper: "__irs_malloc", kind: SiteKind::Alloc },
    RoutedCall { name: "calloc", wrapper: "__irs_calloc", kind: SiteKind::Alloc },
    RoutedCall { name: "realloc", wrapper: "__irs_realloc", kind: SiteKind::Alloc },
    RoutedCall { name: "free", wrapper: "__irs_free", kind: SiteKind::Free },
    // The process's end (DESIGN §3): an event of the thread that ends it, then its handlers, then
    // the kills of the other threads.
    RoutedCall { name: "exit", wrapper: "__irs_exit", kind: SiteKind::ProcessEnd },
    RoutedCall { name: "_exit", wrapper: "__irs__exit", kind: SiteKind::ProcessEnd },
    RoutedCall { name: "_Exit", wrapper: "__irs__exit", kind: SiteKind::ProcessEnd },
    RoutedCall { name: "quick_exit", wrapper: "__irs_quick_exit", kind: SiteKind::ProcessEnd },
    RoutedCall { name: "at_quick_exit", wrapper: "__irs_at_quick_exit", kind: SiteKind::ExitHandler },
    RoutedCall { name: "atexit", wrapper: "__irs_atexit", kind: SiteKind::ExitHandler },
    RoutedCall { name: "on_exit", wrapper: "__irs_on_exit", kind: SiteKind::ExitHandler },
    // What glibc keeps in the OS thread's descriptor must be per logical thread in EXPLORE.
    RoutedCall { name: "pthread_self", wrapper: "__irs_pthread_self", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_detach", wrapper: "__irs_pthread_detach", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_key_create", wrapper: "__irs_pthread_key_create", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_key_delete", wrapper: "__irs_pthread_key_delete", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_getspecific", wrapper: "__irs_pthread_getspecific", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_setspecific", wrapper: "__irs_pthread_setspecific", kind: SiteKind::ThreadQuery },
    // A file opened for reading is part of the input (DESIGN §4 "Inputs"): served from the
    // verification's capture in EXPLORE, compared with it in ENFORCE. `open` and `openat` are
    // variadic: their wrappers take the mode as a fixed argument (0 when the call has none).
    RoutedCall { name: "open", wrapper: "__irs_open", kind: SiteKind::InputOpen },
    RoutedCall { name: "open64", wrapper: "__irs_open", kind: SiteKind::InputOpen },
    RoutedCall { name: "openat", wrapper: "__irs_openat", kind: SiteKind::InputOpen },
    RoutedCall { name: "openat64", wrapper: "__irs_openat", kind: SiteKind::InputOpen },
    RoutedCall { name: "fopen", wrapper: "__irs_fopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "fopen64", wrapper: "__irs_fopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "freopen", wrapper: "__irs_freopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "freopen64", wrapper: "__irs_freopen", kind: SiteKind::InputOpen },
    // `fstat` on a served capture describes the original file (`irs-runtime/src/program/input_stat.rs`).
    RoutedCall { name: "fstat", wrapper: "__irs_fstat", kind: SiteKind::InputRead },
    RoutedCall { name: "fstat64", wrapper: "__irs_fstat64", kind: SiteKind::InputRead },
    // The environment variables a program reads are part of its input (`shared_proto::input_env`).
    RoutedCall { name: "getenv", wrapper: "__irs_getenv", kind: SiteKind::InputRead },
    RoutedCall { name: "secure_getenv", wrapper: "__irs_secure_getenv", kind: SiteKind::InputRead },
    // Mutex variants and spin locks are mutex operations (DESIGN §3).
    RoutedCall { name: "pthread_mutex_timedlock", wrapper: "__irs_pthread_mutex_timedlock", kind: SiteKind::TryLock },
    RoutedCall { name: "pthread_mutex_clocklock", wrapper: "__irs_pthread_mutex_clocklock", kind: SiteKind::TryLock },
    RoutedCall { name: "pthread_spin_lock", wrapper: "__irs_pthread_spin_lock", kind: SiteKind::Lock },
    RoutedCall { name: "pthread_spin_trylock", wrapper: "__irs_pthread_spin_trylock", kind: SiteKind::TryLock },
    RoutedCall { name: "pthread_spin_unlock", wrapper: "__irs_pthread_spin_unlock", kind: SiteKind::Unlock },
    RoutedCall { name: "sched_yield", wrapper: "__irs_sched_yield", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "pthread_yield", wrapper: "__irs_sched_yield", kind: SiteKind::ThreadQuery },
    // Sleeps cost no time in EXPLORE; a serialised run lets the other threads go first where a
    // thread sleeps (`irs-runtime/src/abi/sleeps.rs`).
    RoutedCall { name: "sleep", wrapper: "__irs_sleep", kind: SiteKind::Sleep },
    RoutedCall { name: "usleep", wrapper: "__irs_usleep", kind: SiteKind::Sleep },
    RoutedCall { name: "nanosleep", wrapper: "__irs_nanosleep", kind: SiteKind::Sleep },
    RoutedCall { name: "clock_nanosleep", wrapper: "__irs_clock_nanosleep", kind: SiteKind::Sleep },
    RoutedCall { name: "thrd_sleep", wrapper: "__irs_thrd_sleep", kind: SiteKind::Sleep },
    // Clocks read virtual time in EXPLORE (`irs-runtime/src/abi/clock.rs`).
    RoutedCall { name: "time", wrapper: "__irs_time", kind: SiteKind::Clock },
    RoutedCall { name: "clock_gettime", wrapper: "__irs_clock_gettime", kind: SiteKind::Clock },
    RoutedCall { name: "gettimeofday", wrapper: "__irs_gettimeofday", kind: SiteKind::Clock },
    RoutedCall { name: "clock", wrapper: "__irs_clock", kind: SiteKind::Clock },
    // Built by the runtime from locks and choices (`shared_proto::sync_object`).
    RoutedCall { name: "pthread_cond_init", wrapper: "__irs_pthread_cond_init", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_destroy", wrapper: "__irs_pthread_cond_destroy", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_wait", wrapper: "__irs_pthread_cond_wait", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_timedwait", wrapper: "__irs_pthread_cond_timedwait", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_clockwait", wrapper: "__irs_pthread_cond_clockwait", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_signal", wrapper: "__irs_pthread_cond_signal", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_cond_broadcast", wrapper: "__irs_pthread_cond_broadcast", kind: SiteKind::Sync },
    RoutedCall { name: "sem_init", wrapper: "__irs_sem_init", kind: SiteKind::Sync },
    RoutedCall { name: "sem_destroy", wrapper: "__irs_sem_destroy", kind: SiteKind::Sync },
    RoutedCall { name: "sem_wait", wrapper: "__irs_sem_wait", kind: SiteKind::Sync },
    RoutedCall { name: "sem_trywait", wrapper: "__irs_sem_trywait", kind: SiteKind::Sync },
    RoutedCall { name: "sem_timedwait", wrapper: "__irs_sem_timedwait", kind: SiteKind::Sync },
    RoutedCall { name: "sem_clockwait", wrapper: "__irs_sem_clockwait", kind: SiteKind::Sync },
    RoutedCall { name: "sem_post", wrapper: "__irs_sem_post", kind: SiteKind::Sync },
    RoutedCall { name: "sem_getvalue", wrapper: "__irs_sem_getvalue", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_init", wrapper: "__irs_pthread_rwlock_init", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_destroy", wrapper: "__irs_pthread_rwlock_destroy", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_rdlock", wrapper: "__irs_pthread_rwlock_rdlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_wrlock", wrapper: "__irs_pthread_rwlock_wrlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_tryrdlock", wrapper: "__irs_pthread_rwlock_tryrdlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_trywrlock", wrapper: "__irs_pthread_rwlock_trywrlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_timedrdlock", wrapper: "__irs_pthread_rwlock_timedrdlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_timedwrlock", wrapper: "__irs_pthread_rwlock_timedwrlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_clockrdlock", wrapper: "__irs_pthread_rwlock_clockrdlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_clockwrlock", wrapper: "__irs_pthread_rwlock_clockwrlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_rwlock_unlock", wrapper: "__irs_pthread_rwlock_unlock", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_barrier_init", wrapper: "__irs_pthread_barrier_init", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_barrier_destroy", wrapper: "__irs_pthread_barrier_destroy", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_barrier_wait", wrapper: "__irs_pthread_barrier_wait", kind: SiteKind::Sync },
    RoutedCall { name: "pthread_once", wrapper: "__irs_pthread_once", kind: SiteKind::Sync },
    // C11 threads: the same operations under other names (`irs-runtime/src/c11_threads.rs`).
    RoutedCall { name: "thrd_create", wrapper: "__irs_thrd_create", kind: SiteKind::Create },
    RoutedCall { name: "thrd_join", wrapper: "__irs_thrd_join", kind: SiteKind::Join },
    RoutedCall { name: "thrd_exit", wrapper: "__irs_thrd_exit", kind: SiteKind::ThreadExit },
    RoutedCall { name: "thrd_current", wrapper: "__irs_thrd_current", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "thrd_detach", wrapper: "__irs_thrd_detach", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "thrd_yield", wrapper: "__irs_thrd_yield", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "mtx_init", wrapper: "__irs_mtx_init", kind: SiteKind::MutexInit },
    RoutedCall { name: "mtx_lock", wrapper: "__irs_mtx_lock", kind: SiteKind::Lock },
    RoutedCall { name: "mtx_trylock", wrapper: "__irs_mtx_trylock", kind: SiteKind::TryLock },
    RoutedCall { name: "mtx_timedlock", wrapper: "__irs_mtx_timedlock", kind: SiteKind::TryLock },
    RoutedCall { name: "mtx_unlock", wrapper: "__irs_mtx_unlock", kind: SiteKind::Unlock },
    RoutedCall { name: "cnd_init", wrapper: "__irs_cnd_init", kind: SiteKind::Sync },
    RoutedCall { name: "cnd_wait", wrapper: "__irs_cnd_wait", kind: SiteKind::Sync },
    RoutedCall { name: "cnd_timedwait", wrapper: "__irs_cnd_timedwait", kind: SiteKind::Sync },
    RoutedCall { name: "cnd_signal", wrapper: "__irs_cnd_signal", kind: SiteKind::Sync },
    RoutedCall { name: "cnd_broadcast", wrapper: "__irs_cnd_broadcast", kind: SiteKind::Sync },
    RoutedCall { name: "cnd_destroy", wrapper: "__irs_cnd_destroy", kind: SiteKind::Sync },
    RoutedCall { name: "call_once", wrapper: "__irs_call_once", kind: SiteKind::Sync },
    RoutedCall { name: "tss_create", wrapper: "__irs_tss_create", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "tss_get", wrapper: "__irs_tss_get", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "tss_set", wrapper: "__irs_tss_set", kind: SiteKind::ThreadQuery },
    RoutedCall { name: "tss_delete", wrapper: "__irs_tss_delete", kind: SiteKind::ThreadQuery },
    // Signal handlers run outside the event model (`irs-runtime/src/abi/signals.rs`).
    RoutedCall { name: "signal", wrapper: "__irs_signal", kind: SiteKind::SignalHandler },
    RoutedCall { name: "sigaction", wrapper: "__irs_sigaction", kind: SiteKind::SignalHandler },
];

pub fn routed_call(name: &str) -> Option<&'static RoutedCall> {
    ROUTED_CALLS.iter().find(|r| r.name == name)
}

/// Functions whose call means a violation. The call itself stays (the program fails exactly as
/// the plain build does); the pass puts a report to the runtime in front of it.
pub fn violation_call(name: &str) -> Option<ViolationKind> {
    match name {
        "__assert_fail" | "__assert_rtn" | "__assert" => Some(ViolationKind::Assert),
        "abort" => Some(ViolationKind::Abort),
        "reach_error" | "__VERIFIER_error" => Some(ViolationKind::ReachError),
        _ => None,
    }
}

/// Functions whose behaviour EXPLORE does not model: verifying a program that calls one would
/// explore something other than the program, so the pass puts a hook in front of each call that
/// ends the execution as unsupported, naming the function; outside EXPLORE the hook does
/// nothing. Cancellation and signals between threads, robust mutexes, named
/// semaphores, and calls that block on another thread through the kernel (waiting for a
/// signal, polling descriptors).
pub fn unsupported_call(name: &str) -> bool {
    // `__atomic_*` and `__sync_*` as calls are the library's generic fallbacks (objects of
    // unusual size): the accesses they make would not be seen.
    const PREFIXES: &[&str] = &["epoll_", "__atomic_", "__sync_"];
    const NAMES: &[&str] = &[
        "pthread_cancel", "pthread_kill", "pthread_setcancelstate", "pthread_setcanceltype", "pthread_testcancel",
        "pthread_mutexattr_setrobust", "pthread_mutex_consistent", "sem_open", "sem_close", "sem_unlink",
        "sigwait", "sigwaitinfo", "sigtimedwait", "sigsuspend", "pause", "poll", "ppoll", "select", "pselect",
        "pthread_sigqueue",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name) || reads_from_outside(name) || creates_a_process(name)
}

/// Calls that start another process or replace this one. An explored execution runs in a
/// sandbox (DESIGN §7) that would isolate such a process, but nothing it does is explored, and
/// `fork` would copy the execution's scheduler; so they are refused by name there, and run as
/// in the plain program everywhere else.
fn creates_a_process(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "fork", "vfork", "system", "posix_spawn", "posix_spawnp", "daemon", "execl", "execle", "execlp", "execv", "execve",
        "execvp", "execvpe", "fexecve", "execveat",
    ];
    NAMES.contains(&name)
}

/// Calls through which a program reads bytes from outside that irs cannot capture as part of the
/// input (DESIGN §4 "Inputs": sockets, pipes, other processes): verifying a program that reads them
/// would explore bytes that differ from run to run, so they are unsupported like the calls above.
/// Files opened by name are part of the input (routed, see `ROUTED_CALLS`).
fn reads_from_outside(name: &str) -> bool {
    const NAMES: &[&str] = &["socket", "socketpair", "accept", "accept4", "recv", "recvfrom", "recvmsg", "pipe", "pipe2", "mkfifo", "popen"];
    NAMES.contains(&name)
}

/// May a call to `callee` keep (capture) the pointer passed as argument `arg`?
/// `false` only for functions known not to store or return their pointer arguments.
pub fn call_may_capture(callee: &str, arg: u32) -> bool {
    if callee.starts_with("llvm.") {
        // memcpy/memset/lifetime/dbg intrinsics read or write through the pointer, never keep it.
        return false;
    }
    match callee {
        "pthread_create" => arg > 1,
        "pthread_join" => arg != 1,
        name if name.starts_with("pthread_mutex_") => false,
        // The runtime keys its tables by these objects' addresses but keeps no pointer into them.
        name if ["pthread_cond_", "pthread_rwlock_", "pthread_barrier_", "pthread_spin_", "sem_"].iter().any(|p| name.starts_with(p)) => false,
        "pthread_key_create" => false,
        "printf" | "fprintf" | "sprintf" | "snprintf" | "dprintf" | "vprintf" | "vfprintf"
        | "vsprintf" | "vsnprintf" | "puts" | "fputs" | "putchar" | "fputc" | "scanf" | "fscanf"
        | "sscanf" | "__isoc99_scanf" | "__isoc99_fscanf" | "__isoc99_sscanf" | "strlen"
        | "strnlen" | "strcmp" | "strncmp" | "memcmp" | "atoi" | "atol" | "atoll" | "atof"
        | "read" | "write" | "fread" | "fwrite" | "free" | "clock_gettime" | "gettimeofday"
        | "time" | "nanosleep" | "usleep" | "sleep" | "clock_nanosleep" | "thrd_sleep" | "getrusage" => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pthread_create_keeps_only_the_thread_argument() {
        assert!(!call_may_capture("pthread_create", 0));
        assert!(!call_may_capture("pthread_create", 1));
        assert!(call_may_capture("pthread_create", 3));
        assert!(call_may_capture("some_user_function", 0));
        assert!(!call_may_capture("llvm.memcpy.p0i8.p0i8.i64", 0));
    }

    #[test]
    fn routes_and_violations() {
        assert_eq!(routed_call("pthread_mutex_lock").unwrap().wrapper, "__irs_pthread_mutex_lock");
        assert_eq!(routed_call("pthread_cond_wait").unwrap().wrapper, "__irs_pthread_cond_wait");
        assert!(routed_call("sem_post").unwrap().needed_when_free());
        assert_eq!(violation_call("__assert_fail"), Some(ViolationKind::Assert));
        assert_eq!(violation_call("exit"), None);
        assert!(unsupported_call("pthread_cancel") && unsupported_call("sem_open") && unsupported_call("sigwait") && !unsupported_call("thrd_sleep"));
        assert_eq!(routed_call("cnd_wait").unwrap().wrapper, "__irs_cnd_wait");
        assert!(!unsupported_call("pthread_mutex_lock") && !unsupported_call("pthread_attr_init"));
        assert!(unsupported_call("socket") && unsupported_call("popen") && !unsupported_call("read"));
        assert_eq!(routed_call("fopen").unwrap().wrapper, "__irs_fopen");
        assert!(routed_call("open64").unwrap().needed_when_free());
        for s in ["sleep", "usleep", "nanosleep", "clock_nanosleep", "thrd_sleep"] {
            assert!(!routed_call(s).unwrap().needed_when_free(), "{s}: a free thread sleeps as the plain build does");
        }
        assert!(routed_call("sigaction").unwrap().needed_when_free());
    }
}
