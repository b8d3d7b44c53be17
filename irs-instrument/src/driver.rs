//! `irs cc`: a drop-in for `cc` that instruments (DESIGN §5). For each C source: clang emits
//! unoptimised bitcode at the user's optimisation level (LLVM passes disabled, so nothing that
//! assumes race freedom runs first), the pass instruments it, clang optimises and generates code
//! at the user's level; then clang links the objects with irs-runtime. clang's diagnostics reach
//! the user unchanged and its exit code is preserved.

use crate::cc_args::{self, CcArgs, CcArgsError, CcMode, Input};
use crate::pass::{instrument_module, PassError};
use crate::site_report;
use crate::toolchain;
use inkwell::context::Context;
use inkwell::module::Module;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum CcError {
    #[error(transparent)]
    Args(#[from] CcArgsError),
    #[error("{0}: no such file")]
    MissingSource(String),
    #[error("cannot run {tool}: {source}")]
    Spawn { tool: String, source: std::io::Error },
    #[error("{0}")]
    Io(String),
    #[error("{path}: clang produced unreadable bitcode: {detail}")]
    Bitcode { path: String, detail: String },
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error("{0}")]
    Runtime(String),
}

/// A scratch directory removed on drop (kept with `IRS_KEEP_TEMPS=1`, for debugging the pass).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, CcError> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("irs-cc-{}-{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(CcError::Io(format!("cannot create a temporary directory in {}: {e}", base.display()))),
            }
        }
        Err(CcError::Io("cannot create a temporary directory".into()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("IRS_KEEP_TEMPS").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            eprintln!("irs cc: kept temporaries in {}", self.0.display());
        }
    }
}

/// Run clang; `Ok(0)` on success, `Ok(code)` when clang failed (it has printed why).
fn clang(args: &[String]) -> Result<i32, CcError> {
    let tool = toolchain::clang();
    if std::env::var_os("IRS_CC_VERBOSE").is_some() {
        eprintln!("irs cc: {} {}", tool.display(), args.join(" "));
    }
    let status = Command::new(&tool)
        .args(args)
        .status()
        .map_err(|source| CcError::Spawn { tool: tool.display().to_string(), source })?;
    Ok(status.code().unwrap_or(1))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Flags that matter when turning instrumented bitcode into machine code.
fn codegen_flags(args: &CcArgs) -> Vec<String> {
    let mut out: Vec<String> = args
        .compile_flags
        .iter()
        .filter(|f| (f.starts_with("-f") && !f.starts_with("-fno-discard")) || f.starts_with("-g"))
        .cloned()
        .collect();
    out.extend(args.common_flags.iter().cloned());
    out
}

/// Compile, instrument and generate code for one source; returns its report text.
fn compile_one(args: &CcArgs, src: &Path, index: usize, tmp: &Path, object: &Path) -> Result<Result<String, i32>, CcError> {
    if !src.is_file() {
        return Err(CcError::MissingSource(s(src)));
    }
    let opt = args.opt_level.clone().unwrap_or_else(|| "-O0".to_string());
    let bc = tmp.join(format!("{index}.bc"));
    let mut front = vec!["-c".to_string(), "-emit-llvm".into(), opt.clone()];
    front.extend(args.compile_flags.iter().cloned());
    front.extend(args.common_flags.iter().cloned());
    if !args.debug {
        // Line tables for the site table; stripped again after instrumentation.
        front.push("-gline-tables-only".into());
    }
    front.extend(["-fno-discard-value-names".into(), "-Xclang".into(), "-disable-llvm-passes".into()]);
    if opt == "-O0" {
        front.extend(["-Xclang".into(), "-disable-O0-optnone".into()]);
    }
    front.extend([s(src), "-o".into(), s(&bc)]);
    let code = clang(&front)?;
    if code != 0 {
        return Ok(Err(code));
    }

    let context = Context::create();
    let module = Module::parse_bitcode_from_path(&bc, &context)
        .map_err(|e| CcError::Bitcode { path: s(&bc), detail: e.to_string() })?;
    let name = src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| s(src));
    let out = instrument_module(&context, &module, &name)?;
    if !args.debug {
        module.strip_debug_info();
    }
    let inst_bc = tmp.join(format!("{index}.irs.bc"));
    if !module.write_bitcode_to_path(&inst_bc) {
        return Err(CcError::Io(format!("cannot write {}", s(&inst_bc))));
    }
    let report = site_report::render(&s(src), out.sites.module_tag(), &out.report);

    let mut back = vec![if args.mode == CcMode::Assembly { "-S".to_string() } else { "-c".to_string() }, opt];
    back.extend(codegen_flags(args));
    back.extend(["-Qunused-arguments".into(), s(&inst_bc), "-o".into(), s(object)]);
    let code = clang(&back)?;
    Ok(if code == 0 { Ok(report) } else { Err(code) })
}

/// Where `-c`/`-S` put the output of `src` when no `-o` names it: `stem.o` in the current directory.
fn default_output(src: &Path, ext: &str) -> PathBuf {
    PathBuf::from(src.file_stem().unwrap_or_default()).with_extension(ext)
}

/// Run `irs cc ARGS`. Returns the exit code to exit with (clang's, when clang failed).
pub fn run_cc(argv: &[String]) -> Result<i32, CcError> {
    let args = cc_args::parse(argv)?;
    if args.mode == CcMode::PassThrough {
        return clang(&args.raw);
    }
    for input in &args.inputs {
        if let Input::Source(src) = input {
            if !src.is_file() {
                return Err(CcError::MissingSource(s(src)));
            }
        }
    }
    let runtime = if args.mode == CcMode::Link { Some(toolchain::runtime_lib().map_err(CcError::Runtime)?) } else { None };
    let tmp = TempDir::new()?;
    let mut reports = String::new();
    let mut link_inputs = Vec::new();
    for (i, input) in args.inputs.iter().enumerate() {
        match input {
            Input::Source(src) => {
                let object = match args.mode {
                    CcMode::CompileOnly => args.output.clone().unwrap_or_else(|| default_output(src, "o")),
                    CcMode::Assembly => args.output.clone().unwrap_or_else(|| default_output(src, "s")),
                    _ => tmp.0.join(format!("{i}.o")),
                };
                match compile_one(&args, src, i, &tmp.0, &object)? {
                    Ok(report) => reports.push_str(&report),
                    Err(code) => return Ok(code),
                }
                link_inputs.push(s(&object));
            }
            Input::LinkInput(l) => link_inputs.push(l.clone()),
        }
    }
    if let Some(path) = &args.site_report {
        std::fs::write(path, &reports).map_err(|e| CcError::Io(format!("cannot write site report {}: {e}", s(path))))?;
    }
    let Some(runtime) = runtime else { return Ok(0) };
    let mut link = Vec::new();
    link.extend(args.opt_level.iter().cloned());
    link.extend(args.common_flags.iter().cloned());
    link.extend(link_inputs);
    link.extend(args.link_flags.iter().cloned());
    link.push(s(&crate::runtime_archive::linkable(&runtime)));
    link.extend(toolchain::RUNTIME_SYSTEM_LIBS.iter().map(|l| l.to_string()));
    link.extend(toolchain::RUNTIME_LINK_FLAGS.iter().map(|l| l.to_string()));
    link.extend(toolchain::unwinder_flags(&args.link_flags).iter().map(|l| l.to_string()));
    if let Some(o) = &args.output {
        link.extend(["-o".into(), s(o)]);
    }
    clang(&link)
}
