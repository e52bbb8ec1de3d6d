/* tidal_refusal.c — the refusal table: every reason a kernel stays byte-identical, for
 * the PTX pass (tidal_plan.c checks them in this order) and the IR-level rewrite
 * (passes/llvm/llvm_verdict.c) alike; docs/design.md §2 "Refusals" says more of each. */
#include "tidal_internal.h"

#include <stdio.h>

const tidal_refusal tidal_refusals[TIDAL_NREASONS] = {
    [TIDAL_REASON_NONE] = {"", "", false},
    [TIDAL_REFUSE_ADDRESS_SIZE] = {"address-size", "the protocol's code is 64-bit (.address_size 32)", false},
    [TIDAL_REFUSE_PTX_VERSION] = {"ptx-version", "PTX before 6.2: no .relaxed atomics, barrier.red, nanosleep", false},
    [TIDAL_REFUSE_TARGET] = {"target", "below sm_70: no .relaxed atomics, no independent scheduling", false},
    [TIDAL_REFUSE_CLUSTERS] = {"clusters", "a cluster's CTAs are co-scheduled: logical blocks are not", false},
    [TIDAL_REFUSE_COOPERATIVE_LAUNCH] = {"cooperative-launch", "grid-wide sync would wait for blocks not yet claimed",
                                         false},
    [TIDAL_REFUSE_DEVICE_LAUNCH] = {"device-launch", "a grid launched on the device is one libtidal never sees", false},
    [TIDAL_REFUSE_NAMED_ARRIVE] = {"named-arrive", "bar.arrive may leave a phase half arrived for the next block",
                                   false},
    [TIDAL_REFUSE_NUL_BYTE] = {"nul-byte", "a NUL byte in the kernel's text would cut the rewrite's", false},
    [TIDAL_REFUSE_NAME_COLLISION] = {"name-collision", "tidal's names are taken, or the module was rewritten", false},
    [TIDAL_REFUSE_EXIT_IN_CALLEE] = {"exit-in-callee", "'exit' in a called function would leave the worker", false},
    [TIDAL_REFUSE_CALLEE_READS_CTAID] = {"callee-reads-ctaid", "a called function would read the physical %ctaid",
                                         false},
    [TIDAL_REFUSE_CTAID_VECTOR] = {"ctaid-vector", "%ctaid/%nctaid read as a vector: no logical register", false},
    [TIDAL_REFUSE_BAD_CONTROL_FLOW] = {"bad-control-flow", "no control flow graph, so no proof about exits", false},
    [TIDAL_REFUSE_BARRIER_IDS] = {"barrier-ids", "no barrier id free for tidal, and exits not convergent", false},
    [TIDAL_REFUSE_DIVERGENT_EXIT] = {"divergent-exit", "a thread may leave while others reach a full barrier", false},
    [TIDAL_REFUSE_IR_PTX_NAME] = {"ir-ptx-name", "the lowered PTX has no .entry of the kernel's name", true},
    [TIDAL_REFUSE_IR_DEBUG_INFO] = {"ir-debug-info", "debug info is not carried over", true},
    [TIDAL_REFUSE_IR_UNSUPPORTED] = {"ir-unsupported", "returns a value, indirectbr/callbr, or llvm.nvvm.exit", true},
    [TIDAL_REFUSE_IR_INLINE_ASM] = {"ir-inline-asm", "inline asm naming ctaid, exit, ret, bar or gridid", true},
    [TIDAL_REFUSE_IR_BARRIER_FUNNEL] = {"ir-barrier-funnel", "a full reduction barrier the funnel would meet", true},
};

const char *tidal_reason_name(tidal_reason r)
{
    if ((unsigned)r >= TIDAL_NREASONS) ptx_ice("refusal reason %u out of range", (unsigned)r);
    return tidal_refusals[r].name;
}

tidal_reason tidal_callee_refusal(const tidal_facts *callees)
{
    if (callees->exit_instr) return TIDAL_REFUSE_EXIT_IN_CALLEE;
    if (callees->reads_ctaid) return TIDAL_REFUSE_CALLEE_READS_CTAID;
    return TIDAL_REASON_NONE;
}

const char *tidal_tok_line(ptx_module *m, uint32_t t)
{
    char name[64];
    ptx_tok_str(m, t, name, sizeof name);
    return ptx_fmt(m, "line %u: '%s'", m->toks[t].line, name);
}
