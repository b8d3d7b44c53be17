// Compiles the C glue (the thread-local fast-path flag and section bounds) into the runtime.
fn main() {
    println!("cargo:rerun-if-changed=csrc/glue.c");
    cc::Build::new().file("csrc/glue.c").opt_level(2).warnings(true).compile("irs_glue");
}
