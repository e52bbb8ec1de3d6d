/* tidal_converge.c — the convergence phase: per kernel, how its exits and barriers are
 * made safe (docs/design.md §2 "Exits and barriers"): no barriers; convergent exits with
 * tidal's barrier on a free id; the barrier funnel; or why none of these holds. The
 * proof itself is tidal_uniform.c's. */
#include "tidal_internal.h"

/* Per statement: it reaches a barrier of the given kind (full: no thread count). */
static bool *barrier_sites(tidal_state *s, const ptx_func *f, bool full_only)
{
    bool *isb = calloc(f->nstmts + 1, 1);
    if (!isb) ptx_ice("out of memory");
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *st = &f->stmts[i];
        if (st->kind == PTX_ST_INSTR && st->op_class == PTX_OP_BARRIER)
            isb[i] = full_only ? tidal_is_full_barrier(s->m, st) : true;
        else
            isb[i] = tidal_stmt_reaches_barrier(s, f, i);
    }
    return isb;
}

/* Why the barrier funnel cannot take kernel f, or NULL when it can; *tok is the
 * offending statement's token. The funnel takes unpredicated full barriers without a
 * result (no bar.red) at the top level of the body, none in callees, and needs an id of
 * its own next to counted barriers. */
static const char *funnel_obstacle(tidal_state *s, const ptx_func *f, const tidal_facts *x, int private_id,
                                   uint32_t *tok)
{
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *st = &f->stmts[i];
        *tok = st->opcode_tok;
        if (st->kind == PTX_ST_INSTR && st->op_class == PTX_OP_CALL && tidal_stmt_reaches_barrier(s, f, i))
            return "barriers in called functions";
        if (!tidal_is_full_barrier(s->m, st)) continue;
        const ptx_token *ot = &s->m->toks[st->opcode_tok];
        if (tidal_text_contains(s->m->src + ot->off, ot->len, ".red")) return "reduction barriers";
        if (st->guard_tok >= 0) return "predicated full barriers";
        /* its labels would be out of the funnel's sight */
        if (st->depth > 0) return "full barriers inside { } scopes";
    }
    *tok = UINT32_MAX;
    if (private_id < 0 && x->barrier_counted) return "counted barriers when no barrier id is free";
    return NULL;
}

static void refuse(tidal_convergence *v, tidal_reason why, const char *detail)
{
    v->refusal = why;
    v->detail = detail;
}

static void converge(tidal_state *s, const tidal_fn *fn, tidal_convergence *v)
{
    ptx_module *m = s->m;
    const ptx_func *f = fn->f;
    const tidal_facts *x = &fn->closure;
    v->analysed = true;
    if (!x->cta_barrier) {
        v->mode = TIDAL_EXIT_NO_BARRIERS;
        return;
    }
    ptx_diag cd;
    ptx_diag_init(&cd, m->file);
    ptx_cfg *cfg = ptx_cfg_build(f, &cd);
    if (!cfg) {
        refuse(v, TIDAL_REFUSE_BAD_CONTROL_FLOW, ptx_fmt(m, "line %u: %s", cd.line, cd.msg));
        return;
    }
    /* Exited threads wait at tidal's barrier instead of leaving, so a full
     * barrier the others still run would wedge; counted barriers do not
     * include them, as long as tidal's barrier has an id of its own. */
    bool *full = barrier_sites(s, f, true);
    uint32_t why = UINT32_MAX, why_bar = UINT32_MAX, why_all = UINT32_MAX, why_all_bar = UINT32_MAX;
    bool conv_full = tidal_exits_convergent(f, cfg, full, &why, &why_bar);
    free(full);
    int private_id = -1;
    if (!x->barrier_id_reg)
        /* the lowest free id: ptxas reserves barriers 0..id for the CTA, and
         * reserving all 16 halved block_sum's occupancy on the H200 */
        for (int id = 0; id < 16 && private_id < 0; id++)
            if (!(x->barrier_ids & (1u << id))) private_id = id;
    bool conv_all = false;
    if (private_id < 0) {
        bool *all = barrier_sites(s, f, false);
        conv_all = tidal_exits_convergent(f, cfg, all, &why_all, &why_all_bar);
        free(all);
    }
    ptx_cfg_free(cfg);
    uint32_t obstacle_tok = UINT32_MAX;
    const char *obstacle = conv_full && private_id >= 0 ? NULL : funnel_obstacle(s, f, x, private_id, &obstacle_tok);
    if (conv_full && private_id >= 0) {
        v->mode = TIDAL_EXIT_CONVERGENT;
        v->bar_id = (unsigned)private_id;
    } else if (conv_full && conv_all) {
        v->mode = TIDAL_EXIT_CONVERGENT;
        v->bar_id = 0;
    } else if (!obstacle) {
        /* Full barriers are plain bar.sync/barrier.sync in the body: route them
         * and the exits through one funnel with an id no counted barrier uses.
         * One barrier instruction for all sites matters: barrier.red at several
         * places, reached by lanes of one warp at different places, ran the
         * wrong lanes through the body on the H200 (docs/design.md). */
        v->mode = TIDAL_EXIT_FUNNEL;
        v->bar_id = private_id >= 0 ? (unsigned)private_id : 0;
    } else if (conv_full) {
        refuse(v, TIDAL_REFUSE_BARRIER_IDS,
               ptx_fmt(m,
                       "no barrier id is free for tidal and exits are not convergent: a thread may leave "
                       "(%s) while others still reach a barrier (%s)",
                       tidal_tok_line(m, why_all),
                       why_all_bar != UINT32_MAX ? tidal_tok_line(m, why_all_bar) : "unknown"));
    } else {
        /* Leaving threads are only a problem at barriers some threads still
         * reach: a divergent branch none of whose paths meets a barrier again
         * before an exit is fine (tidal_uniform.c), so this names the branch and
         * a barrier reachable after it. */
        refuse(v, TIDAL_REFUSE_DIVERGENT_EXIT,
               ptx_fmt(m,
                       "a thread may leave (%s) while others still reach a full barrier (%s); the "
                       "barrier funnel cannot take %s%s%s%s",
                       tidal_tok_line(m, why), why_bar != UINT32_MAX ? tidal_tok_line(m, why_bar) : "unknown", obstacle,
                       obstacle_tok != UINT32_MAX ? " (" : "",
                       obstacle_tok != UINT32_MAX ? tidal_tok_line(m, obstacle_tok) : "",
                       obstacle_tok != UINT32_MAX ? ")" : ""));
    }
}

/* Every kernel, also those a rule before this one refuses (the plan picks the first
 * refusal): the dump shows the whole picture. Not in a module rewritten already: its
 * kernels hold tidal's own statements, and they are refused as name-collision. */
void tidal_phase_convergence(tidal_state *s)
{
    if (s->mod.rewritten) return;
    for (uint32_t k = 0; k < s->nkernels; k++) converge(s, s->kernels[k].fn, &s->kernels[k].conv);
}
