/* streams.h — what libtidal knows of a stream (streams.c): its binding to a partition, the
 * SMs its kernels can run on (a partition stream's green context), and its slots. The
 * launch path finds a stream's record here on every launch; the slot fields are launch.c's
 * (streams.c zeroes them, and forgets a destroyed partition's). Called with the lock held. */
#ifndef TIDAL_STREAMS_H
#define TIDAL_STREAMS_H

#include "runtime_internal.h"

struct tidal_part;

typedef struct tidal__stream {
    CUstream stream;
    struct tidal_part *part; /* bound partition; NULL: the default partition */
    int green;               /* made by tidal_partition_stream in a green context */
    tidal_smset sms;         /* the SMs its kernels can run on (all when not green) */
    /* A green stream runs thread-block clusters of at most cluster_max blocks (its
     * green context's group size); launches with larger ones go to route, a stream of
     * the same priority in the green context of the cluster groups inside the partition
     * (green.c), ordered against this one by the fork and join events (routes.c). */
    unsigned cluster_max; /* 0: no limit (not green) */
    CUstream route;       /* NULL: no cluster group lies inside the partition's SMs */
    CUevent fork, join;
    /* launch.c's: its slot and the epoch of its last clone launch there */
    struct tidal_part *slot_part; /* partition of its slot (0 = none yet) */
    unsigned slot, epoch;
    /* The slot of the graph capture it is in: the capture's clones run in epoch mode on
     * it, after a memset node that the capture records before the first of them, so that
     * every replay starts the slot afresh (replays of one graph exec are serialized). */
    struct tidal_part *cap_part;
    unsigned long long cap_id;
    unsigned cap_slot, cap_epoch;
} tidal__stream;

/* The stream a launch names: the legacy stream is NULL, and stream 0 of a _ptsz entry point
 * the per-thread stream. */
static inline CUstream tidal__norm_stream(CUstream s, int ptsz)
{
    if (s == CU_STREAM_LEGACY) return NULL;
    if (s == NULL && ptsz) return CU_STREAM_PER_THREAD;
    return s;
}

/* s's record (create: made on first sight, every SM reachable); NULL: none, or no memory. */
tidal__stream *tidal__stream_get(CUstream s, int create);
/* p is destroyed: the streams' slots there die with it (partitions.c's hook). */
void tidal__streams_forget(struct tidal_part *p);
void tidal__streams_teardown(void);

#endif
