/* llvm_internal.h — shared by the files of the LLVM-IR path. */
#ifndef TIDAL_LLVM_INTERNAL_H
#define TIDAL_LLVM_INTERNAL_H

#include "tidal_llvm.h"
#include "ptx_internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdarg.h>

/* The ptx_kernel calling convention (llvm/IR/CallingConv.h: PTX_Kernel = 71). */
#define TL_PTX_KERNEL_CC 71

struct tidal_llvm_module {
    char *name;
    char *src; /* the .ll text (NULL for bitcode): report lines */
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMValueRef *kernels; /* functions with bodies, module order */
    unsigned nkernels;
    tidal_kernel_report *report; /* tidal_llvm_tidal's */
    char **pool;                 /* strings the report points to */
    unsigned npool, cpool;
};

typedef enum tl_callee_kind {
    TL_CALL_FUNCTION, /* a defined or declared non-intrinsic function */
    TL_CALL_INDIRECT,
    TL_CALL_ASM,
    TL_CALL_SREG,            /* llvm.nvvm.read.ptx.sreg.* */
    TL_CALL_BARRIER,         /* CTA barriers: llvm.nvvm.barrier*, llvm.nvvm.bar.* (not bar.warp) */
    TL_CALL_CLUSTER_BARRIER, /* llvm.nvvm.barrier.cluster.* */
    TL_CALL_INTRINSIC,       /* any other llvm.* */
} tl_callee_kind;

tl_callee_kind tl_classify_callee(LLVMValueRef callee, ptx_sreg *sreg);
LLVMValueRef tl_call_callee(LLVMValueRef call);

int vasprintf_portable(char **out, const char *fmt, va_list ap);
const char *tl_keep(tidal_llvm_module *m, char *s);
const char *tl_keepf(tidal_llvm_module *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_oom(void) __attribute__((noreturn));
const char *tl_value_name(LLVMValueRef v);
bool tl_name_is(LLVMValueRef v, const char *s);
const char *tl_fn_string_attr(LLVMValueRef f, const char *key, unsigned *len);

LLVMTargetMachineRef tl_target_machine(tidal_llvm_module *m, const char *arch, ptx_diag *d);
char *tl_emit_ptx(LLVMModuleRef mod, LLVMTargetMachineRef tm, size_t *len, ptx_diag *d);

/* The IR-level tidal transform (tidal_llvm_tidal in llvm_tidal.c). */

typedef struct verdict {
    bool ok;
    tidal_reason reason;
    const char *detail;
    tidal_exit_mode exit_mode;
    unsigned between; /* barrier between logical blocks */
    unsigned bar_id;  /* tidal's barrier id */
} verdict;

/* llvm_verdict.c */
int tl_ptx_verdicts(tidal_llvm_module *m, LLVMTargetMachineRef tm, const tidal_options *opt, verdict *v,
                    bool *big_shared, ptx_diag *d);
bool tl_ir_checks(tidal_llvm_module *m, LLVMValueRef f, verdict *v);

typedef struct irb {
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMValueRef f;
    LLVMTypeRef i1, i8, i32, i64, vd, p0;
    LLVMValueRef ctl_gv, sh_gv, dsh_gv; /* @__tidal_ctl, @__tidal_sh (original entries), the clone's @K__tidal_dsh */
} irb;

typedef struct body {
    LLVMBasicBlockRef *blocks; /* the original body, entry first */
    unsigned n;
} body;

/* llvm_protocol.c */
LLVMValueRef tl_c32(irb *x, unsigned long long v);
LLVMValueRef tl_c64(irb *x, unsigned long long v);
body tl_body_of(LLVMValueRef f);
void tl_build(irb *x, body *bd, LLVMBasicBlockRef direct, const verdict *v);
void tl_funnel_prepare(irb *x, LLVMValueRef f, LLVMTargetMachineRef tm, LLVMPassBuilderOptionsRef po);

/* llvm_clone.c */
void tl_map_globals(LLVMModuleRef clone, LLVMModuleRef orig);
LLVMValueRef tl_nth_function(LLVMModuleRef m, unsigned idx);
LLVMBasicBlockRef tl_move_body(LLVMValueRef from, LLVMValueRef to, unsigned nparams);
void tl_drop_wrong_attrs(LLVMValueRef f);
LLVMValueRef tl_make_clone_decl(irb *x, LLVMValueRef k, LLVMTypeRef launch_ty);
/* k's name + suffix (K__tidal_reshaped, K__tidal_nparams), malloc'ed */
char *tl_suffixed_name(LLVMValueRef k, const char *suffix);

#endif
