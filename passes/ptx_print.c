#define _POSIX_C_SOURCE 200809L
/* ptx_print.c — writes a module back. Unmodified bytes are copied from the
 * source; only statements a transform touched are re-emitted. */
#include "ptx_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct printer {
    const ptx_module *m;
    FILE *out;
    size_t pos; /* source bytes before pos are written */
    int err;
} printer;

static void put(printer *pr, const char *s, size_t n)
{
    if (n && fwrite(s, 1, n, pr->out) != n) pr->err = -1;
}
static void flush_to(printer *pr, size_t off)
{
    if (off < pr->pos) ptx_ice("printer moved backwards (%zu < %zu)", off, pr->pos);
    put(pr, pr->m->src + pr->pos, off - pr->pos);
    pr->pos = off;
}
/* Writes transform text; `next` is the source offset of what follows it. When
 * the text's last line has a // comment and more than blanks follow on the
 * source line, a line break goes between them: otherwise the comment would
 * swallow it (a trailing block comment, the next statement of a shared line,
 * a '{'). */
static void put_text(printer *pr, const char *s, size_t n, size_t next)
{
    put(pr, s, n);
    size_t k = n;
    while (k && s[k - 1] != '\n') k--;
    bool comment = false;
    for (size_t i = k; i + 1 < n && !comment; i++) comment = s[i] == '/' && s[i + 1] == '/';
    if (!comment) return;
    const char *src = pr->m->src;
    while (next < pr->m->len && (src[next] == ' ' || src[next] == '\t' || src[next] == '\r')) next++;
    if (next < pr->m->len && src[next] != '\n') put(pr, "\n", 1);
}
static size_t tok_start(const ptx_module *m, uint32_t t) { return m->toks[t].off; }
static size_t tok_end(const ptx_module *m, uint32_t t) { return (size_t)m->toks[t].off + m->toks[t].len; }

static void print_func(printer *pr, const ptx_func *f)
{
    const ptx_module *m = pr->m;
    if (f->header_text) {
        flush_to(pr, tok_start(m, f->tok_begin));
        /* A declaration has no body: its header is everything before the ';'. */
        size_t rest = tok_start(m, f->has_body ? f->body_open_tok : f->tok_end - 1);
        put_text(pr, f->header_text, f->header_len, rest);
        pr->pos = rest;
    }
    for (uint32_t i = 0; i < f->nstmts; i++) {
        const ptx_stmt *s = &f->stmts[i];
        if (s->synthesized) {
            /* Goes after the end of the statement before the next original one. */
            uint32_t anchor = f->body_close_tok;
            for (uint32_t j = i + 1; j < f->nstmts; j++)
                if (!f->stmts[j].synthesized) {
                    anchor = f->stmts[j].tok_begin;
                    break;
                }
            size_t at = tok_end(m, anchor - 1);
            if (at > pr->pos) flush_to(pr, at);
            put(pr, s->kind == PTX_ST_LABEL ? "\n" : "\n\t", s->kind == PTX_ST_LABEL ? 1 : 2);
            put_text(pr, s->text, s->text_len, pr->pos);
        } else if (s->removed) {
            size_t at = tok_end(m, s->tok_begin - 1);
            /* The removed statement starts a line and more follows on that line:
             * keep the line break before it, or what follows would move up onto
             * the previous line (a .loc line would swallow it). */
            if (m->toks[s->tok_begin - 1].line != m->toks[s->tok_begin].line &&
                m->toks[s->tok_end].kind != PTX_TK_EOF && m->toks[s->tok_end].line == m->toks[s->tok_end - 1].line)
                at = tok_start(m, s->tok_begin);
            if (at > pr->pos) flush_to(pr, at);
            pr->pos = tok_end(m, s->tok_end - 1);
        } else if (s->text) {
            flush_to(pr, tok_start(m, s->tok_begin));
            put_text(pr, s->text, s->text_len, tok_end(m, s->tok_end - 1));
            pr->pos = tok_end(m, s->tok_end - 1);
        }
    }
}

static int print_module(const ptx_module *m, FILE *out)
{
    printer pr = {.m = m, .out = out};
    if (!m->modified) {
        put(&pr, m->src, m->len);
        return pr.err;
    }
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (it->text) {
            /* Synthesized item: after the previous original item. */
            size_t at = 0;
            for (uint32_t j = i; j-- > 0;)
                if (!m->items[j].text) {
                    at = tok_end(m, m->items[j].tok_end - 1);
                    break;
                }
            if (at > pr.pos) flush_to(&pr, at);
            if (at) put(&pr, "\n", 1);
            if (at)
                put_text(&pr, it->text, it->text_len, pr.pos);
            else
                put(&pr, it->text, it->text_len);
            if (!at) put(&pr, "\n", 1);
        } else if (it->kind == PTX_ITEM_FUNC && it->func->modified) {
            print_func(&pr, it->func);
        }
    }
    flush_to(&pr, m->len);
    return pr.err;
}

int ptx_print(const ptx_module *m, FILE *out) { return print_module(m, out); }

char *ptx_print_to_string(const ptx_module *m, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    int rc = print_module(m, f);
    if (fclose(f) || rc) {
        free(buf);
        return NULL;
    }
    if (len) *len = n;
    return buf;
}

int ptx_func_print_body(const ptx_func *f, FILE *out)
{
    const ptx_module *m = f->mod;
    if (!f->has_body) ptx_ice("ptx_func_print_body on a declaration");
    printer pr = {.m = m, .out = out, .pos = tok_start(m, f->body_open_tok)};
    ptx_func tmp = *f;
    tmp.header_text = NULL; /* the body only */
    print_func(&pr, &tmp);
    flush_to(&pr, tok_end(m, f->body_close_tok));
    return pr.err;
}
