/* ptx_stats.c — per-function counts for `tidal-opt --stats`. */
#include "ptx_internal.h"

#include <string.h>

int ptx_func_stats_compute(const ptx_func *f, ptx_func_stats *st, ptx_diag *diag)
{
    memset(st, 0, sizeof *st);
    const ptx_module *m = f->mod;
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR || s->removed) continue;
        st->instructions++;
        switch (s->op_class) {
        case PTX_OP_BARRIER: st->barriers++; break;
        case PTX_OP_BAR_WARP: st->warp_barriers++; break;
        case PTX_OP_BAR_CLUSTER: st->cluster_barriers++; break;
        case PTX_OP_CALL: st->calls++; break;
        default: break;
        }
        ptx_stmt_count_sregs(m, s, st->sregs);
    }
    ptx_cfg *c = ptx_cfg_build(f, diag);
    if (!c) return -1;
    st->blocks = c->nblocks;
    ptx_cfg_free(c);
    return 0;
}

int ptx_stats_print(const ptx_module *m, FILE *out, ptx_diag *diag)
{
    fprintf(out, "module %s: PTX %u.%u, target %s, %u-bit addresses, %u functions\n", m->file, m->version_major,
            m->version_minor, m->target[0] ? m->target : "(none)", m->address_size, ptx_func_count(m));
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_func *f = m->items[i].func;
        if (m->items[i].kind != PTX_ITEM_FUNC || !f) continue;
        const ptx_token *nt = &m->toks[f->name_tok];
        const char *what = f->is_entry ? "kernel" : "func";
        if (!f->has_body) {
            fprintf(out, "%s %.*s: declaration\n", what, (int)nt->len, m->src + nt->off);
            continue;
        }
        ptx_func_stats st;
        if (ptx_func_stats_compute(f, &st, diag)) return -1;
        fprintf(out, "%s %.*s: %u instructions, %u blocks, %u barriers", what, (int)nt->len, m->src + nt->off,
                st.instructions, st.blocks, st.barriers);
        if (st.warp_barriers) fprintf(out, ", %u warp barriers", st.warp_barriers);
        if (st.cluster_barriers) fprintf(out, ", %u cluster barriers", st.cluster_barriers);
        fprintf(out, ", %u calls; special registers:", st.calls);
        bool any = false;
        for (int r = 0; r < PTX_SREG_COUNT; r++)
            if (st.sregs[r]) {
                fprintf(out, "%s %s %u", any ? "," : "", ptx_sreg_name((ptx_sreg)r), st.sregs[r]);
                any = true;
            }
        fputs(any ? "\n" : " none\n", out);
    }
    return 0;
}
