/* tidal_code.c — the PTX skeleton the tidal transform puts around a kernel body:
 * register declarations, where the launch's values come from (the original grid, or
 * the clone's tidal_launch parameter), the leader's calls of the protocol snippets
 * (tidal_protocol.c: enter, claim, leave), the one barrier per chunk that publishes
 * the chunk to the block, and the logical-block loop. tidal_rewrite.c decides where
 * they go and fills the placeholders: "@BAR@" (tidal's barrier id), "@ENTER@",
 * "@CLAIM@", "@LEAVE@", "@START@" (the snippets), "@VALUES@" (the entry's launch values),
 * "@LOGICAL@" (the clone's reload of the logical grid), "@SH@" (the base of the shared
 * words in the skeleton's own accesses: __tidal_sh, or the clone's %tdl_sh) and "@DSH@"
 * (the clone's extern array, NAME__tidal_dsh). */
#include "tidal_internal.h"
#include "tidal_abi.h"
#include "tidal_protocol.h"

#define S_(x) #x
#define S(x) S_(x)

// clang-format off
const char tidal_reg_decls[] =
    ".reg .pred \t%tdl_direct, %tdl_leader, %tdl_odd, %tdl_fast, %tdl_once, %tdl_p, %tdl_q;\n"
    "\t.reg .u32 \t%tdl_resume;\n"
    "\t.reg .u32 \t%tdl_cx, %tdl_cy, %tdl_cz, %tdl_nx, %tdl_ny, %tdl_nz, %tdl_total, %tdl_chunk, %tdl_first;\n"
    "\t.reg .u32 \t%tdl_flags, %tdl_base, %tdl_phys, %tdl_pid, %tdl_epoch, %tdl_slotix;\n"
    "\t.reg .u32 \t%tdl_b0, %tdl_b1, %tdl_lin, %tdl_t0, %tdl_t1;\n"
    "\t.reg .u64 \t%tdl_ctl, %tdl_key, %tdl_hist, %tdl_sh, %tdl_a0, %tdl_a1;";

/* The physical block's linear id. */
#define PID                                                                                                            \
    "\tmov.u32 \t%tdl_t0, %ctaid.z;\n"                                                                                 \
    "\tmov.u32 \t%tdl_t1, %nctaid.y;\n"                                                                                \
    "\tmov.u32 \t%tdl_pid, %ctaid.y;\n"                                                                                \
    "\tmad.lo.u32 \t%tdl_pid, %tdl_t0, %tdl_t1, %tdl_pid;\n"                                                           \
    "\tmov.u32 \t%tdl_t1, %nctaid.x;\n"                                                                                \
    "\tmov.u32 \t%tdl_t0, %ctaid.x;\n"                                                                                 \
    "\tmad.lo.u32 \t%tdl_pid, %tdl_pid, %tdl_t1, %tdl_t0;\n"

/* The shared words (abi/tidal_abi.h, TIDAL_SH_*): the original entry's static __tidal_sh;
 * the clone's at tidal_launch.sh_off in its dynamic shared memory, through its own
 * .extern .shared NAME__tidal_dsh (every extern shared array starts at the dynamic base),
 * so that the clone has no more static shared memory than the original. */
#define SH_STATIC "\tmov.u64 \t%tdl_sh, " TIDAL_SH_SYMBOL ";\n"
#define SH_DYNAMIC                                                                                                     \
    "\tld.param.u32 \t%tdl_t0, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_SH_OFF) "];\n"                                     \
    "\tcvt.u64.u32 \t%tdl_sh, %tdl_t0;\n"                                                                              \
    "\tmov.u64 \t%tdl_a0, @DSH@;\n"                                                                                    \
    "\tadd.u64 \t%tdl_sh, %tdl_sh, %tdl_a0;\n"

#define ORIGINAL_FLAGS 28
_Static_assert(ORIGINAL_FLAGS == (TIDAL_LAUNCH_PROBE | TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC), "case b's flags");

/* Launch values of the original entry (case b: the launch's own grid, probe mode).
 * Re-derived after each chunk instead of being kept live across the body. */
const char tidal_values_original_grid[] =
    "\tld.const.u64 \t%tdl_ctl, [__tidal_ctl];\n"
    "\tmov.u32 \t%tdl_nx, %nctaid.x;\n"
    "\tmov.u32 \t%tdl_ny, %nctaid.y;\n"
    "\tmov.u32 \t%tdl_nz, %nctaid.z;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_nx, %tdl_ny;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_total, %tdl_nz;\n"
    "\tmov.u32 \t%tdl_phys, %tdl_total;\n"
    "\tshr.u32 \t%tdl_chunk, %tdl_total, 11;\n"
    "\tmin.u32 \t%tdl_chunk, %tdl_chunk, 32;\n"
    "\tmax.u32 \t%tdl_chunk, %tdl_chunk, 1;\n"
    "\tmov.u32 \t%tdl_first, %tdl_chunk;\n"
    "\tmov.u32 \t%tdl_flags, " S(ORIGINAL_FLAGS) ";\n"
    "\tmov.u32 \t%tdl_base, 0;\n"
    "\tmov.u32 \t%tdl_epoch, 0;\n"
    "\tmov.u32 \t%tdl_slotix, 0;\n"
    "\tmov.u64 \t%tdl_key, %gridid;\n"
    "\tmov.u64 \t%tdl_hist, 0;\n" PID SH_STATIC;

/* A clone launched with partition 0 takes the module's __tidal_ctl: only in modules
 * rewritten with case b, the only ones that define it. @CTL@ in the clone's texts
 * becomes this there, nothing elsewhere (a module-scope .const costs every kernel of the
 * module 0.24 us per launch on the H200, used or not: bench/probes/module_cost.sh). */
const char tidal_ctl_fallback[] =
    "\tsetp.eq.u64 \t%tdl_p, %tdl_ctl, 0;\n"
    "\t@%tdl_p ld.const.u64 \t%tdl_ctl, [__tidal_ctl];\n";

/* Launch values of the clone (case c), from its tidal_launch parameter. */
const char tidal_values_reshaped_grid[] =
    "\tld.param.u64 \t%tdl_ctl, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_PARTITION) "];\n"
    "@CTL@"
    "\tld.param.v2.u32 \t{%tdl_nx, %tdl_ny}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID) "];\n"
    "\tld.param.v2.u32 \t{%tdl_nz, %tdl_chunk}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID_Z) "];\n"
    "\tld.param.v2.u32 \t{%tdl_slotix, %tdl_epoch}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_SLOT) "];\n"
    "\tld.param.v2.u32 \t{%tdl_flags, %tdl_base}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_FLAGS) "];\n"
    "\tld.param.u64 \t%tdl_key, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_KEY) "];\n"
    "\tmov.u64 \t%tdl_a0, %gridid;\n"
    "\tor.b64 \t%tdl_key, %tdl_key, %tdl_a0;\n"
    "\tld.param.u64 \t%tdl_hist, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_SM_BLOCKS) "];\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_nx, %tdl_ny;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_total, %tdl_nz;\n"
    "\tmax.u32 \t%tdl_chunk, %tdl_chunk, 1;\n"
    "\tmin.u32 \t%tdl_chunk, %tdl_chunk, " S(TIDAL_MAX_CHUNK) ";\n"
    "\tld.param.u32 \t%tdl_first, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_FIRST) "];\n"
    "\tmax.u32 \t%tdl_first, %tdl_first, %tdl_chunk;\n"
    "\tmov.u32 \t%tdl_t0, %nctaid.x;\n"
    "\tmov.u32 \t%tdl_t1, %nctaid.y;\n"
    "\tmul.lo.u32 \t%tdl_phys, %tdl_t0, %tdl_t1;\n"
    "\tmov.u32 \t%tdl_t1, %nctaid.z;\n"
    "\tmul.lo.u32 \t%tdl_phys, %tdl_phys, %tdl_t1;\n" PID SH_DYNAMIC;

_Static_assert(TIDAL_LAUNCH_OFF_CHUNK == TIDAL_LAUNCH_OFF_GRID_Z + 4 &&
                   TIDAL_LAUNCH_OFF_EPOCH == TIDAL_LAUNCH_OFF_SLOT + 4 &&
                   TIDAL_LAUNCH_OFF_BASE == TIDAL_LAUNCH_OFF_FLAGS + 4,
               "paired parameter loads above");

/* Where the launch comes from. Case a (no runtime: __tidal_ctl is 0) and grids too
 * large for the protocol branch to the original body first thing. */
const char tidal_prologue_original_grid[] =
    "// tidal: control block and logical grid (original launch)\n"
    "\tld.const.u64 \t%tdl_ctl, [__tidal_ctl];\n"
    "\tsetp.eq.u64 \t%tdl_direct, %tdl_ctl, 0;\n"
    "\t@%tdl_direct bra.uni \t$tdl_direct_start;\n"
    "\tmov.u32 \t%tdl_nx, %nctaid.x;\n"
    "\tmov.u32 \t%tdl_ny, %nctaid.y;\n"
    "\tmov.u32 \t%tdl_nz, %nctaid.z;\n"
    "\tmul.wide.u32 \t%tdl_a0, %tdl_nx, %tdl_ny;\n"
    "\tcvt.u64.u32 \t%tdl_a1, %tdl_nz;\n"
    "\tmul.lo.u64 \t%tdl_a0, %tdl_a0, %tdl_a1;\n"
    "\tsetp.ge.u64 \t%tdl_direct, %tdl_a0, " S(TIDAL_MAX_LOGICAL) ";\n"
    "\t@%tdl_direct bra.uni \t$tdl_direct_start;\n";

const char tidal_prologue_reshaped_grid[] =
    "// tidal: control block and logical grid (reshaped launch)\n"
    "\tld.param.u64 \t%tdl_ctl, [__tidal_launch];\n"
    "@CTL@"
    "\tsetp.eq.u64 \t%tdl_p, %tdl_ctl, 0;\n"
    "\t@%tdl_p trap;\n"
    "\tld.param.v2.u32 \t{%tdl_nx, %tdl_ny}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID) "];\n"
    "\tld.param.u32 \t%tdl_nz, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID_Z) "];\n"
    "\tmul.wide.u32 \t%tdl_a0, %tdl_nx, %tdl_ny;\n"
    "\tcvt.u64.u32 \t%tdl_a1, %tdl_nz;\n"
    "\tmul.lo.u64 \t%tdl_a0, %tdl_a0, %tdl_a1;\n"
    "\tsetp.ge.u64 \t%tdl_p, %tdl_a0, " S(TIDAL_MAX_LOGICAL) ";\n"
    "\t@%tdl_p trap;\n";

#define STATIC_FAST_MASK 7 /* JOIN | STATIC | PROBE: the fast path is STATIC alone */
_Static_assert(STATIC_FAST_MASK == (TIDAL_LAUNCH_JOIN | TIDAL_LAUNCH_STATIC | TIDAL_LAUNCH_PROBE), "fast path");
#define COUNTING_FLAGS 24 /* HIST | EXEC: START records the chunk */
_Static_assert(COUNTING_FLAGS == (TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC), "counting flags");

/* After the launch values. The hot path is laid out straight: a static worker in epoch
 * mode falls through from here into its first logical block (no memory read, no barrier:
 * every thread knows the chunk); the leader's slower paths (enter, claim, leave) come after
 * the body, in tidal_epilogue_tail, so the fast path touches few instruction-cache lines.
 * %tdl_once: a static worker of a launch without tickets (base >= total: every logical
 * block has its worker, libtidal's placed launches) runs its own chunk and ends; the
 * leader STARTs it only to count (HIST/EXEC), and after the chunk the block exits before
 * the launch values are re-derived. Each instruction on this path is device time on every
 * launch (bench/probes/clone_path.sh: ~1 ns each). */
const char tidal_prologue_common[] =
    "// tidal: the leader is thread 0\n"
    "\tmov.u32 \t%tdl_t0, %tid.x;\n"
    "\tmov.u32 \t%tdl_t1, %tid.y;\n"
    "\tor.b32 \t%tdl_t0, %tdl_t0, %tdl_t1;\n"
    "\tmov.u32 \t%tdl_t1, %tid.z;\n"
    "\tor.b32 \t%tdl_t0, %tdl_t0, %tdl_t1;\n"
    "\tsetp.eq.u32 \t%tdl_leader, %tdl_t0, 0;\n"
    "\tsetp.ne.u32 \t%tdl_odd, %tdl_t0, %tdl_t0;\n"
    "// tidal: a static worker in epoch mode starts its own chunk at once\n"
    "\tand.b32 \t%tdl_t0, %tdl_flags, " S(STATIC_FAST_MASK) ";\n"
    "\tsetp.eq.u32 \t%tdl_fast, %tdl_t0, " S(TIDAL_LAUNCH_STATIC) ";\n"
    "\tsetp.ge.and.u32 \t%tdl_once, %tdl_base, %tdl_total, %tdl_fast;\n"
    "\t@!%tdl_fast bra.uni \t$tdl_enter;\n"
    "\tmul.lo.u32 \t%tdl_b0, %tdl_pid, %tdl_first;\n"
    "\tsetp.ge.u32 \t%tdl_p, %tdl_b0, %tdl_total;\n"
    "\t@%tdl_p exit;\n"
    "\t@!%tdl_leader bra \t$tdl_started;\n"
    "\tand.b32 \t%tdl_t0, %tdl_flags, " S(COUNTING_FLAGS) ";\n"
    "\tsetp.eq.and.u32 \t%tdl_p, %tdl_t0, 0, %tdl_once;\n"
    "\t@%tdl_p bra \t$tdl_started;\n"
    "@START@\n"
    "$tdl_started:\n"
    "\tadd.u32 \t%tdl_b1, %tdl_b0, %tdl_first;\n"
    "\tmin.u32 \t%tdl_b1, %tdl_b1, %tdl_total;\n"
    "\tmov.u32 \t%tdl_lin, %tdl_b0;\n"
    "$tdl_logical:\n"
    "@LOGICAL@"
    "\tmov.u32 \t%tdl_cx, %tdl_lin;\n"
    "\tmov.u32 \t%tdl_cy, 0;\n"
    "\tmov.u32 \t%tdl_cz, 0;\n"
    "\tsetp.eq.u32 \t%tdl_p, %tdl_total, %tdl_nx;\n"
    "\t@%tdl_p bra.uni \t$tdl_body;\n"
    "\trem.u32 \t%tdl_cx, %tdl_lin, %tdl_nx;\n"
    "\tdiv.u32 \t%tdl_t0, %tdl_lin, %tdl_nx;\n"
    "\trem.u32 \t%tdl_cy, %tdl_t0, %tdl_ny;\n"
    "\tdiv.u32 \t%tdl_cz, %tdl_t0, %tdl_ny;\n"
    "$tdl_body:";

const char tidal_epilogue_head[] =
    "\tadd.u32 \t%tdl_lin, %tdl_lin, 1;\n"
    "\tsetp.lt.u32 \t%tdl_p, %tdl_lin, %tdl_b1;\n"
    "\t@!%tdl_p bra.uni \t$tdl_claim;\n";

/* After a chunk a static worker's own chunk in a launch without tickets ends the block
 * (%tdl_once); else the launch values are re-derived (not kept live across the body) and the leader
 * claims the next chunk and publishes it to the block through the shared words, at the one
 * barrier per chunk. The block leaves when there is none: everyone but the leader at
 * once, the leader through leave (joiners, a probed slot). The launch values at the
 * departure are those of the last claim: no body ran since. */
const char tidal_epilogue_tail[] =
    "\tbra.uni \t$tdl_logical;\n"
    "$tdl_claim:\n"
    "\t@%tdl_once exit;\n"
    "@VALUES@"
    "\t@!%tdl_leader bra \t$tdl_claimed;\n"
    "@CLAIM@\n"
    "$tdl_publish:\n"
    "\t@%tdl_odd st.shared.u32 \t[@SH@+" S(TIDAL_SH_OFF_B0_ODD) "], %tdl_b0;\n"
    "\t@!%tdl_odd st.shared.u32 \t[@SH@+" S(TIDAL_SH_OFF_B0_EVEN) "], %tdl_b0;\n"
    "$tdl_claimed:\n"
    "\tbarrier.sync \t@BAR@;\n"
    "\t@%tdl_odd ld.shared.u32 \t%tdl_b0, [@SH@+" S(TIDAL_SH_OFF_B0_ODD) "];\n"
    "\t@!%tdl_odd ld.shared.u32 \t%tdl_b0, [@SH@+" S(TIDAL_SH_OFF_B0_EVEN) "];\n"
    "\tnot.pred \t%tdl_odd, %tdl_odd;\n"
    "\tsetp.ge.u32 \t%tdl_p, %tdl_b0, %tdl_total;\n"
    "\t@%tdl_p bra.uni \t$tdl_depart;\n"
    "\tadd.u32 \t%tdl_b1, %tdl_b0, %tdl_chunk;\n"
    "\tmin.u32 \t%tdl_b1, %tdl_b1, %tdl_total;\n"
    "\tmov.u32 \t%tdl_lin, %tdl_b0;\n"
    "\tbra.uni \t$tdl_logical;\n"
    "$tdl_depart:\n"
    "\t@!%tdl_leader exit;\n"
    "@LEAVE@\n"
    "\texit;\n"
    "// tidal: the leader enters the launch: slot, first chunk\n"
    "$tdl_enter:\n"
    "\t@!%tdl_leader bra \t$tdl_claimed;\n"
    "@ENTER@\n"
    "\tbra.uni \t$tdl_publish;";

/* The original entry re-reads its grid at each logical block, from %nctaid. */
const char tidal_original_reload[] =
    "\tmov.u32 \t%tdl_nx, %nctaid.x;\n"
    "\tmov.u32 \t%tdl_ny, %nctaid.y;\n"
    "\tmov.u32 \t%tdl_nz, %nctaid.z;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_nx, %tdl_ny;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_total, %tdl_nz;\n";

/* The clone reloads the logical grid at each logical block (not kept live across
 * the body: sgemm's clone went from 40 to 32 registers with this). */
const char tidal_reshaped_reload[] =
    "\tld.param.v2.u32 \t{%tdl_nx, %tdl_ny}, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID) "];\n"
    "\tld.param.u32 \t%tdl_nz, [__tidal_launch+" S(TIDAL_LAUNCH_OFF_GRID_Z) "];\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_nx, %tdl_ny;\n"
    "\tmul.lo.u32 \t%tdl_total, %tdl_total, %tdl_nz;\n";
// clang-format on
