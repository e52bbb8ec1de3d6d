/* functions.h — what each launched function is (functions.c): libtidal's table of
 * functions by handle, each classified once, on first sight. The launch path looks a
 * function up here on every launch; the fields after the classification are its own
 * per-function caches (functions.c only zeroes them). Called with the lock held. */
#ifndef TIDAL_FUNCTIONS_H
#define TIDAL_FUNCTIONS_H

#include <stdint.h>

#include "modules.h"

/* Measured durations of a rewritten kernel, per logical grid size (launch.c: hybrid
 * placement). */
#define TIDAL_FN_SAMPLES 4
typedef struct tidal__duration {
    uint32_t total;  /* logical blocks; 0 = unused */
    uint16_t n;      /* samples of the original taken */
    uint16_t nclone; /* samples of the clone taken */
    float us;        /* the least original sample */
    float clone_us;  /* the least clone sample */
    int pending;     /* a sample is in flight */
} tidal__duration;

enum { FN_UNKNOWN, FN_REWRITTEN, FN_REFUSED, FN_CLONE };

typedef struct tidal__fn {
    /* the classification (functions.c) */
    CUfunction f;  /* as launched (a CUfunction or a CUkernel); NULL: empty hash slot */
    CUfunction fn; /* f as this context's CUfunction */
    int kind;
    CUfunction clone;
    unsigned nparams;     /* of the original */
    size_t launch_off;    /* offset of the clone's tidal_launch parameter */
    tidal__module *mod;   /* its module (NULL: none); the module's attached partition places
                             launches from streams bound to none */
    size_t *poff, *psize; /* the original's parameter offsets and sizes (nparams each) */
    /* launch.c's caches */
    int occ_threads, occ; /* occupancy cache (clone, last block size, its dynamic smem) */
    unsigned occ_smem;
    /* Dynamic shared memory (launch.c, clone_smem): the clone is launched with the launch's
     * bytes + its shared words (TIDAL_CLONE_SMEM). 0 where not read yet. */
    int clone_dyn;      /* the clone's MAX_DYNAMIC_SHARED_SIZE_BYTES, as read or set */
    int clone_static;   /* the clone's static shared memory (SHARED_SIZE_BYTES) */
    int smem_read;      /* clone_dyn and clone_static were read */
    int smem_full_said; /* a launch that left no room for the words was logged */
    unsigned cluster;   /* blocks per cluster it requires by itself (0: not read yet) */
    tidal__duration dur[TIDAL_FN_SAMPLES];
} tidal__fn;

/* The function launched as f (kernel: f is known to be a CUkernel), classified on first
 * sight; NULL without memory. */
tidal__fn *tidal__fn_lookup(CUfunction f, int kernel);
/* f's slot in the table, or the empty slot it would take (NULL: no table yet). */
tidal__fn *tidal__fn_slot(CUfunction f);
void tidal__fns_teardown(void);

#endif
