/* llvm_verdict.c — which kernels the IR-level tidal transform may rewrite: the
 * PTX pass's plan for a lowered copy of the module, then the IR-level checks
 * (what the IR rewrite cannot take although the PTX pass can). Reasons come from the
 * one refusal table (passes/tidal_refusal.c). */
#include "llvm_internal.h"
#include "tidal_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the PTX verdict */

/* Lowers a copy of the module, runs the PTX pass's phases up to its plan on it, and
 * fills v[i] for kernel i (the verdict, exit mode and tidal's barrier id from the plan).
 * Also says whether the module has dynamic shared memory. */
int tl_ptx_verdicts(tidal_llvm_module *m, LLVMTargetMachineRef tm, const tidal_options *opt, verdict *v,
                    bool *big_shared, ptx_diag *d)
{
    LLVMModuleRef copy = LLVMCloneModule(m->mod);
    size_t len;
    char *text = tl_emit_ptx(copy, tm, &len, d);
    LLVMDisposeModule(copy);
    if (!text) return -1;
    *big_shared = strstr(text, ".extern .shared") != NULL;
    ptx_diag pd;
    ptx_module *pm = ptx_parse(m->name, text, len, &pd);
    free(text);
    if (!pm) {
        ptx_diag_error(d, 0, 0, "the PTX that LLVM emitted does not parse (line %u: %s)", pd.line, pd.msg);
        return -1;
    }
    tidal_report rep;
    /* the PTX pass's refusal rules with the user's assumptions; its case b does not matter
     * (the IR rewrite builds its own entries) */
    tidal_options po = TIDAL_OPTIONS_DEFAULT;
    if (opt) po.assume_balanced_arrive = opt->assume_balanced_arrive;
    tidal_pipeline decide = {.last = TIDAL_PHASE_PLAN};
    tidal_run_pipeline(pm, &po, &decide, &rep);
    for (unsigned i = 0; i < m->nkernels; i++) {
        const char *name = tl_value_name(m->kernels[i]);
        const tidal_kernel_report *k = NULL;
        for (unsigned j = 0; j < rep.nkernels; j++)
            if (!strcmp(rep.kernels[j].name, name)) k = &rep.kernels[j];
        verdict *x = &v[i];
        memset(x, 0, sizeof *x);
        if (!k) {
            x->reason = TIDAL_REFUSE_IR_PTX_NAME;
            x->detail = tl_keepf(m, "no PTX .entry named '%s' in the lowered module", name);
        } else if (k->verdict != TIDAL_REWRITTEN) {
            x->reason = k->reason;
            x->detail = tl_keepf(m, "%s (in the PTX lowered from the IR)", k->detail);
        } else {
            x->ok = true;
            x->exit_mode = k->exit_mode;
            x->between = k->barrier_between_blocks;
            x->bar_id = k->bar_id;
        }
    }
    ptx_module_free(pm);
    return 0;
}

/* ------------------------------------------------------------ IR-level checks */

/* What functions called from f (transitively; not f itself) do: read
 * %ctaid/%nctaid, or end the thread with llvm.nvvm.exit, as the PTX pass's facts
 * (exit_instr, reads_ctaid), judged by its rule (tidal_callee_refusal). The PTX pass
 * applies it to the lowered module; the IR rewrite applies it to the IR's own callees
 * too, because it substitutes the logical ids only in the kernel's body and the IR it
 * edits is not the lowered module. (This check found a PTX-pass bug, since fixed:
 * test/lit/llvm/ptx_forward_declared_callee.ll.) */
typedef struct ir_callees {
    LLVMValueRef *seen;
    unsigned nseen, cap;
    tidal_facts facts;
    const char *ctaid_in, *exit_in; /* the first callee that does it */
} ir_callees;

static void callees(ir_callees *cf, LLVMValueRef f, bool self)
{
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
            if (!self && k == TL_CALL_SREG && (r == PTX_SREG_CTAID || r == PTX_SREG_NCTAID) && !cf->ctaid_in) {
                cf->facts.reads_ctaid = true;
                cf->ctaid_in = tl_value_name(f);
            }
            if (!self && k == TL_CALL_INTRINSIC && tl_name_is(callee, "llvm.nvvm.exit") && !cf->exit_in) {
                cf->facts.exit_instr = true;
                cf->exit_in = tl_value_name(f);
            }
            if (k == TL_CALL_FUNCTION && !LLVMIsDeclaration(callee)) callees(cf, callee, false);
            if (k == TL_CALL_INDIRECT) /* any function of the module */
                for (LLVMValueRef g = LLVMGetFirstFunction(LLVMGetGlobalParent(f)); g; g = LLVMGetNextFunction(g))
                    if (!LLVMIsDeclaration(g) && LLVMGetFunctionCallConv(g) != TL_PTX_KERNEL_CC) callees(cf, g, false);
        }
}

static bool name_has_prefix(LLVMValueRef v, const char *pre)
{
    size_t n;
    const char *p = LLVMGetValueName2(v, &n);
    return n >= strlen(pre) && !memcmp(p, pre, strlen(pre));
}

static bool name_has_suffix(LLVMValueRef v, const char *suf)
{
    size_t n, k = strlen(suf);
    const char *p = LLVMGetValueName2(v, &n);
    return n >= k && !memcmp(p + n - k, suf, k);
}

/* What the IR rewrite cannot take although the PTX pass can. */
bool tl_ir_checks(tidal_llvm_module *m, LLVMValueRef f, verdict *v)
{
    ir_callees cf = {0};
    tidal_facts_empty(&cf.facts);
    callees(&cf, f, true);
    free(cf.seen);
    v->reason = tidal_callee_refusal(&cf.facts);
    if (v->reason == TIDAL_REFUSE_EXIT_IN_CALLEE)
        v->detail = tl_keepf(m, "calls a function that may execute 'exit' (llvm.nvvm.exit in @%s)", cf.exit_in);
    else if (v->reason == TIDAL_REFUSE_CALLEE_READS_CTAID)
        v->detail = tl_keepf(m, "calls a function that reads %%ctaid/%%nctaid (@%s)", cf.ctaid_in);
    if (v->reason != TIDAL_REASON_NONE) return false;
    bool funnel = v->exit_mode == TIDAL_EXIT_FUNNEL;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
        if (t && LLVMGetInstructionOpcode(t) == LLVMRet && LLVMGetNumOperands(t) != 0) {
            v->reason = TIDAL_REFUSE_IR_UNSUPPORTED;
            v->detail = "the kernel returns a value";
            return false;
        }
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            if (op == LLVMIndirectBr || op == LLVMCallBr) {
                v->reason = TIDAL_REFUSE_IR_UNSUPPORTED;
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
                    if (tidal_text_contains(s, n, bad[k])) {
                        v->reason = TIDAL_REFUSE_IR_INLINE_ASM;
                        v->detail = tl_keepf(m,
                                             "inline asm mentions '%s' (the IR rewrite does not edit asm text; "
                                             "use --emit=ptx)",
                                             bad[k]);
                        return false;
                    }
            } else if (funnel && LLVMIsAFunction(callee) && name_has_prefix(callee, "llvm.nvvm.barrier.cta.red.") &&
                       name_has_suffix(callee, ".all")) {
                /* the PTX pass refuses these too; checked here so the funnel never meets one */
                v->reason = TIDAL_REFUSE_IR_BARRIER_FUNNEL;
                v->detail = tl_keepf(m, "the barrier funnel takes plain full barriers, not %s", tl_value_name(callee));
                return false;
            } else if (LLVMIsAFunction(callee) && tl_name_is(callee, "llvm.nvvm.exit")) {
                v->reason = TIDAL_REFUSE_IR_UNSUPPORTED;
                v->detail = "calls llvm.nvvm.exit in the kernel (use --emit=ptx)";
                return false;
            }
        }
    }
    return true;
}
