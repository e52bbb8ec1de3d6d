/* smset.c — SM sets as text: "0-47,64,100-131", "all", "none". Shared by libtidal,
 * tidald and tidalctl. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tidal.h"

#define SMSET_MAX (TIDAL_SMSET_WORDS * 64)

static void set_bit(tidal_smset *s, unsigned b) { s->bits[b >> 6] |= 1ull << (b & 63); }
static int has_bit(const tidal_smset *s, unsigned b) { return (s->bits[b >> 6] >> (b & 63)) & 1; }

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* A decimal SM id < SMSET_MAX; NULL when none is there or it is too large. */
static const char *parse_id(const char *p, unsigned *out)
{
    if (!isdigit((unsigned char)*p)) return NULL;
    unsigned v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (unsigned)(*p - '0');
        if (v >= SMSET_MAX) return NULL;
        p++;
    }
    *out = v;
    return p;
}

static int word_is(const char *p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(p, word, n) != 0) return 0;
    return *skip_space(p + n) == '\0';
}

int tidal_smset_parse(const char *text, tidal_smset *out, int *is_all, size_t *errpos)
{
    if (!text || !out) return TIDAL_ERR_INVALID;
    tidal_smset s;
    memset(&s, 0, sizeof s);
    if (is_all) *is_all = 0;
    const char *p = skip_space(text);
    if (*p == '\0' || word_is(p, "none")) {
        *out = s;
        return TIDAL_OK;
    }
    if (word_is(p, "all")) {
        for (unsigned b = 0; b < SMSET_MAX; b++) set_bit(&s, b);
        if (is_all) *is_all = 1;
        *out = s;
        return TIDAL_OK;
    }
    for (;;) {
        p = skip_space(p);
        unsigned lo, hi;
        const char *q = parse_id(p, &lo);
        if (!q) goto bad;
        p = skip_space(q);
        hi = lo;
        if (*p == '-') {
            p = skip_space(p + 1);
            q = parse_id(p, &hi);
            if (!q || hi < lo) goto bad;
            p = skip_space(q);
        }
        for (unsigned b = lo; b <= hi; b++) set_bit(&s, b);
        if (*p == '\0') break;
        if (*p != ',') goto bad;
        p++;
    }
    *out = s;
    return TIDAL_OK;
bad:
    if (errpos) *errpos = (size_t)(p - text);
    return TIDAL_ERR_PARSE;
}

size_t tidal_smset_format(const tidal_smset *set, char *buf, size_t bufsize)
{
    char tmp[4 * SMSET_MAX];
    size_t n = 0;
    tmp[0] = '\0';
    for (unsigned b = 0; b < SMSET_MAX;) {
        if (!has_bit(set, b)) {
            b++;
            continue;
        }
        unsigned e = b;
        while (e + 1 < SMSET_MAX && has_bit(set, e + 1)) e++;
        int w = e == b ? snprintf(tmp + n, sizeof tmp - n, "%s%u", n ? "," : "", b)
                       : snprintf(tmp + n, sizeof tmp - n, "%s%u-%u", n ? "," : "", b, e);
        n += (size_t)w;
        b = e + 1;
    }
    if (n == 0) n = (size_t)snprintf(tmp, sizeof tmp, "none");
    if (buf && bufsize) {
        size_t c = n < bufsize - 1 ? n : bufsize - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

int tidal__smset_subset(const tidal_smset *a, const tidal_smset *b)
{
    for (int w = 0; w < TIDAL_SMSET_WORDS; w++)
        if (a->bits[w] & ~b->bits[w]) return 0;
    return 1;
}

unsigned tidal_smset_count(const tidal_smset *set)
{
    unsigned c = 0;
    for (int w = 0; w < TIDAL_SMSET_WORDS; w++) c += (unsigned)__builtin_popcountll(set->bits[w]);
    return c;
}
