/* streams.c — what libtidal knows of streams (bindings, their SMs, their slots) and the
 * placement API: partition streams in green contexts (green.c), the placement mode. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt_state.h"

CUstream rt_norm_stream(CUstream s, int ptsz)
{
    if (s == CU_STREAM_LEGACY) return NULL;
    if (s == NULL && ptsz) return CU_STREAM_PER_THREAD;
    return s;
}

rt_stream_binding *rt_stream_get(CUstream s, int create)
{
    for (unsigned i = 0; i < rt.nbindings; i++)
        if (rt.bindings[i].stream == s) return &rt.bindings[i];
    if (!create) return NULL;
    if (rt_grow((void **)&rt.bindings, &rt.cap_bindings, rt.nbindings + 1, sizeof *rt.bindings) != 0) return NULL;
    rt_stream_binding *b = &rt.bindings[rt.nbindings++];
    memset(b, 0, sizeof *b);
    b->stream = s;
    for (unsigned i = 0; i < rt.nsm; i++) b->sms.bits[i >> 6] |= 1ull << (i & 63);
    return b;
}

struct tidal_part *rt_stream_partition(CUstream s)
{
    rt_stream_binding *b = rt_stream_get(s, 0);
    return b && b->part ? b->part : rt.default_part;
}

int tidal_stream_bind(void *stream, tidal_part *p)
{
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_stream_bind");
    CUstream s = rt_norm_stream((CUstream)stream, 0);
    rt_stream_binding *b = rt_stream_get(s, p != NULL);
    int st = TIDAL_OK;
    if (p && !b)
        st = tidal__fail(TIDAL_ERR_NO_MEMORY, "stream bindings");
    else if (b) {
        if (b->part) b->part->bound--;
        b->part = p;
        if (p) p->bound++;
    }
    pthread_mutex_unlock(&rt.lock);
    return st;
}

static int all_sms(const tidal_smset *s) { return tidal_smset_count(s) == rt.nsm; }

int tidal_partition_stream(tidal_part *p, int priority, void **stream)
{
    if (!p || !stream) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_stream: NULL");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_partition_stream");
    rt_call saved = rt_ctx_enter();
    const rt_green *g = all_sms(&p->mask) ? NULL : rt_green_for(&p->mask, 1);
    CUstream s = NULL;
    CUresult r;
    if (g)
        r = rt.cu->GreenCtxStreamCreate(&s, g->g, CU_STREAM_NON_BLOCKING, priority);
    else if (rt.cu->StreamCreateWithPriority)
        r = rt.cu->StreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, priority);
    else
        r = rt.cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING);
    int st = TIDAL_OK;
    if (r != CUDA_SUCCESS) st = tidal__cuda_fail(r, g ? "cuGreenCtxStreamCreate" : "cuStreamCreateWithPriority");
    rt_stream_binding *b = st ? NULL : rt_stream_get(s, 1);
    if (!st && !b) st = tidal__fail(TIDAL_ERR_NO_MEMORY, "stream bindings");
    if (!st) {
        b->part = p;
        p->bound++;
        b->green = g != NULL;
        if (g) b->sms = g->set;
        *stream = s;
        char text[128];
        tidal_smset_format(&b->sms, text, sizeof text);
        tidal__log("partition \"%s\": stream %p on SMs %s%s", p->name, (void *)s, text,
                   g ? " (green context)" : (all_sms(&p->mask) ? "" : " (not placed: masked by clones only)"));
    } else if (s) {
        rt.cu->StreamDestroy(s);
    }
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

int tidal_partition_placed(tidal_part *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_placed: NULL");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_partition_placed");
    rt_call saved = rt_ctx_enter();
    int placed = all_sms(&p->mask) || rt_green_is_union(&p->mask);
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return placed;
}

int tidal_partition_set_placement(tidal_part *p, int mode, unsigned short_us)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_set_placement: NULL");
    if (mode < TIDAL_PLACE_HYBRID || mode > TIDAL_PLACE_ORIGINAL)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_set_placement: mode %d (want TIDAL_PLACE_*)", mode);
    pthread_mutex_lock(&rt.lock);
    p->place_mode = mode;
    if (short_us) p->short_us = short_us;
    pthread_mutex_unlock(&rt.lock);
    return TIDAL_OK;
}

int tidal_set_default_partition(tidal_part *p)
{
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_set_default_partition");
    rt.default_part = p;
    rt.default_name[0] = '\0';
    pthread_mutex_unlock(&rt.lock);
    return TIDAL_OK;
}
