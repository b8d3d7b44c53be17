//! The runtime archive as `irs cc` links it: a copy of `libirs_runtime.a` without its debug
//! sections, made once per build of the archive and kept beside it.
//!
//! The archive is a Rust static library (std and every dependency inside, 28 MB), and its line
//! tables are half of it: the linker read and copied 5.6 MB of debug sections into every
//! instrumented program, and linking was two thirds of `irs cc`'s time (0.23 of 0.34 s on a
//! small program). Without them the link takes 0.13 s and the programs are 1.9 MB instead of
//! 7.5. Symbols stay (gdb, perf and backtraces still name the runtime's functions, without line
//! numbers), and the program's own debug information is untouched.
//!
//! The copy is valid while its modification time equals the archive's (it is given the
//! archive's when made; cargo writes a new archive on every rebuild), so a rebuilt runtime is
//! never linked stale. It is made by `objcopy --strip-debug` into a temporary file renamed into
//! place, so that concurrent `irs cc` runs never see half a copy. Anything in the way (no
//! objcopy, a read-only directory) leaves the archive itself to link: slower, not wrong.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The copy's name beside `libirs_runtime.a`.
const LINKABLE: &str = "libirs_runtime.nodebug.a";

/// The archive to link for `archive`: its copy without debug sections, made now if missing or
/// older than the archive, or `archive` itself when no copy can be made.
pub fn linkable(archive: &Path) -> PathBuf {
    let Ok(modified) = archive.metadata().and_then(|m| m.modified()) else {
        return archive.to_path_buf();
    };
    let copy = archive.with_file_name(LINKABLE);
    if modified_at(&copy) == Some(modified) {
        return copy;
    }
    match make(archive, &copy, modified) {
        Ok(()) => copy,
        Err(_) => archive.to_path_buf(),
    }
}

fn modified_at(p: &Path) -> Option<SystemTime> {
    p.metadata().and_then(|m| m.modified()).ok()
}

fn make(archive: &Path, copy: &Path, modified: SystemTime) -> std::io::Result<()> {
    let tmp = copy.with_file_name(format!("{LINKABLE}.tmp-{}", std::process::id()));
    let result = (|| {
        let status = std::process::Command::new(objcopy())
            .arg("--strip-debug")
            .arg(archive)
            .arg(&tmp)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()?;
        if !status.success() {
            return Err(std::io::Error::other(format!("objcopy exited with {status}")));
        }
        std::fs::File::options().write(true).open(&tmp)?.set_modified(modified)?;
        std::fs::rename(&tmp, copy)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// binutils' objcopy (it comes with the linker clang drives), else LLVM 14's.
fn objcopy() -> PathBuf {
    crate::toolchain::find_in_path("objcopy")
        .or_else(|| crate::toolchain::find_in_path("llvm-objcopy-14"))
        .unwrap_or_else(|| PathBuf::from("/usr/lib/llvm-14/bin/llvm-objcopy"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy is made once, reused while the archive is unchanged, remade when it changes, and
    /// the archive itself is used when no copy can be made.
    #[test]
    fn the_copy_follows_the_archive() {
        let dir = std::env::temp_dir().join(format!("irs-runtime-archive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A real archive with debug sections: one object compiled with -g.
        let src = dir.join("a.c");
        std::fs::write(&src, "int f(int x) { return x + 1; }\n").unwrap();
        let obj = dir.join("a.o");
        assert!(std::process::Command::new(crate::toolchain::clang()).args(["-g", "-c", "-o"]).arg(&obj).arg(&src).status().unwrap().success());
        let archive = dir.join("libirs_runtime.a");
        assert!(std::process::Command::new("ar").arg("rcs").arg(&archive).arg(&obj).status().unwrap().success());

        let copy = linkable(&archive);
        assert_eq!(copy, dir.join(LINKABLE));
        let size = |p: &Path| p.metadata().unwrap().len();
        assert!(size(&copy) < size(&archive), "debug sections gone: {} against {}", size(&copy), size(&archive));
        assert_eq!(modified_at(&copy), modified_at(&archive));
        let made = copy.metadata().unwrap().modified().unwrap();
        assert_eq!(linkable(&archive), copy, "reused");

        // A rebuilt archive (another time) gets a new copy.
        let later = made + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(&archive).unwrap().set_modified(later).unwrap();
        assert_eq!(linkable(&archive), copy);
        assert_eq!(modified_at(&copy), Some(later), "remade");

        // Not an archive objcopy can read: the file itself is linked.
        let bogus = dir.join("sub");
        std::fs::create_dir_all(&bogus).unwrap();
        let not_archive = bogus.join("libirs_runtime.a");
        std::fs::write(&not_archive, "not an archive").unwrap();
        assert_eq!(linkable(&not_archive), not_archive);
        assert!(!bogus.join(LINKABLE).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
