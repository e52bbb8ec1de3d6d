/* tidal_facts.c — what a function does that the tidal rewrite must know:
 * barriers and their forms, exits, warp collectives, shared memory, and the
 * features that make a kernel unsafe to rewrite (clusters, cooperative launch,
 * device-side launch). */
#include "tidal_internal.h"

#include <string.h>

bool tidal_text_contains(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k)) return true;
    return false;
}

bool tidal_opcode_root_is(const char *s, size_t n, const char *root)
{
    size_t k = strlen(root);
    return n >= k && !memcmp(s, root, k) && (n == k || s[k] == '.');
}

static bool starts(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && !memcmp(s, p, k);
}

void tidal_facts_merge(tidal_facts *into, const tidal_facts *from)
{
    into->cta_barrier |= from->cta_barrier;
    into->barrier_counted |= from->barrier_counted;
    into->barrier_arrive |= from->barrier_arrive;
    into->barrier_red |= from->barrier_red;
    into->exit_instr |= from->exit_instr;
    into->warp_sync |= from->warp_sync;
    into->shared_mem |= from->shared_mem;
    into->reads_ctaid |= from->reads_ctaid;
    into->indirect_call |= from->indirect_call;
    into->barrier_guarded |= from->barrier_guarded;
    into->barrier_ids |= from->barrier_ids;
    into->barrier_id_reg |= from->barrier_id_reg;
    if (into->cluster_tok == UINT32_MAX) into->cluster_tok = from->cluster_tok;
    if (into->envreg_tok == UINT32_MAX) into->envreg_tok = from->envreg_tok;
    if (into->devlaunch_tok == UINT32_MAX) into->devlaunch_tok = from->devlaunch_tok;
    if (into->arrive_tok == UINT32_MAX) into->arrive_tok = from->arrive_tok;
}

static const char *const warp_roots[] = {"shfl",      "vote",  "match",   "redux",      "activemask",
                                         "wmma",      "mma",   "wgmma",   "ldmatrix",   "stmatrix",
                                         "movmatrix", "elect", "tcgen05", "setmaxnreg", NULL};
static const char *const launch_calls[] = {"cudaLaunchDevice",  "cudaGetParameterBuffer", "cudaCGGetIntrinsicHandle",
                                           "cudaCGSynchronize", "cudaLaunchDeviceV2",     NULL};

bool tidal_is_full_barrier(const ptx_module *m, const ptx_stmt *s)
{
    if (s->kind != PTX_ST_INSTR || s->op_class != PTX_OP_BARRIER) return false;
    const ptx_token *ot = &m->toks[s->opcode_tok];
    const char *op = m->src + ot->off;
    if (tidal_text_contains(op, ot->len, ".arrive")) return false;
    if (tidal_text_contains(op, ot->len, ".red")) return s->nops < 4;
    return s->nops < 2;
}

void tidal_facts_empty(tidal_facts *x)
{
    memset(x, 0, sizeof *x);
    x->cluster_tok = x->envreg_tok = x->devlaunch_tok = x->prefix_tok = x->arrive_tok = UINT32_MAX;
}

void tidal_facts_local(const ptx_func *f, tidal_facts *x)
{
    const ptx_module *m = f->mod;
    tidal_facts_empty(x);
    for (uint32_t k = 0; k < f->nperf; k++) {
        uint32_t t = f->perf[k].name_tok;
        if ((ptx_tok_is(m, t, ".reqnctapercluster") || ptx_tok_is(m, t, ".explicitcluster") ||
             ptx_tok_is(m, t, ".maxclusterrank") || ptx_tok_is(m, t, ".blocksareclusters")) &&
            x->cluster_tok == UINT32_MAX)
            x->cluster_tok = t;
    }
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->synthesized) continue;
        /* names colliding with ours */
        for (uint32_t t = s->tok_begin; t < s->tok_end && x->prefix_tok == UINT32_MAX; t++) {
            const ptx_token *k = &m->toks[t];
            if (k->kind == PTX_TK_IDENT &&
                (starts(m->src + k->off, k->len, "%tdl_") || starts(m->src + k->off, k->len, "$tdl_") ||
                 starts(m->src + k->off, k->len, "__tidal")))
                x->prefix_tok = t;
        }
        if (s->kind == PTX_ST_VAR && ptx_tok_is(m, s->tok_begin, ".shared")) x->shared_mem = true;
        if (s->kind != PTX_ST_INSTR) continue;
        const ptx_token *ot = &m->toks[s->opcode_tok];
        const char *op = m->src + ot->off;
        size_t n = ot->len;
        if (tidal_text_contains(op, n, ".shared")) x->shared_mem = true;
        switch (s->op_class) {
        case PTX_OP_BARRIER: {
            x->cta_barrier = true;
            bool arrive = tidal_text_contains(op, n, ".arrive");
            bool red = tidal_text_contains(op, n, ".red");
            if (arrive) x->barrier_arrive = x->barrier_counted = true;
            if (arrive && x->arrive_tok == UINT32_MAX) x->arrive_tok = s->opcode_tok;
            if (red) {
                x->barrier_red = true;
                if (s->nops >= 4) x->barrier_counted = true;
            }
            if (!arrive && !red && s->nops >= 2) x->barrier_counted = true;
            if (s->guard_tok >= 0) x->barrier_guarded = true;
            uint32_t id_op = red ? 1 : 0;
            if (id_op < s->nops) {
                const ptx_token *it = &m->toks[s->ops[id_op].tok_begin];
                if (s->ops[id_op].tok_end == s->ops[id_op].tok_begin + 1 && it->kind == PTX_TK_INT) {
                    unsigned v = 0;
                    for (uint32_t q = 0; q < it->len && m->src[it->off + q] >= '0' && m->src[it->off + q] <= '9'; q++)
                        v = v * 10 + (unsigned)(m->src[it->off + q] - '0');
                    if (v < 16)
                        x->barrier_ids |= (uint16_t)(1u << v);
                    else
                        x->barrier_id_reg = true;
                } else {
                    x->barrier_id_reg = true;
                }
            } else {
                x->barrier_id_reg = true;
            }
            break;
        }
        case PTX_OP_BAR_CLUSTER:
            if (x->cluster_tok == UINT32_MAX) x->cluster_tok = s->opcode_tok;
            break;
        case PTX_OP_BAR_WARP: x->warp_sync = true; break;
        case PTX_OP_EXIT: x->exit_instr = true; break;
        case PTX_OP_CALL: {
            uint32_t ci = s->nops && m->toks[s->ops[0].tok_begin].kind == PTX_TK_PUNCT ? 1 : 0;
            if (ci < s->nops) {
                const ptx_token *ct = &m->toks[s->ops[ci].tok_begin];
                if (m->src[ct->off] == '%') x->indirect_call = true;
                for (int k = 0; launch_calls[k]; k++)
                    if (starts(m->src + ct->off, ct->len, launch_calls[k]) && x->devlaunch_tok == UINT32_MAX)
                        x->devlaunch_tok = s->opcode_tok;
            }
            break;
        }
        default: break;
        }
        for (int k = 0; warp_roots[k]; k++)
            if (tidal_opcode_root_is(op, n, warp_roots[k])) x->warp_sync = true;
        if ((tidal_opcode_root_is(op, n, "mapa") || tidal_opcode_root_is(op, n, "getctarank")) &&
            x->cluster_tok == UINT32_MAX)
            x->cluster_tok = s->opcode_tok;
        /* special registers */
        for (uint32_t t = s->opcode_tok + 1; t < s->tok_end; t++) {
            const ptx_token *k = &m->toks[t];
            if (k->kind != PTX_TK_IDENT || m->src[k->off] != '%') continue;
            ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, NULL);
            switch (r) {
            case PTX_SREG_CTAID:
            case PTX_SREG_NCTAID: x->reads_ctaid = true; break;
            case PTX_SREG_CLUSTERID:
            case PTX_SREG_NCLUSTERID:
            case PTX_SREG_CLUSTER_CTAID:
            case PTX_SREG_CLUSTER_NCTAID:
            case PTX_SREG_CLUSTER_CTARANK:
            case PTX_SREG_CLUSTER_NCTARANK:
            case PTX_SREG_IS_EXPLICIT_CLUSTER:
                if (x->cluster_tok == UINT32_MAX) x->cluster_tok = t;
                break;
            case PTX_SREG_ENVREG:
                if (x->envreg_tok == UINT32_MAX) x->envreg_tok = t;
                break;
            default: break;
            }
        }
    }
}
