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
    /// route this call too? Thread creation must: the runtime gives every thread its logical id
    /// and sets its flag. Exit too, so that the runtime always learns that a thread ended.
    /// Mutex operations and joins of such a thread need nothing from the runtime.
    /// A file opened for reading is checked against the verified input in every thread, also
    /// in one that runs free (issue 19).
    pub fn needed_when_free(&self) -> bool {
        matches!(self.kind, SiteKind::Create | SiteKind::ThreadExit | SiteKind::InputOpen)
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
    // A file opened for reading is part of the input (issue 19): served from the verification's
    // capture in EXPLORE, compared with it in ENFORCE. `open` and `openat` are variadic: their
    // wrappers take the mode as a fixed argument (0 when the call has none).
    RoutedCall { name: "open", wrapper: "__irs_open", kind: SiteKind::InputOpen },
    RoutedCall { name: "open64", wrapper: "__irs_open", kind: SiteKind::InputOpen },
    RoutedCall { name: "openat", wrapper: "__irs_openat", kind: SiteKind::InputOpen },
    RoutedCall { name: "openat64", wrapper: "__irs_openat", kind: SiteKind::InputOpen },
    RoutedCall { name: "fopen", wrapper: "__irs_fopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "fopen64", wrapper: "__irs_fopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "freopen", wrapper: "__irs_freopen", kind: SiteKind::InputOpen },
    RoutedCall { name: "freopen64", wrapper: "__irs_freopen", kind: SiteKind::InputOpen },
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

/// Functions whose behaviour EXPLORE does not model yet (condition variables, semaphores,
/// rwlocks, barriers, once, spin locks, cancellation, C11 threads, mutex types other than the
/// default): verifying a program that calls one would explore something other than the
/// program, so the pass puts a hook in front of each call that ends the execution as
/// unsupported, naming the function; outside EXPLORE the hook does nothing.
pub fn unsupported_call(name: &str) -> bool {
    const PREFIXES: &[&str] = &["pthread_cond_", "pthread_rwlock_", "pthread_barrier_", "pthread_spin_", "sem_", "thrd_", "mtx_", "cnd_", "tss_"];
    const NAMES: &[&str] = &["pthread_once", "pthread_cancel", "pthread_kill", "pthread_mutex_timedlock", "pthread_mutexattr_settype", "pthread_mutexattr_setrobust", "pthread_mutex_consistent", "call_once", "pthread_setcancelstate", "pthread_testcancel", "pthread_yield", "sched_yield"];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name) || reads_from_outside(name)
}

/// Calls through which a program reads bytes from outside that irs cannot capture as part of
/// the input (issue 19: sockets, pipes, other processes): verifying a program that reads them
/// would explore bytes that differ from run to run, so they are unsupported like the calls
/// above. Files opened by name are part of the input (routed, see `ROUTED_CALLS`).
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
        "pthread_key_create" => false,
        "printf" | "fprintf" | "sprintf" | "snprintf" | "dprintf" | "vprintf" | "vfprintf"
        | "vsprintf" | "vsnprintf" | "puts" | "fputs" | "putchar" | "fputc" | "scanf" | "fscanf"
        | "sscanf" | "__isoc99_scanf" | "__isoc99_fscanf" | "__isoc99_sscanf" | "strlen"
        | "strnlen" | "strcmp" | "strncmp" | "memcmp" | "atoi" | "atol" | "atoll" | "atof"
        | "read" | "write" | "fread" | "fwrite" | "free" | "clock_gettime" | "gettimeofday"
        | "time" | "nanosleep" | "usleep" | "getrusage" => false,
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
        assert!(routed_call("pthread_cond_wait").is_none());
        assert_eq!(violation_call("__assert_fail"), Some(ViolationKind::Assert));
        assert_eq!(violation_call("exit"), None);
        assert!(unsupported_call("pthread_cond_wait") && unsupported_call("sem_post") && unsupported_call("pthread_once"));
        assert!(!unsupported_call("pthread_mutex_lock") && !unsupported_call("pthread_attr_init"));
        assert!(unsupported_call("socket") && unsupported_call("popen") && !unsupported_call("read"));
        assert_eq!(routed_call("fopen").unwrap().wrapper, "__irs_fopen");
        assert!(routed_call("open64").unwrap().needed_when_free());
    }
}
