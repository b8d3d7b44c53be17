//! Loops that may spin (DESIGN §5, instrumentation; spin-waits must end): which loops the runtime
//! may watch for an iteration that repeats the previous one exactly.
//!
//! A loop is a *spin candidate* when nothing an iteration does can change the thread's state
//! except what the runtime sees: every store in it is an instrumented access (shared memory;
//! the runtime sees it as a write) or a store to a local that no path from the header reads
//! before storing it again (a temporary of one iteration), every call is one the runtime sees or that changes nothing
//! (a mutex operation, a wait on a condition variable, `sched_yield`, a sleep, `pthread_self`, a debug intrinsic; a failed assertion ends
//! the thread), and its header has no phi node (no value carried from one iteration to the
//! next: the pass runs on unoptimised IR, where locals live in memory and a store to one would
//! disqualify the loop). For such a loop the pass calls the runtime at the top of the header
//! (`__irs_loop_head`) and on every edge into the header from outside (`__irs_loop_enter`).
//! The runtime then knows when the thread completes an iteration (the header again, with no
//! entry in between); an iteration that wrote nothing and read exactly what the previous one
//! read (same instructions, addresses and values) leaves the thread in the state it was in: it
//! would repeat for ever unless another thread writes (see the runtime's `spin_loop`).
//!
//! `IRS_DEBUG_SPIN=1` prints, for each loop that is not a candidate, the instruction that keeps
//! it from being one. Loops are the natural loops of the control-flow graph: the blocks that reach a back edge (an
//! edge to a block that dominates its source) without passing its header; loops with one header
//! are taken together.

use crate::ir::{Block, Val};
use inkwell::llvm_sys::LLVMOpcode;
use std::collections::{HashMap, HashSet};

/// A loop the runtime watches.
pub struct SpinLoop {
    /// The header's first instruction after its phi nodes (where `__irs_loop_head` goes; also
    /// where the loop's source location is taken from).
    pub head: Val,
    /// The terminators of the blocks outside the loop that branch to the header (where
    /// `__irs_loop_enter` goes).
    pub entries: Vec<Val>,
    /// It waits on a condition variable (its header calls `__irs_wait_loop_head` instead).
    pub waits: bool,
}

/// A wait on a condition variable.
fn is_wait(name: &str) -> bool {
    matches!(name, "pthread_cond_wait" | "pthread_cond_timedwait" | "pthread_cond_clockwait")
}

/// Calls that change nothing the runtime does not see.
fn harmless_call(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "sched_yield", "pthread_yield", "pthread_self", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_mutex_trylock",
        "pthread_spin_lock", "pthread_spin_unlock", "pthread_spin_trylock", "pthread_getspecific", "__assert_fail", "abort",
        "reach_error", "__VERIFIER_error",
        // A sleep changes nothing but the time (and costs none in EXPLORE): a polling loop
        // that sleeps between its reads is a spin-wait.
        "sleep", "usleep", "nanosleep", "clock_nanosleep", "thrd_sleep",
    ];
    // `_mm_pause()` (the x86 spin-wait hint) is an intrinsic with no state.
    const PREFIXES: &[&str] = &["llvm.dbg.", "llvm.lifetime.", "llvm.expect", "llvm.assume", "llvm.prefetch", "llvm.x86.sse2.pause"];
    // A wait on a condition variable: its unlocking, waiting and relocking are events the
    // runtime sees (a timed wait that timed out and waits again leaves every lock as it found
    // it: `spin_watch`).
    NAMES.contains(&name) || is_wait(name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Dominators of every block reachable from the entry (the iterative algorithm of Cooper,
/// Harvey and Kennedy over reverse postorder): `idom[b]`.
fn dominators(blocks: &[Block]) -> HashMap<Block, Block> {
    let entry = blocks[0];
    // Reverse postorder by depth-first search.
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(entry, 0usize)];
    seen.insert(entry);
    while let Some((b, i)) = stack.pop() {
        let succ = b.successors();
        if i < succ.len() {
            stack.push((b, i + 1));
            if seen.insert(succ[i]) {
                stack.push((succ[i], 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let index: HashMap<Block, usize> = order.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in &order {
        for s in b.successors() {
            preds.entry(s).or_default().push(b);
        }
    }
    let mut idom: HashMap<Block, Block> = HashMap::new();
    idom.insert(entry, entry);
    let intersect = |idom: &HashMap<Block, Block>, mut a: Block, mut b: Block| {
        while a != b {
            while index[&a] > index[&b] {
                a = idom[&a];
            }
            while index[&b] > index[&a] {
                b = idom[&b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let ps: Vec<Block> = preds.get(&b).map(|p| p.iter().copied().filter(|p| idom.contains_key(p)).collect()).unwrap_or_default();
            let Some(&first) = ps.first() else { continue };
            let new = ps[1..].iter().fold(first, |acc, &p| intersect(&idom, acc, p));
            if idom.get(&b) != Some(&new) {
                idom.insert(b, new);
                changed = true;
            }
        }
    }
    idom
}

fn dominates(idom: &HashMap<Block, Block>, a: Block, mut b: Block) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom.get(&b) {
            Some(&p) if p != b => b = p,
            _ => return false,
        }
    }
}

/// The spin candidates of `function`. `visible`: the instructions the pass instruments (their
/// stores, atomics and memory intrinsics are seen by the runtime).
pub fn find(function: Val, visible: &HashSet<Val>) -> Vec<SpinLoop> {
    let blocks = Block::of_function(function);
    if blocks.is_empty() {
        return Vec::new();
    }
    let idom = dominators(&blocks);
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in blocks.iter().filter(|b| idom.contains_key(b)) {
        for s in b.successors() {
            preds.entry(s).or_default().push(b);
        }
    }
    // Natural loops, by header.
    let mut loops: HashMap<Block, HashSet<Block>> = HashMap::new();
    for &b in blocks.iter().filter(|b| idom.contains_key(b)) {
        for h in b.successors() {
            if !dominates(&idom, h, b) {
                continue;
            }
            let body = loops.entry(h).or_insert_with(|| HashSet::from([h]));
            let mut work = vec![b];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(preds.get(&x).into_iter().flatten().copied());
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut headers: Vec<Block> = loops.keys().copied().collect();
    headers.sort_by_key(|h| blocks.iter().position(|b| b == h));
    for h in headers {
        let body = &loops[&h];
        let insts = h.instructions();
        if insts.first().is_some_and(|i| i.opcode() == Some(LLVMOpcode::LLVMPHI)) {
            continue;
        }
        let Some(&head) = insts.first() else { continue };
        if !body.iter().all(|b| b.instructions().into_iter().all(|i| {
            let ok = harmless(i, visible) || dead_local_store(i, h);
            if !ok && std::env::var_os("IRS_DEBUG_SPIN").is_some() {
                eprintln!("spin: loop at {:?} rejected by {:?} {:?}", head.debug_location(), i.opcode(), i.debug_location());
            }
            ok
        })) {
            continue;
        }
        let entries = preds.get(&h).into_iter().flatten().filter(|p| !body.contains(p)).filter_map(|p| p.terminator()).collect();
        let waits = body.iter().any(|b| b.instructions().into_iter().any(|i| i.opcode() == Some(LLVMOpcode::LLVMCall) && i.called_function().is_some_and(|f| is_wait(&f.name()))));
        out.push(SpinLoop { head, entries, waits });
    }
    out
}

/// A store to a local (an `alloca` the pass does not instrument) whose value no path from the
/// loop's header reads before storing it again: a temporary of one iteration (what clang makes
/// of `atomic_load(&flag)` at `-O0`), not state carried from one iteration to the next.
fn dead_local_store(inst: Val, header: Block) -> bool {
    if inst.opcode() != Some(LLVMOpcode::LLVMStore) {
        return false;
    }
    let Some(a) = inst.operand(1).filter(|a| a.is_alloca()) else { return false };
    // Does some path from the header's top reach a use of `a` other than a store to it, before
    // a store to it?
    let mut seen = HashSet::new();
    let mut work = vec![header];
    while let Some(b) = work.pop() {
        if !seen.insert(b) {
            continue;
        }
        let mut killed = false;
        for i in b.instructions() {
            let uses_a = (0..i.num_operands()).any(|n| i.operand(n) == Some(a));
            if !uses_a {
                continue;
            }
            if i.opcode() == Some(LLVMOpcode::LLVMStore) && i.operand(1) == Some(a) && i.operand(0) != Some(a) {
                killed = true;
                break;
            }
            if !is_marker(i) && !(i.opcode() == Some(LLVMOpcode::LLVMBitCast) && i.uses().iter().all(|(u, _)| is_marker(*u))) {
                return false;
            }
        }
        if !killed {
            work.extend(b.successors());
        }
    }
    true
}

/// A call that only marks a local's lifetime or debug information (at `-O1` clang brackets a
/// block's locals with `llvm.lifetime.start/end` on a bitcast of their address).
fn is_marker(i: Val) -> bool {
    i.opcode() == Some(LLVMOpcode::LLVMCall)
        && i.called_function().is_some_and(|f| {
            let n = f.name();
            n.starts_with("llvm.lifetime.") || n.starts_with("llvm.dbg.")
        })
}

/// Can `inst`, in a loop, change the thread's state without the runtime seeing it?
fn harmless(inst: Val, visible: &HashSet<Val>) -> bool {
    match inst.opcode() {
        Some(LLVMOpcode::LLVMStore | LLVMOpcode::LLVMAtomicRMW | LLVMOpcode::LLVMAtomicCmpXchg) => visible.contains(&inst),
        Some(LLVMOpcode::LLVMCall) => {
            let Some(callee) = inst.called_function() else { return false };
            let name = callee.name();
            if name.starts_with("llvm.memcpy") || name.starts_with("llvm.memmove") || name.starts_with("llvm.memset") {
                return visible.contains(&inst);
            }
            harmless_call(&name)
        }
        Some(LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMVAArg | LLVMOpcode::LLVMAlloca | LLVMOpcode::LLVMCallBr) => false,
        _ => true,
    }
}
