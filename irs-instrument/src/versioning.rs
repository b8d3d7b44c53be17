//! Function versioning: the inline fast path of DESIGN §5 at function granularity.
//!
//! Every function `f` the pass can version gets an instrumented twin `f.irs`; `f` itself keeps
//! the original, uninstrumented body behind a one-branch dispatch at its entry: if the calling
//! thread's active flag is set, tail-call `f.irs`, else run the plain body. A thread with nothing
//! to record or enforce therefore runs exactly the code of the plain build (plus one TLS test per
//! call) and the optimiser sees no callbacks in it at all.
//!
//! Why a check at entry is enough: a thread's flag is set before any of its user code runs (by
//! `__irs_start` for `main`, by the thread trampoline for the others) and afterwards can only be
//! cleared (a thread that becomes free), never set again. So a function entered with the flag
//! clear never needs callbacks; one entered with it set runs the instrumented twin, whose own
//! guards still skip the callbacks once the flag clears.
//!
//! How, with only the LLVM C API: the module is cloned; the clone's functions are renamed to
//! `f.irs` and instrumented, their references to functions and globals turned into declarations
//! of the originals; the clone is linked back into the original. Local symbols of the original
//! are made linkable for the duration ([`Promotions`]) and restored after.

use crate::ir::{self, Val};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicMetadataValueEnum, FunctionValue, GlobalValue};
use inkwell::{GlobalVisibility, IntPredicate};
use std::collections::{BTreeSet, HashMap};

pub const CLONE_SUFFIX: &str = ".irs";

fn is_ours(name: &str) -> bool {
    name.starts_with("__irs") || name.starts_with("llvm.")
}

/// The functions of `module` that get an instrumented twin. Varargs functions (their arguments
/// cannot be forwarded) and `available_externally` ones (never emitted) are instrumented in place.
pub fn versionable_functions(module: &Module) -> BTreeSet<String> {
    if ir::has_aliases_or_ifuncs(module.as_mut_ptr()) {
        return BTreeSet::new();
    }
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .filter(|f| !f.get_type().is_var_arg())
        .filter(|f| f.get_linkage() != Linkage::AvailableExternally)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && !is_ours(n))
        .collect()
}

/// Local symbols of the original made external (hidden) so the clone can refer to them.
pub struct Promotions(Vec<(String, bool, Linkage, GlobalVisibility)>);

fn is_local(l: Linkage) -> bool {
    matches!(l, Linkage::Internal | Linkage::Private)
}

pub fn promote_locals(module: &Module) -> Promotions {
    let mut out = Vec::new();
    for f in module.get_functions() {
        let g = f.as_global_value();
        if f.count_basic_blocks() > 0 && is_local(f.get_linkage()) {
            out.push((g.get_name().to_string_lossy().into_owned(), true, f.get_linkage(), g.get_visibility()));
            f.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
        }
    }
    for g in module.get_globals() {
        if !g.is_declaration() && is_local(g.get_linkage()) {
            out.push((g.get_name().to_string_lossy().into_owned(), false, g.get_linkage(), g.get_visibility()));
            g.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
        }
    }
    Promotions(out)
}

/// Undo [`promote_locals`] (after linking) and make the twins local.
pub fn restore(module: &Module, promotions: Promotions, versioned: &BTreeSet<String>) {
    let global_of = |name: &str, is_fn: bool| -> Option<GlobalValue> {
        if is_fn {
            module.get_function(name).map(|f| f.as_global_value())
        } else {
            module.get_global(name)
        }
    };
    for (name, is_fn, linkage, visibility) in promotions.0 {
        if let Some(g) = global_of(&name, is_fn) {
            g.set_visibility(GlobalVisibility::Default);
            g.set_linkage(linkage);
            if !is_local(linkage) {
                g.set_visibility(visibility);
            }
        }
    }
    for name in versioned {
        if let Some(f) = module.get_function(&format!("{name}{CLONE_SUFFIX}")) {
            f.as_global_value().set_visibility(GlobalVisibility::Default);
            f.set_linkage(Linkage::Internal);
        }
    }
}

/// Pair every instruction of `a` with its copy in `b`, a fresh clone of `a`.
pub fn instruction_map(a: &Module, b: &Module) -> HashMap<Val, Val> {
    let mut map = HashMap::new();
    for (fa, fb) in a.get_functions().zip(b.get_functions()) {
        for (ba, bb) in fa.get_basic_blocks().into_iter().zip(fb.get_basic_blocks()) {
            for (ia, ib) in ba.get_instructions().zip(bb.get_instructions()) {
                map.insert(Val(ia.as_value_ref()), Val(ib.as_value_ref()));
            }
        }
    }
    map
}

/// Turn the (instrumented) clone into a module of twins only: each versioned `f` becomes
/// `f.irs`; every reference to a function or global points to a declaration of the original's;
/// everything else is removed so that linking adds only the twins.
pub fn make_twins(clone: &Module, versioned: &BTreeSet<String>) {
    let defined: Vec<FunctionValue> = clone
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0 && !is_ours(&f.get_name().to_string_lossy()))
        .collect();
    for f in defined {
        let name = f.get_name().to_string_lossy().into_owned();
        f.as_global_value().set_name(&format!("{name}{CLONE_SUFFIX}"));
        let decl = clone.add_function(&name, f.get_type(), Some(Linkage::External));
        f.replace_all_uses_with(decl);
        if versioned.contains(&name) {
            ir::clear_comdat(Val(f.as_value_ref()));
            f.set_linkage(Linkage::External);
            f.as_global_value().set_visibility(GlobalVisibility::Hidden);
        } else {
            // SAFETY: `f` has no uses left (replaced above) and is not referenced again.
            unsafe { f.delete() };
        }
    }
    let globals: Vec<GlobalValue> = clone.get_globals().collect();
    for g in globals {
        if g.get_linkage() == Linkage::Appending {
            // llvm.used, llvm.global_ctors, ...: the original has its own.
            // SAFETY: appending globals have no users.
            unsafe { g.delete() };
        } else if !g.is_declaration() {
            ir::make_declaration(Val(g.as_value_ref()));
        }
    }
}

/// Put the dispatch in front of every versioned function of the original.
pub fn insert_dispatchers<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    versioned: &BTreeSet<String>,
    flag: GlobalValue<'ctx>,
) -> Result<(), String> {
    let builder = context.create_builder();
    for name in versioned {
        let f = module.get_function(name).ok_or_else(|| format!("function {name} vanished"))?;
        let twin = module.add_function(&format!("{name}{CLONE_SUFFIX}"), f.get_type(), Some(Linkage::External));
        dispatch(context, &builder, f, twin, flag).map_err(|e| format!("dispatch for {name}: {e}"))?;
    }
    Ok(())
}

fn dispatch<'ctx>(
    context: &'ctx Context,
    b: &Builder<'ctx>,
    f: FunctionValue<'ctx>,
    twin: FunctionValue<'ctx>,
    flag: GlobalValue<'ctx>,
) -> Result<(), inkwell::builder::BuilderError> {
    let old_entry = f.get_first_basic_block().expect("versioned functions have a body");
    let entry = context.prepend_basic_block(old_entry, "irs.dispatch");
    let to_twin = context.append_basic_block(f, "irs.instrumented");
    b.position_at_end(entry);
    // Static allocas must stay in the entry block (or they count as dynamic stack allocation).
    let allocas: Vec<_> = old_entry
        .get_instructions()
        .filter(|i| {
            let v = Val(i.as_value_ref());
            v.opcode() == Some(LLVMOpcode::LLVMAlloca) && v.operand(0).and_then(|n| n.const_int()).is_some()
        })
        .collect();
    for a in allocas {
        a.remove_from_basic_block();
        b.insert_instruction(&a, None);
    }
    let i8t = context.i8_type();
    let on = b.build_load(flag.as_pointer_value(), "irs.active")?;
    let on = b.build_int_compare(IntPredicate::NE, on.into_int_value(), i8t.const_zero(), "irs.on")?;
    b.build_conditional_branch(on, to_twin, old_entry)?;

    b.position_at_end(to_twin);
    let args: Vec<BasicMetadataValueEnum> = f.get_param_iter().map(|p| p.into()).collect();
    let call = b.build_call(twin, &args, "")?;
    let byval = Attribute::get_named_enum_kind_id("byval");
    let mut forwards_byval = false;
    for i in 0..f.count_params() {
        for attr in f.attributes(AttributeLoc::Param(i)) {
            forwards_byval |= attr.is_type() && attr.get_enum_kind_id() == byval;
            call.add_attribute(AttributeLoc::Param(i), attr);
        }
    }
    // `tail` promises the callee does not touch the caller's stack; a forwarded byval argument
    // lives there, so such calls stay ordinary calls.
    call.set_tail_call(!forwards_byval);
    for attr in f.attributes(AttributeLoc::Return) {
        call.add_attribute(AttributeLoc::Return, attr);
    }
    ir::set_artificial_location(Val(call.as_value_ref()), Val(f.as_value_ref()));
    match call.try_as_basic_value().basic() {
        Some(v) => b.build_return(Some(&v))?,
        None => b.build_return(None)?,
    };
    Ok(())
}
