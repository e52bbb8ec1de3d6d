/* tidal_refusal.c — the refusal table: every reason a kernel stays byte-identical, for
 * the PTX pass (tidal_plan.c checks them in this order) and the IR-level rewrite
 * (passes/llvm/llvm_verdict.c) alike; docs/design.md §2 "Refusals" says more of each. */
#include "tidal_internal.h"

#include <stdio.h>

const tidal_refusal tidal_refusals[TIDAL_NREASONS] = {
    [TIDAL_REASON_NONE] = {"", "", false},
    [TIDAL_REFUSE_ADDRESS_SIZE] = {"address-size", "the protocol's code is 64-bit (.address_size 32)", false},
    [TIDAL_REFUSE_PTX_VERSION] = {"ptx-version", "PTX older than 6.2 has no .relaxed atomics, barrier.red or nanosleep",
                                  false},
    [TIDAL_REFUSE_TARGET] = {"target", "below sm_70: no .relaxed atomics, no independent thread scheduling", false},
    [TIDAL_REFUSE_CLUSTERS] = {"clusters", "a cluster's CTAs are co-scheduled; logical blocks run one after another",
                               false},
    [TIDAL_REFUSE_COOPERATIVE_LAUNCH] = {"cooperative-launch",
                                         "grid-wide sync waits for logical blocks not yet claimed", false},
    [TIDAL_REFUSE_DEVICE_LAUNCH] = {"device-launch", "a grid launched from the device is one libtidal never sees",
                                    false},
    [TIDAL_REFUSE_NAMED_ARRIVE] = {"named-arrive",
                                   "bar.arrive may leave a named barrier half arrived for the next logical block "
                                   "(--assume-balanced-arrive)",
                                   false},
    [TIDAL_REFUSE_NUL_BYTE] = {"nul-byte", "a NUL byte in the kernel's text would cut the rewrite's text", false},
    [TIDAL_REFUSE_NAME_COLLISION] = {"name-collision",
                                     "the module uses tidal's names, or the tidal pass rewrote it already", false},
    [TIDAL_REFUSE_EXIT_IN_CALLEE] = {"exit-in-callee", "'exit' in a called function would leave the worker", false},
    [TIDAL_REFUSE_CALLEE_READS_CTAID] = {"callee-reads-ctaid",
                                         "a called function would read the worker's physical %ctaid", false},
    [TIDAL_REFUSE_CTAID_VECTOR] = {"ctaid-vector", "%ctaid/%nctaid read as a vector has no logical register", false},
    [TIDAL_REFUSE_BAD_CONTROL_FLOW] = {"bad-control-flow", "no control flow graph, so no proof about exits", false},
    [TIDAL_REFUSE_BARRIER_IDS] = {"barrier-ids", "no barrier id is free for tidal and exits are not convergent", false},
    [TIDAL_REFUSE_DIVERGENT_EXIT] = {"divergent-exit",
                                     "a thread may leave while others reach a full barrier the funnel cannot take",
                                     false},
    [TIDAL_REFUSE_IR_PTX_NAME] = {"ir-ptx-name", "the PTX lowered from the IR has no .entry of the kernel's name",
                                  true},
    [TIDAL_REFUSE_IR_DEBUG_INFO] = {"ir-debug-info", "the IR rewrite does not carry debug info over", true},
    [TIDAL_REFUSE_IR_UNSUPPORTED] = {"ir-unsupported",
                                     "a kernel that returns a value, indirectbr/callbr, or llvm.nvvm.exit", true},
    [TIDAL_REFUSE_IR_INLINE_ASM] = {"ir-inline-asm", "inline asm naming ctaid, exit, ret, bar or gridid", true},
    [TIDAL_REFUSE_IR_BARRIER_FUNNEL] = {"ir-barrier-funnel", "a full reduction barrier the IR funnel would meet", true},
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
