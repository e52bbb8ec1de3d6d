/* fake_tidal.c -- a stand-in for libtidal-preload.so in the Python unit tests (no GPU, no
 * CUDA): the tidal.h entry points python/tidal uses, with partitions kept in a table, plus
 * cuLaunchKernel (so the process looks interposed) and cuStreamDestroy_v2 (tidal.torch's
 * close() loads it through TIDAL_LIBCUDA). 132 "SMs"; a set is "placed" when it is a union
 * of {2i, 2i+1} pairs. FAKE_TIDAL_INIT_FAIL=1: tidal_init fails with TIDAL_ERR_NO_DRIVER;
 * FAKE_TIDAL_DESTROY_FAIL=N: the Nth cuStreamDestroy_v2 fails.
 *   cc -shared -fPIC fake_tidal.c -o fake_tidal.so */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSM 132
typedef struct {
    uint64_t bits[4];
} smset;
typedef struct {
    char name[32];
    smset mask;
    int used, mode;
    unsigned short_us;
} part;
typedef struct {
    uint64_t rewritten, original, unknown, refused, unmasked, joins, graph_probe, smem_full, cluster_routed, violations,
        sm_blocks[256];
} stats;

static part parts[16];
static int inited;
static unsigned nstreams;
static __thread char err[256];
static uint64_t n_launch;

static int fail(int st, const char *msg)
{
    snprintf(err, sizeof err, "%s", msg);
    return st;
}

const char *tidal_strerror(int st)
{
    switch (st) {
    case 0: return "ok";
    case -2: return "SM set does not parse";
    case -3: return "not initialized";
    case -4: return "CUDA driver not available";
    case -7: return "partition exists";
    case -8: return "not found";
    case -9: return "not rewritten";
    case -11: return "no such SM";
    default: return "error";
    }
}
const char *tidal_last_error(void) { return err; }

int tidal_init(unsigned flags)
{
    (void)flags;
    const char *f = getenv("FAKE_TIDAL_INIT_FAIL");
    if (f && *f == '1') return fail(-4, "cannot load the CUDA driver: fake");
    inited = 1;
    return 0;
}
int tidal_shutdown(void)
{
    inited = 0;
    return 0;
}
int tidal_device_sms(unsigned *out)
{
    *out = NSM;
    return 0;
}
/* sides by SM pairs: pairs 0, 2, 4, ... ({0,1}, {4,5}, ...) on SM 0's side */
int tidal_l2_sides(smset *a, smset *b)
{
    if (!inited) return fail(-3, "tidal_l2_sides before tidal_init");
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    for (int s = 0; s < NSM; s++) ((s / 2) % 2 ? b : a)->bits[s / 64] |= 1ull << (s % 64);
    return 0;
}

int tidal_smset_parse(const char *t, smset *out, int *is_all, size_t *errpos)
{
    memset(out, 0, sizeof *out);
    if (is_all) *is_all = 0;
    if (!strcmp(t, "all")) {
        for (int s = 0; s < NSM; s++) out->bits[s / 64] |= 1ull << (s % 64);
        if (is_all) *is_all = 1;
        return 0;
    }
    if (!strcmp(t, "none") || !*t) return 0;
    const char *p = t;
    while (*p) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p) goto bad;
        if (*e == '-') {
            const char *q = e + 1;
            b = strtol(q, &e, 10);
            if (e == q) goto bad;
        }
        if (a < 0 || b < a) goto bad;
        if (b >= NSM) return fail(-11, "SM beyond the device");
        for (long s = a; s <= b; s++) out->bits[s / 64] |= 1ull << (s % 64);
        if (*e == ',')
            e++;
        else if (*e) {
            p = e;
            goto bad;
        }
        p = e;
    }
    return 0;
bad:
    if (errpos) *errpos = (size_t)(p - t);
    return fail(-2, "bad SM set");
}

size_t tidal_smset_format(const smset *s, char *buf, size_t n)
{
    char tmp[1024];
    size_t len = 0;
    tmp[0] = 0;
    for (int i = 0; i < 256;) {
        if (!((s->bits[i / 64] >> (i % 64)) & 1)) {
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < 256 && ((s->bits[(j + 1) / 64] >> ((j + 1) % 64)) & 1)) j++;
        len += (size_t)snprintf(tmp + len, sizeof tmp - len, len ? ",%d" : "%d", i);
        if (j > i) len += (size_t)snprintf(tmp + len, sizeof tmp - len, "-%d", j);
        i = j + 1;
    }
    if (!len) len = (size_t)snprintf(tmp, sizeof tmp, "none");
    if (n) snprintf(buf, n, "%s", tmp);
    return len;
}
unsigned tidal_smset_count(const smset *s)
{
    unsigned c = 0;
    for (int i = 0; i < 4; i++) c += (unsigned)__builtin_popcountll(s->bits[i]);
    return c;
}

static part *lookup(const char *name)
{
    for (int i = 0; i < 16; i++)
        if (parts[i].used && !strcmp(parts[i].name, name)) return &parts[i];
    return NULL;
}

int tidal_partition_create(const char *name, const char *set, part **out)
{
    if (!inited) return fail(-3, "tidal_partition_create before tidal_init");
    if (lookup(name)) return fail(-7, "partition exists");
    smset s;
    int st = tidal_smset_parse(set, &s, NULL, NULL);
    if (st) return st;
    for (int i = 0; i < 16; i++)
        if (!parts[i].used) {
            memset(&parts[i], 0, sizeof parts[i]);
            snprintf(parts[i].name, sizeof parts[i].name, "%s", name);
            parts[i].mask = s;
            parts[i].used = 1;
            *out = &parts[i];
            return 0;
        }
    return fail(-6, "table full");
}
int tidal_partition_find(const char *name, part **out)
{
    part *p = lookup(name);
    if (!p) return fail(-8, "no such partition");
    *out = p;
    return 0;
}
int tidal_partition_set(part *p, const char *set)
{
    smset s;
    int st = tidal_smset_parse(set, &s, NULL, NULL);
    if (st) return st;
    p->mask = s;
    return 0;
}
int tidal_partition_set_mask(part *p, const smset *s)
{
    p->mask = *s;
    return 0;
}
int tidal_partition_get_mask(part *p, smset *out)
{
    *out = p->mask;
    return 0;
}
const char *tidal_partition_name(const part *p) { return p->name; }
int tidal_partition_destroy(part *p)
{
    p->used = 0;
    return 0;
}
int tidal_stream_bind(void *s, part *p)
{
    (void)s;
    (void)p;
    return 0;
}
int tidal_set_default_partition(part *p)
{
    (void)p;
    return 0;
}
int tidal_partition_stream(part *p, int prio, void **out)
{
    (void)p;
    (void)prio;
    *out = (void *)(uintptr_t)(0x1000 + 16 * nstreams++);
    return 0;
}
int tidal_partition_placed(part *p)
{
    for (int s = 0; s < 256; s += 2) {
        int a = (p->mask.bits[s / 64] >> (s % 64)) & 1, b = (p->mask.bits[(s + 1) / 64] >> ((s + 1) % 64)) & 1;
        if (a != b) return 0;
    }
    return 1;
}
int tidal_partition_set_placement(part *p, int mode, unsigned short_us)
{
    if (mode < 0 || mode > 2) return fail(-1, "bad mode");
    p->mode = mode;
    if (short_us) p->short_us = short_us;
    return 0;
}
/* modules: odd handles carry no rewrite */
int tidal_module_attach(void *m, part *p)
{
    (void)p;
    if (!inited) return fail(-3, "attach before init");
    return ((uintptr_t)m & 1) ? -9 : 0;
}
int tidal_stats_get(part *p, stats *out)
{
    memset(out, 0, sizeof *out);
    out->rewritten = 10 + n_launch;
    out->original = 5;
    out->unknown = 3;
    if (p) {
        out->violations = 0;
        out->sm_blocks[0] = 7;   /* inside "0-65" */
        out->sm_blocks[100] = 2; /* outside it */
    }
    return 0;
}
int tidal_stats_reset(part *p)
{
    (void)p;
    n_launch = 0;
    return 0;
}

/* bimodal tensors: the descriptor's fields as abi/tidal_l2.h has them (mode first), the two
 * copies as host buffers (the side copy plain: the fake homes nothing) */
typedef struct {
    uint32_t mode, side;
    uint64_t all, size, reserved;
    uint64_t l2[4];
} bdesc;
typedef struct {
    bdesc d;
    unsigned char *all, *side;
} bimodal;
int tidal_bimodal_create(size_t size, unsigned side, bimodal **out)
{
    if (!inited) return fail(-3, "tidal_bimodal_create before tidal_init");
    if (!out || !size || side > 1) return fail(-1, "tidal_bimodal_create: bad arguments");
    bimodal *t = calloc(1, sizeof *t);
    t->all = calloc(1, size);
    t->side = calloc(1, size);
    t->d.side = side;
    t->d.size = size;
    t->d.all = (uint64_t)(uintptr_t)t->all;
    *out = t;
    return 0;
}
int tidal_bimodal_write(bimodal *t, size_t off, const void *src, size_t n)
{
    if (!t || (!src && n)) return fail(-1, "tidal_bimodal_write: NULL");
    if (off > t->d.size || n > t->d.size - off) return fail(-1, "tidal_bimodal_write: past the end");
    memcpy(t->all + off, src, n);
    memcpy(t->side + off, src, n);
    return 0;
}
int tidal_bimodal_set(bimodal *t, unsigned mode)
{
    if (!t || mode > 1) return fail(-1, "tidal_bimodal_set: bad mode");
    t->d.mode = mode;
    return 0;
}
int tidal_bimodal_desc_addr(const bimodal *t, uint64_t *dev)
{
    *dev = (uint64_t)(uintptr_t)&t->d;
    return 0;
}
int tidal_bimodal_destroy(bimodal *t)
{
    free(t->all);
    free(t->side);
    free(t);
    return 0;
}
/* the fake's side copy, for the tests: a pointer to its byte off */
const unsigned char *fake_bimodal_side(const bimodal *t, size_t off) { return t->side + off; }

/* the process looks interposed */
int cuLaunchKernel(void)
{
    n_launch++;
    return 0;
}
/* FAKE_TIDAL_DESTROY_FAIL=N: the Nth call of cuStreamDestroy_v2 fails (CUDA_ERROR_INVALID_VALUE);
 * fake_streams_destroyed() counts the calls that succeeded */
static unsigned n_destroy_calls, n_destroyed;
int cuStreamDestroy_v2(void *s)
{
    (void)s;
    const char *f = getenv("FAKE_TIDAL_DESTROY_FAIL");
    if (f && ++n_destroy_calls == strtoul(f, NULL, 10)) return 1;
    n_destroyed++;
    return 0;
}
unsigned fake_streams_destroyed(void) { return n_destroyed; }
