/* launch.h — the launch path (launch.c), as entry.c (the interposers' way in), init.c and
 * stats.c call it. */
#ifndef TIDAL_LAUNCH_H
#define TIDAL_LAUNCH_H

#include "runtime_internal.h"

/* The launch path's settings, from the environment (init.c) */
typedef struct tidal__launch_config {
    unsigned max_chunk;    /* TIDAL_MAX_CHUNK (1-32, default 32): bounds how long a worker keeps
                              running on an SM after it is taken away */
    unsigned chunk_us;     /* TIDAL_CHUNK_US (default 20): measured kernels get chunks of about
                              this long, which bounds how long a worker stays on a removed SM */
    unsigned static_share; /* TIDAL_STATIC_SHARE (0-100, default 75): percent of a measured kernel's
                              grid that its workers' own chunks cover in a placed launch (no claim);
                              0: own chunks as large as the tickets */
    int gate;              /* TIDAL_SAMPLE_GATE (default 1): duration samples without the launch gap */
    int flow_in;           /* TIDAL_FLOW_IN (default 1): record clone launches, for joiners */
} tidal__launch_config;

/* One launch of an initialized libtidal, as tidal__launch_or_decline does it
 * (runtime_internal.h): *handled (0 on entry) becomes 1 when it launched. */
CUresult tidal__launch_run(const tidal_launch_req *q, int *handled);
/* The launch exactly as the interposer received it, through the driver table. */
CUresult tidal__launch_given(const tidal_launch_req *q);

/* With the lock held: take the settings (and set up the sample gate) at init; free the
 * samples' events and the gate at teardown. */
void tidal__launch_init(const tidal__launch_config *c);
void tidal__launch_teardown(void);

/* The launch counters of tidal_stats (all but joins), and their reset. */
void tidal__launch_counts(tidal_stats *out);
void tidal__launch_counts_reset(void);

#endif
