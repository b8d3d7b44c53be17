//! Embedding a module's site table and globals for the runtime (DESIGN §5): a bincode blob, an
//! array of the globals' addresses, and one [`ModuleDescriptor`] record in the `irs_modules`
//! section (kept alive through `llvm.used`).
//!
//! [`ModuleDescriptor`]: shared_proto::module_descriptor::ModuleDescriptor

use crate::ir::{self, Val};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, PointerValue};
use inkwell::AddressSpace;
use shared_proto::module_descriptor::{MODULE_FORMAT_VERSION, MODULE_MAGIC, MODULE_SECTION};
use shared_proto::{GlobalInfo, ModuleSites, SiteInfo};

/// Globals worth naming in traces: writable, not thread-local, not LLVM's or ours.
fn nameable_globals<'ctx>(module: &Module<'ctx>) -> Vec<(PointerValue<'ctx>, GlobalInfo)> {
    let mut out = Vec::new();
    for g in module.get_globals() {
        let v = Val(g.as_value_ref());
        let name = v.name();
        if name.is_empty() || name.starts_with("llvm.") || name.starts_with("__irs") || name.starts_with('.') {
            continue;
        }
        if v.is_constant_global() || v.is_thread_local_global() {
            continue;
        }
        let size = ir::store_size(module.as_mut_ptr(), ir::global_value_type(v));
        out.push((g.as_pointer_value(), GlobalInfo { name, size }));
    }
    out
}

/// Embed everything; returns the globals in descriptor order.
pub fn embed_module_sites<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    module_hash: u64,
    source: &str,
    sites: &[SiteInfo],
) -> Result<Vec<GlobalInfo>, String> {
    let i8t = context.i8_type();
    let i32t = context.i32_type();
    let i64t = context.i64_type();
    let i8p = i8t.ptr_type(AddressSpace::default());
    let tag = format!("{:016x}", module_hash);

    let globals = nameable_globals(module);
    let infos: Vec<GlobalInfo> = globals.iter().map(|(_, g)| g.clone()).collect();
    let blob_bytes = ModuleSites {
        module_hash,
        source: source.to_string(),
        sites: sites.to_vec(),
        globals: infos.clone(),
    }
    .to_bytes();

    let blob_init = context.const_string(&blob_bytes, false);
    let blob = module.add_global(blob_init.get_type(), None, &format!("__irs_sites.{tag}"));
    blob.set_initializer(&blob_init);
    blob.set_constant(true);
    blob.set_linkage(Linkage::Private);

    let ptrs: Vec<PointerValue> = globals.iter().map(|(p, _)| p.const_cast(i8p)).collect();
    let arr_init = i8p.const_array(&ptrs);
    let arr = module.add_global(arr_init.get_type(), None, &format!("__irs_globals.{tag}"));
    arr.set_initializer(&arr_init);
    arr.set_constant(true);
    arr.set_linkage(Linkage::Private);

    let fields: [BasicValueEnum; 8] = [
        i64t.const_int(MODULE_MAGIC, false).into(),
        i32t.const_int(MODULE_FORMAT_VERSION as u64, false).into(),
        i32t.const_zero().into(),
        i64t.const_int(module_hash, false).into(),
        blob.as_pointer_value().const_cast(i8p).into(),
        i64t.const_int(blob_bytes.len() as u64, false).into(),
        arr.as_pointer_value().const_cast(i8p.ptr_type(AddressSpace::default())).into(),
        i64t.const_int(globals.len() as u64, false).into(),
    ];
    let desc_init = context.const_struct(&fields, false);
    let desc = module.add_global(desc_init.get_type(), None, &format!("__irs_module.{tag}"));
    desc.set_initializer(&desc_init);
    desc.set_linkage(Linkage::Internal);
    desc.set_section(Some(MODULE_SECTION));
    desc.set_alignment(8);

    append_to_llvm_used(context, module, desc.as_pointer_value().const_cast(i8p))?;
    Ok(infos)
}

/// Add `value` to `@llvm.used`, keeping whatever the module already had there.
fn append_to_llvm_used<'ctx>(context: &'ctx Context, module: &Module<'ctx>, value: PointerValue<'ctx>) -> Result<(), String> {
    let i8p = context.i8_type().ptr_type(AddressSpace::default());
    let mut entries: Vec<PointerValue> = Vec::new();
    if let Some(old) = module.get_global("llvm.used") {
        let v = Val(old.as_value_ref());
        if let Some(init) = v.operand(0) {
            for i in 0..init.num_operands() {
                let e = init.operand(i).ok_or("llvm.used has a hole")?;
                // SAFETY: every element of llvm.used is an i8* constant of this module.
                entries.push(unsafe { PointerValue::new(e.raw()) });
            }
        }
        // SAFETY: `old` is a global of this module with no other users.
        unsafe { old.delete() };
    }
    entries.push(value);
    let init = i8p.const_array(&entries);
    let used = module.add_global(init.get_type(), None, "llvm.used");
    used.set_initializer(&init);
    used.set_linkage(Linkage::Appending);
    used.set_section(Some("llvm.metadata"));
    Ok(())
}
