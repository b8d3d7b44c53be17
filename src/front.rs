//! `irs`: the one user-facing command, as a light front. `irs run` under IRS (the command a
//! production service runs at every start) is run here, from `irs-service`, which links no
//! LLVM; every other command, and `irs run` given a prefix or help, is handed to `irs-full`
//! beside this binary (`src/main.rs`, with the LLVM pass), by `exec`, with the same arguments.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

fn main() -> ExitCode {
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
            return ExitCode::from(2);
        }
    };
    let err = std::process::Command::new(&full).arg0("irs").args(&args).exec();
    eprintln!("irs: cannot run {} (built beside irs by `cargo build --release --workspace`): {err}", full.display());
    ExitCode::from(2)
}
