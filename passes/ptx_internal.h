/* ptx_internal.h — shared between the PTX library's files; not installed. */
#ifndef TIDAL_PTX_INTERNAL_H
#define TIDAL_PTX_INTERNAL_H

#include "ptx.h"

typedef struct ptx_arena ptx_arena;
ptx_arena *ptx_arena_new(void);
void ptx_arena_free(ptx_arena *a);
void *ptx_arena_alloc(ptx_arena *a, size_t n);
void *ptx_arena_zalloc(ptx_arena *a, size_t n);

/* Tokenizes m->src into m->toks (terminated by a PTX_TK_EOF token). 0 or -1. */
int ptx_lex(ptx_module *m, ptx_diag *d);

/* Instruction classification from the opcode text. */
ptx_op_class ptx_classify_opcode(const char *op, size_t len);

/* Grows an array of `elem` sized items to hold at least `need` (returns 0/-1). */
int ptx_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);

#endif
