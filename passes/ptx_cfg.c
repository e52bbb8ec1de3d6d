/* ptx_cfg.c — basic blocks and edges of a function body.
 *
 * Blocks start at labels and after control transfers; `call` ends a block so
 * that transforms can treat calls as block boundaries. Consecutive labels share
 * one block. Labels are scoped like ptxas scopes them: a label declared inside a
 * `{ }` block is visible in that block and the blocks nested in it, and may
 * shadow a label of the same name outside (inline asm often repeats one). */
#include "ptx_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct label_map {
    uint32_t *slots; /* statement index + 1, 0 = empty */
    uint32_t mask;
    const ptx_module *m;
    const ptx_func *f;
    uint32_t *scope;        /* per statement: id of its `{ }` scope (0 = the body) */
    uint32_t *scope_parent; /* per scope id: enclosing scope id */
} label_map;

static bool same_tok(const ptx_module *m, uint32_t a, uint32_t b)
{
    return m->toks[a].len == m->toks[b].len &&
           !memcmp(m->src + m->toks[a].off, m->src + m->toks[b].off, m->toks[a].len);
}

/* The slot of label `name_tok` declared in scope `scope`. */
static uint32_t *map_slot(label_map *lm, uint32_t name_tok, uint32_t scope)
{
    const ptx_token *t = &lm->m->toks[name_tok];
    for (uint32_t h = (ptx_hash_bytes(lm->m->src + t->off, t->len) ^ scope * 2654435761u) & lm->mask;;
         h = (h + 1) & lm->mask) {
        uint32_t v = lm->slots[h];
        if (!v || (lm->scope[v - 1] == scope && same_tok(lm->m, lm->f->stmts[v - 1].opcode_tok, name_tok)))
            return &lm->slots[h];
    }
}

/* Resolves `name_tok` used by statement `user`: its own scope, then the enclosing ones. */
static uint32_t map_get(label_map *lm, uint32_t name_tok, uint32_t user)
{
    for (uint32_t sc = lm->scope[user];; sc = lm->scope_parent[sc]) {
        uint32_t v = *map_slot(lm, name_tok, sc);
        if (v) return v - 1;
        if (sc == 0) return UINT32_MAX;
    }
}

static bool add_edge(ptx_cfg *c, uint32_t from, uint32_t to)
{
    ptx_block *b = &c->blocks[from];
    for (uint32_t i = 0; i < b->nsucc; i++)
        if (b->succ[i] == to) return true;
    uint32_t *n = realloc(b->succ, sizeof *n * (b->nsucc + 1));
    if (!n) return false;
    b->succ = n;
    b->succ[b->nsucc++] = to;
    return true;
}

static void cfg_error(ptx_diag *d, const ptx_module *m, uint32_t tok, const char *what)
{
    char name[64];
    ptx_tok_str(m, tok, name, sizeof name);
    ptx_diag_error(d, m->toks[tok].line, m->toks[tok].col, "%s '%s'", what, name);
}

ptx_cfg *ptx_cfg_build(const ptx_func *f, ptx_diag *diag)
{
    const ptx_module *m = f->mod;
    ptx_cfg *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->func = f;
    c->stmt_block = malloc(sizeof *c->stmt_block * (f->nstmts + 1));
    uint32_t cap = 0;
    label_map lm = {.m = m, .f = f};
    uint32_t nslots = 16;
    while (nslots < f->nstmts * 2 + 2) nslots *= 2;
    lm.slots = calloc(nslots, sizeof *lm.slots);
    lm.mask = nslots - 1;
    lm.scope = malloc(sizeof *lm.scope * (f->nstmts + 1));
    lm.scope_parent = malloc(sizeof *lm.scope_parent * (f->nstmts + 1));
    if (!c->stmt_block || !lm.slots || !lm.scope || !lm.scope_parent) goto oom;

    /* Pass 0: scopes. A `{` opens scope k (k = 1, 2, ...), its `}` belongs to it. */
    {
        uint32_t nscopes = 1, cur = 0;
        lm.scope_parent[0] = 0;
        for (uint32_t i = 0; i < f->nstmts; i++) {
            const ptx_stmt *s = &f->stmts[i];
            if (!s->removed && s->kind == PTX_ST_SCOPE_BEGIN) {
                lm.scope_parent[nscopes] = cur;
                cur = nscopes++;
            }
            lm.scope[i] = cur;
            if (!s->removed && s->kind == PTX_ST_SCOPE_END) cur = lm.scope_parent[cur];
        }
    }

    /* Pass 1: blocks. */
    uint32_t open = UINT32_MAX;
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        c->stmt_block[i] = UINT32_MAX;
        if (s->removed) continue;
        if (s->kind == PTX_ST_LABEL || s->kind == PTX_ST_TARGETS) {
            if (s->synthesized) ptx_ice("CFG of a function with synthesized labels is not supported");
            uint32_t *slot = map_slot(&lm, s->opcode_tok, lm.scope[i]);
            if (*slot) {
                cfg_error(diag, m, s->opcode_tok, "duplicate label");
                goto fail;
            }
            *slot = i + 1;
            if (s->kind == PTX_ST_TARGETS) continue;
        }
        if (s->kind != PTX_ST_LABEL && s->kind != PTX_ST_INSTR) continue;
        bool start = open == UINT32_MAX || (s->kind == PTX_ST_LABEL && c->blocks[open].ninstrs > 0);
        if (start) {
            if (ptx_grow((void **)&c->blocks, &cap, c->nblocks + 1, sizeof *c->blocks)) goto oom;
            open = c->nblocks++;
            memset(&c->blocks[open], 0, sizeof c->blocks[open]);
            c->blocks[open].first = i;
            c->blocks[open].label_stmt = UINT32_MAX;
        }
        ptx_block *b = &c->blocks[open];
        b->last = i;
        c->stmt_block[i] = open;
        if (s->kind == PTX_ST_LABEL) {
            if (b->label_stmt == UINT32_MAX) b->label_stmt = i;
            continue;
        }
        b->ninstrs++;
        switch (s->op_class) {
        case PTX_OP_BRA:
        case PTX_OP_BRX:
        case PTX_OP_RET:
        case PTX_OP_EXIT:
        case PTX_OP_TRAP:
        case PTX_OP_CALL: open = UINT32_MAX; break;
        default: break;
        }
    }

    /* Pass 2: edges. */
    for (uint32_t bi = 0; bi < c->nblocks; bi++) {
        ptx_block *b = &c->blocks[bi];
        const ptx_stmt *s = &f->stmts[b->last];
        bool guarded = s->kind == PTX_ST_INSTR && s->guard_tok >= 0;
        bool fall = true;
        uint32_t next = bi + 1 < c->nblocks ? bi + 1 : PTX_BB_EXIT_SUCC;
        if (s->kind == PTX_ST_INSTR) {
            switch (s->op_class) {
            case PTX_OP_BRA: {
                if (s->nops != 1 || s->ops[0].tok_end != s->ops[0].tok_begin + 1) {
                    ptx_diag_error(diag, m->toks[s->opcode_tok].line, m->toks[s->opcode_tok].col,
                                   "expected one label operand for 'bra'");
                    goto fail;
                }
                uint32_t lt = s->ops[0].tok_begin;
                uint32_t li = map_get(&lm, lt, b->last);
                if (li == UINT32_MAX || f->stmts[li].kind != PTX_ST_LABEL) {
                    cfg_error(diag, m, lt, "branch to unknown label");
                    goto fail;
                }
                if (!add_edge(c, bi, c->stmt_block[li])) goto oom;
                fall = guarded;
                break;
            }
            case PTX_OP_BRX: {
                if (s->nops < 2 || s->ops[1].tok_end != s->ops[1].tok_begin + 1) {
                    ptx_diag_error(diag, m->toks[s->opcode_tok].line, m->toks[s->opcode_tok].col,
                                   "expected 'brx.idx index, targets'");
                    goto fail;
                }
                uint32_t lt = s->ops[1].tok_begin;
                uint32_t ti = map_get(&lm, lt, b->last);
                if (ti == UINT32_MAX || f->stmts[ti].kind != PTX_ST_TARGETS ||
                    !ptx_tok_is(m, f->stmts[ti].opcode_tok + 2, ".branchtargets")) {
                    cfg_error(diag, m, lt, "brx.idx names unknown .branchtargets list");
                    goto fail;
                }
                const ptx_stmt *ts = &f->stmts[ti];
                for (uint32_t t = ts->opcode_tok + 3; t < ts->tok_end; t++) {
                    if (m->toks[t].kind != PTX_TK_IDENT) continue;
                    uint32_t li = map_get(&lm, t, ti);
                    if (li == UINT32_MAX || f->stmts[li].kind != PTX_ST_LABEL) {
                        cfg_error(diag, m, t, "branch target list names unknown label");
                        goto fail;
                    }
                    if (!add_edge(c, bi, c->stmt_block[li])) goto oom;
                }
                fall = guarded;
                break;
            }
            case PTX_OP_RET:
            case PTX_OP_EXIT:
                if (!add_edge(c, bi, PTX_BB_EXIT_SUCC)) goto oom;
                fall = guarded;
                break;
            case PTX_OP_TRAP: fall = guarded; break;
            default: break;
            }
        }
        if (fall && !add_edge(c, bi, next)) goto oom;
    }

    /* Pass 3: predecessors. */
    for (uint32_t bi = 0; bi < c->nblocks; bi++)
        for (uint32_t k = 0; k < c->blocks[bi].nsucc; k++) {
            uint32_t to = c->blocks[bi].succ[k];
            if (to == PTX_BB_EXIT_SUCC) continue;
            ptx_block *t = &c->blocks[to];
            uint32_t *n = realloc(t->pred, sizeof *n * (t->npred + 1));
            if (!n) goto oom;
            t->pred = n;
            t->pred[t->npred++] = bi;
        }
    free(lm.slots);
    free(lm.scope);
    free(lm.scope_parent);
    return c;
oom:
    ptx_diag_error(diag, 0, 0, "out of memory");
fail:
    free(lm.slots);
    free(lm.scope);
    free(lm.scope_parent);
    ptx_cfg_free(c);
    return NULL;
}

void ptx_cfg_free(ptx_cfg *c)
{
    if (!c) return;
    for (uint32_t i = 0; i < c->nblocks; i++) {
        free(c->blocks[i].succ);
        free(c->blocks[i].pred);
    }
    free(c->blocks);
    free(c->stmt_block);
    free(c);
}

static void print_block_name(uint32_t b, FILE *out)
{
    if (b == PTX_BB_EXIT_SUCC) {
        fputs("exit", out);
        return;
    }
    fprintf(out, "bb%u", b);
}

void ptx_cfg_dump(const ptx_cfg *c, FILE *out)
{
    const ptx_func *f = c->func;
    const ptx_module *m = f->mod;
    const ptx_token *nt = &m->toks[f->name_tok];
    fprintf(out, "cfg %s %.*s: %u blocks\n", f->is_entry ? "kernel" : "func", (int)nt->len, m->src + nt->off,
            c->nblocks);
    for (uint32_t bi = 0; bi < c->nblocks; bi++) {
        const ptx_block *b = &c->blocks[bi];
        fprintf(out, "  bb%u", bi);
        if (b->label_stmt != UINT32_MAX) {
            const ptx_token *lt = &m->toks[f->stmts[b->label_stmt].opcode_tok];
            fprintf(out, " (%.*s)", (int)lt->len, m->src + lt->off);
        }
        fprintf(out, ": lines %u-%u, %u instructions; preds:", m->toks[f->stmts[b->first].tok_begin].line,
                m->toks[f->stmts[b->last].tok_begin].line, b->ninstrs);
        for (uint32_t k = 0; k < b->npred; k++) {
            fputc(' ', out);
            print_block_name(b->pred[k], out);
        }
        if (!b->npred) fputs(bi == 0 ? " entry" : " none", out);
        fputs("; succs:", out);
        for (uint32_t k = 0; k < b->nsucc; k++) {
            fputc(' ', out);
            print_block_name(b->succ[k], out);
        }
        if (!b->nsucc) fputs(" none", out);
        /* terminator, if any */
        const ptx_stmt *s = &f->stmts[b->last];
        if (s->kind == PTX_ST_INSTR && s->op_class != PTX_OP_OTHER && s->op_class != PTX_OP_BARRIER) {
            const ptx_token *ot = &m->toks[s->opcode_tok];
            fprintf(out, "; ends with %s%.*s", s->guard_tok >= 0 ? "predicated " : "", (int)ot->len, m->src + ot->off);
        }
        fputc('\n', out);
    }
}
