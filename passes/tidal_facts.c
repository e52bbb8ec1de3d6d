/* tidal_facts.c — the facts phase: what each function does that the tidal rewrite
 * must know (barriers and their forms, exits, warp collectives, shared memory, and the
 * features that make a kernel unsafe to rewrite: clusters, cooperative launch,
 * device-side launch, names of tidal's), what it does with everything it may call, and
 * what the module does at module scope. */
#include "tidal_internal.h"
#include "tidal_abi.h"
#include "tidal_l2.h" /* TIDAL_L2ADDR_SYMBOL_PREFIX: the l2addr pass's words, no collision */
#include "tidal_protocol.h"

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
    x->cluster_tok = x->envreg_tok = x->devlaunch_tok = x->prefix_tok = x->arrive_tok = x->ctaid_vector_tok =
        UINT32_MAX;
}

void tidal_facts_local(const ptx_func *f, tidal_facts *x)
{
    const ptx_module *m = f->mod;
    tidal_facts_empty(x);
    /* Transforms build text with C strings; real PTX never holds a NUL byte. */
    size_t from = m->toks[f->tok_begin].off, to = m->toks[f->tok_end - 1].off + m->toks[f->tok_end - 1].len;
    x->nul_byte = memchr(m->src + from, 0, to - from) != NULL;
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
                 (starts(m->src + k->off, k->len, "__tidal") &&
                  !starts(m->src + k->off, k->len, TIDAL_L2ADDR_SYMBOL_PREFIX))))
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
            int comp;
            ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, &comp);
            switch (r) {
            case PTX_SREG_CTAID:
            case PTX_SREG_NCTAID:
                x->reads_ctaid = true;
                if (comp < 0 && x->ctaid_vector_tok == UINT32_MAX) x->ctaid_vector_tok = t;
                break;
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

/* ------------------------------------------------------------ calls */

/* The function a name refers to: its definition when the module has one. A .func may be
 * declared (prototype, no body) before its callers and defined after them, as LLVM
 * writes it; the declaration alone would hide what the callee does. */
static tidal_fn *fn_named(tidal_state *s, uint32_t name_tok)
{
    tidal_fn *decl = NULL;
    for (uint32_t i = 0; i < s->nfns; i++) {
        const ptx_token *a = &s->m->toks[s->fns[i].f->name_tok], *b = &s->m->toks[name_tok];
        if (a->len != b->len || memcmp(s->m->src + a->off, s->m->src + b->off, a->len)) continue;
        if (s->fns[i].f->has_body) return &s->fns[i];
        if (!decl) decl = &s->fns[i];
    }
    return decl;
}

static uint32_t callee_operand(const ptx_module *m, const ptx_stmt *st)
{
    uint32_t ci = st->nops && m->toks[st->ops[0].tok_begin].kind == PTX_TK_PUNCT ? 1 : 0;
    return ci < st->nops ? st->ops[ci].tok_begin : UINT32_MAX;
}

static const tidal_facts *closure(tidal_state *s, tidal_fn *fn);

void tidal_callee_facts(tidal_state *s, const ptx_stmt *call, tidal_facts *out)
{
    tidal_facts_empty(out);
    uint32_t ct = callee_operand(s->m, call);
    if (ct == UINT32_MAX) return;
    if (s->m->src[s->m->toks[ct].off] == '%') {
        for (uint32_t k = 0; k < s->nfns; k++)
            if (!s->fns[k].f->is_entry) tidal_facts_merge(out, closure(s, &s->fns[k]));
    } else {
        tidal_fn *callee = fn_named(s, ct);
        if (callee && callee->f->has_body) tidal_facts_merge(out, closure(s, callee));
    }
}

/* Facts of a function and everything it may call. In a cycle of calls the function
 * met again contributes what it had gathered so far. */
static const tidal_facts *closure(tidal_state *s, tidal_fn *fn)
{
    if (fn->closure_done || fn->visiting) return &fn->closure;
    fn->visiting = true;
    fn->closure = fn->local;
    for (uint32_t i = 0; i < fn->f->nstmts; i++) {
        const ptx_stmt *st = &fn->f->stmts[i];
        if (st->kind != PTX_ST_INSTR || st->op_class != PTX_OP_CALL) continue;
        tidal_facts cf;
        tidal_callee_facts(s, st, &cf);
        tidal_facts_merge(&fn->closure, &cf);
    }
    fn->visiting = false;
    fn->closure_done = true;
    return &fn->closure;
}

bool tidal_stmt_reaches_barrier(tidal_state *s, const ptx_func *f, uint32_t i)
{
    const ptx_stmt *st = &f->stmts[i];
    if (st->kind != PTX_ST_INSTR) return false;
    if (st->op_class == PTX_OP_BARRIER) return true;
    if (st->op_class != PTX_OP_CALL) return false;
    tidal_facts cf;
    tidal_callee_facts(s, st, &cf);
    return cf.cta_barrier;
}

/* ------------------------------------------------------------ module scope */

static bool reserved_name(const ptx_module *m, uint32_t t)
{
    const ptx_token *k = &m->toks[t];
    const char *p = m->src + k->off;
    if (k->kind != PTX_TK_IDENT) return false;
    static const char *const exact[] = {TIDAL_CTL_SYMBOL, TIDAL_MARKER_SYMBOL, "__tidal_launch", TIDAL_SH_SYMBOL, NULL};
    for (int i = 0; exact[i]; i++)
        if (k->len == strlen(exact[i]) && !memcmp(p, exact[i], k->len)) return true;
    static const char *const suffixes[] = {TIDAL_RESHAPED_SUFFIX, TIDAL_NPARAMS_SUFFIX, TIDAL_DSH_SUFFIX, NULL};
    for (int i = 0; suffixes[i]; i++) {
        size_t sl = strlen(suffixes[i]);
        if (k->len > sl && !memcmp(p + k->len - sl, suffixes[i], sl)) return true;
    }
    size_t fl = strlen(TIDAL_FUNNEL_FUNC);
    return k->len >= fl && !memcmp(p, TIDAL_FUNNEL_FUNC, fl);
}

/* A module-scope variable (not one tidal inserted) declared with `directive`. */
static bool var_declared(const ptx_module *m, const ptx_item *it, const char *directive)
{
    if (it->kind != PTX_ITEM_VAR || it->text) return false;
    for (uint32_t t = it->tok_begin; t < it->name_tok; t++)
        if (ptx_tok_is(m, t, directive)) return true;
    return false;
}

static void module_facts(const ptx_module *m, tidal_module_facts *x)
{
    /* Names tidal defines at module scope (__tidal_ctl, the marker, the clones'
     * *__tidal_reshaped and their __tidal_launch parameter) must be free outside
     * function bodies: a second run would define them again. The first sign of either
     * ends the search. */
    x->reserved_tok = UINT32_MAX;
    for (uint32_t i = 0; i < m->nitems && x->reserved_tok == UINT32_MAX && !x->rewritten; i++) {
        const ptx_item *it = &m->items[i];
        if (it->text) {
            /* already rewritten in this process (-p tidal,tidal) */
            if (strstr(it->text, TIDAL_MARKER_SYMBOL)) x->rewritten = true;
            continue;
        }
        uint32_t end = it->tok_end;
        if (it->kind == PTX_ITEM_FUNC && it->func && it->func->has_body) end = it->func->body_open_tok;
        for (uint32_t t = it->tok_begin; t < end; t++)
            if (reserved_name(m, t)) {
                x->reserved_tok = t;
                break;
            }
    }
    for (uint32_t i = 0; i < m->nitems; i++) {
        if (var_declared(m, &m->items[i], ".extern") && var_declared(m, &m->items[i], ".shared"))
            x->dynamic_shared = true;
        if (var_declared(m, &m->items[i], ".shared")) x->shared_variables = true;
    }
}

/* ------------------------------------------------------------ the phase */

void tidal_phase_facts(tidal_state *s)
{
    ptx_module *m = s->m;
    module_facts(m, &s->mod);
    s->nfns = ptx_func_count(m);
    s->fns = calloc(s->nfns + 1, sizeof *s->fns);
    if (!s->fns) ptx_ice("out of memory");
    uint32_t nk = 0;
    for (uint32_t i = 0; i < s->nfns; i++) {
        tidal_fn *fn = &s->fns[i];
        fn->f = ptx_func_at(m, i);
        if (fn->f->has_body)
            tidal_facts_local(fn->f, &fn->local);
        else
            tidal_facts_empty(&fn->local);
        nk += fn->f->is_entry && fn->f->has_body;
    }
    s->kernels = calloc(nk + 1, sizeof *s->kernels);
    if (!s->kernels) ptx_ice("out of memory");
    for (uint32_t i = 0; i < s->nfns; i++)
        if (s->fns[i].f->is_entry && s->fns[i].f->has_body) s->kernels[s->nkernels++].fn = &s->fns[i];
    /* Kernels first, in module order, then the rest: in a cycle of calls a closure
     * depends on where the walk entered it, and the kernels' are the ones decided on. */
    for (uint32_t k = 0; k < s->nkernels; k++) closure(s, s->kernels[k].fn);
    for (uint32_t i = 0; i < s->nfns; i++) closure(s, &s->fns[i]);
}
