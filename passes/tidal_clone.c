/* tidal_clone.c — the clone phase: after each rewritten kernel NAME its reshaped clone
 * NAME__tidal_reshaped (launch case c: a grid of persistent workers, the logical grid in
 * an appended tidal_launch parameter; abi/tidal_abi.h) and NAME__tidal_nparams; then the
 * original entry goes back to its input bytes where the plan keeps it verbatim. */
#define _POSIX_C_SOURCE 200809L
#include "tidal_internal.h"
#include "tidal_abi.h"

#include <stdio.h>

#define S_(x) #x
#define S(x) S_(x)

/* The reshaped clone: the same statements with the clone's pieces, under a header
 * with the name suffixed and a tidal_launch parameter appended. */
static char *clone_text(ptx_func *f, const tidal_pieces *pc)
{
    const ptx_module *m = f->mod;
    tidal_sbuf b = {0};
    /* the clone's own extern array: the base of its shared words (rewrite_body) */
    tidal_sb_str(&b, "// tidal: the clone's shared words are in the tail of its dynamic shared memory\n"
                     ".extern .shared .align " S(TIDAL_SH_ALIGN) " .b8 ");
    tidal_sb_str(&b, pc->dsh);
    tidal_sb_str(&b, "[];\n");
    /* header: original bytes with the name replaced and a parameter appended */
    const ptx_token *nt = &m->toks[f->name_tok];
    size_t hb = m->toks[f->tok_begin].off;
    tidal_sb_put(&b, m->src + hb, nt->off - hb);
    tidal_sb_put(&b, m->src + nt->off, nt->len);
    tidal_sb_str(&b, TIDAL_RESHAPED_SUFFIX);
    size_t after_name = nt->off + nt->len;
    char extra[64];
    snprintf(extra, sizeof extra, ".param .align 8 .b8 __tidal_launch[%u]", (unsigned)TIDAL_LAUNCH_BYTES);
    if (f->nparams) {
        const ptx_token *last = &m->toks[f->params[f->nparams - 1].tok_end - 1];
        size_t cut = last->off + last->len;
        tidal_sb_put(&b, m->src + after_name, cut - after_name);
        tidal_sb_str(&b, ",\n\t");
        tidal_sb_str(&b, extra);
        size_t open = m->toks[f->body_open_tok].off;
        tidal_sb_put(&b, m->src + cut, open - cut);
    } else {
        /* no parameters, or an empty list: write a new list */
        uint32_t t = f->name_tok + 1;
        size_t rest = after_name;
        if (ptx_tok_is(m, t, "(") && ptx_tok_is(m, t + 1, ")")) rest = m->toks[t + 1].off + 1;
        tidal_sb_str(&b, "(\n\t");
        tidal_sb_str(&b, extra);
        tidal_sb_str(&b, "\n)");
        size_t open = m->toks[f->body_open_tok].off;
        tidal_sb_put(&b, m->src + rest, open - rest);
    }
    tidal_pieces_apply(f, pc, true);
    char *body = NULL;
    size_t blen = 0;
    FILE *mf = open_memstream(&body, &blen);
    if (!mf || ptx_func_print_body(f, mf) || fclose(mf)) ptx_ice("cannot print function body");
    tidal_pieces_apply(f, pc, false);
    tidal_sb_put(&b, body, blen);
    free(body);
    return b.p;
}

/* After the clone: its parameter count as the size of NAME__tidal_nparams
 * (abi/tidal_abi.h). .weak like the marker: a kernel defined in several objects of an
 * -rdc link (a template) defines it in each, with the same size. */
static char *nparams_text(const ptx_func *f)
{
    const ptx_token *nt = &f->mod->toks[f->name_tok];
    tidal_sbuf b = {0};
    tidal_sb_str(&b, "// tidal: the clone's parameter count, as this global's size (abi/tidal_abi.h)\n"
                     ".weak .global .align 1 .b8 ");
    tidal_sb_put(&b, f->mod->src + nt->off, nt->len);
    char n[32];
    snprintf(n, sizeof n, TIDAL_NPARAMS_SUFFIX "[%u];", (unsigned)f->nparams + 1);
    tidal_sb_str(&b, n);
    return b.p;
}

static tidal_kernel *kernel_of(tidal_state *s, const ptx_func *f)
{
    for (uint32_t k = 0; k < s->nkernels; k++)
        if (s->kernels[k].fn->f == f) return &s->kernels[k];
    return NULL;
}

void tidal_phase_clone(tidal_state *s)
{
    ptx_module *m = s->m;
    for (uint32_t it = 0; it < m->nitems; it++) {
        ptx_item *item = &m->items[it];
        if (item->kind != PTX_ITEM_FUNC || !item->func) continue;
        tidal_kernel *k = kernel_of(s, item->func);
        if (!k || !k->rewritten) continue;
        ptx_func *f = k->fn->f;
        char *t = clone_text(f, &k->pieces);
        ptx_item_insert(m, it + 1, PTX_ITEM_FUNC, t);
        free(t);
        t = nparams_text(f);
        ptx_item_insert(m, it + 2, PTX_ITEM_VAR, t);
        free(t);
        k->clone_text = m->items[it + 1].text;
        k->nparams_text = m->items[it + 2].text;
        if (k->plan->original_verbatim) f->modified = false;
        it += 2;
    }
}
