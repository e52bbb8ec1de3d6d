/* tidal_internal.h — the state the tidal transform's phases hand on, and the helpers
 * its files share. Phases: tidal_facts.c, tidal_converge.c, tidal_plan.c,
 * tidal_rewrite.c, tidal_clone.c; the table and the runner: tidal_pipeline.c; -d:
 * tidal_dump.c. */
#ifndef TIDAL_INTERNAL_H
#define TIDAL_INTERNAL_H

#include "ptx_internal.h"
#include "tidal.h"

#include <stdlib.h>
#include <string.h>

/* What a function (and everything it calls) does that matters to the rewrite. */
typedef struct tidal_facts {
    bool cta_barrier;     /* bar.sync/barrier.sync/bar.red/bar.arrive/... (CTA scope) */
    bool barrier_counted; /* some CTA barrier names a thread count */
    bool barrier_arrive;  /* bar.arrive / barrier.arrive */
    bool barrier_red;     /* bar.red / barrier.red */
    bool exit_instr;      /* `exit` (ends the thread even inside a .func) */
    bool warp_sync;       /* shfl/vote/match/mma/... : warp-collective instructions */
    bool shared_mem;      /* declares or accesses shared memory */
    bool reads_ctaid;     /* %ctaid or %nctaid */
    bool indirect_call;
    bool barrier_guarded; /* a predicated CTA barrier */
    uint16_t barrier_ids; /* ids named by literal operands (bit i = id i) */
    bool barrier_id_reg;  /* some barrier names its id in a register */
    /* First offending statement for each refusal reason (token index), or UINT32_MAX. */
    uint32_t cluster_tok;   /* thread-block clusters */
    uint32_t envreg_tok;    /* %envreg: cooperative launch / grid sync */
    uint32_t devlaunch_tok; /* device-side launch (dynamic parallelism) */
    uint32_t arrive_tok;    /* bar.arrive / barrier.arrive: no proof that a block leaves none half arrived */
    /* Of the function's own statements only (tidal_facts_merge does not carry them). */
    uint32_t prefix_tok;       /* a name that collides with tidal's %tdl_ / $tdl_ / __tidal prefixes */
    uint32_t ctaid_vector_tok; /* %ctaid / %nctaid read as a whole vector */
    bool nul_byte;             /* the function's text holds a NUL byte (in a comment) */
} tidal_facts;

/* Full-CTA barrier: bar.sync/barrier.sync/bar.cta.sync without a thread count
 * (every non-exited thread must arrive). */
bool tidal_is_full_barrier(const ptx_module *m, const ptx_stmt *s);

/* No facts: nothing done, every token field UINT32_MAX. */
void tidal_facts_empty(tidal_facts *x);
/* Facts of one function's own statements (not its callees). */
void tidal_facts_local(const ptx_func *f, tidal_facts *out);
/* Adds a callee's facts into a caller's. */
void tidal_facts_merge(tidal_facts *into, const tidal_facts *from);

/* Convergence of exits: true when no thread can leave the kernel body while
 * another thread of the CTA may still reach a CTA barrier. `stmt_is_barrier` says,
 * per statement index, whether the statement is (or, for a call, reaches) a barrier
 * that counts. On false, *why_tok is the offending branch's token and *barrier_tok a
 * barrier the threads that stay can still reach (UINT32_MAX if none was found). */
bool tidal_exits_convergent(const ptx_func *f, const ptx_cfg *cfg, const bool *stmt_is_barrier, uint32_t *why_tok,
                            uint32_t *barrier_tok);

/* ------------------------------------------------------------ the phases' state */

/* One function of the module (facts phase). */
typedef struct tidal_fn {
    ptx_func *f;
    tidal_facts local;   /* its own statements */
    tidal_facts closure; /* with everything it may call */
    bool closure_done, visiting;
} tidal_fn;

/* What the module does at module scope (facts phase). */
typedef struct tidal_module_facts {
    uint32_t reserved_tok; /* a module-scope name tidal defines, or UINT32_MAX */
    bool rewritten;        /* the tidal pass rewrote this module already, in this process */
    bool dynamic_shared;   /* an .extern .shared variable: original entries stay verbatim */
    bool shared_variables; /* a module-scope .shared variable */
} tidal_module_facts;

/* Whether a kernel's exits can be made safe, and how (convergence phase). */
typedef struct tidal_convergence {
    bool analysed;        /* false: the module was rewritten already; nothing looked at */
    tidal_reason refusal; /* TIDAL_REASON_NONE, or BAD_CONTROL_FLOW / BARRIER_IDS / DIVERGENT_EXIT */
    const char *detail;   /* the refusal's detail (module arena) */
    tidal_exit_mode mode; /* without a refusal */
    unsigned bar_id;      /* tidal's barrier id, without a refusal */
} tidal_convergence;

/* The statements the rewrite inserts into a kernel whose text differs between the
 * original entry and the clone: their indices and both texts (rewrite phase). The clone
 * phase prints the clone from the same statements with the clone's texts swapped in. */
enum { TIDAL_PIECE_SHARED, TIDAL_PIECE_PROLOGUE, TIDAL_PIECE_EPILOGUE, TIDAL_PIECE_DIRECT, TIDAL_NPIECES };
typedef struct tidal_pieces {
    uint32_t at[TIDAL_NPIECES];
    char *original[TIDAL_NPIECES], *clone[TIDAL_NPIECES];
    char *dsh; /* the clone's extern array, NAME__tidal_dsh */
} tidal_pieces;

/* One kernel (.entry with a body), in module order. */
typedef struct tidal_kernel {
    tidal_fn *fn;
    tidal_convergence conv;    /* convergence phase */
    tidal_kernel_report *plan; /* plan phase: its line of the report is its plan */
    tidal_pieces pieces;       /* rewrite phase */
    bool rewritten;            /* rewrite phase: its body was rewritten */
    const char *clone_text;    /* clone phase: NAME__tidal_reshaped as inserted (module arena; NULL: none) */
    const char *nparams_text;  /* clone phase: NAME__tidal_nparams as inserted */
} tidal_kernel;

struct tidal_state {
    ptx_module *m;
    const tidal_options *opt;
    tidal_report *rep;
    tidal_fn *fns; /* every function, declarations included, in module order */
    uint32_t nfns;
    tidal_module_facts mod;
    tidal_kernel *kernels;
    uint32_t nkernels;
    /* plan phase, module level */
    bool ctl;            /* the module defines __tidal_ctl (case b for some original entry) */
    uint32_t funnel_ids; /* bit k: a funnel kernel uses barrier id k (TIDAL_FUNNEL_FUNC) */
    /* rewrite phase: the module items it inserted, [globals_at, globals_at + nglobals) */
    uint32_t globals_at, nglobals;
};

/* The rewrite phase's texts: into f's statements (the clone's, or the original entry's
 * again), and freed. */
void tidal_pieces_apply(ptx_func *f, const tidal_pieces *pc, bool clone);
void tidal_pieces_free(tidal_pieces *pc);

void tidal_phase_facts(tidal_state *s);
void tidal_phase_convergence(tidal_state *s);
void tidal_phase_plan(tidal_state *s);
void tidal_phase_rewrite(tidal_state *s);
void tidal_phase_clone(tidal_state *s);

void tidal_dump_facts(const tidal_state *s, FILE *out);
void tidal_dump_convergence(const tidal_state *s, FILE *out);
void tidal_dump_plan(const tidal_state *s, FILE *out);
void tidal_dump_rewrite(const tidal_state *s, FILE *out);
void tidal_dump_clone(const tidal_state *s, FILE *out);

/* Facts of what a call statement may run: its callee and everything that one calls, or
 * for an indirect call every .func of the module (after the facts phase). */
void tidal_callee_facts(tidal_state *s, const ptx_stmt *call, tidal_facts *out);
/* Statement i of f is a CTA barrier or a call that reaches one. */
bool tidal_stmt_reaches_barrier(tidal_state *s, const ptx_func *f, uint32_t i);

/* The refusal rule both paths apply to what a kernel's callees do (facts of the PTX
 * callees, or of the IR callees: passes/llvm/llvm_verdict.c): exit-in-callee before
 * callee-reads-ctaid; TIDAL_REASON_NONE when neither. */
tidal_reason tidal_callee_refusal(const tidal_facts *callees);

/* "line N: 'TOKEN'" (the token cut at 63 bytes), in the module's arena: where a refusal
 * detail points. */
const char *tidal_tok_line(ptx_module *m, uint32_t t);

/* ------------------------------------------------------------ text building */

typedef struct tidal_sbuf {
    char *p;
    size_t n, cap;
} tidal_sbuf;

static inline void tidal_sb_put(tidal_sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) ptx_ice("out of memory");
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static inline void tidal_sb_str(tidal_sbuf *b, const char *s) { tidal_sb_put(b, s, strlen(s)); }

/* The PTX skeleton tidal inserts (tidal_code.c); the protocol's own code is in
 * tidal_protocol.c. */
extern const char tidal_reg_decls[];
extern const char tidal_prologue_original_grid[];
extern const char tidal_prologue_reshaped_grid[];
extern const char tidal_values_original_grid[];
extern const char tidal_values_reshaped_grid[];
extern const char tidal_ctl_fallback[];
extern const char tidal_prologue_common[];
extern const char tidal_epilogue_head[];
extern const char tidal_epilogue_tail[];
extern const char tidal_original_reload[];
extern const char tidal_reshaped_reload[];

/* Opcode text helpers: `needle` occurs in s[0..n); s starts with `root` followed
 * by '.' or the end. */
bool tidal_text_contains(const char *s, size_t n, const char *needle);
bool tidal_opcode_root_is(const char *s, size_t n, const char *root);

#endif
