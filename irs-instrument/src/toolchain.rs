//! Finding the tools `irs cc` drives: clang 14 and the irs-runtime static library.

use std::path::{Path, PathBuf};

/// The clang to drive: `$IRS_CLANG`, else `clang-14` on `PATH`, else Debian's LLVM 14 clang.
pub fn clang() -> PathBuf {
    if let Some(c) = std::env::var_os("IRS_CLANG") {
        return PathBuf::from(c);
    }
    if let Some(p) = find_in_path("clang-14") {
        return p;
    }
    PathBuf::from("/usr/lib/llvm-14/bin/clang")
}

pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

pub const RUNTIME_LIB: &str = "libirs_runtime.a";

/// The runtime library: `$IRS_RUNTIME_LIB`, else next to the running `irs` binary (cargo puts
/// both in `target/<profile>/`).
pub fn runtime_lib() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("IRS_RUNTIME_LIB") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("IRS_RUNTIME_LIB={} does not exist", p.display())) };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the irs binary: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    for candidate in [dir.join(RUNTIME_LIB), dir.join("..").join(RUNTIME_LIB)] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "cannot find the irs runtime ({RUNTIME_LIB} next to {}); build the workspace with `cargo build --release --workspace` or set IRS_RUNTIME_LIB",
        exe.display()
    ))
}

/// The system libraries a Rust static library needs (`rustc --print native-static-libs`),
/// linked only where the program or the runtime uses them (`--as-needed`): each shared library
/// loaded is start-up time that the plain build does not pay (libm and libgcc_s together were
/// 0.11 ms of every run's start: docs/src/cc.md).
pub const RUNTIME_SYSTEM_LIBS: &[&str] = &["-Wl,--as-needed", "-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-Wl,--no-as-needed"];

/// The unwinder the runtime's Rust code refers to (`_Unwind_*`: backtraces; it never unwinds,
/// being built with `panic = "abort"`), linked into the program (`libgcc_eh`) rather than
/// loaded as `libgcc_s.so` at every start, unless the program asks for the shared one or links
/// C++ (whose library loads `libgcc_s` anyway, and one unwinder for all frames is safer).
pub fn unwinder_flags(user_link_flags: &[String]) -> &'static [&'static str] {
    let shared = user_link_flags.iter().any(|f| f == "-shared-libgcc" || f == "-lgcc_s" || f.starts_with("-lstdc++") || f.starts_with("-lc++"));
    if shared {
        &[]
    } else {
        &["-static-libgcc"]
    }
}

/// Linker flags every instrumented program gets. `-z now` resolves every dynamic symbol at
/// start-up: EXPLORE forks an execution from the fork server thousands of times a second, and
/// with lazy binding each of them would resolve again the library functions the server had not
/// called yet (a symbol lookup per function per execution).
pub const RUNTIME_LINK_FLAGS: &[&str] = &["-Wl,-z,now"];
