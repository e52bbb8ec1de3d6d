/* tidal.h — the tidal transform: SM gate + persistent logical-block loop.
 *
 * `tidal_run` rewrites every .entry of a module that it can prove safe and
 * leaves every other kernel byte-identical, recording why. The device-side
 * contract (control block, launch cases) is abi/tidal_abi.h. */
#ifndef TIDAL_PASS_H
#define TIDAL_PASS_H

#include "ptx.h"

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
    const char *reason; /* refusal reason: a stable short code, e.g. "clusters" */
    const char *detail; /* human explanation with a line number */
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
    bool reshaped_clone;         /* emit NAME__tidal_reshaped (launch case c); default true */
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

/* The default options: a clone per kernel, original entries verbatim. */
#define TIDAL_OPTIONS_DEFAULT \
    ((tidal_options){.reshaped_clone = true, .case_b = false, .assume_balanced_arrive = false})

/* The drop-in drivers' options from the environment (their callers choose their arguments):
 * TIDAL_CASE_B set and not "0" asks for case b, TIDAL_ASSUME_BALANCED_ARRIVE (not "0") for
 * assume_balanced_arrive. */
void tidal_options_from_env(tidal_options *opt);

/* Runs the transform on every kernel. Returns 0, or -1 on malformed input
 * (diag set). The report is owned by the module's arena. */
int tidal_run(ptx_module *m, const tidal_options *opt, tidal_report *rep, ptx_diag *diag);

void tidal_report_print_text(const tidal_report *r, FILE *out);
void tidal_report_print_json(const tidal_report *r, FILE *out);

/* The drop-in drivers' first step (tidal-ptxas, tidal-nvcc): read the PTX file `path`
 * (named `shown` in messages), parse it and run the transform. Returns the module, to be
 * printed and freed by the caller, with *rep filled. NULL when it cannot be used:
 * *why = -1, the file cannot be read (errno set, nothing printed); *why = 1, it does not
 * parse or the transform failed (the diagnostic is on stderr after "TOOL: warning: ";
 * the caller says what happens to the file instead). */
ptx_module *tidal_rewrite_file(const char *path, const char *shown, const char *tool, const tidal_options *opt,
                               tidal_report *rep, int *why);

#endif
