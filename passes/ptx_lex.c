/* ptx_lex.c — PTX tokenizer. Table-driven and allocation-light: one token array
 * that doubles, no per-token allocation. Whitespace and comments are not tokens;
 * the printer recovers them from the gaps between token spans. */
#include "ptx_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    C_ID_START = 1, /* A-Z a-z _ $ % */
    C_ID = 2,       /* letters, digits, _ $ */
    C_DIGIT = 4,
    C_HEX = 8,
    C_PUNCT = 16,
    C_SPACE = 32,
};

static unsigned char cls[256];

static void init_classes(void)
{
    for (int c = 'a'; c <= 'z'; c++) cls[c] |= C_ID_START | C_ID;
    for (int c = 'A'; c <= 'Z'; c++) cls[c] |= C_ID_START | C_ID;
    for (int c = '0'; c <= '9'; c++) cls[c] |= C_ID | C_DIGIT | C_HEX;
    for (int c = 'a'; c <= 'f'; c++) cls[c] |= C_HEX;
    for (int c = 'A'; c <= 'F'; c++) cls[c] |= C_HEX;
    cls['_'] |= C_ID_START | C_ID;
    cls['$'] |= C_ID_START | C_ID;
    cls['%'] |= C_ID_START;
    for (const char *p = "{}()[],;:@!+-*/%<>=|&^~?"; *p; p++) cls[(unsigned char)*p] |= C_PUNCT;
    cls[' '] = cls['\t'] = cls['\r'] = cls['\n'] = cls['\f'] = cls['\v'] = C_SPACE;
}

int ptx_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > UINT32_MAX / 2) return -1;
        nc *= 2;
    }
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* Consumes identifier characters, dotted components (ld.global.f32, %ctaid.x)
 * and `::` qualifiers (cp.async.bulk.shared::cluster). */
static size_t scan_ident_tail(const unsigned char *s, size_t i, size_t n, bool dots)
{
    for (;;) {
        while (i < n && (cls[s[i]] & C_ID)) i++;
        if (dots && i + 1 < n && s[i] == '.' && (cls[s[i + 1]] & C_ID)) {
            i++;
            continue;
        }
        if (i + 2 < n && s[i] == ':' && s[i + 1] == ':' && (cls[s[i + 2]] & C_ID)) {
            i += 2;
            continue;
        }
        return i;
    }
}

int ptx_lex(ptx_module *m, ptx_diag *d)
{
    if (!cls['a']) init_classes();
    const unsigned char *s = (const unsigned char *)m->src;
    size_t n = m->len;
    if (n >= UINT32_MAX) {
        ptx_diag_error(d, 0, 0, "input too large (%zu bytes)", n);
        return -1;
    }
    uint32_t cap = 0, nt = 0;
    ptx_token *t = NULL;
    /* PTX runs ~5 bytes per token; start near that to avoid regrowth. */
    if (ptx_grow((void **)&t, &cap, (uint32_t)(n / 5 + 16), sizeof *t)) goto oom;
    size_t i = 0, line_start = 0;
    uint32_t line = 1;
    while (i < n) {
        unsigned char c = s[i];
        if (cls[c] & C_SPACE) {
            if (c == '\n') {
                line++;
                line_start = i + 1;
            }
            i++;
            continue;
        }
        if (c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) {
            if (s[i + 1] == '/') {
                const unsigned char *nl = memchr(s + i, '\n', n - i);
                i = nl ? (size_t)(nl - s) : n;
            } else {
                size_t start = i, sl = line, scol = i - line_start + 1;
                i += 2;
                for (;;) {
                    if (i + 1 >= n) {
                        ptx_diag_error(d, (unsigned)sl, (unsigned)scol, "unterminated /* comment");
                        free(t);
                        return -1;
                    }
                    if (s[i] == '*' && s[i + 1] == '/') {
                        i += 2;
                        break;
                    }
                    if (s[i] == '\n') {
                        line++;
                        line_start = i + 1;
                    }
                    i++;
                }
                (void)start;
            }
            continue;
        }
        if (nt + 2 > cap && ptx_grow((void **)&t, &cap, nt + 2, sizeof *t)) goto oom;
        ptx_token *k = &t[nt];
        k->off = (uint32_t)i;
        k->line = line;
        k->col = (uint32_t)(i - line_start + 1);
        k->punct = 0;
        size_t j;
        if (cls[c] & C_ID_START) {
            if (c == '%' && !(i + 1 < n && (cls[s[i + 1]] & C_ID))) {
                k->kind = PTX_TK_PUNCT; /* modulo operator */
                k->punct = '%';
                j = i + 1;
            } else {
                k->kind = PTX_TK_IDENT;
                j = scan_ident_tail(s, i + 1, n, true);
            }
        } else if (c == '.') {
            if (i + 1 < n && (cls[s[i + 1]] & C_DIGIT)) goto number; /* .5 */
            if (!(i + 1 < n && (cls[s[i + 1]] & C_ID_START) && s[i + 1] != '%')) {
                ptx_diag_error(d, line, k->col, "expected a directive name after '.'");
                free(t);
                return -1;
            }
            k->kind = PTX_TK_DIRECTIVE;
            j = scan_ident_tail(s, i + 1, n, false);
        } else if (cls[c] & C_DIGIT) {
        number:
            j = i;
            if (c == '0' && i + 1 < n && (s[i + 1] == 'f' || s[i + 1] == 'F' || s[i + 1] == 'd' || s[i + 1] == 'D')) {
                size_t want = (s[i + 1] == 'f' || s[i + 1] == 'F') ? 8 : 16;
                j = i + 2;
                while (j < n && (cls[s[j]] & C_HEX)) j++;
                if (j - i - 2 != want) {
                    ptx_diag_error(d, line, k->col, "hexadecimal float literal needs exactly %zu hex digits", want);
                    free(t);
                    return -1;
                }
                k->kind = PTX_TK_FLOAT;
            } else if (c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                j = i + 2;
                while (j < n && (cls[s[j]] & C_HEX)) j++;
                if (j == i + 2) {
                    ptx_diag_error(d, line, k->col, "hexadecimal literal has no digits");
                    free(t);
                    return -1;
                }
                k->kind = PTX_TK_INT;
            } else if (c == '0' && i + 1 < n && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
                j = i + 2;
                while (j < n && (s[j] == '0' || s[j] == '1')) j++;
                k->kind = PTX_TK_INT;
            } else {
                bool is_float = false;
                while (j < n && (cls[s[j]] & C_DIGIT)) j++;
                if (j < n && s[j] == '.' && !(j + 1 < n && (cls[s[j + 1]] & C_ID_START))) {
                    is_float = true;
                    j++;
                    while (j < n && (cls[s[j]] & C_DIGIT)) j++;
                }
                if (j < n && (s[j] == 'e' || s[j] == 'E')) {
                    size_t e = j + 1;
                    if (e < n && (s[e] == '+' || s[e] == '-')) e++;
                    if (e < n && (cls[s[e]] & C_DIGIT)) {
                        is_float = true;
                        j = e;
                        while (j < n && (cls[s[j]] & C_DIGIT)) j++;
                    }
                }
                k->kind = is_float ? PTX_TK_FLOAT : PTX_TK_INT;
            }
            if (k->kind == PTX_TK_INT && j < n && (s[j] == 'U' || s[j] == 'u')) j++;
            if (j < n && (cls[s[j]] & C_ID)) {
                ptx_diag_error(d, line, (unsigned)(j - line_start + 1), "invalid character '%c' in number", s[j]);
                free(t);
                return -1;
            }
        } else if (c == '"') {
            j = i + 1;
            for (;;) {
                if (j >= n || s[j] == '\n') {
                    ptx_diag_error(d, line, k->col, "unterminated string literal");
                    free(t);
                    return -1;
                }
                if (s[j] == '\\' && j + 1 < n && s[j + 1] != '\n') {
                    j += 2;
                    continue;
                }
                if (s[j++] == '"') break;
            }
            k->kind = PTX_TK_STRING;
        } else if (cls[c] & C_PUNCT) {
            k->kind = PTX_TK_PUNCT;
            k->punct = c;
            j = i + 1;
        } else {
            if (c >= 0x20 && c < 0x7f)
                ptx_diag_error(d, line, k->col, "unexpected character '%c'", c);
            else
                ptx_diag_error(d, line, k->col, "unexpected byte 0x%02x", c);
            free(t);
            return -1;
        }
        k->len = (uint32_t)(j - i);
        i = j;
        nt++;
    }
    if (nt + 1 > cap && ptx_grow((void **)&t, &cap, nt + 1, sizeof *t)) goto oom;
    t[nt] = (ptx_token){
        .off = (uint32_t)n, .len = 0, .line = line, .col = (uint32_t)(n - line_start + 1), .kind = PTX_TK_EOF};
    m->toks = t;
    m->ntoks = nt;
    return 0;
oom:
    free(t);
    ptx_diag_error(d, 0, 0, "out of memory");
    return -1;
}
