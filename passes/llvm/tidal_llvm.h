/* tidal_llvm.h — the LLVM-IR path of tidal-opt (LLVM 22 C API).
 *
 * Reads NVVM IR (.ll text or .bc bitcode), finds its kernels (the ptx_kernel
 * calling convention, or `!nvvm.annotations` "kernel" entries), and either
 *  - lowers it to PTX through the NVPTX target, after which the PTX tidal pass
 *    runs unchanged (tidal-opt --emit=ptx), or
 *  - applies the tidal transform at IR level (tidal-opt --emit=llvm|bc): each
 *    kernel that the PTX pass accepts on the lowered module is rewritten with the
 *    PTX pass's skeleton around the same protocol snippets (passes/tidal_protocol.c,
 *    here as inline asm; abi/tidal_abi.h); the others stay as they were.
 * docs/design.md, "The LLVM-IR path".
 *
 * Diagnostics as in ptx.h: a function that fails fills the caller's ptx_diag (its file
 * set by ptx_diag_init: the input's name) and prints nothing; LLVM's own fatal errors
 * go to the fatal handler (PTX_FATAL_LLVM). */
#ifndef TIDAL_LLVM_H
#define TIDAL_LLVM_H

#include "tidal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct tidal_llvm_module tidal_llvm_module;

/* Parses and verifies IR. NULL on error, with LLVM's diagnostic in d (its position, or
 * 1:1 where LLVM gives none, as for bitcode). */
tidal_llvm_module *tidal_llvm_parse(const char *name, const char *buf, size_t len, ptx_diag *d);
void tidal_llvm_free(tidal_llvm_module *m);

/* Lowers a copy of the module to PTX with the NVPTX target. arch: "sm_90a", or
 * NULL for the kernels' "target-cpu" (else sm_90a). Returns malloc'd text (NUL
 * terminated, *len without the NUL), or NULL with the reason in d. */
char *tidal_llvm_to_ptx(tidal_llvm_module *m, const char *arch, size_t *len, ptx_diag *d);

/* The LLVM verifier: 0, or -1 with its message in d (at 1:1). */
int tidal_llvm_verify(tidal_llvm_module *m, ptx_diag *d);

/* The tidal transform at IR level. opt: NULL for the defaults; of its fields the IR
 * level reads assume_balanced_arrive (it always has case b and a clone). rep is owned by
 * m. 0, or -1 with the reason in d. */
int tidal_llvm_tidal(tidal_llvm_module *m, const char *arch, const tidal_options *opt, tidal_report *rep, ptx_diag *d);

/* --stats for IR: per function, instructions, blocks, barriers, calls, sreg reads. */
void tidal_llvm_stats(tidal_llvm_module *m, FILE *out);

/* Writes IR text (bitcode=false) or bitcode to path ('-' = stdout). 0 or -1. */
int tidal_llvm_write(tidal_llvm_module *m, const char *path, bool bitcode);

#endif
