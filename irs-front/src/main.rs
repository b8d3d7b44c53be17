//! `irs`: the one user-facing command, as a light front. `irs run` under IRS (the command a
//! production service runs at every start) is run here, from `irs-service`, which links no
//! LLVM; every other command, and `irs run` given a prefix, help or anything its hand-written
//! parser does not take, is handed to `irs-full` beside this binary (`src/main.rs` of the root
//! package, with the LLVM pass), by `exec`, with the same arguments: `irs-full` parses them
//! with clap and says what is wrong.
//!
//! Its cost is paid at every start of a program run under IRS: it is linked statically
//! (`build.rs`), parses its arguments without clap, and starts as a C program does
//! (`#![no_main]`): std's start-up reads `/proc/self/maps` for the main thread's stack guard and
//! installs a signal stack, a dozen system calls a front that `exec`s the program does not need.
//! What of it matters is done here: standard descriptors that are closed are opened on
//! `/dev/null` (a file opened later must not become standard input), and `SIGPIPE` is ignored
//! (a closed standard error is an error to report, not a death; the program gets the default
//! back when it is `exec`ed).
#![no_main]

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

// SAFETY: the program's only `main` (std defines none under `no_main`); the C library calls it
// once, with the arguments std also reads for `args_os`.
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    start_up();
    libc::c_int::from(front())
}

/// What std's start-up does that the front needs.
fn start_up() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: poll reads and writes only the three entries of `fds`; open and signal have no
    // preconditions (a descriptor opened here takes the lowest free number, the closed one).
    unsafe {
        if libc::poll(fds.as_mut_ptr(), 3, 0) != -1 && fds.iter().any(|p| p.revents & libc::POLLNVAL != 0) {
            for _ in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Run `irs run` under IRS, or hand the command to `irs-full`; the exit status.
fn front() -> u8 {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "run") {
        if let Some(run) = irs_service::run_cli::parse_front(&args[1..]) {
            return irs_service::run_cli::run_under_irs(run);
        }
    }
    let full = match std::env::current_exe() {
        Ok(me) => me.with_file_name("irs-full"),
        Err(e) => {
            eprintln!("irs: cannot locate this binary to find irs-full beside it: {e}");
            return 2;
        }
    };
    let err = std::process::Command::new(&full).arg0("irs").args(&args).exec();
    eprintln!("irs: cannot run {} (built beside irs by `cargo build --release --workspace`): {err}", full.display());
    2
}
