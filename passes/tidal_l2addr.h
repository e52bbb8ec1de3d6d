/* tidal_l2addr.h — the l2addr pass: kernels address memory homed on one L2 side.
 *
 * `tidal-opt -p l2addr --l2addr KERNEL:PARAM[,...]` follows each chosen `.param .u64`
 * pointer from its ld.param through cvta.to.global and additions of offsets to the
 * ld/st/atom/red.global that use it, and before each such access translates the
 * address: o = address - parameter, then L.base + tidal_l2_offset(L, o, side, flip(o >> 20))
 * (abi/tidal_l2.h), with L and side read from a module-scope word the runtime fills
 * (tidal_l2addr_slot, `__tidal_l2addr_pN_KERNEL`). A kernel the pass cannot prove
 * (the pointer escapes, an access it cannot follow) stays byte-identical and the
 * report says why; docs/design.md "The l2addr pass".
 *
 * The translation is one table of integer operations over named slots
 * (tidal_l2addr_prologue, tidal_l2addr_access): the pass prints it as PTX and
 * tidal_l2addr_eval computes it, so a unit test checks the very code the pass emits
 * against tidal_l2_offset. */
#ifndef TIDAL_L2ADDR_H
#define TIDAL_L2ADDR_H

#include "ptx.h"

#include <stdint.h>

/* ------------------------------------------------------------ the translation */

/* The values the code works on. Inputs: A (the access's address), P (the parameter,
 * as the address derives from it), BASE, FLIPS, SIDE, LOW, PMASK (the slot's fields),
 * SLOT (the slot's address). The result is R. */
typedef enum tidal_l2addr_reg {
    L2A_A,
    L2A_P,
    L2A_BASE,
    L2A_FLIPS,
    L2A_SLOT,
    L2A_SIDE,
    L2A_LOW,
    L2A_PMASK,
    L2A_BELOW,  /* (1 << low) - 1 */
    L2A_NBELOW, /* ~below */
    L2A_PZ,     /* base == 0: the runtime wrote no layout, address as before */
    L2A_O,
    L2A_G,
    L2A_T,
    L2A_FA,
    L2A_R,
    L2A_OL,
    L2A_B64,
    L2A_K,
    L2A_FW,
    L2A_SH,
    L2A_PAR,
    L2A_J,
    L2A_HI,
    L2A_LO,
    L2A_B,
    L2A_NREGS
} tidal_l2addr_reg;

typedef enum tidal_l2addr_op {
    L2A_SUB64,
    L2A_ADD64,
    L2A_SHR64,
    L2A_SHL64,
    L2A_AND64,
    L2A_OR64,
    L2A_CVT32_64, /* low 32 bits */
    L2A_CVT64_32, /* zero-extend */
    L2A_AND32,
    L2A_OR32,
    L2A_XOR32,
    L2A_SHL32,
    L2A_SHR32,
    L2A_SUB32,
    L2A_NOT32,
    L2A_POPC32,
    L2A_MOV32,
    L2A_LD32,   /* d = the 32-bit word at address a (the flip words) */
    L2A_SETPZ,  /* pred d = (a == 0) */
    L2A_SELP64, /* d = c ? a : b */
} tidal_l2addr_op;

enum { L2A_IMM = -1 }; /* b is the immediate `imm` */

typedef struct tidal_l2addr_insn {
    tidal_l2addr_op op;
    int d, a, b, c; /* tidal_l2addr_reg, or L2A_IMM for b */
    uint32_t imm;
} tidal_l2addr_insn;

/* Once per kernel and parameter, after the slot's fields are loaded: below, nbelow, pz. */
extern const tidal_l2addr_insn tidal_l2addr_prologue[];
extern const unsigned tidal_l2addr_nprologue;
/* Before each access: R from A. */
extern const tidal_l2addr_insn tidal_l2addr_access[];
extern const unsigned tidal_l2addr_naccess;

/* The PTX opcode (with type) of an op. */
const char *tidal_l2addr_opcode(tidal_l2addr_op op);

/* Runs n instructions on regs (64-bit values; predicates 0/1); ld reads a 32-bit word. */
void tidal_l2addr_eval(const tidal_l2addr_insn *code, unsigned n, uint64_t regs[L2A_NREGS],
                       uint32_t (*ld)(void *ctx, uint64_t addr), void *ctx);

/* ------------------------------------------------------------ the pass */

typedef enum tidal_l2addr_reason {
    L2A_OK = 0,
    L2A_REFUSE_NO_BODY,
    L2A_REFUSE_ADDRESS_SIZE,
    L2A_REFUSE_PARAM_TYPE,
    L2A_REFUSE_PARAM_ADDRESS,
    L2A_REFUSE_NAME_COLLISION,
    L2A_REFUSE_MIXED_DEFS,
    L2A_REFUSE_MIXED_POINTERS,
    L2A_REFUSE_STORED,
    L2A_REFUSE_CALL,
    L2A_REFUSE_COMPARED,
    L2A_REFUSE_GENERIC,
    L2A_REFUSE_WIDE_ACCESS,
    L2A_REFUSE_OTHER_USE,
    L2A_REFUSE_SIBLING,
    L2A_NREASONS
} tidal_l2addr_reason;

typedef struct tidal_l2addr_refusal {
    const char *name; /* the report's code */
    const char *why;  /* one line, for --help */
} tidal_l2addr_refusal;

extern const tidal_l2addr_refusal tidal_l2addr_refusals[L2A_NREASONS];

/* One KERNEL:PARAM of the command line and what became of it. */
typedef struct tidal_l2addr_item {
    const char *kernel, *param; /* as given; param: a name or a decimal index */
    /* results */
    const char *param_name; /* the parameter's name in the PTX */
    unsigned param_index;
    tidal_l2addr_reason reason; /* L2A_OK: translated */
    const char *detail;
    unsigned line;     /* the .entry's line */
    unsigned accesses; /* accesses translated */
    unsigned regs_added;
} tidal_l2addr_item;

typedef struct tidal_l2addr_report {
    const char *file;
    tidal_l2addr_item *items;
    unsigned nitems;
} tidal_l2addr_report;

/* Runs the pass on m for items[0..n) (filled in place). -1 with diag set for a user
 * error (a kernel or parameter the module does not have, one given twice): the module
 * is then unchanged. */
int tidal_l2addr_run(ptx_module *m, tidal_l2addr_item *items, unsigned n, ptx_diag *diag);

void tidal_l2addr_report_print_text(const tidal_l2addr_report *r, FILE *out);
void tidal_l2addr_report_print_json(const tidal_l2addr_report *r, FILE *out);

#endif
