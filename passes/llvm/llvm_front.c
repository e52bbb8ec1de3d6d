/* llvm_front.c — the LLVM-IR front end of tidal-opt: parse and verify NVVM IR,
 * find kernels, lower to PTX through the NVPTX target, --stats, output. */
#include "llvm_internal.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ small helpers */

const char *tl_keep(tidal_llvm_module *m, char *s)
{
    if (!s) tl_oom();
    if (m->npool == m->cpool) {
        unsigned nc = m->cpool ? 2 * m->cpool : 16;
        char **np = realloc(m->pool, nc * sizeof *np);
        if (!np) tl_oom();
        m->pool = np;
        m->cpool = nc;
    }
    m->pool[m->npool++] = s;
    return s;
}

const char *tl_keepf(tidal_llvm_module *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf_portable(&s, fmt, ap) < 0) tl_oom();
    va_end(ap);
    return tl_keep(m, s);
}

int vasprintf_portable(char **out, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) return -1;
    *out = malloc((size_t)n + 1);
    if (!*out) return -1;
    return vsnprintf(*out, (size_t)n + 1, fmt, ap);
}

void tl_oom(void) { ptx_ice("out of memory"); }

const char *tl_value_name(LLVMValueRef v)
{
    size_t n;
    return LLVMGetValueName2(v, &n);
}

bool tl_name_is(LLVMValueRef v, const char *s)
{
    size_t n;
    const char *p = LLVMGetValueName2(v, &n);
    return n == strlen(s) && !memcmp(p, s, n);
}

/* A string attribute of a function, or NULL; *len set. */
const char *tl_fn_string_attr(LLVMValueRef f, const char *key, unsigned *len)
{
    LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, key, (unsigned)strlen(key));
    if (!a) return NULL;
    return LLVMGetStringAttributeValue(a, len);
}

/* ------------------------------------------------------------ parse */

/* LLVM cannot go on after a fatal error (and ends the process itself if this returns):
 * the program's fatal handler reports it (ptx.h). */
static void fatal_handler(const char *reason) { ptx_fatal(PTX_FATAL_LLVM, "%s", reason); }

static void init_llvm(void)
{
    static bool done;
    if (done) return;
    done = true;
    LLVMInstallFatalErrorHandler(fatal_handler);
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

/* LLVM's diagnostic, "name:line:col: error: msg\n<source line>\n<caret>" for text,
 * into d: its position, and the rest as the message. Bitcode errors have no position
 * (1:1 then; a leading "name: " and "error: " are LLVM's, dropped). */
static void llvm_diag(ptx_diag *d, const char *name, const char *msg)
{
    size_t nl = strlen(name);
    unsigned line = 1, col = 1;
    if (!strncmp(msg, name, nl) && msg[nl] == ':' && isdigit((unsigned char)msg[nl + 1])) {
        char *end;
        unsigned long l = strtoul(msg + nl + 1, &end, 10), c = 0;
        if (*end == ':' && isdigit((unsigned char)end[1])) c = strtoul(end + 1, &end, 10);
        if (!strncmp(end, ": error: ", 9)) {
            line = (unsigned)l;
            col = (unsigned)c;
            msg = end + 9;
        }
    } else {
        if (!strncmp(msg, name, nl) && msg[nl] == ':') msg += nl + 1;
        while (*msg == ' ') msg++;
        if (!strncmp(msg, "error: ", 7)) msg += 7;
    }
    size_t n = strlen(msg);
    if (n && msg[n - 1] == '\n') n--; /* ptx_diag_print ends the line */
    ptx_diag_error(d, line, col, "%.*s", (int)n, msg);
}

static bool is_kernel_cc(LLVMValueRef f) { return LLVMGetFunctionCallConv(f) == TL_PTX_KERNEL_CC; }

/* Kernels: the ptx_kernel calling convention (CC 71), or !nvvm.annotations
 * !{ptr @f, !"kernel", i32 1} (LLVM 22 upgrades those to CC 71 when it reads
 * the module; both are checked). */
static void find_kernels(tidal_llvm_module *m)
{
    unsigned nf = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f)) nf++;
    m->kernels = calloc(nf + 1, sizeof *m->kernels);
    if (!m->kernels) tl_oom();
    bool *annotated = calloc(nf + 1, 1);
    if (!annotated) tl_oom();
    unsigned nann = LLVMGetNamedMetadataNumOperands(m->mod, "nvvm.annotations");
    if (nann) {
        LLVMValueRef *ops = calloc(nann, sizeof *ops);
        if (!ops) tl_oom();
        LLVMGetNamedMetadataOperands(m->mod, "nvvm.annotations", ops);
        for (unsigned i = 0; i < nann; i++) {
            unsigned k = LLVMGetMDNodeNumOperands(ops[i]);
            if (k < 3) continue;
            LLVMValueRef *o = calloc(k, sizeof *o);
            if (!o) tl_oom();
            LLVMGetMDNodeOperands(ops[i], o);
            /* pairs after the function: !"kernel", i32 1 */
            for (unsigned j = 1; j + 1 < k; j += 2) {
                unsigned sl = 0;
                const char *s = o[j] ? LLVMGetMDString(o[j], &sl) : NULL;
                if (!s || sl != 6 || memcmp(s, "kernel", 6)) continue;
                if (!o[j + 1] || !LLVMIsAConstantInt(o[j + 1]) || !LLVMConstIntGetZExtValue(o[j + 1])) continue;
                unsigned idx = 0;
                for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f), idx++)
                    if (o[0] && f == o[0]) annotated[idx] = true;
            }
            free(o);
        }
        free(ops);
    }
    unsigned idx = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f), idx++)
        if (!LLVMIsDeclaration(f) && (is_kernel_cc(f) || annotated[idx])) m->kernels[m->nkernels++] = f;
    free(annotated);
}

tidal_llvm_module *tidal_llvm_parse(const char *name, const char *buf, size_t len, ptx_diag *d)
{
    init_llvm();
    tidal_llvm_module *m = calloc(1, sizeof *m);
    if (!m) tl_oom();
    m->name = strdup(name);
    if (!m->name) tl_oom();
    m->ctx = LLVMContextCreate();
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(buf, len, name);
    char *msg = NULL;
    if (LLVMParseIRInContext2(m->ctx, mb, &m->mod, &msg)) {
        llvm_diag(d, name, msg ? msg : "cannot read LLVM IR");
        LLVMDisposeMessage(msg);
        LLVMDisposeMemoryBuffer(mb);
        m->mod = NULL;
        tidal_llvm_free(m);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    LLVMDisposeMemoryBuffer(mb);
    /* Code generation assumes valid IR: check first. */
    if (tidal_llvm_verify(m, d)) {
        tidal_llvm_free(m);
        return NULL;
    }
    size_t tl = 0;
    const char *triple = LLVMGetTarget(m->mod);
    tl = strlen(triple);
    if (tl && strncmp(triple, "nvptx", 5)) {
        ptx_diag_error(d, 1, 1,
                       "not an NVPTX module (target triple '%s'); tidal reads NVVM IR "
                       "(nvptx64-nvidia-cuda)",
                       triple);
        tidal_llvm_free(m);
        return NULL;
    }
    if (!tl) LLVMSetTarget(m->mod, "nvptx64-nvidia-cuda");
    const unsigned char *u = (const unsigned char *)buf;
    if (!(len >= 2 && ((u[0] == 'B' && u[1] == 'C') || (u[0] == 0xDE && u[1] == 0xC0)))) {
        m->src = strndup(buf, len);
        if (!m->src) tl_oom();
    }
    find_kernels(m);
    return m;
}

void tidal_llvm_free(tidal_llvm_module *m)
{
    if (!m) return;
    if (m->mod) LLVMDisposeModule(m->mod);
    if (m->ctx) LLVMContextDispose(m->ctx);
    for (unsigned i = 0; i < m->npool; i++) free(m->pool[i]);
    free(m->pool);
    free(m->kernels);
    free(m->report);
    free(m->src);
    free(m->name);
    free(m);
}

int tidal_llvm_verify(tidal_llvm_module *m, ptx_diag *d)
{
    char *msg = NULL;
    if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
        const char *text = msg ? msg : "(no message)";
        size_t n = strlen(text);
        if (n && text[n - 1] == '\n') n--; /* ptx_diag_print ends the line */
        ptx_diag_error(d, 1, 1, "invalid LLVM IR: %.*s", (int)n, text);
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}

/* ------------------------------------------------------------ NVPTX lowering */

/* The first "target-cpu" of a function with a body, or NULL. */
static char *module_cpu(LLVMModuleRef mod)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        unsigned n = 0;
        const char *v = tl_fn_string_attr(f, "target-cpu", &n);
        if (v && n) return strndup(v, n);
    }
    return NULL;
}

/* "+ptxNN" from a function's "target-features", or "+ptx90" (the PTX ISA of
 * CUDA 13 and Triton 3.6). The SM comes from the CPU alone. */
static char *module_ptx_feature(LLVMModuleRef mod)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        unsigned n = 0;
        const char *v = tl_fn_string_attr(f, "target-features", &n);
        for (unsigned i = 0; v && i + 4 <= n; i++)
            if (!memcmp(v + i, "+ptx", 4)) {
                unsigned j = i + 4;
                while (j < n && v[j] >= '0' && v[j] <= '9') j++;
                return strndup(v + i, j - i);
            }
    }
    return strdup("+ptx90");
}

LLVMTargetMachineRef tl_target_machine(tidal_llvm_module *m, const char *arch, ptx_diag *d)
{
    init_llvm();
    const char *triple = LLVMGetTarget(m->mod);
    LLVMTargetRef t = NULL;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(triple, &t, &msg)) {
        ptx_diag_error(d, 0, 0, "no NVPTX target for '%s': %s", triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    char *cpu = arch ? strdup(arch) : module_cpu(m->mod);
    if (!cpu) cpu = strdup("sm_90a");
    char *feat = module_ptx_feature(m->mod);
    if (!cpu || !feat) tl_oom();
    if (strncmp(cpu, "sm_", 3)) {
        ptx_diag_error(d, 0, 0, "unknown GPU architecture '%s' (expected sm_NN, e.g. sm_90a)", cpu);
        free(cpu);
        free(feat);
        return NULL;
    }
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(t, triple, cpu, feat, LLVMCodeGenLevelDefault, LLVMRelocDefault, LLVMCodeModelDefault);
    free(cpu);
    free(feat);
    if (!tm) ptx_diag_error(d, 0, 0, "cannot create an NVPTX target machine for '%s'", triple);
    return tm;
}

/* Emits PTX for mod (which code generation changes: pass a copy). */
char *tl_emit_ptx(LLVMModuleRef mod, LLVMTargetMachineRef tm, size_t *len, ptx_diag *d)
{
    /* One CPU for the whole module: the function attributes would override
     * the target machine's (and the .target line comes from the latter). */
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, "target-cpu", 10);
        LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, "target-features", 15);
    }
    if (!*LLVMGetDataLayoutStr(mod)) {
        LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
        LLVMSetModuleDataLayout(mod, td);
        LLVMDisposeTargetData(td);
    }
    char *msg = NULL;
    LLVMMemoryBufferRef out = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &out)) {
        ptx_diag_error(d, 0, 0, "NVPTX code generation failed: %s", msg ? msg : "(no message)");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    size_t n = LLVMGetBufferSize(out);
    char *text = malloc(n + 1);
    if (!text) tl_oom();
    memcpy(text, LLVMGetBufferStart(out), n);
    text[n] = 0;
    LLVMDisposeMemoryBuffer(out);
    *len = n;
    return text;
}

char *tidal_llvm_to_ptx(tidal_llvm_module *m, const char *arch, size_t *len, ptx_diag *d)
{
    LLVMTargetMachineRef tm = tl_target_machine(m, arch, d);
    if (!tm) return NULL;
    LLVMModuleRef copy = LLVMCloneModule(m->mod);
    char *text = tl_emit_ptx(copy, tm, len, d);
    LLVMDisposeModule(copy);
    LLVMDisposeTargetMachine(tm);
    return text;
}

/* ------------------------------------------------------------ --stats */

/* The special register an intrinsic reads ("llvm.nvvm.read.ptx.sreg.ctaid.x"). */
static ptx_sreg intrinsic_sreg(const char *name, size_t n)
{
    static const char pre[] = "llvm.nvvm.read.ptx.sreg.";
    size_t pl = sizeof pre - 1;
    if (n <= pl || memcmp(name, pre, pl)) return PTX_SREG_NONE;
    char buf[64];
    size_t k = n - pl;
    if (k + 2 > sizeof buf) return PTX_SREG_NONE;
    buf[0] = '%';
    memcpy(buf + 1, name + pl, k);
    ptx_sreg r = ptx_sreg_classify(buf, k + 1, NULL);
    if (r == PTX_SREG_NONE && k > 5 && !memcmp(name + pl, "envreg", 6)) r = PTX_SREG_ENVREG;
    if (r == PTX_SREG_NONE && k > 7 && !memcmp(name + pl, "lanemask", 8)) r = PTX_SREG_LANEMASK;
    return r;
}

tl_callee_kind tl_classify_callee(LLVMValueRef callee, ptx_sreg *sreg)
{
    if (sreg) *sreg = PTX_SREG_NONE;
    if (!callee) return TL_CALL_INDIRECT;
    if (LLVMIsAInlineAsm(callee)) return TL_CALL_ASM;
    if (!LLVMIsAFunction(callee)) return TL_CALL_INDIRECT;
    size_t n;
    const char *name = LLVMGetValueName2(callee, &n);
    if (n < 5 || memcmp(name, "llvm.", 5)) return TL_CALL_FUNCTION;
    ptx_sreg r = intrinsic_sreg(name, n);
    if (r != PTX_SREG_NONE) {
        if (sreg) *sreg = r;
        return TL_CALL_SREG;
    }
    if (n >= 25 && !memcmp(name, "llvm.nvvm.barrier.cluster", 25)) return TL_CALL_CLUSTER_BARRIER;
    if (n >= 18 && !memcmp(name, "llvm.nvvm.bar.warp", 18)) return TL_CALL_INTRINSIC;
    if ((n >= 17 && !memcmp(name, "llvm.nvvm.barrier", 17)) || (n >= 14 && !memcmp(name, "llvm.nvvm.bar.", 14)))
        return TL_CALL_BARRIER;
    return TL_CALL_INTRINSIC;
}

LLVMValueRef tl_call_callee(LLVMValueRef call)
{
    LLVMValueRef c = LLVMGetCalledValue(call);
    return c;
}

void tidal_llvm_stats(tidal_llvm_module *m, FILE *out)
{
    unsigned nf = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f)) nf += !LLVMIsDeclaration(f);
    fprintf(out, "module %s: LLVM IR, triple %s, %u functions, %u kernels\n", m->name, LLVMGetTarget(m->mod), nf,
            m->nkernels);
    for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f)) continue;
        bool kernel = false;
        for (unsigned k = 0; k < m->nkernels; k++) kernel |= m->kernels[k] == f;
        unsigned ninstr = 0, nblocks = 0, nbar = 0, ncbar = 0, ncalls = 0, sregs[PTX_SREG_COUNT] = {0};
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
            nblocks++;
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
                ninstr++;
                if (!LLVMIsACallInst(i)) continue;
                ptx_sreg r;
                switch (tl_classify_callee(tl_call_callee(i), &r)) {
                case TL_CALL_SREG: sregs[r]++; break;
                case TL_CALL_BARRIER: nbar++; break;
                case TL_CALL_CLUSTER_BARRIER: ncbar++; break;
                case TL_CALL_FUNCTION:
                case TL_CALL_INDIRECT: ncalls++; break;
                default: break;
                }
            }
        }
        fprintf(out, "%s %s: %u instructions, %u blocks, %u barriers", kernel ? "kernel" : "func", tl_value_name(f),
                ninstr, nblocks, nbar);
        if (ncbar) fprintf(out, ", %u cluster barriers", ncbar);
        fprintf(out, ", %u calls; special registers:", ncalls);
        bool any = false;
        for (int r = 0; r < PTX_SREG_COUNT; r++)
            if (sregs[r]) {
                fprintf(out, "%s %s %u", any ? "," : "", ptx_sreg_name((ptx_sreg)r), sregs[r]);
                any = true;
            }
        fputs(any ? "\n" : " none\n", out);
    }
}

/* ------------------------------------------------------------ output */

int tidal_llvm_write(tidal_llvm_module *m, const char *path, bool bitcode)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) return -1;
    int werr = 0;
    if (bitcode) {
        LLVMMemoryBufferRef b = LLVMWriteBitcodeToMemoryBuffer(m->mod);
        size_t n = LLVMGetBufferSize(b);
        werr = fwrite(LLVMGetBufferStart(b), 1, n, f) != n;
        LLVMDisposeMemoryBuffer(b);
    } else {
        char *s = LLVMPrintModuleToString(m->mod);
        size_t n = strlen(s);
        werr = fwrite(s, 1, n, f) != n;
        LLVMDisposeMessage(s);
    }
    if (f != stdout ? fclose(f) : fflush(f)) werr = 1;
    if (werr && f != stdout) remove(path);
    return werr ? -1 : 0;
}
