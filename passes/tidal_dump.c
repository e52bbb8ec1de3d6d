/* tidal_dump.c — the state after each phase of the transform, as text (tidal-opt -d
 * facts|convergence|plan|rewrite|clone, or the letters f c p r k). Every line names its
 * phase and the function it is about; the formats are for people and lit tests, not a
 * stable interface. */
#include "tidal_internal.h"

#include <stdio.h>

/* ------------------------------------------------------------ facts */

static void put_tok(tidal_sbuf *b, const ptx_module *m, const char *what, uint32_t t)
{
    if (t == UINT32_MAX) return;
    char name[64];
    ptx_tok_str(m, t, name, sizeof name);
    char line[160];
    snprintf(line, sizeof line, "%s%s (line %u: '%s')", b->n ? ", " : "", what, m->toks[t].line, name);
    tidal_sb_str(b, line);
}

static void put_flag(tidal_sbuf *b, bool on, const char *what)
{
    if (!on) return;
    if (b->n) tidal_sb_str(b, ", ");
    tidal_sb_str(b, what);
}

/* The facts as a comma-separated list ("none" when there are none); malloc'd. */
static char *facts_text(const ptx_module *m, const tidal_facts *x)
{
    tidal_sbuf b = {0};
    tidal_sb_str(&b, "");
    put_flag(&b, x->cta_barrier, "cta-barrier");
    put_flag(&b, x->barrier_counted, "counted-barrier");
    put_flag(&b, x->barrier_red, "reduction-barrier");
    put_flag(&b, x->barrier_guarded, "predicated-barrier");
    if (x->barrier_ids) {
        tidal_sb_str(&b, b.n ? ", barrier-ids" : "barrier-ids");
        for (unsigned id = 0; id < 16; id++)
            if (x->barrier_ids >> id & 1) {
                char n[8];
                snprintf(n, sizeof n, " %u", id);
                tidal_sb_str(&b, n);
            }
    }
    put_flag(&b, x->barrier_id_reg, "barrier-id-in-register");
    put_tok(&b, m, "arrive", x->arrive_tok);
    put_flag(&b, x->exit_instr, "exit");
    put_flag(&b, x->warp_sync, "warp-collective");
    put_flag(&b, x->shared_mem, "shared-memory");
    put_flag(&b, x->reads_ctaid, "reads-ctaid");
    put_flag(&b, x->indirect_call, "indirect-call");
    put_tok(&b, m, "clusters", x->cluster_tok);
    put_tok(&b, m, "launch-environment", x->envreg_tok);
    put_tok(&b, m, "device-launch", x->devlaunch_tok);
    put_tok(&b, m, "tidal-name", x->prefix_tok);
    put_tok(&b, m, "ctaid-vector", x->ctaid_vector_tok);
    put_flag(&b, x->nul_byte, "nul-byte");
    if (!b.n) tidal_sb_str(&b, "none");
    return b.p;
}

static const char *fn_kind(const ptx_func *f) { return f->is_entry ? "kernel" : "func"; }

void tidal_dump_facts(const tidal_state *s, FILE *out)
{
    const ptx_module *m = s->m;
    fprintf(out, "facts module %s:", m->file);
    if (s->mod.reserved_tok != UINT32_MAX) {
        char name[64];
        fprintf(out, " tidal-name (line %u: '%s')", m->toks[s->mod.reserved_tok].line,
                ptx_tok_str(m, s->mod.reserved_tok, name, sizeof name));
    }
    if (s->mod.rewritten) fputs(" rewritten-already", out);
    if (s->mod.dynamic_shared) fputs(" dynamic-shared-memory", out);
    if (s->mod.shared_variables) fputs(" shared-variables", out);
    if (s->mod.reserved_tok == UINT32_MAX && !s->mod.rewritten && !s->mod.shared_variables) fputs(" none", out);
    fputc('\n', out);
    for (uint32_t i = 0; i < s->nfns; i++) {
        const tidal_fn *fn = &s->fns[i];
        fprintf(out, "facts %s %s (line %u): ", fn_kind(fn->f), ptx_func_name(fn->f), m->toks[fn->f->name_tok].line);
        if (!fn->f->has_body) {
            fputs("declaration\n", out);
            continue;
        }
        char *own = facts_text(m, &fn->local), *all = facts_text(m, &fn->closure);
        fprintf(out, "%s", own);
        /* what its callees add, when they add anything */
        if (strcmp(own, all)) fprintf(out, "; with callees: %s", all);
        fputc('\n', out);
        free(own);
        free(all);
    }
}

/* ------------------------------------------------------------ convergence */

void tidal_dump_convergence(const tidal_state *s, FILE *out)
{
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const tidal_kernel *kn = &s->kernels[k];
        const tidal_convergence *v = &kn->conv;
        fprintf(out, "convergence kernel %s: ", ptx_func_name(kn->fn->f));
        if (!v->analysed)
            fputs("not analysed (the tidal pass rewrote this module already)\n", out);
        else if (v->refusal != TIDAL_REASON_NONE)
            fprintf(out, "%s: %s\n", tidal_reason_name(v->refusal), v->detail);
        else
            fprintf(out, "%s, barrier id %u\n", tidal_exit_mode_name(v->mode), v->bar_id);
    }
}

/* ------------------------------------------------------------ plan */

void tidal_dump_plan(const tidal_state *s, FILE *out)
{
    unsigned rewritten = 0;
    for (uint32_t k = 0; k < s->nkernels; k++) rewritten += s->kernels[k].plan->verdict == TIDAL_REWRITTEN;
    fprintf(out, "plan module %s: %u kernels, %u to rewrite; __tidal_ctl: %s; funnel barriers:", s->m->file,
            s->nkernels, rewritten, s->ctl ? "yes (case b)" : "no");
    for (unsigned id = 0; id < 16; id++)
        if (s->funnel_ids >> id & 1) fprintf(out, " %u", id);
    fputs(s->funnel_ids ? "\n" : " none\n", out);
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const tidal_kernel_report *r = s->kernels[k].plan;
        if (r->verdict != TIDAL_REWRITTEN) {
            fprintf(out, "plan kernel %s: refuse: %s: %s\n", r->name, tidal_reason_name(r->reason), r->detail);
            continue;
        }
        fprintf(out, "plan kernel %s: rewrite: %s, barrier id %u%s, %s\n", r->name, tidal_exit_mode_name(r->exit_mode),
                r->bar_id, r->barrier_between_blocks ? ", barrier between logical blocks" : "",
                !r->original_verbatim ? (s->ctl ? "original entry rewritten (case b)" : "original entry rewritten")
                : s->opt->case_b      ? "original entry verbatim (dynamic shared memory: no case b)"
                                      : "original entry verbatim");
    }
}

/* ------------------------------------------------------------ rewrite, clone */

void tidal_dump_rewrite(const tidal_state *s, FILE *out)
{
    const ptx_module *m = s->m;
    unsigned n = 0;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const ptx_func *f = s->kernels[k].fn->f;
        if (!s->kernels[k].rewritten) continue;
        n++;
        /* where the original entry stays verbatim, this body is written only as its clone's */
        fprintf(out, "rewrite kernel %s:%s\n", ptx_func_name(f),
                s->kernels[k].plan->original_verbatim ? " (the clone's body; the original entry stays verbatim)" : "");
        size_t from = m->toks[f->tok_begin].off, to = m->toks[f->body_open_tok].off;
        fwrite(m->src + from, 1, to - from, out);
        (void)ptx_func_print_body(f, out);
        fputc('\n', out);
    }
    if (!n) {
        fputs("rewrite: no kernel rewritten\n", out);
        return;
    }
    fputs("rewrite module globals:", out);
    for (uint32_t i = s->globals_at; i < s->globals_at + s->nglobals; i++)
        fprintf(out, "%.*s\n", (int)m->items[i].text_len, m->items[i].text);
}

void tidal_dump_clone(const tidal_state *s, FILE *out)
{
    unsigned n = 0;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const tidal_kernel *kn = &s->kernels[k];
        if (!kn->clone_text) continue;
        n++;
        fprintf(out, "clone kernel %s:\n%s\n%s\n", ptx_func_name(kn->fn->f), kn->clone_text, kn->nparams_text);
    }
    if (!n) fputs("clone: no kernel rewritten\n", out);
}
