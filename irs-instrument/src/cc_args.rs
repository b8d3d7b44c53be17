//! Reading a `cc` command line (DESIGN §2 and §5): which arguments are sources, which are link
//! inputs, which flags belong to compiling, to linking, or to both, and what irs itself takes
//! (`--site-report FILE`). Unknown flags are passed on to clang unchanged: this module never drops
//! or rewrites an argument it does not know.

use std::path::PathBuf;

/// What the command asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcMode {
    /// Compile and link (the default).
    Link,
    /// `-c`: stop at object files.
    CompileOnly,
    /// `-S`: stop at (instrumented) assembly.
    Assembly,
    /// Nothing to instrument (`-E`, `-M`, `-fsyntax-only`, `--version`, no inputs): run clang as is.
    PassThrough,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A C source to instrument.
    Source(PathBuf),
    /// An object file, archive or shared library for the linker, in command-line order.
    LinkInput(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcArgs {
    pub mode: CcMode,
    pub inputs: Vec<Input>,
    pub output: Option<PathBuf>,
    /// The last `-O` flag, verbatim (`-O2`); `None` means clang's default, `-O0`.
    pub opt_level: Option<String>,
    /// Any `-g` flag was given: keep debug info in the output.
    pub debug: bool,
    /// Flags for compiling sources (preprocessor, language, warnings, code generation).
    pub compile_flags: Vec<String>,
    /// Flags only the link step takes, in order (`-l`, `-L`, `-Wl,`, ...).
    pub link_flags: Vec<String>,
    /// Flags for both steps (`-pthread`, `-m*`, `-f*` that affect linking, `--target=`).
    pub common_flags: Vec<String>,
    pub site_report: Option<PathBuf>,
    /// The arguments as given, minus irs's own, for PassThrough.
    pub raw: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CcArgsError {
    #[error("option '{0}' needs an argument")]
    MissingValue(String),
    #[error("{0}: not a C source, object file or library (irs cc takes .c, .i, .o, .a and .so files)")]
    UnknownInput(String),
    #[error("{0}: C++ is not supported (irs instruments C programs)")]
    Cplusplus(String),
    #[error("-o cannot name one output for several sources with -c or -S")]
    OneOutputManySources,
}

/// Flags that take their value as the next argument, and where the pair goes.
fn separate_value_flag(flag: &str) -> Option<Dest> {
    Some(match flag {
        "-I" | "-D" | "-U" | "-include" | "-imacros" | "-isystem" | "-idirafter" | "-iquote" | "-iprefix"
        | "-MF" | "-MT" | "-MQ" | "-Xclang" | "-Xpreprocessor" | "-std" => Dest::Compile,
        "-L" | "-l" | "-Xlinker" | "-u" | "-T" => Dest::Link,
        "-target" | "-arch" | "--sysroot" | "-isysroot" => Dest::Common,
        _ => return None,
    })
}

#[derive(Clone, Copy)]
enum Dest {
    Compile,
    Link,
    Common,
}

fn joined_flag_dest(a: &str) -> Dest {
    if a.starts_with("-l") || a.starts_with("-L") || a.starts_with("-Wl,") || a.starts_with("-fuse-ld=") {
        return Dest::Link;
    }
    match a {
        "-static" | "-shared" | "-rdynamic" | "-pie" | "-no-pie" | "-nostdlib" | "-nostartfiles"
        | "-nodefaultlibs" | "-s" | "-static-libgcc" | "-shared-libgcc" | "-static-libstdc++" => Dest::Link,
        "-pthread" => Dest::Common,
        _ if a.starts_with("-m") || a.starts_with("--target=") || a.starts_with("-fsanitize")
            || a.starts_with("-fprofile") || a.starts_with("--sysroot=") || a.starts_with("-flto") => Dest::Common,
        _ => Dest::Compile,
    }
}

pub fn parse(args: &[String]) -> Result<CcArgs, CcArgsError> {
    let mut out = CcArgs {
        mode: CcMode::Link,
        inputs: Vec::new(),
        output: None,
        opt_level: None,
        debug: false,
        compile_flags: Vec::new(),
        link_flags: Vec::new(),
        common_flags: Vec::new(),
        site_report: None,
        raw: Vec::new(),
    };
    let mut pass_through = false;
    let mut language_c = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.as_str();
        let mut value = |flag: &str| it.next().cloned().ok_or_else(|| CcArgsError::MissingValue(flag.to_string()));
        if a == "--site-report" {
            out.site_report = Some(PathBuf::from(value(a)?));
            continue;
        }
        if let Some(v) = a.strip_prefix("--site-report=") {
            out.site_report = Some(PathBuf::from(v));
            continue;
        }
        out.raw.push(a.to_string());
        match a {
            "-o" => {
                let v = value(a)?;
                out.raw.push(v.clone());
                out.output = Some(PathBuf::from(v));
            }
            "-c" => out.mode = CcMode::CompileOnly,
            "-S" => out.mode = CcMode::Assembly,
            // `-v` with inputs compiles them (verbosely): instrumented like any compile; alone it
            // has no inputs and passes through like the queries here.
            "-E" | "-M" | "-MM" | "-fsyntax-only" | "--version" | "--help" | "-dumpversion"
            | "-dumpmachine" | "-print-search-dirs" => pass_through = true,
            "-x" => {
                let v = value(a)?;
                out.raw.push(v.clone());
                language_c = v == "c" || v == "cpp-output";
                if v == "c++" {
                    return Err(CcArgsError::Cplusplus("-x c++".into()));
                }
            }
            _ if a.starts_with("-o") && a.len() > 2 => out.output = Some(PathBuf::from(&a[2..])),
            _ if a.starts_with("-O") => out.opt_level = Some(a.to_string()),
            _ if a.starts_with("-g") => {
                out.debug = a != "-g0";
                out.compile_flags.push(a.to_string());
            }
            _ if a.starts_with('-') && a.len() > 1 => match separate_value_flag(a) {
                Some(dest) => {
                    let v = value(a)?;
                    out.raw.push(v.clone());
                    let list = match dest {
                        Dest::Compile => &mut out.compile_flags,
                        Dest::Link => &mut out.link_flags,
                        Dest::Common => &mut out.common_flags,
                    };
                    list.push(a.to_string());
                    list.push(v);
                }
                None => match joined_flag_dest(a) {
                    Dest::Compile => out.compile_flags.push(a.to_string()),
                    Dest::Link => out.link_flags.push(a.to_string()),
                    Dest::Common => out.common_flags.push(a.to_string()),
                },
            },
            _ => {
                let lower = a.to_ascii_lowercase();
                let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
                if language_c || matches!(ext, "c" | "i") {
                    out.inputs.push(Input::Source(PathBuf::from(a)));
                } else if matches!(ext, "o" | "a" | "so") || lower.contains(".so.") {
                    out.inputs.push(Input::LinkInput(a.to_string()));
                } else if matches!(ext, "cc" | "cpp" | "cxx" | "c++" | "hpp" | "mm") {
                    return Err(CcArgsError::Cplusplus(a.to_string()));
                } else {
                    return Err(CcArgsError::UnknownInput(a.to_string()));
                }
            }
        }
    }
    if pass_through || out.inputs.is_empty() {
        out.mode = CcMode::PassThrough;
    }
    let sources = out.inputs.iter().filter(|i| matches!(i, Input::Source(_))).count();
    if matches!(out.mode, CcMode::CompileOnly | CcMode::Assembly) && out.output.is_some() && sources > 1 {
        return Err(CcArgsError::OneOutputManySources);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<CcArgs, CcArgsError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn verbose_compiles_are_instrumented_and_a_lone_v_passes_through() {
        let a = p("-v -c -o q.o queue.c").unwrap();
        assert_eq!(a.mode, CcMode::CompileOnly);
        assert!(a.compile_flags.iter().any(|f| f == "-v"));
        assert_eq!(p("-v").unwrap().mode, CcMode::PassThrough);
    }

    #[test]
    fn splits_a_typical_command_line() {
        let a = p("-O2 -g -Wall -I inc -DX=1 -std=c11 -pthread -o prog a.c util.c lib.o -lm -L/opt --site-report s.txt").unwrap();
        assert_eq!(a.mode, CcMode::Link);
        assert_eq!(a.opt_level.as_deref(), Some("-O2"));
        assert!(a.debug);
        assert_eq!(a.output, Some(PathBuf::from("prog")));
        assert_eq!(a.site_report, Some(PathBuf::from("s.txt")));
        assert_eq!(a.compile_flags, ["-g", "-Wall", "-I", "inc", "-DX=1", "-std=c11"]);
        assert_eq!(a.link_flags, ["-lm", "-L/opt"]);
        assert_eq!(a.common_flags, ["-pthread"]);
        assert_eq!(
            a.inputs,
            [
                Input::Source("a.c".into()),
                Input::Source("util.c".into()),
                Input::LinkInput("lib.o".into())
            ]
        );
        assert!(!a.raw.iter().any(|r| r.contains("site-report") || r == "s.txt"));
    }

    #[test]
    fn modes_and_errors() {
        assert_eq!(p("-c a.c").unwrap().mode, CcMode::CompileOnly);
        assert_eq!(p("-E a.c").unwrap().mode, CcMode::PassThrough);
        assert_eq!(p("--version").unwrap().mode, CcMode::PassThrough);
        assert_eq!(p("-c a.c b.c -o x.o"), Err(CcArgsError::OneOutputManySources));
        assert_eq!(p("notes.txt"), Err(CcArgsError::UnknownInput("notes.txt".into())));
        assert_eq!(p("a.cpp"), Err(CcArgsError::Cplusplus("a.cpp".into())));
        assert_eq!(p("a.c -o"), Err(CcArgsError::MissingValue("-o".into())));
        assert_eq!(p("-oprog a.c").unwrap().output, Some(PathBuf::from("prog")));
    }
}
