//! The record each instrumented module places in the `irs_modules` ELF section (DESIGN §5).
//!
//! The linker concatenates the records of all instrumented objects; the runtime walks them
//! between `__start_irs_modules` and `__stop_irs_modules`, validates each, and learns the
//! program's site table, its globals' addresses (for naming objects) and its program id.
//! The pass emits exactly this layout as an LLVM constant struct.

/// `"IRSMODv1"` read as a little-endian u64.
pub const MODULE_MAGIC: u64 = u64::from_le_bytes(*b"IRSMODv1");
pub const MODULE_FORMAT_VERSION: u32 = 1;
/// The section name; a C identifier, so the linker defines `__start_`/`__stop_` symbols.
pub const MODULE_SECTION: &str = "irs_modules";
/// Size in bytes of one record; records are 8-aligned, so they are contiguous in the section.
pub const MODULE_DESCRIPTOR_SIZE: usize = std::mem::size_of::<ModuleDescriptor>();

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ModuleDescriptor {
    pub magic: u64,
    pub version: u32,
    pub reserved: u32,
    pub module_hash: u64,
    /// bincode-encoded [`crate::ModuleSites`].
    pub sites_blob: *const u8,
    pub sites_len: u64,
    /// Addresses of the module's globals, in the order of `ModuleSites::globals`.
    pub globals: *const *const u8,
    pub n_globals: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn layout_is_what_the_pass_emits() {
        // magic, version+reserved, hash, blob ptr, blob len, globals ptr, n_globals
        assert_eq!(MODULE_DESCRIPTOR_SIZE, 56);
        assert_eq!(std::mem::align_of::<ModuleDescriptor>(), 8);
    }
}
