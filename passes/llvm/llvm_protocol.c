/* llvm_protocol.c — tl_build(): the skeleton of passes/tidal_code.c around a kernel
 * body at IR level, with the protocol's device code called as the inline-asm form of
 * the snippets of passes/tidal_protocol.c (tidal_snippet_asm). The skeleton is the
 * PTX pass's, in the same order: the entry's launch values (tidal_values_*), the
 * leader test, the static fast path (every thread takes its own chunk, the leader
 * STARTs it, straight to the logical blocks), else ENTER or CLAIM by the leader, the
 * publish of b0 through __tidal_sh and the one barrier per chunk
 * (tidal_prologue_common), the logical-block loop (tidal_*_reload,
 * tidal_epilogue_head), LEAVE and the exits (tidal_epilogue_tail).
 * Slots, the claim and guard words and the SM mask appear only in the snippets.
 * Also: the IR builder helpers and the barrier funnel's preparation. */
#include "llvm_internal.h"
#include "tidal_abi.h"
#include "tidal_protocol.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ IR building */

LLVMValueRef tl_c32(irb *x, unsigned long long v) { return LLVMConstInt(x->i32, v, 0); }
LLVMValueRef tl_c64(irb *x, unsigned long long v) { return LLVMConstInt(x->i64, v, 0); }

static LLVMBasicBlockRef blk(irb *x, const char *name) { return LLVMAppendBasicBlockInContext(x->c, x->f, name); }
static void at(irb *x, LLVMBasicBlockRef b) { LLVMPositionBuilderAtEnd(x->b, b); }

static LLVMValueRef intr(irb *x, const char *name, LLVMValueRef *args, unsigned nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) ptx_ice("no intrinsic %s in this LLVM", name);
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(x->m, id, NULL, 0);
    LLVMTypeRef fty = LLVMIntrinsicGetType(x->c, id, NULL, 0);
    return LLVMBuildCall2(x->b, fty, decl, args, nargs, "");
}

static LLVMValueRef sreg(irb *x, const char *which)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", which);
    return intr(x, name, NULL, 0);
}

/* barrier.sync id (not .aligned: threads of a warp may arrive from different places) */
static void barrier(irb *x, unsigned id)
{
    LLVMValueRef a = tl_c32(x, id);
    intr(x, "llvm.nvvm.barrier.cta.sync.all", &a, 1);
}

/* The barrier funnel's one barrier (passes/tidal_protocol.h, TIDAL_FUNNEL_FUNC): a call of
 * an internal noinline function per barrier id, i1 (i1 waiting) -> any thread waiting, so
 * that every lane of a warp reaches the same barrier instruction (inline, ptxas
 * tail-duplicates it per path). */
static LLVMValueRef funnel_barrier(irb *x, unsigned id, LLVMValueRef waiting)
{
    char name[48];
    snprintf(name, sizeof name, TIDAL_FUNNEL_FUNC "%u", id);
    LLVMTypeRef fty = LLVMFunctionType(x->i1, &x->i1, 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(x->m, name);
    if (!fn) {
        fn = LLVMAddFunction(x->m, name, fty);
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        static const char *const attrs[] = {"noinline", "convergent", "nounwind"};
        for (unsigned k = 0; k < sizeof attrs / sizeof attrs[0]; k++)
            LLVMAddAttributeAtIndex(
                fn, LLVMAttributeFunctionIndex,
                LLVMCreateEnumAttribute(x->c, LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k])), 0));
        LLVMBuilderRef keep = x->b;
        x->b = LLVMCreateBuilderInContext(x->c);
        LLVMPositionBuilderAtEnd(x->b, LLVMAppendBasicBlockInContext(x->c, fn, "entry"));
        LLVMValueRef ra[2] = {tl_c32(x, id), LLVMGetParam(fn, 0)};
        LLVMBuildRet(x->b, intr(x, "llvm.nvvm.barrier.cta.red.or.all", ra, 2));
        LLVMDisposeBuilder(x->b);
        x->b = keep;
    }
    return LLVMBuildCall2(x->b, fty, fn, &waiting, 1, "");
}

static LLVMValueRef load(irb *x, LLVMTypeRef t, LLVMValueRef p, const char *name)
{
    LLVMValueRef l = LLVMBuildLoad2(x->b, t, p, name);
    LLVMSetAlignment(l, t == x->i64 ? 8 : t == x->i32 ? 4 : 1);
    return l;
}

static LLVMValueRef icmp(irb *x, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildICmp(x->b, p, a, b, "");
}

static LLVMValueRef umin(irb *x, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(x->b, icmp(x, LLVMIntULT, a, b), a, b, "");
}
static LLVMValueRef umax(irb *x, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(x->b, icmp(x, LLVMIntUGT, a, b), a, b, "");
}

static LLVMValueRef zext64(irb *x, LLVMValueRef v) { return LLVMBuildZExt(x->b, v, x->i64, ""); }

/* (u64)a * b * c, instructions in source order: the grid's size before it is known to
 * fit 32 bits */
static LLVMValueRef wide_product(irb *x, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    LLVMValueRef za = zext64(x, a);
    LLVMValueRef zb = zext64(x, b);
    LLVMValueRef p = LLVMBuildMul(x->b, za, zb, "");
    LLVMValueRef zc = zext64(x, c);
    return LLVMBuildMul(x->b, p, zc, "");
}

/* A field of the clone's tidal_launch parameter (byval: loads become ld.param). */
static LLVMValueRef launch_field(irb *x, LLVMValueRef launch, unsigned off, LLVMTypeRef t, const char *name)
{
    LLVMValueRef o = tl_c64(x, off);
    return load(x, t, off ? LLVMBuildGEP2(x->b, x->i8, launch, &o, 1, "") : launch, name);
}

/* Moves instruction i, keeping its name, to the builder's position. */
static void move_named(irb *x, LLVMValueRef i)
{
    size_t n;
    const char *nm = LLVMGetValueName2(i, &n);
    char *name = strndup(nm, n);
    if (!name) tl_oom();
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilderWithName(x->b, i, name);
    free(name);
}

/* Static allocas of block b go to the (new) entry block. */
static void hoist_allocas(irb *x, LLVMBasicBlockRef b, LLVMBasicBlockRef entry)
{
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
static bool full_barrier_call(LLVMValueRef i)
{
    if (!LLVMIsACallInst(i)) return false;
    LLVMValueRef c = tl_call_callee(i);
    return c && LLVMIsAFunction(c) &&
           (tl_name_is(c, "llvm.nvvm.barrier.cta.sync.aligned.all") || tl_name_is(c, "llvm.nvvm.barrier.cta.sync.all"));
}

/* PHIs of succ that name `from` as an incoming block name `to` instead (the C API
 * cannot set an incoming block, so such a PHI is rebuilt). */
static void retarget_phis(irb *x, LLVMBasicBlockRef succ, LLVMBasicBlockRef from, LLVMBasicBlockRef to)
{
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
void tl_funnel_prepare(irb *x, LLVMValueRef f, LLVMTargetMachineRef tm, LLVMPassBuilderOptionsRef po)
{
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
            for (unsigned s = 0; t && s < LLVMGetNumSuccessors(t); s++)
                retarget_phis(x, LLVMGetSuccessor(t, s), b, rest);
            LLVMPositionBuilderAtEnd(x->b, b);
            LLVMBuildBr(x->b, rest);
            break; /* the loop goes on in `rest`, the next block */
        }
    LLVMErrorRef e = LLVMRunPassesOnFunction(f, "reg2mem", tm, po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        ptx_ice("reg2mem: %s", msg);
    }
    /* reg2mem's marker instruction (a no-op bitcast) */
    for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(f)); i;) {
        LLVMValueRef ni = LLVMGetNextInstruction(i);
        if (tl_name_is(i, "reg2mem alloca point") && !LLVMGetFirstUse(i)) LLVMInstructionEraseFromParent(i);
        i = ni;
    }
}

body tl_body_of(LLVMValueRef f)
{
    body bd = {0};
    bd.n = LLVMCountBasicBlocks(f);
    bd.blocks = calloc(bd.n + 1, sizeof *bd.blocks);
    if (!bd.blocks) tl_oom();
    LLVMGetBasicBlocks(f, bd.blocks);
    return bd;
}

/* ------------------------------------------------------------ launch values */

/* The launch values of tidal_code.c, named as its %tdl_<name> registers and as the
 * snippets' operands. The same struct holds, per field, the alloca that carries the
 * value from the last derivation to the barrier and to LEAVE (mem2reg makes them SSA). */
typedef struct launch_values {
    LLVMValueRef ctl, key, hist, sh;                                         /* i64 */
    LLVMValueRef total, chunk, first, flags, base, phys, pid, epoch, slotix; /* i32 */
} launch_values;

static const struct {
    const char *name;
    size_t off;
    bool wide;
} lv_fields[] = {
    {"ctl", offsetof(launch_values, ctl), true},        {"key", offsetof(launch_values, key), true},
    {"hist", offsetof(launch_values, hist), true},      {"sh", offsetof(launch_values, sh), true},
    {"total", offsetof(launch_values, total), false},   {"chunk", offsetof(launch_values, chunk), false},
    {"first", offsetof(launch_values, first), false},   {"flags", offsetof(launch_values, flags), false},
    {"base", offsetof(launch_values, base), false},     {"phys", offsetof(launch_values, phys), false},
    {"pid", offsetof(launch_values, pid), false},       {"epoch", offsetof(launch_values, epoch), false},
    {"slotix", offsetof(launch_values, slotix), false},
};
#define NFIELDS (sizeof lv_fields / sizeof lv_fields[0])

static LLVMValueRef *lv_at(launch_values *v, unsigned k) { return (LLVMValueRef *)((char *)v + lv_fields[k].off); }

static unsigned lv_find(const char *name, const char *snippet)
{
    for (unsigned k = 0; k < NFIELDS; k++)
        if (!strcmp(lv_fields[k].name, name)) return k;
    ptx_ice("snippet %s: operand '%s' is not a launch value of the IR skeleton", snippet, name);
}

/* %gridid is 64-bit; LLVM 22's llvm.nvvm.read.ptx.sreg.gridid returns i32. */
static LLVMValueRef gridid(irb *x, const char *name)
{
    static const char text[] = "mov.u64 $0, %gridid;";
    LLVMTypeRef t = LLVMFunctionType(x->i64, NULL, 0, 0);
    LLVMValueRef a = LLVMGetInlineAsm(t, text, sizeof text - 1, "=l", 2, 0, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(x->b, t, a, NULL, 0, name);
}

static LLVMValueRef load_ctl(irb *x, const char *name) { return load(x, x->i64, x->ctl_gv, name); }

/* The original entry's flags: probe mode, histogram and exec counts (tidal_code.c). */
#define ORIGINAL_FLAGS (TIDAL_LAUNCH_PROBE | TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC)

/* The shared words (abi/tidal_abi.h, TIDAL_SH_*): the original entry's @__tidal_sh (launch
 * NULL); the clone's at tidal_launch.sh_off into its dynamic shared memory, whose base
 * its own extern @K__tidal_dsh is (x->dsh_gv), so the clone has the original's static size. */
static LLVMValueRef sh_words(irb *x, LLVMValueRef launch, const char *name)
{
    if (!launch) return x->sh_gv;
    LLVMValueRef off = zext64(x, launch_field(x, launch, TIDAL_LAUNCH_OFF_SH_OFF, x->i32, name));
    return LLVMBuildGEP2(x->b, x->i8, x->dsh_gv, &off, 1, "");
}

/* "<pre><what>": the names of one derivation's values */
static const char *vname(char buf[64], const char *pre, const char *what)
{
    snprintf(buf, 64, "%s%s", pre, what);
    return buf;
}

/* tidal_values_original_grid (launch NULL) / tidal_values_reshaped_grid, at the
 * builder's position, in their order; values named pre + the operand's name. */
static void launch_values_here(irb *x, LLVMValueRef launch, launch_values *v, const char *pre)
{
    char n[64];
    if (!launch) {
        v->ctl = load_ctl(x, vname(n, pre, "ctl"));
        LLVMValueRef nx = sreg(x, "nctaid.x");
        LLVMValueRef ny = sreg(x, "nctaid.y");
        LLVMValueRef nz = sreg(x, "nctaid.z");
        v->total = LLVMBuildMul(x->b, LLVMBuildMul(x->b, nx, ny, ""), nz, vname(n, pre, "total"));
        v->phys = v->total;
        LLVMValueRef c = LLVMBuildLShr(x->b, v->total, tl_c32(x, 11), "");
        v->chunk = umax(x, umin(x, c, tl_c32(x, 32)), tl_c32(x, 1));
        v->first = v->chunk;
        v->flags = tl_c32(x, ORIGINAL_FLAGS);
        v->base = v->epoch = v->slotix = tl_c32(x, 0);
        v->key = gridid(x, vname(n, pre, "key"));
        v->hist = tl_c64(x, 0);
    } else {
        LLVMValueRef part = launch_field(x, launch, TIDAL_LAUNCH_OFF_PARTITION, x->i64, vname(n, pre, "part"));
        LLVMValueRef g = load_ctl(x, "");
        v->ctl = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, part, tl_c64(x, 0)), g, part, vname(n, pre, "ctl"));
        LLVMValueRef nx = launch_field(x, launch, TIDAL_LAUNCH_OFF_GRID, x->i32, "");
        LLVMValueRef ny = launch_field(x, launch, TIDAL_LAUNCH_OFF_GRID + 4, x->i32, "");
        LLVMValueRef nz = launch_field(x, launch, TIDAL_LAUNCH_OFF_GRID_Z, x->i32, "");
        LLVMValueRef c = launch_field(x, launch, TIDAL_LAUNCH_OFF_CHUNK, x->i32, vname(n, pre, "chunk.param"));
        v->slotix = launch_field(x, launch, TIDAL_LAUNCH_OFF_SLOT, x->i32, vname(n, pre, "slotix"));
        v->epoch = launch_field(x, launch, TIDAL_LAUNCH_OFF_EPOCH, x->i32, vname(n, pre, "epoch"));
        v->flags = launch_field(x, launch, TIDAL_LAUNCH_OFF_FLAGS, x->i32, vname(n, pre, "flags"));
        v->base = launch_field(x, launch, TIDAL_LAUNCH_OFF_BASE, x->i32, vname(n, pre, "base"));
        LLVMValueRef k = launch_field(x, launch, TIDAL_LAUNCH_OFF_KEY, x->i64, vname(n, pre, "key.param"));
        /* the slot tag: tidal_launch.key's high bits | %gridid */
        LLVMValueRef gid = gridid(x, vname(n, pre, "gridid"));
        v->key = LLVMBuildOr(x->b, k, gid, vname(n, pre, "key"));
        v->hist = launch_field(x, launch, TIDAL_LAUNCH_OFF_SM_BLOCKS, x->i64, vname(n, pre, "hist"));
        v->total = LLVMBuildMul(x->b, LLVMBuildMul(x->b, nx, ny, ""), nz, vname(n, pre, "total"));
        v->chunk = umin(x, umax(x, c, tl_c32(x, 1)), tl_c32(x, TIDAL_MAX_CHUNK));
        LLVMValueRef f = launch_field(x, launch, TIDAL_LAUNCH_OFF_FIRST, x->i32, vname(n, pre, "first.param"));
        v->first = umax(x, f, v->chunk);
        LLVMValueRef px = sreg(x, "nctaid.x");
        LLVMValueRef py = sreg(x, "nctaid.y");
        LLVMValueRef pxy = LLVMBuildMul(x->b, px, py, "");
        LLVMValueRef pz = sreg(x, "nctaid.z");
        v->phys = LLVMBuildMul(x->b, pxy, pz, vname(n, pre, "phys"));
    }
    vname(n, pre, "chunk");
    LLVMSetValueName2(v->chunk, n, strlen(n));
    if (launch) {
        vname(n, pre, "first");
        LLVMSetValueName2(v->first, n, strlen(n));
    }
    /* the physical block's linear id; these sreg reads come after the body's were
     * collected, so they stay physical */
    LLVMValueRef kz = sreg(x, "ctaid.z");
    LLVMValueRef gy = sreg(x, "nctaid.y");
    LLVMValueRef ky = sreg(x, "ctaid.y");
    LLVMValueRef pid = LLVMBuildAdd(x->b, LLVMBuildMul(x->b, kz, gy, ""), ky, "");
    LLVMValueRef gx = sreg(x, "nctaid.x");
    LLVMValueRef kx = sreg(x, "ctaid.x");
    v->pid = LLVMBuildAdd(x->b, LLVMBuildMul(x->b, pid, gx, ""), kx, vname(n, pre, "pid"));
    /* the shared words: SH_STATIC / SH_DYNAMIC of tidal_code.c */
    LLVMValueRef words = sh_words(x, launch, vname(n, pre, "sh.off"));
    v->sh = LLVMBuildPtrToInt(x->b, words, x->i64, vname(n, pre, "sh"));
}

/* tidal_original_reload / tidal_reshaped_reload: the logical grid, re-read at each
 * logical block rather than kept live across the body. */
static void logical_grid(irb *x, LLVMValueRef launch, LLVMValueRef n[3], LLVMValueRef *total)
{
    static const char *const names[3] = {"tdl.nctaid.x", "tdl.nctaid.y", "tdl.nctaid.z"};
    for (int k = 0; k < 3; k++) {
        if (launch) {
            n[k] = launch_field(x, launch, TIDAL_LAUNCH_OFF_GRID + 4 * (unsigned)k, x->i32, names[k]);
        } else {
            n[k] = sreg(x, names[k] + 4);
            LLVMSetValueName2(n[k], names[k], strlen(names[k]));
        }
    }
    *total = LLVMBuildMul(x->b, LLVMBuildMul(x->b, n[0], n[1], ""), n[2], "");
}
_Static_assert(TIDAL_LAUNCH_OFF_GRID_Z == TIDAL_LAUNCH_OFF_GRID + 8, "tidal_launch.grid[3]");

static void keep(irb *x, launch_values *v, launch_values *slots)
{
    for (unsigned k = 0; k < NFIELDS; k++) LLVMBuildStore(x->b, *lv_at(v, k), *lv_at(slots, k));
}

static LLVMValueRef restore(irb *x, launch_values *slots, const char *name)
{
    unsigned k = lv_find(name, "(skeleton)");
    return load(x, lv_fields[k].wide ? x->i64 : x->i32, *lv_at(slots, k), "");
}

/* ------------------------------------------------------------ the snippets */

/* A snippet of passes/tidal_protocol.c as an inline-asm call (tidal_snippet_asm: b0
 * early-clobber, the memory clobber), its inputs taken by name from v, an input b0
 * (START: the chunk every thread computed) from b0in; returns b0 when it is the
 * snippet's output, the one output a snippet may have (NULL when it has none). It
 * must stay where the skeleton puts it: once, on the leader's path (between two
 * barriers, or for START before the first chunk). Side effects and the memory clobber
 * keep it on its side of the barrier call (which touches memory too) and keep it from
 * being deleted or merged; convergent keeps passes from making it depend on more
 * branches (sinking, and the backend's tail duplication, which checks the flag on the
 * asm); noduplicate keeps IR passes (jump threading, unrolling) from copying it into
 * several paths. */
static LLVMValueRef snippet(irb *x, const tidal_snippet *s, launch_values *v, LLVMValueRef b0in, const char *name)
{
    enum { MAXOPS = 16 };
    LLVMValueRef args[MAXOPS];
    LLVMTypeRef types[MAXOPS];
    unsigned nin = 0;
    bool b0 = false;
    for (unsigned i = 0; i < s->nops; i++) {
        const tidal_operand *op = &s->ops[i];
        if (op->out) {
            if (strcmp(op->name, "b0") || op->type != TIDAL_OP_U32 || b0)
                ptx_ice("snippet %s: output '%s': the IR skeleton takes one output, b0 (u32)", s->name, op->name);
            b0 = true;
            continue;
        }
        if (nin == MAXOPS) ptx_ice("snippet %s: more than %d operands", s->name, MAXOPS);
        LLVMValueRef val;
        if (!strcmp(op->name, "b0")) {
            if (!b0in || op->type != TIDAL_OP_U32)
                ptx_ice("snippet %s: input b0 (u32) where the IR skeleton has no chunk for it", s->name);
            val = b0in;
        } else {
            unsigned k = lv_find(op->name, s->name);
            val = *lv_at(v, k);
            if (!val || lv_fields[k].wide != (op->type == TIDAL_OP_U64))
                ptx_ice("snippet %s: operand '%s' missing or of the wrong width", s->name, op->name);
        }
        args[nin] = val;
        types[nin++] = LLVMTypeOf(val);
    }
    char *cons = NULL;
    char *text = tidal_snippet_asm(s, &cons);
    LLVMTypeRef fty = LLVMFunctionType(b0 ? x->i32 : x->vd, types, nin, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(x->b, fty, a, args, nin, b0 ? name : "");
    static const char *const attrs[] = {"convergent", "noduplicate", "nounwind"};
    for (unsigned i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
        if (!kind) ptx_ice("no attribute %s in this LLVM", attrs[i]);
        LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->c, kind, 0));
    }
    free(text);
    free(cons);
    return b0 ? call : NULL;
}

/* A snippet whose operands are the values of the last derivation, from their allocas
 * (LEAVE: tidal_epilogue_tail, no body ran since). */
static LLVMValueRef snippet_restored(irb *x, const tidal_snippet *s, launch_values *slots, const char *name)
{
    launch_values v = {0};
    for (unsigned i = 0; i < s->nops; i++)
        if (!s->ops[i].out && strcmp(s->ops[i].name, "b0"))
            *lv_at(&v, lv_find(s->ops[i].name, s->name)) = restore(x, slots, s->ops[i].name);
    return snippet(x, s, &v, NULL, name);
}

/* b0's word of the shared words for this round (double-buffered by parity). */
static LLVMValueRef sh_b0(irb *x, LLVMValueRef launch, LLVMValueRef odd)
{
    LLVMValueRef off = LLVMBuildSelect(x->b, odd, tl_c64(x, TIDAL_SH_OFF_B0_ODD), tl_c64(x, TIDAL_SH_OFF_B0_EVEN), "");
    return LLVMBuildGEP2(x->b, x->i8, sh_words(x, launch, ""), &off, 1, "tdl.sh.b0");
}

/* ------------------------------------------------------------ the skeleton */

/* Builds the skeleton around the body of x->f. direct: the case-a copy's entry (K) or
 * NULL (the reshaped clone, whose last parameter is the tidal_launch). */
void tl_build(irb *x, body *bd, LLVMBasicBlockRef direct, const verdict *v)
{
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
    bool funnel = v->exit_mode == TIDAL_EXIT_FUNNEL;
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

    /* skeleton state (mem2reg makes it SSA): the parity of the shared words' b0 word, the
     * chunk's bounds, and the launch values as last derived */
    at(x, entry);
    LLVMValueRef a_odd = LLVMBuildAlloca(x->b, x->i1, "tdl.odd.a");
    LLVMValueRef a_b1 = LLVMBuildAlloca(x->b, x->i32, "tdl.b1.a");
    LLVMValueRef a_lin = LLVMBuildAlloca(x->b, x->i32, "tdl.lin.a");
    launch_values slots;
    for (unsigned k = 0; k < NFIELDS; k++) {
        char name[32];
        snprintf(name, sizeof name, "tdl.%s.a", lv_fields[k].name);
        *lv_at(&slots, k) = LLVMBuildAlloca(x->b, lv_fields[k].wide ? x->i64 : x->i32, name);
    }

    LLVMBasicBlockRef refuse = direct ? direct : blk(x, "tdl.trap");
    LLVMBasicBlockRef grid = blk(x, "tdl.grid"), values = blk(x, "tdl.values"), fastb = blk(x, "tdl.fast.chunk"),
                      start = blk(x, "tdl.start"), start_l = blk(x, "tdl.start.leader"),
                      started = blk(x, "tdl.started"), enter = blk(x, "tdl.enter"),
                      enter_l = blk(x, "tdl.enter.leader"), claim = blk(x, "tdl.claim"),
                      claim_go = blk(x, "tdl.claim.go"), claim_l = blk(x, "tdl.claim.leader"),
                      publish = blk(x, "tdl.publish"), claimed = blk(x, "tdl.claimed"),
                      chunk = blk(x, "tdl.chunk.start"), logical = blk(x, "tdl.logical"),
                      ldiv = blk(x, "tdl.logical.nd"), ljoin = blk(x, "tdl.body"), next = blk(x, "tdl.next"),
                      next2 = blk(x, "tdl.next.block"), depart = blk(x, "tdl.depart"),
                      depart_l = blk(x, "tdl.depart.leader"), quit = blk(x, "tdl.exit");
    /* tidal_prologue_original_grid: no runtime (case a), or a grid too large for the
     * protocol, runs the verbatim copy; tidal_prologue_reshaped_grid: the clone traps */
    LLVMValueRef ctl0, gn[3];
    if (direct) {
        ctl0 = load_ctl(x, "tdl.ctl0");
    } else {
        LLVMValueRef part = launch_field(x, launch, TIDAL_LAUNCH_OFF_PARTITION, x->i64, "tdl.part0");
        LLVMValueRef g = load_ctl(x, "");
        ctl0 = LLVMBuildSelect(x->b, icmp(x, LLVMIntEQ, part, tl_c64(x, 0)), g, part, "tdl.ctl0");
    }
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ctl0, tl_c64(x, 0)), refuse, grid);
    if (!direct) {
        at(x, refuse);
        intr(x, "llvm.trap", NULL, 0);
        LLVMBuildUnreachable(x->b);
    }
    at(x, grid);
    for (int k = 0; k < 3; k++) {
        static const char *const ns[3] = {"nctaid.x", "nctaid.y", "nctaid.z"};
        gn[k] = direct ? sreg(x, ns[k]) : launch_field(x, launch, TIDAL_LAUNCH_OFF_GRID + 4 * (unsigned)k, x->i32, "");
    }
    LLVMValueRef a0 = wide_product(x, gn[0], gn[1], gn[2]);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, a0, tl_c64(x, TIDAL_MAX_LOGICAL)), refuse, values);

    /* tidal_values_*, then tidal_prologue_common */
    at(x, values);
    launch_values lv;
    launch_values_here(x, launch, &lv, "tdl.");
    keep(x, &lv, &slots);
    LLVMValueRef tx = sreg(x, "tid.x");
    LLVMValueRef ty = sreg(x, "tid.y");
    LLVMValueRef txy = LLVMBuildOr(x->b, tx, ty, "");
    LLVMValueRef tz = sreg(x, "tid.z");
    LLVMValueRef leader = icmp(x, LLVMIntEQ, LLVMBuildOr(x->b, txy, tz, ""), tl_c32(x, 0));
    LLVMSetValueName2(leader, "tdl.leader", 10);
    LLVMBuildStore(x->b, LLVMConstInt(x->i1, 0, 0), a_odd);
    /* a static worker in epoch mode (flags & (JOIN|STATIC|PROBE) == STATIC) starts its
     * own chunk at once: no memory read, no barrier (every thread knows the chunk). The
     * original entry's flags are a constant without STATIC: its fast path is dead. */
    LLVMValueRef fm = tl_c32(x, TIDAL_LAUNCH_JOIN | TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_PROBE);
    fm = LLVMBuildAnd(x->b, lv.flags, fm, "");
    LLVMValueRef fast = icmp(x, LLVMIntEQ, fm, tl_c32(x, TIDAL_LAUNCH_STATIC));
    LLVMSetValueName2(fast, "tdl.fast", 8);
    /* tidal_code.c's %tdl_once: a static worker of a launch without tickets runs its own
     * chunk and ends (no START unless it counts, no re-derived values after it) */
    LLVMValueRef once = LLVMBuildAnd(x->b, fast, icmp(x, LLVMIntUGE, lv.base, lv.total), "tdl.once");
    LLVMBuildCondBr(x->b, fast, fastb, enter);
    /* the chunk pid*chunk; none (a worker beyond the grid): the whole block exits */
    at(x, fastb);
    LLVMValueRef b0f = LLVMBuildMul(x->b, lv.pid, lv.first, "tdl.b0.fast");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, b0f, lv.total), quit, start);
    at(x, start);
    LLVMValueRef counting = LLVMBuildAnd(x->b, lv.flags, tl_c32(x, TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC), "");
    LLVMValueRef silent = LLVMBuildAnd(x->b, once, icmp(x, LLVMIntEQ, counting, tl_c32(x, 0)), "");
    LLVMBuildCondBr(x->b, LLVMBuildAnd(x->b, leader, LLVMBuildNot(x->b, silent, ""), ""), start_l, started);
    at(x, start_l);
    snippet(x, &tidal_snippet_start, &lv, b0f, "");
    LLVMBuildBr(x->b, started);
    at(x, started);
    LLVMBuildStore(x->b, umin(x, LLVMBuildAdd(x->b, b0f, lv.first, ""), lv.total), a_b1);
    LLVMBuildStore(x->b, b0f, a_lin);
    LLVMBuildBr(x->b, logical);
    /* otherwise the leader enters the launch: slot, first chunk */
    at(x, enter);
    LLVMBuildCondBr(x->b, leader, enter_l, claimed);
    at(x, enter_l);
    LLVMValueRef b0e = snippet(x, &tidal_snippet_enter, &lv, NULL, "tdl.b0.enter");
    LLVMBuildBr(x->b, publish);

    /* after a chunk: the values again; after a static worker's own chunk in a launch
     * without tickets the whole block is done; else the leader claims (and later claims
     * go the normal way) */
    at(x, claim);
    LLVMBuildCondBr(x->b, once, quit, claim_go);
    at(x, claim_go);
    launch_values lc;
    launch_values_here(x, launch, &lc, "tdl.claim.");
    keep(x, &lc, &slots);
    LLVMBuildCondBr(x->b, leader, claim_l, claimed);
    at(x, claim_l);
    LLVMValueRef b0c = snippet(x, &tidal_snippet_claim, &lc, NULL, "tdl.b0.claim");
    LLVMBuildBr(x->b, publish);

    /* the leader publishes b0 in this round's word of the shared words; everyone meets at the
     * one barrier per chunk and reads it */
    at(x, publish);
    LLVMValueRef b0p = LLVMBuildPhi(x->b, x->i32, "tdl.b0.new");
    {
        LLVMValueRef pv[2] = {b0e, b0c};
        LLVMBasicBlockRef pf[2] = {enter_l, claim_l};
        LLVMAddIncoming(b0p, pv, pf, 2);
    }
    LLVMValueRef st = LLVMBuildStore(x->b, b0p, sh_b0(x, launch, load(x, x->i1, a_odd, "")));
    LLVMSetAlignment(st, 4);
    LLVMBuildBr(x->b, claimed);
    at(x, claimed);
    barrier(x, v->bar_id);
    LLVMValueRef odd = load(x, x->i1, a_odd, "tdl.odd");
    LLVMValueRef b0 = load(x, x->i32, sh_b0(x, launch, odd), "tdl.b0");
    LLVMBuildStore(x->b, LLVMBuildNot(x->b, odd, ""), a_odd);
    LLVMValueRef total = restore(x, &slots, "total");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntUGE, b0, total), depart, chunk);
    at(x, chunk);
    LLVMBuildStore(x->b, umin(x, LLVMBuildAdd(x->b, b0, restore(x, &slots, "chunk"), ""), total), a_b1);
    LLVMBuildStore(x->b, b0, a_lin);
    LLVMBuildBr(x->b, logical);

    /* logical block ids; decomposed only when the grid is not 1-D */
    at(x, logical);
    LLVMValueRef ln[3], ltot;
    logical_grid(x, launch, ln, &ltot);
    LLVMValueRef lin = load(x, x->i32, a_lin, "tdl.lin");
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntEQ, ltot, ln[0]), ljoin, ldiv);
    at(x, ldiv);
    LLVMValueRef dx = LLVMBuildURem(x->b, lin, ln[0], "");
    LLVMValueRef q = LLVMBuildUDiv(x->b, lin, ln[0], "");
    LLVMValueRef dy = LLVMBuildURem(x->b, q, ln[1], "");
    LLVMValueRef dz = LLVMBuildUDiv(x->b, q, ln[1], "");
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
    LLVMValueRef repl[6] = {cx, cy, cz, ln[0], ln[1], ln[2]};
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
        LLVMValueRef any = funnel_barrier(x, v->bar_id, icmp(x, LLVMIntNE, resume, none));
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
                ptx_ice("a barrier the funnel takes does not end its block");
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

    /* tidal_epilogue_head: the next logical block of the chunk, or claim */
    at(x, next);
    LLVMValueRef lnext = LLVMBuildAdd(x->b, load(x, x->i32, a_lin, ""), tl_c32(x, 1), "");
    LLVMBuildStore(x->b, lnext, a_lin);
    LLVMBuildCondBr(x->b, icmp(x, LLVMIntULT, lnext, load(x, x->i32, a_b1, "")), next2, claim);
    at(x, next2);
    if (v->between) barrier(x, v->bar_id);
    LLVMBuildBr(x->b, logical);

    /* tidal_epilogue_tail: everyone but the leader leaves; the leader leaves the launch
     * with the values of the last derivation. tdl.exit is also where the static fast
     * path's whole block exits (no chunk at all, or no tickets after its own). */
    at(x, depart);
    LLVMBuildCondBr(x->b, leader, depart_l, quit);
    at(x, quit);
    LLVMBuildRetVoid(x->b);
    at(x, depart_l);
    snippet_restored(x, &tidal_snippet_leave, &slots, "");
    LLVMBuildRetVoid(x->b);
}
