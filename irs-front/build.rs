//! Link the `irs` front statically, as a fixed-address (non-PIE) executable: `irs run` is run
//! at every start of a production program, and a dynamic front pays at each start for the
//! dynamic loader (mapping `libc` and `libgcc_s`, resolving symbols) and for relocating
//! itself, about half of what `irs run` cost over the plain program
//! (`benchmarks/results/irs_overhead/run_cost.md`).
//!
//! Stable cargo cannot ask for `-C target-feature=+crt-static` for one package, and rustc links
//! std against `-lgcc_s -lc -lm ...` by name. So the linker is told `-static -no-pie`, and a
//! directory of this package's own, searched first, answers those names with linker scripts
//! that name the C library's and the compiler's static archives. Without those archives (no
//! `libc6-dev`), the front is linked dynamically, as before, with a warning.
//!
//! Either way it is linked without debugging information (`--strip-debug`; its symbols stay,
//! for profiles): the kernel's `exec` of the 14 MB binary with it cost 0.1 ms more than of the
//! same 2 MB binary without it, at every start (`benchmarks/results/irs_overhead/run_cost.md`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The static archive `name` as the C compiler finds it, if it exists.
fn archive(cc: &str, name: &str) -> Option<PathBuf> {
    let out = Command::new(cc).arg(format!("-print-file-name={name}")).output().ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // An archive the compiler does not know is printed back as its bare name.
    (path.is_absolute() && path.is_file()).then_some(path)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") || std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("gnu") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--strip-debug");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let found: Option<Vec<String>> = ["libc.a", "libm.a", "libgcc.a", "libgcc_eh.a"].iter().map(|n| archive(&cc, n).map(|p| p.display().to_string())).collect();
    let Some([libc, libm, libgcc, libgcc_eh]) = found.and_then(|f| <[String; 4]>::try_from(f).ok()) else {
        println!("cargo:warning=irs front linked dynamically: {cc} finds no static C library (libc.a, libgcc_eh.a: install libc6-dev)");
        return;
    };
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("static-libs");
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/static-libs");
    let write = |name: &str, script: String| std::fs::write(Path::new(&dir).join(name), script).expect("write a linker script");
    // Every name rustc links std with, answered by its archive (`-lgcc_s` by the unwinder's).
    write("libc.so", format!("GROUP ( {libc} {libgcc} {libgcc_eh} )\n"));
    write("libm.so", format!("INPUT ( {libm} )\n"));
    write("libgcc_s.so", format!("INPUT ( {libgcc_eh} )\n"));
    // Only archives in glibc 2.34 and later; shared libraries before.
    for name in ["util", "rt", "pthread", "dl"] {
        if let Some(a) = archive(&cc, &format!("lib{name}.a")) {
            write(&format!("lib{name}.so"), format!("INPUT ( {} )\n", a.display()));
        }
    }
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
