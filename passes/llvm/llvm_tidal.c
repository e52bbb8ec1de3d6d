/* llvm_tidal.c — the tidal transform at LLVM-IR level (tidal-opt --emit=llvm -p tidal).
 *
 * Safety is the PTX pass's: a copy of the module is lowered to PTX, tidal_run
 * decides per kernel, and only kernels it rewrites (and the IR rewrite can
 * take, see ir_checks) are rewritten here. The rewrite is the protocol of
 * passes/tidal_code.c written as IR (runtime/tidal_abi.h):
 *
 *   K                 keeps name and parameters: __tidal_ctl == 0 → a verbatim
 *                     copy of the original body (launch case a); else slot by
 *                     %gridid, %smid gate, claim loop over logical blocks with
 *                     llvm.nvvm.read.ptx.sreg.{ctaid,nctaid}.* replaced by the
 *                     logical ids, `ret` → the loop latch (case b)
 *   K__tidal_reshaped K's parameters + a byval tidal_launch (case c)
 *   @__tidal_ctl      weak addrspace(4) i64 0;  @__tidal_rewritten_v1 weak addrspace(1) i32 1
 *
 * The LLVM C API has no function cloning: LLVMCloneModule gives independent
 * copies of every function; their globals are replaced by the original's and
 * their blocks moved into the rewritten kernel (the case-a copy) or the clone.
 * Protocol state lives in allocas that mem2reg turns into SSA afterwards. */
#include "llvm_internal.h"
#include "tidal_abi.h"

#include <llvm-c/Transforms/PassBuilder.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The IR below builds tidal_launch and the slot offsets of this ABI version. */
_Static_assert(sizeof(tidal_launch) == 40 && offsetof(tidal_launch, grid) == 8 && offsetof(tidal_launch, key) == 24 &&
                   offsetof(tidal_launch, flags) == 32,
               "tidal_launch layout changed: update llvm_tidal.c");

/* ------------------------------------------------------------ the PTX verdict */

typedef struct verdict {
    bool ok;
    const char *reason, *detail, *exit_mode;
    unsigned between; /* barrier between logical blocks */
    unsigned bar_id;  /* tidal's barrier id */
} verdict;

/* tidal's barrier id in the rewritten PTX of entry `name`: the barrier after
 * "$tdl_claimed:" (tidal_code.c). */
static bool find_bar_id(const char *ptx, const char *name, unsigned *id) {
    size_t nl = strlen(name);
    for (const char *p = strstr(ptx, ".entry "); p; p = strstr(p + 1, ".entry ")) {
        const char *q = p + 7;
        if (strncmp(q, name, nl) || (q[nl] != '(' && q[nl] != '\n' && q[nl] != ' ')) continue;
        const char *c = strstr(q, "$tdl_claimed:\n\tbarrier.sync \t");
        if (!c) return false;
        return sscanf(c + strlen("$tdl_claimed:\n\tbarrier.sync \t"), "%u", id) == 1;
    }
    return false;
}

/* Lowers a copy of the module, runs the PTX pass on it, and fills v[i] for
 * kernel i. Also says whether the module has dynamic shared memory. */
static int ptx_verdicts(tidal_llvm_module *m, LLVMTargetMachineRef tm, verdict *v, bool *big_shared, char *err,
                        size_t errlen) {
    LLVMModuleRef copy = LLVMCloneModule(m->mod);
    size_t len;
    char *text = tl_emit_ptx(copy, tm, &len, err, errlen);
    LLVMDisposeModule(copy);
    if (!text) return -1;
    *big_shared = strstr(text, ".extern .shared") != NULL;
    ptx_diag d;
    ptx_module *pm = ptx_parse(m->name, text, len, &d);
    free(text);
    if (!pm) {
        tl_fmt(err, errlen, "the PTX that LLVM emitted does not parse (line %u: %s)", d.line, d.msg);
        return -1;
    }
    tidal_report rep;
    if (tidal_run(pm, NULL, &rep, &d)) {
        tl_fmt(err, errlen, "the PTX tidal pass failed on the lowered module (line %u: %s)", d.line, d.msg);
        ptx_module_free(pm);
        return -1;
    }
    size_t plen;
    char *out = ptx_print_to_string(pm, &plen);
    if (!out) tl_oom();
    for (unsigned i = 0; i < m->nkernels; i++) {
        const char *name = tl_value_name(m->kernels[i]);
        const tidal_kernel_report *k = NULL;
        for (unsigned j = 0; j < rep.nkernels; j++)
            if (!strcmp(rep.kernels[j].name, name)) k = &rep.kernels[j];
        verdict *x = &v[i];
        memset(x, 0, sizeof *x);
        if (!k) {
            x->reason = "ir-ptx-name";
            x->detail = tl_keepf(m, "no PTX .entry named '%s' in the lowered module", name);
        } else if (k->verdict != TIDAL_REWRITTEN) {
            x->reason = tl_keep(m, strdup(k->reason));
            x->detail = tl_keepf(m, "%s (in the PTX lowered from the IR)", k->detail);
        } else {
            x->ok = true;
            x->exit_mode = tl_keep(m, strdup(k->exit_mode));
            x->between = k->barrier_between_blocks;
            if (!find_bar_id(out, name, &x->bar_id)) {
                x->ok = false;
                x->reason = "ir-internal";
                x->detail = "tidal's barrier id not found in the rewritten PTX";
            }
        }
    }
    free(out);
    ptx_module_free(pm);
    return 0;
}

/* ------------------------------------------------------------ IR-level checks */

static bool asm_text_has(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k)) return true;
    return false;
}

/* What functions called from f (transitively; not f itself) do: read
 * %ctaid/%nctaid, or end the thread with llvm.nvvm.exit. The PTX pass checks
 * the same on the lowered module, but there a callee that LLVM declares before
 * the kernel and defines after it is matched to its body-less declaration (a
 * PTX pass bug: test/lit/llvm/ptx_forward_declared_callee.ll), so the IR path
 * checks its callees itself. */
typedef struct callee_facts {
    LLVMValueRef *seen;
    unsigned nseen, cap;
    const char *ctaid_in, *exit_in;
} callee_facts;

static void callees(callee_facts *cf, LLVMValueRef f, bool self) {
    for (unsigned i = 0; i < cf->nseen; i++)
        if (cf->seen[i] == f) return;
    if (cf->nseen == cf->cap) {
        cf->cap = cf->cap ? 2 * cf->cap : 16;
        cf->seen = realloc(cf->seen, cf->cap * sizeof *cf->seen);
        if (!cf->seen) tl_oom();
    }
    cf->seen[cf->nseen++] = f;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            if (LLVMGetInstructionOpcode(i) != LLVMCall && LLVMGetInstructionOpcode(i) != LLVMInvoke) continue;
            LLVMValueRef callee = tl_call_callee(i);
            ptx_sreg r;
            tl_callee_kind k = tl_classify_callee(callee, &r);
            if (!self && k == TL_CALL_SREG && (r == PTX_SREG_CTAID || r == PTX_SREG_NCTAID) && !cf->ctaid_in)
                cf->ctaid_in = tl_value_name(f);
            if (!self && k == TL_CALL_INTRINSIC && tl_name_is(callee, "llvm.nvvm.exit") && !cf->exit_in)
                cf->exit_in = tl_value_name(f);
            if (k == TL_CALL_FUNCTION && !LLVMIsDeclaration(callee)) callees(cf, callee, false);
            if (k == TL_CALL_INDIRECT) /* any function of the module */
                for (LLVMValueRef g = LLVMGetFirstFunction(LLVMGetGlobalParent(f)); g; g = LLVMGetNextFunction(g))
                    if (!LLVMIsDeclaration(g) && LLVMGetFunctionCallConv(g) != TL_PTX_KERNEL_CC) callees(cf, g, false);
        }
}

/* What the IR rewrite cannot take although the PTX pass can. */
static bool ir_checks(tidal_llvm_module *m, LLVMValueRef f, verdict *v) {
    callee_facts cf = {0};
    callees(&cf, f, true);
    free(cf.seen);
    if (cf.exit_in) {
        v->reason = "exit-in-callee";
        v->detail = tl_keepf(m, "calls a function that may execute 'exit' (llvm.nvvm.exit in @%s)", cf.exit_in);
        return false;
    }
    if (cf.ctaid_in) {
        v->reason = "callee-reads-ctaid";
        v->detail = tl_keepf(m, "calls a function that reads %%ctaid/%%nctaid (@%s)", cf.ctaid_in);
        return false;
    }
    if (!strcmp(v->exit_mode, "barrier-funnel")) {
        v->reason = "ir-barrier-funnel";
        v->detail = "divergent exits with full barriers need the barrier funnel, which only the PTX pass "
                    "implements (use --emit=ptx)";
        return false;
    }
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
        if (t && LLVMGetInstructionOpcode(t) == LLVMRet && LLVMGetNumOperands(t) != 0) {
            v->reason = "ir-unsupported";
            v->detail = "the kernel returns a value";
            return false;
        }
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            if (op == LLVMIndirectBr || op == LLVMCallBr) {
                v->reason = "ir-unsupported";
                v->detail = tl_keepf(m, "'%s' in the kernel", op == LLVMIndirectBr ? "indirectbr" : "callbr");
                return false;
            }
            if (op != LLVMCall) continue;
            LLVMValueRef callee = tl_call_callee(i);
            if (LLVMIsAInlineAsm(callee)) {
                size_t n;
                const char *s = LLVMGetInlineAsmAsmString(callee, &n);
                static const char *const bad[] = {"ctaid", "exit", "ret", "bar", "gridid", NULL};
                for (int k = 0; bad[k]; k++)
                    if (asm_text_has(s, n, bad[k])) {
                        v->reason = "ir-inline-asm";
                        v->detail = tl_keepf(m, "inline asm mentions '%s' (the IR rewrite does not edit asm text; "
                                                "use --emit=ptx)",
                                             bad[k]);
                        return false;
                    }
            } else if (LLVMIsAFunction(callee) && tl_name_is(callee, "llvm.nvvm.exit")) {
                v->reason = "ir-unsupported";
                v->detail = "calls llvm.nvvm.exit in the kernel (use --emit=ptx)";
                return false;
            }
        }
    }
    return true;
}

/* ------------------------------------------------------------ IR building */

typedef struct irb {
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMValueRef f;
    LLVMTypeRef i1, i8, i32, i64, vd, p0, p1, p3, p4;
    unsigned dev; /* syncscope("device") */
    LLVMValueRef ctl_gv, sh_gv;
} irb;

static LLVMValueRef c32(irb *x, unsigned long long v) { return LLVMConstInt(x->i32, v, 0); }
static LLVMValueRef c64(irb *x, unsigned long long v) { return LLVMConstInt(x->i64, v, 0); }

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
    LLVMValueRef a = c32(x, id);
    intr(x, "llvm.nvvm.barrier.cta.sync.all", &a, 1);
}

/* ptr addrspace(1) to ctl-or-slot + off */
static LLVMValueRef gptr(irb *x, LLVMValueRef addr64, unsigned long long off) {
    LLVMValueRef a = off ? LLVMBuildAdd(x->b, addr64, c64(x, off), "") : addr64;
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
    LLVMValueRef w = LLVMBuildLShr(x->b, sm, c32(x, 6), "");
    LLVMValueRef a = LLVMBuildAdd(x->b, ctl, LLVMBuildMul(x->b, zext64(x, w), c64(x, 8), ""), "");
    LLVMValueRef word = ld(x, x->i64, LLVMBuildIntToPtr(x->b, a, x->p1, ""), true, "tdl.mask");
    LLVMValueRef sh = zext64(x, LLVMBuildAnd(x->b, sm, c32(x, 63), ""));
    LLVMValueRef bit = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, word, sh, ""), x->i32, "");
    return LLVMBuildAnd(x->b, bit, c32(x, 1), "tdl.allowed");
}

static LLVMValueRef shared_slot(irb *x, LLVMValueRef odd) {
    LLVMValueRef i0 = c32(x, 0), i1 = c32(x, 1);
    LLVMValueRef idx = LLVMBuildSelect(x->b, odd, i1, i0, "");
    return LLVMBuildGEP2(x->b, x->i32, x->sh_gv, &idx, 1, "");
}

/* Static allocas of block b go to the (new) entry block. */
static void hoist_allocas(irb *x, LLVMBasicBlockRef b, LLVMBasicBlockRef entry) {
    LLVMValueRef i = LLVMGetFirstInstruction(b);
    while (i) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        if (LLVMIsAAllocaInst(i) && LLVMIsAConstantInt(LLVMGetOperand(i, 0))) {
            size_t n;
            const char *nm = LLVMGetValueName2(i, &n);
            char *name = strndup(nm, n);
            if (!name) tl_oom();
            LLVMInstructionRemoveFromParent(i);
            LLVMPositionBuilderAtEnd(x->b, entry);
            LLVMInsertIntoBuilderWithName(x->b, i, name);
            free(name);
        }
        i = next;
    }
}

typedef struct body {
    LLVMBasicBlockRef *blocks; /* the original body, entry first */
    unsigned n;
} body;

static body body_of(LLVMValueRef f) {
    body bd = {0};
    bd.n = LLVMCountBasicBlocks(f);
    bd.blocks = calloc(bd.n + 1, sizeof *bd.blocks);
    if (!bd.blocks) tl_oom();
    LLVMGetBasicBlocks(f, bd.blocks);
    return bd;
}

/* Builds the protocol around the body of x->f. direct: the case-a copy's entry
 * (K) or NULL (the reshaped clone, whose last parameter is the tidal_launch). */
static void build(irb *x, body *bd, LLVMBasicBlockRef direct, const verdict *v) {
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
    LLVMValueRef *srs = calloc(nsr + 1, sizeof *srs), *rets = calloc(nret + 1, sizeof *rets);
    int *srk = calloc(nsr + 1, sizeof *srk);
    if (!srs || !rets || !srk) tl_oom();
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
    LLVMBuildStore(x->b, c64(x, 0), a_slot);
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
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ctl, c64(x, 0)), direct, chk);
        at(x, chk);
        LLVMValueRef a0 = wide_product(x, nx, ny, nz);
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGT, a0, c64(x, 2147483647)), direct, setup);
        at(x, setup);
        total = LLVMBuildTrunc(x->b, a0, x->i32, "tdl.total");
        phys = total;
        chunk = LLVMBuildLShr(x->b, total, c32(x, 11), "");
        chunk = umax(x, umin(x, chunk, c32(x, 32)), c32(x, 1));
        LLVMBuildBr(x->b, common);
    } else {
        /* control block and logical grid (reshaped launch) */
        LLVMValueRef c0 = ld(x, x->i64, launch, false, "tdl.part");
        LLVMValueRef g = LLVMBuildLoad2(x->b, x->i64, x->ctl_gv, "");
        LLVMSetAlignment(g, 8);
        ctl = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, c0, c64(x, 0)), g, c0, "tdl.ctl");
        LLVMBasicBlockRef trap = blk(x, "tdl.trap"), ok = blk(x, "tdl.grid"), setup = blk(x, "tdl.setup");
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ctl, c64(x, 0)), trap, ok);
        at(x, trap);
        intr(x, "llvm.trap", NULL, 0);
        LLVMBuildUnreachable(x->b);
        at(x, ok);
        LLVMValueRef f[4];
        for (int k = 0; k < 4; k++) {
            LLVMValueRef off = c64(x, 8 + 4 * (unsigned)k);
            f[k] = ld(x, x->i32, LLVMBuildGEP2(x->b, x->i8, launch, &off, 1, ""), false, "");
        }
        nx = f[0], ny = f[1], nz = f[2];
        LLVMValueRef a0 = wide_product(x, nx, ny, nz);
        LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGT, a0, c64(x, 2147483647)), trap, setup);
        at(x, setup);
        total = LLVMBuildTrunc(x->b, a0, x->i32, "tdl.total");
        chunk = umax(x, f[3], c32(x, 1));
        /* slot key: the runtime's, or this launch's %gridid; joining launches */
        LLVMValueRef koff = c64(x, 24), foff = c64(x, 32);
        LLVMValueRef k0 = ld(x, x->i64, LLVMBuildGEP2(x->b, x->i8, launch, &koff, 1, ""), false, "tdl.key.param");
        LLVMValueRef g0 = LLVMBuildCall2(x->b, gty, gasm, NULL, 0, "tdl.gridid");
        key = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, k0, c64(x, 0)), g0, k0, "tdl.key");
        LLVMValueRef fl = ld(x, x->i32, LLVMBuildGEP2(x->b, x->i8, launch, &foff, 1, ""), false, "tdl.flags");
        jn = icmp(x, LLVMIntNE, LLVMBuildAnd(x->b, fl, c32(x, TIDAL_LAUNCH_JOIN), ""), c32(x, 0));
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
    LLVMValueRef leader = icmp(x, LLVMIntEQ, t, c32(x, 0));
    LLVMSetValueName2(leader, "tdl.leader", 10);
    LLVMValueRef sm = sreg(x, "smid");
    LLVMBuildStore(x->b, LLVMConstInt(x->i1, 0, 0), a_odd);
    LLVMBuildStore(x->b, c32(x, 0), a_state);
    LLVMBuildStore(x->b, c32(x, 0), a_b0);
    LLVMBuildStore(x->b, c32(x, 0), a_b1);
    LLVMBuildStore(x->b, c32(x, 0), a_lin);
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
        x->b, ctl, LLVMBuildAdd(x->b, c64(x, TIDAL_PARTITION_HEADER), LLVMBuildMul(x->b, zext64(x, t0), c64(x, 1024), ""), ""),
        "tdl.slot");
    LLVMValueRef tag = ld(x, x->i64, gptr(x, slot, TIDAL_SLOT_OFF_TAG), true, "tdl.tag");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, tag, gid), found, probe2);
    at(x, probe2);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, tag, c64(x, 0)), pnext, cas);
    at(x, cas);
    LLVMValueRef pair = LLVMBuildAtomicCmpXchgSyncScope(x->b, gptr(x, slot, 0), c64(x, 0), gid,
                                                         LLVMAtomicOrderingAcquire, LLVMAtomicOrderingAcquire, x->dev);
    LLVMValueRef old = LLVMBuildExtractValue(x->b, pair, 0, "");
    LLVMBuildCondBr(x->b,
                    LLVMBuildOr(x->b, icmp(x, LLVMIntEQ, old, c64(x, 0)), icmp(x, LLVMIntEQ, old, gid), ""),
                    found, pnext);
    at(x, pnext);
    LLVMValueRef t0n = LLVMBuildAnd(x->b, LLVMBuildAdd(x->b, t0, c32(x, 1), ""), smask, "");
    LLVMValueRef t2n = LLVMBuildSub(x->b, t2, c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, t2, c32(x, 0)), probe, sleep);
    at(x, sleep); /* every slot busy (more running launches than slots): wait for one */
    {
        LLVMValueRef ns = c32(x, 1000);
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
    LLVMBuildStore(x->b, c32(x, 0), a_state);
    LLVMBuildBr(x->b, jscan);
    at(x, jscan);
    LLVMValueRef ji = LLVMBuildPhi(x->b, x->i32, "tdl.join.i");
    LLVMValueRef jslot = LLVMBuildAdd(
        x->b, ctl,
        LLVMBuildAdd(x->b, c64(x, TIDAL_PARTITION_HEADER), LLVMBuildMul(x->b, zext64(x, ji), c64(x, 1024), ""), ""),
        "tdl.join.slot");
    LLVMValueRef jtag = ld(x, x->i64, gptr(x, jslot, TIDAL_SLOT_OFF_TAG), true, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, jtag, gid), jfound, jnext);
    at(x, jnext);
    LLVMValueRef jin1 = LLVMBuildAdd(x->b, ji, c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULE, jin1, smask), jscan, publish);
    {
        LLVMValueRef jv[2] = {c32(x, 0), jin1};
        LLVMBasicBlockRef jf[2] = {join, jnext};
        LLVMAddIncoming(ji, jv, jf, 2);
    }
    at(x, jfound);
    LLVMBuildStore(x->b, jslot, a_slot);
    rmw_add(x, gptr(x, jslot, TIDAL_SLOT_OFF_JOINERS), c32(x, 1), LLVMAtomicOrderingAcquireRelease);
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
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, mask_test(x, ctl, sm), c32(x, 0)), publish, jin);
    at(x, jin);
    rmw_add(x, gptr(x, jslot, TIDAL_SLOT_OFF_PRESENCE), c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, c32(x, 1), a_state);
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
    LLVMBuildStore(x->b, c32(x, 0), a_state);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, nxt, total), publish, arrive);
    at(x, arrive);
    LLVMValueRef inc = LLVMBuildOr(x->b, zext64(x, allowed), c64(x, 1ull << 32), "");
    LLVMValueRef a2 = rmw_add(x, gptr(x, slotf, TIDAL_SLOT_OFF_PRESENCE), inc, LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, c32(x, 1), a_state);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, allowed, c32(x, 0)), publish, guard0);
    at(x, guard0);
    LLVMBuildStore(x->b, c32(x, 0), a_state);
    LLVMValueRef arrived = LLVMBuildAdd(x->b, LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, a2, c64(x, 32), ""), x->i32, ""),
                                        c32(x, 1), "");
    LLVMValueRef working = LLVMBuildTrunc(x->b, a2, x->i32, "");
    LLVMBuildCondBr(x->b,
                    LLVMBuildOr(x->b, icmp(x, LLVMIntNE, arrived, phys), icmp(x, LLVMIntNE, working, c32(x, 0)), ""),
                    publish, guard1);
    at(x, guard1); /* last block to arrive and nobody works: work anyway */
    rmw_add(x, gptr(x, slotf, TIDAL_SLOT_OFF_PRESENCE), c64(x, 1), LLVMAtomicOrderingMonotonic);
    rmw_add(x, gptr(x, ctl, TIDAL_PARTITION_OFF_VIOLATIONS), c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, c32(x, 2), a_state);
    LLVMBuildBr(x->b, publish);

    /* a worker claims its first chunk at once; a block that leaves publishes an empty claim */
    at(x, publish);
    LLVMBuildStore(x->b, total, a_b0);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ld(x, x->i32, a_state, false, ""), c32(x, 0)), pubclaim, take);

    at(x, claim);
    LLVMBuildCondBr(x->b, leader, claim_l, claimed);
    at(x, claim_l);
    LLVMBuildStore(x->b, total, a_b0);
    LLVMValueRef slotc = ld(x, x->i64, a_slot, false, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ld(x, x->i32, a_state, false, ""), c32(x, 2)), take, claim_m);
    at(x, claim_m);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, mask_test(x, ctl, sm), c32(x, 0)), take, gone);
    at(x, gone); /* SM taken away; the launch's last worker keeps going (liveness guard) */
    LLVMValueRef a2g = rmw_add(x, gptr(x, slotc, TIDAL_SLOT_OFF_PRESENCE), c64(x, ~0ull), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, c32(x, 0), a_state);
    LLVMValueRef wk = LLVMBuildTrunc(x->b, a2g, x->i32, "");
    LLVMValueRef ar = LLVMBuildTrunc(x->b, LLVMBuildLShr(x->b, a2g, c64(x, 32), ""), x->i32, "");
    /* a joiner's blocks are not the owner's physical blocks: only "last worker" counts */
    LLVMValueRef notlast = LLVMBuildAnd(x->b, LLVMBuildNot(x->b, jn, ""), icmp(x, LLVMIntNE, ar, phys), "");
    LLVMBuildCondBr(x->b, LLVMBuildOr(x->b, icmp(x, LLVMIntNE, wk, c32(x, 1)), notlast, ""), pubclaim, gone2);
    at(x, gone2);
    LLVMValueRef nx2 = ld(x, x->i32, gptr(x, slotc, TIDAL_SLOT_OFF_NEXT), true, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, nx2, total), pubclaim, gone3);
    at(x, gone3);
    rmw_add(x, gptr(x, slotc, TIDAL_SLOT_OFF_PRESENCE), c64(x, 1), LLVMAtomicOrderingMonotonic);
    rmw_add(x, gptr(x, ctl, TIDAL_PARTITION_OFF_VIOLATIONS), c64(x, 1), LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, c32(x, 2), a_state);
    LLVMBuildBr(x->b, take);

    at(x, take);
    LLVMValueRef slott = ld(x, x->i64, a_slot, false, "");
    LLVMValueRef b0 = rmw_add(x, gptr(x, slott, TIDAL_SLOT_OFF_NEXT), chunk, LLVMAtomicOrderingMonotonic);
    LLVMBuildStore(x->b, b0, a_b0);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, b0, total), pubclaim, take2);
    at(x, take2);
    LLVMValueRef b1 = umin(x, LLVMBuildAdd(x->b, b0, chunk, ""), total);
    LLVMValueRef smb = ld(x, x->i64, gptr(x, ctl, TIDAL_PARTITION_OFF_SM_BLOCKS), false, "tdl.sm.blocks");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, smb, c64(x, 0)), nosm, smc);
    at(x, smc);
    rmw_add(x, gptr(x, LLVMBuildAdd(x->b, smb, LLVMBuildMul(x->b, zext64(x, sm), c64(x, 8), ""), ""), 0),
            zext64(x, LLVMBuildSub(x->b, b1, b0, "")), LLVMAtomicOrderingMonotonic);
    LLVMBuildBr(x->b, nosm);
    at(x, nosm);
    LLVMValueRef ec = ld(x, x->i64, gptr(x, ctl, TIDAL_PARTITION_OFF_EXEC_COUNT), false, "tdl.exec.count");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ec, c64(x, 0)), pubclaim, cnt);
    at(x, cnt);
    LLVMValueRef ci = LLVMBuildPhi(x->b, x->i32, "tdl.count.i");
    rmw_add(x, gptr(x, LLVMBuildAdd(x->b, ec, LLVMBuildMul(x->b, zext64(x, ci), c64(x, 4), ""), ""), 0), c32(x, 1),
            LLVMAtomicOrderingMonotonic);
    LLVMValueRef cin = LLVMBuildAdd(x->b, ci, c32(x, 1), "");
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
            LLVMValueRef off = c64(x, 8 + 4 * (unsigned)k);
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
        LLVMValueRef vx[2] = {lin, dx}, vy[2] = {c32(x, 0), dy}, vz[2] = {c32(x, 0), dz};
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
    /* ret → the next logical block */
    for (unsigned k = 0; k < nret; k++) {
        LLVMPositionBuilderBefore(x->b, rets[k]);
        LLVMBuildBr(x->b, next);
        LLVMInstructionEraseFromParent(rets[k]);
    }
    free(srs);
    free(srk);
    free(rets);

    at(x, next);
    LLVMValueRef ln = LLVMBuildAdd(x->b, ld(x, x->i32, a_lin, false, ""), c32(x, 1), "");
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
                                gptr(x, ld(x, x->i64, a_slot, false, ""), TIDAL_SLOT_OFF_JOINERS), c32(x, 1),
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
    LLVMValueRef shard = LLVMBuildAnd(x->b, pid, c32(x, 31), "tdl.shard");
    LLVMValueRef slotd = ld(x, x->i64, a_slot, false, "");
    LLVMValueRef sa = LLVMBuildAdd(x->b, slotd, LLVMBuildMul(x->b, zext64(x, shard), c64(x, 16), ""), "");
    LLVMValueRef dep = LLVMBuildAdd(
        x->b, rmw_add(x, gptr(x, sa, TIDAL_SLOT_OFF_SHARD), c32(x, 1), LLVMAtomicOrderingAcquireRelease), c32(x, 1), "");
    LLVMValueRef extra = LLVMBuildZExt(x->b, icmp(x, LLVMIntULT, shard, LLVMBuildAnd(x->b, phys, c32(x, 31), "")),
                                       x->i32, "");
    LLVMValueRef expect = LLVMBuildAdd(x->b, LLVMBuildLShr(x->b, phys, c32(x, 5), ""), extra, "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, dep, expect), quit, dep2);
    at(x, dep2);
    LLVMValueRef done = LLVMBuildAdd(
        x->b, rmw_add(x, gptr(x, slotd, TIDAL_SLOT_OFF_SHARDS_DONE), c32(x, 1), LLVMAtomicOrderingAcquireRelease),
        c32(x, 1), "");
    LLVMBasicBlockRef wj = blk(x, "tdl.wait.joiners"), wjs = blk(x, "tdl.wait.joiners.sleep"),
                      jo = blk(x, "tdl.joiners.out"), wl = blk(x, "tdl.wait.late"), wls = blk(x, "tdl.wait.late.sleep");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntNE, done, umin(x, phys, c32(x, 32))), quit, wj);
    /* the launch's last block waits for joiners to leave, closes the slot to
     * late joiners, waits for those to count out, and resets the slot */
    LLVMValueRef half = c32(x, 500);
    at(x, wj);
    LLVMValueRef nj = LLVMBuildLoad2(x->b, x->i32, gptr(x, slotd, TIDAL_SLOT_OFF_JOINERS), "");
    LLVMSetAlignment(nj, 4);
    LLVMSetOrdering(nj, LLVMAtomicOrderingAcquire);
    LLVMSetAtomicSyncScopeID(nj, x->dev);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, nj, c32(x, 0)), jo, wjs);
    at(x, wjs);
    intr(x, "llvm.nvvm.nanosleep", &half, 1);
    LLVMBuildBr(x->b, wj);
    at(x, jo);
    st_relaxed(x, c64(x, TIDAL_SLOT_CLOSING), gptr(x, slotd, TIDAL_SLOT_OFF_TAG));
    LLVMBuildFenceSyncScope(x->b, LLVMAtomicOrderingAcquireRelease, x->dev, "");
    LLVMBuildBr(x->b, wl);
    at(x, wl);
    LLVMValueRef nl = LLVMBuildLoad2(x->b, x->i32, gptr(x, slotd, TIDAL_SLOT_OFF_JOINERS), "");
    LLVMSetAlignment(nl, 4);
    LLVMSetOrdering(nl, LLVMAtomicOrderingAcquire);
    LLVMSetAtomicSyncScopeID(nl, x->dev);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, nl, c32(x, 0)), reset, wls);
    at(x, wls);
    intr(x, "llvm.nvvm.nanosleep", &half, 1);
    LLVMBuildBr(x->b, wl);
    at(x, reset); /* the launch's last block resets its slot for the next launch */
    st_relaxed(x, c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_PRESENCE));
    st_relaxed(x, c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_NEXT));
    LLVMBuildBr(x->b, rloop);
    at(x, rloop);
    LLVMValueRef ri = LLVMBuildPhi(x->b, x->i32, "tdl.reset.i");
    st_relaxed(x, c32(x, 0),
               gptr(x, LLVMBuildAdd(x->b, slotd, LLVMBuildMul(x->b, zext64(x, ri), c64(x, 16), ""), ""),
                    TIDAL_SLOT_OFF_SHARD));
    LLVMValueRef rin = LLVMBuildAdd(x->b, ri, c32(x, 1), "");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULT, rin, c32(x, TIDAL_SLOT_SHARDS)), rloop, rdone);
    {
        LLVMValueRef rv[2] = {c32(x, 0), rin};
        LLVMBasicBlockRef rf[2] = {reset, rloop};
        LLVMAddIncoming(ri, rv, rf, 2);
    }
    at(x, rdone);
    LLVMBuildFenceSyncScope(x->b, LLVMAtomicOrderingAcquireRelease, x->dev, "");
    st_relaxed(x, c64(x, 0), gptr(x, slotd, TIDAL_SLOT_OFF_TAG));
    LLVMBuildRetVoid(x->b);
    (void)claim_l;
}

/* ------------------------------------------------------------ cloning */

/* Replaces every global of `clone` (a LLVMCloneModule of `orig`, same order)
 * with the original one, so blocks moved over refer to the original module. */
static void map_globals(LLVMModuleRef clone, LLVMModuleRef orig) {
    for (LLVMValueRef a = LLVMGetFirstGlobal(clone), b = LLVMGetFirstGlobal(orig); a && b;
         a = LLVMGetNextGlobal(a), b = LLVMGetNextGlobal(b))
        LLVMReplaceAllUsesWith(a, b);
    for (LLVMValueRef a = LLVMGetFirstFunction(clone), b = LLVMGetFirstFunction(orig); a && b;
         a = LLVMGetNextFunction(a), b = LLVMGetNextFunction(b))
        LLVMReplaceAllUsesWith(a, b);
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(clone), b = LLVMGetFirstGlobalAlias(orig); a && b;
         a = LLVMGetNextGlobalAlias(a), b = LLVMGetNextGlobalAlias(b))
        LLVMReplaceAllUsesWith(a, b);
    for (LLVMValueRef a = LLVMGetFirstGlobalIFunc(clone), b = LLVMGetFirstGlobalIFunc(orig); a && b;
         a = LLVMGetNextGlobalIFunc(a), b = LLVMGetNextGlobalIFunc(b))
        LLVMReplaceAllUsesWith(a, b);
}

static LLVMValueRef nth_function(LLVMModuleRef m, unsigned idx) {
    LLVMValueRef f = LLVMGetFirstFunction(m);
    for (unsigned i = 0; f && i < idx; i++) f = LLVMGetNextFunction(f);
    return f;
}

/* Moves all blocks of `from` to the end of `to`; `from`'s first n arguments
 * become `to`'s. Returns the first moved block. */
static LLVMBasicBlockRef move_body(LLVMValueRef from, LLVMValueRef to, unsigned nparams) {
    for (unsigned i = 0; i < nparams; i++) LLVMReplaceAllUsesWith(LLVMGetParam(from, i), LLVMGetParam(to, i));
    LLVMBasicBlockRef first = LLVMGetFirstBasicBlock(from);
    LLVMBasicBlockRef b;
    while ((b = LLVMGetFirstBasicBlock(from))) {
        LLVMRemoveBasicBlockFromParent(b);
        LLVMAppendExistingBasicBlock(to, b);
    }
    return first;
}

/* Function attributes that the protocol makes false (it loops, synchronises
 * and touches memory outside the arguments). */
static void drop_wrong_attrs(LLVMValueRef f) {
    static const char *const kinds[] = {"memory", "nosync", "willreturn", "mustprogress", "readnone",
                                        "readonly", "writeonly", "argmemonly", "nofree", NULL};
    for (int i = 0; kinds[i]; i++) {
        unsigned k = LLVMGetEnumAttributeKindForName(kinds[i], strlen(kinds[i]));
        if (k) LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, k);
    }
}

static void copy_attrs(LLVMValueRef from, LLVMValueRef to, LLVMAttributeIndex idx) {
    unsigned n = LLVMGetAttributeCountAtIndex(from, idx);
    if (!n) return;
    LLVMAttributeRef *a = calloc(n, sizeof *a);
    if (!a) tl_oom();
    LLVMGetAttributesAtIndex(from, idx, a);
    for (unsigned i = 0; i < n; i++) LLVMAddAttributeAtIndex(to, idx, a[i]);
    free(a);
}

/* K__tidal_reshaped: K's type plus a trailing `ptr byval(tidal_launch) align 8`. */
static LLVMValueRef make_clone_decl(irb *x, LLVMValueRef k, LLVMTypeRef launch_ty) {
    LLVMTypeRef fty = LLVMGlobalGetValueType(k);
    unsigned np = LLVMCountParamTypes(fty);
    LLVMTypeRef *pt = calloc(np + 1, sizeof *pt);
    if (!pt) tl_oom();
    LLVMGetParamTypes(fty, pt);
    pt[np] = x->p0;
    LLVMTypeRef nty = LLVMFunctionType(LLVMGetReturnType(fty), pt, np + 1, LLVMIsFunctionVarArg(fty));
    free(pt);
    size_t nl;
    const char *kn = LLVMGetValueName2(k, &nl);
    size_t sl = strlen(TIDAL_RESHAPED_SUFFIX);
    char *name = malloc(nl + sl + 1);
    if (!name) tl_oom();
    memcpy(name, kn, nl);
    memcpy(name + nl, TIDAL_RESHAPED_SUFFIX, sl + 1);
    LLVMValueRef r = LLVMAddFunction(x->m, name, nty);
    free(name);
    LLVMSetFunctionCallConv(r, LLVMGetFunctionCallConv(k));
    LLVMSetLinkage(r, LLVMGetLinkage(k));
    LLVMSetVisibility(r, LLVMGetVisibility(k));
    copy_attrs(k, r, LLVMAttributeFunctionIndex);
    copy_attrs(k, r, LLVMAttributeReturnIndex);
    for (unsigned i = 0; i < np; i++) {
        copy_attrs(k, r, i + 1);
        size_t pl;
        const char *pn = LLVMGetValueName2(LLVMGetParam(k, i), &pl);
        LLVMSetValueName2(LLVMGetParam(r, i), pn, pl);
    }
    unsigned kbyval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned kalign = LLVMGetEnumAttributeKindForName("align", 5);
    unsigned knoundef = LLVMGetEnumAttributeKindForName("noundef", 7);
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateTypeAttribute(x->c, kbyval, launch_ty));
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateEnumAttribute(x->c, kalign, 8));
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateEnumAttribute(x->c, knoundef, 0));
    LLVMSetValueName2(LLVMGetParam(r, np), "__tidal_launch", 14);
    return r;
}

/* ------------------------------------------------------------ report lines */

static unsigned define_line(tidal_llvm_module *m, const char *name) {
    if (!m->src) return 0;
    size_t nl = strlen(name);
    unsigned line = 1;
    for (const char *p = m->src; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 7 && !memcmp(p, "define ", 7))
            for (size_t i = 0; i + nl + 2 <= len; i++)
                if (p[i] == '@' && !memcmp(p + i + 1, name, nl) && p[i + 1 + nl] == '(') return line;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* ------------------------------------------------------------ the pass */

int tidal_llvm_tidal(tidal_llvm_module *m, const char *arch, tidal_report *rep, char *err, size_t errlen) {
    memset(rep, 0, sizeof *rep);
    rep->file = m->name;
    free(m->report);
    m->report = calloc(m->nkernels + 1, sizeof *m->report);
    if (!m->report) tl_oom();
    rep->kernels = m->report;
    rep->nkernels = m->nkernels;
    LLVMTargetMachineRef tm = tl_target_machine(m, arch, err, errlen);
    if (!tm) return -1;
    verdict *v = calloc(m->nkernels + 1, sizeof *v);
    if (!v) tl_oom();
    bool big_shared = false;
    if (m->nkernels && ptx_verdicts(m, tm, v, &big_shared, err, errlen)) {
        free(v);
        LLVMDisposeTargetMachine(tm);
        return -1;
    }
    bool debug_info = LLVMGetNamedMetadataNumOperands(m->mod, "llvm.dbg.cu") != 0;
    unsigned nok = 0;
    for (unsigned i = 0; i < m->nkernels; i++) {
        if (!v[i].ok) continue;
        if (debug_info) {
            v[i].ok = false;
            v[i].reason = "ir-debug-info";
            v[i].detail = "the module has debug info, which the IR rewrite does not carry over (use --emit=ptx)";
        } else if (!ir_checks(m, m->kernels[i], &v[i])) {
            v[i].ok = false;
        }
        nok += v[i].ok;
    }
    for (unsigned i = 0; i < m->nkernels; i++) {
        tidal_kernel_report *r = &m->report[i];
        r->name = tl_value_name(m->kernels[i]);
        r->line = define_line(m, r->name);
        r->verdict = v[i].ok ? TIDAL_REWRITTEN : TIDAL_REFUSED;
        r->reason = v[i].reason;
        r->detail = v[i].detail;
        r->exit_mode = v[i].exit_mode;
        r->barrier_between_blocks = v[i].between;
    }
    if (!nok) {
        free(v);
        LLVMDisposeTargetMachine(tm);
        return 0;
    }

    irb x = {.c = m->ctx, .m = m->mod};
    x.b = LLVMCreateBuilderInContext(x.c);
    x.i1 = LLVMInt1TypeInContext(x.c);
    x.i8 = LLVMInt8TypeInContext(x.c);
    x.i32 = LLVMInt32TypeInContext(x.c);
    x.i64 = LLVMInt64TypeInContext(x.c);
    x.vd = LLVMVoidTypeInContext(x.c);
    x.p0 = LLVMPointerTypeInContext(x.c, 0);
    x.p1 = LLVMPointerTypeInContext(x.c, 1);
    x.p3 = LLVMPointerTypeInContext(x.c, 3);
    x.p4 = LLVMPointerTypeInContext(x.c, 4);
    x.dev = LLVMGetSyncScopeID(x.c, "device", 6);

    /* independent copies of every function, before anything changes */
    LLVMModuleRef c1 = LLVMCloneModule(m->mod), c2 = LLVMCloneModule(m->mod);
    map_globals(c1, m->mod);
    map_globals(c2, m->mod);
    unsigned *fidx = calloc(m->nkernels + 1, sizeof *fidx);
    if (!fidx) tl_oom();
    for (unsigned i = 0; i < m->nkernels; i++) {
        unsigned k = 0;
        for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f && f != m->kernels[i]; f = LLVMGetNextFunction(f)) k++;
        fidx[i] = k;
    }

    /* module globals (runtime/tidal_abi.h) */
    x.ctl_gv = LLVMAddGlobalInAddressSpace(x.m, x.i64, TIDAL_CTL_SYMBOL, 4);
    LLVMSetInitializer(x.ctl_gv, c64(&x, 0));
    LLVMSetLinkage(x.ctl_gv, LLVMWeakAnyLinkage);
    LLVMSetAlignment(x.ctl_gv, 8);
    LLVMSetExternallyInitialized(x.ctl_gv, 1);
    LLVMValueRef marker = LLVMAddGlobalInAddressSpace(x.m, x.i32, TIDAL_MARKER_SYMBOL, 1);
    LLVMSetInitializer(marker, c32(&x, 1));
    LLVMSetLinkage(marker, LLVMWeakAnyLinkage);
    LLVMSetAlignment(marker, 4);
    /* tidal's shared claim slots; 1 KiB aligned to 1 KiB when the module has
     * dynamic shared memory (it starts after the static variables, and Triton
     * tiles assume a 1024-byte-aligned base) */
    LLVMTypeRef shty = LLVMArrayType2(x.i32, big_shared ? 256 : 2);
    x.sh_gv = LLVMAddGlobalInAddressSpace(x.m, shty, "__tidal_sh", 3);
    LLVMSetInitializer(x.sh_gv, LLVMGetUndef(shty));
    LLVMSetLinkage(x.sh_gv, LLVMInternalLinkage);
    LLVMSetAlignment(x.sh_gv, big_shared ? 1024 : 4);
    /* tidal_launch {u64 partition; u32 grid[3]; u32 chunk; u64 key; u32 flags; u32 reserved} */
    LLVMTypeRef lt_fields[6] = {x.i64, LLVMArrayType2(x.i32, 3), x.i32, x.i64, x.i32, x.i32};
    LLVMTypeRef launch_ty = LLVMGetTypeByName2(x.c, "struct.tidal_launch");
    if (!launch_ty) {
        launch_ty = LLVMStructCreateNamed(x.c, "struct.tidal_launch");
        LLVMStructSetBody(launch_ty, lt_fields, 6, 0);
    }

    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    for (unsigned i = 0; i < m->nkernels; i++) {
        if (!v[i].ok) continue;
        LLVMValueRef k = m->kernels[i];
        unsigned np = LLVMCountParams(k);
        drop_wrong_attrs(k);
        /* the reshaped clone (case c) */
        LLVMValueRef r = make_clone_decl(&x, k, launch_ty);
        move_body(nth_function(c2, fidx[i]), r, np);
        x.f = r;
        body br = body_of(r);
        build(&x, &br, NULL, &v[i]);
        free(br.blocks);
        /* the kernel itself, with a verbatim copy of its body for case a */
        body bk = body_of(k);
        LLVMBasicBlockRef direct = move_body(nth_function(c1, fidx[i]), k, np);
        x.f = k;
        build(&x, &bk, direct, &v[i]);
        free(bk.blocks);
        LLVMErrorRef e1 = LLVMRunPassesOnFunction(k, "mem2reg", tm, po);
        LLVMErrorRef e2 = LLVMRunPassesOnFunction(r, "mem2reg", tm, po);
        if (e1) LLVMConsumeError(e1);
        if (e2) LLVMConsumeError(e2);
    }
    LLVMDisposePassBuilderOptions(po);
    free(fidx);
    LLVMDisposeBuilder(x.b);
    LLVMDisposeModule(c1);
    LLVMDisposeModule(c2);
    free(v);
    LLVMDisposeTargetMachine(tm);
    char *msg = NULL;
    if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
        fprintf(stderr, "tidal-opt: internal error: the rewritten IR does not verify: %s\n", msg ? msg : "");
        LLVMDisposeMessage(msg);
        exit(70);
    }
    LLVMDisposeMessage(msg);
    return 0;
}
