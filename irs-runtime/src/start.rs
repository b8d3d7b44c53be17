//! `__irs_start`: the pass makes the program's `main` call this first (DESIGN §5), so the runtime
//! is set up before any user code runs and while only the main thread exists.

use crate::mode::{self, Mode, MODE_VAR, TRACE_VAR};
use crate::process_exit;
use crate::program_info::ProgramInfo;
use crate::recorder;
use crate::thread_flag;
use shared_proto::Outcome;
use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;

type UserMain = extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

fn fail(msg: &str) -> ! {
    eprintln!("irs-runtime: {msg}");
    std::process::exit(2)
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
    let mode = Mode::parse(mode_value.as_deref()).unwrap_or_else(|e| fail(&e));
    if mode == Mode::Off {
        return user_main(argc, argv, envp);
    }
    let args: Vec<String> = (0..argc.max(0) as usize)
        // SAFETY: argv holds argc NUL-terminated strings.
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy().into_owned())
        .collect();
    if mode == Mode::Explore {
        mode::set(mode);
        crate::explore_server::serve(argc, argv, envp, user_main, args);
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
    mode::set(mode);
    recorder::init(PathBuf::from(path), args, program);
    process_exit::install();
    thread_flag::set_active(true);
    let code = user_main(argc, argv, envp);
    recorder::thread_exit();
    recorder::finish(Outcome::Exit(code), true);
    code
}
