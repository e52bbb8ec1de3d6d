/* tidal_internal.h — analysis results shared by the tidal transform's files. */
#ifndef TIDAL_INTERNAL_H
#define TIDAL_INTERNAL_H

#include "ptx_internal.h"
#include "tidal.h"

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
    uint32_t prefix_tok;    /* a name that collides with tidal's %tdl_ / $tdl_ prefix */
    uint32_t arrive_tok;    /* bar.arrive / barrier.arrive: no proof that a block leaves none half arrived */
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
