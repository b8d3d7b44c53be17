//! Sites: the instrumented instructions of a program and what the pass knows about them
//! (DESIGN §5). Each instrumented module embeds its [`ModuleSites`] (bincode) so that the
//! runtime can copy the site table into every trace, and traces are readable on their own.

use crate::access_kind::AccessKind;
use serde::{Deserialize, Serialize};

/// What an instrumented instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SiteKind {
    Access(AccessKind),
    MutexInit,
    Lock,
    Unlock,
    TryLock,
    Create,
    Join,
    ThreadExit,
    /// `malloc`, `calloc`, `realloc`: the runtime names heap blocks (logical addresses).
    Alloc,
    Free,
    /// `pthread_self`, `pthread_detach` and thread-specific data: per logical thread in EXPLORE.
    ThreadQuery,
    /// `assert`, `abort`, `reach_error`, `__VERIFIER_error`: where a violation is raised.
    Violation,
    /// `exit`, `_exit`, `_Exit`, `quick_exit`: the process's end.
    ProcessEnd,
    /// `atexit`, `at_quick_exit`: a handler that runs at the process's end.
    ExitHandler,
    /// `__VERIFIER_assume`.
    Assume,
    /// `__VERIFIER_atomic_begin`/`_end`, a call of a `__VERIFIER_atomic_*` function.
    Atomic,
    /// `__VERIFIER_nondet_*`.
    Nondet,
    /// A call of a function EXPLORE does not model (condition variables, semaphores, ...).
    Unsupported,
    /// `open`, `openat`, `fopen`, `freopen`: a file opened for reading is part of the input (DESIGN
    /// §4 "Inputs"; `shared_proto::input_files`).
    InputOpen,
    /// `getenv`, `secure_getenv`, a use of `environ`: the environment variables read are part
    /// of the input (`shared_proto::input_env`).
    InputRead,
    /// Condition variables and `pthread_once` (built by the runtime from locks and choices,
    /// `shared_proto::sync_object`), and semaphores, barriers and rwlocks (events of their own).
    Sync,
    /// The header of a loop the runtime watches for an iteration that only reads (a spin-wait, see
    /// the pass's `spin_loops`).
    SpinLoop,
    /// `signal`, `sigaction`: the runtime installs the program's handlers behind a trampoline
    /// that runs them outside the event model (`irs-runtime/src/abi/signals.rs`).
    SignalHandler,
    /// `sleep`, `usleep`, `nanosleep`, `clock_nanosleep`: where a serialised run lets the
    /// other threads go first.
    Sleep,
    /// `time`, `clock_gettime`, `gettimeofday`, `clock`: virtual time in EXPLORE.
    Clock,
}

impl SiteKind {
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::Access(a) => a.name(),
            SiteKind::MutexInit => "mutex-init",
            SiteKind::Lock => "lock",
            SiteKind::Unlock => "unlock",
            SiteKind::TryLock => "trylock",
            SiteKind::Create => "create",
            SiteKind::Join => "join",
            SiteKind::ThreadExit => "pthread-exit",
            SiteKind::Alloc => "alloc",
            SiteKind::Free => "free",
            SiteKind::ThreadQuery => "thread-query",
            SiteKind::Violation => "violation",
            SiteKind::ProcessEnd => "process-end",
            SiteKind::ExitHandler => "exit-handler",
            SiteKind::Assume => "assume",
            SiteKind::Atomic => "atomic",
            SiteKind::Nondet => "nondet",
            SiteKind::Unsupported => "unsupported-call",
            SiteKind::InputOpen => "input-open",
            SiteKind::InputRead => "input-read",
            SiteKind::Sync => "sync",
            SiteKind::SpinLoop => "spin-loop",
            SiteKind::SignalHandler => "signal-handler",
            SiteKind::Sleep => "sleep",
            SiteKind::Clock => "clock",
        }
    }

}

/// One instrumented instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteInfo {
    pub kind: SiteKind,
    /// The function that contains it.
    pub function: String,
    /// Source file and line from debug info; empty and 0 when there is none.
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// What the pass saw as the accessed object, for people: `global counter`, `heap or pointer`,
    /// `escaping local x`.
    pub target: String,
}

impl SiteInfo {
    /// `file:line` or `?` when the module had no debug info.
    pub fn location(&self) -> String {
        if self.file.is_empty() {
            "?".to_string()
        } else if self.column > 0 {
            format!("{}:{}:{}", self.file, self.line, self.column)
        } else {
            format!("{}:{}", self.file, self.line)
        }
    }
}

/// A global variable of an instrumented module that the runtime can symbolise addresses in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalInfo {
    pub name: String,
    pub size: u64,
}

/// Everything the pass records about one instrumented module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleSites {
    /// Hash of the module before instrumentation; its low 32 bits tag the module's site ids.
    pub module_hash: u64,
    /// The module's source file name.
    pub source: String,
    /// Indexed by `SiteId::index`.
    pub sites: Vec<SiteInfo>,
    /// In the same order as the pointer array of the module's descriptor.
    pub globals: Vec<GlobalInfo>,
}

impl ModuleSites {
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::codec::encode(self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ModuleSites, bincode::Error> {
        crate::codec::decode(bytes)
    }

    pub fn module_tag(&self) -> u32 {
        self.module_hash as u32
    }
}
