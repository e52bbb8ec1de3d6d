/* routes.c — cluster routes: launches with thread-block clusters larger than a partition
 * stream's green context runs (2 blocks for 2-SM groups) sent to the stream's route, a
 * stream of the same priority in the green context of the cluster groups inside the
 * partition (routes.h; docs/design.md §5 "Cluster routes"). */
#include <stdatomic.h>

#include "device.h"
#include "routes.h"
#include "streams.h"

static atomic_ullong routed;

unsigned tidal__fn_cluster_blocks(tidal__fn *e)
{
    if (!e->cluster) {
        static const CUfunction_attribute at[3] = {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
                                                   CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
                                                   CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH};
        uint64_t n = 1;
        for (int i = 0; e->fn && i < 3; i++) {
            int d = 0;
            if (tidal__cu()->FuncGetAttribute(&d, at[i], e->fn) == CUDA_SUCCESS && d > 1) n *= (uint64_t)d;
        }
        e->cluster = n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
    }
    return e->cluster;
}

/* After everything queued on q's stream before it, and before everything queued there
 * after it (fork: route waits for the stream; join: the stream waits for route). In a
 * capture, the wait brings route into it and the join takes it back out, so the graph
 * holds the launch in the stream's order. The lock keeps each stream's fork/join pair one
 * launch's at a time, and its route alive (tidal_stream_bind(s, NULL) drops it). */
CUresult tidal__route_launch(const tidal_launch_req *q, CUstream route, int *launched)
{
    const tidal_cu *cu = tidal__cu();
    CUstream s = tidal__norm_stream(q->ex ? q->ex->hStream : q->stream, q->ptsz);
    *launched = 0;
    tidal__lock();
    const tidal__stream *b = tidal__stream_get(s, 0);
    if (!b || b->route != route) { /* unbound meanwhile */
        tidal__unlock();
        return CUDA_SUCCESS;
    }
    *launched = 1;
    CUevent fork = b->fork, join = b->join;
    CUresult r = cu->EventRecord(fork, s);
    if (r == CUDA_SUCCESS) r = cu->StreamWaitEvent(route, fork, 0);
    if (r != CUDA_SUCCESS) {
        tidal__unlock();
        return r;
    }
    if (q->ex) {
        CUlaunchConfig c = *q->ex;
        c.hStream = route;
        r = cu->LaunchKernelEx(&c, q->f, q->params, q->extra);
    } else {
        r = cu->LaunchKernel(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2], q->smem,
                             route, q->params, q->extra);
    }
    /* joined even after a failed launch: a capture must get route back */
    CUresult rj = cu->EventRecord(join, route);
    if (rj == CUDA_SUCCESS) rj = cu->StreamWaitEvent(s, join, 0);
    tidal__unlock();
    if (r == CUDA_SUCCESS) atomic_fetch_add(&routed, 1);
    return r != CUDA_SUCCESS ? r : rj;
}

uint64_t tidal__routes_launched(int reset) { return reset ? atomic_exchange(&routed, 0) : atomic_load(&routed); }
