/* tidal_protocol.h — the device side of the tidal protocol (abi/tidal_abi.h), written
 * once as PTX snippets that both rewriters instantiate: the PTX pass as text with
 * %tdl_<name> registers, the LLVM-IR path as inline asm with one operand per name.
 *
 * Each snippet is executed by the leader thread (thread 0) of a worker block, is one
 * `{ }` scope with its own registers and labels, and keeps the worker's private state
 * (slot address, state bits) in the block's shared words (TIDAL_SH_*, abi/tidal_abi.h),
 * whose shared-space address is the operand `sh`: the static __tidal_sh in an original
 * entry, the tail of the dynamic shared memory in a clone:
 *   enter  first thing a worker does: find the slot (probe mode), arrive, and take the
 *          first chunk (static mode: its own; dynamic: claimed); out: b0
 *   claim  after a chunk: claim the next one, or leave because the SM was taken away
 *          (unless the liveness guard keeps this worker); out: b0
 *   leave  when b0 >= total: wait for joiners, count out, reset a probed slot
 *   start  the static fast path (epoch mode): a worker begins its own chunk b0 with no
 *          memory read and no barrier; counts it and prepares the claim after it
 * b0 >= total means "no chunk: leave". The skeleton around them (publishing b0 to the
 * block through the shared words and one barrier, the logical-block loop) is written by each
 * rewriter; docs/design.md, "The protocol", gives the whole picture. */
#ifndef TIDAL_PROTOCOL_H
#define TIDAL_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#include "tidal_abi.h"

typedef enum { TIDAL_OP_U32, TIDAL_OP_U64 } tidal_op_type;

typedef struct tidal_operand {
    const char *name; /* appears as %[name] in the text */
    tidal_op_type type;
    bool out; /* written by the snippet (outputs come first) */
} tidal_operand;

typedef struct tidal_snippet {
    const char *name;
    const char *text;
    const tidal_operand *ops;
    unsigned nops;
} tidal_snippet;

extern const tidal_snippet tidal_snippet_enter, tidal_snippet_claim, tidal_snippet_leave, tidal_snippet_start;

/* The shared words' layout (TIDAL_SH_*) is abi/tidal_abi.h's: the runtime sizes the
 * clone's dynamic shared memory from it. Where they are: an original entry's static
 * variable, and in a clone the dynamic shared memory at tidal_launch.sh_off, from an
 * extern array of the clone's own (every extern shared array starts at the dynamic base;
 * one per clone: in a debug module ptxas places an extern array after the largest static
 * variables of all the kernels that use it). */
#define TIDAL_SH_SYMBOL "__tidal_sh" /* .shared .align 8 .b8 [TIDAL_SH_BYTES], in an original entry */
#define TIDAL_DSH_SUFFIX                                                            \
    "__tidal_dsh" /* NAME__tidal_dsh: .extern .shared .align TIDAL_SH_ALIGN .b8 [], \
                     module scope, used by NAME__tidal_reshaped alone */

/* The barrier funnel's one barrier, a module-scope .func per barrier id (ID: decimal):
 * `.func (.reg .b32 any) __tidal_funnel_barID(.reg .b32 resume)` returns 1 when some
 * thread of the CTA passed a resume index other than -1. A called function because
 * ptxas tail-duplicates an inline funnel into one barrier instruction per path (the
 * site paths know their predicate), and lanes of one warp at two barrier instructions
 * are what compute-sanitizer synccheck reports as "Divergent thread(s) in block"; in a
 * .func ptxas emits one WARPSYNC.ALL + BAR for every caller. */
#define TIDAL_FUNNEL_FUNC "__tidal_funnel_bar"

/* The snippet as PTX text: %[x] becomes %tdl_x (malloc'd). */
char *tidal_snippet_ptx(const tidal_snippet *s);
/* The snippet as an inline-asm string: %[x] becomes $k, outputs numbered first, and
 * *constraints gets the matching "=r,r,l,..." (both malloc'd). */
char *tidal_snippet_asm(const tidal_snippet *s, char **constraints);

#endif
