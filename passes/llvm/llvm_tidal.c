/* llvm_tidal.c — the tidal transform at LLVM-IR level (tidal-opt --emit=llvm -p tidal).
 *
 * Safety is the PTX pass's: a copy of the module is lowered to PTX, tidal_run
 * decides per kernel, and only kernels it rewrites (and the IR rewrite can
 * take, see tl_ir_checks) are rewritten here. The rewrite is the PTX pass's
 * skeleton (passes/tidal_code.c) written as IR around the protocol's own device
 * code, the snippets of passes/tidal_protocol.c as inline asm (llvm_protocol.c;
 * abi/tidal_abi.h):
 *
 *   K                 keeps name and parameters: __tidal_ctl == 0 or a grid of
 *                     TIDAL_MAX_LOGICAL blocks or more → a verbatim copy of the
 *                     original body (launch case a); else the leader enters the
 *                     launch (probe mode, slot by %gridid) and claims chunk after
 *                     chunk, and the block runs each chunk's logical blocks with
 *                     llvm.nvvm.read.ptx.sreg.{ctaid,nctaid}.* replaced by the
 *                     logical ids, `ret` → the loop latch (case b)
 *                     (a module with dynamic shared memory keeps K verbatim: its
 *                     static @__tidal_sh would move the dynamic base, as in the PTX pass)
 *   K__tidal_reshaped K's parameters + a byval tidal_launch (64 bytes; case c); a
 *                     STATIC launch in epoch mode takes the static fast path (each
 *                     worker's own chunk first: no ENTER, no barrier before it); its
 *                     shared words are in its dynamic shared memory (@K__tidal_dsh +
 *                     tidal_launch.sh_off), so its static shared size is K's
 *   @__tidal_ctl      weak addrspace(4) i64 0;  @__tidal_rewritten_v5 weak addrspace(1) [2 x i32] 1, 1
 *                     (8 bytes: the module has __tidal_ctl)
 *   @K__tidal_nparams weak addrspace(1) [N x i8]: N = the clone's parameter count
 *
 * The LLVM C API has no function cloning: LLVMCloneModule gives independent
 * copies of every function; their globals are replaced by the original's and
 * their blocks moved into the rewritten kernel (the case-a copy) or the clone.
 * Skeleton state lives in allocas that mem2reg turns into SSA afterwards. */
#include "llvm_internal.h"
#include "tidal_abi.h"
#include "tidal_protocol.h"

#include <llvm-c/Transforms/PassBuilder.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* %struct.tidal_launch below lists tidal_launch's fields in this order, with no
 * padding between them. */
_Static_assert(offsetof(tidal_launch, partition) == 0 && offsetof(tidal_launch, grid) == 8 &&
                   offsetof(tidal_launch, chunk) == 20 && offsetof(tidal_launch, slot) == 24 &&
                   offsetof(tidal_launch, epoch) == 28 && offsetof(tidal_launch, flags) == 32 &&
                   offsetof(tidal_launch, base) == 36 && offsetof(tidal_launch, key) == 40 &&
                   offsetof(tidal_launch, sm_blocks) == 48 && offsetof(tidal_launch, sh_off) == 56 &&
                   offsetof(tidal_launch, first) == 60 && sizeof(tidal_launch) == 64 && TIDAL_LAUNCH_BYTES == 64,
               "tidal_launch layout changed: update launch_type() in llvm_tidal.c");

/* K__tidal_nparams: the clone's parameter count n as the global's size (abi/tidal_abi.h;
 * one IR parameter is one PTX .param). Weak, as the marker: an optimizer keeps it
 * although nothing references it. */
static void add_nparams(irb *x, LLVMValueRef k, unsigned n)
{
    char *name = tl_suffixed_name(k, TIDAL_NPARAMS_SUFFIX);
    LLVMTypeRef ty = LLVMArrayType2(x->i8, n);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(x->m, ty, name, 1);
    free(name);
    LLVMSetInitializer(g, LLVMConstNull(ty));
    LLVMSetLinkage(g, LLVMWeakAnyLinkage);
    LLVMSetAlignment(g, 1);
}

/* The clone's byval parameter type: tidal_launch (abi/tidal_abi.h). A type of that
 * name in the module with another body is left alone (LLVM renames ours). */
static LLVMTypeRef launch_type(irb *x)
{
    /* partition, grid[3], chunk, slot, epoch, flags, base, key, sm_blocks, sh_off, reserved */
    enum { N = 11 };
    LLVMTypeRef f[N] = {
        x->i64, LLVMArrayType2(x->i32, 3), x->i32, x->i32, x->i32, x->i32, x->i32, x->i64, x->i64, x->i32, x->i32};
    LLVMTypeRef t = LLVMGetTypeByName2(x->c, "struct.tidal_launch");
    if (t && !LLVMIsOpaqueStruct(t) && LLVMCountStructElementTypes(t) == N) {
        LLVMTypeRef g[N];
        LLVMGetStructElementTypes(t, g);
        if (!memcmp(f, g, sizeof f) && !LLVMIsPackedStruct(t)) return t;
    }
    t = LLVMStructCreateNamed(x->c, "struct.tidal_launch");
    LLVMStructSetBody(t, f, N, 0);
    return t;
}

/* ------------------------------------------------------------ report lines */

static unsigned define_line(tidal_llvm_module *m, const char *name)
{
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

int tidal_llvm_tidal(tidal_llvm_module *m, const char *arch, const tidal_options *opt, tidal_report *rep, ptx_diag *d)
{
    memset(rep, 0, sizeof *rep);
    rep->file = m->name;
    free(m->report);
    m->report = calloc(m->nkernels + 1, sizeof *m->report);
    if (!m->report) tl_oom();
    rep->kernels = m->report;
    rep->nkernels = m->nkernels;
    LLVMTargetMachineRef tm = tl_target_machine(m, arch, d);
    if (!tm) return -1;
    verdict *v = calloc(m->nkernels + 1, sizeof *v);
    if (!v) tl_oom();
    bool big_shared = false;
    if (m->nkernels && tl_ptx_verdicts(m, tm, opt, v, &big_shared, d)) {
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
            v[i].reason = TIDAL_REFUSE_IR_DEBUG_INFO;
            v[i].detail = "the module has debug info, which the IR rewrite does not carry over (use --emit=ptx)";
        } else if (!tl_ir_checks(m, m->kernels[i], &v[i])) {
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

    /* independent copies of every function, before anything changes */
    LLVMModuleRef c1 = LLVMCloneModule(m->mod), c2 = LLVMCloneModule(m->mod);
    tl_map_globals(c1, m->mod);
    tl_map_globals(c2, m->mod);
    unsigned *fidx = calloc(m->nkernels + 1, sizeof *fidx);
    if (!fidx) tl_oom();
    for (unsigned i = 0; i < m->nkernels; i++) {
        unsigned k = 0;
        for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f && f != m->kernels[i]; f = LLVMGetNextFunction(f)) k++;
        fidx[i] = k;
    }

    /* module globals (abi/tidal_abi.h) */
    x.ctl_gv = LLVMAddGlobalInAddressSpace(x.m, x.i64, TIDAL_CTL_SYMBOL, 4);
    LLVMSetInitializer(x.ctl_gv, tl_c64(&x, 0));
    LLVMSetLinkage(x.ctl_gv, LLVMWeakAnyLinkage);
    LLVMSetAlignment(x.ctl_gv, 8);
    LLVMSetExternallyInitialized(x.ctl_gv, 1);
    /* 8 bytes: the IR-level rewrite always has case b, so the module has __tidal_ctl
     * (abi/tidal_abi.h: the marker's size says so) */
    LLVMTypeRef marker_ty = LLVMArrayType2(x.i32, TIDAL_MARKER_BYTES_CASE_B / 4);
    LLVMValueRef marker = LLVMAddGlobalInAddressSpace(x.m, marker_ty, TIDAL_MARKER_SYMBOL, 1);
    LLVMValueRef ones[TIDAL_MARKER_BYTES_CASE_B / 4];
    for (unsigned i = 0; i < TIDAL_MARKER_BYTES_CASE_B / 4; i++) ones[i] = tl_c32(&x, 1);
    LLVMSetInitializer(marker, LLVMConstArray2(x.i32, ones, TIDAL_MARKER_BYTES_CASE_B / 4));
    LLVMSetLinkage(marker, LLVMWeakAnyLinkage);
    LLVMSetAlignment(marker, 4);
    /* The shared words (abi/tidal_abi.h, TIDAL_SH_*: the leader's b0 for the block,
     * double-buffered, and its private state between snippets). The original entry's are
     * the static @__tidal_sh (case b: its launcher adds no dynamic bytes); a module with
     * dynamic shared memory keeps its original entries verbatim, since ptxas pads the
     * static variables to the extern alignment (16 at least) and the dynamic base would
     * move (Triton's tiles rely on it staying 1 KiB-aligned). A clone's are in its dynamic
     * shared memory at tidal_launch.sh_off, from an extern array of its own, @K__tidal_dsh
     * (every extern shared array starts at the dynamic base; its alignment, below the 16
     * ptxas gives the dynamic base anyway, moves nothing; one per clone as in the PTX
     * pass, tidal_rewrite.c). */
    LLVMTypeRef shty = LLVMArrayType2(x.i8, TIDAL_SH_BYTES);
    x.sh_gv = NULL;
    if (!big_shared) {
        x.sh_gv = LLVMAddGlobalInAddressSpace(x.m, shty, TIDAL_SH_SYMBOL, 3);
        LLVMSetInitializer(x.sh_gv, LLVMGetUndef(shty));
        LLVMSetLinkage(x.sh_gv, LLVMInternalLinkage);
        LLVMSetAlignment(x.sh_gv, TIDAL_SH_ALIGN);
    }
    LLVMTypeRef dshty = LLVMArrayType2(x.i8, 0);
    LLVMTypeRef launch_ty = launch_type(&x);

    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    for (unsigned i = 0; i < m->nkernels; i++) {
        if (!v[i].ok) continue;
        LLVMValueRef k = m->kernels[i];
        unsigned np = LLVMCountParams(k);
        /* the reshaped clone (case c) */
        bool funnel = v[i].exit_mode == TIDAL_EXIT_FUNNEL;
        LLVMValueRef r = tl_make_clone_decl(&x, k, launch_ty);
        add_nparams(&x, k, np + 1);
        tl_drop_wrong_attrs(r);
        {
            char *dn = tl_suffixed_name(k, TIDAL_DSH_SUFFIX);
            x.dsh_gv = LLVMAddGlobalInAddressSpace(x.m, dshty, dn, 3);
            LLVMSetLinkage(x.dsh_gv, LLVMExternalLinkage);
            LLVMSetAlignment(x.dsh_gv, TIDAL_SH_ALIGN);
            free(dn);
        }
        tl_move_body(tl_nth_function(c2, fidx[i]), r, np);
        x.f = r;
        if (funnel) tl_funnel_prepare(&x, r, tm, po);
        body br = tl_body_of(r);
        tl_build(&x, &br, NULL, &v[i]);
        free(br.blocks);
        LLVMErrorRef e2 = LLVMRunPassesOnFunction(r, "mem2reg", tm, po);
        if (e2) LLVMConsumeError(e2);
        if (big_shared) {
            m->report[i].original_verbatim = 1;
            m->report[i].verbatim_shared = 1;
            continue;
        }
        /* the kernel itself, with a verbatim copy of its body for case a */
        tl_drop_wrong_attrs(k);
        x.f = k;
        if (funnel) tl_funnel_prepare(&x, k, tm, po);
        body bk = tl_body_of(k);
        LLVMBasicBlockRef direct = tl_move_body(tl_nth_function(c1, fidx[i]), k, np);
        tl_build(&x, &bk, direct, &v[i]);
        free(bk.blocks);
        LLVMErrorRef e1 = LLVMRunPassesOnFunction(k, "mem2reg", tm, po);
        if (e1) LLVMConsumeError(e1);
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
        ptx_ice("the rewritten IR does not verify: %s", msg ? msg : "");
    }
    LLVMDisposeMessage(msg);
    return 0;
}
