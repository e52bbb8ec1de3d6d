/* llvm_protocol.c — the IR builder helpers and tl_build(), which writes the tidal
 * protocol (runtime/tidal_abi.h, passes/tidal_code.c) around a kernel body at
 * IR level. */
#include "llvm_internal.h"
#include "tidal_abi.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ IR building */

LLVMValueRef tl_c32(irb *x, unsigned long long v) { return LLVMConstInt(x->i32, v, 0); }
LLVMValueRef tl_c64(irb *x, unsigned long long v) { return LLVMConstInt(x->i64, v, 0); }

static LLVMBasicBlockRef blk(irb *x, const char *name) { return LLVMAppendBasicBlockInContext(x->c, x->f, name); }
static void at(irb *x, LLVMBasicBlockRef b) { LLVMPositionBuilderAtEnd(x->b, b); }

static LLVMValueRef intr(irb *x, const char *name, LLVMValueRef *args, unsigned nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        fprintf(stderr, "tidal-opt: internal error: no intrinsic %s in this LLVM\n", name);
        exit(70);
    }
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(x->m, id, NULL, 0);
    LLVMTypeRef fty = LLVMIntrinsicGetType(x->c, id, NULL, 0);
    return LLVMBuildCall2(x->b, fty, decl, args, nargs, "");
}

static LLVMValueRef sreg(irb *x, const char *which) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", which);
    return intr(x, name, NULL, 0);
}

/* barrier.sync id (not .aligned: threads of a warp may arrive from different places) */
static void barrier(irb *x, unsigned id) {
    LLVMValueRef a = tl_c32(x, id);
    intr(x, "llvm.nvvm.barrier.cta.sync.all", &a, 1);
}

/* ptr addrspace(1) to ctl-or-slot + off */
static LLVMValueRef gptr(irb *x, LLVMValueRef addr64, unsigned long long off) {
    LLVMValueRef a = off ? LLVMBuildAdd(x->b, addr64, tl_c64(x, off), "") : addr64;
    return LLVMBuildIntToPtr(x->b, a, x->p1, "");
}

static LLVMValueRef ld(irb *x, LLVMTypeRef t, LLVMValueRef p, bool relaxed, const char *name) {
    LLVMValueRef l = LLVMBuildLoad2(x->b, t, p, name);
    LLVMSetAlignment(l, t == x->i64 ? 8 : 4);
    if (relaxed) {
        LLVMSetOrdering(l, LLVMAtomicOrderingMonotonic);
        LLVMSetAtomicSyncScopeID(l, x->dev);
    }
    return l;
}

static void st_relaxed(irb *x, LLVMValueRef v, LLVMValueRef p) {
    LLVMValueRef s = LLVMBuildStore(x->b, v, p);
    LLVMSetAlignment(s, LLVMTypeOf(v) == x->i64 ? 8 : 4);
    LLVMSetOrdering(s, LLVMAtomicOrderingMonotonic);
    LLVMSetAtomicSyncScopeID(s, x->dev);
}

static LLVMValueRef rmw_add(irb *x, LLVMValueRef p, LLVMValueRef v, LLVMAtomicOrdering o) {
    return LLVMBuildAtomicRMWSyncScope(x->b, LLVMAtomicRMWBinOpAdd, p, v, o, x->dev);
}

static LLVMValueRef icmp(irb *x, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildICmp(x->b, p, a, b, "");
}

static LLVMValueRef umin(irb *x, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(x->b, icmp(x, LLVMIntULT, a, b), a, b, "");
}
static LLVMValueRef umax(irb *x, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(x->b, icmp(x, LLVMIntUGT, a, b), a, b, "");
}

static LLVMValueRef zext64(irb *x, LLVMValueRef v) { return LLVMBuildZExt(x->b, v, x->i64, ""); }

/* (u64)a * b * c, instructions in source order */
static LLVMValueRef wide_product(irb *x, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef za = zext64(x, a);
    LLVMValueRef zb = zext64(x, b);
    LLVMValueRef p = LLVMBuildMul(x->b, za, zb, "");
    LLVMValueRef zc = zext64(x, c);
    return LLVMBuildMul(x->b, p, zc, "");
}

/* Bit %smid of the partition's mask, as i32 0/1 (MASK_TEST in tidal_code.c). */
static LLVMValueRef mask_test(irb *x, LLVMValueRef ctl, LLVMValueRef sm) {
    LLVMValueRef w = LLVMBuildLShr(x->b, sm, tl_c32(x, 6), "");
    LLVMValueRef a = LLVMBuildAdd(x->b, ctl, LLVMBuildMul(x->b, zext64(x, w), tl_c64(x, 8), ""), "");
    LLVMValueRef word = ld(x, x->i64, LLVMBuildIntToPtr(x->b, a, x->p1, ""), true, "tdl.mask");
    LLVMValueRef sh = zext64(x, LLVMBuildAnd(x->b, sm, tl_c32(x, 63), ""));
    LLVMValueRef bit = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, sh, ""), x->i32, "");
    return LLVMBuildAnd(x->b, bit, tl_c32(x, 1), "tdl.allowed");
}

static LLVMValueRef shared_slot(irb *x, LLVMValueRef odd) {
    LLVMValueRef i0 = tl_c32(x, 0), i1 = tl_c32(x, 1);
    LLVMValueRef idx = LLVMBuildSelect(x->b, odd, i1, i0, "");
    return LLVMBuildGEP2(x->b, x->i32, x->sh_gv, &idx, 1, "");
}

/* Moves instruction i, keeping its name, to the builder's position. */
static void move_named(irb *x, LLVMValueRef i) {
    size_t n;
    const char *nm = LLVMGetValueName2(i, &n);
    char *name = strndup(nm, n);
    if (!name) tl_oom();
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilderWithName(x->b, i, name);
    free(name);
}

/* Static allocas of block b go to the (new) entry block. */
static void hoist_allocas(irb *x, LLVMBasicBlockRef b, LLVMBasicBlockRef entry) {
    LLVMValueRef i = LLVMGetFirstInstruction(b);
    while (i) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        if (LLVMIsAAllocaInst(i) && LLVMIsAConstantInt(LLVMGetOperand(i, 0))) {
            at(x, entry);
            move_named(x, i);
        }
        i = next;
    }
}

/* ------------------------------------------------------------ barrier funnel */

/* A full CTA barrier: barrier.sync id without a thread count (how LLVM 22 reads
 * __syncthreads, llvm.nvvm.barrier0 and bar.sync id). */
static bool full_barrier_call(LLVMValueRef i) {
    if (!LLVMIsACallInst(i)) return false;
    LLVMValueRef c = tl_call_callee(i);
    return c && LLVMIsAFunction(c) &&
           (tl_name_is(c, "llvm.nvvm.barrier.cta.sync.aligned.all") || tl_name_is(c, "llvm.nvvm.barrier.cta.sync.all"));
}

/* PHIs of succ that name `from` as an incoming block name `to` instead (the C API
 * cannot set an incoming block, so such a PHI is rebuilt). */
static void retarget_phis(irb *x, LLVMBasicBlockRef succ, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
    for (LLVMValueRef p = LLVMGetFirstInstruction(succ); p && LLVMIsAPHINode(p);) {
        LLVMValueRef nextp = LLVMGetNextInstruction(p);
        unsigned n = LLVMCountIncoming(p);
        bool hit = false;
        for (unsigned k = 0; k < n; k++) hit |= LLVMGetIncomingBlock(p, k) == from;
        if (hit) {
            LLVMPositionBuilderBefore(x->b, p);
            LLVMValueRef q = LLVMBuildPhi(x->b, LLVMTypeOf(p), "");
            for (unsigned k = 0; k < n; k++) {
                LLVMValueRef v = LLVMGetIncomingValue(p, k);
                LLVMBasicBlockRef b = LLVMGetIncomingBlock(p, k);
                if (b == from) b = to;
                LLVMAddIncoming(q, &v, &b, 1);
            }
            size_t nl;
            const char *nm = LLVMGetValueName2(p, &nl);
            char *name = strndup(nm, nl);
            if (!name) tl_oom();
            LLVMReplaceAllUsesWith(p, q);
            LLVMInstructionEraseFromParent(p);
            LLVMSetValueName2(q, name, nl);
            free(name);
        }
        p = nextp;
    }
}

/* Before tl_build of a barrier-funnel kernel: every full barrier call ends its block,
 * followed only by a `br` to the rest (tl_build later puts the funnel in place of that
 * branch). Then reg2mem moves every value that crosses blocks into an alloca, so that
 * routing control through the funnel (which no longer lets a block dominate the code
 * after its barrier) keeps the IR valid; mem2reg after the rewrite builds SSA again. */
void tl_funnel_prepare(irb *x, LLVMValueRef f, LLVMTargetMachineRef tm, LLVMPassBuilderOptionsRef po) {
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            if (!full_barrier_call(i)) continue;
            LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(x->c, f, "tdl.after.barrier");
            LLVMMoveBasicBlockAfter(rest, b);
            LLVMPositionBuilderAtEnd(x->b, rest);
            for (LLVMValueRef j = LLVMGetNextInstruction(i); j;) {
                LLVMValueRef nj = LLVMGetNextInstruction(j);
                move_named(x, j);
                j = nj;
            }
            LLVMValueRef t = LLVMGetBasicBlockTerminator(rest);
            for (unsigned s = 0; t && s < LLVMGetNumSuccessors(t); s++) retarget_phis(x, LLVMGetSuccessor(t, s), b, rest);
            LLVMPositionBuilderAtEnd(x->b, b);
            LLVMBuildBr(x->b, rest);
            break; /* the loop goes on in `rest`, the next block */
        }
    LLVMErrorRef e = LLVMRunPassesOnFunction(f, "reg2mem", tm, po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        fprintf(stderr, "tidal-opt: internal error: reg2mem: %s\n", msg);
        LLVMDisposeErrorMessage(msg);
        exit(70);
    }
    /* reg2mem's marker instruction (a no-op bitcast) */
    for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(f)); i;) {
        LLVMValueRef ni = LLVMGetNextInstruction(i);
        if (tl_name_is(i, "reg2mem alloca point") && !LLVMGetFirstUse(i)) LLVMInstructionEraseFromParent(i);
        i = ni;
    }
}

body tl_body_of(LLVMValueRef f) {
    body bd = {0};
    bd.n = LLVMCountBasicBlocks(f);
    bd.blocks = calloc(bd.n + 1, sizeof *bd.blocks);
    if (!bd.blocks) tl_oom();
    LLVMGetBasicBlocks(f, bd.blocks);
    return bd;
}

/* Block `wait`: acquire-load the slot's joiner count; 0 → `out`, else nanosleep(500)
 * in `sleep` and back to `wait`. */
static void wait_no_joiners(irb *x, LLVMValueRef slot, LLVMBasicBlockRef wait, LLVMBasicBlockRef sleep,
                            LLVMBasicBlockRef out) {
    at(x, wait);
    LLVMValueRef n = LLVMBuildLoad2(x->b, x->i32, gptr(x, slot, TIDAL_SLOT_OFF_JOINERS), "");
    LLVMSetAlignment(n, 4);
    LLVMSetOrdering(n, LLVMAtomicOrderingAcquire);
    LLVMSetAtomicSyncScopeID(n, x->dev);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, n, tl_c32(x, 0)), out, sleep);
    at(x, sleep);
    LLVMValueRef ns = tl_c32(x, 500);
    intr(x, "llvm.nvvm.nanosleep", &ns, 1);
    LLVMBuildBr(x->b, wait);
}

/* Builds the protocol around the body of x->f. direct: the case-a copy's entry
 * (K) or NULL (the reshaped clone, whose last parameter is the tidal_launch). */
void tl_build(irb *x, body *bd, LLVMBasicBlockRef direct, const verdict *v) {
    LLVMValueRef launch = direct ? NULL : LLVMGetLastParam(x->f);
    LLVMBasicBlockRef entry = LLVMInsertBasicBlockInContext(x->c, bd->blocks[0], "tdl.entry");
    hoist_allocas(x, bd->blocks[0], entry);
    if (direct) hoist_allocas(x, direct, entry);

    /* the user's %ctaid/%nctaid reads and returns, before tidal adds its own */
    unsigned nsr = 0, nret = 0;
    for (unsigned k = 0; k < bd->n; k++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(bd->blocks[k]); i; i = LLVMGetNextInstruction(i)) {
            ptx_sreg r;
            if (LLVMIsACallInst(i) && tl_classify_callee(tl_call_callee(i), &r) == TL_CALL_SREG &&
                (r == PTX_SREG_CTAID || r == PTX_SREG_NCTAID))
                nsr++;
            if (LLVMIsAReturnInst(i)) nret++;
        }
    /* barrier funnel: the full barriers, each ending its block (tl_funnel_prepare) */
    bool funnel = v->exit_mode && !strcmp(v->exit_mode, "barrier-funnel");
    unsigned nbar = 0;
    if (funnel)
        for (unsigned k = 0; k < bd->n; k++)
            for (LLVMValueRef i = LLVMGetFirstInstruction(bd->blocks[k]); i; i = LLVMGetNextInstruction(i))
                nbar += full_barrier_call(i);
    LLVMValueRef *bars = calloc(nbar + 1, sizeof *bars);
    LLVMValueRef *srs = calloc(nsr + 1, sizeof *srs), *rets = calloc(nret + 1, sizeof *rets);
    int *srk = calloc(nsr + 1, sizeof *srk);
    if (!srs || !rets || !srk || !bars) tl_oom();
    nbar = 0;
    if (funnel)
        for (unsigned k = 0; k < bd->n; k++)
            for (LLVMValueRef i = LLVMGetFirstInstruction(bd->blocks[k]); i; i = LLVMGetNextInstruction(i))
                if (full_barrier_call(i)) bars[nbar++] = i;
    nsr = nret = 0;
    for (unsigned k = 0; k < bd->n; k++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(bd->blocks[k]); i; i = LLVMGetNextInstruction(i)) {
            ptx_sreg r;
            if (LLVMIsACallInst(i) && tl_classify_callee(tl_call_callee(i), &r) == TL_CALL_SREG &&
                (r == PTX_SREG_CTAID || r == PTX_SREG_NCTAID)) {
                size_t n;
                const char *nm = LLVMGetValueName2(tl_call_callee(i), &n);
                char comp = nm[n - 1];
                srk[nsr] = (r == PTX_SREG_NCTAID ? 3 : 0) + (comp == 'x' ? 0 : comp == 'y' ? 1 : 2);
                srs[nsr++] = i;
            }
            if (LLVMIsAReturnInst(i)) rets[nret++] = i;
        }

    /* protocol state (mem2reg makes it SSA) */
    at(x, entry);
    LLVMValueRef a_odd = LLVMBuildAlloca(x->b, x->i1, "tdl.odd.a");
    LLVMValueRef a_state = LLVMBuildAlloca(x->b, x->i32, "tdl.state.a");
    LLVMValueRef a_b0 = LLVMBuildAlloca(x->b, x->i32, "tdl.b0.a");
    LLVMValueRef a_b1 = LLVMBuildAlloca(x->b, x->i32, "tdl.b1.a");
    LLVMValueRef a_lin = LLVMBuildAlloca(x->b, x->i32, "tdl.lin.a");
    LLVMValueRef a_slot = LLVMBuildAlloca(x->b, x->i64, "tdl.slot.a");
    LLVMValueRef a_jc = LLVMBuildAlloca(x->b, x->i1, "tdl.jc.a"); /* counted in as a joiner */
    LLVMBuildStore(x->b, tl_c64(x, 0), a_slot);
    LLVMBuildStore(x->b, LLVMConstInt(x->i1, 0, 0), a_jc);
    /* %gridid is 64-bit; LLVM 22's llvm.nvvm.read.ptx.sreg.gridid returns i32 */
    LLVMTypeRef gty = LLVMFunctionType(x->i64, NULL, 0, 0);
    LLVMValueRef gasm = LLVMGetInlineAsm(gty, "mov.u64 $0, %gridid;", 20, "=l", 2, 0, 0, LLVMInlineAsmDialectATT, 0);

    LLVMBasicBlockRef common = blk(x, "tdl.common");
    LLVMValueRef ctl, nx, ny, nz, total, phys, chunk, key, jn;
    if (direct) {
        /* control block and logical grid (original launch) */
        ctl = LLVMBuildLoad2(x->b, x->i64, x->ctl_gv, "tdl.ctl");
        LLVMSetAlignment(ctl, 8);
        key = LLVMBuildCall2(x->b, gty, gasm, NULL, 0, "tdl.key");
        jn = LLVMConstInt(x->i1, 0, 0);
        nx = sreg(x, "nctaid.x");
        ny = sreg(x, "nctaid.y");
        nz = sreg(x, "nctaid.z");
        LLVMBasicBlockRef chk = blk(x, "tdl.grid"), setup = blk(x, "tdl.setup");
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ctl, tl_c64(x, 0)), direct, chk);
        at(x, chk);
        LLVMValueRef a0 = wide_product(x, nx, ny, nz);
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGT, a0, tl_c64(x, 2147483647)), direct, setup);
        at(x, setup);
        total = LLVMBuildTrunc(x->b, a0, x->i32, "tdl.total");
        phys = total;
        chunk = LLVMBuildLShr(x->b, total, tl_c32(x, 11), "");
        chunk = umax(x, umin(x, chunk, tl_c32(x, 32)), tl_c32(x, 1));
        LLVMBuildBr(x->b, common);
    } else {
        /* control block and logical grid (reshaped launch) */
        LLVMValueRef c0 = ld(x, x->i64, launch, false, "tdl.part");
        LLVMValueRef g = LLVMBuildLoad2(x->b, x->i64, x->ctl_gv, "");
        LLVMSetAlignment(g, 8);
        ctl = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, c0, tl_c64(x, 0)), g, c0, "tdl.ctl");
        LLVMBasicBlockRef trap = blk(x, "tdl.trap"), ok = blk(x, "tdl.grid"), setup = blk(x, "tdl.setup");
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ctl, tl_c64(x, 0)), trap, ok);
        at(x, trap);
        intr(x, "llvm.trap", NULL, 0);
        LLVMBuildUnreachable(x->b);
        at(x, ok);
        LLVMValueRef f[4];
        for (int k = 0; k < 4; k++) {
            LLVMValueRef off = tl_c64(x, 8 + 4 * (unsigned)k);
            f[k] = ld(x, x->i32, LLVMBuildGEP2(x->b, x->i8, launch, &off, 1, ""), false, "");
        }
        nx = f[0], ny = f[1], nz = f[2];
        LLVMValueRef a0 = wide_product(x, nx, ny, nz);
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGT, a0, tl_c64(x, 2147483647)), trap, setup);
        at(x, setup);
        total = LLVMBuildTrunc(x->b, a0, x->i32, "tdl.total");
        chunk = umax(x, f[3], tl_c32(x, 1));
        /* slot key: the runtime's, or this launch's %gridid; joining launches */
        LLVMValueRef koff = tl_c64(x, 24), foff = tl_c64(x, 32);
        LLVMValueRef k0 = ld(x, x->i64, LLVMBuildGEP2(x->b, x->i8, launch, &koff, 1, ""), false, "tdl.key.param");
        LLVMValueRef g0 = LLVMBuildCall2(x->b, gty, gasm, NULL, 0, "tdl.gridid");
        key = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, k0, tl_c64(x, 0)), g0, k0, "tdl.key");
        LLVMValueRef fl = ld(x, x->i32, LLVMBuildGEP2(x->b, x->i8, launch, &foff, 1, ""), false, "tdl.flags");
        jn = icmp(x, LLVMIntNE, LLVMBuildAnd(x->b, fl, tl_c32(x, TIDAL_LAUNCH_JOIN), ""), tl_c32(x, 0));
        LLVMSetValueName2(jn, "tdl.join", 8);
        LLVMValueRef px = sreg(x, "nctaid.x");
        LLVMValueRef py = sreg(x, "nctaid.y");
        LLVMValueRef pxy = LLVMBuildMul(x->b, px, py, "");
        LLVMValueRef pz = sreg(x, "nctaid.z");
        phys = LLVMBuildMul(x->b, pxy, pz, "tdl.phys");
        LLVMBuildBr(x->b, common);
    }

    /* find this launch's slot, gate on the SM mask */
    LLVMBasicBlockRef lead = blk(x, "tdl.lead"), probe = blk(x, "tdl.probe"), probe2 = blk(x, "tdl.probe.busy"),
                      cas = blk(x, "tdl.probe.cas"), pnext = blk(x, "tdl.probe.next"), sleep = blk(x, "tdl.sleep"),
                      found = blk(x, "tdl.found"), arrive = blk(x, "tdl.arrive"), guard0 = blk(x, "tdl.guard"),
                      guard1 = blk(x, "tdl.guard.work"), publish = blk(x, "tdl.publish"), claim = blk(x, "tdl.claim"),
                      claim_l = blk(x, "tdl.claim.leader"), claim_m = blk(x, "tdl.claim.mask"),
                      gone = blk(x, "tdl.claim.gone"), gone2 = blk(x, "tdl.claim.last"),
                      gone3 = blk(x, "tdl.claim.guard"), take = blk(x, "tdl.take"), take2 = blk(x, "tdl.take.some"),
                      smc = blk(x, "tdl.sm.count"), nosm = blk(x, "tdl.no.sm.count"), cnt = blk(x, "tdl.count"),
                      pubclaim = blk(x, "tdl.publish.claim"), claimed = blk(x, "tdl.claimed"),
                      claimed2 = blk(x, "tdl.chunk"), logical = blk(x, "tdl.logical"), ldiv = blk(x, "tdl.logical.nd"),
                      ljoin = blk(x, "tdl.body"), next = blk(x, "tdl.next"), next2 = blk(x, "tdl.next.block"),
                      depart = blk(x, "tdl.depart"), depart_l = blk(x, "tdl.depart.leader"),
                      dep2 = blk(x, "tdl.depart.shards"), reset = blk(x, "tdl.reset"),
                      rloop = blk(x, "tdl.reset.shard"), rdone = blk(x, "tdl.reset.done"), quit = blk(x, "tdl.exit");
    at(x, common);
    LLVMValueRef tx = sreg(x, "tid.x");
    LLVMValueRef ty = sreg(x, "tid.y");
    LLVMValueRef txy = LLVMBuildOr(x->b, tx, ty, "");
    LLVMValueRef tz = sreg(x, "tid.z");
    LLVMValueRef t = LLVMBuildOr(x->b, txy, tz, "");
    LLVMValueRef leader = icmp(x, LLVMIntEQ, t, tl_c32(x, 0));
    LLVMSetValueName2(leader, "tdl.leader", 10);
    LLVMValueRef sm = sreg(x, "smid");
    LLVMBuildStore(x->b, LLVMConstInt(x->i1, 0, 0), a_odd);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_state);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_b0);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_b1);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_lin);
    LLVMBuildCondBr(x->b, leader, lead, claimed);

    at(x, lead);
    LLVMValueRef gid = key;
    LLVMValueRef smask = ld(x, x->i32, gptr(x, ctl, TIDAL_PARTITION_OFF_SLOT_MASK), false, "tdl.slot.mask");
    LLVMBasicBlockRef own = blk(x, "tdl.own"), join = blk(x, "tdl.join"), jscan = blk(x, "tdl.join.scan"),
                      jnext = blk(x, "tdl.join.next"), jfound = blk(x, "tdl.join.found"),
                      jwork = blk(x, "tdl.join.work"), jmask = blk(x, "tdl.join.mask"), jin = blk(x, "tdl.join.in");
    LLVMBuildCondBr(x->b, jn, join, own);
    at(x, own);
    LLVMValueRef t0i = LLVMBuildAnd(x->b, LLVMBuildTrunc(x->b, gid, x->i32, ""), smask, "");
    LLVMBuildBr(x->b, probe);

    at(x, probe);
    LLVMValueRef t0 = LLVMBuildPhi(x->b, x->i32, "tdl.probe.i");
    LLVMValueRef t2 = LLVMBuildPhi(x->b, x->i32, "tdl.probe.left");
    LLVMValueRef slot = LLVMBuildAdd(
        x->b, ctl, LLVMBuildAdd(x->b, tl_c64(x, TIDAL_PARTITION_HEADER), LLVMBuildMul(x->b, zext64(x, t0), tl_c64(x, 1024), ""), ""),
        "tdl.slot");
    LLVMValueRef tag = ld(x, x->i64, gptr(x, slot, TIDAL_SLOT_OFF_TAG), true, "tdl.tag");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, tag, gid), found, probe2);
    at(x, probe2);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, tag, tl_c64(x, 0)), pnext, cas);
    at(x, cas);
    LLVMValueRef pair = LLVMBuildAtomicCmpXchgSyncScope(x->b, gptr(x, slot, 0), tl_c64(x, 0), gid,
                                                         LLVMAtomicOrderingAcquire, LLVMAtomicOrderingAcquire, x->dev);
    LLVMValueRef old = LLVMBuildExtractValue(x->b, pair, 0, "");
    LLVMBuildCondBr(x->b,
                    LLVMBuildOr(x->b, icmp(x, LLVMIntEQ, old, tl_c64(x, 0)), icmp(x, LLVMIntEQ, old, gid), ""),
                    found, pnext);
    at(x, pnext);
    LLVMValueRef t0n = LLVMBuildAnd(x->b, LLVMBuildAdd(x->b, t0, tl_c32(x, 1), ""), smask, "");
    LLVMValueRef t2n = LLVMBuildSub(x->b, t2, tl_c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, t2, tl_c32(x, 0)), probe, sleep);
    at(x, sleep); /* every slot busy (more running launches than slots): wait for one */
    {
        LLVMValueRef ns = tl_c32(x, 1000);
        intr(x, "llvm.nvvm.nanosleep", &ns, 1);
    }
    LLVMBuildBr(x->b, probe);
    {
        LLVMValueRef v0[3] = {t0i, t0n, t0n}, v2[3] = {smask, t2n, smask};
        LLVMBasicBlockRef from[3] = {own, pnext, sleep};
        LLVMAddIncoming(t0, v0, from, 3);
        LLVMAddIncoming(t2, v2, from, 3);
    }

    /* a joining launch adds workers to the running launch tagged key: find its
     * slot (a full scan: slots are freed out of probe order), count in, and work
     * only while it has work and this SM is allowed; never take a free slot */
    at(x, join);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_state);
    LLVMBuildBr(x->b, jscan);
    at(x, jscan);
    LLVMValueRef ji = LLVMBuildPhi(x->b, x->i32, "tdl.join.i");
    LLVMValueRef jslot = LLVMBuildAdd(
        x->b, ctl,
        LLVMBuildAdd(x->b, tl_c64(x, TIDAL_PARTITION_HEADER), LLVMBuildMul(x->b, zext64(x, ji), tl_c64(x, 1024), ""), ""),
        "tdl.join.slot");
    LLVMValueRef jtag = ld(x, x->i64, gptr(x, jslot, TIDAL_SLOT_OFF_TAG), true, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, jtag, gid), jfound, jnext);
    at(x, jnext);
    LLVMValueRef jin1 = LLVMBuildAdd(x->b, ji, tl_c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULE, jin1, smask), jscan, publish);
    {
        LLVMValueRef jv[2] = {tl_c32(x, 0), jin1};
        LLVMBasicBlockRef jf[2] = {join, jnext};
        LLVMAddIncoming(ji, jv, jf, 2);
    }
    at(x, jfound);
    LLVMBuildStore(x->b, jslot, a_slot);
    rmw_add(x, gptr(x, jslot, TIDAL_SLOT_OFF_JOINERS), tl_c32(x, 1), LLVMAtomicOrderingAcquireRelease);
    LLVMBuildStore(x->b, LLVMConstInt(x->i1, 1, 0), a_jc);
    LLVMValueRef jtag2 = LLVMBuildLoad2(x->b, x->i64, gptr(x, jslot, TIDAL_SLOT_OFF_TAG), "");
    LLVMSetAlignment(jtag2, 8);
    LLVMSetOrdering(jtag2, LLVMAtomicOrderingAcquire);
    LLVMSetAtomicSyncScopeID(jtag2, x->dev);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, jtag2, gid), publish, jwork);
    at(x, jwork);
    LLVMValueRef jnxt = ld(x, x->i32, gptr(x, jslot, TIDAL_SLOT_OFF_NEXT), true, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, jnxt, total), publish, jmask);
    at(x, jmask);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, mask_test(x, ctl, sm), tl_c32(x, 0)), publish, jin);
    at(x, jin);
    rmw_add(x, gptr(x, jslot, TIDAL_SLOT_OFF_PRESENCE), tl_c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, tl_c32(x, 1), a_state);
    LLVMBuildBr(x->b, publish);

    at(x, found);
    LLVMValueRef slotf = LLVMBuildPhi(x->b, x->i64, "tdl.slot.found");
    {
        LLVMValueRef sv[2] = {slot, slot};
        LLVMBasicBlockRef sf[2] = {probe, cas};
        LLVMAddIncoming(slotf, sv, sf, 2);
    }
    LLVMBuildStore(x->b, slotf, a_slot);
    LLVMValueRef allowed = mask_test(x, ctl, sm);
    LLVMValueRef nxt = ld(x, x->i32, gptr(x, slotf, TIDAL_SLOT_OFF_NEXT), true, "tdl.next");
    LLVMBuildStore(x->b, tl_c32(x, 0), a_state);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, nxt, total), publish, arrive);
    at(x, arrive);
    LLVMValueRef inc = LLVMBuildOr(x->b, zext64(x, allowed), tl_c64(x, 1ull << 32), "");
    LLVMValueRef a2 = rmw_add(x, gptr(x, slotf, TIDAL_SLOT_OFF_PRESENCE), inc, LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, tl_c32(x, 1), a_state);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, allowed, tl_c32(x, 0)), publish, guard0);
    at(x, guard0);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_state);
    LLVMValueRef arrived = LLVMBuildAdd(x->b, LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, a2, tl_c64(x, 32), ""), x->i32, ""),
                                        tl_c32(x, 1), "");
    LLVMValueRef working = LLVMBuildTrunc(x->b, a2, x->i32, "");
    LLVMBuildCondBr(x->b,
                    LLVMBuildOr(x->b, icmp(x, LLVMIntNE, arrived, phys), icmp(x, LLVMIntNE, working, tl_c32(x, 0)), ""),
                    publish, guard1);
    at(x, guard1); /* last block to arrive and nobody works: work anyway */
    rmw_add(x, gptr(x, slotf, TIDAL_SLOT_OFF_PRESENCE), tl_c64(x, 1), LLVMAtomicOrderingMonotonic);
    rmw_add(x, gptr(x, ctl, TIDAL_PARTITION_OFF_VIOLATIONS), tl_c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, tl_c32(x, 2), a_state);
    LLVMBuildBr(x->b, publish);

    /* a worker claims its first chunk at once; a block that leaves publishes an empty claim */
    at(x, publish);
    LLVMBuildStore(x->b, total, a_b0);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ld(x, x->i32, a_state, false, ""), tl_c32(x, 0)), pubclaim, take);

    at(x, claim);
    LLVMBuildCondBr(x->b, leader, claim_l, claimed);
    at(x, claim_l);
    LLVMBuildStore(x->b, total, a_b0);
    LLVMValueRef slotc = ld(x, x->i64, a_slot, false, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ld(x, x->i32, a_state, false, ""), tl_c32(x, 2)), take, claim_m);
    at(x, claim_m);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, mask_test(x, ctl, sm), tl_c32(x, 0)), take, gone);
    at(x, gone); /* SM taken away; the launch's last worker keeps going (liveness guard) */
    LLVMValueRef a2g = rmw_add(x, gptr(x, slotc, TIDAL_SLOT_OFF_PRESENCE), tl_c64(x, ~0ull), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, tl_c32(x, 0), a_state);
    LLVMValueRef wk = LLVMBuildTrunc(x->b, a2g, x->i32, "");
    LLVMValueRef ar = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, a2g, tl_c64(x, 32), ""), x->i32, "");
    /* a joiner's blocks are not the owner's physical blocks: only "last worker" counts */
    LLVMValueRef notlast = LLVMBuildAnd(x->b, LLVMBuildNot(x->b, jn, ""), icmp(x, LLVMIntNE, ar, phys), "");
    LLVMBuildCondBr(x->b, LLVMBuildOr(x->b, icmp(x, LLVMIntNE, wk, tl_c32(x, 1)), notlast, ""), pubclaim, gone2);
    at(x, gone2);
    LLVMValueRef nx2 = ld(x, x->i32, gptr(x, slotc, TIDAL_SLOT_OFF_NEXT), true, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, nx2, total), pubclaim, gone3);
    at(x, gone3);
    rmw_add(x, gptr(x, slotc, TIDAL_SLOT_OFF_PRESENCE), tl_c64(x, 1), LLVMAtomicOrderingMonotonic);
    rmw_add(x, gptr(x, ctl, TIDAL_PARTITION_OFF_VIOLATIONS), tl_c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, tl_c32(x, 2), a_state);
    LLVMBuildBr(x->b, take);

    at(x, take);
    LLVMValueRef slott = ld(x, x->i64, a_slot, false, "");
    LLVMValueRef b0 = rmw_add(x, gptr(x, slott, TIDAL_SLOT_OFF_NEXT), chunk, LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, b0, a_b0);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, b0, total), pubclaim, take2);
    at(x, take2);
    LLVMValueRef b1 = umin(x, LLVMBuildAdd(x->b, b0, chunk, ""), total);
    LLVMValueRef smb = ld(x, x->i64, gptr(x, ctl, TIDAL_PARTITION_OFF_SM_BLOCKS), false, "tdl.sm.blocks");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, smb, tl_c64(x, 0)), nosm, smc);
    at(x, smc);
    rmw_add(x, gptr(x, LLVMBuildAdd(x->b, smb, LLVMBuildMul(x->b, zext64(x, sm), tl_c64(x, 8), ""), ""), 0),
            zext64(x, LLVMBuildSub(x->b, b1, b0, "")), LLVMAtomicOrderingMonotonic);
    LLVMBuildBr(x->b, nosm);
    at(x, nosm);
    LLVMValueRef ec = ld(x, x->i64, gptr(x, ctl, TIDAL_PARTITION_OFF_EXEC_COUNT), false, "tdl.exec.count");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ec, tl_c64(x, 0)), pubclaim, cnt);
    at(x, cnt);
    LLVMValueRef ci = LLVMBuildPhi(x->b, x->i32, "tdl.count.i");
    rmw_add(x, gptr(x, LLVMBuildAdd(x->b, ec, LLVMBuildMul(x->b, zext64(x, ci), tl_c64(x, 4), ""), ""), 0), tl_c32(x, 1),
            LLVMAtomicOrderingMonotonic);
    LLVMValueRef cin = LLVMBuildAdd(x->b, ci, tl_c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULT, cin, b1), cnt, pubclaim);
    {
        LLVMValueRef cv[2] = {b0, cin};
        LLVMBasicBlockRef cf[2] = {nosm, cnt};
        LLVMAddIncoming(ci, cv, cf, 2);
    }

    at(x, pubclaim);
    LLVMBuildStore(x->b, ld(x, x->i32, a_b0, false, ""), shared_slot(x, ld(x, x->i1, a_odd, false, "")));
    LLVMBuildBr(x->b, claimed);

    at(x, claimed); /* the only barrier per claim; double-buffered shared slot */
    barrier(x, v->bar_id);
    LLVMValueRef odd = LLVMBuildLoad2(x->b, x->i1, a_odd, "tdl.odd");
    LLVMValueRef cb0 = ld(x, x->i32, shared_slot(x, odd), false, "tdl.b0");
    LLVMBuildStore(x->b, LLVMBuildNot(x->b, odd, ""), a_odd);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, cb0, total), depart, claimed2);
    at(x, claimed2);
    LLVMBuildStore(x->b, umin(x, LLVMBuildAdd(x->b, cb0, chunk, ""), total), a_b1);
    LLVMBuildStore(x->b, cb0, a_lin);
    LLVMBuildBr(x->b, logical);

    /* logical block ids; decomposed only when the grid is not 1-D */
    at(x, logical);
    LLVMValueRef lnx = nx, lny = ny, lnz = nz, ltot = total;
    if (!direct) {
        /* the clone re-reads the logical grid here rather than keep it live */
        LLVMValueRef f[3];
        for (int k = 0; k < 3; k++) {
            LLVMValueRef off = tl_c64(x, 8 + 4 * (unsigned)k);
            f[k] = ld(x, x->i32, LLVMBuildGEP2(x->b, x->i8, launch, &off, 1, ""), false, "");
        }
        lnx = f[0], lny = f[1], lnz = f[2];
        ltot = LLVMBuildMul(x->b, LLVMBuildMul(x->b, lnx, lny, ""), lnz, "");
    }
    LLVMValueRef lin = ld(x, x->i32, a_lin, false, "tdl.lin");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ltot, lnx), ljoin, ldiv);
    at(x, ldiv);
    LLVMValueRef dx = LLVMBuildURem(x->b, lin, lnx, "");
    LLVMValueRef q = LLVMBuildUDiv(x->b, lin, lnx, "");
    LLVMValueRef dy = LLVMBuildURem(x->b, q, lny, "");
    LLVMValueRef dz = LLVMBuildUDiv(x->b, q, lny, "");
    LLVMBuildBr(x->b, ljoin);
    at(x, ljoin);
    LLVMValueRef cx = LLVMBuildPhi(x->b, x->i32, "tdl.ctaid.x"), cy = LLVMBuildPhi(x->b, x->i32, "tdl.ctaid.y"),
                 cz = LLVMBuildPhi(x->b, x->i32, "tdl.ctaid.z");
    {
        LLVMBasicBlockRef lf[2] = {logical, ldiv};
        LLVMValueRef vx[2] = {lin, dx}, vy[2] = {tl_c32(x, 0), dy}, vz[2] = {tl_c32(x, 0), dz};
        LLVMAddIncoming(cx, vx, lf, 2);
        LLVMAddIncoming(cy, vy, lf, 2);
        LLVMAddIncoming(cz, vz, lf, 2);
    }
    LLVMBuildBr(x->b, bd->blocks[0]);
    /* the body sees the logical ids */
    LLVMValueRef repl[6] = {cx, cy, cz, lnx, lny, lnz};
    for (unsigned k = 0; k < nsr; k++) {
        LLVMReplaceAllUsesWith(srs[k], repl[srk[k]]);
        LLVMInstructionEraseFromParent(srs[k]);
    }
    /* ret → the next logical block; with the funnel, through it */
    LLVMBasicBlockRef exit_to = next;
    LLVMValueRef resume = NULL, none = LLVMConstInt(x->i32, (unsigned long long)-1, 1); /* resume: finished */
    if (funnel) {
        /* Threads that finished the logical block keep joining the barrier rounds of
         * those still running, so every barrier still sees the whole CTA; when no
         * thread waits at a barrier, the block is done. One barrier instruction for
         * every site (passes/tidal_rewrite.c, docs/design.md "Exits and barriers"). */
        LLVMBasicBlockRef fun = blk(x, "tdl.funnel"), disp = blk(x, "tdl.funnel.resume"),
                          sw = blk(x, "tdl.funnel.switch"), bad = blk(x, "tdl.funnel.bad"),
                          done = blk(x, "tdl.funnel.done");
        at(x, fun);
        resume = LLVMBuildPhi(x->b, x->i32, "tdl.resume");
        LLVMValueRef ra[2] = {tl_c32(x, v->bar_id), icmp(x, LLVMIntNE, resume, none)};
        LLVMValueRef any = intr(x, "llvm.nvvm.barrier.cta.red.or.all", ra, 2);
        LLVMBuildCondBr(x->b, any, disp, done);
        at(x, disp);
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, resume, none), fun, sw);
        LLVMAddIncoming(resume, &none, &disp, 1);
        at(x, sw);
        LLVMValueRef swi = LLVMBuildSwitch(x->b, resume, bad, nbar);
        at(x, bad);
        intr(x, "llvm.trap", NULL, 0);
        LLVMBuildUnreachable(x->b);
        at(x, done);
        LLVMBuildBr(x->b, next);
        /* barrier site k: instead of waiting there, wait in the funnel; come back to
         * the block after it */
        for (unsigned k = 0; k < nbar; k++) {
            LLVMBasicBlockRef site = LLVMGetInstructionParent(bars[k]);
            LLVMValueRef br = LLVMGetNextInstruction(bars[k]);
            if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || LLVMIsConditional(br)) {
                fprintf(stderr, "tidal-opt: internal error: a barrier the funnel takes does not end its block\n");
                exit(70);
            }
            LLVMBasicBlockRef after = LLVMGetSuccessor(br, 0);
            LLVMInstructionEraseFromParent(br);
            LLVMInstructionEraseFromParent(bars[k]);
            at(x, site);
            LLVMBuildBr(x->b, fun);
            LLVMValueRef kv = tl_c32(x, k);
            LLVMAddIncoming(resume, &kv, &site, 1);
            LLVMAddCase(swi, kv, after);
        }
        exit_to = fun;
    }
    for (unsigned k = 0; k < nret; k++) {
        LLVMBasicBlockRef rb = LLVMGetInstructionParent(rets[k]);
        LLVMPositionBuilderBefore(x->b, rets[k]);
        LLVMBuildBr(x->b, exit_to);
        LLVMInstructionEraseFromParent(rets[k]);
        if (resume) LLVMAddIncoming(resume, &none, &rb, 1);
    }
    free(srs);
    free(srk);
    free(rets);
    free(bars);

    at(x, next);
    LLVMValueRef ln = LLVMBuildAdd(x->b, ld(x, x->i32, a_lin, false, ""), tl_c32(x, 1), "");
    LLVMBuildStore(x->b, ln, a_lin);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULT, ln, ld(x, x->i32, a_b1, false, "")), next2, claim);
    at(x, next2);
    if (v->between) barrier(x, v->bar_id);
    LLVMBuildBr(x->b, logical);

    at(x, depart);
    LLVMBuildCondBr(x->b, leader, depart_l, quit);
    at(x, quit);
    LLVMBuildRetVoid(x->b);
    at(x, depart_l);
    LLVMBasicBlockRef jout = blk(x, "tdl.join.out"), own_out = blk(x, "tdl.depart.own");
    LLVMBuildCondBr(x->b, ld(x, x->i1, a_jc, false, ""), jout, own_out);
    at(x, jout);
    LLVMBuildAtomicRMWSyncScope(x->b, LLVMAtomicRMWBinOpSub,
                                gptr(x, ld(x, x->i64, a_slot, false, ""), TIDAL_SLOT_OFF_JOINERS), tl_c32(x, 1),
                                LLVMAtomicOrderingRelease, x->dev);
    LLVMBuildBr(x->b, own_out);
    at(x, own_out);
    LLVMBasicBlockRef shards = blk(x, "tdl.depart.count");
    LLVMBuildCondBr(x->b, jn, quit, shards);
    at(x, shards); /* count this block out in its shard (physical block id mod 32) */
    LLVMValueRef kz = sreg(x, "ctaid.z");
    LLVMValueRef gy = sreg(x, "nctaid.y");
    LLVMValueRef ky = sreg(x, "ctaid.y");
    LLVMValueRef pid = LLVMBuildAdd(x->b, LLVMBuildMul(x->b, kz, gy, ""), ky, "");
    LLVMValueRef gx = sreg(x, "nctaid.x");
    LLVMValueRef kx = sreg(x, "ctaid.x");
    pid = LLVMBuildAdd(x->b, LLVMBuildMul(x->b, pid, gx, ""), kx, "tdl.phys.id");
    LLVMValueRef shard = LLVMBuildAnd(x->b, pid, tl_c32(x, 31), "tdl.shard");
    LLVMValueRef slotd = ld(x, x->i64, a_slot, false, "");
    LLVMValueRef sa = LLVMBuildAdd(x->b, slotd, LLVMBuildMul(x->b, zext64(x, shard), tl_c64(x, 16), ""), "");
    LLVMValueRef dep = LLVMBuildAdd(
        x->b, rmw_add(x, gptr(x, sa, TIDAL_SLOT_OFF_SHARD), tl_c32(x, 1), LLVMAtomicOrderingAcquireRelease), tl_c32(x, 1), "");
    LLVMValueRef extra = LLVMBuildZExt(x->b, icmp(x, LLVMIntULT, shard, LLVMBuildAnd(x->b, phys, tl_c32(x, 31), "")),
                                       x->i32, "");
    LLVMValueRef expect = LLVMBuildAdd(x->b, LLVMBuildLShr(x->b, phys, tl_c32(x, 5), ""), extra, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, dep, expect), quit, dep2);
    at(x, dep2);
    LLVMValueRef done = LLVMBuildAdd(
        x->b, rmw_add(x, gptr(x, slotd, TIDAL_SLOT_OFF_SHARDS_DONE), tl_c32(x, 1), LLVMAtomicOrderingAcquireRelease),
        tl_c32(x, 1), "");
    LLVMBasicBlockRef wj = blk(x, "tdl.wait.joiners"), wjs = blk(x, "tdl.wait.joiners.sleep"),
                      jo = blk(x, "tdl.joiners.out"), wl = blk(x, "tdl.wait.late"), wls = blk(x, "tdl.wait.late.sleep");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, done, umin(x, phys, tl_c32(x, 32))), quit, wj);
    /* the launch's last block waits for joiners to leave, closes the slot to
     * late joiners, waits for those to count out, and resets the slot */
    wait_no_joiners(x, slotd, wj, wjs, jo);
    at(x, jo);
    st_relaxed(x, tl_c64(x, TIDAL_SLOT_CLOSING), gptr(x, slotd, TIDAL_SLOT_OFF_TAG));
    LLVMBuildFenceSyncScope(x->b, LLVMAtomicOrderingAcquireRelease, x->dev, "");
    LLVMBuildBr(x->b, wl);
    wait_no_joiners(x, slotd, wl, wls, reset);
    at(x, reset); /* the launch's last block resets its slot for the next launch */
    st_relaxed(x, tl_c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_PRESENCE));
    st_relaxed(x, tl_c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_NEXT));
    LLVMBuildBr(x->b, rloop);
    at(x, rloop);
    LLVMValueRef ri = LLVMBuildPhi(x->b, x->i32, "tdl.reset.i");
    st_relaxed(x, tl_c32(x, 0),
               gptr(x, LLVMBuildAdd(x->b, slotd, LLVMBuildMul(x->b, zext64(x, ri), tl_c64(x, 16), ""), ""),
                    TIDAL_SLOT_OFF_SHARD));
    LLVMValueRef rin = LLVMBuildAdd(x->b, ri, tl_c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULT, rin, tl_c32(x, TIDAL_SLOT_SHARDS)), rloop, rdone);
    {
        LLVMValueRef rv[2] = {tl_c32(x, 0), rin};
        LLVMBasicBlockRef rf[2] = {reset, rloop};
        LLVMAddIncoming(ri, rv, rf, 2);
    }
    at(x, rdone);
    LLVMBuildFenceSyncScope(x->b, LLVMAtomicOrderingAcquireRelease, x->dev, "");
    st_relaxed(x, tl_c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_TAG));
    LLVMBuildRetVoid(x->b);
}
