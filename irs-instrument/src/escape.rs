//! Which stack slots can another thread reach? (DESIGN §5: non-escaping allocas are skipped.)
//!
//! A local escapes when its address (or an address derived from it by GEPs and casts) is stored
//! as a value, passed to a call that may keep it, returned, turned into an integer, or merged
//! through a phi/select. Loads and stores *through* the address, comparisons and calls known not
//! to capture it (see [`crate::known_calls`]) do not make it escape.

use crate::ir::Val;
use crate::known_calls::call_may_capture;
use inkwell::llvm_sys::LLVMOpcode;
use std::collections::HashMap;

#[derive(Default)]
pub struct EscapeAnalysis {
    memo: HashMap<Val, bool>,
}

impl EscapeAnalysis {
    pub fn escapes(&mut self, alloca: Val) -> bool {
        if let Some(&e) = self.memo.get(&alloca) {
            return e;
        }
        let e = address_escapes(alloca, 0);
        self.memo.insert(alloca, e);
        e
    }
}

fn address_escapes(addr: Val, depth: u32) -> bool {
    if depth > 64 {
        return true;
    }
    for (user, operand) in addr.uses() {
        let escapes = match user.opcode() {
            Some(LLVMOpcode::LLVMLoad) => false,
            // Storing *to* the address is fine; storing the address itself (operand 0) is not.
            Some(LLVMOpcode::LLVMStore) => operand == 0,
            Some(LLVMOpcode::LLVMAtomicRMW) => operand != 0,
            Some(LLVMOpcode::LLVMAtomicCmpXchg) => operand != 0,
            Some(LLVMOpcode::LLVMICmp) => false,
            Some(LLVMOpcode::LLVMGetElementPtr)
            | Some(LLVMOpcode::LLVMBitCast)
            | Some(LLVMOpcode::LLVMAddrSpaceCast) => {
                operand == 0 && address_escapes(user, depth + 1) || operand != 0
            }
            Some(LLVMOpcode::LLVMCall) => match user.called_function() {
                Some(f) if operand < user.call_arg_count() => call_may_capture(&f.name(), operand),
                _ => true,
            },
            _ => true,
        };
        if escapes {
            return true;
        }
    }
    false
}
