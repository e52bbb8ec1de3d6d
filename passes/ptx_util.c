/* ptx_util.c — arena allocation, diagnostics, file reading for the PTX library. */
#include "ptx_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    max_align_t data[];
} arena_chunk;

struct ptx_arena {
    arena_chunk *head;
};

ptx_arena *ptx_arena_new(void) { return calloc(1, sizeof(ptx_arena)); }

void ptx_arena_free(ptx_arena *a)
{
    if (!a) return;
    for (arena_chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *ptx_arena_alloc(ptx_arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    arena_chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = n > (1u << 16) ? n : (1u << 16);
        c = malloc(sizeof(*c) + size);
        if (!c) return NULL;
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

void *ptx_arena_zalloc(ptx_arena *a, size_t n)
{
    void *p = ptx_arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *ptx_strdup(ptx_module *m, const char *s, size_t n)
{
    char *p = ptx_arena_alloc(m->arena, n + 1);
    if (!p) ptx_ice("out of memory");
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *ptx_fmt(ptx_module *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) ptx_ice("bad format string");
    char *p = ptx_arena_alloc(m->arena, (size_t)n + 1);
    if (!p) ptx_ice("out of memory");
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---------------------------------------------------------------- diagnostics */

void ptx_diag_init(ptx_diag *d, const char *file)
{
    memset(d, 0, sizeof *d);
    d->file = file ? file : "<input>";
}

void ptx_diag_error(ptx_diag *d, unsigned line, unsigned col, const char *fmt, ...)
{
    if (!d || d->nerrors++) return; /* keep the first error: later ones are usually fallout */
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    /* a message longer than msg (an LLVM verifier dump) says that it was cut */
    static const char cut[] = " [...]";
    if (n >= (int)sizeof d->msg) memcpy(d->msg + sizeof d->msg - sizeof cut, cut, sizeof cut);
}

void ptx_diag_print(const ptx_diag *d, FILE *out)
{
    if (d->line && d->col)
        fprintf(out, "%s:%u:%u: error: %s\n", d->file, d->line, d->col, d->msg);
    else if (d->line)
        fprintf(out, "%s:%u: error: %s\n", d->file, d->line, d->msg);
    else
        fprintf(out, "%s: error: %s\n", d->file, d->msg);
}

/* ---------------------------------------------------------------- fatal errors */

static ptx_fatal_handler fatal_handler;
/* The last fatal message, for a debugger or a core file when no handler is installed. */
static char fatal_message[4096];

void ptx_set_fatal_handler(ptx_fatal_handler h) { fatal_handler = h; }

static _Noreturn void vfatal(ptx_fatal_kind kind, const char *fmt, va_list ap)
{
    vsnprintf(fatal_message, sizeof fatal_message, fmt, ap);
    if (fatal_handler) fatal_handler(kind, fatal_message);
    abort(); /* no handler, or one that returned: a broken invariant must not go on */
}

_Noreturn void ptx_ice(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfatal(PTX_FATAL_INTERNAL, fmt, ap);
}

_Noreturn void ptx_fatal(ptx_fatal_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfatal(kind, fmt, ap);
}

/* ---------------------------------------------------------------- files */

char *ptx_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) goto fail;
    for (;;) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) {
            if (ferror(f)) goto fail;
            break;
        }
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) goto fail;
        buf = nb;
        cap *= 2;
    }
    buf[n] = 0;
    if (f != stdin) fclose(f);
    *len = n;
    return buf;
fail : {
    int e = errno ? errno : ENOMEM;
    free(buf);
    if (f != stdin) fclose(f);
    errno = e;
    return NULL;
}
}

/* ---------------------------------------------------------------- tokens */

bool ptx_tok_is(const ptx_module *m, uint32_t t, const char *s)
{
    size_t n = strlen(s);
    return m->toks[t].len == n && memcmp(m->src + m->toks[t].off, s, n) == 0;
}

char *ptx_tok_str(const ptx_module *m, uint32_t t, char *buf, size_t size)
{
    size_t n = m->toks[t].len < size - 1 ? m->toks[t].len : size - 1;
    memcpy(buf, m->src + m->toks[t].off, n);
    buf[n] = 0;
    return buf;
}

void ptx_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

uint32_t ptx_hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}
