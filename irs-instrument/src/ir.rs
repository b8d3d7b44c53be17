//! A thin, read-mostly view of LLVM IR values over the raw C API, for the queries inkwell does
//! not offer (constant-expression operands, use lists, debug locations, `isa<>` tests).
//!
//! Every `unsafe` call of the crate's analysis lives here. The invariant that makes them sound:
//! a [`Val`] is only made from a value reference that belongs to a module which stays alive and
//! unmodified-in-structure for as long as the `Val` is used (the pass analyses a module fully
//! before it rewrites it).

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMOpcode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Val(pub LLVMValueRef);

impl Val {
    pub fn raw(self) -> LLVMValueRef {
        self.0
    }

    /// The opcode of an instruction or a constant expression; `None` for anything else.
    pub fn opcode(self) -> Option<LLVMOpcode> {
        // SAFETY: `self.0` is a live value (module invariant above); the IsA tests accept any value.
        unsafe {
            if !LLVMIsAInstruction(self.0).is_null() {
                Some(LLVMGetInstructionOpcode(self.0))
            } else if !LLVMIsAConstantExpr(self.0).is_null() {
                Some(LLVMGetConstOpcode(self.0))
            } else {
                None
            }
        }
    }

    pub fn is_instruction(self) -> bool {
        // SAFETY: live value; IsA accepts any value.
        unsafe { !LLVMIsAInstruction(self.0).is_null() }
    }

    pub fn num_operands(self) -> u32 {
        // SAFETY: live value; only users have operands, checked first.
        unsafe {
            if LLVMIsAUser(self.0).is_null() {
                0
            } else {
                LLVMGetNumOperands(self.0) as u32
            }
        }
    }

    pub fn operand(self, i: u32) -> Option<Val> {
        if i >= self.num_operands() {
            return None;
        }
        // SAFETY: `self` is a user with more than `i` operands.
        let op = unsafe { LLVMGetOperand(self.0, i) };
        (!op.is_null()).then_some(Val(op))
    }

    pub fn is_alloca(self) -> bool {
        // SAFETY: live value; IsA accepts any value.
        unsafe { !LLVMIsAAllocaInst(self.0).is_null() }
    }

    pub fn is_global_variable(self) -> bool {
        // SAFETY: live value; IsA accepts any value.
        unsafe { !LLVMIsAGlobalVariable(self.0).is_null() }
    }

    pub fn is_function(self) -> bool {
        // SAFETY: live value; IsA accepts any value.
        unsafe { !LLVMIsAFunction(self.0).is_null() }
    }

    /// A global variable's `constant` flag.
    pub fn is_constant_global(self) -> bool {
        // SAFETY: only called on global variables (checked).
        self.is_global_variable() && unsafe { LLVMIsGlobalConstant(self.0) != 0 }
    }

    pub fn is_thread_local_global(self) -> bool {
        // SAFETY: only called on global variables (checked).
        self.is_global_variable() && unsafe { LLVMIsThreadLocal(self.0) != 0 }
    }

    pub fn name(self) -> String {
        let mut len = 0usize;
        // SAFETY: live value; LLVM returns a pointer to `len` bytes owned by the value.
        unsafe {
            let p = LLVMGetValueName2(self.0, &mut len);
            if p.is_null() || len == 0 {
                return String::new();
            }
            String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
        }
    }

    /// The function a call instruction calls directly, looking through pointer casts.
    pub fn called_function(self) -> Option<Val> {
        if self.opcode() != Some(LLVMOpcode::LLVMCall) {
            return None;
        }
        // SAFETY: `self` is a call instruction.
        let mut callee = Val(unsafe { LLVMGetCalledValue(self.0) });
        while callee.opcode() == Some(LLVMOpcode::LLVMBitCast) {
            callee = callee.operand(0)?;
        }
        callee.is_function().then_some(callee)
    }

    /// Number of call arguments (operands minus the callee).
    pub fn call_arg_count(self) -> u32 {
        // SAFETY: only meaningful on calls; LLVMGetNumArgOperands requires a call base.
        if self.opcode() == Some(LLVMOpcode::LLVMCall) {
            unsafe { LLVMGetNumArgOperands(self.0) }
        } else {
            0
        }
    }

    /// The users of this value, one entry per use, with the operand index of that use.
    pub fn uses(self) -> Vec<(Val, u32)> {
        let mut out = Vec::new();
        // SAFETY: walking the use list of a live value; users are live values of the same module.
        unsafe {
            let mut u = LLVMGetFirstUse(self.0);
            while !u.is_null() {
                let user = Val(LLVMGetUser(u));
                for i in 0..user.num_operands() {
                    if LLVMGetOperand(user.0, i) == self.0 {
                        out.push((user, i));
                    }
                }
                u = LLVMGetNextUse(u);
            }
        }
        out.sort_by_key(|(v, i)| (v.0 as usize, *i));
        out.dedup();
        out
    }

    /// `(file, line, column)` from the instruction's debug location, when it has one.
    pub fn debug_location(self) -> Option<(String, u32, u32)> {
        if !self.is_instruction() {
            return None;
        }
        // SAFETY: `self` is an instruction; LLVM returns a pointer to `len` bytes it owns.
        unsafe {
            let line = LLVMGetDebugLocLine(self.0);
            if line == 0 {
                return None;
            }
            let mut len = 0u32;
            let p = LLVMGetDebugLocFilename(self.0, &mut len);
            let file = if p.is_null() {
                String::new()
            } else {
                String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len as usize))
                    .into_owned()
            };
            Some((file, line, LLVMGetDebugLocColumn(self.0)))
        }
    }

    /// The function that contains this instruction.
    pub fn parent_function(self) -> Option<Val> {
        if !self.is_instruction() {
            return None;
        }
        // SAFETY: an instruction in a function has a parent block whose parent is the function.
        unsafe {
            let bb = LLVMGetInstructionParent(self.0);
            if bb.is_null() {
                return None;
            }
            Some(Val(LLVMGetBasicBlockParent(bb)))
        }
    }

    /// The integer value of a constant int operand.
    pub fn const_int(self) -> Option<u64> {
        // SAFETY: live value; only read as an integer when it is a ConstantInt.
        unsafe { (!LLVMIsAConstantInt(self.0).is_null()).then(|| LLVMConstIntGetZExtValue(self.0)) }
    }

    /// The type of the value.
    pub fn type_ref(self) -> LLVMTypeRef {
        // SAFETY: every live value has a type.
        unsafe { LLVMTypeOf(self.0) }
    }
}


/// Copy the debug location of `from` onto `to` (inserted calls must carry one in functions
/// that have debug info, or the verifier rejects inlinable calls).
pub fn copy_debug_location(from: Val, to: Val) {
    use inkwell::llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
    // SAFETY: both are instructions of the same live module.
    unsafe {
        let loc = LLVMInstructionGetDebugLoc(from.0);
        if !loc.is_null() {
            LLVMInstructionSetDebugLoc(to.0, loc);
        }
    }
}


/// Store size in bytes of a type under the module's data layout; 0 for unsized types.
pub fn store_size(module: LLVMModuleRef, ty: LLVMTypeRef) -> u64 {
    use inkwell::llvm_sys::target::{LLVMGetModuleDataLayout, LLVMStoreSizeOfType};
    // SAFETY: live module and type; sizing is only asked of sized types (checked first).
    unsafe {
        if LLVMTypeIsSized(ty) == 0 {
            return 0;
        }
        LLVMStoreSizeOfType(LLVMGetModuleDataLayout(module), ty)
    }
}

/// The value type of a global variable (what it holds, not its pointer type).
pub fn global_value_type(global: Val) -> LLVMTypeRef {
    // SAFETY: only called on global values.
    unsafe { LLVMGlobalGetValueType(global.0) }
}

/// What a value of type `ty` is as bits the value model can carry (`shared_proto::value_model`):
/// an integer of at most 64 bits, a pointer, a `float` or a `double`; `None` for anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Int(u32),
    Ptr,
    Float(u32),
}

pub fn scalar(ty: LLVMTypeRef) -> Option<Scalar> {
    use inkwell::llvm_sys::LLVMTypeKind;
    // SAFETY: a live type of the module being analysed.
    unsafe {
        match LLVMGetTypeKind(ty) {
            LLVMTypeKind::LLVMIntegerTypeKind => Some(LLVMGetIntTypeWidth(ty)).filter(|&w| w <= 64).map(Scalar::Int),
            LLVMTypeKind::LLVMPointerTypeKind => Some(Scalar::Ptr),
            LLVMTypeKind::LLVMFloatTypeKind => Some(Scalar::Float(32)),
            LLVMTypeKind::LLVMDoubleTypeKind => Some(Scalar::Float(64)),
            _ => None,
        }
    }
}

/// An atomicrmw's operation as `shared_proto::abi`'s `RMW_*` code, for those the value model
/// knows (exchange, add, subtract).
pub fn rmw_op(inst: Val) -> Option<u64> {
    use inkwell::llvm_sys::LLVMAtomicRMWBinOp::*;
    use shared_proto::abi::{RMW_ADD, RMW_SUB, RMW_XCHG};
    // SAFETY: only called on atomicrmw instructions.
    match unsafe { LLVMGetAtomicRMWBinOp(inst.0) } {
        LLVMAtomicRMWBinOpXchg => Some(RMW_XCHG),
        LLVMAtomicRMWBinOpAdd => Some(RMW_ADD),
        LLVMAtomicRMWBinOpSub => Some(RMW_SUB),
        _ => None,
    }
}

/// Is this load or store atomic (any ordering other than not-atomic)?
pub fn is_atomic_load_store(inst: Val) -> bool {
    use inkwell::llvm_sys::LLVMAtomicOrdering;
    // SAFETY: only called on load and store instructions.
    unsafe { LLVMGetOrdering(inst.0) != LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic }
}

/// Replace every use of `old` by `new`, then delete `old`.
pub fn replace_and_erase(old: Val, new: Val) {
    // SAFETY: both are instructions of the same live module with the same type; `old` is not
    // used afterwards.
    unsafe {
        LLVMReplaceAllUsesWith(old.0, new.0);
        LLVMInstructionEraseFromParent(old.0);
    }
}

/// Give `inst` (a call inserted into `function`) a line-0 location in the function's debug
/// scope, when the function has one: the verifier requires a location on inlinable calls in
/// functions with debug info.
pub fn set_artificial_location(inst: Val, function: Val) {
    use inkwell::llvm_sys::debuginfo::{LLVMDIBuilderCreateDebugLocation, LLVMGetSubprogram, LLVMInstructionSetDebugLoc};
    // SAFETY: `function` is a function and `inst` an instruction of the same live module.
    unsafe {
        let scope = LLVMGetSubprogram(function.0);
        if scope.is_null() {
            return;
        }
        let ctx = LLVMGetTypeContext(LLVMTypeOf(function.0));
        let loc = LLVMDIBuilderCreateDebugLocation(ctx, 0, 0, scope, std::ptr::null_mut());
        LLVMInstructionSetDebugLoc(inst.0, loc);
    }
}

/// Turn a global variable definition into a declaration (drop its initializer and comdat).
pub fn make_declaration(global: Val) {
    use inkwell::llvm_sys::LLVMLinkage;
    // SAFETY: `global` is a global variable of a live module; a null initializer makes it a
    // declaration, which must have external linkage.
    unsafe {
        LLVMSetInitializer(global.0, std::ptr::null_mut());
        inkwell::llvm_sys::comdat::LLVMSetComdat(global.0, std::ptr::null_mut());
        LLVMSetLinkage(global.0, LLVMLinkage::LLVMExternalLinkage);
    }
}

/// Detach a global value from its comdat.
pub fn clear_comdat(global: Val) {
    // SAFETY: `global` is a global value of a live module.
    unsafe { inkwell::llvm_sys::comdat::LLVMSetComdat(global.0, std::ptr::null_mut()) }
}

/// Does the module define aliases or ifuncs (which function versioning does not handle)?
pub fn has_aliases_or_ifuncs(module: LLVMModuleRef) -> bool {
    // SAFETY: live module.
    unsafe { !LLVMGetFirstGlobalAlias(module).is_null() || !LLVMGetFirstGlobalIFunc(module).is_null() }
}

/// Does this function have a body in this module?
pub fn has_body(function: Val) -> bool {
    // SAFETY: only called on function values.
    unsafe { LLVMCountBasicBlocks(function.0) > 0 }
}

/// A basic block of a function being analysed (same invariant as [`Val`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block(pub LLVMBasicBlockRef);

impl Block {
    /// The blocks of `function`, entry first.
    pub fn of_function(function: Val) -> Vec<Block> {
        let mut out = Vec::new();
        // SAFETY: `function` is a live function (module invariant); blocks are walked in order.
        unsafe {
            let mut b = LLVMGetFirstBasicBlock(function.0);
            while !b.is_null() {
                out.push(Block(b));
                b = LLVMGetNextBasicBlock(b);
            }
        }
        out
    }

    pub fn terminator(self) -> Option<Val> {
        // SAFETY: a live block.
        let t = unsafe { LLVMGetBasicBlockTerminator(self.0) };
        (!t.is_null()).then_some(Val(t))
    }

    /// The blocks its terminator may branch to.
    pub fn successors(self) -> Vec<Block> {
        let Some(t) = self.terminator() else { return Vec::new() };
        // SAFETY: `t` is the block's terminator; successor indices are below the count.
        unsafe { (0..LLVMGetNumSuccessors(t.0)).map(|i| Block(LLVMGetSuccessor(t.0, i))).collect() }
    }

    /// Its instructions, in order.
    pub fn instructions(self) -> Vec<Val> {
        let mut out = Vec::new();
        // SAFETY: a live block; instructions are walked in order.
        unsafe {
            let mut i = LLVMGetFirstInstruction(self.0);
            while !i.is_null() {
                out.push(Val(i));
                i = LLVMGetNextInstruction(i);
            }
        }
        out
    }

    /// The block an instruction is in.
    pub fn of_instruction(inst: Val) -> Block {
        // SAFETY: `inst` is a live instruction.
        Block(unsafe { LLVMGetInstructionParent(inst.0) })
    }
}
