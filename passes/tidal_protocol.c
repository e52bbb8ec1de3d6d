/* tidal_protocol.c — the tidal protocol's device code (tidal_protocol.h), written once.
 *
 * Registers of a snippet are its own (%tdl_xp/xr/xd inside its `{ }`), labels are local
 * to it, and no `$` appears in the text (LLVM inline asm reserves it). Offsets come from
 * abi/tidal_abi.h; the _Static_asserts below tie the literals this text cannot compute to
 * it. The shared words are the operand `sh` (TIDAL_SH_*: the static __tidal_sh of an
 * original entry, the dynamic tail of a clone). State bits kept at sh+16 (leader-private):
 *   1 ACTIVE     counted as working in the guard word
 *   2 UNARRIVED  static worker that has not arrived in the guard word yet
 *   4 LAST       the launch's tickets ran out with this worker's chunk: claim no more
 *   8 JWAIT      joiners were inside when the tickets ran out: wait for them to leave
 *  32 JOINER     a joiner inside the launch (flow-in)
 * sh+20 holds the start of the chunk the block is running (for HIST/EXEC). */
#define _POSIX_C_SOURCE 200809L
#include "tidal_protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "tidal_abi.h"

#define S_(x) #x
#define S(x) S_(x)

_Static_assert(TIDAL_SLOT_BYTES == 1024 && TIDAL_PARTITION_HEADER == 128, "slot addressing below");
_Static_assert(TIDAL_CLAIM_NEXT_MASK == 0x0fffffff && TIDAL_CLAIM_JOINER_SHIFT == 28 &&
                   TIDAL_CLAIM_JOINER_MASK == 0xfffff && TIDAL_EPOCH_SHIFT == 48,
               "claim word literals below");
_Static_assert(TIDAL_GUARD_ACTIVE_MASK == 0xffffff && TIDAL_GUARD_ARRIVED_SHIFT == 24, "guard word literals below");
_Static_assert(TIDAL_LAUNCH_JOIN == 1 && TIDAL_LAUNCH_STATIC == 2 && TIDAL_LAUNCH_PROBE == 4 &&
                   TIDAL_LAUNCH_HIST == 8 && TIDAL_LAUNCH_EXEC == 16,
               "flag literals below");
_Static_assert(TIDAL_SLOT_SHARDS == 32 && TIDAL_SLOT_SHARD_STRIDE == 16, "shard literals below");
_Static_assert(TIDAL_PARTITION_OFF_PROBE_BASE == TIDAL_PARTITION_OFF_SLOT_MASK + 4, "paired load of the probe range");
_Static_assert(TIDAL_SH_OFF_SLOT % 8 == 0 && TIDAL_SH_OFF_CHUNK + 4 <= TIDAL_SH_BYTES, "the shared words' layout");

// clang-format off
#define SLOT_CLAIM "[%tdl_xd0+" S(TIDAL_SLOT_OFF_CLAIM) "]"
#define SLOT_GUARD "[%tdl_xd0+" S(TIDAL_SLOT_OFF_GUARD) "]"
#define ONE_ARRIVED "16777216"           /* 1 << TIDAL_GUARD_ARRIVED_SHIFT */
#define ONE_ARRIVED_WORKING "16777217"   /* arrived + 1, working + 1 */
#define ONE_JOINER "268435456"           /* 1 << TIDAL_CLAIM_JOINER_SHIFT */

#define REGS                                                                                                           \
    "{\n"                                                                                                              \
    "\t.reg .pred \t%tdl_xp<4>;\n"                                                                                     \
    "\t.reg .u32 \t%tdl_xr<10>;\n"                                                                                     \
    "\t.reg .u64 \t%tdl_xd<7>;\n"                                                                                      \
    "\tmov.u32 \t%tdl_xr8, %smid;\n"

/* Issue the load of this SM's mask word into xd6 (used by MASK_TEST). */
#define MASK_LOAD                                                                                                      \
    "\tshr.u32 \t%tdl_xr1, %tdl_xr8, 6;\n"                                                                             \
    "\tmul.wide.u32 \t%tdl_xd1, %tdl_xr1, 8;\n"                                                                        \
    "\tadd.u64 \t%tdl_xd1, %[ctl], %tdl_xd1;\n"                                                                         \
    "\tld.relaxed.gpu.global.u64 \t%tdl_xd6, [%tdl_xd1];\n"

/* xr9 = this SM's bit of the mask word in xd6. */
#define MASK_TEST                                                                                                      \
    "\tand.b32 \t%tdl_xr1, %tdl_xr8, 63;\n"                                                                            \
    "\tshr.u64 \t%tdl_xd1, %tdl_xd6, %tdl_xr1;\n"                                                                      \
    "\tcvt.u32.u64 \t%tdl_xr9, %tdl_xd1;\n"                                                                            \
    "\tand.b32 \t%tdl_xr9, %tdl_xr9, 1;\n"

/* This launch's epoch into both words (epoch mode): red.max turns what the slot's
 * previous launch left (a smaller epoch) into this launch's zero. */
#define EPOCH_START                                                                                                    \
    "\tcvt.u64.u32 \t%tdl_xd3, %[epoch];\n"                                                                             \
    "\tshl.b64 \t%tdl_xd3, %tdl_xd3, " S(TIDAL_EPOCH_SHIFT) ";\n"                                                      \
    "\tred.relaxed.gpu.global.max.u64 \t" SLOT_CLAIM ", %tdl_xd3;\n"                                                   \
    "\tred.relaxed.gpu.global.max.u64 \t" SLOT_GUARD ", %tdl_xd3;\n"

/* The liveness guard, after the guard word's old value came back in xd2: xp1 = no
 * other owner worker remains to do the launch's work (ARRIVAL: this worker arrived last
 * and none works; DEPARTURE: it was the last one working and all have arrived). */
#define GUARD_FIELDS                                                                                                   \
    "\tshr.u64 \t%tdl_xd3, %tdl_xd2, " S(TIDAL_GUARD_ARRIVED_SHIFT) ";\n"                                              \
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd3;\n"                                                                            \
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 16777215;\n"                                                                      \
    "\tcvt.u32.u64 \t%tdl_xr6, %tdl_xd2;\n"                                                                            \
    "\tand.b32 \t%tdl_xr6, %tdl_xr6, 16777215;\n"
#define GUARD_LAST_ARRIVAL                                                                                             \
    GUARD_FIELDS "\tadd.u32 \t%tdl_xr5, %tdl_xr5, 1;\n"                                                                \
                 "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr5, %[phys];\n"                                                       \
                 "\tsetp.eq.and.u32 \t%tdl_xp1, %tdl_xr6, 0, %tdl_xp1;\n"
#define GUARD_LAST_DEPARTURE                                                                                           \
    GUARD_FIELDS "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr5, %[phys];\n"                                                       \
                 "\tsetp.eq.and.u32 \t%tdl_xp1, %tdl_xr6, 1, %tdl_xp1;\n"
/* Keep working on a disallowed SM: count in as working again, and as a violation. */
#define GUARD_KEEP                                                                                                     \
    "\tred.relaxed.gpu.global.add.u64 \t" SLOT_GUARD ", 1;\n"                                                          \
    "\tred.relaxed.gpu.global.add.u64 \t[%[ctl]+" S(TIDAL_PARTITION_OFF_VIOLATIONS) "], 1;\n"

/* After a claim whose old claim word is in xd2: b0, LAST and JWAIT. */
#define DECODE                                                                                                         \
    "tdl_decode:\n"                                                                                                    \
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd2;\n"                                                                            \
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 268435455;\n"                                                                     \
    "\tadd.u32 \t%[b0], %tdl_xr5, %[base];\n"                                                                           \
    "\tshr.u64 \t%tdl_xd3, %tdl_xd2, " S(TIDAL_CLAIM_JOINER_SHIFT) ";\n"                                               \
    "\tcvt.u32.u64 \t%tdl_xr6, %tdl_xd3;\n"                                                                            \
    "\tand.b32 \t%tdl_xr6, %tdl_xr6, 1048575;\n"                                                                       \
    "\tadd.u32 \t%tdl_xr5, %[b0], %[chunk];\n"                                                                          \
    "\tsetp.ge.u32 \t%tdl_xp2, %tdl_xr5, %[total];\n"                                                                   \
    "\t@%tdl_xp2 or.b32 \t%tdl_xr7, %tdl_xr7, 4;\n"                                                                    \
    "\tsetp.ne.and.u32 \t%tdl_xp3, %tdl_xr6, 0, %tdl_xp2;\n"                                                           \
    "\t@%tdl_xp3 or.b32 \t%tdl_xr7, %tdl_xr7, 8;\n"                                                                    \
    "\tmin.u32 \t%[b0], %[b0], %[total];\n"

/* Count a chunk into sm_blocks (HIST: the hist operand, else the partition's pointer)
 * and exec_count (EXEC). RECORD: the chunk the block just ran (start at sh+20),
 * after it, so the loads never delay a logical block; RECORD_CHUNK(len): the chunk at xr2, of the operand len
 * (chunk; START: first, a static worker's own chunk). */
#define RECORD "\tld.shared.u32 \t%tdl_xr2, [%[sh]+" S(TIDAL_SH_OFF_CHUNK) "];\n" RECORD_CHUNK("chunk")
#define RECORD_CHUNK(len)                                                                                              \
    "\tand.b32 \t%tdl_xr1, %[flags], 24;\n"                                                                            \
    "\tsetp.eq.u32 \t%tdl_xp2, %tdl_xr1, 0;\n"                                                                         \
    "\t@%tdl_xp2 bra.uni \t tdl_recorded;\n"                                                                           \
    "\tsetp.ge.u32 \t%tdl_xp2, %tdl_xr2, %[total];\n"                                                                  \
    "\t@%tdl_xp2 bra.uni \t tdl_recorded;\n"                                                                           \
    "\tadd.u32 \t%tdl_xr3, %tdl_xr2, %[" len "];\n"                                                                   \
    "\tmin.u32 \t%tdl_xr3, %tdl_xr3, %[total];\n"                                                                      \
    "\tand.b32 \t%tdl_xr1, %[flags], 8;\n"                                                                             \
    "\tsetp.eq.u32 \t%tdl_xp2, %tdl_xr1, 0;\n"                                                                         \
    "\t@%tdl_xp2 bra.uni \t tdl_no_hist;\n"                                                                            \
    "\tmov.u64 \t%tdl_xd3, %[hist];\n"                                                                                 \
    "\tsetp.eq.u64 \t%tdl_xp2, %tdl_xd3, 0;\n"                                                                         \
    "\t@%tdl_xp2 ld.global.u64 \t%tdl_xd3, [%[ctl]+" S(TIDAL_PARTITION_OFF_SM_BLOCKS) "];\n"                           \
    "\tsetp.eq.u64 \t%tdl_xp2, %tdl_xd3, 0;\n"                                                                         \
    "\t@%tdl_xp2 bra.uni \t tdl_no_hist;\n"                                                                            \
    "\tsub.u32 \t%tdl_xr1, %tdl_xr3, %tdl_xr2;\n"                                                                      \
    "\tcvt.u64.u32 \t%tdl_xd4, %tdl_xr1;\n"                                                                            \
    "\tmul.wide.u32 \t%tdl_xd5, %tdl_xr8, 8;\n"                                                                        \
    "\tadd.u64 \t%tdl_xd3, %tdl_xd3, %tdl_xd5;\n"                                                                      \
    "\tred.relaxed.gpu.global.add.u64 \t[%tdl_xd3], %tdl_xd4;\n"                                                       \
    "tdl_no_hist:\n"                                                                                                   \
    "\tand.b32 \t%tdl_xr1, %[flags], 16;\n"                                                                            \
    "\tsetp.eq.u32 \t%tdl_xp2, %tdl_xr1, 0;\n"                                                                         \
    "\t@%tdl_xp2 bra.uni \t tdl_recorded;\n"                                                                           \
    "\tld.global.u64 \t%tdl_xd3, [%[ctl]+" S(TIDAL_PARTITION_OFF_EXEC_COUNT) "];\n"                                    \
    "\tsetp.eq.u64 \t%tdl_xp2, %tdl_xd3, 0;\n"                                                                         \
    "\t@%tdl_xp2 bra.uni \t tdl_recorded;\n"                                                                           \
    "tdl_count:\n"                                                                                                     \
    "\tmul.wide.u32 \t%tdl_xd4, %tdl_xr2, 4;\n"                                                                        \
    "\tadd.u64 \t%tdl_xd4, %tdl_xd3, %tdl_xd4;\n"                                                                      \
    "\tred.relaxed.gpu.global.add.u32 \t[%tdl_xd4], 1;\n"                                                              \
    "\tadd.u32 \t%tdl_xr2, %tdl_xr2, 1;\n"                                                                             \
    "\tsetp.lt.u32 \t%tdl_xp2, %tdl_xr2, %tdl_xr3;\n"                                                                  \
    "\t@%tdl_xp2 bra.uni \t tdl_count;\n"                                                                              \
    "tdl_recorded:\n"

/* End of enter/claim: keep the state and the chunk's start for the next snippet. */
#define OUT                                                                                                            \
    "tdl_out:\n"                                                                                                       \
    "\tst.shared.u32 \t[%[sh]+" S(TIDAL_SH_OFF_STATE) "], %tdl_xr7;\n"                                                 \
    "\tst.shared.u32 \t[%[sh]+" S(TIDAL_SH_OFF_CHUNK) "], %[b0];\n"                                                    \
    "}"

/* The end of enter and claim: take a ticket, decode it; or no chunk (b0 = total). */
#define TAKE_AND_END                                                                                                   \
    "\tcvt.u64.u32 \t%tdl_xd3, %[chunk];\n"                                                                            \
    "\tatom.relaxed.gpu.global.add.u64 \t%tdl_xd2, " SLOT_CLAIM ", %tdl_xd3;\n"                                        \
    "\tbra.uni \t tdl_decode;\n"                                                                                       \
    "tdl_none:\n"                                                                                                     \
    "\tmov.u32 \t%[b0], %[total];\n"                                                                                  \
    "\tbra.uni \t tdl_out;\n" DECODE OUT

static const char enter_text[] =
    REGS
    "\tmov.u32 \t%tdl_xr7, 0;\n"
    "// joiners exist in epoch mode only (a probed slot is not the owner's)\n"
    "\tand.b32 \t%tdl_xr0, %[flags], 5;\n"
    "\tsetp.eq.u32 \t%tdl_xp0, %tdl_xr0, 5;\n"
    "\t@%tdl_xp0 bra.uni \t tdl_none;\n"
    "\tand.b32 \t%tdl_xr0, %[flags], 4;\n"
    "\tsetp.ne.u32 \t%tdl_xp0, %tdl_xr0, 0;\n"
    "\t@%tdl_xp0 bra.uni \t tdl_probe_start;\n"
    "// the runtime named the slot (epoch mode)\n"
    "\tmul.wide.u32 \t%tdl_xd0, %[slotix], " S(TIDAL_SLOT_BYTES) ";\n"
    "\tadd.u64 \t%tdl_xd0, %tdl_xd0, " S(TIDAL_PARTITION_HEADER) ";\n"
    "\tadd.u64 \t%tdl_xd0, %[ctl], %tdl_xd0;\n"
    "\tbra.uni \t tdl_have_slot;\n"
    "// probe mode: among the probe slots, the one tagged with the key or a free one (tag 0)\n"
    "tdl_probe_start:\n"
    "\tld.global.v2.u32 \t{%tdl_xr1, %tdl_xr4}, [%[ctl]+" S(TIDAL_PARTITION_OFF_SLOT_MASK) "];\n"
    "\tcvt.u32.u64 \t%tdl_xr2, %[key];\n"
    "\tand.b32 \t%tdl_xr2, %tdl_xr2, %tdl_xr1;\n"
    "\tmov.u32 \t%tdl_xr3, %tdl_xr1;\n"
    "tdl_probe:\n"
    "\tadd.u32 \t%tdl_xr5, %tdl_xr2, %tdl_xr4;\n"
    "\tmul.wide.u32 \t%tdl_xd0, %tdl_xr5, " S(TIDAL_SLOT_BYTES) ";\n"
    "\tadd.u64 \t%tdl_xd0, %tdl_xd0, " S(TIDAL_PARTITION_HEADER) ";\n"
    "\tadd.u64 \t%tdl_xd0, %[ctl], %tdl_xd0;\n"
    "\tld.relaxed.gpu.global.u64 \t%tdl_xd1, [%tdl_xd0];\n"
    "\tsetp.eq.u64 \t%tdl_xp1, %tdl_xd1, %[key];\n"
    "\t@%tdl_xp1 bra.uni \t tdl_have_slot;\n"
    "\tsetp.ne.u64 \t%tdl_xp1, %tdl_xd1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_probe_next;\n"
    "\tatom.acquire.gpu.global.cas.b64 \t%tdl_xd1, [%tdl_xd0], 0, %[key];\n"
    "\tsetp.eq.u64 \t%tdl_xp1, %tdl_xd1, 0;\n"
    "\tsetp.eq.or.u64 \t%tdl_xp1, %tdl_xd1, %[key], %tdl_xp1;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_have_slot;\n"
    "tdl_probe_next:\n"
    "\tadd.u32 \t%tdl_xr2, %tdl_xr2, 1;\n"
    "\tand.b32 \t%tdl_xr2, %tdl_xr2, %tdl_xr1;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr3, 0;\n"
    "\tsub.u32 \t%tdl_xr3, %tdl_xr3, 1;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_probe;\n"
    "// every slot busy (more running launches than slots): wait for one\n"
    "\tnanosleep.u32 \t1000;\n"
    "\tmov.u32 \t%tdl_xr3, %tdl_xr1;\n"
    "\tbra.uni \t tdl_probe;\n"
    "tdl_have_slot:\n"
    "\tst.shared.u64 \t[%[sh]+" S(TIDAL_SH_OFF_SLOT) "], %tdl_xd0;\n"
    "\tand.b32 \t%tdl_xr1, %[flags], 3;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr1, 2;\n"
    "\t@!%tdl_xp1 bra.uni \t tdl_dynamic;\n"
    "// static owner: its own chunk first, no memory operation before it\n"
    "\tmul.lo.u32 \t%[b0], %[pid], %[chunk];\n"
    "\tmin.u32 \t%[b0], %[b0], %[total];\n"
    "\tsetp.lt.u32 \t%tdl_xp1, %[b0], %[total];\n"
    "\tselp.u32 \t%tdl_xr7, 2, 0, %tdl_xp1;\n"
    "\tbra.uni \t tdl_out;\n"
    "tdl_dynamic:\n"
    MASK_LOAD
    "\t@%tdl_xp0 ld.relaxed.gpu.global.u64 \t%tdl_xd2, " SLOT_CLAIM ";\n"
    "\tand.b32 \t%tdl_xr1, %[flags], 1;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_join;\n"
    "\t@%tdl_xp0 bra.uni \t tdl_work_left;\n"
    EPOCH_START
    "\tbra.uni \t tdl_arrive;\n"
    "// probe mode: blocks of a large original grid that start after the work ran out leave\n"
    "tdl_work_left:\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd2;\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 268435455;\n"
    "\tadd.u32 \t%tdl_xr5, %tdl_xr5, %[base];\n"
    "\tsetp.ge.u32 \t%tdl_xp1, %tdl_xr5, %[total];\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "tdl_arrive:\n"
    MASK_TEST
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr9, 0;\n"
    "\t@!%tdl_xp1 bra.uni \t tdl_arrive_outside;\n"
    "\tred.relaxed.gpu.global.add.u64 \t" SLOT_GUARD ", " ONE_ARRIVED_WORKING ";\n"
    "\tmov.u32 \t%tdl_xr7, 1;\n"
    "\tbra.uni \t tdl_take;\n"
    "// on a disallowed SM: leave, unless no other worker is left to do the work\n"
    "tdl_arrive_outside:\n"
    "\tatom.relaxed.gpu.global.add.u64 \t%tdl_xd2, " SLOT_GUARD ", " ONE_ARRIVED ";\n"
    GUARD_LAST_ARRIVAL
    "\t@!%tdl_xp1 bra.uni \t tdl_none;\n"
    GUARD_KEEP
    "\tmov.u32 \t%tdl_xr7, 1;\n"
    "tdl_take:\n"
    "\tcvt.u64.u32 \t%tdl_xd3, %[chunk];\n"
    "\tatom.relaxed.gpu.global.add.u64 \t%tdl_xd2, " SLOT_CLAIM ", %tdl_xd3;\n"
    "\tbra.uni \t tdl_decode;\n"
    "// a joiner (flow-in): enter the launch of this slot and epoch while it has work\n"
    "tdl_join:\n"
    MASK_TEST
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr9, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tmov.u64 \t%tdl_xd4, %globaltimer;\n"
    "\tadd.u64 \t%tdl_xd4, %tdl_xd4, 100000;\n"
    "\tld.acquire.gpu.global.u64 \t%tdl_xd2, " SLOT_CLAIM ";\n"
    "tdl_join_retry:\n"
    "\tshr.u64 \t%tdl_xd3, %tdl_xd2, " S(TIDAL_EPOCH_SHIFT) ";\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd3;\n"
    "\tsub.u32 \t%tdl_xr5, %tdl_xr5, %[epoch];\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 65535;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr5, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_join_current;\n"
    "\tsetp.lt.u32 \t%tdl_xp1, %tdl_xr5, 32768;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "// the launch has not started yet: wait for it, at most 100 us\n"
    "\tmov.u64 \t%tdl_xd3, %globaltimer;\n"
    "\tsetp.gt.u64 \t%tdl_xp1, %tdl_xd3, %tdl_xd4;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tnanosleep.u32 \t2000;\n"
    "\tld.acquire.gpu.global.u64 \t%tdl_xd2, " SLOT_CLAIM ";\n"
    "\tbra.uni \t tdl_join_retry;\n"
    "tdl_join_current:\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd2;\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 268435455;\n"
    "\tadd.u32 \t%tdl_xr5, %tdl_xr5, %[base];\n"
    "\tsetp.ge.u32 \t%tdl_xp1, %tdl_xr5, %[total];\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tshr.u64 \t%tdl_xd3, %tdl_xd2, " S(TIDAL_CLAIM_JOINER_SHIFT) ";\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd3;\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 1048575;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr5, 1048575;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "// count in as a joiner, without a ticket (a CAS would lose to the owners' claims):\n"
    "// inside only if the word still was this launch's with work left, else undo\n"
    "\tatom.relaxed.gpu.global.add.u64 \t%tdl_xd5, " SLOT_CLAIM ", " ONE_JOINER ";\n"
    "\tshr.u64 \t%tdl_xd3, %tdl_xd5, " S(TIDAL_EPOCH_SHIFT) ";\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd3;\n"
    "\tsub.u32 \t%tdl_xr5, %tdl_xr5, %[epoch];\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 65535;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr5, 0;\n"
    "\tcvt.u32.u64 \t%tdl_xr5, %tdl_xd5;\n"
    "\tand.b32 \t%tdl_xr5, %tdl_xr5, 268435455;\n"
    "\tadd.u32 \t%tdl_xr5, %tdl_xr5, %[base];\n"
    "\tsetp.ge.or.u32 \t%tdl_xp1, %tdl_xr5, %[total], %tdl_xp1;\n"
    "\t@!%tdl_xp1 bra.uni \t tdl_joined;\n"
    "// not inside: take the count back from the word it went into, unless a newer launch's\n"
    "// first worker has reset that word since (its epoch moved on: nothing to take back)\n"
    "\tshr.u64 \t%tdl_xd4, %tdl_xd5, " S(TIDAL_EPOCH_SHIFT) ";\n"
    "\tadd.u64 \t%tdl_xd2, %tdl_xd5, " ONE_JOINER ";\n"
    "tdl_join_undo:\n"
    "\tshr.u64 \t%tdl_xd3, %tdl_xd2, " S(TIDAL_EPOCH_SHIFT) ";\n"
    "\tsetp.ne.u64 \t%tdl_xp1, %tdl_xd3, %tdl_xd4;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tsub.u64 \t%tdl_xd3, %tdl_xd2, " ONE_JOINER ";\n"
    "\tatom.relaxed.gpu.global.cas.b64 \t%tdl_xd5, " SLOT_CLAIM ", %tdl_xd2, %tdl_xd3;\n"
    "\tsetp.eq.u64 \t%tdl_xp1, %tdl_xd5, %tdl_xd2;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tmov.u64 \t%tdl_xd2, %tdl_xd5;\n"
    "\tbra.uni \t tdl_join_undo;\n"
    "// inside: owners end only after this joiner leaves; its tickets come like theirs\n"
    "tdl_joined:\n"
    "\tmov.u32 \t%tdl_xr7, 32;\n"
    TAKE_AND_END;

static const char claim_text[] =
    REGS
    "\tld.shared.u64 \t%tdl_xd0, [%[sh]+" S(TIDAL_SH_OFF_SLOT) "];\n"
    "\tld.shared.u32 \t%tdl_xr7, [%[sh]+" S(TIDAL_SH_OFF_STATE) "];\n"
    RECORD
    "\tand.b32 \t%tdl_xr1, %tdl_xr7, 4;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tand.b32 \t%tdl_xr1, %tdl_xr7, 2;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_mask;\n"
    "// a static worker arrives after its own chunk, if there are tickets at all\n"
    "\tmov.u32 \t%tdl_xr7, 0;\n"
    "\tsetp.ge.u32 \t%tdl_xp1, %[base], %[total];\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "\tand.b32 \t%tdl_xr1, %[flags], 4;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_arrived;\n"
    EPOCH_START
    "tdl_arrived:\n"
    "\tred.relaxed.gpu.global.add.u64 \t" SLOT_GUARD ", " ONE_ARRIVED_WORKING ";\n"
    "\tmov.u32 \t%tdl_xr7, 1;\n"
    "// the mask first: a worker on an SM taken away claims nothing more\n"
    "tdl_mask:\n"
    MASK_LOAD
    MASK_TEST
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr9, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_claim_now;\n"
    "\tand.b32 \t%tdl_xr1, %tdl_xr7, 32;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_none;\n"
    "// an owner leaves, unless it is the last worker of the launch (the liveness guard)\n"
    "\tatom.relaxed.gpu.global.add.u64 \t%tdl_xd2, " SLOT_GUARD ", -1;\n"
    GUARD_LAST_DEPARTURE
    "\tand.b32 \t%tdl_xr7, %tdl_xr7, -2;\n"
    "\t@!%tdl_xp1 bra.uni \t tdl_none;\n"
    GUARD_KEEP
    "\tor.b32 \t%tdl_xr7, %tdl_xr7, 1;\n"
    "tdl_claim_now:\n"
    TAKE_AND_END;

/* A static worker in epoch mode starts its own chunk b0 (computed by every thread) with
 * no memory read: count it (HIST/EXEC), and when the launch has tickets leave the slot and
 * state for the claim that follows the chunk. */
static const char start_text[] =
    REGS
    "\tmov.u32 \t%tdl_xr2, %[b0];\n"
    RECORD_CHUNK("first")
    "\tst.shared.u32 \t[%[sh]+" S(TIDAL_SH_OFF_CHUNK) "], %[total];\n"
    "\tsetp.ge.u32 \t%tdl_xp1, %[base], %[total];\n"
    "\t@%tdl_xp1 bra.uni \t tdl_out;\n"
    "\tmul.wide.u32 \t%tdl_xd0, %[slotix], " S(TIDAL_SLOT_BYTES) ";\n"
    "\tadd.u64 \t%tdl_xd0, %tdl_xd0, " S(TIDAL_PARTITION_HEADER) ";\n"
    "\tadd.u64 \t%tdl_xd0, %[ctl], %tdl_xd0;\n"
    "\tst.shared.u64 \t[%[sh]+" S(TIDAL_SH_OFF_SLOT) "], %tdl_xd0;\n"
    "\tmov.u32 \t%tdl_xr7, 2;\n"
    "\tst.shared.u32 \t[%[sh]+" S(TIDAL_SH_OFF_STATE) "], %tdl_xr7;\n"
    "tdl_out:\n"
    "}";

static const char leave_text[] =
    REGS
    "\tld.shared.u64 \t%tdl_xd0, [%[sh]+" S(TIDAL_SH_OFF_SLOT) "];\n"
    "\tld.shared.u32 \t%tdl_xr7, [%[sh]+" S(TIDAL_SH_OFF_STATE) "];\n"
    "\tand.b32 \t%tdl_xr1, %tdl_xr7, 32;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_owner;\n"
    "// a joiner counts out; release: the owner's workers wait for this before they end\n"
    "\tred.release.gpu.global.add.u64 \t" SLOT_CLAIM ", -" ONE_JOINER ";\n"
    "\tbra.uni \t tdl_out;\n"
    "tdl_owner:\n"
    "// a joiner that never got in (JOIN, state 0) has nothing to undo\n"
    "\tand.b32 \t%tdl_xr1, %[flags], 1;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_out;\n"
    "\tand.b32 \t%tdl_xr1, %tdl_xr7, 8;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_joiners_out;\n"
    "// joiners were inside when the work ran out: the launch must not end before them\n"
    "tdl_wait_joiners:\n"
    "\tld.acquire.gpu.global.u64 \t%tdl_xd2, " SLOT_CLAIM ";\n"
    "\tshr.u64 \t%tdl_xd2, %tdl_xd2, " S(TIDAL_CLAIM_JOINER_SHIFT) ";\n"
    "\tand.b64 \t%tdl_xd2, %tdl_xd2, 1048575;\n"
    "\tsetp.eq.u64 \t%tdl_xp1, %tdl_xd2, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_joiners_out;\n"
    "\tnanosleep.u32 \t500;\n"
    "\tbra.uni \t tdl_wait_joiners;\n"
    "tdl_joiners_out:\n"
    "\tand.b32 \t%tdl_xr1, %[flags], 4;\n"
    "\tsetp.eq.u32 \t%tdl_xp1, %tdl_xr1, 0;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_out;\n"
    "// probe mode: count out in this block's shard (physical id mod 32); the launch's\n"
    "// last block resets the slot and then frees it\n"
    "\tand.b32 \t%tdl_xr0, %[pid], 31;\n"
    "\tmul.wide.u32 \t%tdl_xd1, %tdl_xr0, " S(TIDAL_SLOT_SHARD_STRIDE) ";\n"
    "\tadd.u64 \t%tdl_xd1, %tdl_xd0, %tdl_xd1;\n"
    "\tatom.acq_rel.gpu.global.add.u32 \t%tdl_xr1, [%tdl_xd1+" S(TIDAL_SLOT_OFF_SHARD) "], 1;\n"
    "\tadd.u32 \t%tdl_xr1, %tdl_xr1, 1;\n"
    "\tand.b32 \t%tdl_xr2, %[phys], 31;\n"
    "\tsetp.lt.u32 \t%tdl_xp1, %tdl_xr0, %tdl_xr2;\n"
    "\tselp.u32 \t%tdl_xr2, 1, 0, %tdl_xp1;\n"
    "\tshr.u32 \t%tdl_xr3, %[phys], 5;\n"
    "\tadd.u32 \t%tdl_xr3, %tdl_xr3, %tdl_xr2;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, %tdl_xr3;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_out;\n"
    "\tatom.acq_rel.gpu.global.add.u32 \t%tdl_xr1, [%tdl_xd0+" S(TIDAL_SLOT_OFF_SHARDS_DONE) "], 1;\n"
    "\tadd.u32 \t%tdl_xr1, %tdl_xr1, 1;\n"
    "\tmin.u32 \t%tdl_xr3, %[phys], 32;\n"
    "\tsetp.ne.u32 \t%tdl_xp1, %tdl_xr1, %tdl_xr3;\n"
    "\t@%tdl_xp1 bra.uni \t tdl_out;\n"
    "\tst.relaxed.gpu.global.u64 \t" SLOT_CLAIM ", 0;\n"
    "\tst.relaxed.gpu.global.u64 \t" SLOT_GUARD ", 0;\n"
    "\tst.relaxed.gpu.global.u32 \t[%tdl_xd0+" S(TIDAL_SLOT_OFF_SHARDS_DONE) "], 0;\n"
    "\tmov.u32 \t%tdl_xr0, 0;\n"
    "tdl_reset:\n"
    "\tmul.wide.u32 \t%tdl_xd1, %tdl_xr0, " S(TIDAL_SLOT_SHARD_STRIDE) ";\n"
    "\tadd.u64 \t%tdl_xd1, %tdl_xd0, %tdl_xd1;\n"
    "\tst.relaxed.gpu.global.u32 \t[%tdl_xd1+" S(TIDAL_SLOT_OFF_SHARD) "], 0;\n"
    "\tadd.u32 \t%tdl_xr0, %tdl_xr0, 1;\n"
    "\tsetp.lt.u32 \t%tdl_xp1, %tdl_xr0, " S(TIDAL_SLOT_SHARDS) ";\n"
    "\t@%tdl_xp1 bra.uni \t tdl_reset;\n"
    "// the tag last, a release: a launch whose acquire CAS finds it free sees the words reset.\n"
    "// Not fence.acq_rel + a relaxed store: a fence anywhere in a kernel makes ptxas keep\n"
    "// every atom of the body whose result is unused as an ATOMG that waits for its reply\n"
    "// instead of a REDG (+0.34 us per launch of bench/gpu tiny: docs/performance.md, section 21)\n"
    "\tst.release.gpu.global.u64 \t[%tdl_xd0], 0;\n"
    "tdl_out:\n"
    "}";

// clang-format on
#define U32(n)                 \
    {                          \
        n, TIDAL_OP_U32, false \
    }
#define U64(n)                 \
    {                          \
        n, TIDAL_OP_U64, false \
    }

static const tidal_operand enter_ops[] = {
    {"b0", TIDAL_OP_U32, true},
    U64("ctl"),
    U64("key"),
    U32("flags"),
    U32("total"),
    U32("chunk"),
    U32("base"),
    U32("phys"),
    U32("pid"),
    U32("epoch"),
    U32("slotix"),
    U64("sh"),
};
static const tidal_operand claim_ops[] = {
    {"b0", TIDAL_OP_U32, true},
    U64("ctl"),
    U32("flags"),
    U32("total"),
    U32("chunk"),
    U32("base"),
    U32("phys"),
    U32("epoch"),
    U64("hist"),
    U64("sh"),
};
static const tidal_operand start_ops[] = {
    U32("b0"), U64("ctl"), U32("flags"), U32("total"), U32("first"), U32("base"), U32("slotix"), U64("hist"), U64("sh"),
};
static const tidal_operand leave_ops[] = {
    U32("flags"),
    U32("phys"),
    U32("pid"),
    U64("sh"),
};

#define N(a) (unsigned)(sizeof a / sizeof a[0])
const tidal_snippet tidal_snippet_enter = {"enter", enter_text, enter_ops, N(enter_ops)};
const tidal_snippet tidal_snippet_claim = {"claim", claim_text, claim_ops, N(claim_ops)};
const tidal_snippet tidal_snippet_leave = {"leave", leave_text, leave_ops, N(leave_ops)};
const tidal_snippet tidal_snippet_start = {"start", start_text, start_ops, N(start_ops)};

/* Replace each %[name] of s by what `subst` writes for operand k. */
static char *instantiate(const tidal_snippet *s, void (*subst)(FILE *, const tidal_snippet *, unsigned, void *),
                         void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) ptx_ice("out of memory");
    for (const char *p = s->text; *p;) {
        if (p[0] != '%' || p[1] != '[') {
            fputc(*p++, f);
            continue;
        }
        const char *e = strchr(p + 2, ']');
        unsigned k = 0;
        while (e && k < s->nops &&
               (strlen(s->ops[k].name) != (size_t)(e - p - 2) || memcmp(s->ops[k].name, p + 2, (size_t)(e - p - 2))))
            k++;
        if (!e || k == s->nops) ptx_ice("snippet %s: unknown operand at '%.12s'", s->name, p);
        subst(f, s, k, arg);
        p = e + 1;
    }
    if (fclose(f)) ptx_ice("out of memory");
    return buf;
}

static void subst_reg(FILE *f, const tidal_snippet *s, unsigned k, void *arg)
{
    (void)arg;
    fprintf(f, "%%tdl_%s", s->ops[k].name);
}

char *tidal_snippet_ptx(const tidal_snippet *s) { return instantiate(s, subst_reg, NULL); }

/* LLVM numbers outputs first, then inputs, in constraint order. */
static unsigned asm_index(const tidal_snippet *s, unsigned k)
{
    unsigned n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < s->nops; i++)
            if (s->ops[i].out == (pass == 0)) {
                if (i == k) return n;
                n++;
            }
    return n;
}

static void subst_asm(FILE *f, const tidal_snippet *s, unsigned k, void *arg)
{
    (void)arg;
    fprintf(f, "$%u", asm_index(s, k));
}

char *tidal_snippet_asm(const tidal_snippet *s, char **constraints)
{
    if (strchr(s->text, '$')) ptx_ice("snippet %s: '$' in the text (LLVM inline asm reserves it)", s->name);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) ptx_ice("out of memory");
    const char *sep = "";
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < s->nops; i++)
            if (s->ops[i].out == (pass == 0)) {
                /* early clobber: b0 is written before the inputs are last read */
                fprintf(f, "%s%s%s", sep, s->ops[i].out ? "=&" : "", s->ops[i].type == TIDAL_OP_U64 ? "l" : "r");
                sep = ",";
            }
    fprintf(f, "%s~{memory}", sep);
    if (fclose(f)) ptx_ice("out of memory");
    *constraints = buf;
    return instantiate(s, subst_asm, NULL);
}
