/* flowin.h — flow-in (flowin.c): a partition's clone launches that may still run, and the
 * joiners started for them when the partition is given SMs (docs/runtime.md, "What a live
 * mask change does to a running kernel"). launch.c records a launch; partitions.c, whose
 * partitions each hold one table, starts the joiners when a mask grows and frees the table
 * with the partition. */
#ifndef TIDAL_FLOWIN_H
#define TIDAL_FLOWIN_H

#include <stdint.h>

#include "runtime_internal.h"

/* A reshaped launch that may still run: enough to start joiners for it when its
 * partition is given SMs. */
#define TIDAL_INFLIGHT 32
typedef struct tidal__inflight {
    int used;
    uint64_t key;
    CUfunction clone;
    unsigned workers, block[3], smem; /* smem: the clone's dynamic shared memory */
    unsigned occ;                     /* workers per SM: joiners are occ per SM the partition gained */
    unsigned char *buf;               /* the clone's parameter buffer, tidal_launch included */
    size_t bufsize, launch_off;
    CUevent done; /* recorded after the launch on its stream */
} tidal__inflight;

/* One partition's launches that may still run (the oldest are forgotten past
 * TIDAL_INFLIGHT). Zeroed: empty. */
typedef struct tidal__flow {
    tidal__inflight rec[TIDAL_INFLIGHT];
    unsigned next;
} tidal__flow;

/* With the lock held. add: remember a launch made on stream s (it takes rec->buf). join:
 * start joiners for every launch still running, after the partition's mask grew by
 * added_sms SMs (in relaxed capture mode: tidal_partition_set). free: forget them all. */
void tidal__flow_add(tidal__flow *f, const tidal__inflight *rec, CUstream s);
void tidal__flow_join(tidal__flow *f, unsigned added_sms);
void tidal__flow_free(tidal__flow *f);

/* Joiner launches made (tidal_stats.joins) */
unsigned long long tidal__flow_joins(void);
void tidal__flow_joins_reset(void);

#endif
