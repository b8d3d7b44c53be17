//! The instrumentation pass (DESIGN §5; IRS paper §4): callbacks before and after every memory
//! access that may touch shared memory, pthread calls routed to runtime wrappers, violations
//! reported, `main` wrapped so that the runtime starts first, and the module's site table and
//! globals embedded for the runtime.
//!
//! The pass runs on unoptimised IR (clang with LLVM passes disabled) so that no optimisation that
//! assumes race freedom has run; the caller optimises afterwards. It plans every rewrite on the
//! untouched module first, then applies the plan to instrumented twins of the functions (see
//! [`crate::versioning`]): a thread with nothing to record or enforce runs the plain bodies.
//! Inside the twins, the callbacks are reached through small `alwaysinline` guards that test the
//! thread-local flag again, so a thread that becomes free mid-function stops calling at once.

use crate::access_class::{classify, AccessClass};
use crate::escape::EscapeAnalysis;
use crate::ir::{self, Val};
use crate::known_calls::{routed_call, violation_call, RoutedCall};
use crate::sv_comp::{self, SvCall};
use crate::module_embed::embed_module_sites;
use crate::site_report::{Decision, ReportEntry};
use crate::versioning;
use std::collections::HashMap;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{AsValueRef, BasicMetadataValueEnum, FunctionValue, GlobalValue, InstructionValue, PointerValue};
use inkwell::{AddressSpace, GlobalVisibility, IntPredicate, ThreadLocalMode};
use shared_proto::abi::{self, CB_AFTER, CB_BEFORE, CB_VIOLATION, RUNTIME_START, THREAD_ACTIVE_FLAG, USER_MAIN};
use shared_proto::hash::StableHasher;
use shared_proto::{AccessKind, ModuleSites, SiteId, SiteInfo, SiteKind, ViolationKind};

const GUARD_BEFORE: &str = "__irs_guard_before";
/// Called before a function EXPLORE does not model (see `known_calls::unsupported_call`).
const UNSUPPORTED_HOOK: &str = "__irs_unsupported_call";
/// Called before the program reads its environment whole (`input_env` in the runtime).
const ENVIRON_HOOK: &str = "__irs_environ_read";
const GUARD_AFTER: &str = "__irs_guard_after";
const GUARD_BEFORE_STORE: &str = "__irs_guard_before_store";
const GUARD_BEFORE_UPDATE: &str = "__irs_guard_before_update";
const GUARD_LOOP_HEAD: &str = "__irs_guard_loop_head";
const GUARD_LOOP_ENTER: &str = "__irs_guard_loop_enter";
const GUARD_WAIT_LOOP_HEAD: &str = "__irs_guard_wait_loop_head";

#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("{0} is already instrumented by irs")]
    AlreadyInstrumented(String),
    #[error("building instrumentation for {module}: {detail}")]
    Build { module: String, detail: String },
    #[error("unsupported: {module}: {detail}")]
    DataModel { module: String, detail: String },
    #[error("internal error: the instrumented module of {module} does not verify: {detail}")]
    Verify { module: String, detail: String },
}

/// What the pass did to one module.
pub struct PassOutput {
    pub sites: ModuleSites,
    pub report: Vec<ReportEntry>,
    pub defines_main: bool,
}

/// One planned rewrite, collected before the module is changed. Addresses are named by operand
/// index, so that a plan made on the original applies to its clone too.
#[derive(Clone, Copy)]
enum Action {
    Access { inst: Val, addr_op: u32, site: u32, kind: AccessKind, size: u64 },
    /// memcpy/memmove (source operand 1, destination 0) and memset (destination only).
    MemIntrinsic { inst: Val, src_site: Option<u32>, dst_site: Option<u32>, size: u64 },
    Route { inst: Val, route: &'static RoutedCall, site: u32 },
    Violation { inst: Val, kind: ViolationKind, site: u32 },
    /// A call of the SV-COMP interface (`sv_comp`).
    Sv { inst: Val, call: SvCall, site: u32 },
    /// A call of a function EXPLORE does not model (`known_calls::unsupported_call`).
    Unsupported { inst: Val, site: u32 },
    /// A use of `environ` (or `main`'s third argument): the whole environment is input.
    EnvironRead { inst: Val, site: u32 },
    /// A spin candidate's header (`head`: at its top) or an edge into it from outside (at the
    /// terminator of the block it leaves; `spin_loops`).
    Loop { inst: Val, site: u32, head: bool, waits: bool },
}

impl Action {
    fn inst(&self) -> Val {
        match *self {
            Action::Access { inst, .. }
            | Action::MemIntrinsic { inst, .. }
            | Action::Route { inst, .. }
            | Action::Violation { inst, .. }
            | Action::Sv { inst, .. }
            | Action::Unsupported { inst, .. }
            | Action::EnvironRead { inst, .. }
            | Action::Loop { inst, .. } => inst,
        }
    }

    /// The same action on the copy of its instruction in a clone.
    fn on(mut self, map: &HashMap<Val, Val>) -> Action {
        let copy = map[&self.inst()];
        match &mut self {
            Action::Access { inst, .. }
            | Action::MemIntrinsic { inst, .. }
            | Action::Route { inst, .. }
            | Action::Violation { inst, .. }
            | Action::Sv { inst, .. }
            | Action::Unsupported { inst, .. }
            | Action::EnvironRead { inst, .. }
            | Action::Loop { inst, .. } => *inst = copy,
        }
        self
    }

    /// Does the plain body of a versioned function need this rewrite too? Violation reports
    /// and the routed calls the runtime needs from every thread; memory callbacks never.
    fn needed_when_free(&self) -> bool {
        match self {
            Action::Access { .. } | Action::MemIntrinsic { .. } => false,
            Action::Route { route, .. } => route.needed_when_free(),
            // The SV-COMP functions exist only in the runtime: a plain body calls it too.
            Action::Violation { .. } | Action::Sv { .. } => true,
            // The environment is input in every thread, like the files it opens.
            Action::EnvironRead { .. } => true,
            Action::Unsupported { .. } | Action::Loop { .. } => false,
        }
    }

    fn function(&self) -> String {
        self.inst().parent_function().map(|f| f.name()).unwrap_or_default()
    }
}

struct Planner<'m, 'ctx> {
    source: String,
    sites: Vec<SiteInfo>,
    report: Vec<ReportEntry>,
    escape: EscapeAnalysis,
    actions: Vec<Action>,
    module: &'m Module<'ctx>,
}

impl<'m, 'ctx> Planner<'m, 'ctx> {
    fn location(&self, inst: Val) -> (String, u32, u32) {
        inst.debug_location().unwrap_or_else(|| (String::new(), 0, 0))
    }

    fn function_of(inst: Val) -> String {
        inst.parent_function().map(|f| f.name()).unwrap_or_default()
    }

    fn add_site(&mut self, inst: Val, kind: SiteKind, target: String) -> u32 {
        let (file, line, column) = self.location(inst);
        let info = SiteInfo { kind, function: Self::function_of(inst), file, line, column, target };
        let index = self.sites.len() as u32;
        self.report.push(ReportEntry {
            location: info.location(),
            function: info.function.clone(),
            kind,
            decision: Decision::Instrumented { site: index, target: info.target.clone() },
        });
        self.sites.push(info);
        index
    }

    fn skip(&mut self, inst: Val, kind: SiteKind, reason: String) {
        let (file, line, column) = self.location(inst);
        let info = SiteInfo { kind, function: Self::function_of(inst), file, line, column, target: String::new() };
        self.report.push(ReportEntry {
            location: info.location(),
            function: info.function,
            kind,
            decision: Decision::Skipped { reason },
        });
    }

    /// Classify one address; returns the site index when it is instrumented.
    fn access(&mut self, inst: Val, addr: Val, kind: AccessKind) -> Option<u32> {
        let kind = SiteKind::Access(kind);
        match classify(addr, &mut self.escape) {
            AccessClass::Shared { target } => Some(self.add_site(inst, kind, target)),
            AccessClass::Skipped { reason } => {
                self.skip(inst, kind, reason);
                None
            }
        }
    }

    fn size_of_value(&self, v: Val) -> u64 {
        ir::store_size(self.module.as_mut_ptr(), v.type_ref())
    }

    /// Does `inst` use the C library's `environ` (the whole environment)?
    fn uses_environ(inst: Val) -> bool {
        (0..inst.num_operands()).filter_map(|i| inst.operand(i)).any(|o| o.is_global_variable() && matches!(o.name().as_str(), "environ" | "__environ" | "_environ"))
    }

    /// Before `inst`, the program reads its whole environment.
    fn environ_read(&mut self, inst: Val, what: &str) {
        let site = self.add_site(inst, SiteKind::InputRead, what.to_string());
        self.actions.push(Action::EnvironRead { inst, site });
    }

    fn plan_instruction(&mut self, inst: Val) {
        let Some(op) = inst.opcode() else { return };
        if Self::uses_environ(inst) {
            self.environ_read(inst, "environ");
        }
        match op {
            LLVMOpcode::LLVMLoad => {
                let addr = inst.operand(0).expect("load has an address");
                let kind = if ir::is_atomic_load_store(inst) { AccessKind::AtomicLoad } else { AccessKind::Load };
                if let Some(site) = self.access(inst, addr, kind) {
                    let size = self.size_of_value(inst);
                    self.actions.push(Action::Access { inst, addr_op: 0, site, kind, size });
                }
            }
            LLVMOpcode::LLVMStore => {
                let value = inst.operand(0).expect("store has a value");
                let addr = inst.operand(1).expect("store has an address");
                let kind = if ir::is_atomic_load_store(inst) { AccessKind::AtomicStore } else { AccessKind::Store };
                if let Some(site) = self.access(inst, addr, kind) {
                    let size = self.size_of_value(value);
                    self.actions.push(Action::Access { inst, addr_op: 1, site, kind, size });
                }
            }
            LLVMOpcode::LLVMAtomicRMW | LLVMOpcode::LLVMAtomicCmpXchg => {
                let kind = if op == LLVMOpcode::LLVMAtomicRMW { AccessKind::Rmw } else { AccessKind::CmpXchg };
                let addr = inst.operand(0).expect("atomic has an address");
                if let Some(site) = self.access(inst, addr, kind) {
                    let size = self.size_of_value(inst.operand(1).expect("atomic has a value"));
                    self.actions.push(Action::Access { inst, addr_op: 0, site, kind, size });
                }
            }
            LLVMOpcode::LLVMCall => self.plan_call(inst),
            _ => {}
        }
    }

    fn plan_call(&mut self, inst: Val) {
        let Some(callee) = inst.called_function() else { return };
        let name = callee.name();
        if name.starts_with("llvm.memcpy") || name.starts_with("llvm.memmove") || name.starts_with("llvm.memset") {
            let size = inst.operand(2).and_then(|v| v.const_int()).unwrap_or(0);
            let dst_addr = inst.operand(0).expect("mem intrinsic has a destination");
            let src_site = if name.starts_with("llvm.memset") {
                None
            } else {
                let src_addr = inst.operand(1).expect("memcpy has a source");
                self.access(inst, src_addr, AccessKind::Load)
            };
            let dst_site = self.access(inst, dst_addr, AccessKind::Store);
            if src_site.is_some() || dst_site.is_some() {
                self.actions.push(Action::MemIntrinsic { inst, src_site, dst_site, size });
            }
            return;
        }
        if let Some(call) = sv_comp::classify(&name, callee.is_function() && ir::has_body(callee)) {
            let site = self.add_site(inst, call.site_kind(), format!("call {name}"));
            self.actions.push(Action::Sv { inst, call, site });
            return;
        }
        // A direct call only: the callee operand is the function itself, so argument types match.
        let direct = inst.operand(inst.num_operands() - 1) == Some(callee);
        if let Some(route) = routed_call(&name) {
            if callee.is_function() && ir::has_body(callee) {
                // The program defines this function itself (its own allocator, say): leave it.
                return;
            }
            if direct {
                let site = self.add_site(inst, route.kind, format!("call {name}"));
                self.actions.push(Action::Route { inst, route, site });
            } else {
                self.skip(inst, route.kind, format!("call {name} through a cast: not routed"));
            }
            return;
        }
        if let Some(kind) = violation_call(&name) {
            let site = self.add_site(inst, SiteKind::Violation, format!("call {name}"));
            self.actions.push(Action::Violation { inst, kind, site });
        }
        if crate::known_calls::unsupported_call(&name) {
            let site = self.add_site(inst, SiteKind::Unsupported, format!("call {name}"));
            self.actions.push(Action::Unsupported { inst, site });
        }
    }
}

/// Instrument `module` in place. `source` names the module in errors and the site table.
pub fn instrument_module<'ctx>(context: &'ctx Context, module: &Module<'ctx>, source: &str) -> Result<PassOutput, PassError> {
    if module.get_function(CB_BEFORE).is_some() || module.get_global(THREAD_ACTIVE_FLAG).is_some() {
        return Err(PassError::AlreadyInstrumented(source.to_string()));
    }
    if let Some(detail) = crate::data_model::smaller_than_the_c_library(module) {
        return Err(PassError::DataModel { module: source.to_string(), detail });
    }
    let module_hash = {
        let mut h = StableHasher::default();
        h.write(source.as_bytes());
        h.write(module.write_bitcode_to_memory().as_slice());
        h.finish()
    };
    let tag = module_hash as u32;

    // Phase 1: analyse the untouched module and plan every rewrite.
    let mut planner = Planner {
        source: source.to_string(),
        sites: Vec::new(),
        report: Vec::new(),
        escape: EscapeAnalysis::default(),
        actions: Vec::new(),
        module,
    };
    for f in module.get_functions() {
        // A `main` that uses its third argument reads the environment whole.
        let envp_used = f.get_name().to_bytes() == b"main" && f.get_nth_param(2).is_some_and(|p| !Val(p.as_value_ref()).uses().is_empty());
        if let Some(first) = f.get_first_basic_block().and_then(|b| b.get_first_instruction()).filter(|_| envp_used) {
            planner.environ_read(Val(first.as_value_ref()), "main's environment argument");
        }
        for bb in f.get_basic_blocks() {
            for inst in bb.get_instructions() {
                planner.plan_instruction(Val(inst.as_value_ref()));
            }
        }
    }

    // Loops that may spin: watched by the runtime in EXPLORE (`spin_loops`). The writes the
    // runtime sees are the instrumented stores, atomics and memory intrinsics with a shared
    // destination.
    let visible: std::collections::HashSet<Val> = planner
        .actions
        .iter()
        .filter_map(|a| match *a {
            Action::Access { inst, kind, .. } if kind != AccessKind::Load && kind != AccessKind::AtomicLoad => Some(inst),
            Action::MemIntrinsic { inst, dst_site: Some(_), .. } => Some(inst),
            _ => None,
        })
        .collect();
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        for l in crate::spin_loops::find(Val(f.as_value_ref()), &visible) {
            let site = planner.add_site(l.head, SiteKind::SpinLoop, "spin loop".to_string());
            planner.actions.push(Action::Loop { inst: l.head, site, head: true, waits: l.waits });
            for e in l.entries {
                planner.actions.push(Action::Loop { inst: e, site, head: false, waits: l.waits });
            }
        }
    }

    // Phase 2: rewrite, with an instrumented twin for every function that can have one. A
    // loop's marks first: the instruction a header mark goes before (the header's first) may be
    // a call another action replaces (a routed `pthread_mutex_trylock`), which would leave the
    // mark's action with an erased instruction.
    planner.actions.sort_by_key(|a| !matches!(a, Action::Loop { .. }));
    let versioned = versioning::versionable_functions(module);
    let build_err = |detail: String| PassError::Build { module: source.to_string(), detail };
    if versioned.is_empty() {
        let rw = Rewriter::new(context, module, source, tag)?;
        for action in &planner.actions {
            rw.apply(action)?;
        }
    } else {
        let promotions = versioning::promote_locals(module);
        // Clone through bitcode, not CloneModule: a clone in the same context shares the
        // original's struct types, and the IR linker strips the names of source types it maps
        // away, corrupting the original. A parsed copy has its own types, as with llvm-link.
        let bitcode = module.write_bitcode_to_memory();
        let twins = Module::parse_bitcode_from_buffer(&bitcode, context)
            .map_err(|e| build_err(format!("cloning the module: {e}")))?;
        let map = versioning::instruction_map(module, &twins);
        let rw_twins = Rewriter::new(context, &twins, source, tag)?;
        let rw = Rewriter::new(context, module, source, tag)?;
        for action in &planner.actions {
            let in_twin = versioned.contains(&action.function());
            if in_twin {
                rw_twins.apply(&action.on(&map))?;
            }
            // The original keeps its plain body, with only what a free thread needs; functions
            // without a twin get everything.
            if action.needed_when_free() || !in_twin {
                rw.apply(action)?;
            }
        }
        drop(rw_twins);
        versioning::make_twins(&twins, &versioned);
        versioning::insert_dispatchers(context, module, &versioned, rw.flag).map_err(build_err)?;
        module.link_in_module(twins).map_err(|e| build_err(format!("linking the instrumented twins: {e}")))?;
        versioning::restore(module, promotions, &versioned);
    }
    let defines_main = wrap_main(context, module).map_err(|e| build_err(e.to_string()))?;
    keep_inline_definitions(module);

    let globals = embed_module_sites(context, module, module_hash, &planner.source, &planner.sites)
        .map_err(|detail| PassError::Build { module: source.to_string(), detail })?;
    if let Some(path) = std::env::var_os("IRS_DUMP_IR") {
        let _ = module.print_to_file(path);
    }
    module
        .verify()
        .map_err(|e| PassError::Verify { module: source.to_string(), detail: e.to_string() })?;
    Ok(PassOutput {
        sites: ModuleSites { module_hash, source: planner.source, sites: planner.sites, globals },
        report: planner.report,
        defines_main,
    })
}

struct Rewriter<'a, 'ctx> {
    context: &'ctx Context,
    module: &'a Module<'ctx>,
    builder: Builder<'ctx>,
    source: String,
    tag: u32,
    guard_before: FunctionValue<'ctx>,
    guard_after: FunctionValue<'ctx>,
    /// The thread-local fast-path flag.
    flag: GlobalValue<'ctx>,
}

impl<'a, 'ctx> Rewriter<'a, 'ctx> {
    fn err(&self, e: impl std::fmt::Display) -> PassError {
        PassError::Build { module: self.source.clone(), detail: e.to_string() }
    }

    fn new(context: &'ctx Context, module: &'a Module<'ctx>, source: &str, tag: u32) -> Result<Self, PassError> {
        let i8t = context.i8_type();
        let i32t = context.i32_type();
        let i64t = context.i64_type();
        let void = context.void_type();
        let i8p = i8t.ptr_type(AddressSpace::default());
        let err = |e: inkwell::builder::BuilderError| PassError::Build { module: source.to_string(), detail: e.to_string() };

        let flag = module.add_global(i8t, None, THREAD_ACTIVE_FLAG);
        flag.set_linkage(Linkage::External);
        flag.set_thread_local_mode(Some(ThreadLocalMode::InitialExecTLSModel));

        let before = module.add_function(CB_BEFORE, void.fn_type(&[i64t.into(), i8p.into(), i32t.into()], false), None);
        let after = module.add_function(CB_AFTER, void.fn_type(&[i64t.into()], false), None);

        let builder = context.create_builder();
        let guard_before = make_guard(context, module, &builder, flag, GUARD_BEFORE, before).map_err(err)?;
        let guard_after = make_guard(context, module, &builder, flag, GUARD_AFTER, after).map_err(err)?;
        Ok(Rewriter { context, module, builder, source: source.to_string(), tag, guard_before, guard_after, flag })
    }

    /// The flag-testing guard `guard` of the runtime callback `name` (`void name(i64 site)`),
    /// made on first use.
    fn guarded(&self, name: &str, guard: &str) -> Result<FunctionValue<'ctx>, PassError> {
        if let Some(g) = self.module.get_function(guard) {
            return Ok(g);
        }
        let ty = self.context.void_type().fn_type(&[self.context.i64_type().into()], false);
        let callee = self.module.get_function(name).unwrap_or_else(|| self.module.add_function(name, ty, None));
        make_guard(self.context, self.module, &self.builder, self.flag, guard, callee).map_err(|e| self.err(e))
    }

    fn site_const(&self, site: u32) -> BasicMetadataValueEnum<'ctx> {
        self.context.i64_type().const_int(SiteId::new(self.tag, site).0, false).into()
    }

    fn inst(&self, v: Val) -> InstructionValue<'ctx> {
        // SAFETY: `v` is an instruction of `self.module`, which outlives this call.
        unsafe { InstructionValue::new(v.raw()) }
    }

    fn call_at(&self, at: Val, f: FunctionValue<'ctx>, args: &[BasicMetadataValueEnum<'ctx>]) -> Result<Val, PassError> {
        let call = self.builder.build_call(f, args, "").map_err(|e| self.err(e))?;
        let v = Val(call.as_value_ref());
        ir::copy_debug_location(at, v);
        Ok(v)
    }

    fn as_i8_ptr(&self, addr: Val) -> Result<PointerValue<'ctx>, PassError> {
        // SAFETY: `addr` is a pointer-typed value of this module (an access's address operand).
        let p = unsafe { PointerValue::new(addr.raw()) };
        let i8p = self.context.i8_type().ptr_type(AddressSpace::default());
        self.builder.build_pointer_cast(p, i8p, "irs.addr").map_err(|e| self.err(e))
    }

    /// The callback before an access; `valued`: `inst` is the load, store, cmpxchg or atomicrmw
    /// itself (not a memory intrinsic), whose operands carry the values.
    fn before(&self, inst: Val, addr: Val, site: u32, kind: AccessKind, size: u64, valued: bool) -> Result<(), PassError> {
        let info = abi::encode_info(kind, size) as u64;
        let a = self.as_i8_ptr(addr)?;
        let mut args = vec![self.site_const(site), a.into(), self.context.i32_type().const_int(info, false).into()];
        let values = if valued { self.value_args(inst, kind)? } else { None };
        let guard = match values {
            Some(values) => {
                let (name, guard) = if values.len() == 1 { (abi::CB_BEFORE_STORE, GUARD_BEFORE_STORE) } else { (abi::CB_BEFORE_UPDATE, GUARD_BEFORE_UPDATE) };
                args.extend(values);
                let g = self.guarded_with(name, guard, args.len())?;
                // Making the guard moved the builder into it: back before the access.
                self.builder.position_before(&self.inst(inst));
                g
            }
            None => self.guard_before,
        };
        self.call_at(inst, guard, &args)?;
        Ok(())
    }

    /// The values the value model needs of an access (`shared_proto::value_model`), as `i64`s
    /// built before it: a store's value; a cmpxchg's expected and desired values; an
    /// exchange's, add's or subtract's operand and its `RMW_*` code. `None` for other accesses
    /// and values wider than 8 bytes or not scalar.
    fn value_args(&self, inst: Val, kind: AccessKind) -> Result<Option<Vec<BasicMetadataValueEnum<'ctx>>>, PassError> {
        let operand = |n| inst.operand(n).ok_or_else(|| self.err("an access without its operand"));
        let i64t = self.context.i64_type();
        Ok(match kind {
            AccessKind::Store | AccessKind::AtomicStore => self.as_i64(operand(0)?)?.map(|v| vec![v.into()]),
            AccessKind::CmpXchg => match (self.as_i64(operand(1)?)?, self.as_i64(operand(2)?)?) {
                (Some(e), Some(d)) => Some(vec![e.into(), d.into()]),
                _ => None,
            },
            AccessKind::Rmw => match (ir::rmw_op(inst), self.as_i64(operand(1)?)?) {
                (Some(op), Some(v)) => Some(vec![v.into(), i64t.const_int(op, false).into()]),
                _ => None,
            },
            _ => None,
        })
    }

    /// `v`'s bits as an `i64` (zero-extended), for a scalar of at most 8 bytes.
    fn as_i64(&self, v: Val) -> Result<Option<inkwell::values::IntValue<'ctx>>, PassError> {
        use inkwell::values::{FloatValue, IntValue};
        let i64t = self.context.i64_type();
        let b = &self.builder;
        let e = |x| self.err(x);
        Ok(Some(match ir::scalar(v.type_ref()) {
            // SAFETY (all three): `v` is a value of this module of the type just checked.
            Some(ir::Scalar::Int(64)) => unsafe { IntValue::new(v.raw()) },
            Some(ir::Scalar::Int(_)) => b.build_int_z_extend(unsafe { IntValue::new(v.raw()) }, i64t, "irs.v").map_err(e)?,
            Some(ir::Scalar::Ptr) => b.build_ptr_to_int(unsafe { PointerValue::new(v.raw()) }, i64t, "irs.v").map_err(e)?,
            Some(ir::Scalar::Float(bits)) => {
                let f = unsafe { FloatValue::new(v.raw()) };
                let int = if bits == 32 { self.context.i32_type() } else { i64t };
                let bitsv = b.build_bit_cast(f, int, "irs.v").map_err(e)?.into_int_value();
                b.build_int_z_extend_or_bit_cast(bitsv, i64t, "irs.v").map_err(e)?
            }
            None => return Ok(None),
        }))
    }

    /// The flag-testing guard `guard` of the runtime callback `name`, whose arguments are the
    /// site, the address, the info word and `n - 3` values (`i64`), made on first use.
    fn guarded_with(&self, name: &str, guard: &str, n: usize) -> Result<FunctionValue<'ctx>, PassError> {
        if let Some(g) = self.module.get_function(guard) {
            return Ok(g);
        }
        let (i64t, i32t) = (self.context.i64_type(), self.context.i32_type());
        let i8p = self.context.i8_type().ptr_type(AddressSpace::default());
        let mut params: Vec<BasicMetadataTypeEnum> = vec![i64t.into(), i8p.into(), i32t.into()];
        params.extend((3..n).map(|_| BasicMetadataTypeEnum::from(i64t)));
        let ty = self.context.void_type().fn_type(&params, false);
        let callee = self.module.get_function(name).unwrap_or_else(|| self.module.add_function(name, ty, None));
        make_guard(self.context, self.module, &self.builder, self.flag, guard, callee).map_err(|e| self.err(e))
    }

    fn apply(&self, action: &Action) -> Result<(), PassError> {
        match *action {
            Action::Access { inst, addr_op, site, kind, size } => {
                let i = self.inst(inst);
                self.builder.position_before(&i);
                let addr = inst.operand(addr_op).ok_or_else(|| self.err("access without address"))?;
                self.before(inst, addr, site, kind, size, true)?;
                let next = i.get_next_instruction().expect("an access is never a terminator");
                self.builder.position_before(&next);
                self.call_at(inst, self.guard_after, &[self.site_const(site)])?;
            }
            Action::MemIntrinsic { inst, src_site, dst_site, size } => {
                let i = self.inst(inst);
                self.builder.position_before(&i);
                let operand = |n| inst.operand(n).ok_or_else(|| self.err("memory intrinsic without address"));
                if let Some(s) = src_site {
                    self.before(inst, operand(1)?, s, AccessKind::Load, size, false)?;
                }
                if let Some(s) = dst_site {
                    self.before(inst, operand(0)?, s, AccessKind::Store, size, false)?;
                }
                let next = i.get_next_instruction().expect("a call is never a terminator");
                self.builder.position_before(&next);
                for s in src_site.iter().chain(dst_site.iter()) {
                    self.call_at(inst, self.guard_after, &[self.site_const(*s)])?;
                }
            }
            Action::Route { inst, route, site } => {
                let wrapper = route.wrapper;
                let callee = inst.called_function().expect("routed calls are direct");
                // SAFETY: `callee` is a function of this module.
                let callee = unsafe { FunctionValue::new(callee.raw()) }.expect("callee is a function");
                let ty = callee.get_type();
                let mut params: Vec<BasicMetadataTypeEnum> = ty.get_param_types();
                let fixed = params.len() as u32;
                // A variadic callee (`open`, `openat`): its one optional argument, the mode, is a
                // fixed `i32` of the wrapper, 0 when the call has none.
                let variadic = ty.is_var_arg();
                if variadic {
                    params.push(self.context.i32_type().into());
                }
                params.push(self.context.i64_type().into());
                let wrapper_ty = match ty.get_return_type() {
                    Some(r) => inkwell::types::BasicType::fn_type(&r, &params, false),
                    None => self.context.void_type().fn_type(&params, false),
                };
                let w = self.module.get_function(wrapper).unwrap_or_else(|| self.module.add_function(wrapper, wrapper_ty, None));
                let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
                let given = if variadic { inst.call_arg_count().min(fixed) } else { inst.call_arg_count() };
                for i in 0..given {
                    let op = self.inst(inst).get_operand(i).and_then(|o| o.value()).ok_or_else(|| self.err("call argument"))?;
                    args.push(op.into());
                }
                if variadic {
                    self.builder.position_before(&self.inst(inst));
                    let mode = match self.inst(inst).get_operand(fixed).and_then(|o| o.value()) {
                        Some(inkwell::values::BasicValueEnum::IntValue(v)) if inst.call_arg_count() > fixed => self
                            .builder
                            .build_int_cast(v, self.context.i32_type(), "irs.mode")
                            .map_err(|e| self.err(e))?,
                        _ => self.context.i32_type().const_zero(),
                    };
                    args.push(mode.into());
                }
                args.push(self.site_const(site));
                self.builder.position_before(&self.inst(inst));
                let new = self.call_at(inst, w, &args)?;
                ir::replace_and_erase(inst, new);
            }
            Action::Loop { inst, site, head, waits } => {
                let (name, guard) = match (head, waits) {
                    (true, false) => (abi::LOOP_HEAD, GUARD_LOOP_HEAD),
                    (true, true) => (abi::WAIT_LOOP_HEAD, GUARD_WAIT_LOOP_HEAD),
                    (false, _) => (abi::LOOP_ENTER, GUARD_LOOP_ENTER),
                };
                let f = self.guarded(name, guard)?;
                let at = if head {
                    // The top of the header, before anything inserted there since (an access's
                    // callbacks): the first instruction after the phi nodes, now.
                    let block = ir::Block::of_instruction(inst);
                    block.instructions().into_iter().find(|i| i.opcode() != Some(LLVMOpcode::LLVMPHI)).unwrap_or(inst)
                } else {
                    inst
                };
                self.builder.position_before(&self.inst(at));
                self.call_at(inst, f, &[self.site_const(site)])?;
            }
            Action::Violation { inst, kind, site } => {
                let i8p = self.context.i8_type().ptr_type(AddressSpace::default());
                let i32t = self.context.i32_type();
                let f = self.module.get_function(CB_VIOLATION).unwrap_or_else(|| {
                    let ty = self.context.void_type().fn_type(
                        &[self.context.i64_type().into(), i32t.into(), i8p.into(), i8p.into(), i32t.into(), i8p.into()],
                        false,
                    );
                    self.module.add_function(CB_VIOLATION, ty, None)
                });
                let i = self.inst(inst);
                self.builder.position_before(&i);
                let null = i8p.const_null();
                let mut args: Vec<BasicMetadataValueEnum> =
                    vec![self.site_const(site), i32t.const_int(abi::violation_code(kind) as u64, false).into()];
                if kind == ViolationKind::Assert && inst.call_arg_count() >= 4 {
                    // __assert_fail(assertion, file, line, function)
                    let op = |n| i.get_operand(n).and_then(|o| o.value());
                    match (op(0), op(1), op(2), op(3)) {
                        (Some(a), Some(f), Some(l), Some(func)) if l.is_int_value() && a.is_pointer_value() && f.is_pointer_value() && func.is_pointer_value() => {
                            let cast = |v: inkwell::values::BasicValueEnum<'ctx>| {
                                self.builder.build_pointer_cast(v.into_pointer_value(), i8p, "").map_err(|e| self.err(e))
                            };
                            let line = self.builder.build_int_cast(l.into_int_value(), i32t, "").map_err(|e| self.err(e))?;
                            let extra: [BasicMetadataValueEnum; 4] = [cast(a)?.into(), cast(f)?.into(), line.into(), cast(func)?.into()];
                            args.extend(extra);
                        }
                        _ => {
                            let extra: [BasicMetadataValueEnum; 4] = [null.into(), null.into(), i32t.const_zero().into(), null.into()];
                            args.extend(extra)
                        }
                    }
                } else {
                    let extra: [BasicMetadataValueEnum; 4] = [null.into(), null.into(), i32t.const_zero().into(), null.into()];
                    args.extend(extra);
                }
                self.call_at(inst, f, &args)?;
            }
            Action::Sv { inst, call, site } => self.apply_sv(inst, call, site)?,
            Action::Unsupported { inst, site } | Action::EnvironRead { inst, site } => {
                let hook = if matches!(action, Action::EnvironRead { .. }) { ENVIRON_HOOK } else { UNSUPPORTED_HOOK };
                let i64t = self.context.i64_type();
                let f = self.runtime_fn(hook, self.context.void_type().fn_type(&[i64t.into()], false));
                self.builder.position_before(&self.inst(inst));
                self.call_at(inst, f, &[self.site_const(site)])?;
            }
        }
        Ok(())
    }

    /// The runtime function `name` of type `ty`, declared once.
    fn runtime_fn(&self, name: &str, ty: inkwell::types::FunctionType<'ctx>) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| self.module.add_function(name, ty, None))
    }

    /// A call of the SV-COMP interface, routed (see `sv_comp`).
    fn apply_sv(&self, inst: Val, call: SvCall, site: u32) -> Result<(), PassError> {
        let (i32t, i64t) = (self.context.i32_type(), self.context.i64_type());
        let void = self.context.void_type();
        let i = self.inst(inst);
        let err = |e: inkwell::builder::BuilderError| self.err(e);
        self.builder.position_before(&i);
        match call {
            SvCall::Assert | SvCall::Assume => {
                let f = self.runtime_fn(if call == SvCall::Assert { sv_comp::ASSERT } else { sv_comp::ASSUME }, void.fn_type(&[i32t.into(), i64t.into()], false));
                // The condition as 0 or 1, whatever its type (a long's high bits count too).
                let cond = match i.get_operand(0).and_then(|o| o.value()) {
                    Some(inkwell::values::BasicValueEnum::IntValue(v)) => {
                        let nz = self.builder.build_int_compare(IntPredicate::NE, v, v.get_type().const_zero(), "irs.cond").map_err(err)?;
                        self.builder.build_int_z_extend(nz, i32t, "irs.cond").map_err(err)?
                    }
                    Some(inkwell::values::BasicValueEnum::PointerValue(p)) => {
                        let nz = self.builder.build_is_not_null(p, "irs.cond").map_err(err)?;
                        self.builder.build_int_z_extend(nz, i32t, "irs.cond").map_err(err)?
                    }
                    Some(inkwell::values::BasicValueEnum::FloatValue(v)) => {
                        let nz = self.builder.build_float_compare(inkwell::FloatPredicate::UNE, v, v.get_type().const_zero(), "irs.cond").map_err(err)?;
                        self.builder.build_int_z_extend(nz, i32t, "irs.cond").map_err(err)?
                    }
                    _ => i32t.const_int(1, false),
                };
                self.call_at(inst, f, &[cond.into(), self.site_const(site)])?;
                i.erase_from_basic_block();
            }
            SvCall::AtomicBegin | SvCall::AtomicEnd => {
                let f = self.runtime_fn(if call == SvCall::AtomicBegin { sv_comp::ATOMIC_BEGIN } else { sv_comp::ATOMIC_END }, void.fn_type(&[i64t.into()], false));
                self.call_at(inst, f, &[self.site_const(site)])?;
                i.erase_from_basic_block();
            }
            SvCall::AtomicCall => {
                let begin = self.runtime_fn(sv_comp::ATOMIC_BEGIN, void.fn_type(&[i64t.into()], false));
                let end = self.runtime_fn(sv_comp::ATOMIC_END, void.fn_type(&[i64t.into()], false));
                self.call_at(inst, begin, &[self.site_const(site)])?;
                let next = i.get_next_instruction().expect("a call is never a terminator");
                self.builder.position_before(&next);
                self.call_at(inst, end, &[self.site_const(site)])?;
            }
            SvCall::Nondet { .. } => {
                use inkwell::types::AnyTypeEnum;
                let f = self.runtime_fn(sv_comp::NONDET, i64t.fn_type(&[i64t.into(), i32t.into()], false));
                let ty = i.get_type();
                let code = match ty {
                    AnyTypeEnum::IntType(t) => sv_comp::nondet_type_code(call, Some(t.get_bit_width()), false),
                    AnyTypeEnum::PointerType(_) => sv_comp::nondet_type_code(call, None, true),
                    _ => sv_comp::nondet_type_code(call, None, false),
                };
                let v = self.call_at(inst, f, &[self.site_const(site), i32t.const_int(code as u64, false).into()])?;
                // SAFETY: `v` is the call just built, an i64-valued instruction of this module.
                let v = unsafe { inkwell::values::IntValue::new(v.raw()) };
                let converted: Option<inkwell::values::BasicValueEnum> = match ty {
                    AnyTypeEnum::IntType(t) if t.get_bit_width() == 64 => Some(v.into()),
                    AnyTypeEnum::IntType(t) => Some(self.builder.build_int_truncate(v, t, "irs.nondet").map_err(err)?.into()),
                    AnyTypeEnum::PointerType(t) => Some(self.builder.build_int_to_ptr(v, t, "irs.nondet").map_err(err)?.into()),
                    AnyTypeEnum::FloatType(t) => Some(self.builder.build_signed_int_to_float(v, t, "irs.nondet").map_err(err)?.into()),
                    _ => None,
                };
                match converted {
                    Some(c) => ir::replace_and_erase(inst, Val(c.as_value_ref())),
                    None => i.erase_from_basic_block(),
                }
            }
        }
        Ok(())
    }

}

/// A C99 `inline` function without `extern` is an inline definition only (`available_externally`
/// in the IR): the program must define it elsewhere, and a plain build gets away without when the
/// optimiser inlines every call. The instrumented program is optimised after the pass, with
/// calls it may not inline (SV-COMP's `inline void acquire_lock()` then fails to link): keep a
/// definition of each such function, merged with any other the program has (`linkonce_odr`).
fn keep_inline_definitions(module: &Module<'_>) {
    for f in module.get_functions() {
        if f.get_linkage() == Linkage::AvailableExternally && f.count_basic_blocks() > 0 {
            f.set_linkage(Linkage::LinkOnceODR);
        }
    }
}

/// Rename a defined `main` and put a `main` in front of it that starts the runtime.
fn wrap_main<'ctx>(context: &'ctx Context, module: &Module<'ctx>) -> Result<bool, inkwell::builder::BuilderError> {
    let Some(user_main) = module.get_function("main") else { return Ok(false) };
    if user_main.count_basic_blocks() == 0 {
        return Ok(false);
    }
    user_main.as_global_value().set_name(USER_MAIN);
    user_main.set_linkage(Linkage::Internal);
    let i32t = context.i32_type();
    let i8pp = context.i8_type().ptr_type(AddressSpace::default()).ptr_type(AddressSpace::default());
    let main_ty = i32t.fn_type(&[i32t.into(), i8pp.into(), i8pp.into()], false);
    let main_ptr = main_ty.ptr_type(AddressSpace::default());
    let start_ty = i32t.fn_type(&[i32t.into(), i8pp.into(), i8pp.into(), main_ptr.into()], false);
    let start = module.add_function(RUNTIME_START, start_ty, None);
    let main = module.add_function("main", main_ty, None);
    main.as_global_value().set_visibility(GlobalVisibility::Default);
    let entry = context.append_basic_block(main, "entry");
    let b = context.create_builder();
    b.position_at_end(entry);
    let params: Vec<BasicMetadataValueEnum> = main.get_param_iter().map(|p| p.into()).collect();
    let user = user_main.as_global_value().as_pointer_value().const_cast(main_ptr);
    let mut args = params;
    args.push(user.into());
    let code = b
        .build_call(start, &args, "code")
        ?
        .try_as_basic_value()
        .basic()
        .expect("__irs_start returns int");
    b.build_return(Some(&code))?;
    Ok(true)
}

/// An `alwaysinline` function `name` with `callee`'s type that calls `callee` only when the
/// calling thread's flag is set: what instrumented code calls, so that a free thread pays a
/// load and a branch.
fn make_guard<'ctx>(context: &'ctx Context, module: &Module<'ctx>, builder: &Builder<'ctx>, flag: GlobalValue<'ctx>, name: &str, callee: FunctionValue<'ctx>) -> Result<FunctionValue<'ctx>, inkwell::builder::BuilderError> {
    let always_inline = context.create_enum_attribute(Attribute::get_named_enum_kind_id("alwaysinline"), 0);
    let i8t = context.i8_type();
    let f = module.add_function(name, callee.get_type(), Some(Linkage::Internal));
    f.add_attribute(AttributeLoc::Function, always_inline);
    let entry = context.append_basic_block(f, "entry");
    let slow = context.append_basic_block(f, "active");
    let done = context.append_basic_block(f, "done");
    builder.position_at_end(entry);
    let v = builder.build_load(flag.as_pointer_value(), "irs.active")?;
    let on = builder.build_int_compare(IntPredicate::NE, v.into_int_value(), i8t.const_zero(), "irs.on")?;
    builder.build_conditional_branch(on, slow, done)?;
    builder.position_at_end(slow);
    let args: Vec<BasicMetadataValueEnum> = f.get_param_iter().map(|p| p.into()).collect();
    builder.build_call(callee, &args, "")?;
    builder.build_unconditional_branch(done)?;
    builder.position_at_end(done);
    builder.build_return(None)?;
    Ok(f)
}
