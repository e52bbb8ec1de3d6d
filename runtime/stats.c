/* stats.c — tidal.h's statistics: the launch counters (launch.c), the joiners started
 * (flowin.c) and a partition's device counters (partitions.c). */
#define _GNU_SOURCE
#include <string.h>

#include "device.h"
#include "flowin.h"
#include "launch.h"
#include "partitions.h"

int tidal_stats_get(tidal_part *p, tidal_stats *out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_stats_get: NULL");
    memset(out, 0, sizeof *out);
    tidal__lock();
    NEED_INIT("tidal_stats_get");
    tidal__launch_counts(out);
    out->joins = tidal__flow_joins();
    tidal__call saved = tidal__ctx_enter();
    int st = p ? tidal__part_read_stats(p, out) : TIDAL_OK;
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_stats_reset(tidal_part *p)
{
    tidal__lock();
    NEED_INIT("tidal_stats_reset");
    tidal__launch_counts_reset();
    tidal__flow_joins_reset();
    tidal__call saved = tidal__ctx_enter();
    int st = p ? tidal__part_reset_stats(p) : TIDAL_OK;
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}
