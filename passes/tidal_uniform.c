/* tidal_uniform.c — are a kernel's exits convergent with respect to its CTA
 * barriers?
 *
 * After the rewrite a thread that executes `ret` does not leave: it waits for
 * its CTA at the next claim. That is only safe if no other thread of the CTA can
 * still execute a body barrier after it. We check a sufficient condition: let R
 * be the blocks from which a barrier is reachable; every branch that sends some
 * threads into R and others out of it (or out of the function) must be
 * CTA-uniform and reached uniformly. A divergent branch whose successors are all
 * outside R is fine: on no path from it to an exit is a barrier left for the
 * threads that stayed. Uniform branches come from a small divergence analysis:
 * optimistic (everything starts uniform), iterated to a fixed point, with
 * thread-varying sources (%tid, %laneid, loads, atomics, shuffles, ...) and
 * divergent control as seeds. Registers are told apart by the { } scope that
 * declares them; a full reduction barrier's result (bar.red, barrier.red without a
 * thread count) is the same in every thread that runs it, and so is a read-only load
 * (ld.global.nc, ldu) from a uniform address. */
#include "tidal_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct reg_map {
    uint32_t *tok; /* a token naming the register, UINT32_MAX = empty */
    uint8_t *divergent;
    uint32_t mask;
    const ptx_module *m;
    /* The { } scope that declares the register a token names (0: the body), per
     * token from tok_base; NULL when no nested scope declares registers. */
    const uint32_t *scope_of;
    uint32_t tok_base;
} reg_map;

static uint32_t tok_scope(const reg_map *rm, uint32_t t) { return rm->scope_of ? rm->scope_of[t - rm->tok_base] : 0; }

static uint32_t hash_tok(const ptx_module *m, uint32_t t, uint32_t scope)
{
    uint32_t h = 2166136261u ^ scope * 2654435761u;
    const ptx_token *k = &m->toks[t];
    for (uint32_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)m->src[k->off + i]) * 16777619u;
    return h;
}

static uint32_t reg_slot(reg_map *rm, uint32_t t)
{
    const ptx_token *k = &rm->m->toks[t];
    uint32_t sc = tok_scope(rm, t);
    for (uint32_t h = hash_tok(rm->m, t, sc) & rm->mask;; h = (h + 1) & rm->mask) {
        if (rm->tok[h] == UINT32_MAX) {
            rm->tok[h] = t;
            return h;
        }
        const ptx_token *o = &rm->m->toks[rm->tok[h]];
        if (o->len == k->len && tok_scope(rm, rm->tok[h]) == sc &&
            !memcmp(rm->m->src + o->off, rm->m->src + k->off, k->len))
            return h;
    }
}

/* ------------------------------------------------------------ register scopes */

/* A register declared in a nested { } scope: `%p1` (count 0) or `%r<4>` (%r0..%r3). */
typedef struct scope_decl {
    uint32_t scope, tok, count;
} scope_decl;

/* Does token t name a register of declaration d? */
static bool decl_names(const ptx_module *m, const scope_decl *d, uint32_t t)
{
    const ptx_token *a = &m->toks[d->tok], *k = &m->toks[t];
    const char *ks = m->src + k->off;
    if (!d->count) return a->len == k->len && !memcmp(m->src + a->off, ks, k->len);
    if (k->len <= a->len || memcmp(m->src + a->off, ks, a->len)) return false;
    if (ks[a->len] == '0' && k->len > a->len + 1) return false; /* %r01 is not %r1 */
    uint64_t v = 0;
    for (uint32_t i = a->len; i < k->len; i++) {
        if (ks[i] < '0' || ks[i] > '9' || v > UINT32_MAX) return false;
        v = v * 10 + (uint64_t)(ks[i] - '0');
    }
    return v < d->count;
}

/* Which scope declares the register each token of f names. nvcc wraps every
 * __syncthreads_count/_or/_and in `{ .reg .pred %p1; setp ...; bar.red ... }`: that
 * %p1 holds a thread's vote and must not make the body's %p1 divergent. Returns NULL
 * when no nested scope declares a register (every token is the body's). */
static uint32_t *register_scopes(const ptx_func *f)
{
    const ptx_module *m = f->mod;
    uint32_t nscopes = 1, ndecl = 0, capdecl = 0;
    for (uint32_t i = 0; i < f->nstmts; i++) nscopes += f->stmts[i].kind == PTX_ST_SCOPE_BEGIN;
    if (nscopes == 1) return NULL;
    uint32_t *parent = calloc(nscopes, sizeof *parent), *stack = calloc(nscopes + 1, sizeof *stack);
    scope_decl *decl = NULL;
    if (!parent || !stack) ptx_ice("out of memory");
    /* pass 1: scope tree and the declarations of nested scopes */
    uint32_t sp = 0, next = 1;
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind == PTX_ST_SCOPE_BEGIN) {
            parent[next] = stack[sp];
            stack[++sp] = next++;
        } else if (s->kind == PTX_ST_SCOPE_END) {
            if (sp) sp--;
        } else if (s->kind == PTX_ST_REG && sp) {
            for (uint32_t t = s->tok_begin; t < s->tok_end; t++) {
                if (m->toks[t].kind != PTX_TK_IDENT) continue;
                scope_decl d = {.scope = stack[sp], .tok = t, .count = 0};
                if (ptx_tok_is(m, t + 1, "<") && m->toks[t + 2].kind == PTX_TK_INT && ptx_tok_is(m, t + 3, ">")) {
                    const ptx_token *n = &m->toks[t + 2];
                    uint64_t v = 0;
                    for (uint32_t q = 0;
                         q < n->len && m->src[n->off + q] >= '0' && m->src[n->off + q] <= '9' && v <= UINT32_MAX; q++)
                        v = v * 10 + (uint64_t)(m->src[n->off + q] - '0');
                    d.count = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
                    if (!d.count) continue;
                }
                if (ptx_grow((void **)&decl, &capdecl, ndecl + 1, sizeof *decl)) ptx_ice("out of memory");
                decl[ndecl++] = d;
            }
        }
    }
    uint32_t *of = NULL;
    if (ndecl) {
        /* declarations grouped by scope */
        uint32_t *first = calloc(nscopes + 1, sizeof *first);
        scope_decl *by = malloc(sizeof *by * ndecl);
        of = calloc(f->tok_end - f->tok_begin + 1, sizeof *of);
        if (!first || !by || !of) ptx_ice("out of memory");
        for (uint32_t k = 0; k < ndecl; k++) first[decl[k].scope + 1]++;
        for (uint32_t k = 0; k < nscopes; k++) first[k + 1] += first[k];
        uint32_t *fill = calloc(nscopes + 1, sizeof *fill);
        if (!fill) ptx_ice("out of memory");
        for (uint32_t k = 0; k < ndecl; k++) by[first[decl[k].scope] + fill[decl[k].scope]++] = decl[k];
        free(fill);
        /* pass 2: each register token of an instruction names the innermost declaration */
        sp = 0;
        next = 1;
        for (uint32_t i = 0; i < f->nstmts; i++) {
            const ptx_stmt *s = &f->stmts[i];
            if (s->kind == PTX_ST_SCOPE_BEGIN) stack[++sp] = next++;
            if (s->kind == PTX_ST_SCOPE_END && sp) sp--;
            if (s->kind != PTX_ST_INSTR || !sp) continue;
            for (uint32_t t = s->tok_begin; t < s->tok_end; t++) {
                if (m->toks[t].kind != PTX_TK_IDENT) continue;
                for (uint32_t sc = stack[sp]; sc; sc = parent[sc]) {
                    bool hit = false;
                    for (uint32_t k = first[sc]; k < first[sc + 1] && !hit; k++) hit = decl_names(m, &by[k], t);
                    if (hit) {
                        of[t - f->tok_begin] = sc;
                        break;
                    }
                }
            }
        }
        free(first);
        free(by);
    }
    free(decl);
    free(parent);
    free(stack);
    return of;
}

/* Any identifier may name a register (inline-asm scopes declare names without
 * '%'); symbols and labels are never defined by an instruction, so they stay
 * uniform in the map. */
static bool is_reg(const ptx_module *m, uint32_t t) { return m->toks[t].kind == PTX_TK_IDENT; }

/* Is the branch that ends block statement t divergent (guard or brx.idx index)? */
static bool branch_divergent(const ptx_module *m, reg_map *rm, const ptx_stmt *t)
{
    if (t->kind != PTX_ST_INSTR) return false;
    if (t->guard_tok >= 0 && rm->divergent[reg_slot(rm, (uint32_t)t->guard_tok)]) return true;
    return t->op_class == PTX_OP_BRX && t->nops && is_reg(m, t->ops[0].tok_begin) &&
           rm->divergent[reg_slot(rm, t->ops[0].tok_begin)];
}

/* Special registers that differ between threads of one CTA. */
static bool sreg_divergent(ptx_sreg r)
{
    switch (r) {
    case PTX_SREG_TID:
    case PTX_SREG_LANEID:
    case PTX_SREG_WARPID:
    case PTX_SREG_LANEMASK:
    case PTX_SREG_CLOCK:
    case PTX_SREG_CLOCK64:
    case PTX_SREG_GLOBALTIMER:
    case PTX_SREG_PM: return true;
    default: return false;
    }
}

/* Instructions without register results in operand 0. */
static bool has_no_dest(const char *op, size_t n)
{
    static const char *const roots[] = {"st",
                                        "red",
                                        "bar",
                                        "barrier",
                                        "bra",
                                        "brx",
                                        "ret",
                                        "exit",
                                        "trap",
                                        "prefetch",
                                        "prefetchu",
                                        "fence",
                                        "membar",
                                        "nanosleep",
                                        "pmevent",
                                        "brkpt",
                                        "discard",
                                        "applypriority",
                                        "griddepcontrol",
                                        "setmaxnreg",
                                        "stmatrix",
                                        "tensormap",
                                        "multimem",
                                        "cp",
                                        "st",
                                        NULL};
    for (int k = 0; roots[k]; k++)
        if (tidal_opcode_root_is(op, n, roots[k]))
            return !(tidal_opcode_root_is(op, n, "bar") && tidal_text_contains(op, n, ".red")) &&
                   !(tidal_opcode_root_is(op, n, "barrier") && tidal_text_contains(op, n, ".red"));
    return false;
}

/* A full reduction barrier (bar.red/barrier.red without a thread count): every thread
 * of the CTA that runs it gets the same result, whatever its own predicate. */
static bool cta_reduction(const ptx_module *m, const ptx_stmt *s)
{
    const ptx_token *ot = &m->toks[s->opcode_tok];
    return tidal_is_full_barrier(m, s) && tidal_text_contains(m->src + ot->off, ot->len, ".red");
}

/* Has opcode op the qualifier q (".nc"), exactly: followed by '.' or the end? */
static bool has_qualifier(const char *op, size_t n, const char *q)
{
    size_t k = strlen(q);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(op + i, q, k) && (i + k == n || op[i + k] == '.')) return true;
    return false;
}

/* Instructions whose result may differ between threads even from uniform inputs.
 * Loads from memory no thread writes while the kernel runs give every thread the same
 * value for the same address: .param, .const, and the read-only global forms
 * (ld.global.nc, which nvcc emits for `const T *__restrict__` and __ldg, and ldu). */
static bool result_divergent(const char *op, size_t n)
{
    if (tidal_opcode_root_is(op, n, "ldu")) return false;
    if (tidal_opcode_root_is(op, n, "ld"))
        return !(tidal_text_contains(op, n, ".param") || tidal_text_contains(op, n, ".const") ||
                 (has_qualifier(op, n, ".global") && has_qualifier(op, n, ".nc")));
    static const char *const roots[] = {"atom",       "shfl",     "vote",  "match",    "redux",
                                        "activemask", "tex",      "tld4",  "suld",     "sust",
                                        "call",       "mbarrier", "wgmma", "mma",      "wmma",
                                        "ldmatrix",   "elect",    "cp",    "isspacep", "getctarank",
                                        "mapa",       "txq",      "suq",   "istypep",  "clusterlaunchcontrol",
                                        NULL};
    for (int k = 0; roots[k]; k++)
        if (tidal_opcode_root_is(op, n, roots[k])) return true;
    return false;
}

/* Immediate post-dominators (Cooper, Harvey, Kennedy on the reverse CFG). Node
 * nb is the virtual exit; blocks that cannot reach it get nb. */
static uint32_t *postdominators(const ptx_cfg *cfg)
{
    uint32_t nb = cfg->nblocks, X = nb;
    uint32_t *ipdom = malloc(sizeof *ipdom * (nb + 1)), *order = malloc(sizeof *order * (nb + 1));
    uint32_t *rpo_num = malloc(sizeof *rpo_num * (nb + 1)), *stack = malloc(sizeof *stack * (nb + 1) * 2);
    uint8_t *seen = calloc(nb + 1, 1);
    if (!ipdom || !order || !rpo_num || !stack || !seen) ptx_ice("out of memory");
    /* reverse graph: succ(X) = blocks with an exit edge; succ(b) = preds(b) */
    uint32_t n = 0, sp = 0;
    stack[sp++] = X;
    stack[sp++] = 0;
    seen[X] = 1;
    /* iterative DFS producing postorder */
    while (sp) {
        uint32_t v = stack[sp - 2], k = stack[sp - 1];
        uint32_t next = UINT32_MAX;
        if (v == X) {
            for (; k < nb; k++) {
                const ptx_block *b = &cfg->blocks[k];
                bool ex = b->nsucc == 0;
                for (uint32_t j = 0; j < b->nsucc && !ex; j++) ex = b->succ[j] == PTX_BB_EXIT_SUCC;
                if (ex && !seen[k]) {
                    next = k;
                    k++;
                    break;
                }
            }
        } else {
            const ptx_block *b = &cfg->blocks[v];
            for (; k < b->npred; k++)
                if (!seen[b->pred[k]]) {
                    next = b->pred[k];
                    k++;
                    break;
                }
        }
        stack[sp - 1] = k;
        if (next == UINT32_MAX) {
            order[n++] = v;
            sp -= 2;
        } else {
            seen[next] = 1;
            stack[sp++] = next;
            stack[sp++] = 0;
        }
    }
    /* order[] is postorder; rpo_num: higher = earlier in reverse postorder */
    for (uint32_t i = 0; i <= nb; i++) {
        ipdom[i] = UINT32_MAX;
        rpo_num[i] = 0;
    }
    for (uint32_t i = 0; i < n; i++) rpo_num[order[i]] = i;
    ipdom[X] = X;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = n; i-- > 0;) {
            uint32_t v = order[i];
            if (v == X) continue;
            /* predecessors in the reverse graph = successors in the CFG */
            const ptx_block *b = &cfg->blocks[v];
            uint32_t nd = UINT32_MAX;
            for (uint32_t j = 0; j < b->nsucc; j++) {
                uint32_t p = b->succ[j] == PTX_BB_EXIT_SUCC ? X : b->succ[j];
                if (ipdom[p] == UINT32_MAX) continue;
                if (nd == UINT32_MAX) {
                    nd = p;
                    continue;
                }
                uint32_t a = p, c = nd;
                while (a != c) {
                    while (rpo_num[a] < rpo_num[c]) a = ipdom[a];
                    while (rpo_num[c] < rpo_num[a]) c = ipdom[c];
                }
                nd = a;
            }
            if (b->nsucc == 0) nd = X;
            if (nd != UINT32_MAX && ipdom[v] != nd) {
                ipdom[v] = nd;
                changed = true;
            }
        }
    }
    for (uint32_t i = 0; i < nb; i++)
        if (ipdom[i] == UINT32_MAX) ipdom[i] = X;
    free(order);
    free(rpo_num);
    free(stack);
    free(seen);
    return ipdom;
}

/* Marks every block reachable from u's successors before u's post-dominator. */
static void mark_influence(const ptx_cfg *cfg, uint32_t u, const uint32_t *ipdom, uint8_t *div, uint32_t *work)
{
    uint32_t stop = ipdom[u], nw = 0;
    const ptx_block *b = &cfg->blocks[u];
    for (uint32_t j = 0; j < b->nsucc; j++) {
        uint32_t s = b->succ[j];
        if (s == PTX_BB_EXIT_SUCC || s == stop || div[s] == 2) continue;
        div[s] = 2;
        work[nw++] = s;
    }
    while (nw) {
        uint32_t v = work[--nw];
        const ptx_block *vb = &cfg->blocks[v];
        for (uint32_t j = 0; j < vb->nsucc; j++) {
            uint32_t s = vb->succ[j];
            if (s == PTX_BB_EXIT_SUCC || s == stop || div[s] == 2) continue;
            div[s] = 2;
            work[nw++] = s;
        }
    }
}

/* The first token of statement i (its opcode for an instruction). */
static uint32_t stmt_tok(const ptx_func *f, uint32_t i)
{
    const ptx_stmt *s = &f->stmts[i];
    return s->kind == PTX_ST_INSTR ? s->opcode_tok : s->tok_begin;
}

/* The barrier statement nearest to the start of block `from` (breadth first), as a
 * token; UINT32_MAX when none is reachable. */
static uint32_t nearest_barrier(const ptx_func *f, const ptx_cfg *cfg, const bool *stmt_is_barrier, uint32_t from,
                                uint8_t *seen, uint32_t *queue)
{
    uint32_t nb = cfg->nblocks, head = 0, tail = 0;
    memset(seen, 0, nb);
    seen[from] = 1;
    queue[tail++] = from;
    while (head < tail) {
        const ptx_block *b = &cfg->blocks[queue[head++]];
        for (uint32_t i = b->first; i <= b->last; i++)
            if (stmt_is_barrier[i]) return stmt_tok(f, i);
        for (uint32_t k = 0; k < b->nsucc; k++) {
            uint32_t s = b->succ[k];
            if (s == PTX_BB_EXIT_SUCC || seen[s]) continue;
            seen[s] = 1;
            queue[tail++] = s;
        }
    }
    return UINT32_MAX;
}

bool tidal_exits_convergent(const ptx_func *f, const ptx_cfg *cfg, const bool *stmt_is_barrier, uint32_t *why_tok,
                            uint32_t *barrier_tok)
{
    const ptx_module *m = f->mod;
    *why_tok = *barrier_tok = UINT32_MAX;
    uint32_t nb = cfg->nblocks;
    if (!nb) return true;

    /* R: blocks from which a barrier is reachable. */
    bool *inR = calloc(nb, 1), *ur = malloc(nb);
    uint32_t *work = malloc(sizeof *work * (nb + 1));
    uint32_t nslots = 64;
    while (nslots < f->nstmts * 4 + 8) nslots *= 2;
    uint32_t *scope_of = register_scopes(f);
    reg_map rm = {.tok = malloc(sizeof *rm.tok * nslots),
                  .divergent = calloc(nslots, 1),
                  .mask = nslots - 1,
                  .m = m,
                  .scope_of = scope_of,
                  .tok_base = f->tok_begin};
    if (!inR || !ur || !work || !rm.tok || !rm.divergent) ptx_ice("out of memory");
    memset(rm.tok, 0xff, sizeof *rm.tok * nslots);
    uint32_t nw = 0;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t i = cfg->blocks[b].first; i <= cfg->blocks[b].last; i++)
            if (stmt_is_barrier[i] && !inR[b]) {
                inR[b] = true;
                work[nw++] = b;
            }
    while (nw) {
        uint32_t b = work[--nw];
        for (uint32_t k = 0; k < cfg->blocks[b].npred; k++) {
            uint32_t p = cfg->blocks[b].pred[k];
            if (!inR[p]) {
                inR[p] = true;
                work[nw++] = p;
            }
        }
    }

    /* Divergence fixed point. A block is divergently reached when it lies in the
     * influence region of a divergent branch (reachable from it before its
     * immediate post-dominator, where the threads reconverge). */
    uint32_t *ipdom = postdominators(cfg);
    uint8_t *div = calloc(nb, 1);
    uint32_t *wl = malloc(sizeof *wl * (nb + 1));
    if (!div || !wl) ptx_ice("out of memory");
    bool changed = true;
    while (changed) {
        changed = false;
        /* blocks: recompute from the divergent branches known so far */
        memset(div, 0, nb);
        for (uint32_t b = 0; b < nb; b++) {
            const ptx_block *bb = &cfg->blocks[b];
            if (bb->nsucc < 2) continue;
            if (branch_divergent(m, &rm, &f->stmts[bb->last])) mark_influence(cfg, b, ipdom, div, wl);
        }
        for (uint32_t b = 0; b < nb; b++) ur[b] = div[b] != 2;
        for (uint32_t b = 0; b < nb; b++) {
            const ptx_block *bb = &cfg->blocks[b];
            for (uint32_t i = bb->first; i <= bb->last; i++) {
                const ptx_stmt *s = &f->stmts[i];
                if (s->kind != PTX_ST_INSTR || s->nops == 0) continue;
                const ptx_token *ot = &m->toks[s->opcode_tok];
                const char *op = m->src + ot->off;
                if (has_no_dest(op, ot->len)) continue;
                bool dv = !ur[b] || result_divergent(op, ot->len);
                if (!dv && s->guard_tok >= 0) dv = rm.divergent[reg_slot(&rm, (uint32_t)s->guard_tok)];
                /* bar.red d, a, {!}c: only the barrier id a can make d differ (an
                 * operand list shorter than that is read as it is: ptxas rejects it) */
                uint32_t nin = cta_reduction(m, s) && s->nops > 2 ? 2 : s->nops;
                for (uint32_t o = 1; o < nin && !dv; o++)
                    for (uint32_t t = s->ops[o].tok_begin; t < s->ops[o].tok_end && !dv; t++) {
                        if (!is_reg(m, t)) continue;
                        const ptx_token *k = &m->toks[t];
                        ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, NULL);
                        if (r != PTX_SREG_NONE)
                            dv = sreg_divergent(r);
                        else
                            dv = rm.divergent[reg_slot(&rm, t)];
                    }
                if (!dv) continue;
                for (uint32_t t = s->ops[0].tok_begin; t < s->ops[0].tok_end; t++) {
                    if (!is_reg(m, t)) continue;
                    uint32_t h = reg_slot(&rm, t);
                    if (!rm.divergent[h]) {
                        rm.divergent[h] = 1;
                        changed = true;
                    }
                }
            }
        }
    }
    /* Threads that part at a divergent branch may run different numbers of full
     * barriers before they reconverge; if one of them can also leave the kernel
     * inside that region, the others' later barriers would wait for it. */
    bool uneven = false;
    for (uint32_t b = 0; b < nb && !uneven; b++) {
        const ptx_block *bb = &cfg->blocks[b];
        if (bb->nsucc < 2) continue;
        const ptx_stmt *t = &f->stmts[bb->last];
        if (!ur[b] || !branch_divergent(m, &rm, t)) continue;
        memset(div, 0, nb);
        mark_influence(cfg, b, ipdom, div, wl);
        uint32_t barrier = UINT32_MAX;
        bool has_exit = false;
        for (uint32_t k = 0; k < bb->nsucc; k++) has_exit |= bb->succ[k] == PTX_BB_EXIT_SUCC;
        for (uint32_t v = 0; v < nb; v++) {
            if (div[v] != 2) continue;
            for (uint32_t i = cfg->blocks[v].first; i <= cfg->blocks[v].last && barrier == UINT32_MAX; i++)
                if (stmt_is_barrier[i]) barrier = stmt_tok(f, i);
            for (uint32_t k = 0; k < cfg->blocks[v].nsucc; k++) has_exit |= cfg->blocks[v].succ[k] == PTX_BB_EXIT_SUCC;
        }
        if (barrier != UINT32_MAX && has_exit) {
            uneven = true;
            *why_tok = stmt_tok(f, bb->last);
            *barrier_tok = barrier;
        }
    }
    free(ipdom);
    free(div);
    free(wl);

    /* A branch that splits threads between "may still reach a barrier" (R) and
     * "will not" (outside R, or out of the function) must be uniform. */
    bool ok = !uneven;
    for (uint32_t b = 0; b < nb && ok; b++) {
        const ptx_block *bb = &cfg->blocks[b];
        bool to_r = false, to_out = false;
        for (uint32_t k = 0; k < bb->nsucc; k++) {
            if (bb->succ[k] != PTX_BB_EXIT_SUCC && inR[bb->succ[k]])
                to_r = true;
            else
                to_out = true;
        }
        if (!to_r || !to_out) continue;
        const ptx_stmt *t = &f->stmts[bb->last];
        if (!ur[b] || branch_divergent(m, &rm, t)) {
            ok = false;
            *why_tok = stmt_tok(f, bb->last);
            uint8_t *seen = malloc(nb);
            if (!seen) ptx_ice("out of memory");
            for (uint32_t k = 0; k < bb->nsucc && *barrier_tok == UINT32_MAX; k++)
                if (bb->succ[k] != PTX_BB_EXIT_SUCC && inR[bb->succ[k]])
                    *barrier_tok = nearest_barrier(f, cfg, stmt_is_barrier, bb->succ[k], seen, work);
            free(seen);
        }
    }
    free(inR);
    free(ur);
    free(work);
    free(rm.tok);
    free(rm.divergent);
    free(scope_of);
    return ok;
}
