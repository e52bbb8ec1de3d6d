/* tidal_uniform.c — are a kernel's exits convergent with respect to its CTA
 * barriers?
 *
 * After the rewrite a thread that executes `ret` does not leave: it waits for
 * its CTA at the next claim. That is only safe if no other thread of the CTA can
 * still execute a body barrier after it. We check a sufficient condition: let R
 * be the blocks from which a barrier is reachable; every branch that sends some
 * threads into R and others out of it (or out of the function) must be
 * CTA-uniform and reached uniformly. Uniform
 * branches come from a small divergence analysis: optimistic (everything starts
 * uniform), iterated to a fixed point, with thread-varying sources (%tid,
 * %laneid, loads, atomics, shuffles, ...) and divergent control as seeds. */
#include "tidal_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct reg_map {
    uint32_t *tok;   /* a token naming the register, UINT32_MAX = empty */
    uint8_t *divergent;
    uint32_t mask;
    const ptx_module *m;
} reg_map;

static uint32_t hash_tok(const ptx_module *m, uint32_t t) {
    uint32_t h = 2166136261u;
    const ptx_token *k = &m->toks[t];
    for (uint32_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)m->src[k->off + i]) * 16777619u;
    return h;
}

static uint32_t reg_slot(reg_map *rm, uint32_t t) {
    const ptx_token *k = &rm->m->toks[t];
    for (uint32_t h = hash_tok(rm->m, t) & rm->mask;; h = (h + 1) & rm->mask) {
        if (rm->tok[h] == UINT32_MAX) {
            rm->tok[h] = t;
            return h;
        }
        const ptx_token *o = &rm->m->toks[rm->tok[h]];
        if (o->len == k->len && !memcmp(rm->m->src + o->off, rm->m->src + k->off, k->len)) return h;
    }
}

/* Any identifier may name a register (inline-asm scopes declare names without
 * '%'); symbols and labels are never defined by an instruction, so they stay
 * uniform in the map. */
static bool is_reg(const ptx_module *m, uint32_t t) { return m->toks[t].kind == PTX_TK_IDENT; }

/* Is the branch that ends block statement t divergent (guard or brx.idx index)? */
static bool branch_divergent(const ptx_module *m, reg_map *rm, const ptx_stmt *t) {
    if (t->kind != PTX_ST_INSTR) return false;
    if (t->guard_tok >= 0 && rm->divergent[reg_slot(rm, (uint32_t)t->guard_tok)]) return true;
    return t->op_class == PTX_OP_BRX && t->nops && is_reg(m, t->ops[0].tok_begin) &&
           rm->divergent[reg_slot(rm, t->ops[0].tok_begin)];
}

/* Special registers that differ between threads of one CTA. */
static bool sreg_divergent(ptx_sreg r) {
    switch (r) {
    case PTX_SREG_TID: case PTX_SREG_LANEID: case PTX_SREG_WARPID: case PTX_SREG_LANEMASK:
    case PTX_SREG_CLOCK: case PTX_SREG_CLOCK64: case PTX_SREG_GLOBALTIMER: case PTX_SREG_PM:
        return true;
    default:
        return false;
    }
}

/* Instructions without register results in operand 0. */
static bool has_no_dest(const char *op, size_t n) {
    static const char *const roots[] = {"st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "trap",
                                        "prefetch", "prefetchu", "fence", "membar", "nanosleep", "pmevent",
                                        "brkpt", "discard", "applypriority", "griddepcontrol", "setmaxnreg",
                                        "stmatrix", "tensormap", "multimem", "cp", "st", NULL};
    for (int k = 0; roots[k]; k++)
        if (tidal_opcode_root_is(op, n, roots[k])) return !(tidal_opcode_root_is(op, n, "bar") && tidal_text_contains(op, n, ".red")) &&
                                              !(tidal_opcode_root_is(op, n, "barrier") && tidal_text_contains(op, n, ".red"));
    return false;
}

/* Instructions whose result may differ between threads even from uniform inputs. */
static bool result_divergent(const char *op, size_t n) {
    if (tidal_opcode_root_is(op, n, "ld") || tidal_opcode_root_is(op, n, "ldu"))
        return !(tidal_text_contains(op, n, ".param") || tidal_text_contains(op, n, ".const"));
    static const char *const roots[] = {"atom", "shfl", "vote", "match", "redux", "activemask", "tex", "tld4",
                                        "suld", "sust", "call", "mbarrier", "wgmma", "mma", "wmma", "ldmatrix",
                                        "elect", "cp", "isspacep", "getctarank", "mapa", "txq", "suq",
                                        "istypep", "clusterlaunchcontrol", NULL};
    for (int k = 0; roots[k]; k++)
        if (tidal_opcode_root_is(op, n, roots[k])) return true;
    return false;
}


/* Immediate post-dominators (Cooper, Harvey, Kennedy on the reverse CFG). Node
 * nb is the virtual exit; blocks that cannot reach it get nb. */
static uint32_t *postdominators(const ptx_cfg *cfg) {
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
                if (ex && !seen[k]) { next = k; k++; break; }
            }
        } else {
            const ptx_block *b = &cfg->blocks[v];
            for (; k < b->npred; k++)
                if (!seen[b->pred[k]]) { next = b->pred[k]; k++; break; }
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
    for (uint32_t i = 0; i <= nb; i++) { ipdom[i] = UINT32_MAX; rpo_num[i] = 0; }
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
                if (nd == UINT32_MAX) { nd = p; continue; }
                uint32_t a = p, c = nd;
                while (a != c) {
                    while (rpo_num[a] < rpo_num[c]) a = ipdom[a];
                    while (rpo_num[c] < rpo_num[a]) c = ipdom[c];
                }
                nd = a;
            }
            if (b->nsucc == 0) nd = X;
            if (nd != UINT32_MAX && ipdom[v] != nd) { ipdom[v] = nd; changed = true; }
        }
    }
    for (uint32_t i = 0; i < nb; i++) if (ipdom[i] == UINT32_MAX) ipdom[i] = X;
    free(order); free(rpo_num); free(stack); free(seen);
    return ipdom;
}

/* Marks every block reachable from u's successors before u's post-dominator. */
static void mark_influence(const ptx_cfg *cfg, uint32_t u, const uint32_t *ipdom, uint8_t *div, uint32_t *work) {
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

bool tidal_exits_convergent(const ptx_func *f, const ptx_cfg *cfg, const bool *stmt_is_barrier, uint32_t *why_tok) {
    const ptx_module *m = f->mod;
    *why_tok = UINT32_MAX;
    uint32_t nb = cfg->nblocks;
    if (!nb) return true;

    /* R: blocks from which a barrier is reachable. */
    bool *inR = calloc(nb, 1), *ur = malloc(nb);
    uint32_t *work = malloc(sizeof *work * (nb + 1));
    uint32_t nslots = 64;
    while (nslots < f->nstmts * 4 + 8) nslots *= 2;
    reg_map rm = {.tok = malloc(sizeof *rm.tok * nslots), .divergent = calloc(nslots, 1), .mask = nslots - 1, .m = m};
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
                for (uint32_t o = 1; o < s->nops && !dv; o++)
                    for (uint32_t t = s->ops[o].tok_begin; t < s->ops[o].tok_end && !dv; t++) {
                        if (!is_reg(m, t)) continue;
                        const ptx_token *k = &m->toks[t];
                        ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, NULL);
                        if (r != PTX_SREG_NONE) dv = sreg_divergent(r);
                        else dv = rm.divergent[reg_slot(&rm, t)];
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
        bool has_barrier = false, has_exit = false;
        for (uint32_t k = 0; k < bb->nsucc; k++) has_exit |= bb->succ[k] == PTX_BB_EXIT_SUCC;
        for (uint32_t v = 0; v < nb; v++) {
            if (div[v] != 2) continue;
            for (uint32_t i = cfg->blocks[v].first; i <= cfg->blocks[v].last; i++) has_barrier |= stmt_is_barrier[i];
            for (uint32_t k = 0; k < cfg->blocks[v].nsucc; k++) has_exit |= cfg->blocks[v].succ[k] == PTX_BB_EXIT_SUCC;
        }
        if (has_barrier && has_exit) {
            uneven = true;
            *why_tok = t->kind == PTX_ST_INSTR ? t->opcode_tok : t->tok_begin;
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
            if (bb->succ[k] != PTX_BB_EXIT_SUCC && inR[bb->succ[k]]) to_r = true;
            else to_out = true;
        }
        if (!to_r || !to_out) continue;
        const ptx_stmt *t = &f->stmts[bb->last];
        if (!ur[b] || branch_divergent(m, &rm, t)) {
            ok = false;
            *why_tok = t->kind == PTX_ST_INSTR ? t->opcode_tok : t->tok_begin;
        }
    }
    free(inR);
    free(ur);
    free(work);
    free(rm.tok);
    free(rm.divergent);
    return ok;
}
