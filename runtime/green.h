/* green.h — green contexts (green.c): the device's SM groups at two grains (the finest, for
 * placement; co-schedulable ones, for thread-block clusters), each measured once, and one
 * green context per SM set that is a union of groups; streams.c makes partition streams
 * (and their cluster streams) in them. Called with the lock held. */
#ifndef TIDAL_GREEN_H
#define TIDAL_GREEN_H

#include "runtime_internal.h"

/* SMs per group of the cluster grain: co-schedulable groups that run clusters of up to
 * this many blocks (docs/performance.md §16.3: the H200's 8-SM groups run 1, 2, 4 and 8) */
#define TIDAL_CLUSTER_GRAIN 8

typedef struct tidal__green {
    tidal_smset set;
    CUgreenCtx g;
    unsigned cluster_max; /* the largest cluster (blocks) its streams run: its grain's group size */
} tidal__green;

/* The green context of exactly set (made when create and set is a union of groups; one
 * per set, cached), or NULL: placement is off, set is no union of groups, or none is
 * left. */
const tidal__green *tidal__green_for(const tidal_smset *set, int create);
/* The green context of the cluster grain's groups inside set (their union, a subset of
 * set; made once per union, cached), or NULL: placement or the cluster grain is off, no
 * such group lies inside set, or none is left. */
const tidal__green *tidal__green_cluster_for(const tidal_smset *set);
/* Whether set is a union of groups (placement on). */
int tidal__green_is_union(const tidal_smset *set);
void tidal__green_teardown(void);

#endif
