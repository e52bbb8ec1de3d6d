/* tidal_rewrite.c — the rewrite phase: every kernel the plan rewrites gets tidal's
 * skeleton (tidal_code.c) around its body, with the protocol's snippets
 * (tidal_protocol.c) filled in, and the module its globals (the marker, __tidal_ctl for
 * case b, the funnel barriers):
 *
 *   prologue   the launch values (case a, no runtime: jump to a verbatim copy of the
 *              original body); the leader enters the launch (ENTER) or, in a static
 *              launch, starts on its own chunk (START); b0 is published, one barrier.
 *   logical    %ctaid/%nctaid read the logical values; `ret`/`exit` jump to
 *              $tdl_next (through the funnel when the plan says so), which runs the
 *              next logical block of the chunk or claims the next chunk (CLAIM).
 *   leave      the leader counts the worker out (LEAVE).
 *
 * The texts that differ in the clone are kept (tidal_pieces) for the clone phase. See
 * docs/design.md §2. */
#define _POSIX_C_SOURCE 200809L
#include "tidal_internal.h"
#include "tidal_abi.h"
#include "tidal_protocol.h"

#include <stdio.h>

/* Statement text with %ctaid/%nctaid components replaced by the logical ones. */
static char *substitute_sregs(ptx_module *m, const ptx_stmt *s, bool *changed)
{
    tidal_sbuf b = {0};
    size_t pos = m->toks[s->tok_begin].off;
    *changed = false;
    for (uint32_t t = s->tok_begin; t < s->tok_end; t++) {
        const ptx_token *k = &m->toks[t];
        if (k->kind != PTX_TK_IDENT || m->src[k->off] != '%') continue;
        int comp;
        ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, &comp);
        if ((r != PTX_SREG_CTAID && r != PTX_SREG_NCTAID) || comp < 0) continue;
        tidal_sb_put(&b, m->src + pos, k->off - pos);
        static const char *const names[2][3] = {{"%tdl_cx", "%tdl_cy", "%tdl_cz"}, {"%tdl_nx", "%tdl_ny", "%tdl_nz"}};
        tidal_sb_str(&b, names[r == PTX_SREG_NCTAID][comp]);
        pos = k->off + k->len;
        *changed = true;
    }
    const ptx_token *last = &m->toks[s->tok_end - 1];
    tidal_sb_put(&b, m->src + pos, last->off + last->len - pos);
    return b.p;
}

/* "@p " / "@!p " / "" (always allocated). */
static char *guard_prefix(ptx_module *m, const ptx_stmt *s)
{
    tidal_sbuf b = {0};
    tidal_sb_str(&b, "");
    if (s->guard_tok >= 0) {
        const ptx_token *g = &m->toks[s->guard_tok];
        tidal_sb_str(&b, s->guard_neg ? "@!" : "@");
        tidal_sb_put(&b, m->src + g->off, g->len);
        tidal_sb_str(&b, " ");
    }
    return b.p;
}

/* `[@p] ret[.uni];` / `exit;` → `[@p] bra[.uni] $tdl_next;` */
static char *exit_to_branch(ptx_module *m, const ptx_stmt *s)
{
    const ptx_token *ot = &m->toks[s->opcode_tok];
    bool uni = ot->len >= 4 && !memcmp(m->src + ot->off + ot->len - 4, ".uni", 4);
    char *g = guard_prefix(m, s);
    char *t = ptx_fmt(m, "%s%s", g, uni ? "bra.uni \t$tdl_next;" : "bra \t$tdl_next;");
    free(g);
    return t;
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
    tidal_sbuf b = {0};
    tidal_sb_str(&b, "");
    for (const char *p = text; *p;) {
        size_t k = 0, nfill = sizeof fill / sizeof fill[0];
        if (*p == '@')
            while (k < nfill && strncmp(p, fill[k].mark, strlen(fill[k].mark))) k++;
        if (*p != '@' || k == nfill) {
            tidal_sb_put(&b, p++, 1);
            continue;
        }
        tidal_sb_str(&b, fill[k].with);
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
static char *direct_copy(const ptx_module *m, const ptx_func *f)
{
    tidal_sbuf b = {0};
    tidal_sb_str(&b, direct_copy_begin);
    tidal_sb_str(&b, "$tdl_direct_start:\n\t{");
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if ((s->kind == PTX_ST_REG || s->kind == PTX_ST_VAR) && s->depth == 0) continue;
        const ptx_token *first = &m->toks[s->tok_begin], *last = &m->toks[s->tok_end - 1];
        tidal_sb_str(&b, s->kind == PTX_ST_LABEL ? "\n" : "\n\t");
        tidal_sb_put(&b, m->src + first->off, last->off + last->len - first->off);
    }
    tidal_sb_str(&b, "\n");
    tidal_sb_str(&b, direct_copy_end);
    return b.p;
}

void tidal_pieces_free(tidal_pieces *pc)
{
    for (int i = 0; i < TIDAL_NPIECES; i++) {
        free(pc->original[i]);
        free(pc->clone[i]);
    }
    free(pc->dsh);
}

void tidal_pieces_apply(ptx_func *f, const tidal_pieces *pc, bool clone)
{
    for (int i = 0; i < TIDAL_NPIECES; i++) ptx_stmt_set_text(f, pc->at[i], clone ? pc->clone[i] : pc->original[i]);
}

static void rewrite_body(tidal_state *ts, ptx_func *f, const tidal_kernel_report *pl, tidal_pieces *pc)
{
    bool funnel = pl->exit_mode == TIDAL_EXIT_FUNNEL;
    unsigned nsites = 0;
    char *original = direct_copy(ts->m, f);
    tidal_sbuf dn = {0};
    tidal_sb_str(&dn, ptx_func_name(f));
    tidal_sb_str(&dn, TIDAL_DSH_SUFFIX);
    pc->dsh = dn.p;
    const char *dsh = pc->dsh;
    /* 1. statements of the original body */
    for (uint32_t i = 0; i < f->nstmts; i++) {
        ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR || s->synthesized) continue;
        if (s->op_class == PTX_OP_RET || s->op_class == PTX_OP_EXIT) {
            if (funnel) {
                char *g = guard_prefix(ts->m, s);
                char *t = ptx_fmt(ts->m, "%smov.u32 \t%%tdl_resume, -1;\n\t%sbra \t$tdl_funnel;", g, g);
                ptx_stmt_set_text(f, i, t);
                free(g);
            } else {
                ptx_stmt_set_text(f, i, exit_to_branch(ts->m, s));
            }
            continue;
        }
        if (funnel && tidal_is_full_barrier(ts->m, s)) {
            /* a full-CTA barrier site: wait in the funnel, then come back here */
            ptx_stmt_set_text(
                f, i,
                ptx_fmt(ts->m, "mov.u32 \t%%tdl_resume, %u;\n\tbra \t$tdl_funnel;\n$tdl_resume_%u:", nsites, nsites));
            nsites++;
            continue;
        }
        bool changed;
        char *t = substitute_sregs(ts->m, s, &changed);
        if (changed) ptx_stmt_set_text(f, i, t);
        free(t);
    }
    /* 2. prologue before, epilogue after */
    for (int k = 0; k < 2; k++) {
        bool clone = k == 1;
        tidal_sbuf p = {0};
        tidal_sb_str(&p, clone ? tidal_prologue_reshaped_grid : tidal_prologue_original_grid);
        tidal_sb_str(&p, clone ? tidal_values_reshaped_grid : tidal_values_original_grid);
        tidal_sb_str(&p, tidal_prologue_common);
        (clone ? pc->clone : pc->original)[TIDAL_PIECE_PROLOGUE] = expand(p.p, pl->bar_id, clone, ts->ctl, dsh);
        free(p.p);
    }
    uint32_t at = 0;
    ptx_stmt_insert(f, at++, PTX_ST_REG, tidal_reg_decls);
    /* The shared words: a static variable in the original entry (case b: its launcher
     * adds no dynamic bytes); in the clone the tail of the dynamic shared memory, so the
     * clone's static shared memory is the original's and it launches wherever the
     * original launches (abi/tidal_abi.h, TIDAL_SH_*). The clone finds them through an
     * extern array of its own, declared before it (tidal_clone.c): it starts at the dynamic
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
    pc->original[TIDAL_PIECE_SHARED] = strdup(shdecl);
    tidal_sbuf cs = {0};
    tidal_sb_str(&cs, "// tidal: the shared words are at ");
    tidal_sb_str(&cs, dsh);
    tidal_sb_str(&cs, " + tidal_launch.sh_off (the dynamic shared memory's tail)");
    pc->clone[TIDAL_PIECE_SHARED] = cs.p;
    if (!pc->original[TIDAL_PIECE_SHARED]) ptx_ice("out of memory");
    pc->at[TIDAL_PIECE_SHARED] = ptx_stmt_insert(f, at++, PTX_ST_VAR, shdecl);
    pc->at[TIDAL_PIECE_PROLOGUE] = ptx_stmt_insert(f, at++, PTX_ST_DIRECTIVE, pc->original[TIDAL_PIECE_PROLOGUE]);
    tidal_sbuf e = {0};
    tidal_sb_str(&e, "$tdl_next:\n");
    if (funnel) {
        /* Threads that finished the logical block keep joining the barrier
         * rounds of those still running, so every barrier still sees the whole
         * CTA; when no thread is at a barrier, the block is done. The barrier is
         * a call (TIDAL_FUNNEL_FUNC): one barrier instruction for all lanes. */
        tidal_sb_str(&e, "\tmov.u32 \t%tdl_resume, -1;\n"
                         "$tdl_funnel:\n"
                         "\tcall \t(%tdl_t0), " TIDAL_FUNNEL_FUNC "@BAR@, (%tdl_resume);\n"
                         "\tsetp.ne.u32 \t%tdl_q, %tdl_t0, 0;\n"
                         "\t@!%tdl_q bra \t$tdl_after;\n"
                         "\tsetp.eq.u32 \t%tdl_p, %tdl_resume, -1;\n"
                         "\t@%tdl_p bra \t$tdl_funnel;\n");
        if (nsites > 8) {
            tidal_sb_str(&e, "$tdl_resume_targets: .branchtargets ");
            for (unsigned k = 0; k < nsites; k++) {
                char lab[32];
                snprintf(lab, sizeof lab, "%s$tdl_resume_%u", k ? ", " : "", k);
                tidal_sb_str(&e, lab);
            }
            tidal_sb_str(&e, ";\n\tbrx.idx \t%tdl_resume, $tdl_resume_targets;\n");
        } else {
            for (unsigned k = 0; k < nsites; k++) {
                char line[128];
                snprintf(line, sizeof line,
                         "\tsetp.eq.u32 \t%%tdl_p, %%tdl_resume, %u;\n\t@%%tdl_p bra \t$tdl_resume_%u;\n", k, k);
                tidal_sb_str(&e, line);
            }
            tidal_sb_str(&e, "\ttrap;\n");
        }
        tidal_sb_str(&e, "$tdl_after:\n");
    }
    tidal_sb_str(&e, tidal_epilogue_head);
    if (pl->barrier_between_blocks) {
        char line[48];
        snprintf(line, sizeof line, "\tbarrier.sync \t%u;\n", pl->bar_id);
        tidal_sb_str(&e, line);
    }
    tidal_sb_str(&e, tidal_epilogue_tail);
    pc->original[TIDAL_PIECE_EPILOGUE] = expand(e.p, pl->bar_id, false, ts->ctl, "");
    pc->clone[TIDAL_PIECE_EPILOGUE] = expand(e.p, pl->bar_id, true, ts->ctl, dsh);
    free(e.p);
    pc->at[TIDAL_PIECE_EPILOGUE] = ptx_stmt_insert(f, f->nstmts, PTX_ST_DIRECTIVE, pc->original[TIDAL_PIECE_EPILOGUE]);
    pc->original[TIDAL_PIECE_DIRECT] = original;
    pc->clone[TIDAL_PIECE_DIRECT] = strdup("// tidal: (the clone has no copy of the original body)");
    if (!pc->clone[TIDAL_PIECE_DIRECT]) ptx_ice("out of memory");
    pc->at[TIDAL_PIECE_DIRECT] = ptx_stmt_insert(f, f->nstmts, PTX_ST_DIRECTIVE, original);
}

/* The module's globals, after its header (.version, .target, .address_size): the marker,
 * whose size says whether the module has __tidal_ctl (abi/tidal_abi.h), __tidal_ctl only
 * for case b (a module-scope .const costs every kernel of the module 0.24 us per launch
 * on the H200: bench/probes/module_cost.sh), and the funnel barriers, before every
 * kernel that calls them. */
static void insert_globals(tidal_state *ts)
{
    ptx_module *m = ts->m;
    uint32_t at = 0;
    for (uint32_t it = 0; it < m->nitems; it++) {
        uint8_t kd = m->items[it].kind;
        if (kd == PTX_ITEM_VERSION || kd == PTX_ITEM_TARGET || kd == PTX_ITEM_ADDRESS_SIZE) at = it + 1;
    }
    uint32_t before = m->nitems;
    for (unsigned id = 16; id-- > 0;)
        if (ts->funnel_ids >> id & 1)
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
    if (ts->ctl)
        ptx_item_insert(m, at, PTX_ITEM_VAR,
                        "\n// tidal: control block pointer, set by the runtime after loading (abi/tidal_abi.h)\n"
                        ".weak .const .align 8 .u64 " TIDAL_CTL_SYMBOL " = 0;\n"
                        "// tidal: the module is rewritten; 8 bytes: it has " TIDAL_CTL_SYMBOL " (case b)\n"
                        ".weak .global .align 4 .u32 " TIDAL_MARKER_SYMBOL "[2] = {1, 1};");
    else
        ptx_item_insert(m, at, PTX_ITEM_VAR,
                        "\n// tidal: the module is rewritten (abi/tidal_abi.h); 4 bytes: no control-block pointer\n"
                        ".weak .global .align 4 .u32 " TIDAL_MARKER_SYMBOL " = 1;");
    ts->globals_at = at;
    ts->nglobals = m->nitems - before;
}

void tidal_phase_rewrite(tidal_state *ts)
{
    bool any = false;
    for (uint32_t k = 0; k < ts->nkernels; k++) {
        tidal_kernel *kn = &ts->kernels[k];
        if (kn->plan->verdict != TIDAL_REWRITTEN) continue;
        rewrite_body(ts, kn->fn->f, kn->plan, &kn->pieces);
        kn->rewritten = true;
        any = true;
    }
    if (any) insert_globals(ts);
}
