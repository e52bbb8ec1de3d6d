/* ptx_parse.c — recursive-descent parser from tokens to the module IR.
 *
 * The parser checks structure (items, declarations, statements, balanced
 * brackets) and classifies instructions; it does not check opcodes or operand
 * types — ptxas does that, and tidal must pass through instructions newer than
 * itself. Every node keeps its token range so the printer can reproduce bytes. */
#include "ptx_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct parser {
    ptx_module *m;
    ptx_diag *d;
    uint32_t p; /* current token */
    bool failed;
} parser;

static const ptx_token *tk(parser *ps, uint32_t i) { return &ps->m->toks[i]; }
static const ptx_token *cur(parser *ps) { return tk(ps, ps->p); }

static bool is_punct(parser *ps, uint32_t i, char c)
{
    return tk(ps, i)->kind == PTX_TK_PUNCT && tk(ps, i)->punct == (unsigned char)c;
}
static bool tok_eq(parser *ps, uint32_t i, const char *s) { return ptx_tok_is(ps->m, i, s); }
static bool at_eof(parser *ps) { return cur(ps)->kind == PTX_TK_EOF; }

static void describe(parser *ps, uint32_t i, char *buf, size_t size)
{
    const ptx_token *t = tk(ps, i);
    if (t->kind == PTX_TK_EOF) {
        snprintf(buf, size, "end of file");
        return;
    }
    size_t n = t->len > 40 ? 40 : t->len;
    snprintf(buf, size, "'%.*s'%s", (int)n, ps->m->src + t->off, t->len > 40 ? "..." : "");
}

static void error_at(parser *ps, uint32_t i, const char *what)
{
    if (ps->failed) return;
    char got[64];
    describe(ps, i, got, sizeof got);
    ptx_diag_error(ps->d, tk(ps, i)->line, tk(ps, i)->col, "%s, found %s", what, got);
    ps->failed = true;
}

static void *alloc(parser *ps, size_t n)
{
    void *p = ptx_arena_zalloc(ps->m->arena, n);
    if (!p && !ps->failed) {
        ptx_diag_error(ps->d, 0, 0, "out of memory");
        ps->failed = true;
    }
    return p;
}

/* Advances past a balanced run up to (and including) the `;` at depth 0.
 * Brackets must balance; `}` at depth 0 before `;` is an error. */
static bool skip_to_semicolon(parser *ps, const char *ctx)
{
    char stack[64];
    int depth = 0;
    uint32_t start = ps->p;
    for (;;) {
        const ptx_token *t = cur(ps);
        if (t->kind == PTX_TK_EOF) {
            char msg[96];
            snprintf(msg, sizeof msg, "expected ';' to end the %s", ctx);
            error_at(ps, ps->p, msg);
            (void)start;
            return false;
        }
        if (t->kind == PTX_TK_PUNCT) {
            char c = (char)t->punct;
            if (c == '(' || c == '[' || c == '{') {
                if (depth == (int)sizeof stack) {
                    error_at(ps, ps->p, "brackets nested too deeply");
                    return false;
                }
                stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0 || stack[depth - 1] != c) {
                    char msg[96];
                    if (depth)
                        snprintf(msg, sizeof msg, "expected '%c' in the %s", stack[depth - 1], ctx);
                    else if (c == '}') /* the end of the enclosing block: the ';' is missing */
                        snprintf(msg, sizeof msg, "expected ';' to end the %s", ctx);
                    else
                        snprintf(msg, sizeof msg, "unbalanced '%c' in the %s", c, ctx);
                    error_at(ps, ps->p, msg);
                    return false;
                }
                depth--;
            } else if (c == ';' && depth == 0) {
                ps->p++;
                return true;
            } else if (c == ';') {
                char msg[96];
                snprintf(msg, sizeof msg, "expected '%c' before ';' in the %s", stack[depth - 1], ctx);
                error_at(ps, ps->p, msg);
                return false;
            }
        } else if (t->kind == PTX_TK_DIRECTIVE && depth == 0 && ps->p != start &&
                   (tok_eq(ps, ps->p, ".entry") || tok_eq(ps, ps->p, ".func"))) {
            char msg[96];
            snprintf(msg, sizeof msg, "expected ';' to end the %s", ctx);
            error_at(ps, ps->p, msg);
            return false;
        }
        ps->p++;
    }
}

static bool take_int(parser *ps)
{
    if (cur(ps)->kind != PTX_TK_INT) return false;
    ps->p++;
    return true;
}

/* `.file INDEX "NAME"[, TIMESTAMP, SIZE]` and `.loc FILE LINE COLUMN[, function_name
 * LABEL[+N], inlined_at FILE LINE COLUMN]`, the directive token at ps->p. They take no
 * ';' and end where their grammar ends, not at the end of the line: PTX is free-form, so
 * another directive or an instruction may follow on the same line (ptxas accepts it). */
static bool parse_loc_or_file(parser *ps)
{
    uint32_t first = ps->p++;
    if (tok_eq(ps, first, ".file")) {
        bool ok = take_int(ps) && cur(ps)->kind == PTX_TK_STRING;
        if (ok) ps->p++;
        if (ok && is_punct(ps, ps->p, ',')) {
            ps->p++;
            ok = take_int(ps) && is_punct(ps, ps->p, ',');
            if (ok) ps->p++;
            ok = ok && take_int(ps);
        }
        if (!ok) error_at(ps, ps->p, "expected '.file INDEX \"NAME\"[, TIMESTAMP, SIZE]'");
        return ok;
    }
    bool ok = take_int(ps) && take_int(ps) && take_int(ps);
    if (ok && is_punct(ps, ps->p, ',')) {
        ps->p++;
        ok = tok_eq(ps, ps->p, "function_name") && tk(ps, ps->p + 1)->kind == PTX_TK_IDENT;
        if (ok) ps->p += 2;
        if (ok && is_punct(ps, ps->p, '+')) {
            ps->p++;
            ok = take_int(ps);
        }
        ok = ok && is_punct(ps, ps->p, ',') && tok_eq(ps, ps->p + 1, "inlined_at");
        if (ok) ps->p += 2;
        ok = ok && take_int(ps) && take_int(ps) && take_int(ps);
    }
    if (!ok)
        error_at(ps, ps->p, "expected '.loc FILE LINE COLUMN[, function_name LABEL, inlined_at FILE LINE COLUMN]'");
    return ok;
}

static bool parse_uint(parser *ps, uint32_t i, uint64_t *out)
{
    const ptx_token *t = tk(ps, i);
    if (t->kind != PTX_TK_INT) return false;
    const char *s = ps->m->src + t->off;
    uint64_t v = 0;
    size_t k = 0, n = t->len;
    if (n && (s[n - 1] == 'U' || s[n - 1] == 'u')) n--;
    unsigned base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, k = 2;
    else if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, k = 2;
    else if (n > 1 && s[0] == '0')
        base = 8, k = 1;
    for (; k < n; k++) {
        unsigned c = (unsigned char)s[k], dgt;
        if (c >= '0' && c <= '9')
            dgt = c - '0';
        else if (c >= 'a' && c <= 'f')
            dgt = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            dgt = c - 'A' + 10;
        else
            return false;
        if (dgt >= base || v > (UINT64_MAX - dgt) / base) return false;
        v = v * base + dgt;
    }
    *out = v;
    return true;
}

static bool add_item(parser *ps, ptx_item_kind kind, uint32_t b, uint32_t e, uint32_t name)
{
    ptx_module *m = ps->m;
    if (ptx_grow((void **)&m->items, &m->cap_items, m->nitems + 1, sizeof *m->items)) {
        ptx_diag_error(ps->d, 0, 0, "out of memory");
        ps->failed = true;
        return false;
    }
    m->items[m->nitems++] = (ptx_item){.kind = (uint8_t)kind, .tok_begin = b, .tok_end = e, .name_tok = name};
    return true;
}

/* ------------------------------------------------------------ declarations */

static bool is_state_space(parser *ps, uint32_t i)
{
    static const char *const spaces[] = {".global", ".const", ".shared", ".local", ".param", ".tex", NULL};
    for (int k = 0; spaces[k]; k++)
        if (tok_eq(ps, i, spaces[k])) return true;
    return false;
}

static bool is_type_directive(parser *ps, uint32_t i)
{
    const ptx_token *t = tk(ps, i);
    if (t->kind != PTX_TK_DIRECTIVE || t->len < 2) return false;
    const char *s = ps->m->src + t->off + 1;
    size_t n = t->len - 1;
    static const char *const types[] = {"b8",         "b16",     "b32",    "b64",  "b128", "u8",   "u16",
                                        "u32",        "u64",     "s8",     "s16",  "s32",  "s64",  "f16",
                                        "f16x2",      "bf16",    "bf16x2", "f32",  "f64",  "pred", "texref",
                                        "samplerref", "surfref", "e4m3",   "e5m2", "tf32", NULL};
    for (int k = 0; types[k]; k++)
        if (strlen(types[k]) == n && memcmp(types[k], s, n) == 0) return true;
    return false;
}

/* Parses one parameter declaration in [b, e). */
static bool parse_param(parser *ps, uint32_t b, uint32_t e, ptx_param *out)
{
    memset(out, 0, sizeof *out);
    out->tok_begin = b;
    out->tok_end = e;
    out->name_tok = UINT32_MAX;
    out->type_tok = UINT32_MAX;
    if (b == e) {
        error_at(ps, b, "expected a parameter declaration");
        return false;
    }
    if (!tok_eq(ps, b, ".param") && !tok_eq(ps, b, ".reg")) {
        error_at(ps, b, "expected '.param' or '.reg' to start a parameter");
        return false;
    }
    out->space = tok_eq(ps, b, ".param") ? ".param" : ".reg";
    bool after_ptr = false;
    for (uint32_t i = b + 1; i < e; i++) {
        const ptx_token *t = tk(ps, i);
        if (t->kind == PTX_TK_DIRECTIVE) {
            if (tok_eq(ps, i, ".ptr"))
                after_ptr = true, out->is_ptr = true;
            else if (tok_eq(ps, i, ".align")) {
                uint64_t a;
                if (i + 1 >= e || !parse_uint(ps, i + 1, &a) || a == 0 || (a & (a - 1))) {
                    error_at(ps, i + 1, "expected a power-of-two alignment after '.align'");
                    return false;
                }
                if (!after_ptr) out->align = (uint32_t)a;
                i++;
            } else if (is_type_directive(ps, i) && out->type_tok == UINT32_MAX) {
                out->type_tok = i;
            }
        } else if (t->kind == PTX_TK_IDENT) {
            if (out->name_tok != UINT32_MAX) {
                error_at(ps, i, "expected ',' or ')' after the parameter name");
                return false;
            }
            out->name_tok = i;
        } else if (is_punct(ps, i, '[')) {
            if (out->name_tok == UINT32_MAX) {
                error_at(ps, i, "expected a parameter name before '['");
                return false;
            }
            uint64_t k = 0;
            if (i + 2 < e + 1 && parse_uint(ps, i + 1, &k) && is_punct(ps, i + 2, ']')) {
                out->array_len = out->array_len ? out->array_len * k : k;
                i += 2;
            } else if (is_punct(ps, i + 1, ']')) {
                i += 1; /* unsized */
            } else {
                error_at(ps, i + 1, "expected an array size");
                return false;
            }
        } else if (is_punct(ps, i, '<')) {
            /* .reg .b32 %r<4> style parameter vectors do not exist; be strict. */
            error_at(ps, i, "unexpected '<' in a parameter declaration");
            return false;
        } else {
            error_at(ps, i, "unexpected token in a parameter declaration");
            return false;
        }
    }
    if (out->type_tok == UINT32_MAX) {
        error_at(ps, e, "expected a type in the parameter declaration");
        return false;
    }
    if (out->name_tok == UINT32_MAX) {
        /* Prototypes (.callprototype) may omit names, written as `_`. */
        error_at(ps, e, "expected a parameter name");
        return false;
    }
    return true;
}

/* '(' decl {, decl} ')' ; returns the parameters in *out. */
static bool parse_param_list(parser *ps, ptx_param **out, uint32_t *count)
{
    if (!is_punct(ps, ps->p, '(')) {
        error_at(ps, ps->p, "expected '('");
        return false;
    }
    ps->p++;
    uint32_t cap = 0, n = 0;
    ptx_param *v = NULL;
    if (is_punct(ps, ps->p, ')')) {
        ps->p++;
        *out = NULL;
        *count = 0;
        return true;
    }
    for (;;) {
        uint32_t b = ps->p;
        int depth = 0;
        while (!at_eof(ps)) {
            if (is_punct(ps, ps->p, '['))
                depth++;
            else if (is_punct(ps, ps->p, ']'))
                depth--;
            else if (depth == 0 && (is_punct(ps, ps->p, ',') || is_punct(ps, ps->p, ')')))
                break;
            else if (is_punct(ps, ps->p, '{') || is_punct(ps, ps->p, '}') || is_punct(ps, ps->p, ';'))
                break;
            ps->p++;
        }
        if (!is_punct(ps, ps->p, ',') && !is_punct(ps, ps->p, ')')) {
            error_at(ps, ps->p, "expected ',' or ')' in the parameter list");
            free(v);
            return false;
        }
        if (ptx_grow((void **)&v, &cap, n + 1, sizeof *v)) {
            free(v);
            ptx_diag_error(ps->d, 0, 0, "out of memory");
            ps->failed = true;
            return false;
        }
        if (!parse_param(ps, b, ps->p, &v[n])) {
            free(v);
            return false;
        }
        n++;
        if (is_punct(ps, ps->p++, ')')) break;
    }
    ptx_param *a = alloc(ps, sizeof *a * n);
    if (!a) {
        free(v);
        return false;
    }
    memcpy(a, v, sizeof *a * n);
    free(v);
    *out = a;
    *count = n;
    return true;
}

static bool is_perf_directive(parser *ps, uint32_t i)
{
    static const char *const perf[] = {".maxntid",  ".reqntid",           ".minnctapersm",      ".maxnctapersm",
                                       ".maxnreg",  ".maxclusterrank",    ".reqnctapercluster", ".explicitcluster",
                                       ".noreturn", ".blocksareclusters", ".abi_preserve",      ".abi_preserve_control",
                                       NULL};
    for (int k = 0; perf[k]; k++)
        if (tok_eq(ps, i, perf[k])) return true;
    return false;
}

/* ------------------------------------------------------------ statements */

static ptx_stmt *new_stmt(parser *ps, ptx_func *f)
{
    if (ptx_grow((void **)&f->stmts, &f->cap_stmts, f->nstmts + 1, sizeof *f->stmts)) {
        ptx_diag_error(ps->d, 0, 0, "out of memory");
        ps->failed = true;
        return NULL;
    }
    ptx_stmt *s = &f->stmts[f->nstmts++];
    memset(s, 0, sizeof *s);
    s->guard_tok = -1;
    return s;
}

/* True for a token that can end an operand (a value or a closing bracket). */
static bool ends_operand(parser *ps, uint32_t i)
{
    const ptx_token *t = tk(ps, i);
    if (t->kind == PTX_TK_PUNCT) return t->punct == ')' || t->punct == ']' || t->punct == '}';
    return t->kind == PTX_TK_IDENT || t->kind == PTX_TK_INT || t->kind == PTX_TK_FLOAT || t->kind == PTX_TK_STRING;
}

/* The instruction before the current token lacks its ';': reports it where the
 * ';' belongs, right after the previous token. */
static void missing_semicolon(parser *ps)
{
    if (ps->failed) return;
    const ptx_token *prev = tk(ps, ps->p - 1);
    char got[64];
    describe(ps, ps->p, got, sizeof got);
    ptx_diag_error(ps->d, prev->line, prev->col + prev->len, "expected ';' to end the instruction before %s", got);
    ps->failed = true;
}

static bool parse_instruction(parser *ps, ptx_func *f, uint16_t depth)
{
    uint32_t b = ps->p;
    int32_t guard = -1;
    bool neg = false;
    if (is_punct(ps, ps->p, '@')) {
        ps->p++;
        if (is_punct(ps, ps->p, '!')) neg = true, ps->p++;
        if (cur(ps)->kind != PTX_TK_IDENT) {
            error_at(ps, ps->p, "expected a predicate register after '@'");
            return false;
        }
        guard = (int32_t)ps->p++;
    }
    if (cur(ps)->kind != PTX_TK_IDENT) {
        error_at(ps, ps->p, "expected an instruction");
        return false;
    }
    uint32_t opc = ps->p++;
    /* Operands: comma-separated at bracket depth 0. */
    ptx_operand ops[64];
    uint32_t nops = 0;
    char stack[64];
    int sd = 0;
    uint32_t ob = ps->p;
    for (;;) {
        const ptx_token *t = cur(ps);
        if (t->kind == PTX_TK_EOF) {
            error_at(ps, ps->p, "expected ';' to end the instruction");
            return false;
        }
        if (t->kind == PTX_TK_DIRECTIVE && sd == 0 && tk(ps, ps->p)->line != tk(ps, opc)->line &&
            (tok_eq(ps, ps->p, ".reg") || tok_eq(ps, ps->p, ".loc") || tok_eq(ps, ps->p, ".entry") ||
             tok_eq(ps, ps->p, ".func"))) {
            missing_semicolon(ps);
            return false;
        }
        /* A new line that starts like a statement (`ret`, `@%p1`, `L:`) right
         * after a complete operand: the ';' is missing. Operands never sit side by
         * side without a ',' or an operator between them. */
        if (sd == 0 && ps->p > opc + 1 && t->line != tk(ps, ps->p - 1)->line &&
            (t->kind == PTX_TK_IDENT || (t->kind == PTX_TK_PUNCT && t->punct == '@')) && ends_operand(ps, ps->p - 1)) {
            missing_semicolon(ps);
            return false;
        }
        if (t->kind == PTX_TK_PUNCT) {
            char c = (char)t->punct;
            if (c == '(' || c == '[' || c == '{') {
                if (sd == (int)sizeof stack) {
                    error_at(ps, ps->p, "operand brackets nested too deeply");
                    return false;
                }
                stack[sd++] = c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (c == ')' || c == ']' || c == '}') {
                if (sd == 0 || stack[sd - 1] != c) {
                    if (sd) {
                        char msg[64];
                        snprintf(msg, sizeof msg, "expected '%c' in the operand", stack[sd - 1]);
                        error_at(ps, ps->p, msg);
                    } else if (c == '}') {
                        error_at(ps, ps->p, "expected ';' to end the instruction");
                    } else {
                        error_at(ps, ps->p, "unbalanced bracket in the operands");
                    }
                    return false;
                }
                sd--;
            } else if ((c == ',' || c == ';') && sd == 0) {
                if (ps->p == ob) {
                    if (c == ';' && nops == 0) {
                        ps->p++;
                        break;
                    }
                    error_at(ps, ps->p, "expected an operand");
                    return false;
                }
                if (nops == sizeof ops / sizeof ops[0]) {
                    error_at(ps, ps->p, "too many operands");
                    return false;
                }
                ops[nops++] = (ptx_operand){ob, ps->p};
                ps->p++;
                ob = ps->p;
                if (c == ';') break;
                continue;
            } else if (c == ';') {
                char msg[64];
                snprintf(msg, sizeof msg, "expected '%c' before ';'", stack[sd - 1]);
                error_at(ps, ps->p, msg);
                return false;
            }
        }
        ps->p++;
    }
    ptx_stmt *s = new_stmt(ps, f);
    if (!s) return false;
    s->kind = PTX_ST_INSTR;
    s->depth = depth;
    s->guard_tok = guard;
    s->guard_neg = neg;
    s->opcode_tok = opc;
    s->tok_begin = b;
    s->tok_end = ps->p;
    s->nops = (uint16_t)nops;
    if (nops) {
        s->ops = alloc(ps, sizeof *s->ops * nops);
        if (!s->ops) return false;
        memcpy(s->ops, ops, sizeof *s->ops * nops);
    }
    s->op_class = (uint8_t)ptx_classify_opcode(ps->m->src + tk(ps, opc)->off, tk(ps, opc)->len);
    return true;
}

static bool simple_stmt(parser *ps, ptx_func *f, ptx_stmt_kind kind, uint32_t b, uint16_t depth)
{
    ptx_stmt *s = new_stmt(ps, f);
    if (!s) return false;
    s->kind = (uint8_t)kind;
    s->depth = depth;
    s->opcode_tok = b;
    s->tok_begin = b;
    s->tok_end = ps->p;
    return true;
}

static bool parse_body(parser *ps, ptx_func *f)
{
    uint16_t depth = 0;
    uint32_t open[256];
    open[0] = f->body_open_tok;
    for (;;) {
        uint32_t b = ps->p;
        const ptx_token *t = cur(ps);
        if (t->kind == PTX_TK_EOF) {
            char msg[96];
            snprintf(msg, sizeof msg, "expected '}' to close the block opened at line %u", tk(ps, open[depth])->line);
            error_at(ps, ps->p, msg);
            return false;
        }
        if (t->kind == PTX_TK_PUNCT && t->punct == '}') {
            if (depth == 0) {
                f->body_close_tok = ps->p++;
                return true;
            }
            ps->p++;
            depth--;
            if (!simple_stmt(ps, f, PTX_ST_SCOPE_END, b, depth)) return false;
            continue;
        }
        if (t->kind == PTX_TK_PUNCT && t->punct == '{') {
            if (depth + 1 >= (int)(sizeof open / sizeof open[0])) {
                error_at(ps, ps->p, "blocks nested too deeply");
                return false;
            }
            ps->p++;
            if (!simple_stmt(ps, f, PTX_ST_SCOPE_BEGIN, b, depth)) return false;
            open[++depth] = b;
            continue;
        }
        if (t->kind == PTX_TK_DIRECTIVE) {
            if (tok_eq(ps, b, ".reg")) {
                if (!skip_to_semicolon(ps, "register declaration")) return false;
                if (!simple_stmt(ps, f, PTX_ST_REG, b, depth)) return false;
            } else if (is_state_space(ps, b) || tok_eq(ps, b, ".align")) {
                if (!skip_to_semicolon(ps, "variable declaration")) return false;
                if (!simple_stmt(ps, f, PTX_ST_VAR, b, depth)) return false;
            } else if (tok_eq(ps, b, ".pragma")) {
                if (!skip_to_semicolon(ps, ".pragma directive")) return false;
                if (!simple_stmt(ps, f, PTX_ST_DIRECTIVE, b, depth)) return false;
            } else if (tok_eq(ps, b, ".loc") || tok_eq(ps, b, ".file")) {
                if (!parse_loc_or_file(ps)) return false;
                if (!simple_stmt(ps, f, PTX_ST_DIRECTIVE, b, depth)) return false;
            } else {
                error_at(ps, b, "expected a statement");
                return false;
            }
            continue;
        }
        if (t->kind == PTX_TK_IDENT && is_punct(ps, b + 1, ':')) {
            if (tk(ps, b + 2)->kind == PTX_TK_DIRECTIVE &&
                (tok_eq(ps, b + 2, ".branchtargets") || tok_eq(ps, b + 2, ".calltargets") ||
                 tok_eq(ps, b + 2, ".callprototype"))) {
                ps->p += 2;
                if (!skip_to_semicolon(ps, "target list")) return false;
                if (!simple_stmt(ps, f, PTX_ST_TARGETS, b, depth)) return false;
            } else {
                ps->p += 2;
                if (!simple_stmt(ps, f, PTX_ST_LABEL, b, depth)) return false;
            }
            continue;
        }
        if (t->kind == PTX_TK_IDENT || (t->kind == PTX_TK_PUNCT && t->punct == '@')) {
            if (!parse_instruction(ps, f, depth)) return false;
            continue;
        }
        error_at(ps, b, "expected a statement");
        return false;
    }
}

/* ------------------------------------------------------------ module items */

static bool parse_function_into(parser *ps, ptx_func *f, uint32_t b, unsigned linkage);

static bool parse_function(parser *ps, uint32_t b, unsigned linkage)
{
    ptx_func *f = alloc(ps, sizeof *f);
    if (!f) return false;
    if (parse_function_into(ps, f, b, linkage)) return true;
    free(f->stmts); /* not yet owned by the module */
    return false;
}

static bool parse_function_into(parser *ps, ptx_func *f, uint32_t b, unsigned linkage)
{
    f->mod = ps->m;
    f->linkage = linkage;
    f->tok_begin = b;
    f->is_entry = tok_eq(ps, ps->p, ".entry");
    ps->p++;
    /* .func attributes, e.g. .attribute(.unified(...)) or .noreturn before the name */
    while (cur(ps)->kind == PTX_TK_DIRECTIVE) {
        if (tok_eq(ps, ps->p, ".attribute")) {
            ps->p++;
            if (!is_punct(ps, ps->p, '(')) {
                error_at(ps, ps->p, "expected '(' after '.attribute'");
                return false;
            }
            int depth = 0;
            do {
                if (is_punct(ps, ps->p, '('))
                    depth++;
                else if (is_punct(ps, ps->p, ')'))
                    depth--;
                else if (at_eof(ps) || is_punct(ps, ps->p, ';') || is_punct(ps, ps->p, '{')) {
                    error_at(ps, ps->p, "expected ')' to close '.attribute('");
                    return false;
                }
                ps->p++;
            } while (depth > 0);
        } else if (tok_eq(ps, ps->p, ".noreturn")) {
            ps->p++;
        } else {
            break;
        }
    }
    if (!f->is_entry && is_punct(ps, ps->p, '(')) {
        if (!parse_param_list(ps, &f->rets, &f->nrets)) return false;
    }
    if (cur(ps)->kind != PTX_TK_IDENT) {
        error_at(ps, ps->p,
                 f->is_entry ? "expected the kernel name after '.entry'" : "expected the function name after '.func'");
        return false;
    }
    f->name_tok = ps->p++;
    if (is_punct(ps, ps->p, '(')) {
        if (!parse_param_list(ps, &f->params, &f->nparams)) return false;
    }
    /* performance directives */
    ptx_perf perf[16];
    uint32_t np = 0;
    while (cur(ps)->kind == PTX_TK_DIRECTIVE) {
        uint32_t pb = ps->p;
        if (tok_eq(ps, pb, ".pragma")) {
            /* .pragma between the header and the body is legal */
            if (!skip_to_semicolon(ps, ".pragma directive")) return false;
            continue;
        }
        if (!is_perf_directive(ps, pb)) {
            error_at(ps, pb, "expected a performance directive, '{' or ';'");
            return false;
        }
        if (np == sizeof perf / sizeof perf[0]) {
            error_at(ps, pb, "too many performance directives");
            return false;
        }
        ptx_perf *pf = &perf[np++];
        memset(pf, 0, sizeof *pf);
        pf->name_tok = pb;
        ps->p++;
        while (cur(ps)->kind == PTX_TK_INT) {
            uint64_t v;
            if (pf->nvals == 3) {
                char msg[96];
                snprintf(msg, sizeof msg, "'%.*s' takes at most 3 values", (int)tk(ps, pb)->len,
                         ps->m->src + tk(ps, pb)->off);
                error_at(ps, ps->p, msg);
                return false;
            }
            if (!parse_uint(ps, ps->p, &v)) {
                error_at(ps, ps->p, "integer out of range");
                return false;
            }
            pf->vals[pf->nvals++] = v;
            ps->p++;
            if (!is_punct(ps, ps->p, ',')) break;
            ps->p++;
            if (cur(ps)->kind != PTX_TK_INT) {
                error_at(ps, ps->p, "expected an integer after ','");
                return false;
            }
        }
        pf->tok_begin = pb;
        pf->tok_end = ps->p;
    }
    if (np) {
        f->perf = alloc(ps, sizeof *f->perf * np);
        if (!f->perf) return false;
        memcpy(f->perf, perf, sizeof *f->perf * np);
        f->nperf = np;
    }
    if (is_punct(ps, ps->p, ';')) {
        ps->p++;
        f->has_body = false;
    } else if (is_punct(ps, ps->p, '{')) {
        f->has_body = true;
        f->body_open_tok = ps->p++;
        if (!parse_body(ps, f)) return false;
    } else {
        error_at(ps, ps->p, "expected '{' or ';' after the function header");
        return false;
    }
    f->tok_end = ps->p;
    if (!add_item(ps, PTX_ITEM_FUNC, b, ps->p, f->name_tok)) return false;
    /* from here on the module owns f->stmts */
    ps->m->items[ps->m->nitems - 1].func = f;
    return true;
}

static bool parse_variable(parser *ps, uint32_t b)
{
    uint32_t name = UINT32_MAX;
    uint32_t start = ps->p;
    if (!skip_to_semicolon(ps, "variable declaration")) return false;
    for (uint32_t i = start; i < ps->p; i++) {
        if (tk(ps, i)->kind == PTX_TK_IDENT) {
            name = i;
            break;
        }
        if (tk(ps, i)->kind == PTX_TK_PUNCT && tk(ps, i)->punct != '(' && tk(ps, i)->punct != ')') break;
    }
    if (name == UINT32_MAX) {
        ps->p = start;
        while (tk(ps, ps->p)->kind == PTX_TK_DIRECTIVE || tk(ps, ps->p)->kind == PTX_TK_INT) ps->p++;
        error_at(ps, ps->p, "expected a variable name");
        return false;
    }
    return add_item(ps, PTX_ITEM_VAR, b, ps->p, name);
}

static bool parse_module(parser *ps)
{
    ptx_module *m = ps->m;
    while (!at_eof(ps) && !ps->failed) {
        uint32_t b = ps->p;
        const ptx_token *t = cur(ps);
        if (t->kind != PTX_TK_DIRECTIVE) {
            error_at(ps, b, "expected a directive at module scope");
            return false;
        }
        if (tok_eq(ps, b, ".version")) {
            ps->p++;
            const ptx_token *v = cur(ps);
            if ((v->kind != PTX_TK_FLOAT && v->kind != PTX_TK_INT) || v->line != t->line) {
                error_at(ps, ps->p, "expected a version number such as 9.0 after '.version'");
                return false;
            }
            const char *s = m->src + v->off;
            unsigned maj = 0, min = 0;
            size_t k = 0;
            while (k < v->len && s[k] >= '0' && s[k] <= '9') maj = maj * 10 + (unsigned)(s[k++] - '0');
            if (k < v->len && s[k] == '.') {
                k++;
                while (k < v->len && s[k] >= '0' && s[k] <= '9') min = min * 10 + (unsigned)(s[k++] - '0');
            }
            if (k != v->len) {
                error_at(ps, ps->p, "malformed version number");
                return false;
            }
            m->version_major = maj;
            m->version_minor = min;
            ps->p++;
            /* PTX is free-form: the next directive may follow on this line (ptxas takes
             * `.version 8.0 .target sm_90a .address_size 64`), but nothing else may, and
             * nothing may stick to the number (8.0.1). ptxas does want the number on the
             * line of .version (checked above). */
            const ptx_token *n = cur(ps);
            if (!at_eof(ps) && n->line == t->line && (n->kind != PTX_TK_DIRECTIVE || n->off == v->off + v->len)) {
                error_at(ps, ps->p, "unexpected token after the version number");
                return false;
            }
            if (!add_item(ps, PTX_ITEM_VERSION, b, ps->p, b)) return false;
        } else if (tok_eq(ps, b, ".target")) {
            ps->p++;
            if (cur(ps)->kind != PTX_TK_IDENT) {
                error_at(ps, ps->p, "expected a target such as sm_90a after '.target'");
                return false;
            }
            if (!m->target[0]) ptx_tok_str(m, ps->p, m->target, sizeof m->target);
            ps->p++;
            /* the list ends at the first token that is not ', target' (another directive
             * may follow on the same line); a stray word on the line is a bad list */
            while (is_punct(ps, ps->p, ',') && tk(ps, ps->p + 1)->kind == PTX_TK_IDENT) ps->p += 2;
            if (!at_eof(ps) && cur(ps)->line == tk(ps, ps->p - 1)->line && cur(ps)->kind != PTX_TK_DIRECTIVE) {
                error_at(ps, ps->p, "expected ', target' in the .target list");
                return false;
            }
            if (!add_item(ps, PTX_ITEM_TARGET, b, ps->p, b)) return false;
        } else if (tok_eq(ps, b, ".address_size")) {
            ps->p++;
            uint64_t v;
            if (!parse_uint(ps, ps->p, &v) || (v != 32 && v != 64)) {
                error_at(ps, ps->p, "expected 32 or 64 after '.address_size'");
                return false;
            }
            m->address_size = (unsigned)v;
            ps->p++;
            if (!add_item(ps, PTX_ITEM_ADDRESS_SIZE, b, ps->p, b)) return false;
        } else if (tok_eq(ps, b, ".file") || tok_eq(ps, b, ".loc")) {
            if (!parse_loc_or_file(ps)) return false;
            if (!add_item(ps, tok_eq(ps, b, ".file") ? PTX_ITEM_FILE : PTX_ITEM_DIRECTIVE, b, ps->p, b)) return false;
        } else if (tok_eq(ps, b, ".section")) {
            ps->p++;
            if (cur(ps)->kind != PTX_TK_DIRECTIVE && cur(ps)->kind != PTX_TK_IDENT) {
                error_at(ps, ps->p, "expected a section name after '.section'");
                return false;
            }
            ps->p++;
            if (!is_punct(ps, ps->p, '{')) {
                error_at(ps, ps->p, "expected '{' after the section name");
                return false;
            }
            uint32_t open = ps->p++;
            int depth = 1;
            while (depth) {
                if (at_eof(ps)) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "expected '}' to close the section opened at line %u",
                             tk(ps, open)->line);
                    error_at(ps, ps->p, msg);
                    return false;
                }
                if (is_punct(ps, ps->p, '{'))
                    depth++;
                else if (is_punct(ps, ps->p, '}'))
                    depth--;
                ps->p++;
            }
            if (!add_item(ps, PTX_ITEM_SECTION, b, ps->p, b)) return false;
        } else if (tok_eq(ps, b, ".pragma") || tok_eq(ps, b, ".alias")) {
            if (!skip_to_semicolon(ps, "directive")) return false;
            if (!add_item(ps, PTX_ITEM_DIRECTIVE, b, ps->p, b)) return false;
        } else {
            unsigned linkage = 0;
            for (;;) {
                if (tok_eq(ps, ps->p, ".extern"))
                    linkage |= PTX_LINK_EXTERN;
                else if (tok_eq(ps, ps->p, ".visible"))
                    linkage |= PTX_LINK_VISIBLE;
                else if (tok_eq(ps, ps->p, ".weak"))
                    linkage |= PTX_LINK_WEAK;
                else if (tok_eq(ps, ps->p, ".common"))
                    linkage |= PTX_LINK_COMMON;
                else
                    break;
                ps->p++;
            }
            if (tok_eq(ps, ps->p, ".entry") || tok_eq(ps, ps->p, ".func")) {
                if (!parse_function(ps, b, linkage)) return false;
            } else if (is_state_space(ps, ps->p) || tok_eq(ps, ps->p, ".texref") || tok_eq(ps, ps->p, ".samplerref") ||
                       tok_eq(ps, ps->p, ".surfref")) {
                if (!parse_variable(ps, b)) return false;
            } else if (cur(ps)->kind == PTX_TK_DIRECTIVE) {
                char name[48];
                ptx_tok_str(m, ps->p, name, sizeof name);
                char msg[96];
                snprintf(msg, sizeof msg, "unknown directive '%s' at module scope", name);
                ptx_diag_error(ps->d, cur(ps)->line, cur(ps)->col, "%s", msg);
                ps->failed = true;
                return false;
            } else {
                error_at(ps, ps->p, "expected '.entry', '.func' or a variable declaration");
                return false;
            }
        }
    }
    return !ps->failed;
}

ptx_module *ptx_parse(const char *file, const char *src, size_t len, ptx_diag *diag)
{
    ptx_diag local;
    if (!diag) diag = &local;
    ptx_diag_init(diag, file);
    ptx_module *m = calloc(1, sizeof *m);
    if (!m) goto oom;
    m->arena = ptx_arena_new();
    if (!m->arena) goto oom;
    char *copy = ptx_arena_alloc(m->arena, len + 1);
    if (!copy) goto oom;
    memcpy(copy, src, len);
    copy[len] = 0;
    m->src = copy;
    m->len = len;
    m->file = ptx_strdup(m, file ? file : "<input>", strlen(file ? file : "<input>"));
    if (ptx_lex(m, diag)) {
        ptx_module_free(m);
        return NULL;
    }
    parser ps = {.m = m, .d = diag};
    if (!parse_module(&ps)) {
        ptx_module_free(m);
        return NULL;
    }
    return m;
oom:
    if (m) ptx_module_free(m);
    ptx_diag_error(diag, 0, 0, "out of memory");
    return NULL;
}

void ptx_module_free(ptx_module *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->nitems; i++)
        if (m->items[i].func) free(m->items[i].func->stmts);
    free(m->items);
    free(m->toks);
    ptx_arena_free(m->arena);
    free(m);
}
