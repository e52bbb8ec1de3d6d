/* tidal.h — the tidal transform: SM gate + persistent logical-block loop.
 *
 * `tidal_run` rewrites every .entry of a module that it can prove safe and
 * leaves every other kernel byte-identical, recording why. It is a pipeline of
 * phases (tidal_phases: facts, convergence, plan, rewrite, clone) with typed state
 * between them; docs/design.md §2 "Pipeline". The device-side contract (control
 * block, launch cases) is abi/tidal_abi.h.
 *
 * Diagnostics: nothing here prints or exits. Bad input is refused per kernel
 * (the report says why); broken invariants go through ptx_ice (ptx.h). */
#ifndef TIDAL_PASS_H
#define TIDAL_PASS_H

#include "ptx.h"

/* The refusal table (tidal_refusal.c): every reason a kernel stays byte-identical, for
 * the PTX pass and for the IR-level rewrite (passes/llvm/) alike. The PTX pass checks its
 * reasons in this order and reports the first that holds. */
typedef enum tidal_reason {
    TIDAL_REASON_NONE = 0, /* not refused */
    TIDAL_REFUSE_ADDRESS_SIZE,
    TIDAL_REFUSE_PTX_VERSION,
    TIDAL_REFUSE_TARGET,
    TIDAL_REFUSE_CLUSTERS,
    TIDAL_REFUSE_COOPERATIVE_LAUNCH,
    TIDAL_REFUSE_DEVICE_LAUNCH,
    TIDAL_REFUSE_NAMED_ARRIVE,
    TIDAL_REFUSE_NUL_BYTE,
    TIDAL_REFUSE_NAME_COLLISION,
    TIDAL_REFUSE_EXIT_IN_CALLEE,
    TIDAL_REFUSE_CALLEE_READS_CTAID,
    TIDAL_REFUSE_CTAID_VECTOR,
    TIDAL_REFUSE_BAD_CONTROL_FLOW, /* the convergence phase's three */
    TIDAL_REFUSE_BARRIER_IDS,
    TIDAL_REFUSE_DIVERGENT_EXIT,
    TIDAL_REFUSE_IR_PTX_NAME, /* the IR-level rewrite's own (--emit=llvm|bc) */
    TIDAL_REFUSE_IR_DEBUG_INFO,
    TIDAL_REFUSE_IR_UNSUPPORTED,
    TIDAL_REFUSE_IR_INLINE_ASM,
    TIDAL_REFUSE_IR_BARRIER_FUNNEL,
    TIDAL_NREASONS
} tidal_reason;

typedef struct tidal_refusal {
    const char *name; /* the report's stable code, e.g. "clusters" */
    const char *why;  /* one line: why such a kernel is not rewritten */
    bool ir_only;     /* only the IR-level rewrite refuses for it */
} tidal_refusal;

/* Indexed by tidal_reason; entry 0 (TIDAL_REASON_NONE) has no name. */
extern const tidal_refusal tidal_refusals[TIDAL_NREASONS];
const char *tidal_reason_name(tidal_reason r);

typedef enum tidal_verdict {
    TIDAL_REWRITTEN,
    TIDAL_REFUSED,
} tidal_verdict;

/* How a rewritten kernel's exits and barriers are made safe (docs/design.md, "Exits and
 * barriers"); tidal_exit_mode_name gives the report's word for it. */
typedef enum tidal_exit_mode {
    TIDAL_EXIT_NONE, /* not rewritten */
    TIDAL_EXIT_NO_BARRIERS,
    TIDAL_EXIT_CONVERGENT, /* exits convergent: threads that leave wait at tidal's barrier */
    TIDAL_EXIT_FUNNEL,     /* the body's full barriers and exits through one funnel barrier */
} tidal_exit_mode;

/* "no-barriers", "convergent-exits", "barrier-funnel" ("" for TIDAL_EXIT_NONE). */
const char *tidal_exit_mode_name(tidal_exit_mode m);

typedef struct tidal_kernel_report {
    const char *name;
    tidal_verdict verdict;
    tidal_reason reason; /* why it was refused (tidal_reason_name: the report's code) */
    const char *detail;  /* human explanation with a line number */
    tidal_exit_mode exit_mode;
    unsigned bar_id;                 /* rewritten: the barrier id tidal's own barriers use */
    unsigned regs_added;             /* virtual registers the rewrite declares */
    unsigned barrier_between_blocks; /* 1 when logical blocks are separated by bar.sync */
    unsigned original_verbatim;      /* 1 when the original entry was left byte-identical: no launch
                                        case b for it (case b off, or dynamic shared memory) */
    unsigned verbatim_shared;        /* ... and case b was asked for, but the module has dynamic
                                        shared memory */
    unsigned line;                   /* line of the .entry */
} tidal_kernel_report;

typedef struct tidal_report {
    const char *file; /* what the report names: the PTX file, or (set by the caller) the
                         source the PTX was generated from */
    const char *note; /* NULL, or what `file` and the line numbers are when the PTX is
                         not `file` itself (printed in parentheses after it) */
    tidal_kernel_report *kernels;
    unsigned nkernels;
} tidal_report;

typedef struct tidal_options {
    bool case_b;                 /* put the case-b check into the original entry (launches that bypass
                                    libtidal obey the module's attached partition); default false: the
                                    original entry stays byte-identical, so launches of it cost nothing
                                    on the device (the check is a constant load on every block's path:
                                    +0.2 us per launch on the H200) */
    bool assume_balanced_arrive; /* rewrite kernels with bar.arrive / barrier.arrive: the user
                            asserts that no logical block ends with a named barrier's phase
                            half arrived (else the next logical block run by the same worker
                            block would complete its wait early); default false: refused */
} tidal_options;

/* The default options: original entries verbatim (every rewritten kernel gets its clone,
 * NAME__tidal_reshaped, launch case c). */
#define TIDAL_OPTIONS_DEFAULT ((tidal_options){.case_b = false, .assume_balanced_arrive = false})

/* The drop-in drivers' options from the environment (their callers choose their arguments):
 * TIDAL_CASE_B set and not "0" asks for case b, TIDAL_ASSUME_BALANCED_ARRIVE (not "0") for
 * assume_balanced_arrive. */
void tidal_options_from_env(tidal_options *opt);

/* ------------------------------------------------------------ the pipeline */

/* The state the phases hand on (tidal_internal.h): the facts of every function, the
 * convergence verdict and the plan of every kernel, the texts the rewrite made for the
 * clone. */
typedef struct tidal_state tidal_state;

/* The transform's phases, in the order they run. Each reads what the phases before it
 * left in the state; `dump` prints that state for tidal-opt -d. */
typedef struct tidal_phase {
    const char *name; /* "facts" */
    char letter;      /* tidal-opt -d LETTER (or NAME) dumps the state after this phase */
    const char *help; /* one line for --help */
    void (*run)(tidal_state *s);
    void (*dump)(const tidal_state *s, FILE *out);
} tidal_phase;

enum {
    TIDAL_PHASE_FACTS,       /* what each function does, and with what it calls */
    TIDAL_PHASE_CONVERGENCE, /* per kernel: exit mode and tidal's barrier id, or why not */
    TIDAL_PHASE_PLAN,        /* per kernel: rewrite (how) or refuse (why): the report */
    TIDAL_PHASE_REWRITE,     /* the kernels' bodies and the module's globals */
    TIDAL_PHASE_CLONE,       /* NAME__tidal_reshaped after each rewritten kernel */
    TIDAL_NPHASES
};
extern const tidal_phase tidal_phases[TIDAL_NPHASES];

/* How much of the pipeline runs and what it dumps. */
typedef struct tidal_pipeline {
    unsigned last;  /* the last phase run (TIDAL_PHASE_PLAN: decide, change nothing) */
    unsigned dumps; /* bit k: tidal_phases[k].dump after phase k runs */
    FILE *dump_out;
} tidal_pipeline;

/* The whole transform, no dumps. */
#define TIDAL_PIPELINE_ALL ((tidal_pipeline){.last = TIDAL_PHASE_CLONE, .dumps = 0, .dump_out = NULL})

/* Runs the phases 0..p->last (p NULL: all) on every kernel of m and fills *rep (owned by
 * the module's arena); from TIDAL_PHASE_PLAN on the report is complete. opt NULL: the
 * defaults. Cannot fail: what the transform cannot take is refused per kernel. */
void tidal_run_pipeline(ptx_module *m, const tidal_options *opt, const tidal_pipeline *p, tidal_report *rep);
void tidal_run(ptx_module *m, const tidal_options *opt, tidal_report *rep);

void tidal_report_print_text(const tidal_report *r, FILE *out);
void tidal_report_print_json(const tidal_report *r, FILE *out);

/* The drop-in drivers' first step (tidal-ptxas, tidal-nvcc): read the PTX file `path`
 * (named `shown` in messages), parse it and run the transform. Returns the module, to be
 * printed and freed by the caller, with *rep filled. NULL when it cannot be used:
 * *why = -1, the file cannot be read (errno set); *why = 1, it does not parse (*diag
 * says why). Prints nothing: the caller says what happens to the file instead. */
ptx_module *tidal_rewrite_file(const char *path, const char *shown, const tidal_options *opt, tidal_report *rep,
                               ptx_diag *diag, int *why);

#endif
