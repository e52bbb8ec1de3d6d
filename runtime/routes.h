/* routes.h — cluster routes (routes.c): a launch whose thread-block clusters are larger
 * than its partition stream's green context runs goes to the stream's route, a stream in
 * the green context of the partition's co-schedulable cluster groups (streams.c makes it,
 * green.c measures the groups), ordered against the stream by a fork and a join event.
 * docs/design.md §5 "Cluster routes". */
#ifndef TIDAL_ROUTES_H
#define TIDAL_ROUTES_H

#include "functions.h"
#include "runtime_internal.h"

/* Blocks per cluster a cuLaunchKernelEx asks for (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION),
 * 0 when it sets none. */
static inline unsigned tidal__ex_cluster_blocks(const CUlaunchConfig *c)
{
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        if (a->id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
        uint64_t n = (uint64_t)a->value.clusterDim.x * a->value.clusterDim.y * a->value.clusterDim.z;
        return n > UINT32_MAX ? UINT32_MAX : n ? (unsigned)n : 1;
    }
    return 0;
}

/* Blocks per cluster e requires by itself (.reqnctapercluster; 1 when none), asked of the
 * driver once per function. Lock held. */
unsigned tidal__fn_cluster_blocks(tidal__fn *e);

/* q, unchanged but for its stream, on route (*launched = 1; the status is the launch's),
 * or nothing when q's stream lost that route meanwhile (*launched = 0: the caller
 * launches it as given). Lock not held. */
CUresult tidal__route_launch(const tidal_launch_req *q, CUstream route, int *launched);

/* Launches sent to routes since the last reset (reset: zero it too). */
uint64_t tidal__routes_launched(int reset);

#endif
