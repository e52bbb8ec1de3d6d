/* ptx_sreg.c — special registers (%ctaid, %smid, ...) as the PTX ISA names them. */
#include "ptx_internal.h"

#include <string.h>

static const struct {
    const char *name;
    ptx_sreg reg;
    bool numbered; /* %pm0..7, %envreg0..31 */
} sregs[] = {
    {"%tid", PTX_SREG_TID, false},
    {"%ntid", PTX_SREG_NTID, false},
    {"%laneid", PTX_SREG_LANEID, false},
    {"%warpid", PTX_SREG_WARPID, false},
    {"%nwarpid", PTX_SREG_NWARPID, false},
    {"%ctaid", PTX_SREG_CTAID, false},
    {"%nctaid", PTX_SREG_NCTAID, false},
    {"%smid", PTX_SREG_SMID, false},
    {"%nsmid", PTX_SREG_NSMID, false},
    {"%gridid", PTX_SREG_GRIDID, false},
    {"%is_explicit_cluster", PTX_SREG_IS_EXPLICIT_CLUSTER, false},
    {"%clusterid", PTX_SREG_CLUSTERID, false},
    {"%nclusterid", PTX_SREG_NCLUSTERID, false},
    {"%cluster_ctaid", PTX_SREG_CLUSTER_CTAID, false},
    {"%cluster_nctaid", PTX_SREG_CLUSTER_NCTAID, false},
    {"%cluster_ctarank", PTX_SREG_CLUSTER_CTARANK, false},
    {"%cluster_nctarank", PTX_SREG_CLUSTER_NCTARANK, false},
    {"%lanemask_eq", PTX_SREG_LANEMASK, false},
    {"%lanemask_le", PTX_SREG_LANEMASK, false},
    {"%lanemask_lt", PTX_SREG_LANEMASK, false},
    {"%lanemask_ge", PTX_SREG_LANEMASK, false},
    {"%lanemask_gt", PTX_SREG_LANEMASK, false},
    {"%clock", PTX_SREG_CLOCK, false},
    {"%clock_hi", PTX_SREG_CLOCK, false},
    {"%clock64", PTX_SREG_CLOCK64, false},
    {"%globaltimer", PTX_SREG_GLOBALTIMER, false},
    {"%globaltimer_lo", PTX_SREG_GLOBALTIMER, false},
    {"%globaltimer_hi", PTX_SREG_GLOBALTIMER, false},
    {"%pm", PTX_SREG_PM, true},
    {"%envreg", PTX_SREG_ENVREG, true},
    {"%total_smem_size", PTX_SREG_SMEM_SIZE, false},
    {"%aggr_smem_size", PTX_SREG_SMEM_SIZE, false},
    {"%dynamic_smem_size", PTX_SREG_SMEM_SIZE, false},
    {"%reserved_smem_offset_begin", PTX_SREG_RESERVED_SMEM, false},
    {"%reserved_smem_offset_end", PTX_SREG_RESERVED_SMEM, false},
    {"%reserved_smem_offset_cap", PTX_SREG_RESERVED_SMEM, false},
    {"%reserved_smem_offset_0", PTX_SREG_RESERVED_SMEM, false},
    {"%reserved_smem_offset_1", PTX_SREG_RESERVED_SMEM, false},
    {"%current_graph_exec", PTX_SREG_CURRENT_GRAPH_EXEC, false},
};

static const char *const names[PTX_SREG_COUNT] = {
    [PTX_SREG_TID] = "%tid",
    [PTX_SREG_NTID] = "%ntid",
    [PTX_SREG_LANEID] = "%laneid",
    [PTX_SREG_WARPID] = "%warpid",
    [PTX_SREG_NWARPID] = "%nwarpid",
    [PTX_SREG_CTAID] = "%ctaid",
    [PTX_SREG_NCTAID] = "%nctaid",
    [PTX_SREG_SMID] = "%smid",
    [PTX_SREG_NSMID] = "%nsmid",
    [PTX_SREG_GRIDID] = "%gridid",
    [PTX_SREG_IS_EXPLICIT_CLUSTER] = "%is_explicit_cluster",
    [PTX_SREG_CLUSTERID] = "%clusterid",
    [PTX_SREG_NCLUSTERID] = "%nclusterid",
    [PTX_SREG_CLUSTER_CTAID] = "%cluster_ctaid",
    [PTX_SREG_CLUSTER_NCTAID] = "%cluster_nctaid",
    [PTX_SREG_CLUSTER_CTARANK] = "%cluster_ctarank",
    [PTX_SREG_CLUSTER_NCTARANK] = "%cluster_nctarank",
    [PTX_SREG_LANEMASK] = "%lanemask",
    [PTX_SREG_CLOCK] = "%clock",
    [PTX_SREG_CLOCK64] = "%clock64",
    [PTX_SREG_GLOBALTIMER] = "%globaltimer",
    [PTX_SREG_PM] = "%pm",
    [PTX_SREG_ENVREG] = "%envreg",
    [PTX_SREG_SMEM_SIZE] = "%smem_size",
    [PTX_SREG_RESERVED_SMEM] = "%reserved_smem_offset",
    [PTX_SREG_CURRENT_GRAPH_EXEC] = "%current_graph_exec",
};

const char *ptx_sreg_name(ptx_sreg r) { return r >= 0 && r < PTX_SREG_COUNT ? names[r] : "?"; }

ptx_sreg ptx_sreg_classify(const char *s, size_t len, int *component)
{
    if (component) *component = -1;
    if (len < 2 || s[0] != '%') return PTX_SREG_NONE;
    size_t base = len;
    int comp = -1;
    if (len > 2 && s[len - 2] == '.') {
        char c = s[len - 1];
        comp = c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -2;
        if (comp == -2) return PTX_SREG_NONE;
        base = len - 2;
    }
    for (size_t k = 0; k < sizeof sregs / sizeof sregs[0]; k++) {
        size_t n = strlen(sregs[k].name);
        if (sregs[k].numbered) {
            if (base <= n || memcmp(s, sregs[k].name, n) != 0) continue;
            size_t j = n;
            while (j < base && s[j] >= '0' && s[j] <= '9') j++;
            if (j == n) continue; /* a number is required: %pm0, %pm0_64, %envreg3 */
            if (j == base || (sregs[k].reg == PTX_SREG_PM && base - j == 3 && memcmp(s + j, "_64", 3) == 0)) {
                if (comp >= 0) return PTX_SREG_NONE;
                return sregs[k].reg;
            }
            continue;
        }
        if (n == base && memcmp(s, sregs[k].name, n) == 0) {
            ptx_sreg r = sregs[k].reg;
            bool vec = r == PTX_SREG_TID || r == PTX_SREG_NTID || r == PTX_SREG_CTAID || r == PTX_SREG_NCTAID ||
                       r == PTX_SREG_CLUSTERID || r == PTX_SREG_NCLUSTERID || r == PTX_SREG_CLUSTER_CTAID ||
                       r == PTX_SREG_CLUSTER_NCTAID;
            if (comp >= 0 && !vec) return PTX_SREG_NONE;
            if (component) *component = comp;
            return r;
        }
    }
    return PTX_SREG_NONE;
}

void ptx_stmt_count_sregs(const ptx_module *m, const ptx_stmt *s, unsigned counts[PTX_SREG_COUNT])
{
    if (s->kind != PTX_ST_INSTR || s->synthesized) return;
    for (uint32_t t = s->opcode_tok + 1; t < s->tok_end; t++) {
        const ptx_token *k = &m->toks[t];
        if (k->kind != PTX_TK_IDENT || m->src[k->off] != '%') continue;
        ptx_sreg r = ptx_sreg_classify(m->src + k->off, k->len, NULL);
        if (r != PTX_SREG_NONE) counts[r]++;
    }
}
