/* rt_state.h — libtidal's process state, shared by runtime.c (partitions, streams,
 * modules) and launch.c (the launch path). Everything below is guarded by rt.lock. */
#ifndef TIDAL_RT_STATE_H
#define TIDAL_RT_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "runtime_internal.h"
#include "tidal_abi.h"

#define TIDAL_NSLOTS 128 /* slots per partition: the GPU runs at most 128 kernels at once */

/* A reshaped launch that may still run: enough to start joiners for it when its
 * partition is given SMs (flow-in). */
#define TIDAL_INFLIGHT 32
typedef struct rt_inflight {
    int used;
    uint64_t key;
    CUfunction clone;
    unsigned workers, block[3], smem;
    unsigned char *buf;    /* the clone's parameter buffer, tidal_launch included */
    size_t bufsize, launch_off;
    CUevent done;          /* recorded after the launch on its stream */
} rt_inflight;

struct tidal_part {
    char name[32];
    tidal_smset mask;     /* as applied: clipped to the device's SMs */
    CUdeviceptr dev;      /* tidal_partition header + TIDAL_NSLOTS slots */
    CUdeviceptr sm_blocks;  /* uint64_t[TIDAL_MAX_SMS], 0 when TIDAL_HISTOGRAM=0 */
    int remote;           /* owned by tidald: changed only through it */
    unsigned bound;       /* streams bound + modules whose __tidal_ctl points here */
    rt_inflight inflight[TIDAL_INFLIGHT];
    unsigned inflight_next;
    struct tidal_part *next;
};

typedef struct rt_stream_binding {
    CUstream stream;
    struct tidal_part *part;
} rt_stream_binding;

typedef struct rt_module {
    CUmodule mod;
    int rewritten;
    struct tidal_part *ctl;  /* what __tidal_ctl was set to (NULL: still 0) */
} rt_module;

enum { FN_UNKNOWN, FN_REWRITTEN, FN_REFUSED, FN_CLONE };

typedef struct rt_fn {
    CUfunction f;          /* as launched (a CUfunction or a CUkernel); NULL: empty hash slot */
    CUfunction fn;         /* f as this context's CUfunction */
    int kind;
    CUfunction clone;
    unsigned nparams;      /* of the original */
    size_t launch_off;     /* offset of the clone's tidal_launch parameter */
    int occ_threads, occ;  /* occupancy cache (clone, last block size, smem) */
    unsigned occ_smem;
    int smem_limit;        /* dynamic smem the clone is allowed (mirrors the original) */
    size_t *poff, *psize;  /* the original's parameter offsets and sizes (nparams each) */
} rt_fn;

typedef struct rt_state {
    pthread_mutex_t lock;
    int initialized;
    int init_failed;       /* interposers: tidal__ensure_init printed why, launches pass through */
    const tidal_cu *cu;
    tidal_cu cu_table;
    CUcontext ctx;
    CUdevice dev;
    unsigned nsm;
    int is_mps;
    int histogram;
    unsigned max_chunk;    /* TIDAL_MAX_CHUNK (1-32, default 32): bounds how long a worker keeps
                              running on an SM after it is taken away */
    CUstream ctl_stream;   /* non-blocking: mask writes never wait for running kernels */
    unsigned char *pinned; /* staging for ctl_stream copies (page-locked: truly async) */
    struct tidal_part *parts;
    struct tidal_part *default_part;
    char default_name[32]; /* TIDAL_PARTITION naming a tidald partition not seen yet */
    rt_stream_binding *bindings;
    unsigned nbindings, cap_bindings;
    rt_module *modules;
    unsigned nmodules, cap_modules;
    rt_fn *fns;            /* open addressing on f */
    unsigned fn_cap, fn_count;
    atomic_ullong n_rewritten, n_unknown, n_refused, n_unmasked, n_joins;
    int flow_in;           /* TIDAL_FLOW_IN (default 1): start joiners when a partition grows */
    CUstream join_stream;  /* joiners run here, beside the stream their owner waits on */
    uint64_t next_key;
} rt_state;

extern rt_state rt;

/* runtime.c, called with rt.lock held */
struct tidal_part *rt_stream_partition(CUstream s);
rt_module *rt_module_get(CUmodule m);   /* records the module (classifies it) on first sight */
int rt_module_set_ctl(rt_module *m, struct tidal_part *p);
void rt_module_load_all(CUmodule m);
CUstream rt_norm_stream(CUstream s, int ptsz);
/* launch.c: remember a reshaped launch (with rt.lock held); start joiners for p's running
 * launches after its mask grew by `added` SMs */
void rt_inflight_add(struct tidal_part *p, const rt_inflight *rec, CUstream s);
void rt_inflight_grow(struct tidal_part *p);
void rt_inflight_free(struct tidal_part *p);

#endif
