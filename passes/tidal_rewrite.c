/* tidal_rewrite.c — the tidal transform of one module.
 *
 * Every .entry that is safe to rewrite becomes:
 *
 *   prologue   read __tidal_ctl; 0 → "direct": run the body once as the original
 *              would (launch case a). Else find this launch's claim slot (keyed by
 *              %gridid), test %smid against the partition mask, and decide: work,
 *              leave, or — last block of a launch nobody works for — work anyway
 *              (liveness guard, counted as a violation).
 *   claim      leader re-reads the mask, claims a chunk of logical blocks with one
 *              atomic, publishes it in shared memory; one bar.sync per claim.
 *   logical    %ctaid/%nctaid read the logical values; `ret`/`exit` jump to
 *              $tdl_next, which runs the next logical block of the chunk or claims.
 *   depart     the last physical block of the launch resets the slot.
 *
 * A clone NAME__tidal_reshaped takes the logical grid as an extra parameter and
 * is launched with a grid of persistent workers (case c). See docs/design.md. */
#define _POSIX_C_SOURCE 200809L
#include "tidal_internal.h"
#include "tidal_abi.h"
#include "tidal_protocol.h"

#include <stdlib.h>
#include <string.h>

#define S_(x) #x
#define S(x) S_(x)

typedef struct func_info {
    ptx_func *f;
    tidal_facts local, closure;
    bool closure_done, visiting;
} func_info;

typedef struct ctx {
    ptx_module *m;
    ptx_diag *d;
    const tidal_options *opt;
    func_info *fi;
    uint32_t nf;
    uint32_t module_prefix_tok; /* a module-scope name tidal would define, or UINT32_MAX */
    bool already_ran;           /* the pass already rewrote this module in this process */
    bool ctl;                   /* the module defines __tidal_ctl (case b asked for) */
    uint32_t funnel_ids;        /* bit k: a funnel kernel uses barrier id k (TIDAL_FUNNEL_FUNC) */
} ctx;

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

/* The function a name refers to: its definition when the module has one. A .func may be
 * declared (prototype, no body) before its callers and defined after them, as LLVM
 * writes it; the declaration alone would hide what the callee does. */
static func_info *info_of(ctx *c, uint32_t name_tok)
{
    func_info *decl = NULL;
    for (uint32_t i = 0; i < c->nf; i++) {
        const ptx_token *a = &c->m->toks[c->fi[i].f->name_tok], *b = &c->m->toks[name_tok];
        if (a->len != b->len || memcmp(c->m->src + a->off, c->m->src + b->off, a->len)) continue;
        if (c->fi[i].f->has_body) return &c->fi[i];
        if (!decl) decl = &c->fi[i];
    }
    return decl;
}

static uint32_t callee_operand(const ptx_module *m, const ptx_stmt *s)
{
    uint32_t ci = s->nops && m->toks[s->ops[0].tok_begin].kind == PTX_TK_PUNCT ? 1 : 0;
    return ci < s->nops ? s->ops[ci].tok_begin : UINT32_MAX;
}

static const tidal_facts *closure(ctx *c, func_info *fi);

/* What a call statement may run: its callee and everything that calls, or for
 * an indirect call every .func of the module. */
static void callee_facts(ctx *c, const ptx_stmt *s, tidal_facts *out)
{
    tidal_facts_empty(out);
    uint32_t ct = callee_operand(c->m, s);
    if (ct == UINT32_MAX) return;
    if (c->m->src[c->m->toks[ct].off] == '%') {
        for (uint32_t k = 0; k < c->nf; k++)
            if (!c->fi[k].f->is_entry) tidal_facts_merge(out, closure(c, &c->fi[k]));
    } else {
        func_info *callee = info_of(c, ct);
        if (callee && callee->f->has_body) tidal_facts_merge(out, closure(c, callee));
    }
}

/* Facts of a function and everything it may call. */
static const tidal_facts *closure(ctx *c, func_info *fi)
{
    if (fi->closure_done || fi->visiting) return &fi->closure;
    fi->visiting = true;
    fi->closure = fi->local;
    for (uint32_t i = 0; i < fi->f->nstmts; i++) {
        const ptx_stmt *s = &fi->f->stmts[i];
        if (s->kind != PTX_ST_INSTR || s->op_class != PTX_OP_CALL) continue;
        tidal_facts cf;
        callee_facts(c, s, &cf);
        tidal_facts_merge(&fi->closure, &cf);
    }
    fi->visiting = false;
    fi->closure_done = true;
    return &fi->closure;
}

/* Does statement i reach a CTA barrier (itself, or through a call)? */
static bool stmt_barrier(ctx *c, const ptx_func *f, uint32_t i)
{
    const ptx_stmt *s = &f->stmts[i];
    if (s->kind != PTX_ST_INSTR) return false;
    if (s->op_class == PTX_OP_BARRIER) return true;
    if (s->op_class != PTX_OP_CALL) return false;
    tidal_facts cf;
    callee_facts(c, s, &cf);
    return cf.cta_barrier;
}

/* ------------------------------------------------------------ text building */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
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
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Statement text with %ctaid/%nctaid components replaced by the logical ones. */
static char *substitute_sregs(ctx *c, const ptx_stmt *s, bool *changed)
{
    const ptx_module *m = c->m;
    sbuf b = {0};
    size_t pos = m->toks[s->tok_begin].off;
    *changed = false;
    for (uint32_t t = s->tok_begin; t < s->tok_end; t++) {
        const ptx_token *k = &m->toks[t];
        if (k->kind != PTX_TK_IDENT || m->src[k->off] != '%') continue;
        int comp;
        ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, &comp);
        if ((r != PTX_SREG_CTAID && r != PTX_SREG_NCTAID) || comp < 0) continue;
        sb_put(&b, m->src + pos, k->off - pos);
        static const char *const names[2][3] = {{"%tdl_cx", "%tdl_cy", "%tdl_cz"}, {"%tdl_nx", "%tdl_ny", "%tdl_nz"}};
        sb_str(&b, names[r == PTX_SREG_NCTAID][comp]);
        pos = k->off + k->len;
        *changed = true;
    }
    const ptx_token *last = &m->toks[s->tok_end - 1];
    sb_put(&b, m->src + pos, last->off + last->len - pos);
    return b.p;
}

/* "@p " / "@!p " / "" (always allocated). */
static char *guard_prefix(ctx *c, const ptx_stmt *s)
{
    sbuf b = {0};
    sb_str(&b, "");
    if (s->guard_tok >= 0) {
        const ptx_token *g = &c->m->toks[s->guard_tok];
        sb_str(&b, s->guard_neg ? "@!" : "@");
        sb_put(&b, c->m->src + g->off, g->len);
        sb_str(&b, " ");
    }
    return b.p;
}

/* `[@p] ret[.uni];` / `exit;` → `[@p] bra[.uni] $tdl_next;` */
static char *exit_to_branch(ctx *c, const ptx_stmt *s)
{
    const ptx_token *ot = &c->m->toks[s->opcode_tok];
    bool uni = ot->len >= 4 && !memcmp(c->m->src + ot->off + ot->len - 4, ".uni", 4);
    char *g = guard_prefix(c, s);
    char *t = ptx_fmt(c->m, "%s%s", g, uni ? "bra.uni \t$tdl_next;" : "bra \t$tdl_next;");
    free(g);
    return t;
}

/* The inserted PTX lives in tidal_code.c; the registers it adds are the ones
 * tidal_reg_decls declares (counted there, so the report cannot go stale). */
static unsigned regs_added(void)
{
    unsigned n = 0;
    for (const char *p = tidal_reg_decls; *p; p++) n += *p == '%';
    return n;
}

/* ------------------------------------------------------------ per kernel */

static char *tok_line(ctx *c, uint32_t t)
{
    char name[64];
    ptx_tok_str(c->m, t, name, sizeof name);
    return ptx_fmt(c->m, "line %u: '%s'", c->m->toks[t].line, name);
}

static void refuse(tidal_kernel_report *r, const char *reason, const char *detail)
{
    r->verdict = TIDAL_REFUSED;
    r->reason = reason;
    r->detail = detail;
}

typedef struct plan {
    bool between_barrier;        /* barrier between logical blocks of one claim */
    bool funnel;                 /* route barriers and exits through one CTA-wide funnel */
    unsigned bar_id;             /* id of tidal's own barriers */
    bool big_shared;             /* the module has dynamic shared memory: no case b in the original entry */
    tidal_kernel_report *report; /* this kernel's line of the report */
} plan;

/* Statement reaches a barrier of the given kind (full: no thread count). */
static bool *barrier_sites(ctx *c, const ptx_func *f, bool full_only)
{
    bool *isb = calloc(f->nstmts + 1, 1);
    if (!isb) ptx_ice("out of memory");
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind == PTX_ST_INSTR && s->op_class == PTX_OP_BARRIER)
            isb[i] = full_only ? tidal_is_full_barrier(c->m, s) : true;
        else
            isb[i] = stmt_barrier(c, f, i);
    }
    return isb;
}

/* Why the barrier funnel cannot take kernel f, or NULL when it can; *tok is the
 * offending statement's token. The funnel takes unpredicated full barriers without a
 * result (no bar.red) at the top level of the body, none in callees, and needs an id of
 * its own next to counted barriers. */
static const char *funnel_obstacle(ctx *c, const ptx_func *f, const tidal_facts *x, int private_id, uint32_t *tok)
{
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        *tok = s->opcode_tok;
        if (s->kind == PTX_ST_INSTR && s->op_class == PTX_OP_CALL && stmt_barrier(c, f, i))
            return "barriers in called functions";
        if (!tidal_is_full_barrier(c->m, s)) continue;
        const ptx_token *ot = &c->m->toks[s->opcode_tok];
        if (tidal_text_contains(c->m->src + ot->off, ot->len, ".red")) return "reduction barriers";
        if (s->guard_tok >= 0) return "predicated full barriers";
        /* its labels would be out of the funnel's sight */
        if (s->depth > 0) return "full barriers inside { } scopes";
    }
    *tok = UINT32_MAX;
    if (private_id < 0 && x->barrier_counted) return "counted barriers when no barrier id is free";
    return NULL;
}

/* Decides whether kernel fi can be rewritten and how; fills r. */
static bool check_kernel(ctx *c, func_info *fi, tidal_kernel_report *r, plan *pl)
{
    const ptx_func *f = fi->f;
    const ptx_module *m = c->m;
    const tidal_facts *x = closure(c, fi);
    if (m->address_size != 64) {
        refuse(r, "address-size", "only .address_size 64 modules are rewritten");
        return false;
    }
    if (m->version_major < 6 || (m->version_major == 6 && m->version_minor < 2)) {
        refuse(r, "ptx-version",
               ptx_fmt(c->m,
                       "PTX %u.%u is older than 6.2 (tidal's code needs .relaxed "
                       "atomics, barrier.red and nanosleep)",
                       m->version_major, m->version_minor));
        return false;
    }
    unsigned sm = 0;
    if (sscanf(m->target, "sm_%u", &sm) != 1 || sm < 70) {
        refuse(r, "target",
               ptx_fmt(c->m, "target '%s' is older than sm_70 (needs .relaxed atomics)",
                       m->target[0] ? m->target : "(none)"));
        return false;
    }
    if (x->cluster_tok != UINT32_MAX) {
        refuse(r, "clusters", ptx_fmt(c->m, "uses thread-block clusters (%s)", tok_line(c, x->cluster_tok)));
        return false;
    }
    if (x->envreg_tok != UINT32_MAX) {
        refuse(r, "cooperative-launch",
               ptx_fmt(c->m, "reads the launch environment, as grid-wide sync does (%s)", tok_line(c, x->envreg_tok)));
        return false;
    }
    if (x->devlaunch_tok != UINT32_MAX) {
        refuse(r, "device-launch",
               ptx_fmt(c->m, "launches kernels from the device (%s)", tok_line(c, x->devlaunch_tok)));
        return false;
    }
    /* A worker block runs many logical blocks; the hardware resets a named barrier only
     * when the block exits. A logical block that ends with a phase half arrived (a
     * block-uniform branch around the waiting side, test/gpu rc_unbalanced) completes the
     * next logical block's wait early: a race the original cannot have. */
    if (x->arrive_tok != UINT32_MAX && !c->opt->assume_balanced_arrive) {
        refuse(r, "named-arrive",
               ptx_fmt(c->m,
                       "arrives at a named barrier without waiting (%s): a logical block that ends with the "
                       "barrier's phase half arrived would complete the next logical block's wait early, and no "
                       "proof that every logical block balances its arrivals is made (--assume-balanced-arrive "
                       "asserts it)",
                       tok_line(c, x->arrive_tok)));
        return false;
    }
    /* Transforms build text with C strings; real PTX never holds a NUL byte. */
    {
        size_t from = m->toks[f->tok_begin].off, to = m->toks[f->tok_end - 1].off + m->toks[f->tok_end - 1].len;
        if (memchr(m->src + from, 0, to - from)) {
            refuse(r, "nul-byte", "the kernel's text holds a NUL byte (in a comment)");
            return false;
        }
    }
    if (c->already_ran) {
        refuse(r, "name-collision", "the tidal pass already rewrote this module (it ran twice in one pipeline)");
        return false;
    }
    if (c->module_prefix_tok != UINT32_MAX) {
        refuse(r, "name-collision",
               ptx_fmt(c->m, "the module already uses a name reserved for tidal (%s); was it rewritten before?",
                       tok_line(c, c->module_prefix_tok)));
        return false;
    }
    if (x->prefix_tok != UINT32_MAX) {
        refuse(r, "name-collision", ptx_fmt(c->m, "uses a name reserved for tidal (%s)", tok_line(c, x->prefix_tok)));
        return false;
    }
    /* callees: `exit` ends the thread from inside a .func; %ctaid there is physical */
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR || s->op_class != PTX_OP_CALL) continue;
        tidal_facts cf;
        callee_facts(c, s, &cf);
        if (cf.exit_instr) {
            refuse(r, "exit-in-callee",
                   ptx_fmt(c->m, "calls a function that may execute 'exit' (%s)", tok_line(c, s->opcode_tok)));
            return false;
        }
        if (cf.reads_ctaid) {
            refuse(r, "callee-reads-ctaid",
                   ptx_fmt(c->m, "calls a function that reads %%ctaid/%%nctaid (%s)", tok_line(c, s->opcode_tok)));
            return false;
        }
    }
    /* %ctaid / %nctaid as a whole vector */
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR) continue;
        for (uint32_t t = s->opcode_tok + 1; t < s->tok_end; t++) {
            const ptx_token *k = &m->toks[t];
            if (k->kind != PTX_TK_IDENT || m->src[k->off] != '%') continue;
            int comp;
            ptx_sreg sr = ptx_sreg_classify(m->src + k->off, k->len, &comp);
            if ((sr == PTX_SREG_CTAID || sr == PTX_SREG_NCTAID) && comp < 0) {
                refuse(r, "ctaid-vector", ptx_fmt(c->m, "reads %%ctaid/%%nctaid as a vector (%s)", tok_line(c, t)));
                return false;
            }
        }
    }
    /* exits vs barriers */
    memset(pl, 0, sizeof *pl);
    if (x->cta_barrier) {
        ptx_diag cd;
        ptx_diag_init(&cd, m->file);
        ptx_cfg *cfg = ptx_cfg_build(f, &cd);
        if (!cfg) {
            refuse(r, "bad-control-flow", ptx_fmt(c->m, "line %u: %s", cd.line, cd.msg));
            return false;
        }
        /* Exited threads wait at tidal's barrier instead of leaving, so a full
         * barrier the others still run would wedge; counted barriers do not
         * include them, as long as tidal's barrier has an id of its own. */
        bool *full = barrier_sites(c, f, true);
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
            bool *all = barrier_sites(c, f, false);
            conv_all = tidal_exits_convergent(f, cfg, all, &why_all, &why_all_bar);
            free(all);
        }
        ptx_cfg_free(cfg);
        uint32_t obstacle_tok = UINT32_MAX;
        const char *obstacle =
            conv_full && private_id >= 0 ? NULL : funnel_obstacle(c, f, x, private_id, &obstacle_tok);
        if (conv_full && private_id >= 0) {
            r->exit_mode = TIDAL_EXIT_CONVERGENT;
            pl->bar_id = (unsigned)private_id;
        } else if (conv_full && conv_all) {
            r->exit_mode = TIDAL_EXIT_CONVERGENT;
            pl->bar_id = 0;
        } else if (!obstacle) {
            /* Full barriers are plain bar.sync/barrier.sync in the body: route them
             * and the exits through one funnel with an id no counted barrier uses.
             * One barrier instruction for all sites matters: barrier.red at several
             * places, reached by lanes of one warp at different places, ran the
             * wrong lanes through the body on the H200 (docs/design.md). */
            r->exit_mode = TIDAL_EXIT_FUNNEL;
            pl->funnel = true;
            pl->bar_id = private_id >= 0 ? (unsigned)private_id : 0;
        } else if (conv_full) {
            refuse(r, "barrier-ids",
                   ptx_fmt(c->m,
                           "no barrier id is free for tidal and exits are not convergent: a thread may leave "
                           "(%s) while others still reach a barrier (%s)",
                           tok_line(c, why_all), why_all_bar != UINT32_MAX ? tok_line(c, why_all_bar) : "unknown"));
            return false;
        } else {
            /* Leaving threads are only a problem at barriers some threads still
             * reach: a divergent branch none of whose paths meets a barrier again
             * before an exit is fine (tidal_uniform.c), so this names the branch and
             * a barrier reachable after it. */
            refuse(r, "divergent-exit",
                   ptx_fmt(c->m,
                           "a thread may leave (%s) while others still reach a full barrier (%s); the "
                           "barrier funnel cannot take %s%s%s%s",
                           tok_line(c, why), why_bar != UINT32_MAX ? tok_line(c, why_bar) : "unknown", obstacle,
                           obstacle_tok != UINT32_MAX ? " (" : "",
                           obstacle_tok != UINT32_MAX ? tok_line(c, obstacle_tok) : "",
                           obstacle_tok != UINT32_MAX ? ")" : ""));
            return false;
        }
    } else {
        r->exit_mode = TIDAL_EXIT_NO_BARRIERS;
    }
    r->bar_id = pl->bar_id;
    bool *between_barrier = &pl->between_barrier;
    *between_barrier = x->shared_mem || x->cta_barrier || x->warp_sync;
    /* Dynamic shared memory starts after the static variables, which ptxas pads to the
     * largest .extern .shared alignment of the module (16 at least). A static __tidal_sh in
     * the original entry (case b) would move the dynamic base: by 32 bytes in a Triton
     * module (it declares .align 16 but its TMA/wgmma tiles rely on the base staying where
     * a kernel without static variables has it, 1 KiB-aligned), by up to the alignment
     * elsewhere. Such a module's original entries stay verbatim (tidal_run). */
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind != PTX_ITEM_VAR || it->text) continue;
        bool ext = false, sh = false;
        for (uint32_t t = it->tok_begin; t < it->name_tok; t++) {
            if (ptx_tok_is(m, t, ".extern")) ext = true;
            if (ptx_tok_is(m, t, ".shared")) sh = true;
        }
        if (ext && sh) pl->big_shared = true;
    }
    /* module-scope shared variables count as shared memory */
    for (uint32_t i = 0; i < m->nitems && !*between_barrier; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind != PTX_ITEM_VAR || it->text) continue;
        for (uint32_t t = it->tok_begin; t < it->name_tok; t++)
            if (ptx_tok_is(m, t, ".shared")) *between_barrier = true;
    }
    return true;
}

/* The skeleton's text with its placeholders filled for one entry: the original
 * (clone = false) or the reshaped clone, whose extern array is dsh; ctl: the module has
 * __tidal_ctl (case b). */
static char *expand_once(const char *text, unsigned bar_id, bool clone, bool ctl, const char *dsh)
{
    char bar[8];
    snprintf(bar, sizeof bar, "%u", bar_id);
    char *snip[4] = {tidal_snippet_ptx(&tidal_snippet_enter), tidal_snippet_ptx(&tidal_snippet_claim),
                     tidal_snippet_ptx(&tidal_snippet_leave), tidal_snippet_ptx(&tidal_snippet_start)};
    const struct {
        const char *mark, *with;
    } fill[] = {
        {"@BAR@", bar},
        {"@ENTER@", snip[0]},
        {"@CLAIM@", snip[1]},
        {"@LEAVE@", snip[2]},
        {"@START@", snip[3]},
        {"@VALUES@", clone ? tidal_values_reshaped_grid : tidal_values_original_grid},
        {"@LOGICAL@", clone ? tidal_reshaped_reload : tidal_original_reload},
        {"@CTL@", ctl ? tidal_ctl_fallback : ""},
        {"@SH@", clone ? "%tdl_sh" : TIDAL_SH_SYMBOL},
        {"@DSH@", dsh},
    };
    sbuf b = {0};
    sb_str(&b, "");
    for (const char *p = text; *p;) {
        size_t k = 0, nfill = sizeof fill / sizeof fill[0];
        if (*p == '@')
            while (k < nfill && strncmp(p, fill[k].mark, strlen(fill[k].mark))) k++;
        if (*p != '@' || k == nfill) {
            sb_put(&b, p++, 1);
            continue;
        }
        sb_str(&b, fill[k].with);
        p += strlen(fill[k].mark);
    }
    for (int i = 0; i < 4; i++) free(snip[i]);
    return b.p;
}

/* Twice: a filled-in text may hold a placeholder itself (@VALUES@ holds @CTL@ and @SH@). */
static char *expand(const char *text, unsigned bar_id, bool clone, bool ctl, const char *dsh)
{
    char *once = expand_once(text, bar_id, clone, ctl, dsh);
    char *twice = expand_once(once, bar_id, clone, ctl, dsh);
    free(once);
    return twice;
}

static const char direct_copy_begin[] =
    "// tidal: the original body, run as is when no runtime is attached (launch case a)\n";
static const char direct_copy_end[] = "\t}\n// tidal: end of the original body";

/* The original body, verbatim, for launch case a: real exits, real barriers,
 * physical %ctaid. Its own { } scope keeps its labels apart from the rewritten
 * copy's; declarations are left out so it uses the rewritten copy's registers
 * and shared variables (only one of the two ever runs in a block). */
static char *direct_copy(ctx *c, const ptx_func *f)
{
    const ptx_module *m = c->m;
    sbuf b = {0};
    sb_str(&b, direct_copy_begin);
    sb_str(&b, "$tdl_direct_start:\n\t{");
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if ((s->kind == PTX_ST_REG || s->kind == PTX_ST_VAR) && s->depth == 0) continue;
        const ptx_token *first = &m->toks[s->tok_begin], *last = &m->toks[s->tok_end - 1];
        sb_str(&b, s->kind == PTX_ST_LABEL ? "\n" : "\n\t");
        sb_put(&b, m->src + first->off, last->off + last->len - first->off);
    }
    sb_str(&b, "\n");
    sb_str(&b, direct_copy_end);
    return b.p;
}

/* The statements tidal inserts into a rewritten kernel whose text differs between
 * the original entry and the clone: their indices, and both texts. The clone is
 * printed from the same statements with the clone's texts swapped in. */
enum { PIECE_SHARED, PIECE_PROLOGUE, PIECE_EPILOGUE, PIECE_DIRECT, NPIECES };
typedef struct pieces {
    uint32_t at[NPIECES];
    char *original[NPIECES], *clone[NPIECES];
    char *dsh; /* the clone's extern array, NAME__tidal_dsh */
} pieces;

static void pieces_free(pieces *pc)
{
    for (int i = 0; i < NPIECES; i++) {
        free(pc->original[i]);
        free(pc->clone[i]);
    }
    free(pc->dsh);
}

static void pieces_apply(ptx_func *f, const pieces *pc, bool clone)
{
    for (int i = 0; i < NPIECES; i++) ptx_stmt_set_text(f, pc->at[i], clone ? pc->clone[i] : pc->original[i]);
}

static void rewrite_body(ctx *c, ptx_func *f, const plan *pl, pieces *pc)
{
    unsigned nsites = 0;
    char *original = direct_copy(c, f);
    sbuf dn = {0};
    sb_str(&dn, ptx_func_name(f));
    sb_str(&dn, TIDAL_DSH_SUFFIX);
    pc->dsh = dn.p;
    const char *dsh = pc->dsh;
    /* 1. statements of the original body */
    for (uint32_t i = 0; i < f->nstmts; i++) {
        ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR || s->synthesized) continue;
        if (s->op_class == PTX_OP_RET || s->op_class == PTX_OP_EXIT) {
            if (pl->funnel) {
                char *g = guard_prefix(c, s);
                char *t = ptx_fmt(c->m, "%smov.u32 \t%%tdl_resume, -1;\n\t%sbra \t$tdl_funnel;", g, g);
                ptx_stmt_set_text(f, i, t);
                free(g);
            } else {
                ptx_stmt_set_text(f, i, exit_to_branch(c, s));
            }
            continue;
        }
        if (pl->funnel && tidal_is_full_barrier(c->m, s)) {
            /* a full-CTA barrier site: wait in the funnel, then come back here */
            ptx_stmt_set_text(
                f, i,
                ptx_fmt(c->m, "mov.u32 \t%%tdl_resume, %u;\n\tbra \t$tdl_funnel;\n$tdl_resume_%u:", nsites, nsites));
            nsites++;
            continue;
        }
        bool changed;
        char *t = substitute_sregs(c, s, &changed);
        if (changed) ptx_stmt_set_text(f, i, t);
        free(t);
    }
    /* 2. prologue before, epilogue after */
    for (int k = 0; k < 2; k++) {
        bool clone = k == 1;
        sbuf p = {0};
        sb_str(&p, clone ? tidal_prologue_reshaped_grid : tidal_prologue_original_grid);
        sb_str(&p, clone ? tidal_values_reshaped_grid : tidal_values_original_grid);
        sb_str(&p, tidal_prologue_common);
        (clone ? pc->clone : pc->original)[PIECE_PROLOGUE] = expand(p.p, pl->bar_id, clone, c->ctl, dsh);
        free(p.p);
    }
    uint32_t at = 0;
    ptx_stmt_insert(f, at++, PTX_ST_REG, tidal_reg_decls);
    /* The shared words: a static variable in the original entry (case b: its launcher
     * adds no dynamic bytes); in the clone the tail of the dynamic shared memory, so the
     * clone's static shared memory is the original's and it launches wherever the
     * original launches (abi/tidal_abi.h, TIDAL_SH_*). The clone finds them through an
     * extern array of its own, declared before it (clone_text): it starts at the dynamic
     * base, as every extern shared array does, and its 8-byte alignment leaves the base
     * where it was (ptxas pads a kernel's static shared memory to the largest .extern
     * .shared alignment of the module, 16 at least: in a module without dynamic shared
     * memory every kernel's static size rounds up to 16 bytes). One per clone: in a debug
     * module (.target ..., debug) ptxas puts an extern array after the largest static
     * variables of all the kernels that use it, so a shared one gave every clone the
     * largest clone's static size. */
    char shdecl[80];
    snprintf(shdecl, sizeof shdecl, ".shared .align %u .b8 \t" TIDAL_SH_SYMBOL "[%u];", (unsigned)TIDAL_SH_ALIGN,
             (unsigned)TIDAL_SH_BYTES);
    pc->original[PIECE_SHARED] = strdup(shdecl);
    sbuf cs = {0};
    sb_str(&cs, "// tidal: the shared words are at ");
    sb_str(&cs, dsh);
    sb_str(&cs, " + tidal_launch.sh_off (the dynamic shared memory's tail)");
    pc->clone[PIECE_SHARED] = cs.p;
    if (!pc->original[PIECE_SHARED]) ptx_ice("out of memory");
    pc->at[PIECE_SHARED] = ptx_stmt_insert(f, at++, PTX_ST_VAR, shdecl);
    pc->at[PIECE_PROLOGUE] = ptx_stmt_insert(f, at++, PTX_ST_DIRECTIVE, pc->original[PIECE_PROLOGUE]);
    sbuf e = {0};
    sb_str(&e, "$tdl_next:\n");
    if (pl->funnel) {
        /* Threads that finished the logical block keep joining the barrier
         * rounds of those still running, so every barrier still sees the whole
         * CTA; when no thread is at a barrier, the block is done. The barrier is
         * a call (TIDAL_FUNNEL_FUNC): one barrier instruction for all lanes. */
        c->funnel_ids |= 1u << pl->bar_id;
        sb_str(&e, "\tmov.u32 \t%tdl_resume, -1;\n"
                   "$tdl_funnel:\n"
                   "\tcall \t(%tdl_t0), " TIDAL_FUNNEL_FUNC "@BAR@, (%tdl_resume);\n"
                   "\tsetp.ne.u32 \t%tdl_q, %tdl_t0, 0;\n"
                   "\t@!%tdl_q bra \t$tdl_after;\n"
                   "\tsetp.eq.u32 \t%tdl_p, %tdl_resume, -1;\n"
                   "\t@%tdl_p bra \t$tdl_funnel;\n");
        if (nsites > 8) {
            sb_str(&e, "$tdl_resume_targets: .branchtargets ");
            for (unsigned k = 0; k < nsites; k++) {
                char lab[32];
                snprintf(lab, sizeof lab, "%s$tdl_resume_%u", k ? ", " : "", k);
                sb_str(&e, lab);
            }
            sb_str(&e, ";\n\tbrx.idx \t%tdl_resume, $tdl_resume_targets;\n");
        } else {
            for (unsigned k = 0; k < nsites; k++) {
                char line[128];
                snprintf(line, sizeof line,
                         "\tsetp.eq.u32 \t%%tdl_p, %%tdl_resume, %u;\n\t@%%tdl_p bra \t$tdl_resume_%u;\n", k, k);
                sb_str(&e, line);
            }
            sb_str(&e, "\ttrap;\n");
        }
        sb_str(&e, "$tdl_after:\n");
    }
    sb_str(&e, tidal_epilogue_head);
    if (pl->between_barrier) {
        char line[48];
        snprintf(line, sizeof line, "\tbarrier.sync \t%u;\n", pl->bar_id);
        sb_str(&e, line);
    }
    sb_str(&e, tidal_epilogue_tail);
    pc->original[PIECE_EPILOGUE] = expand(e.p, pl->bar_id, false, c->ctl, "");
    pc->clone[PIECE_EPILOGUE] = expand(e.p, pl->bar_id, true, c->ctl, dsh);
    free(e.p);
    pc->at[PIECE_EPILOGUE] = ptx_stmt_insert(f, f->nstmts, PTX_ST_DIRECTIVE, pc->original[PIECE_EPILOGUE]);
    pc->original[PIECE_DIRECT] = original;
    pc->clone[PIECE_DIRECT] = strdup("// tidal: (the clone has no copy of the original body)");
    if (!pc->clone[PIECE_DIRECT]) ptx_ice("out of memory");
    pc->at[PIECE_DIRECT] = ptx_stmt_insert(f, f->nstmts, PTX_ST_DIRECTIVE, original);
}

/* The reshaped clone: the same statements with the clone's pieces, under a header
 * with the name suffixed and a tidal_launch parameter appended. */
static char *clone_text(ctx *c, ptx_func *f, const pieces *pc)
{
    ptx_module *m = c->m;
    sbuf b = {0};
    /* the clone's own extern array: the base of its shared words (rewrite_body) */
    sb_str(&b, "// tidal: the clone's shared words are in the tail of its dynamic shared memory\n"
               ".extern .shared .align " S(TIDAL_SH_ALIGN) " .b8 ");
    sb_str(&b, pc->dsh);
    sb_str(&b, "[];\n");
    /* header: original bytes with the name replaced and a parameter appended */
    const ptx_token *nt = &m->toks[f->name_tok];
    size_t hb = m->toks[f->tok_begin].off;
    sb_put(&b, m->src + hb, nt->off - hb);
    sb_put(&b, m->src + nt->off, nt->len);
    sb_str(&b, TIDAL_RESHAPED_SUFFIX);
    size_t after_name = nt->off + nt->len;
    char extra[64];
    snprintf(extra, sizeof extra, ".param .align 8 .b8 __tidal_launch[%u]", (unsigned)TIDAL_LAUNCH_BYTES);
    if (f->nparams) {
        const ptx_token *last = &m->toks[f->params[f->nparams - 1].tok_end - 1];
        size_t cut = last->off + last->len;
        sb_put(&b, m->src + after_name, cut - after_name);
        sb_str(&b, ",\n\t");
        sb_str(&b, extra);
        size_t open = m->toks[f->body_open_tok].off;
        sb_put(&b, m->src + cut, open - cut);
    } else {
        /* no parameters, or an empty list: write a new list */
        uint32_t t = f->name_tok + 1;
        size_t rest = after_name;
        if (ptx_tok_is(m, t, "(") && ptx_tok_is(m, t + 1, ")")) rest = m->toks[t + 1].off + 1;
        sb_str(&b, "(\n\t");
        sb_str(&b, extra);
        sb_str(&b, "\n)");
        size_t open = m->toks[f->body_open_tok].off;
        sb_put(&b, m->src + rest, open - rest);
    }
    pieces_apply(f, pc, true);
    char *body = NULL;
    size_t blen = 0;
    FILE *mf = open_memstream(&body, &blen);
    if (!mf || ptx_func_print_body(f, mf) || fclose(mf)) ptx_ice("cannot print function body");
    pieces_apply(f, pc, false);
    sb_put(&b, body, blen);
    free(body);
    return b.p;
}

/* After the clone: its parameter count as the size of NAME__tidal_nparams
 * (abi/tidal_abi.h). .weak like the marker: a kernel defined in several objects of an
 * -rdc link (a template) defines it in each, with the same size. */
static char *nparams_text(const ptx_func *f)
{
    const ptx_token *nt = &f->mod->toks[f->name_tok];
    sbuf b = {0};
    sb_str(&b, "// tidal: the clone's parameter count, as this global's size (abi/tidal_abi.h)\n"
               ".weak .global .align 1 .b8 ");
    sb_put(&b, f->mod->src + nt->off, nt->len);
    char n[32];
    snprintf(n, sizeof n, TIDAL_NPARAMS_SUFFIX "[%u];", (unsigned)f->nparams + 1);
    sb_str(&b, n);
    return b.p;
}

int tidal_run(ptx_module *m, const tidal_options *opt, tidal_report *rep, ptx_diag *diag)
{
    tidal_options defaults = TIDAL_OPTIONS_DEFAULT;
    if (!opt) opt = &defaults;
    ctx c = {.m = m, .d = diag, .opt = opt, .module_prefix_tok = UINT32_MAX};
    /* Names tidal defines at module scope (__tidal_ctl, the marker, the clones'
     * *__tidal_reshaped and their __tidal_launch parameter) must be free outside
     * function bodies: a second run would define them again. */
    for (uint32_t i = 0; i < m->nitems && c.module_prefix_tok == UINT32_MAX && !c.already_ran; i++) {
        const ptx_item *it = &m->items[i];
        if (it->text) {
            /* already rewritten in this process (-p tidal,tidal) */
            if (strstr(it->text, TIDAL_MARKER_SYMBOL)) c.already_ran = true;
            continue;
        }
        uint32_t end = it->tok_end;
        if (it->kind == PTX_ITEM_FUNC && it->func && it->func->has_body) end = it->func->body_open_tok;
        for (uint32_t t = it->tok_begin; t < end; t++)
            if (reserved_name(m, t)) {
                c.module_prefix_tok = t;
                break;
            }
    }
    c.nf = ptx_func_count(m);
    c.fi = calloc(c.nf + 1, sizeof *c.fi);
    if (!c.fi) ptx_ice("out of memory");
    unsigned nk = 0;
    for (uint32_t i = 0; i < c.nf; i++) {
        c.fi[i].f = ptx_func_at(m, i);
        if (c.fi[i].f->has_body)
            tidal_facts_local(c.fi[i].f, &c.fi[i].local);
        else {
            tidal_facts_empty(&c.fi[i].local);
        }
        nk += c.fi[i].f->is_entry && c.fi[i].f->has_body;
    }
    memset(rep, 0, sizeof *rep);
    rep->file = m->file;
    rep->kernels = ptx_arena_zalloc(m->arena, sizeof *rep->kernels * (nk + 1));
    if (!rep->kernels) ptx_ice("out of memory");
    /* Decide first, then edit: analyses read the original token streams. */
    bool *ok = calloc(c.nf + 1, 1);
    plan *plans = calloc(c.nf + 1, sizeof *plans);
    if (!ok || !plans) ptx_ice("out of memory");
    for (uint32_t i = 0; i < c.nf; i++) {
        ptx_func *f = c.fi[i].f;
        if (!f->is_entry || !f->has_body) continue;
        tidal_kernel_report *r = &rep->kernels[rep->nkernels++];
        r->name = ptx_func_name(f);
        r->line = m->toks[f->name_tok].line;
        r->verdict = TIDAL_REWRITTEN;
        ok[i] = check_kernel(&c, &c.fi[i], r, &plans[i]);
        plans[i].report = r;
        if (ok[i]) {
            r->regs_added = regs_added();
            r->barrier_between_blocks = plans[i].between_barrier;
        }
    }
    /* __tidal_ctl only where an original entry gets case b: with dynamic shared memory
     * the originals stay verbatim even under --case-b, and a module whose originals all
     * do needs no control word (nor pays for a module-scope .const) */
    c.ctl = false;
    for (uint32_t i = 0; i < c.nf; i++)
        if (ok[i] && opt->case_b && !plans[i].big_shared) c.ctl = true;
    bool any = false;
    pieces *pcs = calloc(c.nf + 1, sizeof *pcs);
    if (!pcs) ptx_ice("out of memory");
    for (uint32_t i = 0; i < c.nf; i++) {
        if (!ok[i]) continue;
        any = true;
        rewrite_body(&c, c.fi[i].f, &plans[i], &pcs[i]);
    }
    if (any) {
        /* clones go right after their originals; find item indices */
        if (opt->reshaped_clone) {
            for (uint32_t it = 0; it < m->nitems; it++) {
                ptx_item *item = &m->items[it];
                if (item->kind != PTX_ITEM_FUNC || !item->func) continue;
                for (uint32_t i = 0; i < c.nf; i++)
                    if (ok[i] && c.fi[i].f == item->func) {
                        char *t = clone_text(&c, c.fi[i].f, &pcs[i]);
                        ptx_item_insert(m, it + 1, PTX_ITEM_FUNC, t);
                        free(t);
                        t = nparams_text(c.fi[i].f);
                        ptx_item_insert(m, it + 2, PTX_ITEM_VAR, t);
                        free(t);
                        /* The original entry stays byte-identical unless case b is asked
                         * for; even then a kernel with dynamic shared memory keeps it:
                         * case b's static __tidal_sh (its launcher adds no dynamic bytes)
                         * would move the dynamic base (check_kernel), breaking Triton's
                         * aligned tiles, and launches near the per-block limit (Triton GEMMs
                         * with many stages) would fail with "invalid argument". Its launches
                         * run as the original or as the clone, none in case b. */
                        if (!opt->case_b || plans[i].big_shared) {
                            c.fi[i].f->modified = false;
                            plans[i].report->original_verbatim = 1;
                            plans[i].report->verbatim_shared = opt->case_b;
                        }
                        it += 2;
                        break;
                    }
            }
        }
        /* module globals after the module header */
        uint32_t at = 0;
        for (uint32_t it = 0; it < m->nitems; it++) {
            uint8_t kd = m->items[it].kind;
            if (kd == PTX_ITEM_VERSION || kd == PTX_ITEM_TARGET || kd == PTX_ITEM_ADDRESS_SIZE) at = it + 1;
        }
        /* The marker's size says whether the module has __tidal_ctl (abi/tidal_abi.h): a
         * module-scope .const costs every kernel of the module 0.24 us per launch on
         * the H200 (bench/probes/module_cost.sh), so only case b defines one. */
        /* the funnel barriers, before every kernel that calls them */
        for (unsigned id = 16; id-- > 0;)
            if (c.funnel_ids >> id & 1)
                ptx_item_insert(m, at, PTX_ITEM_FUNC,
                                ptx_fmt(m,
                                        "\n// tidal: the barrier funnel's barrier %u (passes/tidal_protocol.h)\n"
                                        ".func (.reg .b32 %%any) " TIDAL_FUNNEL_FUNC "%u(.reg .b32 %%resume)\n"
                                        "{\n"
                                        "\t.reg .pred \t%%p;\n"
                                        "\tsetp.ne.u32 \t%%p, %%resume, -1;\n"
                                        "\tbarrier.red.or.pred \t%%p, %u, %%p;\n"
                                        "\tselp.u32 \t%%any, 1, 0, %%p;\n"
                                        "\tret;\n"
                                        "}",
                                        id, id, id));
        if (c.ctl)
            ptx_item_insert(m, at, PTX_ITEM_VAR,
                            "\n// tidal: control block pointer, set by the runtime after loading (abi/tidal_abi.h)\n"
                            ".weak .const .align 8 .u64 " TIDAL_CTL_SYMBOL " = 0;\n"
                            "// tidal: the module is rewritten; 8 bytes: it has " TIDAL_CTL_SYMBOL " (case b)\n"
                            ".weak .global .align 4 .u32 " TIDAL_MARKER_SYMBOL "[2] = {1, 1};");
        else
            ptx_item_insert(m, at, PTX_ITEM_VAR,
                            "\n// tidal: the module is rewritten (abi/tidal_abi.h); 4 bytes: no control-block pointer\n"
                            ".weak .global .align 4 .u32 " TIDAL_MARKER_SYMBOL " = 1;");
    }
    for (uint32_t i = 0; i < c.nf; i++) pieces_free(&pcs[i]);
    free(pcs);
    free(ok);
    free(plans);
    free(c.fi);
    (void)diag;
    return 0;
}
