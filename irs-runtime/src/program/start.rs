//! `__irs_start`: the pass makes the program's `main` call this first (DESIGN §5), so the runtime
//! is set up before any user code runs and while only the main thread exists.

use crate::enforce::enforcer::{self, Divergence};
use crate::mode::{self, Mode, CHAOS_VAR, DIVERGENCE_VAR, MODE_VAR, PREFIX_VAR, SERIAL_VAR, TRACE_VAR};
use std::time::Duration;
use crate::abi::process_exit;
use crate::program::program_info::ProgramInfo;
use crate::record::recorder;
use crate::thread::thread_flag;
use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;

type UserMain = extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// # Safety
/// `argv` holds `argc` NUL-terminated strings (main's arguments).
unsafe fn argv_strings(argc: c_int, argv: *mut *mut c_char) -> Vec<String> {
    (0..argc.max(0) as usize)
        // SAFETY: per the contract.
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy().into_owned())
        .collect()
}

fn fail(msg: &str) -> ! {
    eprintln!("irs-runtime: {msg}");
    std::process::exit(2)
}

/// A run the verifier makes with real threads (it named a sandbox directory) runs isolated,
/// `file`'s directory real (`explore::sandbox::enter_for_run`). Programs this one starts are
/// not isolated by it. Only the main thread exists.
fn isolate_if_asked(file: &std::ffi::OsStr) {
    if std::env::var_os(shared_proto::explore_protocol::ENV_SANDBOX_DIR).is_some() {
        if let Some(dir) = std::path::Path::new(file).parent().and_then(|d| d.to_str()) {
            crate::explore::sandbox::enter_for_run(dir);
        }
        // SAFETY: only the main thread exists.
        unsafe { std::env::remove_var(shared_proto::explore_protocol::ENV_SANDBOX_DIR) };
    }
    crate::program::elapsed::start_if_asked();
}

/// # Safety
/// Called by the generated `main` with its own arguments.
#[no_mangle]
pub unsafe extern "C" fn __irs_start(
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    user_main: UserMain,
) -> c_int {
    let mode_value = std::env::var(MODE_VAR).ok();
    let mut mode = Mode::parse(mode_value.as_deref()).unwrap_or_else(|e| fail(&e));
    let prefix = std::env::var_os(PREFIX_VAR);
    if mode == Mode::Off && prefix.is_some() {
        mode = Mode::Enforce;
    }
    let chaos = match std::env::var(CHAOS_VAR).ok().as_deref().map(str::trim) {
        None | Some("") | Some("0") => false,
        Some("1") => true,
        Some(other) => fail(&format!("unknown {CHAOS_VAR}={other:?} (expected 0 or 1)")),
    };
    if chaos && matches!(mode, Mode::Off | Mode::Enforce) {
        crate::enforce::chaos::enable();
        if mode == Mode::Off {
            mode = Mode::Chaos;
        }
    }
    if mode == Mode::Off {
        return user_main(argc, argv, envp);
    }
    crate::program::input_files::init();
    crate::program::input_env::init();
    crate::program::input_stat::init();
    if mode == Mode::Chaos {
        mode::set(mode);
        thread_flag::set_active(true);
        return user_main(argc, argv, envp);
    }
    let serial_from_start = match std::env::var(SERIAL_VAR).ok().as_deref().map(str::trim) {
        None | Some("") | Some("0") => false,
        Some("1") => true,
        Some(other) => fail(&format!("unknown {SERIAL_VAR}={other:?} (expected 0 or 1)")),
    };
    if mode == Mode::Enforce && serial_from_start {
        // No verification covers this run: one thread at a time from the start (`serial`).
        mode::set(mode);
        crate::enforce::serial::begin_at_start();
        let trace = std::env::var_os(TRACE_VAR);
        if let Some(t) = &trace {
            // SAFETY: only the main thread exists.
            unsafe { std::env::remove_var(TRACE_VAR) };
            // SAFETY: the arguments main received.
            recorder::init(PathBuf::from(t), unsafe { argv_strings(argc, argv) }, ProgramInfo::of_this_process());
            process_exit::install();
        }
        thread_flag::set_active(true);
        let code = user_main(argc, argv, envp);
        crate::program::process_end::main_returned();
        return code;
    }
    if mode == Mode::Enforce {
        let Some(path) = prefix else { fail(&format!("{MODE_VAR}=enforce needs {PREFIX_VAR}=<prefix file> (or {SERIAL_VAR}=1)")) };
        // A run the verifier makes to time a candidate anchor is isolated as its explored
        // executions are (the prefix's directory is the one real directory).
        isolate_if_asked(&path);
        let policy = match std::env::var(DIVERGENCE_VAR).ok().as_deref() {
            None | Some("serial") => Divergence::Serial,
            Some("stop") => Divergence::Stop,
            Some("free") => Divergence::Free,
            Some(other) => fail(&format!("unknown {DIVERGENCE_VAR}={other:?} (expected serial, stop or free)")),
        };
        let watchdog = std::env::var("IRS_WATCHDOG_MS").ok().and_then(|v| v.parse().ok()).map(Duration::from_millis).unwrap_or(Duration::from_secs(5));
        // Only the id: the site tables are read when a message needs them.
        let program = crate::program::program_info::program_id_of_this_process();
        // `IRS_PREFIX=installed`: the segment installed for this program id.
        let path = if path == "installed" {
            let seg = shared_proto::prefix_segment::segment_path(program);
            if let Err(e) = enforcer::check_segment_owner(&seg) {
                fail(&e);
            }
            seg.into_os_string()
        } else {
            path
        };
        if let Err(e) = enforcer::init(program, std::path::Path::new(&path), policy, watchdog) {
            fail(&e);
        }
        mode::set(mode);
        // A trace recorded alongside (IRS_TRACE): to check that the run respects the prefix.
        let trace = std::env::var_os(TRACE_VAR);
        if let Some(t) = &trace {
            // SAFETY: only the main thread exists.
            unsafe { std::env::remove_var(TRACE_VAR) };
            // SAFETY: the arguments main received.
            recorder::init(PathBuf::from(t), unsafe { argv_strings(argc, argv) }, ProgramInfo::of_this_process());
            process_exit::install();
        }
        if trace.is_none() {
            // The kills of the verified trace wait at the process's end (`process_end`).
            crate::program::process_end::install_hook();
        }
        crate::enforce::relaxed::decide(enforcer::no_constraint() && trace.is_none() && !crate::enforce::chaos::enabled());
        enforcer::start_main();
        let code = user_main(argc, argv, envp);
        // The process's end; the C library runs the exit handlers, then the runtime's hook.
        crate::program::process_end::main_returned();
        return code;
    }
    // SAFETY: the arguments main received.
    let args = unsafe { argv_strings(argc, argv) };
    if mode == Mode::Explore {
        mode::set(mode);
        // What every execution inherits: the exit hook where the process's end completes (it
        // does nothing in the server itself, no execution being active there), and the SV-COMP
        // interface's settings.
        crate::program::process_end::install_hook();
        crate::program::sv_comp::prepare();
        crate::abi::clock::prepare();
        crate::explore::explore_server::serve(argc, argv, envp, user_main, args);
    }
    let Some(path) = std::env::var_os(TRACE_VAR) else {
        fail(&format!("{MODE_VAR}=record needs {TRACE_VAR}=<trace file>"))
    };
    // Programs this one starts are not part of this recording.
    // SAFETY: only the main thread exists; nothing else reads the environment concurrently.
    unsafe {
        std::env::remove_var(MODE_VAR);
        std::env::remove_var(TRACE_VAR);
    }
    let program = ProgramInfo::of_this_process();
    for p in &program.problems {
        eprintln!("irs-runtime: warning: {p}");
    }
    // A run the verifier makes to learn the program's own order of events is isolated as its
    // explored executions are (the trace's directory is the one real directory it writes).
    isolate_if_asked(&path);
    mode::set(mode);
    recorder::init(PathBuf::from(path), args, program);
    process_exit::install();
    thread_flag::set_active(true);
    let code = user_main(argc, argv, envp);
    // The process's end; the exit hook records the kills and writes the trace.
    crate::program::process_end::main_returned();
    code
}
