//! Deciding, per memory access, whether it may touch shared memory (DESIGN §5).
//!
//! The decision follows the accessed address back to its base object through GEPs and casts
//! (instructions and constant expressions alike) and then asks what that base is.

use crate::escape::EscapeAnalysis;
use crate::ir::Val;
use inkwell::llvm_sys::LLVMOpcode;

/// The verdict for one access, with the reason people read in the site report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessClass {
    /// May touch memory another thread can reach: instrument.
    Shared { target: String },
    /// Provably private or immutable: leave alone.
    Skipped { reason: String },
}

/// Strip GEPs and pointer casts to the base object of an address.
pub fn base_object(mut v: Val) -> Val {
    for _ in 0..256 {
        match v.opcode() {
            Some(LLVMOpcode::LLVMGetElementPtr)
            | Some(LLVMOpcode::LLVMBitCast)
            | Some(LLVMOpcode::LLVMAddrSpaceCast) => match v.operand(0) {
                Some(next) => v = next,
                None => return v,
            },
            _ => return v,
        }
    }
    v
}

fn display_name(v: Val) -> String {
    let n = v.name();
    if n.is_empty() {
        "(unnamed)".to_string()
    } else {
        n
    }
}

pub fn classify(address: Val, escape: &mut EscapeAnalysis) -> AccessClass {
    let base = base_object(address);
    if base.is_alloca() {
        let name = display_name(base);
        return if escape.escapes(base) {
            AccessClass::Shared { target: format!("escaping local {name}") }
        } else {
            AccessClass::Skipped { reason: format!("non-escaping local {name}") }
        };
    }
    if base.is_global_variable() {
        let name = display_name(base);
        if base.is_constant_global() {
            return AccessClass::Skipped { reason: format!("constant global {name}") };
        }
        if base.is_thread_local_global() {
            return AccessClass::Skipped { reason: format!("thread-local global {name}") };
        }
        return AccessClass::Shared { target: format!("global {name}") };
    }
    AccessClass::Shared { target: "heap or pointer".to_string() }
}
