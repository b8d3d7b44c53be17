/* The two things of irs-runtime that stable Rust cannot express (DESIGN §5, §6):
 *
 * 1. The per-thread "active" flag that instrumented code tests inline before every callback.
 *    It must be a C thread-local with the initial-exec model so the test is one fs-relative
 *    load, and it is exported under a fixed name the pass refers to.
 * 2. Weak references to the linker-defined bounds of the `irs_modules` section, so that the
 *    runtime links (and finds nothing) even in a program without instrumented modules.
 */
__attribute__((tls_model("initial-exec"))) __thread unsigned char __irs_thread_active = 0;

void __irs_set_thread_active(unsigned char on) { __irs_thread_active = on; }
unsigned char __irs_thread_active_get(void) { return __irs_thread_active; }

extern const char __start_irs_modules[] __attribute__((weak));
extern const char __stop_irs_modules[] __attribute__((weak));

const char *__irs_modules_begin(void) { return __start_irs_modules; }
const char *__irs_modules_end(void) { return __stop_irs_modules; }

/* The executable's static destructors (`__attribute__((destructor))`), last first, as the C
 * library's `_dl_fini` runs them. The runtime calls this where the process's end completes
 * (after the exit handlers), so that they run on the exiting thread as events like any other;
 * the process then leaves without the C library's clean-up, which would run them again. The
 * bounds are the linker's, weak so that an executable without the array still links. */
extern void (*__fini_array_start[])(void) __attribute__((weak));
extern void (*__fini_array_end[])(void) __attribute__((weak));

void __irs_run_fini_array(void) {
    if (!__fini_array_start || !__fini_array_end) return;
    for (void (**f)(void) = __fini_array_end; f != __fini_array_start;) {
        --f;
        if (*f) (*f)();
    }
}

/* SV-COMP's error function, for tasks that declare it without defining it (weak: a task's own
 * definition wins). The pass reports a call to it as a violation first; then, as in a plain
 * build with a usual definition, the process aborts. */
#include <stdlib.h>
__attribute__((weak, noreturn)) void __VERIFIER_error(void) { abort(); }

/* How many static destructors the executable has (the C runtime's own, crtbegin's
 * `__do_global_dtors_aux`, is one of them). */
unsigned long __irs_fini_array_len(void) {
    if (!__fini_array_start || !__fini_array_end) return 0;
    return (unsigned long)(__fini_array_end - __fini_array_start);
}
