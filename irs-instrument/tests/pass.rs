//! The pass on real clang output: what it instruments, skips and versions.

use inkwell::context::Context;
use inkwell::module::Module;
use irs_instrument::pass::instrument_module;
use irs_instrument::site_report::Decision;
use std::process::Command;

fn bitcode(name: &str, c: &str) -> std::path::PathBuf {
    // Under the target directory (kept for inspection, replaced by the next run), not in /tmp.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("irs-pass-test-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, c).unwrap();
    let bc = dir.join(format!("{name}.bc"));
    let clang = std::env::var("IRS_CLANG").unwrap_or_else(|_| "clang-14".into());
    let st = Command::new(clang)
        .args(["-c", "-emit-llvm", "-O2", "-g", "-fno-discard-value-names", "-Xclang", "-disable-llvm-passes", "-o"])
        .arg(&bc)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    bc
}

const PROGRAM: &str = r#"
#include <pthread.h>
#include <stdarg.h>
int shared;
const int table[4] = {1, 2, 3, 4};
_Thread_local int mine;
static int hidden;
int sum(int n, ...) { va_list ap; va_start(ap, n); int s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, int); va_end(ap); return s + shared; }
static void *worker(void *arg) { int *p = arg; *p += table[1] + mine + hidden; return 0; }
int main(void) {
  int local[4] = {0};
  int escaping = 1;
  pthread_t t;
  pthread_create(&t, 0, worker, &escaping);
  pthread_join(t, 0);
  local[2] = escaping;
  shared = local[2] + sum(2, 1, 2);
  return shared;
}
"#;

#[test]
fn classifies_accesses_and_versions_functions() {
    let bc = bitcode("classify", PROGRAM);
    let context = Context::create();
    let module = Module::parse_bitcode_from_path(&bc, &context).unwrap();
    let out = instrument_module(&context, &module, "classify.c").unwrap();
    let reason_of = |needle: &str| -> Vec<String> {
        out.report
            .iter()
            .filter_map(|e| match &e.decision {
                Decision::Skipped { reason } if reason.ends_with(needle) => Some(format!("skipped {reason}")),
                Decision::Instrumented { target, .. } if target.ends_with(needle) => Some(format!("instrumented {target}")),
                _ => None,
            })
            .collect()
    };
    assert!(reason_of("local local").iter().all(|r| r == "skipped non-escaping local local") && !reason_of("local local").is_empty());
    assert!(reason_of("escaping").iter().all(|r| r == "instrumented escaping local escaping") && !reason_of("escaping").is_empty());
    assert!(reason_of("table").iter().all(|r| r == "skipped constant global table"));
    assert!(reason_of("mine").iter().all(|r| r == "skipped thread-local global mine"));
    assert!(reason_of("global shared").len() >= 2, "{:?}", reason_of("shared"));
    assert!(reason_of("global hidden").len() == 1, "statics are globals too");
    // `t` is only handed to pthread_create/join, which do not keep it.
    assert_eq!(reason_of("local t").len(), 1);
    assert!(out.defines_main);
    // Twins for ordinary functions, none for the varargs one (instrumented in place).
    assert!(module.get_function("worker.irs").is_some());
    assert!(module.get_function("__irs_user_main.irs").is_some() || module.get_function("main.irs").is_some());
    assert!(module.get_function("sum.irs").is_none());
    // Every site is in the embedded table, with a source line.
    assert!(out.sites.sites.iter().all(|s| s.line > 0 && s.file.ends_with("classify.c")));
    assert!(out.sites.globals.iter().any(|g| g.name == "shared" && g.size == 4));
    assert!(module.verify().is_ok());
}

#[test]
fn refuses_to_instrument_twice() {
    let bc = bitcode("twice", "int g; int main(void) { return g; }\n");
    let context = Context::create();
    let module = Module::parse_bitcode_from_path(&bc, &context).unwrap();
    instrument_module(&context, &module, "twice.c").unwrap();
    let err = instrument_module(&context, &module, "twice.c").err().unwrap();
    assert!(err.to_string().contains("already instrumented"), "{err}");
}
