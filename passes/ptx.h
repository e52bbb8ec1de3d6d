/* ptx.h — tidal's PTX front end: lexer, parser, module IR, printer, CFG.
 *
 * Design: the module keeps the source buffer and one token array. Every IR node
 * (top-level item, statement) refers to a token range; the bytes between tokens
 * (whitespace, comments) stay in the buffer. Printing an unmodified module is
 * therefore a copy of the buffer, and printing a modified function re-emits the
 * original bytes of every statement it did not change. New statements carry their
 * own text (see ptx_stmt_new), which keeps transforms simple and the output
 * readable.
 *
 * Diagnostics (passes/ and passes/llvm/ alike; docs/design.md §2 "Pipeline"): library
 * code never prints to standard error and never exits. Bad input is a user error: the
 * function fails and fills a ptx_diag, which the caller (a driver) prints with
 * ptx_diag_print as `file:line:col: error: message`. A broken invariant inside tidal is
 * an internal error: ptx_ice() hands the message to the program's fatal handler
 * (ptx_set_fatal_handler), which reports it and ends the process (the drivers: exit
 * status 70).
 */
#ifndef TIDAL_PTX_H
#define TIDAL_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- diagnostics */

typedef struct ptx_diag {
    const char *file;   /* name used in messages */
    unsigned line, col; /* 0: no position (col 0 alone: no column) */
    char msg[4096];     /* LLVM's messages quote the source line; a longer one ends in " [...]" */
    int nerrors;
} ptx_diag;

void ptx_diag_init(ptx_diag *d, const char *file);
/* Records an error at line:col (0: none); only the first is kept, later ones are
 * usually its fallout. */
void ptx_diag_error(ptx_diag *d, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints "file:line:col: error: msg\n" ("file:line: error: ..." without a column,
 * "file: error: ..." without a line) to `out`. */
void ptx_diag_print(const ptx_diag *d, FILE *out);

/* FNV-1a of n bytes: the passes' name tables hash with it. */
uint32_t ptx_hash_bytes(const char *s, size_t n);

/* s as a JSON string, quotes included (the reports' one escaper). */
void ptx_json_str(FILE *out, const char *s);

/* What cannot be returned as a ptx_diag: the process must end. */
typedef enum ptx_fatal_kind {
    PTX_FATAL_INTERNAL, /* a broken invariant: a bug in tidal (the drivers exit 70) */
    PTX_FATAL_LLVM,     /* LLVM's fatal-error handler: LLVM cannot go on, e.g. its NVPTX
                           backend cannot select an instruction of the input (exit 1) */
} ptx_fatal_kind;

/* Reports `msg` and ends the process; must not return. */
typedef void (*ptx_fatal_handler)(ptx_fatal_kind kind, const char *msg);

/* The handler ptx_ice and LLVM's fatal errors call; NULL: none, and they abort(). */
void ptx_set_fatal_handler(ptx_fatal_handler h);

/* Internal invariant failure: the message goes to the fatal handler
 * (PTX_FATAL_INTERNAL); without one, abort(). Never returns. */
_Noreturn void ptx_ice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for any kind. */
_Noreturn void ptx_fatal(ptx_fatal_kind kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- tokens */

typedef enum ptx_tok_kind {
    PTX_TK_EOF = 0,
    PTX_TK_IDENT,     /* opcode (ld.global.f32), register (%r1, %ctaid.x), label, symbol */
    PTX_TK_DIRECTIVE, /* .reg .u32 .entry ... */
    PTX_TK_INT,       /* 12, 0x1f, 017, 0b101, 12U */
    PTX_TK_FLOAT,     /* 1.5, 1e3, 0f3F800000, 0d3FF0000000000000 */
    PTX_TK_STRING,    /* "..." */
    PTX_TK_PUNCT,     /* one of { } ( ) [ ] , ; : @ ! + - * / % < > = | & ^ ~ ? */
} ptx_tok_kind;

typedef struct ptx_token {
    uint32_t off; /* byte offset in the source */
    uint32_t len;
    uint32_t line; /* 1-based */
    uint32_t col;  /* 1-based, in bytes */
    uint8_t kind;  /* ptx_tok_kind */
    uint8_t punct; /* the character for PTX_TK_PUNCT */
} ptx_token;

/* ---------------------------------------------------------------- IR */

typedef struct ptx_module ptx_module;
typedef struct ptx_func ptx_func;

typedef enum ptx_stmt_kind {
    PTX_ST_INSTR,       /* [@p] opcode operands ; */
    PTX_ST_LABEL,       /* name: */
    PTX_ST_REG,         /* .reg .b32 %r<10>, %x; */
    PTX_ST_VAR,         /* .local/.shared/.param/.global/.const declaration in a body */
    PTX_ST_DIRECTIVE,   /* .pragma "..."; .loc ...; .file ...; other directives */
    PTX_ST_TARGETS,     /* name: .branchtargets/.calltargets/.callprototype ... ; */
    PTX_ST_SCOPE_BEGIN, /* { */
    PTX_ST_SCOPE_END,   /* } */
} ptx_stmt_kind;

/* Classification of instructions that matter to control flow and to tidal. */
typedef enum ptx_op_class {
    PTX_OP_OTHER = 0,
    PTX_OP_BRA,         /* bra, bra.uni */
    PTX_OP_BRX,         /* brx.idx */
    PTX_OP_RET,         /* ret, ret.uni */
    PTX_OP_EXIT,        /* exit */
    PTX_OP_TRAP,        /* trap */
    PTX_OP_CALL,        /* call, call.uni */
    PTX_OP_BARRIER,     /* CTA-wide barriers: bar.sync/arrive/red, barrier.*, bar.cta.*, barrier.cta.* */
    PTX_OP_BAR_WARP,    /* bar.warp.sync */
    PTX_OP_BAR_CLUSTER, /* barrier.cluster.* */
} ptx_op_class;

typedef struct ptx_operand {
    uint32_t tok_begin, tok_end; /* tokens of this operand (commas excluded) */
} ptx_operand;

typedef struct ptx_stmt {
    uint8_t kind;      /* ptx_stmt_kind */
    uint8_t op_class;  /* ptx_op_class, for PTX_ST_INSTR */
    uint8_t guard_neg; /* @!p */
    uint8_t removed;   /* set by ptx_stmt_remove: not printed */
    uint16_t depth;    /* scope nesting depth inside the body (0 = function body) */
    uint16_t nops;
    int32_t guard_tok;           /* token index of the guard predicate register, -1 if none */
    uint32_t opcode_tok;         /* INSTR: opcode token; LABEL/TARGETS: name token; others: first token */
    uint32_t tok_begin, tok_end; /* [begin, end) in the token array; end includes ';' */
    ptx_operand *ops;            /* INSTR: operands */
    /* Replacement text (no leading indentation, no trailing newline). NULL: the
     * original bytes of [tok_begin, tok_end) are printed. */
    const char *text;
    uint32_t text_len;
    uint8_t synthesized; /* 1 when created by ptx_stmt_new (no source tokens) */
} ptx_stmt;

typedef struct ptx_param {
    uint32_t tok_begin, tok_end; /* the whole declaration */
    uint32_t name_tok;
    const char *space;  /* ".param" or ".reg" (interned directive text) */
    uint32_t type_tok;  /* token of the type directive (.u64, .b8, ...) */
    uint32_t align;     /* 0 when not given */
    uint64_t array_len; /* 0 for scalars; product of [K] dimensions */
    bool is_ptr;        /* has .ptr */
} ptx_param;

typedef struct ptx_perf {
    uint32_t tok_begin, tok_end; /* e.g. ".maxntid 256, 1, 1" */
    uint32_t name_tok;
    uint32_t nvals;
    uint64_t vals[3];
} ptx_perf;

enum {
    PTX_LINK_EXTERN = 1u << 0,
    PTX_LINK_VISIBLE = 1u << 1,
    PTX_LINK_WEAK = 1u << 2,
    PTX_LINK_COMMON = 1u << 3,
};

struct ptx_func {
    ptx_module *mod;
    bool is_entry;
    bool has_body;
    unsigned linkage;            /* PTX_LINK_* */
    uint32_t tok_begin, tok_end; /* whole item, from linkage to '}' or ';' */
    uint32_t name_tok;
    uint32_t body_open_tok;  /* '{' of the body, if has_body */
    uint32_t body_close_tok; /* '}' of the body, if has_body */
    ptx_param *rets;
    uint32_t nrets;
    ptx_param *params;
    uint32_t nparams;
    ptx_perf *perf;
    uint32_t nperf;
    ptx_stmt *stmts;
    uint32_t nstmts, cap_stmts;
    bool modified; /* some statement changed, was added or removed */
    /* Replacement for the header (everything before the body '{'), NULL to keep. */
    const char *header_text;
    uint32_t header_len;
};

typedef enum ptx_item_kind {
    PTX_ITEM_VERSION,      /* .version 9.0 */
    PTX_ITEM_TARGET,       /* .target sm_90a */
    PTX_ITEM_ADDRESS_SIZE, /* .address_size 64 */
    PTX_ITEM_FILE,         /* .file 1 "x.cu" */
    PTX_ITEM_SECTION,      /* .section .debug_info { ... } */
    PTX_ITEM_VAR,          /* module-scope variable */
    PTX_ITEM_FUNC,         /* .entry / .func, definition or declaration */
    PTX_ITEM_DIRECTIVE,    /* .pragma, .alias, other module-level directives */
} ptx_item_kind;

typedef struct ptx_item {
    uint8_t kind;
    uint32_t tok_begin, tok_end;
    uint32_t name_tok; /* VAR: its name; FUNC: its name; others: first token */
    ptx_func *func;    /* FUNC */
    const char *text;  /* synthesized items (ptx_item_insert): their text */
    uint32_t text_len;
} ptx_item;

struct ptx_module {
    const char *file; /* as given to ptx_parse */
    const char *src;  /* the source (owned copy) */
    size_t len;
    ptx_token *toks;
    uint32_t ntoks;
    ptx_item *items;
    uint32_t nitems, cap_items;
    unsigned version_major, version_minor; /* from .version */
    char target[32];                       /* first .target operand, e.g. "sm_90a" */
    unsigned address_size;
    bool modified;
    struct ptx_arena *arena;
};

/* ---------------------------------------------------------------- API */

/* Parses `len` bytes of PTX. The module keeps its own copy of the bytes.
 * Returns NULL on malformed input (the first error is in `diag`), or on
 * out-of-memory (diag says so). */
ptx_module *ptx_parse(const char *file, const char *src, size_t len, ptx_diag *diag);
void ptx_module_free(ptx_module *m);

/* Reads a whole file; returns malloc'd bytes or NULL with errno set. */
char *ptx_read_file(const char *path, size_t *len);

/* Writes the module: unmodified parts byte-for-byte. Returns 0 or -1 (errno). */
int ptx_print(const ptx_module *m, FILE *out);
/* Writes one function's body, from its '{' to its '}', with modifications. */
int ptx_func_print_body(const ptx_func *f, FILE *out);
/* Same, to a malloc'd buffer (NUL-terminated). */
char *ptx_print_to_string(const ptx_module *m, size_t *len);

/* Token helpers. */
static inline const char *ptx_tok_text(const ptx_module *m, uint32_t t) { return m->src + m->toks[t].off; }
bool ptx_tok_is(const ptx_module *m, uint32_t t, const char *s);
/* Copies token text into buf (truncates); returns buf. */
char *ptx_tok_str(const ptx_module *m, uint32_t t, char *buf, size_t size);

/* Functions. */
uint32_t ptx_func_count(const ptx_module *m);
ptx_func *ptx_func_at(const ptx_module *m, uint32_t i); /* i-th function item, in order */
ptx_func *ptx_func_find(const ptx_module *m, const char *name);
/* Name of a function as a NUL-terminated string in the module's arena. */
const char *ptx_func_name(const ptx_func *f);

/* Opcode root ("ld" for ld.global.f32) comparison and full opcode text. */
bool ptx_stmt_opcode_is(const ptx_module *m, const ptx_stmt *s, const char *full);
bool ptx_stmt_opcode_root_is(const ptx_module *m, const ptx_stmt *s, const char *root);

/* ------------------------------------------------------- editing (transforms) */

/* Replaces statement i's text. */
void ptx_stmt_set_text(ptx_func *f, uint32_t i, const char *text);
/* Marks statement i removed. */
void ptx_stmt_remove(ptx_func *f, uint32_t i);
/* Inserts a synthesized statement before index i (i == nstmts appends before '}').
 * `text` is one statement without indentation or newline, e.g. "mov.u32 %r1, 0;"
 * or "$L_x:". Returns the new statement's index. Indices >= i shift by one. */
uint32_t ptx_stmt_insert(ptx_func *f, uint32_t i, ptx_stmt_kind kind, const char *text);
/* Replaces the function header (text before the body's '{'). */
void ptx_func_set_header(ptx_func *f, const char *text);
/* Inserts a synthesized module-level item before item index i. */
void ptx_item_insert(ptx_module *m, uint32_t i, ptx_item_kind kind, const char *text);

/* Arena strdup / printf for transform text. */
char *ptx_strdup(ptx_module *m, const char *s, size_t n);
char *ptx_fmt(ptx_module *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- CFG */

enum { PTX_BB_EXIT_SUCC = UINT32_MAX }; /* pseudo successor: leaves the function */

typedef struct ptx_block {
    uint32_t first, last; /* statement indices [first, last] (inclusive) */
    uint32_t label_stmt;  /* statement index of its label, or UINT32_MAX */
    uint32_t *succ;       /* block indices; PTX_BB_EXIT_SUCC for ret/exit */
    uint32_t nsucc;
    uint32_t *pred;
    uint32_t npred;
    uint32_t ninstrs;
} ptx_block;

typedef struct ptx_cfg {
    const ptx_func *func;
    ptx_block *blocks;
    uint32_t nblocks;
    uint32_t *stmt_block; /* per statement: its block, UINT32_MAX for non-code */
} ptx_cfg;

/* Builds the CFG of a function with a body. Returns NULL with diag set when a
 * branch names an unknown label. */
ptx_cfg *ptx_cfg_build(const ptx_func *f, ptx_diag *diag);
void ptx_cfg_free(ptx_cfg *c);
void ptx_cfg_dump(const ptx_cfg *c, FILE *out);

/* ------------------------------------------------------- special registers */

typedef enum ptx_sreg {
    PTX_SREG_NONE = -1,
    PTX_SREG_TID,
    PTX_SREG_NTID,
    PTX_SREG_LANEID,
    PTX_SREG_WARPID,
    PTX_SREG_NWARPID,
    PTX_SREG_CTAID,
    PTX_SREG_NCTAID,
    PTX_SREG_SMID,
    PTX_SREG_NSMID,
    PTX_SREG_GRIDID,
    PTX_SREG_IS_EXPLICIT_CLUSTER,
    PTX_SREG_CLUSTERID,
    PTX_SREG_NCLUSTERID,
    PTX_SREG_CLUSTER_CTAID,
    PTX_SREG_CLUSTER_NCTAID,
    PTX_SREG_CLUSTER_CTARANK,
    PTX_SREG_CLUSTER_NCTARANK,
    PTX_SREG_LANEMASK,
    PTX_SREG_CLOCK,
    PTX_SREG_CLOCK64,
    PTX_SREG_GLOBALTIMER,
    PTX_SREG_PM,
    PTX_SREG_ENVREG,
    PTX_SREG_SMEM_SIZE,
    PTX_SREG_RESERVED_SMEM,
    PTX_SREG_CURRENT_GRAPH_EXEC,
    PTX_SREG_COUNT
} ptx_sreg;

/* Classifies a register name such as "%ctaid.x" (len bytes). Sets *component to
 * 0/1/2 for .x/.y/.z, -1 otherwise. */
ptx_sreg ptx_sreg_classify(const char *name, size_t len, int *component);
const char *ptx_sreg_name(ptx_sreg r);

/* Counts, for one statement, the special registers it reads (adds to counts[]). */
void ptx_stmt_count_sregs(const ptx_module *m, const ptx_stmt *s, unsigned counts[PTX_SREG_COUNT]);

/* ---------------------------------------------------------------- stats */

typedef struct ptx_func_stats {
    unsigned instructions;
    unsigned blocks;
    unsigned barriers; /* CTA barriers */
    unsigned warp_barriers;
    unsigned cluster_barriers;
    unsigned calls;
    unsigned sregs[PTX_SREG_COUNT];
} ptx_func_stats;

int ptx_func_stats_compute(const ptx_func *f, ptx_func_stats *st, ptx_diag *diag);
/* Prints the stats of every function with a body (kernels first marked). */
int ptx_stats_print(const ptx_module *m, FILE *out, ptx_diag *diag);

#endif
