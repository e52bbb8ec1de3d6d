/* streams.c — what libtidal knows of streams (bindings, their SMs, their slots) and the
 * stream API: bindings, partition streams in green contexts (green.c), whether a partition
 * is placed. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "green.h"
#include "partitions.h"
#include "streams.h"

static struct {
    tidal__stream *tab;
    unsigned n, cap;
} S;

tidal__stream *tidal__stream_get(CUstream s, int create)
{
    for (unsigned i = 0; i < S.n; i++)
        if (S.tab[i].stream == s) return &S.tab[i];
    if (!create) return NULL;
    if (tidal__grow((void **)&S.tab, &S.cap, S.n + 1, sizeof *S.tab) != 0) return NULL;
    tidal__stream *b = &S.tab[S.n++];
    memset(b, 0, sizeof *b);
    b->stream = s;
    for (unsigned i = 0; i < tidal__nsm(); i++) b->sms.bits[i >> 6] |= 1ull << (i & 63);
    return b;
}

void tidal__streams_forget(struct tidal_part *p)
{
    for (unsigned i = 0; i < S.n; i++)
        if (S.tab[i].slot_part == p) S.tab[i].slot_part = NULL;
}

/* b's cluster stream and its events, if any (the stream's own is the caller's). */
static void drop_route(tidal__stream *b)
{
    const tidal_cu *cu = tidal__cu();
    if (b->route) cu->StreamDestroy(b->route);
    if (b->fork) cu->EventDestroy(b->fork);
    if (b->join) cu->EventDestroy(b->join);
    b->route = NULL;
    b->fork = b->join = NULL;
}

void tidal__streams_teardown(void)
{
    for (unsigned i = 0; i < S.n; i++) drop_route(&S.tab[i]);
    free(S.tab);
    memset(&S, 0, sizeof S);
}

int tidal_stream_bind(void *stream, tidal_part *p)
{
    tidal__lock();
    NEED_INIT("tidal_stream_bind");
    CUstream s = tidal__norm_stream((CUstream)stream, 0);
    tidal__stream *b = tidal__stream_get(s, p != NULL);
    int st = TIDAL_OK;
    if (p && !b)
        st = tidal__fail(TIDAL_ERR_NO_MEMORY, "stream bindings");
    else if (b) {
        if (b->part) tidal__part_release(b->part);
        b->part = p;
        if (p) tidal__part_hold(p);
        /* unbound: the caller is about to destroy it (a partition stream's route serves
         * its partition only) */
        if (!p) drop_route(b);
    }
    tidal__unlock();
    return st;
}

static int all_sms(const tidal_smset *s) { return tidal_smset_count(s) == tidal__nsm(); }

/* A green stream of p's (in g) that runs clusters of at most g->cluster_max blocks: a
 * stream of the same priority in c, the green context of the cluster groups inside p's
 * SMs, takes its launches with larger clusters (routes.c). None when c is g (no larger
 * clusters to take) or NULL (no such group inside p: such launches then fail there, and
 * tidal__launch_explain says why). */
static void make_route(tidal__stream *b, const tidal_part *p, const tidal__green *g, const tidal__green *c,
                       int priority)
{
    const tidal_cu *cu = tidal__cu();
    b->cluster_max = g->cluster_max;
    if (g == c) return; /* a context of cluster groups itself */
    if (!c) {
        tidal__log("partition \"%s\": no cluster group of %d SMs inside its SMs: launches with clusters of more "
                   "than %u blocks fail on its streams",
                   p->name, TIDAL_CLUSTER_GRAIN, g->cluster_max);
        return;
    }
    CUresult r = cu->StreamWaitEvent ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS) r = cu->GreenCtxStreamCreate(&b->route, c->g, CU_STREAM_NON_BLOCKING, priority);
    if (r == CUDA_SUCCESS) r = cu->EventCreate(&b->fork, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) r = cu->EventCreate(&b->join, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
        char buf[48];
        tidal__warn("partition \"%s\": no cluster stream (%s): launches with clusters of more than %u blocks fail "
                    "on its streams",
                    p->name, tidal__cu_errname(cu, r, buf, sizeof buf), g->cluster_max);
        drop_route(b);
        return;
    }
    char text[128];
    tidal_smset_format(&c->set, text, sizeof text);
    tidal__log("partition \"%s\": stream %p routes clusters of more than %u blocks to SMs %s", p->name,
               (void *)b->stream, g->cluster_max, text);
}

int tidal_partition_stream(tidal_part *p, int priority, void **stream)
{
    if (!p || !stream) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_stream: NULL");
    tidal__lock();
    NEED_INIT("tidal_partition_stream");
    const tidal_cu *cu = tidal__cu();
    tidal__call saved = tidal__ctx_enter();
    const tidal__green *g = all_sms(&p->mask) ? NULL : tidal__green_for(&p->mask, 1);
    /* a set that is also a union of cluster groups: their context places as exactly and
     * runs larger clusters, so its streams need no route */
    const tidal__green *cg = g ? tidal__green_cluster_for(&p->mask) : NULL;
    if (cg && memcmp(&cg->set, &p->mask, sizeof p->mask) == 0) g = cg;
    CUstream s = NULL;
    CUresult r;
    if (g)
        r = cu->GreenCtxStreamCreate(&s, g->g, CU_STREAM_NON_BLOCKING, priority);
    else if (cu->StreamCreateWithPriority)
        r = cu->StreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, priority);
    else
        r = cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING);
    int st = TIDAL_OK;
    if (r != CUDA_SUCCESS) st = tidal__cuda_fail(r, g ? "cuGreenCtxStreamCreate" : "cuStreamCreateWithPriority");
    tidal__stream *b = st ? NULL : tidal__stream_get(s, 1);
    if (!st && !b) st = tidal__fail(TIDAL_ERR_NO_MEMORY, "stream bindings");
    if (!st) {
        b->part = p;
        tidal__part_hold(p);
        b->green = g != NULL;
        if (g) b->sms = g->set;
        drop_route(b); /* a stream handle the driver gave again, after cuStreamDestroy */
        b->cluster_max = 0;
        if (g) make_route(b, p, g, cg, priority);
        *stream = s;
        char text[128];
        tidal_smset_format(&b->sms, text, sizeof text);
        tidal__log("partition \"%s\": stream %p on SMs %s%s", p->name, (void *)s, text,
                   g ? " (green context)" : (all_sms(&p->mask) ? "" : " (not placed: masked by clones only)"));
    } else if (s) {
        cu->StreamDestroy(s);
    }
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_partition_placed(tidal_part *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_placed: NULL");
    tidal__lock();
    NEED_INIT("tidal_partition_placed");
    tidal__call saved = tidal__ctx_enter();
    int placed = all_sms(&p->mask) || tidal__green_is_union(&p->mask);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return placed;
}
