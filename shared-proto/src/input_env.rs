//! The environment variables an input's verification read (DESIGN §4 "Inputs"): the part of
//! the environment that is the program's input. The pass routes `getenv` and `secure_getenv`
//! to the runtime, which, given the input's captures (`IRS_INPUT_FILES`), keeps each variable
//! a verified execution reads, with the value the program was started with, in the
//! subdirectory `env/` of the captures; a production run compares each variable it reads
//! with the capture, and `irs run` finds the input whose captured variables the environment
//! still holds (so a variable the program never reads, bash's `_` say, is not its input).
//!
//! A program that reads the environment whole (`environ`, `__environ`, `main`'s third
//! argument) makes every variable its input: the verification marks it with [`WHOLE`].
//!
//! The layout is [`input_files`](crate::input_files)'s, with the variable's name in place of a
//! path: `<h>.path` holds the name, `<h>.data` the value and `<h>.none` says the variable was
//! not set.

use crate::input_files::{Captured, FileCaptures};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// The subdirectory of an input's captures that holds its variables.
pub const SUBDIR: &str = "env";
/// The marker file saying that the program read the environment whole.
pub const WHOLE: &str = "environ";

/// A variable as the input had it: its value, or `None` when it was not set.
pub type Value = Option<Vec<u8>>;

/// The variables an input's verification read.
#[derive(Clone, Debug)]
pub struct EnvCaptures {
    files: FileCaptures,
}

impl EnvCaptures {
    /// The variables kept beside the file captures in `files_dir`.
    pub fn in_files_dir(files_dir: &Path) -> EnvCaptures {
        EnvCaptures { files: FileCaptures::new(files_dir.join(SUBDIR)) }
    }

    pub fn dir(&self) -> &Path {
        self.files.dir()
    }

    /// The captures as files, by variable name.
    pub fn files(&self) -> &FileCaptures {
        &self.files
    }

    /// The value the verification read for `name`, if it read it (`Some(None)`: not set).
    pub fn lookup(&self, name: &[u8]) -> Option<Value> {
        match self.files.lookup(Path::new(std::ffi::OsStr::from_bytes(name)))? {
            Captured::Absent => Some(None),
            Captured::Bytes(data) => std::fs::read(data).ok().map(Some),
        }
    }

    /// Keep `value` as what the input holds for `name` (the first one kept stays).
    pub fn record(&self, name: &[u8], value: Option<&[u8]>) -> std::io::Result<()> {
        self.files.record(Path::new(std::ffi::OsStr::from_bytes(name)), value)
    }

    /// Say that the program read the environment whole.
    pub fn record_whole(&self) -> std::io::Result<()> {
        let marker = self.files.dir().join(WHOLE);
        if marker.exists() {
            return Ok(());
        }
        self.files.ensure_dir()?;
        std::fs::write(marker, b"")
    }

    /// Did the program read the environment whole?
    pub fn whole(&self) -> bool {
        self.files.dir().join(WHOLE).exists()
    }

    /// Every variable read, by name (sorted), with its value.
    pub fn list(&self) -> Vec<(Vec<u8>, Value)> {
        self.files
            .list()
            .into_iter()
            .map(|(name, c)| {
                let value = match c {
                    Captured::Absent => None,
                    Captured::Bytes(d) => Some(std::fs::read(d).unwrap_or_default()),
                };
                (name.into_os_string().into_vec(), value)
            })
            .collect()
    }

    /// The first variable read whose value in `env` (name → value) differs from the one the
    /// verification read, and how; with [`WHOLE`], any difference at all between `env` and
    /// `whole_env` (the environment the verification ran with).
    pub fn first_difference(&self, env: &[(String, String)], whole_env: &[(String, String)]) -> Option<String> {
        if self.whole() {
            if env != whole_env {
                let name = env.iter().zip(whole_env.iter()).find(|(a, b)| a != b).map(|(a, _)| a.0.clone()).or_else(|| env.last().or(whole_env.last()).map(|(k, _)| k.clone())).unwrap_or_default();
                return Some(format!("the program reads its environment whole, and it differs from the verified one (first at {name})"));
            }
            return None;
        }
        for (name, verified) in self.list() {
            let now = env.iter().find(|(k, _)| k.as_bytes() == name.as_slice()).map(|(_, v)| v.as_bytes().to_vec());
            if now != verified {
                return Some(format!("the variable {} is {} now (the verified input: {})", String::from_utf8_lossy(&name), describe(&now), describe(&verified)));
            }
        }
        None
    }
}

/// A value in quotes, or `unset`, for people.
pub fn describe(v: &Value) -> String {
    match v {
        None => "unset".into(),
        Some(v) => format!("{:?}", String::from_utf8_lossy(v)),
    }
}

/// Variables the C library reads for the program, never through a `getenv` the pass sees
/// (locale, time zone, allocator, loader, option parsing, temporary files): always part of an
/// input when set.
pub fn read_by_the_c_library(name: &str) -> bool {
    const NAMES: &[&str] = &["LANG", "LANGUAGE", "TZ", "TZDIR", "POSIXLY_CORRECT", "GLIBC_TUNABLES", "TMPDIR", "NLSPATH", "LOCPATH", "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN"];
    const PREFIXES: &[&str] = &["LC_", "MALLOC_", "LD_"];
    NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_kept_and_compared() {
        let d = std::env::temp_dir().join(format!("irs-input-env-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let caps = EnvCaptures::in_files_dir(&d);
        caps.record(b"MODE", Some(b"careful")).unwrap();
        caps.record(b"GONE", None).unwrap();
        caps.record(b"MODE", Some(b"fast")).unwrap();
        assert_eq!(caps.lookup(b"MODE"), Some(Some(b"careful".to_vec())));
        assert_eq!(caps.lookup(b"GONE"), Some(None));
        assert_eq!(caps.lookup(b"OTHER"), None);
        let env = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        // Unread variables do not matter.
        assert_eq!(caps.first_difference(&env(&[("MODE", "careful"), ("_", "/bin/x")]), &[]), None);
        assert!(caps.first_difference(&env(&[("MODE", "fast")]), &[]).unwrap().contains("MODE"));
        assert!(caps.first_difference(&env(&[("MODE", "careful"), ("GONE", "1")]), &[]).unwrap().contains("GONE"));
        assert!(!caps.whole());
        caps.record_whole().unwrap();
        let verified = env(&[("MODE", "careful"), ("_", "/bin/x")]);
        assert_eq!(caps.first_difference(&verified, &verified), None);
        assert!(caps.first_difference(&env(&[("MODE", "careful"), ("_", "/bin/y")]), &verified).is_some());
        assert!(read_by_the_c_library("LC_ALL") && read_by_the_c_library("TZ") && !read_by_the_c_library("_") && !read_by_the_c_library("HOME"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
