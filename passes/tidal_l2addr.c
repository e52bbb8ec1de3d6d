/* tidal_l2addr.c — the l2addr pass (tidal_l2addr.h; docs/design.md "The l2addr pass").
 *
 * Per kernel: find the chosen parameters, follow each through the registers that hold
 * it plus an offset (flow-insensitive: a register holds the pointer when one of its
 * definitions derives it, and then every definition must), check every use of those
 * registers, and either refuse the kernel (it stays byte-identical) or, before each
 * .global access through them, insert the translation (the tables below) and address
 * the translated register. */
#include "tidal_l2addr.h"

#include "tidal_abi.h"
#include "tidal_l2.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the translation */

#define I(op, d, a, b, c, imm)                \
    {                                         \
        L2A_##op, L2A_##d, L2A_##a, b, c, imm \
    }
#define R(x) L2A_##x
#define IM L2A_IMM

/* below = (1 << low) - 1, nbelow = ~below, pz = base == 0 */
const tidal_l2addr_insn tidal_l2addr_prologue[] = {
    {L2A_MOV32, R(BELOW), IM, 0, 0, 1},        {L2A_SHL32, R(BELOW), R(BELOW), R(LOW), 0, 0},
    {L2A_SUB32, R(BELOW), R(BELOW), IM, 0, 1}, {L2A_NOT32, R(NBELOW), R(BELOW), 0, 0, 0},
    {L2A_SETPZ, R(PZ), R(BASE), 0, 0, 0},
};
const unsigned tidal_l2addr_nprologue = sizeof tidal_l2addr_prologue / sizeof tidal_l2addr_prologue[0];

/* tidal_l2_addr (abi/tidal_l2.h) of o = A - P, or A itself when pz. The flip word is
 * read from the slot when pz, so an unfilled slot never reads through address 0. */
const tidal_l2addr_insn tidal_l2addr_access[] = {
    {L2A_SUB64, R(O), R(A), R(P), 0, 0},           /* o */
    {L2A_SHR64, R(G), R(O), IM, 0, 20},            /* g = o >> 20 */
    {L2A_SHR64, R(T), R(O), IM, 0, 12},            /* */
    {L2A_CVT32_64, R(K), R(T), 0, 0, 0},           /* */
    {L2A_AND32, R(K), R(K), IM, 0, 255},           /* k = (o >> 12) & 255 */
    {L2A_SHR64, R(FA), R(G), IM, 0, 5},            /* */
    {L2A_SHL64, R(FA), R(FA), IM, 0, 2},           /* */
    {L2A_ADD64, R(FA), R(FA), R(FLIPS), 0, 0},     /* &flips[g >> 5] */
    {L2A_SELP64, R(FA), R(SLOT), R(FA), R(PZ), 0}, /* (the slot when pz) */
    {L2A_LD32, R(FW), R(FA), 0, 0, 0},             /* */
    {L2A_CVT32_64, R(SH), R(G), 0, 0, 0},          /* */
    {L2A_AND32, R(SH), R(SH), IM, 0, 31},          /* */
    {L2A_SHR32, R(FW), R(FW), R(SH), 0, 0},        /* flip (bit 0) */
    {L2A_AND32, R(PAR), R(K), R(PMASK), 0, 0},     /* */
    {L2A_POPC32, R(PAR), R(PAR), 0, 0, 0},         /* parity (bit 0) of k & pmask */
    {L2A_XOR32, R(J), R(PAR), R(FW), 0, 0},        /* */
    {L2A_XOR32, R(J), R(J), R(SIDE), 0, 0},        /* */
    {L2A_AND32, R(J), R(J), IM, 0, 1},             /* j = side ^ flip ^ parity */
    {L2A_SHL32, R(J), R(J), R(LOW), 0, 0},         /* j << low */
    {L2A_AND32, R(HI), R(K), R(NBELOW), 0, 0},     /* */
    {L2A_SHL32, R(HI), R(HI), IM, 0, 1},           /* (k & ~below) << 1 */
    {L2A_AND32, R(LO), R(K), R(BELOW), 0, 0},      /* k & below */
    {L2A_OR32, R(B), R(HI), R(LO), 0, 0},          /* */
    {L2A_OR32, R(B), R(B), R(J), 0, 0},            /* b */
    {L2A_CVT64_32, R(B64), R(B), 0, 0, 0},         /* */
    {L2A_SHL64, R(B64), R(B64), IM, 0, 12},        /* b << 12 */
    {L2A_SHL64, R(R), R(G), IM, 0, 21},            /* g << 21 */
    {L2A_OR64, R(R), R(R), R(B64), 0, 0},          /* */
    {L2A_AND64, R(OL), R(O), IM, 0, 4095},         /* */
    {L2A_OR64, R(R), R(R), R(OL), 0, 0},           /* tidal_l2_offset */
    {L2A_ADD64, R(R), R(R), R(BASE), 0, 0},        /* + base */
    {L2A_SELP64, R(R), R(A), R(R), R(PZ), 0},      /* pz: the address as it was */
};
const unsigned tidal_l2addr_naccess = sizeof tidal_l2addr_access / sizeof tidal_l2addr_access[0];

#undef I
#undef R
#undef IM

const char *tidal_l2addr_opcode(tidal_l2addr_op op)
{
    switch (op) {
    case L2A_SUB64: return "sub.s64";
    case L2A_ADD64: return "add.s64";
    case L2A_SHR64: return "shr.u64";
    case L2A_SHL64: return "shl.b64";
    case L2A_AND64: return "and.b64";
    case L2A_OR64: return "or.b64";
    case L2A_CVT32_64: return "cvt.u32.u64";
    case L2A_CVT64_32: return "cvt.u64.u32";
    case L2A_AND32: return "and.b32";
    case L2A_OR32: return "or.b32";
    case L2A_XOR32: return "xor.b32";
    case L2A_SHL32: return "shl.b32";
    case L2A_SHR32: return "shr.u32";
    case L2A_SUB32: return "sub.s32";
    case L2A_NOT32: return "not.b32";
    case L2A_POPC32: return "popc.b32";
    case L2A_MOV32: return "mov.u32";
    case L2A_LD32: return "ld.global.nc.u32";
    case L2A_SETPZ: return "setp.eq.s64";
    case L2A_SELP64: return "selp.b64";
    }
    ptx_ice("l2addr: unknown op %d", (int)op);
}

/* PTX shifts clamp the amount to the width */
static uint64_t shl(uint64_t x, uint64_t n, unsigned w) { return n >= w ? 0 : x << n; }
static uint64_t shr(uint64_t x, uint64_t n, unsigned w) { return n >= w ? 0 : x >> n; }

void tidal_l2addr_eval(const tidal_l2addr_insn *code, unsigned n, uint64_t regs[L2A_NREGS],
                       uint32_t (*ld)(void *ctx, uint64_t addr), void *ctx)
{
    for (unsigned i = 0; i < n; i++) {
        const tidal_l2addr_insn *x = &code[i];
        uint64_t a = x->a == L2A_IMM ? x->imm : regs[x->a];
        uint64_t b = x->b == L2A_IMM ? x->imm : regs[x->b];
        uint64_t a32 = (uint32_t)a, b32 = (uint32_t)b, v = 0;
        switch (x->op) {
        case L2A_SUB64: v = a - b; break;
        case L2A_ADD64: v = a + b; break;
        case L2A_SHR64: v = shr(a, b32, 64); break;
        case L2A_SHL64: v = shl(a, b32, 64); break;
        case L2A_AND64: v = a & b; break;
        case L2A_OR64: v = a | b; break;
        case L2A_CVT32_64: v = a32; break;
        case L2A_CVT64_32: v = a32; break;
        case L2A_AND32: v = a32 & b32; break;
        case L2A_OR32: v = a32 | b32; break;
        case L2A_XOR32: v = a32 ^ b32; break;
        case L2A_SHL32: v = (uint32_t)shl(a32, b32, 32); break;
        case L2A_SHR32: v = shr(a32, b32, 32); break;
        case L2A_SUB32: v = (uint32_t)(a32 - b32); break;
        case L2A_NOT32: v = (uint32_t)~a32; break;
        case L2A_POPC32: v = (uint64_t)__builtin_popcount((unsigned)a32); break;
        case L2A_MOV32: v = a32; break;
        case L2A_LD32: v = ld(ctx, a); break;
        case L2A_SETPZ: v = a == 0; break;
        case L2A_SELP64: v = regs[x->c] ? a : b; break;
        }
        regs[x->d] = v;
    }
}

/* Register names: the per-parameter values carry the parameter's index in the kernel's
 * list of chosen parameters, the temporaries are shared. */
static const struct {
    const char *name;
    char cls; /* 'd' .b64, 'w' .b32, 'p' .pred */
    bool per_param;
} reg_info[L2A_NREGS] = {
    [L2A_A] = {"a", 'd', false},          [L2A_P] = {"p", 'd', true},         [L2A_BASE] = {"base", 'd', true},
    [L2A_FLIPS] = {"flips", 'd', true},   [L2A_SLOT] = {"slot", 'd', true},   [L2A_SIDE] = {"side", 'w', true},
    [L2A_LOW] = {"low", 'w', true},       [L2A_PMASK] = {"pmask", 'w', true}, [L2A_BELOW] = {"below", 'w', true},
    [L2A_NBELOW] = {"nbelow", 'w', true}, [L2A_PZ] = {"pz", 'p', true},       [L2A_O] = {"o", 'd', false},
    [L2A_G] = {"g", 'd', false},          [L2A_T] = {"t", 'd', false},        [L2A_FA] = {"fa", 'd', false},
    [L2A_R] = {"r", 'd', false},          [L2A_OL] = {"ol", 'd', false},      [L2A_B64] = {"b64", 'd', false},
    [L2A_K] = {"k", 'w', false},          [L2A_FW] = {"fw", 'w', false},      [L2A_SH] = {"sh", 'w', false},
    [L2A_PAR] = {"par", 'w', false},      [L2A_J] = {"j", 'w', false},        [L2A_HI] = {"hi", 'w', false},
    [L2A_LO] = {"lo", 'w', false},        [L2A_B] = {"b", 'w', false},
};

/* ------------------------------------------------------------ registers */

typedef struct reg {
    const char *name;
    uint32_t len;
    int owner;     /* chosen parameter whose pointer it holds (index into the kernel's), -1 none */
    int kind;      /* 0: the parameter as loaded (generic), 1: after cvta.to.global */
    bool other;    /* holds another pointer parameter (plus offsets) */
    bool conflict; /* derived from two parameters or two kinds */
} reg;

typedef struct regtab {
    reg *v;
    uint32_t n, cap; /* cap: a power of two */
} regtab;

static reg *reg_get(regtab *t, const char *s, uint32_t n)
{
    uint32_t i = ptx_hash_bytes(s, n) & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        reg *r = &t->v[i];
        if (!r->name) {
            r->name = s;
            r->len = n;
            r->owner = -1;
            t->n++;
            return r;
        }
        if (r->len == n && !memcmp(r->name, s, n)) return r;
    }
}

/* ------------------------------------------------------------ per kernel */

typedef struct chosen {
    tidal_l2addr_item *item;
    uint32_t param; /* index in f->params */
    bool loaded;
} chosen;

typedef struct kctx {
    ptx_module *m;
    ptx_func *f;
    regtab regs;
    chosen *ch;
    unsigned nch;
    tidal_l2addr_reason reason;
    const char *detail;
    int culprit; /* the chosen parameter refused for, -1 all */
} kctx;

static bool tok_starts(const ptx_module *m, uint32_t t, const char *p)
{
    size_t n = strlen(p);
    return m->toks[t].len >= n && !memcmp(ptx_tok_text(m, t), p, n);
}

static bool is_reg_tok(const ptx_module *m, uint32_t t)
{
    return m->toks[t].kind == PTX_TK_IDENT && ptx_tok_text(m, t)[0] == '%';
}

static reg *reg_of(kctx *k, uint32_t t) { return reg_get(&k->regs, ptx_tok_text(k->m, t), k->m->toks[t].len); }

static char *opcode_of(kctx *k, const ptx_stmt *s)
{
    char buf[96];
    ptx_tok_str(k->m, s->opcode_tok, buf, sizeof buf);
    return ptx_strdup(k->m, buf, strlen(buf));
}

static bool op_is(const char *opc, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(opc, *list)) return true;
    return false;
}

/* The single register of operand o (no brackets, nothing else), or UINT32_MAX. */
static uint32_t single_reg(kctx *k, const ptx_stmt *s, unsigned o)
{
    if (o >= s->nops) return UINT32_MAX;
    const ptx_operand *op = &s->ops[o];
    if (op->tok_end != op->tok_begin + 1 || !is_reg_tok(k->m, op->tok_begin)) return UINT32_MAX;
    return op->tok_begin;
}

/* A register's taint, or NULL when the operand is no single register or not tainted. */
static reg *tainted(kctx *k, const ptx_stmt *s, unsigned o)
{
    uint32_t t = single_reg(k, s, o);
    if (t == UINT32_MAX) return NULL;
    reg *r = reg_of(k, t);
    return r->owner >= 0 ? r : NULL;
}

static bool other_ptr(kctx *k, const ptx_stmt *s, unsigned o)
{
    uint32_t t = single_reg(k, s, o);
    return t != UINT32_MAX && reg_of(k, t)->other;
}

static bool tok_eq(const ptx_module *m, uint32_t a, uint32_t b)
{
    return m->toks[a].len == m->toks[b].len && !memcmp(ptx_tok_text(m, a), ptx_tok_text(m, b), m->toks[a].len);
}

/* Which chosen parameter `ld.param.u64 d, [NAME]` reads (its index in k->ch); -2 another
 * parameter; -3 not such a load. */
static int param_load(kctx *k, const ptx_stmt *s)
{
    const char *opc = opcode_of(k, s);
    static const char *const lds[] = {"ld.param.u64", "ld.param.b64", "ld.param.s64", NULL};
    if (!op_is(opc, lds) || s->nops != 2 || single_reg(k, s, 0) == UINT32_MAX) return -3;
    const ptx_operand *a = &s->ops[1];
    uint32_t n = a->tok_end - a->tok_begin;
    if (!ptx_tok_is(k->m, a->tok_begin, "[") || !ptx_tok_is(k->m, a->tok_end - 1, "]")) return -3;
    if (n != 3 && !(n == 5 && ptx_tok_is(k->m, a->tok_begin + 2, "+") && ptx_tok_is(k->m, a->tok_begin + 3, "0")))
        return -3;
    uint32_t nt = a->tok_begin + 1;
    for (unsigned c = 0; c < k->nch; c++)
        if (tok_eq(k->m, nt, k->f->params[k->ch[c].param].name_tok)) return (int)c;
    for (uint32_t p = 0; p < k->f->nparams; p++)
        if (tok_eq(k->m, nt, k->f->params[p].name_tok)) return -2;
    return -3;
}

/* The instructions that compute pointer + offset. */
typedef enum form { F_NONE, F_PARAM, F_MOV, F_CVTA, F_ADD, F_SUB, F_MAD } form;

static form form_of(kctx *k, const ptx_stmt *s)
{
    if (s->kind != PTX_ST_INSTR || single_reg(k, s, 0) == UINT32_MAX) return F_NONE;
    const char *o = opcode_of(k, s);
    static const char *const movs[] = {"mov.u64", "mov.b64", "mov.s64", NULL};
    static const char *const cvtas[] = {"cvta.to.global.u64", NULL};
    static const char *const adds[] = {"add.s64", "add.u64", NULL};
    static const char *const subs[] = {"sub.s64", "sub.u64", NULL};
    static const char *const mads[] = {"mad.lo.s64", "mad.lo.u64", "mad.wide.s32", "mad.wide.u32", NULL};
    if (param_load(k, s) != -3) return F_PARAM;
    if (op_is(o, movs) && s->nops == 2) return F_MOV;
    if (op_is(o, cvtas) && s->nops == 2) return F_CVTA;
    if (op_is(o, adds) && s->nops == 3) return F_ADD;
    if (op_is(o, subs) && s->nops == 3) return F_SUB;
    if (op_is(o, mads) && s->nops == 4) return F_MAD;
    return F_NONE;
}

typedef struct derived {
    int owner, kind;
    bool other;
    tidal_l2addr_reason err; /* the instruction uses the pointer in a way the pass refuses */
    const char *why;
} derived;

/* What the destination of a pointer + offset instruction holds. */
static derived derive(kctx *k, const ptx_stmt *s, form fm)
{
    derived r = {-1, 0, false, L2A_OK, NULL};
    reg *t1 = tainted(k, s, 1), *t2 = tainted(k, s, 2), *t3 = s->nops > 3 ? tainted(k, s, 3) : NULL;
    bool o1 = other_ptr(k, s, 1), o2 = other_ptr(k, s, 2), o3 = s->nops > 3 && other_ptr(k, s, 3);
    switch (fm) {
    case F_NONE: break;
    case F_PARAM: {
        int c = param_load(k, s);
        if (c >= 0) r.owner = c;
        r.other = c == -2;
        break;
    }
    case F_MOV:
        if (t1) r.owner = t1->owner, r.kind = t1->kind;
        r.other = o1;
        break;
    case F_CVTA:
        if (t1 && t1->kind == 1) {
            r.err = L2A_REFUSE_OTHER_USE;
            r.why = "cvta.to.global of an address that is global already";
        } else if (t1) {
            r.owner = t1->owner, r.kind = 1;
        }
        r.other = o1;
        break;
    case F_ADD:
        if ((t1 && t2) || (t1 && o2) || (t2 && o1)) {
            r.err = L2A_REFUSE_MIXED_POINTERS;
            r.why = "adds two pointers";
        } else if (t1 || t2) {
            r.owner = (t1 ? t1 : t2)->owner, r.kind = (t1 ? t1 : t2)->kind;
        }
        r.other = o1 || o2;
        break;
    case F_SUB:
        if (t2) {
            r.err = t1 || o1 ? L2A_REFUSE_MIXED_POINTERS : L2A_REFUSE_OTHER_USE;
            r.why = "subtracts the pointer";
        } else if (t1 && o2) {
            r.err = L2A_REFUSE_MIXED_POINTERS;
            r.why = "subtracts another pointer from it";
        } else if (t1) {
            r.owner = t1->owner, r.kind = t1->kind;
        }
        r.other = o1;
        break;
    case F_MAD:
        if (t1 || t2) {
            r.err = L2A_REFUSE_OTHER_USE;
            r.why = "multiplies the pointer";
        } else if (t3 && (o1 || o2)) {
            r.err = L2A_REFUSE_MIXED_POINTERS;
            r.why = "adds another pointer to it";
        } else if (t3) {
            r.owner = t3->owner, r.kind = t3->kind;
        }
        r.other = o3;
        break;
    }
    return r;
}

static void refuse(kctx *k, int culprit, tidal_l2addr_reason why, uint32_t line, const char *fmt, const char *a,
                   const char *b)
{
    if (k->reason != L2A_OK) return;
    k->reason = why;
    k->culprit = culprit;
    k->detail = ptx_fmt(k->m, fmt, a ? a : "", b ? b : "");
    k->detail = ptx_fmt(k->m, "line %u: %s", line, k->detail);
}

/* One access to translate. */
typedef struct access {
    uint32_t stmt;
    unsigned op;  /* the address operand */
    uint32_t reg; /* its register's token */
    long long disp;
    int owner, kind;
} access;

/* Bytes an ld/st/atom/red moves: vector count times the type's size; 0 unknown. */
static unsigned access_width(const char *opc)
{
    unsigned vec = 1, size = 0;
    const char *p = opc;
    while ((p = strchr(p, '.'))) {
        p++;
        size_t n = strcspn(p, ".");
        char w[16];
        if (n >= sizeof w) continue;
        memcpy(w, p, n);
        w[n] = 0;
        if (!strcmp(w, "v2"))
            vec = 2;
        else if (!strcmp(w, "v4"))
            vec = 4;
        else if (!strcmp(w, "v8"))
            vec = 8;
        else if (w[0] && strchr("busf", w[0]) && w[1] >= '0' && w[1] <= '9')
            size = (unsigned)atoi(w + 1) / 8 * (strstr(w, "x2") ? 2 : 1);
        else if (!strcmp(w, "bf16"))
            size = 2;
        else if (!strcmp(w, "bf16x2"))
            size = 4;
        else if (!strcmp(w, "e4m3x2") || !strcmp(w, "e5m2x2"))
            size = 2;
    }
    return vec * size;
}

/* cp.async's copy size (operand 2: 4, 8 or 16), 0 when not a literal. */
static unsigned cp_bytes(kctx *k, const ptx_stmt *s)
{
    if (s->nops < 3 || s->ops[2].tok_end != s->ops[2].tok_begin + 1 ||
        k->m->toks[s->ops[2].tok_begin].kind != PTX_TK_INT)
        return 0;
    char buf[16];
    ptx_tok_str(k->m, s->ops[2].tok_begin, buf, sizeof buf);
    return (unsigned)strtoul(buf, NULL, 0);
}

/* [reg], [reg+N], [reg+-N], [reg-N]: the displacement; false for any other form. */
static bool parse_address(kctx *k, const ptx_operand *op, long long *disp)
{
    const ptx_module *m = k->m;
    uint32_t b = op->tok_begin, n = op->tok_end - op->tok_begin;
    if (n < 3 || !ptx_tok_is(m, b, "[") || !ptx_tok_is(m, op->tok_end - 1, "]") || !is_reg_tok(m, b + 1)) return false;
    *disp = 0;
    if (n == 3) return true;
    uint32_t t = b + 2;
    int sign = 1;
    if (ptx_tok_is(m, t, "+"))
        t++;
    else if (!ptx_tok_is(m, t, "-"))
        return false;
    if (ptx_tok_is(m, t, "-")) sign = -sign, t++;
    if (t + 2 != op->tok_end || m->toks[t].kind != PTX_TK_INT) return false;
    char buf[32];
    ptx_tok_str(m, t, buf, sizeof buf);
    char *end;
    long long v = strtoll(buf, &end, 0);
    if (*end && strcmp(end, "U") && strcmp(end, "u")) return false;
    *disp = sign * v;
    return true;
}

static bool has_part(const char *opc, const char *part)
{
    size_t n = strlen(part);
    for (const char *p = strchr(opc, '.'); p; p = strchr(p + 1, '.'))
        if (!strncmp(p + 1, part, n) && (p[1 + n] == '.' || !p[1 + n])) return true;
    return false;
}

static char *root_of(kctx *k, const char *opc)
{
    size_t n = strcspn(opc, ".");
    return ptx_strdup(k->m, opc, n);
}

/* Checks every instruction; fills acc (the .global accesses through the pointers). */
static unsigned check(kctx *k, access *acc)
{
    ptx_module *m = k->m;
    ptx_func *f = k->f;
    unsigned nacc = 0;
    for (uint32_t i = 0; i < f->nstmts && k->reason == L2A_OK; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->kind != PTX_ST_INSTR) continue;
        unsigned line = m->toks[s->opcode_tok].line;
        const char *opc = opcode_of(k, s);
        const char *root = root_of(k, opc);
        form fm = form_of(k, s);
        int pl = fm == F_PARAM ? param_load(k, s) : -3;
        /* the parameter's name: only in ld.param.u64 d, [NAME] */
        for (uint32_t t = s->tok_begin; t < s->tok_end; t++)
            for (unsigned c = 0; c < k->nch; c++)
                if (tok_eq(m, t, f->params[k->ch[c].param].name_tok) && pl != (int)c)
                    refuse(k, (int)c, L2A_REFUSE_PARAM_ADDRESS, line, "'%s' uses the parameter's address%s", opc, "");
        /* definitions: registers of operand 0 outside brackets */
        derived dv = fm != F_NONE ? derive(k, s, fm) : (derived){-1, 0, false, L2A_OK, NULL};
        if (s->nops) {
            int depth = 0;
            for (uint32_t t = s->ops[0].tok_begin; t < s->ops[0].tok_end; t++) {
                if (ptx_tok_is(m, t, "[")) depth++;
                if (ptx_tok_is(m, t, "]")) depth--;
                if (depth || !is_reg_tok(m, t)) continue;
                reg *r = reg_of(k, t);
                if (r->owner < 0) continue;
                char rn[64];
                ptx_tok_str(m, t, rn, sizeof rn);
                if (r->conflict)
                    refuse(k, r->owner, L2A_REFUSE_MIXED_DEFS, line,
                           "%s holds the pointer of two parameters, or before and after cvta.to.global%s", rn, "");
                else if (fm == F_NONE || (dv.err == L2A_OK && (dv.owner != r->owner || dv.kind != r->kind)))
                    refuse(k, r->owner, L2A_REFUSE_MIXED_DEFS, line,
                           "'%s' writes %s, which holds the pointer elsewhere", opc, rn);
            }
        }
        /* uses */
        for (unsigned o = 0; o < s->nops && k->reason == L2A_OK; o++) {
            int depth = 0;
            for (uint32_t t = s->ops[o].tok_begin; t < s->ops[o].tok_end && k->reason == L2A_OK; t++) {
                if (ptx_tok_is(m, t, "[")) depth++;
                if (ptx_tok_is(m, t, "]")) depth--;
                if (!is_reg_tok(m, t) || (o == 0 && !depth)) continue;
                reg *r = reg_of(k, t);
                if (r->owner < 0) continue;
                if (fm != F_NONE && o >= 1) {
                    if (dv.err != L2A_OK) refuse(k, r->owner, dv.err, line, "'%s' %s", opc, dv.why);
                    continue;
                }
                /* cp.async.{ca,cg}.shared{,::cta}.global [dst], [src], BYTES: src is operand 1 */
                bool cp = !strncmp(opc, "cp.async.ca.", 12) || !strncmp(opc, "cp.async.cg.", 12);
                bool addr_pos = depth && ((o == 1 && (!strcmp(root, "ld") || !strcmp(root, "atom") || cp)) ||
                                          (o == 0 && (!strcmp(root, "st") || !strcmp(root, "red"))));
                if (addr_pos && has_part(opc, "global")) {
                    access a = {i, o, t, 0, r->owner, r->kind};
                    unsigned w = cp ? cp_bytes(k, s) : access_width(opc);
                    if (!parse_address(k, &s->ops[o], &a.disp))
                        refuse(k, r->owner, L2A_REFUSE_OTHER_USE, line,
                               "'%s': an address form the pass does not take%s", opc, "");
                    else if (!w)
                        refuse(k, r->owner, L2A_REFUSE_OTHER_USE, line, "'%s': unknown access width%s", opc, "");
                    else if (w > 16)
                        refuse(k, r->owner, L2A_REFUSE_WIDE_ACCESS, line, "'%s' moves more than 16 bytes%s", opc, "");
                    else
                        acc[nacc++] = a;
                } else if (depth && (addr_pos || !strcmp(root, "ld") || !strcmp(root, "st") || !strcmp(root, "atom") ||
                                     !strcmp(root, "red"))) {
                    refuse(k, r->owner, L2A_REFUSE_GENERIC, line, "'%s' accesses it outside .global%s", opc, "");
                } else if ((!strcmp(root, "st") && has_part(opc, "param")) || !strcmp(root, "call")) {
                    refuse(k, r->owner, L2A_REFUSE_CALL, line, "'%s' passes it on%s", opc, "");
                } else if (!strcmp(root, "st") || !strcmp(root, "atom") || !strcmp(root, "red")) {
                    refuse(k, r->owner, L2A_REFUSE_STORED, line, "'%s' stores it%s", opc, "");
                } else if (!strcmp(root, "setp") || !strcmp(root, "set")) {
                    refuse(k, r->owner, L2A_REFUSE_COMPARED, line, "'%s' compares it%s", opc, "");
                } else if (!strcmp(root, "cvta")) {
                    refuse(k, r->owner, L2A_REFUSE_GENERIC, line, "'%s' converts it%s", opc, "");
                } else {
                    refuse(k, r->owner, L2A_REFUSE_OTHER_USE, line, "'%s' uses it%s", opc, "");
                }
            }
        }
    }
    return nacc;
}

/* Registers: the fixpoint of "holds the pointer". */
static void propagate(kctx *k)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < k->f->nstmts; i++) {
            const ptx_stmt *s = &k->f->stmts[i];
            form fm = form_of(k, s);
            if (fm == F_NONE) continue;
            derived dv = derive(k, s, fm);
            reg *d = reg_of(k, s->ops[0].tok_begin);
            if (dv.other && !d->other) d->other = changed = true;
            if (dv.owner < 0) continue;
            if (d->owner < 0) {
                d->owner = dv.owner;
                d->kind = dv.kind;
                changed = true;
            } else if ((d->owner != dv.owner || d->kind != dv.kind) && !d->conflict) {
                d->conflict = changed = true;
            }
        }
    }
}

/* ------------------------------------------------------------ rewrite */

static const char *reg_name(kctx *k, int r, unsigned c, const char *a, const char *p)
{
    if (r == L2A_A) return a;
    if (r == L2A_P) return p;
    return reg_info[r].per_param ? ptx_fmt(k->m, "%%tl2a_%s%u", reg_info[r].name, c)
                                 : ptx_fmt(k->m, "%%tl2a_%s", reg_info[r].name);
}

static uint32_t emit(kctx *k, uint32_t at, const char *guard, const tidal_l2addr_insn *code, unsigned n, unsigned c,
                     const char *a, const char *p)
{
    for (unsigned i = 0; i < n; i++) {
        const tidal_l2addr_insn *x = &code[i];
        const char *op = tidal_l2addr_opcode(x->op);
        const char *d = reg_name(k, x->d, c, a, p);
        const char *sa = x->a == L2A_IMM ? ptx_fmt(k->m, "%u", x->imm) : reg_name(k, x->a, c, a, p);
        const char *text;
        switch (x->op) {
        case L2A_MOV32: text = ptx_fmt(k->m, "%s \t%s, %u;", op, d, x->imm); break;
        case L2A_CVT32_64:
        case L2A_CVT64_32:
        case L2A_NOT32:
        case L2A_POPC32: text = ptx_fmt(k->m, "%s \t%s, %s;", op, d, sa); break;
        case L2A_LD32: text = ptx_fmt(k->m, "%s \t%s, [%s];", op, d, sa); break;
        case L2A_SETPZ: text = ptx_fmt(k->m, "%s \t%s, %s, 0;", op, d, sa); break;
        case L2A_SELP64:
            text = ptx_fmt(k->m, "%s \t%s, %s, %s, %s;", op, d, sa, reg_name(k, x->b, c, a, p),
                           reg_name(k, x->c, c, a, p));
            break;
        default:
            text = ptx_fmt(k->m, "%s \t%s, %s, %s;", op, d, sa,
                           x->b == L2A_IMM ? ptx_fmt(k->m, "%u", x->imm) : reg_name(k, x->b, c, a, p));
        }
        ptx_stmt_insert(k->f, at++, PTX_ST_INSTR, ptx_fmt(k->m, "%s%s", guard, text));
    }
    return at;
}

static const char *symbol(kctx *k, unsigned c)
{
    return ptx_fmt(k->m, TIDAL_L2ADDR_SYMBOL_FMT, k->ch[c].item->param_index, ptx_func_name(k->f));
}

static unsigned rewrite(kctx *k, access *acc, unsigned nacc)
{
    ptx_module *m = k->m;
    ptx_func *f = k->f;
    bool used[64] = {false};
    for (unsigned i = 0; i < nacc; i++) used[acc[i].owner] = true;
    /* the accesses, last first: insertions do not move the earlier ones */
    for (unsigned i = nacc; i-- > 0;) {
        access *x = &acc[i];
        ptx_stmt *s = &f->stmts[x->stmt];
        const char *guard = "";
        if (s->guard_tok >= 0) {
            char g[64];
            ptx_tok_str(m, (uint32_t)s->guard_tok, g, sizeof g);
            guard = ptx_fmt(m, "@%s%s ", s->guard_neg ? "!" : "", g);
        }
        char rn[64];
        ptx_tok_str(m, x->reg, rn, sizeof rn);
        const char *a = ptx_strdup(m, rn, strlen(rn));
        /* the statement's new text, before any insertion moves it */
        const ptx_operand *op = &s->ops[x->op];
        uint32_t sb = m->toks[s->tok_begin].off, se = m->toks[s->tok_end - 1].off + m->toks[s->tok_end - 1].len;
        uint32_t ob = m->toks[op->tok_begin].off, oe = m->toks[op->tok_end - 1].off + m->toks[op->tok_end - 1].len;
        const char *text = ptx_fmt(m, "%.*s[%%tl2a_r]%.*s", (int)(ob - sb), m->src + sb, (int)(se - oe), m->src + oe);
        uint32_t at = x->stmt;
        if (x->disp) {
            at = x->stmt;
            ptx_stmt_insert(f, at++, PTX_ST_INSTR, ptx_fmt(m, "%sadd.s64 \t%%tl2a_a, %s, %lld;", guard, a, x->disp));
            a = "%tl2a_a";
        }
        const char *p = ptx_fmt(m, "%%tl2a_%s%d", x->kind ? "pg" : "p", x->owner);
        at = emit(k, at, guard, tidal_l2addr_access, tidal_l2addr_naccess, (unsigned)x->owner, a, p);
        ptx_stmt_set_text(f, at, text);
    }
    /* the declarations and each parameter's prologue, before the first instruction */
    /* before the first label, instruction or scope: the entry's one way in, at depth 0,
     * after the declarations */
    uint32_t at = 0;
    while (at < f->nstmts && f->stmts[at].kind != PTX_ST_INSTR && f->stmts[at].kind != PTX_ST_LABEL &&
           f->stmts[at].kind != PTX_ST_SCOPE_BEGIN)
        at++;
    unsigned nregs = 0;
    char cls[3] = {'d', 'w', 'p'};
    const char *type[3] = {".b64", ".b32", ".pred"};
    for (int ci = 0; ci < 3; ci++) {
        char *list = NULL;
        for (int r = 0; r < L2A_NREGS; r++) {
            if (reg_info[r].cls != cls[ci]) continue;
            for (unsigned c = 0; c < k->nch; c++) {
                if (!used[c]) continue;
                const char *n = r == L2A_P ? ptx_fmt(m, "%%tl2a_p%u, %%tl2a_pg%u", c, c) : reg_name(k, r, c, "", "");
                if (r == L2A_A) n = "%tl2a_a";
                list = list ? ptx_fmt(m, "%s, %s", list, n) : ptx_fmt(m, "%s", n);
                nregs += r == L2A_P ? 2 : 1;
                if (!reg_info[r].per_param) break; /* the temporaries once */
            }
        }
        if (list) ptx_stmt_insert(f, at++, PTX_ST_REG, ptx_fmt(m, ".reg %s \t%s;", type[ci], list));
    }
    for (unsigned c = 0; c < k->nch; c++) {
        if (!used[c]) continue;
        char pn[256];
        ptx_tok_str(m, f->params[k->ch[c].param].name_tok, pn, sizeof pn);
        const char *sym = symbol(k, c);
        const char *l[] = {
            ptx_fmt(m, "ld.param.u64 \t%%tl2a_p%u, [%s];", c, pn),
            ptx_fmt(m, "cvta.to.global.u64 \t%%tl2a_pg%u, %%tl2a_p%u;", c, c),
            ptx_fmt(m, "mov.u64 \t%%tl2a_slot%u, %s;", c, sym),
            ptx_fmt(m, "ld.global.u64 \t%%tl2a_base%u, [%s+%zu];", c, sym, offsetof(tidal_l2addr_slot, l2.base)),
            ptx_fmt(m, "ld.global.u64 \t%%tl2a_flips%u, [%s+%zu];", c, sym, offsetof(tidal_l2addr_slot, l2.flips)),
            ptx_fmt(m, "ld.global.u8 \t%%tl2a_low%u, [%s+%zu];", c, sym, offsetof(tidal_l2addr_slot, l2.low)),
            ptx_fmt(m, "ld.global.u8 \t%%tl2a_pmask%u, [%s+%zu];", c, sym, offsetof(tidal_l2addr_slot, l2.pmask)),
            ptx_fmt(m, "ld.global.u32 \t%%tl2a_side%u, [%s+%zu];", c, sym, offsetof(tidal_l2addr_slot, side)),
        };
        for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) ptx_stmt_insert(f, at++, PTX_ST_INSTR, l[i]);
        at = emit(k, at, "", tidal_l2addr_prologue, tidal_l2addr_nprologue, c, "", "");
        /* the word, before the kernel */
        uint32_t it = 0;
        while (it < m->nitems && m->items[it].func != f) it++;
        ptx_item_insert(m, it, PTX_ITEM_VAR,
                        ptx_fmt(m, ".visible .global .align 8 .b8 %s[%zu];", sym, sizeof(tidal_l2addr_slot)));
    }
    return nregs;
}

/* ------------------------------------------------------------ the pass */

static bool name_taken(kctx *k)
{
    const ptx_module *m = k->m;
    for (uint32_t i = 0; i < k->f->nstmts; i++) {
        const ptx_stmt *s = &k->f->stmts[i];
        if (s->text && strstr(s->text, "%tl2a_")) return true;
        if (s->synthesized) continue;
        for (uint32_t t = s->tok_begin; t < s->tok_end; t++)
            if (m->toks[t].kind == PTX_TK_IDENT && (tok_starts(m, t, "%tl2a_") || tok_starts(m, t, "__tidal_l2addr_")))
                return true;
    }
    return false;
}

/* The tidal pass's marker: in this process (an item it inserted) or in the input. */
static bool module_rewritten(const ptx_module *m)
{
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (it->text ? strstr(it->text, TIDAL_MARKER_SYMBOL) != NULL
                     : it->kind == PTX_ITEM_VAR && ptx_tok_is(m, it->name_tok, TIDAL_MARKER_SYMBOL))
            return true;
    }
    return false;
}

static void run_kernel(ptx_module *m, ptx_func *f, chosen *ch, unsigned nch)
{
    kctx k = {.m = m, .f = f, .ch = ch, .nch = nch, .reason = L2A_OK, .culprit = -1};
    unsigned line = m->toks[f->name_tok].line;
    for (unsigned c = 0; c < nch; c++) ch[c].item->line = line;
    if (!f->has_body) {
        refuse(&k, -1, L2A_REFUSE_NO_BODY, line, "the .entry has no body%s%s", "", "");
    } else if (m->address_size != 64) {
        refuse(&k, -1, L2A_REFUSE_ADDRESS_SIZE, line, ".address_size %s%s", m->address_size == 32 ? "32" : "?", "");
    } else if (module_rewritten(m)) {
        refuse(&k, -1, L2A_REFUSE_NAME_COLLISION, line,
               "the tidal pass rewrote the module: run l2addr before it, so its clones carry the translation%s%s", "",
               "");
    } else if (f->modified) {
        refuse(&k, -1, L2A_REFUSE_NAME_COLLISION, line,
               "an earlier pass of this run changed the kernel (run l2addr before it)%s%s", "", "");
    } else if (name_taken(&k)) {
        refuse(&k, -1, L2A_REFUSE_NAME_COLLISION, line, "%%tl2a_ or __tidal_l2addr_ names in the kernel%s%s", "", "");
    }
    for (unsigned c = 0; c < nch && k.reason == L2A_OK; c++) {
        const ptx_param *p = &f->params[ch[c].param];
        if (strcmp(p->space, ".param") || !ptx_tok_is(m, p->type_tok, ".u64") || p->array_len)
            refuse(&k, (int)c, L2A_REFUSE_PARAM_TYPE, m->toks[p->name_tok].line, "'%s' is not a .param .u64 scalar%s",
                   ch[c].item->param_name, "");
    }
    access *acc = NULL;
    unsigned nacc = 0;
    if (k.reason == L2A_OK) {
        uint32_t cap = 64;
        while (cap < 2u * (f->tok_end - f->tok_begin) + 2) cap <<= 1;
        k.regs.cap = cap;
        k.regs.v = calloc(cap, sizeof *k.regs.v);
        acc = calloc(f->nstmts + 1, sizeof *acc);
        if (!k.regs.v || !acc) ptx_ice("out of memory");
        propagate(&k);
        nacc = check(&k, acc);
    }
    if (k.reason == L2A_OK) {
        unsigned nregs = nacc ? rewrite(&k, acc, nacc) : 0;
        for (unsigned c = 0; c < nch; c++) {
            ch[c].item->reason = L2A_OK;
            ch[c].item->regs_added = nregs;
            for (unsigned i = 0; i < nacc; i++) ch[c].item->accesses += acc[i].owner == (int)c;
        }
    } else {
        for (unsigned c = 0; c < nch; c++) {
            bool mine = k.culprit < 0 || k.culprit == (int)c;
            ch[c].item->reason = mine ? k.reason : L2A_REFUSE_SIBLING;
            ch[c].item->detail = mine ? k.detail
                                      : ptx_fmt(m, "%s:%s: %s", ch[c].item->kernel, ch[k.culprit].item->param_name,
                                                tidal_l2addr_refusals[k.reason].name);
        }
    }
    free(k.regs.v);
    free(acc);
}

int tidal_l2addr_run(ptx_module *m, tidal_l2addr_item *items, unsigned n, ptx_diag *diag)
{
    chosen *ch = calloc(n + 1, sizeof *ch);
    if (!ch) ptx_ice("out of memory");
    /* resolve every item first: a user error leaves the module unchanged */
    for (unsigned i = 0; i < n; i++) {
        tidal_l2addr_item *it = &items[i];
        ptx_func *f = ptx_func_find(m, it->kernel);
        if (!f || !f->is_entry) {
            char list[1024] = "";
            for (uint32_t j = 0; j < ptx_func_count(m); j++) {
                ptx_func *g = ptx_func_at(m, j);
                if (!g->is_entry || strlen(list) + strlen(ptx_func_name(g)) + 3 >= sizeof list) continue;
                if (list[0]) strcat(list, ", ");
                strcat(list, ptx_func_name(g));
            }
            ptx_diag_error(diag, 0, 0, "--l2addr: no kernel '%s' in the module (kernels: %s)", it->kernel,
                           list[0] ? list : "none");
            free(ch);
            return -1;
        }
        uint32_t pi = UINT32_MAX;
        char *end;
        unsigned long idx = strtoul(it->param, &end, 10);
        if (it->param[0] >= '0' && it->param[0] <= '9' && !*end && idx < f->nparams) pi = (uint32_t)idx;
        for (uint32_t p = 0; p < f->nparams && pi == UINT32_MAX; p++) {
            const ptx_param *pp = &f->params[p];
            if (m->toks[pp->name_tok].len == strlen(it->param) &&
                !memcmp(ptx_tok_text(m, pp->name_tok), it->param, strlen(it->param)))
                pi = p;
        }
        if (pi == UINT32_MAX) {
            ptx_diag_error(diag, m->toks[f->name_tok].line, m->toks[f->name_tok].col,
                           "--l2addr: kernel '%s' has no parameter '%s' (%u parameters: a name or an index 0-%u)",
                           it->kernel, it->param, f->nparams, f->nparams ? f->nparams - 1 : 0);
            free(ch);
            return -1;
        }
        char pn[256];
        ptx_tok_str(m, f->params[pi].name_tok, pn, sizeof pn);
        it->param_name = ptx_strdup(m, pn, strlen(pn));
        it->param_index = pi;
        it->reason = L2A_OK;
        it->accesses = it->regs_added = 0;
        it->detail = "";
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(items[j].kernel, it->kernel) && items[j].param_index == pi) {
                ptx_diag_error(diag, 0, 0, "--l2addr: %s:%s given twice", it->kernel, pn);
                free(ch);
                return -1;
            }
    }
    /* per kernel, in the order first named */
    for (unsigned i = 0; i < n; i++) {
        bool seen = false;
        for (unsigned j = 0; j < i; j++) seen = seen || !strcmp(items[j].kernel, items[i].kernel);
        if (seen) continue;
        ptx_func *f = ptx_func_find(m, items[i].kernel);
        unsigned nch = 0;
        for (unsigned j = i; j < n && nch < 64; j++)
            if (!strcmp(items[j].kernel, items[i].kernel)) ch[nch++] = (chosen){&items[j], items[j].param_index, false};
        run_kernel(m, f, ch, nch);
    }
    free(ch);
    return 0;
}
