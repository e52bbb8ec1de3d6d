/* ptx_module.c — queries and edits on the module IR. */
#include "ptx_internal.h"

#include <string.h>

uint32_t ptx_func_count(const ptx_module *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nitems; i++) n += m->items[i].kind == PTX_ITEM_FUNC && m->items[i].func;
    return n;
}

ptx_func *ptx_func_at(const ptx_module *m, uint32_t k)
{
    for (uint32_t i = 0; i < m->nitems; i++)
        if (m->items[i].kind == PTX_ITEM_FUNC && m->items[i].func && k-- == 0) return m->items[i].func;
    return NULL;
}

ptx_func *ptx_func_find(const ptx_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->nitems; i++) {
        ptx_func *f = m->items[i].func;
        if (m->items[i].kind == PTX_ITEM_FUNC && f && ptx_tok_is(m, f->name_tok, name)) return f;
    }
    return NULL;
}

const char *ptx_func_name(const ptx_func *f)
{
    const ptx_token *t = &f->mod->toks[f->name_tok];
    return ptx_strdup(f->mod, f->mod->src + t->off, t->len);
}

bool ptx_stmt_opcode_is(const ptx_module *m, const ptx_stmt *s, const char *full)
{
    return s->kind == PTX_ST_INSTR && !s->synthesized && ptx_tok_is(m, s->opcode_tok, full);
}

bool ptx_stmt_opcode_root_is(const ptx_module *m, const ptx_stmt *s, const char *root)
{
    if (s->kind != PTX_ST_INSTR || s->synthesized) return false;
    const ptx_token *t = &m->toks[s->opcode_tok];
    size_t n = strlen(root);
    return t->len >= n && memcmp(m->src + t->off, root, n) == 0 && (t->len == n || m->src[t->off + n] == '.');
}

/* Opcode prefix match: `op` equals `p` or starts with `p` followed by '.'. */
static bool op_is(const char *op, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(op, p, n) == 0 && (len == n || op[n] == '.');
}

ptx_op_class ptx_classify_opcode(const char *op, size_t len)
{
    switch (op[0]) {
    case 'b':
        if (op_is(op, len, "bra")) return PTX_OP_BRA;
        if (op_is(op, len, "brx")) return PTX_OP_BRX;
        if (op_is(op, len, "bar.warp")) return PTX_OP_BAR_WARP;
        if (op_is(op, len, "barrier.cluster")) return PTX_OP_BAR_CLUSTER;
        if (op_is(op, len, "bar") || op_is(op, len, "barrier")) return PTX_OP_BARRIER;
        break;
    case 'r':
        if (op_is(op, len, "ret")) return PTX_OP_RET;
        break;
    case 'e':
        if (op_is(op, len, "exit")) return PTX_OP_EXIT;
        break;
    case 't':
        if (op_is(op, len, "trap")) return PTX_OP_TRAP;
        break;
    case 'c':
        if (op_is(op, len, "call")) return PTX_OP_CALL;
        break;
    default: break;
    }
    return PTX_OP_OTHER;
}

/* ------------------------------------------------------------ editing */

static void mark(ptx_func *f)
{
    f->modified = true;
    f->mod->modified = true;
}

void ptx_stmt_set_text(ptx_func *f, uint32_t i, const char *text)
{
    if (i >= f->nstmts) ptx_ice("ptx_stmt_set_text: statement %u out of range", i);
    size_t n = strlen(text);
    f->stmts[i].text = ptx_strdup(f->mod, text, n);
    f->stmts[i].text_len = (uint32_t)n;
    mark(f);
}

void ptx_stmt_remove(ptx_func *f, uint32_t i)
{
    if (i >= f->nstmts) ptx_ice("ptx_stmt_remove: statement %u out of range", i);
    f->stmts[i].removed = 1;
    mark(f);
}

uint32_t ptx_stmt_insert(ptx_func *f, uint32_t i, ptx_stmt_kind kind, const char *text)
{
    if (i > f->nstmts) ptx_ice("ptx_stmt_insert: index %u out of range", i);
    if (!f->has_body) ptx_ice("ptx_stmt_insert: a declaration has no body to insert into");
    if (ptx_grow((void **)&f->stmts, &f->cap_stmts, f->nstmts + 1, sizeof *f->stmts)) ptx_ice("out of memory");
    memmove(&f->stmts[i + 1], &f->stmts[i], sizeof *f->stmts * (f->nstmts - i));
    f->nstmts++;
    ptx_stmt *s = &f->stmts[i];
    memset(s, 0, sizeof *s);
    s->kind = (uint8_t)kind;
    s->guard_tok = -1;
    s->synthesized = 1;
    size_t n = strlen(text);
    s->text = ptx_strdup(f->mod, text, n);
    s->text_len = (uint32_t)n;
    if (kind == PTX_ST_INSTR) {
        const char *p = s->text;
        if (*p == '@') {
            while (*p && *p != ' ' && *p != '\t') p++;
            while (*p == ' ' || *p == '\t') p++;
        }
        size_t k = strcspn(p, " \t;");
        s->op_class = (uint8_t)ptx_classify_opcode(p, k);
    }
    mark(f);
    return i;
}

void ptx_func_set_header(ptx_func *f, const char *text)
{
    size_t n = strlen(text);
    f->header_text = ptx_strdup(f->mod, text, n);
    f->header_len = (uint32_t)n;
    mark(f);
}

void ptx_item_insert(ptx_module *m, uint32_t i, ptx_item_kind kind, const char *text)
{
    if (i > m->nitems) ptx_ice("ptx_item_insert: index %u out of range", i);
    if (ptx_grow((void **)&m->items, &m->cap_items, m->nitems + 1, sizeof *m->items)) ptx_ice("out of memory");
    memmove(&m->items[i + 1], &m->items[i], sizeof *m->items * (m->nitems - i));
    m->nitems++;
    size_t n = strlen(text);
    m->items[i] = (ptx_item){.kind = (uint8_t)kind, .text = ptx_strdup(m, text, n), .text_len = (uint32_t)n};
    m->modified = true;
}
