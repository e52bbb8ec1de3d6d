/* rt_state.h — libtidal's process state, shared by runtime.c (partitions, streams,
 * modules) and launch.c (the launch path). Everything below is guarded by rt.lock. */
#ifndef TIDAL_RT_STATE_H
#define TIDAL_RT_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "runtime_internal.h"
#include "tidal_abi.h"

/* Slots per partition: the first TIDAL_STREAM_SLOTS are given to streams (epoch mode,
 * one per stream that launches clones into the partition: stream order frees it), the
 * other TIDAL_PROBE_SLOTS are searched by probe-mode launches (case b, graph-captured
 * clones; the GPU runs at most 128 kernels at once). */
#define TIDAL_STREAM_SLOTS 128
#define TIDAL_PROBE_SLOTS 128
#define TIDAL_NSLOTS (TIDAL_STREAM_SLOTS + TIDAL_PROBE_SLOTS)
#define TIDAL_MAX_GREEN 32 /* green contexts per process (one per SM set used) */

/* A reshaped launch that may still run: enough to start joiners for it when its
 * partition is given SMs (flow-in). */
#define TIDAL_INFLIGHT 32
typedef struct rt_inflight {
    int used;
    uint64_t key;
    CUfunction clone;
    unsigned workers, block[3], smem; /* smem: the clone's dynamic shared memory */
    unsigned occ;                     /* workers per SM: joiners are occ per SM the partition gained */
    unsigned char *buf;               /* the clone's parameter buffer, tidal_launch included */
    size_t bufsize, launch_off;
    CUevent done; /* recorded after the launch on its stream */
} rt_inflight;

struct tidal_part {
    char name[32];
    tidal_smset mask;      /* as applied: clipped to the device's SMs */
    CUdeviceptr dev;       /* tidal_partition header + TIDAL_NSLOTS slots */
    CUdeviceptr sm_blocks; /* uint64_t[TIDAL_MAX_SMS], 0 when TIDAL_HISTOGRAM=0 */
    int remote;            /* owned by tidald: changed only through it */
    unsigned bound;        /* streams bound + modules whose __tidal_ctl points here */
    rt_inflight inflight[TIDAL_INFLIGHT];
    unsigned inflight_next;
    unsigned stream_slots; /* stream slots handed out (never taken back: a stream's end is
                              not seen) */
    int place_mode;        /* TIDAL_PLACE_* */
    unsigned short_us;     /* hybrid: originals below this measured duration */
    struct tidal_part *next;
};

/* What libtidal knows of a stream: its binding, its SMs, its slot. */
typedef struct rt_stream_binding {
    CUstream stream;
    struct tidal_part *part;      /* bound partition; NULL: the default partition */
    int green;                    /* made by tidal_partition_stream in a green context */
    tidal_smset sms;              /* the SMs its kernels can run on (all when not green) */
    struct tidal_part *slot_part; /* partition of its slot (0 = none yet) */
    unsigned slot, epoch;         /* its slot there and the epoch of its last clone launch */
    /* The slot of the graph capture it is in: the capture's clones run in epoch mode on
     * it, after a memset node that the capture records before the first of them, so that
     * every replay starts the slot afresh (replays of one graph exec are serialized). */
    struct tidal_part *cap_part;
    unsigned long long cap_id;
    unsigned cap_slot, cap_epoch;
} rt_stream_binding;

typedef struct rt_green {
    tidal_smset set;
    CUgreenCtx g;
} rt_green;

/* Measured durations of a rewritten kernel, per logical grid size (hybrid placement).
 * An unmeasured kernel runs first as the clone (it obeys the mask), timed; only a kernel
 * whose clone ran below TIDAL_TRIAL_FACTOR x the short threshold is tried as the original
 * (timed too), and the original's own samples then decide. So no launch of an unmeasured
 * kernel holds a removed SM for longer than TIDAL_TRIAL_FACTOR x short_us. */
#define TIDAL_FN_SAMPLES 4
#define TIDAL_TRIAL_FACTOR                                         \
    3.0f /* a persistent clone of a memory-bound kernel runs up to \
            2.7x the original (H200, BERT-large softmax 19.8 vs 7.3 us) */
typedef struct rt_duration {
    uint32_t total;  /* logical blocks; 0 = unused */
    uint16_t n;      /* samples of the original taken */
    uint16_t nclone; /* samples of the clone taken */
    float us;        /* the least original sample */
    float clone_us;  /* the least clone sample */
    int pending;     /* a sample is in flight */
} rt_duration;

/* One function of a rewritten module, as listed when the module was first seen: an
 * original with its clone (NULL: the pass refused it), or a clone. */
typedef struct rt_mod_fn {
    CUfunction fn;
    CUfunction clone;
    const char *name; /* the driver's (valid while the module is loaded) */
    int is_clone;
} rt_mod_fn;

typedef struct rt_module {
    CUmodule mod;
    int rewritten;
    int has_ctl;            /* defines __tidal_ctl (rewritten with case b: an 8-byte marker) */
    struct tidal_part *ctl; /* the partition it is attached to; with has_ctl, what __tidal_ctl
                             * was set to (NULL: still 0) */
    rt_mod_fn *fns;         /* rewritten: every function, sorted by handle */
    rt_mod_fn *fns_by_name; /* the same, sorted by name */
    unsigned nfns;
} rt_module;

enum { FN_UNKNOWN, FN_REWRITTEN, FN_REFUSED, FN_CLONE };

typedef struct rt_fn {
    CUfunction f;  /* as launched (a CUfunction or a CUkernel); NULL: empty hash slot */
    CUfunction fn; /* f as this context's CUfunction */
    int kind;
    CUfunction clone;
    unsigned nparams;     /* of the original */
    size_t launch_off;    /* offset of the clone's tidal_launch parameter */
    int occ_threads, occ; /* occupancy cache (clone, last block size, its dynamic smem) */
    unsigned occ_smem;
    /* Dynamic shared memory (launch.c, clone_smem): the clone is launched with the launch's
     * bytes + its shared words (TIDAL_CLONE_SMEM). 0 where not read yet. */
    int clone_dyn;        /* the clone's MAX_DYNAMIC_SHARED_SIZE_BYTES, as read or set */
    int clone_static;     /* the clone's static shared memory (SHARED_SIZE_BYTES) */
    int smem_read;        /* clone_dyn and clone_static were read */
    int smem_full_said;   /* a launch that left no room for the words was logged */
    int mod_ix;           /* its module in rt.modules (-1: none); the module's attached
                             partition places launches from streams bound to none */
    size_t *poff, *psize; /* the original's parameter offsets and sizes (nparams each) */
    rt_duration dur[TIDAL_FN_SAMPLES];
} rt_fn;

/* A duration sample in flight: events around one launch (clone or original). They are kept in launch
 * order (a ring), so each launch polls only the oldest until one is not done: a model's
 * first eager call can have hundreds in flight, and every kernel of it should be timed
 * before a graph capture places it. */
#define TIDAL_PENDING 512
typedef struct rt_pending {
    CUfunction f; /* key of the rt_fn (the table moves when it grows) */
    uint32_t total;
    CUevent start, end; /* created once, reused */
    int used;           /* 0: cancelled (its events were not recorded) */
    int clone;          /* it times the clone (else the original) */
} rt_pending;

typedef struct rt_state {
    pthread_mutex_t lock;
    int initialized;
    int init_failed; /* interposers: tidal__ensure_init printed why, launches pass through */
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
    rt_fn *fns; /* open addressing on f */
    unsigned fn_cap, fn_count;
    atomic_ullong n_rewritten, n_unknown, n_refused, n_unmasked, n_joins, n_graph_probe;
    atomic_ullong n_smem_full; /* of n_unmasked: no room for the clone's shared words */
    int smem_optin;            /* the device's opt-in shared memory per block (0: not read, -1: none) */
    int flow_in;               /* TIDAL_FLOW_IN (default 1): start joiners when a partition grows */
    CUstream join_stream;      /* joiners run here, beside the stream their owner waits on */
    uint64_t next_key;
    unsigned short_us; /* TIDAL_SHORT_US (default 20) */
    int place_mode;    /* TIDAL_PLACEMENT (hybrid, persistent, original) */
    /* placement (green.c) */
    int green_state; /* 0 not tried, 1 ready, -1 unavailable */
    unsigned ngroups;
    CUdevResource groups[TIDAL_MAX_SMS];
    tidal_smset group_sms[TIDAL_MAX_SMS];
    rt_green greens[TIDAL_MAX_GREEN];
    unsigned ngreens;
    rt_pending pending[TIDAL_PENDING];
    unsigned pending_head, npending; /* the ring: oldest, count */
    unsigned chunk_us;               /* TIDAL_CHUNK_US (default 20): measured kernels get chunks of about
                                        this long, which bounds how long a worker stays on a removed SM */
    /* the sample gate (launch.c): a timed launch's stream waits on this pinned word until
     * the host has queued the launch and its end event, so the start event does not fire
     * a launch call's time before the kernel arrives */
    _Atomic uint32_t *gate; /* host view; NULL: no gate (samples include the gap) */
    CUdeviceptr gate_dev;
    atomic_uint gate_seq;
    unsigned static_share; /* TIDAL_STATIC_SHARE (0-100, default 75): percent of a measured kernel's
                              grid that its workers' own chunks cover in a placed launch (no claim);
                              0: own chunks as large as the tickets */
    atomic_ullong n_original;
} rt_state;

extern rt_state rt;

/* launch.c, at init: the sample gate (rt.gate), when the driver has stream waits on
 * host memory; otherwise rt.gate stays NULL and duration samples include the launch gap. */
void rt_gate_init(void);

/* functions.c, called with rt.lock held: the function launched as f (kernel: f is known
 * to be a CUkernel), classified on first sight; NULL without memory. rt_fn_slot: f's slot
 * in the table, or the empty slot it would take (NULL: no table yet). */
rt_fn *rt_fn_lookup(CUfunction f, int kernel);
rt_fn *rt_fn_slot(CUfunction f);

/* runtime.c, called with rt.lock held */
struct tidal_part *rt_stream_partition(CUstream s);
rt_module *rt_module_get(CUmodule m); /* records the module (classifies it) on first sight */
/* f in a rewritten m, by handle, else by name (the driver's handle for a listed function
 * need not be the listed one); NULL: not in m */
const rt_mod_fn *rt_module_fn(const rt_module *m, CUfunction f);
int rt_module_set_ctl(rt_module *m, struct tidal_part *p);
CUstream rt_norm_stream(CUstream s, int ptsz);
rt_stream_binding *rt_stream_get(CUstream s, int create);
/* Grow one of the tables above to room for n elements (0, or -1 out of memory). */
int rt_grow(void **arr, unsigned *cap, unsigned n, size_t elem);
/* API calls: libtidal's context current (the thread's own put back after) and the
 * thread's capture mode relaxed for the call (runtime.c). */
typedef struct rt_call {
    CUcontext ctx;
    CUstreamCaptureMode mode;
} rt_call;
rt_call rt_ctx_enter(void);
void rt_ctx_leave(rt_call c);
/* With rt.lock held: fail the calling API function unless libtidal is initialized. */
#define NEED_INIT(fn)                                                        \
    do {                                                                     \
        if (!rt.initialized) {                                               \
            pthread_mutex_unlock(&rt.lock);                                  \
            return tidal__fail(TIDAL_ERR_NOT_INIT, fn " before tidal_init"); \
        }                                                                    \
    } while (0)
/* green.c */
int rt_green_ready(void);
const rt_green *rt_green_for(const tidal_smset *set, int create);
int rt_green_is_union(const tidal_smset *set);
void rt_green_free(void);
/* launch.c: remember a reshaped launch (with rt.lock held); start joiners for p's running
 * launches after its mask grew by `added` SMs */
void rt_inflight_add(struct tidal_part *p, const rt_inflight *rec, CUstream s);
void rt_inflight_grow(struct tidal_part *p, unsigned added_sms);
/* Driver calls libtidal makes for itself (queries, synchronizes) while a stream of the
 * process may be capturing a graph in global mode: relaxed, so they do not invalidate it. */
CUstreamCaptureMode rt_capture_relax(void);
void rt_capture_restore(CUstreamCaptureMode m);
void rt_inflight_free(struct tidal_part *p);

#endif
