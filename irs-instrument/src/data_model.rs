//! A program preprocessed for another data model than this machine's (the SV-COMP table, DESIGN
//! §5): a `.i` file holds the C library's opaque pthread types as they were where it was
//! preprocessed, and SV-COMP's are ILP32 (`pthread_mutex_t` 24 bytes, `pthread_attr_t` 36). Built
//! here (LP64) such an object is smaller than this machine's C library's, and its init functions
//! (`pthread_mutex_init` writes 40 bytes, `pthread_attr_init` 56) write past it, into whatever lies
//! next to it: the program verified would be one that corrupts its own memory, and a verdict about
//! it says nothing about the program as written. So `irs cc` refuses it, by name. Only the writes
//! that cover the whole object are checked (an init): the lock and unlock of a mutex initialised
//! statically touch its first words only, inside either layout.

use inkwell::module::Module;
use inkwell::targets::TargetData;
use inkwell::types::{AnyTypeEnum, BasicMetadataTypeEnum, BasicType};
use inkwell::values::BasicValue;

/// A C library function that writes a whole object of an opaque pthread type (its first
/// argument), and that type's size in this machine's C library.
struct WholeWrite {
    function: &'static str,
    type_name: &'static str,
    size: usize,
}

const WHOLE_WRITES: &[WholeWrite] = &[
    WholeWrite { function: "pthread_mutex_init", type_name: "pthread_mutex_t", size: std::mem::size_of::<libc::pthread_mutex_t>() },
    WholeWrite { function: "pthread_attr_init", type_name: "pthread_attr_t", size: std::mem::size_of::<libc::pthread_attr_t>() },
    WholeWrite { function: "pthread_cond_init", type_name: "pthread_cond_t", size: std::mem::size_of::<libc::pthread_cond_t>() },
    WholeWrite { function: "pthread_rwlock_init", type_name: "pthread_rwlock_t", size: std::mem::size_of::<libc::pthread_rwlock_t>() },
    WholeWrite { function: "pthread_barrier_init", type_name: "pthread_barrier_t", size: std::mem::size_of::<libc::pthread_barrier_t>() },
    WholeWrite { function: "sem_init", type_name: "sem_t", size: std::mem::size_of::<libc::sem_t>() },
    WholeWrite { function: "pthread_mutexattr_init", type_name: "pthread_mutexattr_t", size: std::mem::size_of::<libc::pthread_mutexattr_t>() },
    WholeWrite { function: "pthread_condattr_init", type_name: "pthread_condattr_t", size: std::mem::size_of::<libc::pthread_condattr_t>() },
];

/// Why the module cannot be built for this machine: the first init function it calls on an
/// object smaller than the C library's.
pub fn smaller_than_the_c_library(module: &Module) -> Option<String> {
    let layout = module.get_data_layout();
    let target = TargetData::create(layout.as_str().to_str().ok()?);
    for w in WHOLE_WRITES {
        let Some(f) = module.get_function(w.function) else { continue };
        if f.get_first_basic_block().is_some() || f.as_global_value().as_pointer_value().get_first_use().is_none() {
            continue;
        }
        let Some(first) = f.get_type().get_param_types().first().copied() else { continue };
        let BasicMetadataTypeEnum::PointerType(p) = first else { continue };
        let pointee = p.get_element_type();
        let sized = match pointee {
            AnyTypeEnum::StructType(t) if t.is_sized() => target.get_abi_size(&t),
            AnyTypeEnum::ArrayType(t) if t.is_sized() => target.get_abi_size(&t),
            AnyTypeEnum::IntType(t) => target.get_abi_size(&t),
            _ => continue,
        };
        if (sized as usize) < w.size {
            return Some(format!(
                "its {} is {} bytes, this machine's C library's {} ({} would write past it): it was preprocessed for another data model (SV-COMP's ILP32 tasks are); build it from its source for this machine",
                w.type_name, sized, w.size, w.function
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    fn module_of<'ctx>(context: &'ctx Context, ir: &str) -> Module<'ctx> {
        let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "t");
        context.create_module_from_ir(buf).expect("valid IR")
    }

    const HEAD: &str = "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128\"\n";

    #[test]
    fn an_ilp32_mutex_initialised_at_run_time_is_refused() {
        let context = Context::create();
        let ir = format!(
            "{HEAD}%union.pthread_mutex_t = type {{ i64, [24 x i8] }}\n@m = global %union.pthread_mutex_t zeroinitializer\n\
             declare i32 @pthread_mutex_init(%union.pthread_mutex_t*, i8*)\n\
             define i32 @main() {{\n  %r = call i32 @pthread_mutex_init(%union.pthread_mutex_t* @m, i8* null)\n  ret i32 0\n}}\n"
        );
        let why = smaller_than_the_c_library(&module_of(&context, &ir)).expect("refused");
        assert!(why.contains("pthread_mutex_t is 32 bytes") && why.contains("pthread_mutex_init"), "{why}");
    }

    #[test]
    fn this_machines_layout_or_no_init_is_accepted() {
        let context = Context::create();
        let size = std::mem::size_of::<libc::pthread_mutex_t>();
        let ir = format!(
            "{HEAD}%union.pthread_mutex_t = type {{ [{size} x i8] }}\n@m = global %union.pthread_mutex_t zeroinitializer\n\
             declare i32 @pthread_mutex_init(%union.pthread_mutex_t*, i8*)\n\
             define i32 @main() {{\n  %r = call i32 @pthread_mutex_init(%union.pthread_mutex_t* @m, i8* null)\n  ret i32 0\n}}\n"
        );
        assert_eq!(smaller_than_the_c_library(&module_of(&context, &ir)), None);
        // Declared but never called: nothing writes the object whole.
        let ir = format!("{HEAD}%union.pthread_mutex_t = type {{ i64, [24 x i8] }}\ndeclare i32 @pthread_mutex_init(%union.pthread_mutex_t*, i8*)\n");
        assert_eq!(smaller_than_the_c_library(&module_of(&context, &ir)), None);
    }
}
