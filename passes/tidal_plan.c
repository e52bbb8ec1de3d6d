/* tidal_plan.c — the plan phase: per kernel, rewrite it (and how) or refuse it (the
 * first rule below that holds, in the refusal table's order: tidal_refusal.c); per
 * module, whether it gets __tidal_ctl and which funnel barriers. A kernel's plan is its
 * line of the report (tidal_kernel_report): the verdict and the reason, or the exit
 * mode, tidal's barrier id, the barrier between logical blocks and whether the original
 * entry stays verbatim. The phases after this one carry the plan out. */
#include "tidal_internal.h"

#include <stdio.h>

/* A refusal rule: the reason it refuses kernel k for (and the detail), or
 * TIDAL_REASON_NONE. */
typedef tidal_reason (*rule_fn)(tidal_state *s, const tidal_kernel *k, const char **detail);

static tidal_reason address_size(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    (void)k;
    if (s->m->address_size == 64) return TIDAL_REASON_NONE;
    *detail = "only .address_size 64 modules are rewritten";
    return TIDAL_REFUSE_ADDRESS_SIZE;
}

static tidal_reason ptx_version(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    (void)k;
    const ptx_module *m = s->m;
    if (m->version_major > 6 || (m->version_major == 6 && m->version_minor >= 2)) return TIDAL_REASON_NONE;
    *detail = ptx_fmt(s->m,
                      "PTX %u.%u is older than 6.2 (tidal's code needs .relaxed "
                      "atomics, barrier.red and nanosleep)",
                      m->version_major, m->version_minor);
    return TIDAL_REFUSE_PTX_VERSION;
}

static tidal_reason target(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    (void)k;
    unsigned sm = 0;
    if (sscanf(s->m->target, "sm_%u", &sm) == 1 && sm >= 70) return TIDAL_REASON_NONE;
    *detail = ptx_fmt(s->m, "target '%s' is older than sm_70 (needs .relaxed atomics)",
                      s->m->target[0] ? s->m->target : "(none)");
    return TIDAL_REFUSE_TARGET;
}

/* A rule that holds where a fact names an offending token t: "PHRASE (line N: 'TOKEN')". */
static tidal_reason at_token(tidal_state *s, uint32_t t, tidal_reason why, const char *phrase, const char **detail)
{
    if (t == UINT32_MAX) return TIDAL_REASON_NONE;
    *detail = ptx_fmt(s->m, "%s (%s)", phrase, tidal_tok_line(s->m, t));
    return why;
}

static tidal_reason clusters(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    return at_token(s, k->fn->closure.cluster_tok, TIDAL_REFUSE_CLUSTERS, "uses thread-block clusters", detail);
}

static tidal_reason cooperative_launch(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    return at_token(s, k->fn->closure.envreg_tok, TIDAL_REFUSE_COOPERATIVE_LAUNCH,
                    "reads the launch environment, as grid-wide sync does", detail);
}

static tidal_reason device_launch(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    return at_token(s, k->fn->closure.devlaunch_tok, TIDAL_REFUSE_DEVICE_LAUNCH, "launches kernels from the device",
                    detail);
}

/* A worker block runs many logical blocks; the hardware resets a named barrier only
 * when the block exits. A logical block that ends with a phase half arrived (a
 * block-uniform branch around the waiting side, test/gpu rc_unbalanced) completes the
 * next logical block's wait early: a race the original cannot have. */
static tidal_reason named_arrive(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    uint32_t t = k->fn->closure.arrive_tok;
    if (t == UINT32_MAX || s->opt->assume_balanced_arrive) return TIDAL_REASON_NONE;
    *detail = ptx_fmt(s->m,
                      "arrives at a named barrier without waiting (%s): a logical block that ends with the "
                      "barrier's phase half arrived would complete the next logical block's wait early, and no "
                      "proof that every logical block balances its arrivals is made (--assume-balanced-arrive "
                      "asserts it)",
                      tidal_tok_line(s->m, t));
    return TIDAL_REFUSE_NAMED_ARRIVE;
}

static tidal_reason nul_byte(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    (void)s;
    if (!k->fn->local.nul_byte) return TIDAL_REASON_NONE;
    *detail = "the kernel's text holds a NUL byte (in a comment)";
    return TIDAL_REFUSE_NUL_BYTE;
}

static tidal_reason name_collision(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    if (s->mod.rewritten)
        *detail = "the tidal pass already rewrote this module (it ran twice in one pipeline)";
    else if (s->mod.reserved_tok != UINT32_MAX)
        *detail = ptx_fmt(s->m, "the module already uses a name reserved for tidal (%s); was it rewritten before?",
                          tidal_tok_line(s->m, s->mod.reserved_tok));
    else if (k->fn->local.prefix_tok != UINT32_MAX)
        *detail = ptx_fmt(s->m, "uses a name reserved for tidal (%s)", tidal_tok_line(s->m, k->fn->local.prefix_tok));
    else
        return TIDAL_REASON_NONE;
    return TIDAL_REFUSE_NAME_COLLISION;
}

/* `exit` ends the thread from inside a .func; %ctaid there is physical. The first call
 * whose callees do either names the reason. */
static tidal_reason callees(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    const ptx_func *f = k->fn->f;
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *st = &f->stmts[i];
        if (st->kind != PTX_ST_INSTR || st->op_class != PTX_OP_CALL) continue;
        tidal_facts cf;
        tidal_callee_facts(s, st, &cf);
        tidal_reason r = tidal_callee_refusal(&cf);
        if (r != TIDAL_REASON_NONE)
            return at_token(s, st->opcode_tok, r,
                            r == TIDAL_REFUSE_EXIT_IN_CALLEE ? "calls a function that may execute 'exit'"
                                                             : "calls a function that reads %ctaid/%nctaid",
                            detail);
    }
    return TIDAL_REASON_NONE;
}

static tidal_reason ctaid_vector(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    return at_token(s, k->fn->local.ctaid_vector_tok, TIDAL_REFUSE_CTAID_VECTOR, "reads %ctaid/%nctaid as a vector",
                    detail);
}

/* bad-control-flow, barrier-ids, divergent-exit: the convergence phase's verdict */
static tidal_reason convergence(tidal_state *s, const tidal_kernel *k, const char **detail)
{
    (void)s;
    if (!k->conv.analysed) ptx_ice("plan: kernel %s has no convergence verdict", ptx_func_name(k->fn->f));
    *detail = k->conv.detail;
    return k->conv.refusal;
}

/* In the refusal table's order: the report names the first that holds. */
static const rule_fn rules[] = {
    address_size, ptx_version, target,         clusters, cooperative_launch, device_launch,
    named_arrive, nul_byte,    name_collision, callees,  ctaid_vector,       convergence,
};

/* The inserted PTX lives in tidal_code.c; the registers it adds are the ones
 * tidal_reg_decls declares (counted there, so the report cannot go stale). */
static unsigned regs_added(void)
{
    unsigned n = 0;
    for (const char *p = tidal_reg_decls; *p; p++) n += *p == '%';
    return n;
}

static void plan_kernel(tidal_state *s, tidal_kernel *k, tidal_kernel_report *r)
{
    const tidal_fn *fn = k->fn;
    r->name = ptx_func_name(fn->f);
    r->line = s->m->toks[fn->f->name_tok].line;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const char *detail = NULL;
        tidal_reason why = rules[i](s, k, &detail);
        if (why != TIDAL_REASON_NONE) {
            r->verdict = TIDAL_REFUSED;
            r->reason = why;
            r->detail = detail;
            return;
        }
    }
    const tidal_facts *x = &fn->closure;
    r->verdict = TIDAL_REWRITTEN;
    r->exit_mode = k->conv.mode;
    r->bar_id = k->conv.bar_id;
    r->regs_added = regs_added();
    /* logical blocks of one worker may share the shared memory or a warp's state */
    r->barrier_between_blocks = x->shared_mem || x->cta_barrier || x->warp_sync || s->mod.shared_variables;
    /* The original entry stays byte-identical unless case b is asked for; even then a
     * kernel of a module with dynamic shared memory keeps it: case b's static __tidal_sh
     * (its launcher adds no dynamic bytes) would move the dynamic base, which ptxas pads
     * to the largest .extern .shared alignment (Triton's TMA/wgmma tiles rely on it
     * staying 1 KiB-aligned), and launches near the per-block limit would fail with
     * "invalid argument". Its launches run as the original or as the clone, none in case
     * b. */
    if (!s->opt->case_b || s->mod.dynamic_shared) {
        r->original_verbatim = 1;
        r->verbatim_shared = s->opt->case_b;
    }
}

void tidal_phase_plan(tidal_state *s)
{
    tidal_report *rep = s->rep;
    rep->kernels = ptx_arena_zalloc(s->m->arena, sizeof *rep->kernels * (s->nkernels + 1));
    if (!rep->kernels) ptx_ice("out of memory");
    rep->nkernels = s->nkernels;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        tidal_kernel *kn = &s->kernels[k];
        kn->plan = &rep->kernels[k];
        plan_kernel(s, kn, kn->plan);
        if (kn->plan->verdict != TIDAL_REWRITTEN) continue;
        /* __tidal_ctl only where an original entry gets case b: with dynamic shared memory
         * the originals stay verbatim even under --case-b, and a module whose originals
         * all do needs no control word (nor pays for a module-scope .const) */
        if (s->opt->case_b && !s->mod.dynamic_shared) s->ctl = true;
        if (kn->plan->exit_mode == TIDAL_EXIT_FUNNEL) s->funnel_ids |= 1u << kn->plan->bar_id;
    }
}
