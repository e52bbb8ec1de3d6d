/* launch.c — the launch path shared by every interposer (cuLaunchKernel[Ex] hooks, the
 * cudaLaunchKernel wrappers, tidal_launch_kernel).
 *
 * A kernel from a rewritten module runs as its reshaped clone NAME__tidal_reshaped:
 * persistent workers sized over ALL SMs (so SMs given to the partition later find
 * workers there), each claiming chunks of the original grid's logical blocks on the SMs
 * of the stream's partition (tidal_abi.h, case c). The clone takes one more by-value
 * parameter, a tidal_launch, appended after the original parameters, both for
 * kernelParams and for CU_LAUNCH_PARAM_BUFFER_POINTER launches. Anything else (kernels
 * without the rewrite, kernels the pass refused, cooperative or clustered launches,
 * grids the clone cannot take) is launched exactly as given, but for one thing: on a
 * partition stream whose green context runs clusters of at most 2 blocks, a launch with
 * larger clusters goes to the stream's cluster route (routes.c). What a function is comes
 * from functions.c (tidal__fn_lookup), a stream's binding and slot from streams.c, the
 * partition from partitions.c; a launch that may flow in is recorded with flowin.c. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "flowin.h"
#include "functions.h"
#include "launch.h"
#include "partitions.h"
#include "routes.h"
#include "streams.h"

/* An unmeasured kernel runs first as the clone (it obeys the mask), timed; only a kernel
 * whose clone ran below TIDAL_TRIAL_FACTOR x the short threshold is tried as the original
 * (timed too), and the original's own samples then decide. So no launch of an unmeasured
 * kernel holds a removed SM for longer than TIDAL_TRIAL_FACTOR x short_us. */
#define TIDAL_TRIAL_FACTOR                                         \
    3.0f /* a persistent clone of a memory-bound kernel runs up to \
            2.7x the original (H200, BERT-large softmax 19.8 vs 7.3 us) */

/* A duration sample in flight: events around one launch (clone or original). They are kept
 * in launch order (a ring), so each launch polls only the oldest until one is not done: a
 * model's first eager call can have hundreds in flight, and every kernel of it should be
 * timed before a graph capture places it. */
#define TIDAL_PENDING 512
typedef struct pending_sample {
    CUfunction f; /* key of the tidal__fn (the table moves when it grows) */
    uint32_t total;
    CUevent start, end; /* created once, reused */
    int used;           /* 0: cancelled (its events were not recorded) */
    int clone;          /* it times the clone (else the original) */
} pending_sample;

/* The launch path's state, guarded by the lock but for the counters and the gate. */
static struct {
    tidal__launch_config cfg;
    atomic_ullong n_rewritten, n_original, n_unknown, n_refused, n_unmasked, n_graph_probe;
    atomic_ullong n_smem_full; /* of n_unmasked: no room for the clone's shared words */
    int smem_optin;            /* the device's opt-in shared memory per block (0: not read, -1: none) */
    uint64_t next_key;
    pending_sample pending[TIDAL_PENDING];
    unsigned pending_head, npending; /* the ring: oldest, count */
    /* the sample gate: a timed launch's stream waits on this pinned word until the host has
     * queued the launch and its end event, so the start event does not fire a launch
     * call's time before the kernel arrives */
    _Atomic uint32_t *gate; /* host view; NULL: no gate (samples include the gap) */
    CUdeviceptr gate_dev;
    atomic_uint gate_seq;
} L;

/* ------------------------------------------------------------------ launching */

CUresult tidal__launch_given(const tidal_launch_req *q)
{
    if (q->ex) {
        if (q->ptsz && tidal__cu()->LaunchKernelEx_ptsz)
            return tidal__cu()->LaunchKernelEx_ptsz(q->ex, q->f, q->params, q->extra);
        CUlaunchConfig c = *q->ex;
        c.hStream = tidal__norm_stream(c.hStream, q->ptsz);
        return tidal__cu()->LaunchKernelEx(&c, q->f, q->params, q->extra);
    }
    if (q->ptsz && tidal__cu()->LaunchKernel_ptsz)
        return tidal__cu()->LaunchKernel_ptsz(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1],
                                              q->block[2], q->smem, q->stream, q->params, q->extra);
    return tidal__cu()->LaunchKernel(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2],
                                     q->smem, tidal__norm_stream(q->stream, q->ptsz), q->params, q->extra);
}

/* Launch attributes the clone cannot honour (grid-wide sync, clusters): run as given. */
static int ex_needs_original(const CUlaunchConfig *c)
{
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative) return 1;
    return tidal__ex_cluster_blocks(c) > 1;
}

/* The device's opt-in limit of shared memory per block (static + dynamic), read once;
 * -1 where the driver does not say. */
static int smem_optin(void)
{
    if (L.smem_optin == 0) {
        int v = 0;
        CUresult r = tidal__cu()->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                                     tidal__device_id());
        L.smem_optin = r == CUDA_SUCCESS && v > 0 ? v : -1;
    }
    return L.smem_optin;
}

enum { SMEM_OK, SMEM_NO_ROOM, SMEM_DRIVER_ERROR };

/* The clone keeps the protocol's shared words in the tail of its dynamic shared memory
 * (abi/tidal_abi.h, TIDAL_SH_*), so that its static shared memory is the original's: a
 * launch with smem dynamic bytes runs it with *need = TIDAL_CLONE_SMEM(smem). The clone
 * must be allowed that much (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, set here
 * when a launch needs more than it has), within the device's opt-in limit minus its
 * static size: a launch within TIDAL_SH_BYTES of that limit has no room and runs as given,
 * unmasked (SMEM_NO_ROOM, counted and said by the caller). The original's own attribute
 * is not consulted: it is set on a CUkernel by cudart and on a CUfunction by the driver
 * API, and only the clone's matters for the clone's launch. */
static int clone_smem(tidal__fn *e, unsigned smem, unsigned *need)
{
    int optin = smem_optin();
    if (smem > UINT32_MAX - TIDAL_SH_ALIGN - TIDAL_SH_BYTES) return SMEM_NO_ROOM;
    *need = TIDAL_CLONE_SMEM(smem);
    if (!e->smem_read) {
        int dyn = 0, st = 0;
        if (tidal__cu()->FuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, e->clone) !=
                CUDA_SUCCESS ||
            tidal__cu()->FuncGetAttribute(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, e->clone) != CUDA_SUCCESS)
            return SMEM_DRIVER_ERROR;
        e->clone_dyn = dyn;
        e->clone_static = st;
        e->smem_read = 1;
    }
    if (*need <= (unsigned)e->clone_dyn) return SMEM_OK;
    if (optin > 0 && (uint64_t)*need + (uint64_t)e->clone_static > (uint64_t)optin) return SMEM_NO_ROOM;
    if (tidal__cu()->FuncSetAttribute(e->clone, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)*need) !=
        CUDA_SUCCESS)
        return optin > 0 ? SMEM_DRIVER_ERROR : SMEM_NO_ROOM;
    e->clone_dyn = (int)*need;
    return SMEM_OK;
}

/* A launch the clone cannot take for its dynamic shared memory: counted, and said once
 * per kernel (it runs unmasked: never silently). */
static void smem_declined(tidal__fn *e, int why, unsigned smem, unsigned need)
{
    if (why == SMEM_NO_ROOM) atomic_fetch_add(&L.n_smem_full, 1);
    if (why == SMEM_NO_ROOM && e->smem_full_said) return; /* said once: no driver call per launch */
    const char *name = NULL;
    if (tidal__cu()->FuncGetName(&name, e->fn) != CUDA_SUCCESS || !name) name = "(unnamed)";
    if (why == SMEM_NO_ROOM) {
        if (!e->smem_full_said)
            tidal__warn("%s: %u bytes of dynamic shared memory leave no room for the clone's %d-byte protocol "
                        "words (%u + %d static > the device's %d per block); its launches this large run "
                        "unmasked (launches_smem_full)",
                        name, smem, TIDAL_SH_BYTES, need, e->clone_static, smem_optin());
        e->smem_full_said = 1;
    } else {
        tidal__log("%s: reading or setting its clone's shared memory attributes failed; launched as given", name);
    }
}

static int occupancy(tidal__fn *e, int threads, unsigned smem)
{
    if (e->occ_threads == threads && e->occ_smem == smem) return e->occ;
    int occ = 0;
    if (tidal__cu()->OccupancyMaxActiveBlocksPerMultiprocessor(&occ, e->clone, threads, smem) != CUDA_SUCCESS) occ = 0;
    e->occ_threads = threads;
    e->occ_smem = smem;
    e->occ = occ;
    return occ;
}

/* Decide under the lock; launch outside it. */
typedef struct plan {
    int reshape;  /* launch the clone */
    int original; /* a rewritten kernel launched as the original (placed) */
    struct tidal_part *part;
    CUfunction clone;
    unsigned workers;
    tidal_launch tl;
    unsigned nparams; /* of the original (tidal__fn fields the launch needs) */
    size_t launch_off;
    const size_t *poff, *psize;
    CUstream stream;
    int sample;        /* L.pending index to time this original launch with, or -1 */
    CUdeviceptr reset; /* epoch wrap: zero this slot's claim and guard words first */
    int remember;      /* record for flow-in */
    unsigned occ;      /* workers per SM */
    unsigned smem;     /* the clone's dynamic shared memory: the launch's + its words */
    /* the stream's cluster route (streams.h), for a launch not handled here */
    unsigned cluster_max; /* 0: none */
    CUstream route;
    unsigned fn_cluster; /* blocks per cluster the function requires by itself */
} plan;

/* Parameters of the clone: the original ones + &tl (kernelParams) or the original buffer
 * with tl at its offset (extra). The driver copies both at launch time, so stack storage
 * is enough. */
#define MAX_STACK_PARAMS 64
#define MAX_STACK_BUF 4352

typedef struct clone_args {
    void *pbuf[MAX_STACK_PARAMS + 1];
    void **params;
    void *extra[5];
    unsigned char buf[MAX_STACK_BUF];
    unsigned char *bufp;
    size_t bufsize;
} clone_args;

static int build_args(clone_args *a, const plan *e, const tidal_launch_req *q, tidal_launch *tl)
{
    a->params = NULL;
    a->bufp = NULL;
    if (q->params) {
        a->params = e->nparams < MAX_STACK_PARAMS ? a->pbuf : malloc((e->nparams + 1) * sizeof(void *));
        if (!a->params) return -1;
        memcpy(a->params, q->params, e->nparams * sizeof(void *));
        a->params[e->nparams] = tl;
        return 0;
    }
    if (!q->extra) { /* a kernel without parameters */
        if (e->nparams != 0) return -1;
        a->params = a->pbuf;
        a->params[0] = tl;
        return 0;
    }
    void *src = NULL;
    size_t srcsize = 0;
    int have_size = 0;
    for (unsigned i = 0; q->extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (q->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            src = q->extra[i + 1];
        else if (q->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            srcsize = *(size_t *)q->extra[i + 1];
            have_size = 1;
        } else
            return -1; /* an option this code does not know: launch as given */
    }
    if (!src || !have_size) return -1;
    a->bufsize = e->launch_off + sizeof *tl;
    a->bufp = a->bufsize <= MAX_STACK_BUF ? a->buf : malloc(a->bufsize);
    if (!a->bufp) return -1;
    memset(a->bufp, 0, a->bufsize);
    memcpy(a->bufp, src, srcsize < e->launch_off ? srcsize : e->launch_off);
    memcpy(a->bufp + e->launch_off, tl, sizeof *tl);
    a->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    a->extra[1] = a->bufp;
    a->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    a->extra[3] = &a->bufsize;
    a->extra[4] = CU_LAUNCH_PARAM_END;
    return 0;
}

static void free_args(clone_args *a)
{
    if (a->params && a->params != a->pbuf) free(a->params);
    if (a->bufp && a->bufp != a->buf) free(a->bufp);
}

/* ------------------------------------------------------------------ durations */

/* The measured duration of f's launches with `total` logical blocks (NULL: none yet). */
static tidal__duration *duration_of(tidal__fn *e, uint32_t total, int create)
{
    tidal__duration *free_d = NULL;
    for (int i = 0; i < TIDAL_FN_SAMPLES; i++) {
        if (e->dur[i].total == total) return &e->dur[i];
        if (!e->dur[i].total && !free_d) free_d = &e->dur[i];
    }
    if (!create) return NULL;
    if (!free_d) free_d = &e->dur[total % TIDAL_FN_SAMPLES]; /* many grid sizes: reuse one */
    memset(free_d, 0, sizeof *free_d);
    free_d->total = total;
    return free_d;
}

/* Collect the duration samples that have completed, oldest first, up to the first that
 * has not (samples complete about in launch order: each launch polls few events). */
static void poll_pending(void)
{
    if (!L.npending) return;
    CUstreamCaptureMode mode = tidal__capture_relax(); /* a query must not break a capture */
    while (L.npending) {
        pending_sample *q = &L.pending[L.pending_head];
        CUresult r = CUDA_SUCCESS;
        if (q->used) {
            r = tidal__cu()->EventQuery(q->end);
            if (r == CUDA_ERROR_NOT_READY) break;
        }
        L.pending_head = (L.pending_head + 1) % TIDAL_PENDING;
        L.npending--;
        if (!q->used) continue; /* cancelled */
        q->used = 0;
        float ms = 0;
        tidal__fn *e = tidal__fn_slot(q->f);
        tidal__duration *d = e && e->f == q->f ? duration_of(e, q->total, 0) : NULL;
        if (d) d->pending = 0;
        if (r != CUDA_SUCCESS || !d || tidal__cu()->EventElapsedTime(&ms, q->start, q->end) != CUDA_SUCCESS) continue;
        /* the least of the samples: a first launch carries warm-up costs */
        float us = ms * 1000.0f;
        if (q->clone) {
            if (d->nclone == 0 || us < d->clone_us) d->clone_us = us;
            d->nclone++;
        } else {
            if (d->n == 0 || us < d->us) d->us = us;
            d->n++;
        }
    }
    tidal__capture_restore(mode);
}

/* The next pending sample in the ring, with its events, or -1 (the ring is full). */
static int pending_slot(void)
{
    if (!tidal__cu()->EventElapsedTime || L.npending == TIDAL_PENDING) return -1;
    unsigned i = (L.pending_head + L.npending) % TIDAL_PENDING;
    pending_sample *q = &L.pending[i];
    if (!q->start && tidal__cu()->EventCreate(&q->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return -1;
    if (!q->end && tidal__cu()->EventCreate(&q->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return -1;
    return (int)i;
}

/* Take the next ring entry for a sample of f (with total logical blocks), or -1 (ring
 * full, no events, or d has one in flight). */
static int take_sample(tidal__duration *d, CUfunction f, uint32_t total, int clone)
{
    if (d->pending) return -1;
    int i = pending_slot();
    if (i < 0) return -1;
    pending_sample *smp = &L.pending[i];
    smp->used = 1;
    smp->f = f;
    smp->total = total;
    smp->clone = clone;
    L.npending++;
    d->pending = 1;
    return i;
}

/* The sample gate. A launch on an idle stream starts a few microseconds after its start
 * event fires: the event is queued first, and the launch call itself takes that long on
 * the host. An eager model's GPU idles between launches, so a plain event pair timed
 * BERT-large's GELU (15 us) at 20+ us and hybrid placement ran it as the clone. So a
 * sampled launch's stream first waits (cuStreamWaitValue32, GEQ: a cyclic compare) on a
 * pinned word for a fresh sequence number; the host raises the word to it once the start
 * event, the launch and the end event are queued, and the three run back to back. The
 * word only grows (a later number releases earlier waits too), so no wait outlives the
 * release of its own number. */
static void gate_init(void)
{
    L.gate = NULL;
    if (!tidal__cu()->StreamWaitValue32 || !tidal__cu()->MemHostGetDevicePointer || !tidal__cu()->EventElapsedTime)
        return;
    void *h = NULL;
    if (tidal__cu()->MemAllocHost(&h, sizeof *L.gate) != CUDA_SUCCESS || !h) return;
    CUdeviceptr d = 0;
    if (tidal__cu()->MemHostGetDevicePointer(&d, h, 0) != CUDA_SUCCESS || !d) {
        tidal__cu()->MemFreeHost(h);
        return;
    }
    L.gate = h;
    atomic_init(L.gate, 0);
    L.gate_dev = d;
    atomic_store(&L.gate_seq, 0);
}

/* Hold stream s at the gate: the number to release it with, or 0 (no gate: the sample
 * includes the launch gap). Called without the lock. */
static uint32_t gate_hold(CUstream s)
{
    if (!L.gate) return 0;
    uint32_t seq = atomic_fetch_add(&L.gate_seq, 1) + 1;
    if (seq == 0) seq = atomic_fetch_add(&L.gate_seq, 1) + 1; /* 0 means "not held" */
    if (tidal__cu()->StreamWaitValue32(s, L.gate_dev, seq, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) return 0;
    return seq;
}

/* Raise the gate to seq (never lower it: cyclic order, as the wait compares). */
static void gate_release(uint32_t seq)
{
    if (!seq) return;
    uint32_t cur = atomic_load(L.gate);
    while ((int32_t)(seq - cur) > 0 && !atomic_compare_exchange_weak(L.gate, &cur, seq)) {
    }
}

/* Short enough for the original: its own samples decide once there are any; before, a
 * clone's (a clone does the same work with a protocol on top). */
static int measured_short(const tidal__duration *d, float short_us)
{
    if (d->n > 0) return d->us < short_us;
    return d->nclone > 0 && d->clone_us < short_us;
}

/* A sample whose events were not recorded: the ring skips it, a later launch of f takes
 * one. Called without the lock. */
static void cancel_sample(pending_sample *smp, CUfunction f)
{
    tidal__lock();
    smp->used = 0;
    tidal__fn *e = tidal__fn_slot(f);
    tidal__duration *d = e && e->f == f ? duration_of(e, smp->total, 0) : NULL;
    if (d) d->pending = 0;
    tidal__unlock();
}

/* ------------------------------------------------------------------ cluster routes */

/* A launch the plan leaves as given: routed when its clusters are larger than its
 * stream's green context runs (*handled = 1), else left to the caller. */
static CUresult route_or_decline(const tidal_launch_req *q, const plan *pl, int *handled)
{
    if (!pl->route) return CUDA_SUCCESS;
    unsigned blocks = q->ex ? tidal__ex_cluster_blocks(q->ex) : 0;
    if ((blocks ? blocks : pl->fn_cluster) <= pl->cluster_max) return CUDA_SUCCESS;
    CUresult r = tidal__route_launch(q, pl->route, handled);
    if (*handled && r != CUDA_SUCCESS) tidal__launch_explain(q, r);
    return r;
}

/* ------------------------------------------------------------------ the plan */

static unsigned count_both(const tidal_smset *a, const tidal_smset *b)
{
    tidal_smset x;
    for (int w = 0; w < TIDAL_SMSET_WORDS; w++) x.bits[w] = a->bits[w] & b->bits[w];
    return tidal_smset_count(&x);
}

/* Programmatic dependent launch lets a launch start before the one before it on the
 * stream ends: its stream slot would be shared, so it probes for one. */
static int ex_overlaps_predecessor(const CUlaunchConfig *c)
{
    for (unsigned i = 0; c && i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
            c->attrs[i].value.programmaticStreamSerializationAllowed)
            return 1;
    return 0;
}

/* The stream's slot in p, taken on the stream's first clone launch into p. */
static int stream_slot(tidal__stream *b, struct tidal_part *p)
{
    if (b->slot_part == p) return 0;
    int slot = tidal__part_reserve_slot(p);
    if (slot < 0) return -1;
    b->slot_part = p;
    b->slot = (unsigned)slot;
    b->epoch = 0;
    return 0;
}

/* Whether s is capturing (an invalidated capture counts: the launch fails there anyway),
 * and the capture's id (0: the driver gives none), in one driver call where it can. */
static int capture_state(CUstream s, cuuint64_t *id)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    *id = 0;
    if (tidal__cu()->StreamGetCaptureInfo && tidal__cu()->StreamGetCaptureInfo(s, &st, id) == CUDA_SUCCESS) {
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) *id = 0;
        return st != CU_STREAM_CAPTURE_STATUS_NONE;
    }
    return tidal__cu()->StreamIsCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The slot of the capture stream s is in, taken on the capture's first clone launch on
 * s into p; that launch is preceded in the capture by a reset of the slot (pl->reset),
 * so each replay of the graph numbers its clones 1, 2, ... from a clean slot. Replays of
 * one graph exec run one after the other; other graphs and eager launches use other
 * slots. -1: no capture id (old driver) or no slot left (probe mode then). */
static int capture_slot(tidal__stream *b, struct tidal_part *p, cuuint64_t id, plan *pl)
{
    if (!id) return -1;
    if (b->cap_part == p && b->cap_id == id) return 0;
    int slot = tidal__part_reserve_slot(p);
    if (slot < 0) return -1;
    b->cap_part = p;
    b->cap_id = id;
    b->cap_slot = (unsigned)slot;
    b->cap_epoch = 0;
    pl->reset = tidal__part_slot_claim(p, b->cap_slot);
    return 0;
}

static void make_plan(const tidal_launch_req *q, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->sample = -1;
    poll_pending();
    CUstream s = tidal__norm_stream(q->stream, q->ptsz);
    tidal__stream *b = tidal__stream_get(s, 0);
    if (b && b->route) { /* for a launch that ends up as given (route_or_decline) */
        pl->route = b->route;
        pl->cluster_max = b->cluster_max;
    }
    tidal__fn *e = tidal__fn_lookup(q->f, q->kernel);
    pl->fn_cluster = e && pl->route ? tidal__fn_cluster_blocks(e) : 1;
    if (!e || e->kind == FN_UNKNOWN || e->kind == FN_CLONE) {
        atomic_fetch_add(&L.n_unknown, 1);
        return;
    }
    if (e->kind == FN_REFUSED || (q->ex && ex_needs_original(q->ex))) {
        atomic_fetch_add(&L.n_refused, 1);
        return;
    }
    /* the stream's partition, else the one its module is attached to (tidal.triton,
     * tidal_module_attach), else the process default */
    struct tidal_part *mp = tidal__module_part(e->mod);
    struct tidal_part *p = b && b->part ? b->part : mp ? mp : tidal__part_default();
    uint64_t logical = (uint64_t)q->grid[0] * q->grid[1] * q->grid[2];
    int threads = (int)(q->block[0] * q->block[1] * q->block[2]);
    if (!p || logical == 0 || logical >= TIDAL_MAX_LOGICAL) {
        atomic_fetch_add(&L.n_unmasked, 1);
        return;
    }
    if (!b) b = tidal__stream_get(s, 1); /* its slot lives here (default partition) */
    if (!b) {
        atomic_fetch_add(&L.n_unmasked, 1);
        return;
    }
    /* Hybrid placement: a short kernel on a stream whose SMs are all allowed runs as the
     * original there (zero device cost; it leaves the SMs when it ends). */
    cuuint64_t cap_id = 0;
    int capturing = capture_state(s, &cap_id);
    int inside = tidal__smset_subset(&b->sms, &p->mask);
    tidal__duration *d = duration_of(e, (uint32_t)logical, !capturing);
    const int hybrid = p->place_mode == TIDAL_PLACE_HYBRID;
    const float short_us = (float)p->short_us;
    /* An unmeasured kernel runs as the clone first (timed): only one whose clone was
     * quick, below TIDAL_TRIAL_FACTOR x short_us, is tried as the original (timed, twice at
     * most: a first sample can carry warm-up), so an original never holds a removed SM
     * longer than that; the original's duration then decides, not the clone's (a
     * persistent clone of a memory-bound kernel runs up to 2.7x longer). */
    const int trial = hybrid && !capturing && d && d->n < 2 && d->nclone > 0 &&
                      d->clone_us < TIDAL_TRIAL_FACTOR * short_us && (d->n == 0 || d->us >= short_us);
    if (inside && (p->place_mode == TIDAL_PLACE_ORIGINAL || (hybrid && d && measured_short(d, short_us)) || trial)) {
        pl->original = 1;
        pl->stream = s;
        if (trial) pl->sample = take_sample(d, q->f, (uint32_t)logical, 0);
        return;
    }
    /* the clone: its dynamic shared memory has the protocol's words after the launch's */
    unsigned clone_bytes = 0;
    int sm = clone_smem(e, q->smem, &clone_bytes);
    if (sm != SMEM_OK) {
        smem_declined(e, sm, q->smem, clone_bytes);
        atomic_fetch_add(&L.n_unmasked, 1);
        return;
    }
    int occ = occupancy(e, threads, clone_bytes);
    if (occ <= 0) {
        atomic_fetch_add(&L.n_unmasked, 1);
        return;
    }
    unsigned reach = tidal_smset_count(&b->sms);
    uint64_t workers = (uint64_t)occ * reach, chunk = 1;
    /* A measured kernel's chunks last about L.cfg.chunk_us: a worker on an SM taken away
     * finishes its chunk before it leaves. */
    uint64_t max_chunk = L.cfg.max_chunk, fit_chunk = 0; /* fit_chunk: blocks in L.cfg.chunk_us (measured) */
    float est_us = d ? (d->nclone ? d->clone_us : d->n ? d->us : 0) : 0; /* a clone's, best */
    if (est_us > 0) {
        double block_us = est_us * (double)(workers < logical ? workers : logical) / (double)logical;
        double fit = L.cfg.chunk_us / (block_us > 1e-3 ? block_us : 1e-3);
        fit_chunk = fit < 1 ? 1 : fit > (double)TIDAL_MAX_LOGICAL ? TIDAL_MAX_LOGICAL : (uint64_t)fit;
        if (fit_chunk < max_chunk) max_chunk = fit_chunk;
    }
    tidal_launch *tl = &pl->tl;
    uint64_t own = 0; /* STATIC: each worker's own first chunk (blocks); 0: dynamic */
    /* A graph replays its launches as captured: in persistent placement (partitions that
     * shrink under load) its clones stay dynamic, so every replay follows the mask of its
     * time; in hybrid placement, like its originals, they keep the static first chunk. */
    if (inside && !(capturing && p->place_mode == TIDAL_PLACE_PERSISTENT)) {
        /* every worker lands on an allowed SM: the first chunk needs no claim */
        if (logical > workers) chunk = logical / (workers * 8);
        if (chunk < 1) chunk = 1;
        if (chunk > max_chunk) chunk = max_chunk;
        uint64_t need = (logical + chunk - 1) / chunk;
        if (workers > need) workers = need;
        /* A measured kernel of several waves: each worker's own chunk covers its share of
         * L.cfg.static_share percent of the grid, with no claim and no mask read (a claim is
         * two round trips to L2 that the SM idles through: +4 us on a 1024-tile GEMM at
         * one block per SM with chunks of 1), within the same time budget as a chunk; the
         * tickets after it keep the small chunk, so the tail balances. */
        own = chunk;
        if (fit_chunk && logical > workers) {
            uint64_t f = logical * L.cfg.static_share / 100 / workers;
            if (f > fit_chunk) f = fit_chunk;
            if (f > chunk && workers * f < logical) own = f;
        }
        tl->flags = TIDAL_LAUNCH_STATIC;
    } else {
        if (workers > logical) workers = logical;
        unsigned allowed = count_both(&p->mask, &b->sms);
        chunk = logical / ((uint64_t)occ * (allowed ? allowed : 1) * 8);
        if (chunk < 1) chunk = 1;
        if (chunk > max_chunk) chunk = max_chunk;
        tl->base = 0;
    }
    if (p->sm_blocks) {
        tl->flags |= TIDAL_LAUNCH_HIST;
        tl->sm_blocks = (uint64_t)p->sm_blocks;
    }
    tl->partition = (uint64_t)p->dev;
    tl->grid[0] = q->grid[0];
    tl->grid[1] = q->grid[1];
    tl->grid[2] = q->grid[2];
    tl->chunk = (uint32_t)chunk;
    tl->sh_off = TIDAL_SH_OFFSET(q->smem);
    const int probe =
        ex_overlaps_predecessor(q->ex) || (capturing ? capture_slot(b, p, cap_id, pl) : stream_slot(b, p)) != 0;
    if (own) {
        /* a probing static worker's own chunk is `chunk`: tidal_launch.first is for the
         * epoch-mode fast path only (abi/tidal_abi.h) */
        if (probe) own = chunk;
        tl->first = own > chunk ? (uint32_t)own : 0;
        tl->base = (uint32_t)(workers * own < logical ? workers * own : logical);
    }
    if (probe) {
        /* the slot is found and reset on the device */
        tl->flags |= TIDAL_LAUNCH_PROBE;
        tl->key = (++L.next_key & 0xffffffull) << 40;
        if (capturing) atomic_fetch_add(&L.n_graph_probe, 1);
    } else if (capturing) {
        tl->slot = b->cap_slot;
        if (b->cap_epoch == TIDAL_EPOCH_MASK) { /* this graph has used every epoch: restart */
            pl->reset = tidal__part_slot_claim(p, b->cap_slot);
            b->cap_epoch = 0;
        }
        tl->epoch = ++b->cap_epoch;
    } else {
        tl->slot = b->slot;
        if (b->epoch == TIDAL_EPOCH_MASK) {
            pl->reset = tidal__part_slot_claim(p, b->slot);
            b->epoch = 0;
        }
        tl->epoch = ++b->epoch;
        pl->remember = L.cfg.flow_in && tl->base < logical;
    }
    /* An unmeasured kernel's first clones are timed, placed as its original would be
     * (inside: static mode); a dynamic clone's duration would say less. */
    if (hybrid && !capturing && inside && d && d->n == 0 && d->nclone < 2)
        pl->sample = take_sample(d, q->f, (uint32_t)logical, 1);
    pl->reshape = 1;
    pl->clone = e->clone;
    pl->workers = (unsigned)workers;
    pl->occ = (unsigned)occ;
    pl->smem = clone_bytes;
    pl->part = p;
    pl->stream = s;
    pl->nparams = e->nparams;
    pl->launch_off = e->launch_off;
    pl->poff = e->poff;
    pl->psize = e->psize;
}

/* ------------------------------------------------------------------ flow-in */

/* Keep what a joining launch needs: the clone's parameter buffer (built from
 * kernelParams with the original's offsets, or the extra buffer as passed) and an event
 * that tells whether the launch is still running. */
static void remember(const tidal_launch_req *q, const plan *pl, const clone_args *a)
{
    tidal__inflight rec;
    memset(&rec, 0, sizeof rec);
    rec.bufsize = pl->launch_off + sizeof(tidal_launch);
    rec.buf = calloc(1, rec.bufsize);
    if (!rec.buf) return;
    if (q->params) {
        for (unsigned i = 0; i < pl->nparams; i++)
            if (pl->poff[i] + pl->psize[i] <= pl->launch_off) memcpy(rec.buf + pl->poff[i], q->params[i], pl->psize[i]);
    } else if (a->bufp) {
        memcpy(rec.buf, a->bufp, pl->launch_off);
    }
    memcpy(rec.buf + pl->launch_off, &pl->tl, sizeof pl->tl);
    rec.key = ((uint64_t)pl->tl.slot << 32) | pl->tl.epoch;
    rec.clone = pl->clone;
    rec.workers = pl->workers;
    rec.block[0] = q->block[0];
    rec.block[1] = q->block[1];
    rec.block[2] = q->block[2];
    rec.smem = pl->smem;
    rec.launch_off = pl->launch_off;
    rec.occ = pl->occ;
    tidal__lock();
    if (tidal__ready())
        tidal__flow_add(&pl->part->flow, &rec, pl->stream);
    else
        free(rec.buf);
    tidal__unlock();
}

static CUresult launch_plan(const tidal_launch_req *q, plan *pl, int *ok)
{
    clone_args a;
    *ok = 0;
    pending_sample *smp = pl->sample >= 0 ? &L.pending[pl->sample] : NULL;
    if (build_args(&a, pl, q, &pl->tl) != 0) {
        if (smp) cancel_sample(smp, q->f);
        free_args(&a);
        return CUDA_SUCCESS;
    }
    *ok = 1;
    CUresult r = CUDA_SUCCESS;
    CUstream s = pl->stream;
    if (pl->reset)
        r = tidal__cu()->MemsetD32Async ? tidal__cu()->MemsetD32Async(pl->reset, 0, 4, s)
                                        : tidal__cu()->MemsetD8Async(pl->reset, 0, 16, s);
    uint32_t gate = smp && r == CUDA_SUCCESS ? gate_hold(s) : 0;
    int recorded = smp && r == CUDA_SUCCESS && tidal__cu()->EventRecord(smp->start, s) == CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
    } else if (q->ex) {
        CUlaunchConfig c = *q->ex;
        c.gridDimX = pl->workers;
        c.gridDimY = 1;
        c.gridDimZ = 1;
        c.sharedMemBytes = pl->smem;
        c.hStream = s;
        r = tidal__cu()->LaunchKernelEx(&c, pl->clone, a.params, a.params ? NULL : a.extra);
    } else {
        r = tidal__cu()->LaunchKernel(pl->clone, pl->workers, 1, 1, q->block[0], q->block[1], q->block[2], pl->smem, s,
                                      a.params, a.params ? NULL : (a.bufp ? a.extra : NULL));
    }
    if (smp) {
        recorded = recorded && r == CUDA_SUCCESS && tidal__cu()->EventRecord(smp->end, s) == CUDA_SUCCESS;
        gate_release(gate);
        if (!recorded) cancel_sample(smp, q->f);
    }
    if (r == CUDA_SUCCESS && pl->remember) remember(q, pl, &a);
    free_args(&a);
    return r;
}

CUresult tidal__launch_run(const tidal_launch_req *q, int *handled)
{
    plan pl;
    tidal__lock();
    make_plan(q, &pl);
    tidal__unlock();
    if (pl.original) atomic_fetch_add(&L.n_original, 1);
    if (pl.original && pl.sample >= 0) { /* the original, timed */
        pending_sample *smp = &L.pending[pl.sample];
        CUstream s = pl.stream;
        uint32_t gate = gate_hold(s);
        int rec = tidal__cu()->EventRecord(smp->start, s) == CUDA_SUCCESS;
        CUresult r = tidal__launch_given(q);
        rec = rec && r == CUDA_SUCCESS && tidal__cu()->EventRecord(smp->end, s) == CUDA_SUCCESS;
        gate_release(gate);
        if (!rec) cancel_sample(smp, q->f);
        *handled = 1;
        return r;
    }
    if (!pl.reshape) return route_or_decline(q, &pl, handled);
    int ok;
    CUresult r = launch_plan(q, &pl, &ok);
    if (!ok) {
        atomic_fetch_add(&L.n_unmasked, 1);
        return route_or_decline(q, &pl, handled);
    }
    atomic_fetch_add(&L.n_rewritten, 1);
    *handled = 1;
    return r;
}

/* A launch the driver refused for its clusters on a partition's green-context stream: the
 * status is the caller's (libtidal does not move the launch off the partition's SMs);
 * this says why, once per process. Green contexts of the 2-SM groups the H200 splits into
 * run clusters of at most 2 blocks (docs/performance.md §16.3: cuBLASLt's sm90 GEMMs
 * fail there); larger ones are routed to the partition's cluster groups, so this is a
 * partition with none inside, or a cluster larger than such a group. Called on the error
 * path only. */
void tidal__launch_explain(const tidal_launch_req *q, CUresult r)
{
    static atomic_int said;
    if (r != CUDA_ERROR_INVALID_CLUSTER_SIZE || atomic_load(&said) || !tidal__ready()) return;
    tidal__lock();
    const tidal__stream *st = tidal__stream_get(tidal__norm_stream(q->ex ? q->ex->hStream : q->stream, q->ptsz), 0);
    int green = st && st->green, routed = st && st->route;
    tidal__unlock();
    if (green && !atomic_exchange(&said, 1))
        tidal__warn("a kernel with thread-block clusters was refused (CUDA_ERROR_INVALID_CLUSTER_SIZE) on a partition "
                    "stream: %s; run such kernels (cuBLASLt, CUTLASS, cuDNN, FlashAttention-3) on another stream, give "
                    "the partition whole cluster groups, or choose kernels without clusters (docs/design.md, "
                    "\"Known limits\")",
                    routed ? "its cluster groups run clusters of at most their size"
                           : "no cluster group lies inside the partition, and its green context of 2-SM groups runs "
                             "clusters of at most 2 blocks");
}

/* ------------------------------------------------------------------ init, counters */

void tidal__launch_init(const tidal__launch_config *c)
{
    L.cfg = *c;
    L.gate = NULL;
    if (c->gate) gate_init();
}

void tidal__launch_teardown(void)
{
    for (unsigned i = 0; i < TIDAL_PENDING; i++) {
        if (L.pending[i].start) tidal__cu()->EventDestroy(L.pending[i].start);
        if (L.pending[i].end) tidal__cu()->EventDestroy(L.pending[i].end);
    }
    if (L.gate) tidal__cu()->MemFreeHost((void *)L.gate);
    memset(&L, 0, sizeof L);
    tidal__routes_launched(1);
}

void tidal__launch_counts(tidal_stats *out)
{
    out->launches_rewritten = atomic_load(&L.n_rewritten);
    out->launches_original = atomic_load(&L.n_original);
    out->launches_unknown = atomic_load(&L.n_unknown);
    out->launches_refused = atomic_load(&L.n_refused);
    out->launches_unmasked = atomic_load(&L.n_unmasked);
    out->launches_graph_probe = atomic_load(&L.n_graph_probe);
    out->launches_smem_full = atomic_load(&L.n_smem_full);
    out->launches_cluster_routed = tidal__routes_launched(0);
}

void tidal__launch_counts_reset(void)
{
    atomic_store(&L.n_rewritten, 0);
    atomic_store(&L.n_original, 0);
    atomic_store(&L.n_unknown, 0);
    atomic_store(&L.n_refused, 0);
    atomic_store(&L.n_unmasked, 0);
    atomic_store(&L.n_graph_probe, 0);
    atomic_store(&L.n_smem_full, 0);
    tidal__routes_launched(1);
}
