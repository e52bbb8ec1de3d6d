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
 * grids the clone cannot take) is launched exactly as given. What a function is comes
 * from functions.c (rt_fn_lookup). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt_state.h"

/* ------------------------------------------------------------------ launching */

static CUresult launch_as_given(const tidal_launch_req *q)
{
    if (q->ex) {
        if (q->ptsz && rt.cu->LaunchKernelEx_ptsz) return rt.cu->LaunchKernelEx_ptsz(q->ex, q->f, q->params, q->extra);
        CUlaunchConfig c = *q->ex;
        c.hStream = rt_norm_stream(c.hStream, q->ptsz);
        return rt.cu->LaunchKernelEx(&c, q->f, q->params, q->extra);
    }
    if (q->ptsz && rt.cu->LaunchKernel_ptsz)
        return rt.cu->LaunchKernel_ptsz(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2],
                                        q->smem, q->stream, q->params, q->extra);
    return rt.cu->LaunchKernel(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2], q->smem,
                               rt_norm_stream(q->stream, q->ptsz), q->params, q->extra);
}

/* Launch attributes the clone cannot honour (grid-wide sync, clusters): run as given. */
static int ex_needs_original(const CUlaunchConfig *c)
{
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a->value.cooperative) return 1;
        if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
            (uint64_t)a->value.clusterDim.x * a->value.clusterDim.y * a->value.clusterDim.z > 1)
            return 1;
    }
    return 0;
}

/* The device's opt-in limit of shared memory per block (static + dynamic), read once;
 * -1 where the driver does not say. */
static int smem_optin(void)
{
    if (rt.smem_optin == 0) {
        int v = 0;
        CUresult r = rt.cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, rt.dev);
        rt.smem_optin = r == CUDA_SUCCESS && v > 0 ? v : -1;
    }
    return rt.smem_optin;
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
static int clone_smem(rt_fn *e, unsigned smem, unsigned *need)
{
    int optin = smem_optin();
    if (smem > UINT32_MAX - TIDAL_SH_ALIGN - TIDAL_SH_BYTES) return SMEM_NO_ROOM;
    *need = TIDAL_CLONE_SMEM(smem);
    if (!e->smem_read) {
        int dyn = 0, st = 0;
        if (rt.cu->FuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, e->clone) != CUDA_SUCCESS ||
            rt.cu->FuncGetAttribute(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, e->clone) != CUDA_SUCCESS)
            return SMEM_DRIVER_ERROR;
        e->clone_dyn = dyn;
        e->clone_static = st;
        e->smem_read = 1;
    }
    if (*need <= (unsigned)e->clone_dyn) return SMEM_OK;
    if (optin > 0 && (uint64_t)*need + (uint64_t)e->clone_static > (uint64_t)optin) return SMEM_NO_ROOM;
    if (rt.cu->FuncSetAttribute(e->clone, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)*need) != CUDA_SUCCESS)
        return optin > 0 ? SMEM_DRIVER_ERROR : SMEM_NO_ROOM;
    e->clone_dyn = (int)*need;
    return SMEM_OK;
}

/* A launch the clone cannot take for its dynamic shared memory: counted, and said once
 * per kernel (it runs unmasked: never silently). */
static void smem_declined(rt_fn *e, int why, unsigned smem, unsigned need)
{
    if (why == SMEM_NO_ROOM) atomic_fetch_add(&rt.n_smem_full, 1);
    if (why == SMEM_NO_ROOM && e->smem_full_said) return; /* said once: no driver call per launch */
    const char *name = NULL;
    if (rt.cu->FuncGetName(&name, e->fn) != CUDA_SUCCESS || !name) name = "(unnamed)";
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

static int occupancy(rt_fn *e, int threads, unsigned smem)
{
    if (e->occ_threads == threads && e->occ_smem == smem) return e->occ;
    int occ = 0;
    if (rt.cu->OccupancyMaxActiveBlocksPerMultiprocessor(&occ, e->clone, threads, smem) != CUDA_SUCCESS) occ = 0;
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
    unsigned nparams; /* of the original (rt_fn fields the launch needs) */
    size_t launch_off;
    const size_t *poff, *psize;
    CUstream stream;
    int sample;        /* rt.pending index to time this original launch with, or -1 */
    CUdeviceptr reset; /* epoch wrap: zero this slot's claim and guard words first */
    int remember;      /* record for flow-in */
    unsigned occ;      /* workers per SM */
    unsigned smem;     /* the clone's dynamic shared memory: the launch's + its words */
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
static rt_duration *duration_of(rt_fn *e, uint32_t total, int create)
{
    rt_duration *free_d = NULL;
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
    if (!rt.npending) return;
    CUstreamCaptureMode mode = rt_capture_relax(); /* a query must not break a capture */
    while (rt.npending) {
        rt_pending *q = &rt.pending[rt.pending_head];
        CUresult r = CUDA_SUCCESS;
        if (q->used) {
            r = rt.cu->EventQuery(q->end);
            if (r == CUDA_ERROR_NOT_READY) break;
        }
        rt.pending_head = (rt.pending_head + 1) % TIDAL_PENDING;
        rt.npending--;
        if (!q->used) continue; /* cancelled */
        q->used = 0;
        float ms = 0;
        rt_fn *e = rt_fn_slot(q->f);
        rt_duration *d = e && e->f == q->f ? duration_of(e, q->total, 0) : NULL;
        if (d) d->pending = 0;
        if (r != CUDA_SUCCESS || !d || rt.cu->EventElapsedTime(&ms, q->start, q->end) != CUDA_SUCCESS) continue;
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
    rt_capture_restore(mode);
}

/* The next pending sample in the ring, with its events, or -1 (the ring is full). */
static int pending_slot(void)
{
    if (!rt.cu->EventElapsedTime || rt.npending == TIDAL_PENDING) return -1;
    unsigned i = (rt.pending_head + rt.npending) % TIDAL_PENDING;
    rt_pending *q = &rt.pending[i];
    if (!q->start && rt.cu->EventCreate(&q->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return -1;
    if (!q->end && rt.cu->EventCreate(&q->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return -1;
    return (int)i;
}

/* Take the next ring entry for a sample of f (with total logical blocks), or -1 (ring
 * full, no events, or d has one in flight). */
static int take_sample(rt_duration *d, CUfunction f, uint32_t total, int clone)
{
    if (d->pending) return -1;
    int i = pending_slot();
    if (i < 0) return -1;
    rt_pending *smp = &rt.pending[i];
    smp->used = 1;
    smp->f = f;
    smp->total = total;
    smp->clone = clone;
    rt.npending++;
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
void rt_gate_init(void)
{
    rt.gate = NULL;
    if (!rt.cu->StreamWaitValue32 || !rt.cu->MemHostGetDevicePointer || !rt.cu->EventElapsedTime) return;
    void *h = NULL;
    if (rt.cu->MemAllocHost(&h, sizeof *rt.gate) != CUDA_SUCCESS || !h) return;
    CUdeviceptr d = 0;
    if (rt.cu->MemHostGetDevicePointer(&d, h, 0) != CUDA_SUCCESS || !d) {
        rt.cu->MemFreeHost(h);
        return;
    }
    rt.gate = h;
    atomic_init(rt.gate, 0);
    rt.gate_dev = d;
    atomic_store(&rt.gate_seq, 0);
}

/* Hold stream s at the gate: the number to release it with, or 0 (no gate: the sample
 * includes the launch gap). Called without rt.lock. */
static uint32_t gate_hold(CUstream s)
{
    if (!rt.gate) return 0;
    uint32_t seq = atomic_fetch_add(&rt.gate_seq, 1) + 1;
    if (seq == 0) seq = atomic_fetch_add(&rt.gate_seq, 1) + 1; /* 0 means "not held" */
    if (rt.cu->StreamWaitValue32(s, rt.gate_dev, seq, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) return 0;
    return seq;
}

/* Raise the gate to seq (never lower it: cyclic order, as the wait compares). */
static void gate_release(uint32_t seq)
{
    if (!seq) return;
    uint32_t cur = atomic_load(rt.gate);
    while ((int32_t)(seq - cur) > 0 && !atomic_compare_exchange_weak(rt.gate, &cur, seq)) {
    }
}

/* Short enough for the original: its own samples decide once there are any; before, a
 * clone's (a clone does the same work with a protocol on top). */
static int measured_short(const rt_duration *d, float short_us)
{
    if (d->n > 0) return d->us < short_us;
    return d->nclone > 0 && d->clone_us < short_us;
}

/* A sample whose events were not recorded: the ring skips it, a later launch of f takes
 * one. Called without rt.lock. */
static void cancel_sample(rt_pending *smp, CUfunction f)
{
    pthread_mutex_lock(&rt.lock);
    smp->used = 0;
    rt_fn *e = rt_fn_slot(f);
    rt_duration *d = e && e->f == f ? duration_of(e, smp->total, 0) : NULL;
    if (d) d->pending = 0;
    pthread_mutex_unlock(&rt.lock);
}

/* ------------------------------------------------------------------ the plan */

static int subset(const tidal_smset *a, const tidal_smset *b)
{
    for (int w = 0; w < TIDAL_SMSET_WORDS; w++)
        if (a->bits[w] & ~b->bits[w]) return 0;
    return 1;
}

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

static CUdeviceptr slot_claim(const struct tidal_part *p, unsigned slot)
{
    return p->dev + TIDAL_PARTITION_HEADER + (CUdeviceptr)slot * TIDAL_SLOT_BYTES + TIDAL_SLOT_OFF_CLAIM;
}

/* Take one of p's stream slots for good (its tag becomes TIDAL_SLOT_RESERVED so
 * probe-mode launches pass over it): its number, or -1 when none is left. */
static int reserve_slot(struct tidal_part *p)
{
    if (p->stream_slots == TIDAL_STREAM_SLOTS) return -1;
    unsigned slot = p->stream_slots;
    uint64_t tag = TIDAL_SLOT_RESERVED;
    memcpy(rt.pinned, &tag, sizeof tag);
    CUdeviceptr at = p->dev + TIDAL_PARTITION_HEADER + (CUdeviceptr)slot * TIDAL_SLOT_BYTES + TIDAL_SLOT_OFF_TAG;
    CUstreamCaptureMode mode = rt_capture_relax();
    int ok = rt.cu->MemcpyHtoDAsync(at, rt.pinned, sizeof tag, rt.ctl_stream) == CUDA_SUCCESS &&
             rt.cu->StreamSynchronize(rt.ctl_stream) == CUDA_SUCCESS;
    rt_capture_restore(mode);
    if (!ok) return -1;
    p->stream_slots++;
    return (int)slot;
}

/* The stream's slot in p, taken on the stream's first clone launch into p. */
static int stream_slot(rt_stream_binding *b, struct tidal_part *p)
{
    if (b->slot_part == p) return 0;
    int slot = reserve_slot(p);
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
    if (rt.cu->StreamGetCaptureInfo && rt.cu->StreamGetCaptureInfo(s, &st, id) == CUDA_SUCCESS) {
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) *id = 0;
        return st != CU_STREAM_CAPTURE_STATUS_NONE;
    }
    return rt.cu->StreamIsCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The slot of the capture stream s is in, taken on the capture's first clone launch on
 * s into p; that launch is preceded in the capture by a reset of the slot (pl->reset),
 * so each replay of the graph numbers its clones 1, 2, ... from a clean slot. Replays of
 * one graph exec run one after the other; other graphs and eager launches use other
 * slots. -1: no capture id (old driver) or no slot left (probe mode then). */
static int capture_slot(rt_stream_binding *b, struct tidal_part *p, cuuint64_t id, plan *pl)
{
    if (!id) return -1;
    if (b->cap_part == p && b->cap_id == id) return 0;
    int slot = reserve_slot(p);
    if (slot < 0) return -1;
    b->cap_part = p;
    b->cap_id = id;
    b->cap_slot = (unsigned)slot;
    b->cap_epoch = 0;
    pl->reset = slot_claim(p, b->cap_slot);
    return 0;
}

static void make_plan(const tidal_launch_req *q, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->sample = -1;
    poll_pending();
    rt_fn *e = rt_fn_lookup(q->f, q->kernel);
    if (!e || e->kind == FN_UNKNOWN || e->kind == FN_CLONE) {
        atomic_fetch_add(&rt.n_unknown, 1);
        return;
    }
    if (e->kind == FN_REFUSED || (q->ex && ex_needs_original(q->ex))) {
        atomic_fetch_add(&rt.n_refused, 1);
        return;
    }
    CUstream s = rt_norm_stream(q->stream, q->ptsz);
    rt_stream_binding *b = rt_stream_get(s, 0);
    /* the stream's partition, else the one its module is attached to (tidal.triton,
     * tidal_module_attach), else the process default */
    struct tidal_part *mp = e->mod_ix >= 0 ? rt.modules[e->mod_ix].ctl : NULL;
    struct tidal_part *p = b && b->part ? b->part : mp ? mp : rt.default_part;
    uint64_t logical = (uint64_t)q->grid[0] * q->grid[1] * q->grid[2];
    int threads = (int)(q->block[0] * q->block[1] * q->block[2]);
    if (!p || logical == 0 || logical >= TIDAL_MAX_LOGICAL) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    if (!b) b = rt_stream_get(s, 1); /* its slot lives here (default partition) */
    if (!b) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    /* Hybrid placement: a short kernel on a stream whose SMs are all allowed runs as the
     * original there (zero device cost; it leaves the SMs when it ends). */
    cuuint64_t cap_id = 0;
    int capturing = capture_state(s, &cap_id);
    int inside = subset(&b->sms, &p->mask);
    rt_duration *d = duration_of(e, (uint32_t)logical, !capturing);
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
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    int occ = occupancy(e, threads, clone_bytes);
    if (occ <= 0) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    unsigned reach = tidal_smset_count(&b->sms);
    uint64_t workers = (uint64_t)occ * reach, chunk = 1;
    /* A measured kernel's chunks last about rt.chunk_us: a worker on an SM taken away
     * finishes its chunk before it leaves. */
    uint64_t max_chunk = rt.max_chunk, fit_chunk = 0; /* fit_chunk: blocks in rt.chunk_us (measured) */
    float est_us = d ? (d->nclone ? d->clone_us : d->n ? d->us : 0) : 0; /* a clone's, best */
    if (est_us > 0) {
        double block_us = est_us * (double)(workers < logical ? workers : logical) / (double)logical;
        double fit = rt.chunk_us / (block_us > 1e-3 ? block_us : 1e-3);
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
         * rt.static_share percent of the grid, with no claim and no mask read (a claim is
         * two round trips to L2 that the SM idles through: +4 us on a 1024-tile GEMM at
         * one block per SM with chunks of 1), within the same time budget as a chunk; the
         * tickets after it keep the small chunk, so the tail balances. */
        own = chunk;
        if (fit_chunk && logical > workers) {
            uint64_t f = logical * rt.static_share / 100 / workers;
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
        tl->key = (++rt.next_key & 0xffffffull) << 40;
        if (capturing) atomic_fetch_add(&rt.n_graph_probe, 1);
    } else if (capturing) {
        tl->slot = b->cap_slot;
        if (b->cap_epoch == TIDAL_EPOCH_MASK) { /* this graph has used every epoch: restart */
            pl->reset = slot_claim(p, b->cap_slot);
            b->cap_epoch = 0;
        }
        tl->epoch = ++b->cap_epoch;
    } else {
        tl->slot = b->slot;
        if (b->epoch == TIDAL_EPOCH_MASK) {
            pl->reset = slot_claim(p, b->slot);
            b->epoch = 0;
        }
        tl->epoch = ++b->epoch;
        pl->remember = rt.flow_in && tl->base < logical;
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
    rt_inflight rec;
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
    pthread_mutex_lock(&rt.lock);
    if (rt.initialized)
        rt_inflight_add(pl->part, &rec, pl->stream);
    else
        free(rec.buf);
    pthread_mutex_unlock(&rt.lock);
}

void rt_inflight_add(struct tidal_part *p, const rt_inflight *rec, CUstream s)
{
    rt_inflight *slot = &p->inflight[p->inflight_next++ % TIDAL_INFLIGHT];
    CUevent ev = slot->done;
    free(slot->buf);
    *slot = *rec;
    if (!ev && rt.cu->EventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) ev = NULL;
    slot->done = ev;
    slot->used = ev && rt.cu->EventRecord(ev, s) == CUDA_SUCCESS;
    if (!slot->used) {
        free(slot->buf);
        slot->buf = NULL;
    }
}

/* p was given SMs: every launch of p still running gets joiners, occupancy times the SMs
 * added; those the hardware places on SMs outside the mask leave at once. Called with the
 * runtime's capture mode relaxed (tidal_partition_set). */
void rt_inflight_grow(struct tidal_part *p, unsigned added_sms)
{
    for (unsigned i = 0; i < TIDAL_INFLIGHT; i++) {
        rt_inflight *r = &p->inflight[i];
        if (!r->used) continue;
        CUresult q = rt.cu->EventQuery(r->done);
        if (q != CUDA_ERROR_NOT_READY) { /* finished (or failed): nothing to join */
            r->used = 0;
            free(r->buf);
            r->buf = NULL;
            continue;
        }
        tidal_launch tl;
        memcpy(&tl, r->buf + r->launch_off, sizeof tl);
        tl.flags |= TIDAL_LAUNCH_JOIN;
        memcpy(r->buf + r->launch_off, &tl, sizeof tl);
        size_t n = r->bufsize;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, r->buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END};
        /* as many joiners as the added SMs hold; those the hardware puts elsewhere leave */
        unsigned joiners = r->occ * added_sms;
        if (joiners > r->workers || joiners == 0) joiners = r->workers;
        CUresult lr = rt.cu->LaunchKernel(r->clone, joiners, 1, 1, r->block[0], r->block[1], r->block[2], r->smem,
                                          rt.join_stream, NULL, extra);
        if (lr == CUDA_SUCCESS)
            atomic_fetch_add(&rt.n_joins, 1);
        else
            tidal__log("joiners for launch %llx: %d", (unsigned long long)r->key, (int)lr);
    }
}

void rt_inflight_free(struct tidal_part *p)
{
    for (unsigned i = 0; i < TIDAL_INFLIGHT; i++) {
        free(p->inflight[i].buf);
        if (p->inflight[i].done) rt.cu->EventDestroy(p->inflight[i].done);
        memset(&p->inflight[i], 0, sizeof p->inflight[i]);
    }
}

static CUresult launch_plan(const tidal_launch_req *q, plan *pl, int *ok)
{
    clone_args a;
    *ok = 0;
    rt_pending *smp = pl->sample >= 0 ? &rt.pending[pl->sample] : NULL;
    if (build_args(&a, pl, q, &pl->tl) != 0) {
        if (smp) cancel_sample(smp, q->f);
        free_args(&a);
        return CUDA_SUCCESS;
    }
    *ok = 1;
    CUresult r = CUDA_SUCCESS;
    CUstream s = pl->stream;
    if (pl->reset)
        r = rt.cu->MemsetD32Async ? rt.cu->MemsetD32Async(pl->reset, 0, 4, s)
                                  : rt.cu->MemsetD8Async(pl->reset, 0, 16, s);
    uint32_t gate = smp && r == CUDA_SUCCESS ? gate_hold(s) : 0;
    int recorded = smp && r == CUDA_SUCCESS && rt.cu->EventRecord(smp->start, s) == CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
    } else if (q->ex) {
        CUlaunchConfig c = *q->ex;
        c.gridDimX = pl->workers;
        c.gridDimY = 1;
        c.gridDimZ = 1;
        c.sharedMemBytes = pl->smem;
        c.hStream = s;
        r = rt.cu->LaunchKernelEx(&c, pl->clone, a.params, a.params ? NULL : a.extra);
    } else {
        r = rt.cu->LaunchKernel(pl->clone, pl->workers, 1, 1, q->block[0], q->block[1], q->block[2], pl->smem, s,
                                a.params, a.params ? NULL : (a.bufp ? a.extra : NULL));
    }
    if (smp) {
        recorded = recorded && r == CUDA_SUCCESS && rt.cu->EventRecord(smp->end, s) == CUDA_SUCCESS;
        gate_release(gate);
        if (!recorded) cancel_sample(smp, q->f);
    }
    if (r == CUDA_SUCCESS && pl->remember) remember(q, pl, &a);
    free_args(&a);
    return r;
}

CUresult tidal__launch_or_decline(const tidal_launch_req *q, int *handled)
{
    *handled = 0;
    if (tidal__ensure_init() != 0) return CUDA_SUCCESS;
    plan pl;
    pthread_mutex_lock(&rt.lock);
    make_plan(q, &pl);
    pthread_mutex_unlock(&rt.lock);
    if (pl.original) atomic_fetch_add(&rt.n_original, 1);
    if (pl.original && pl.sample >= 0) { /* the original, timed */
        rt_pending *smp = &rt.pending[pl.sample];
        CUstream s = pl.stream;
        uint32_t gate = gate_hold(s);
        int rec = rt.cu->EventRecord(smp->start, s) == CUDA_SUCCESS;
        CUresult r = launch_as_given(q);
        rec = rec && r == CUDA_SUCCESS && rt.cu->EventRecord(smp->end, s) == CUDA_SUCCESS;
        gate_release(gate);
        if (!rec) cancel_sample(smp, q->f);
        *handled = 1;
        return r;
    }
    if (!pl.reshape) return CUDA_SUCCESS;
    int ok;
    CUresult r = launch_plan(q, &pl, &ok);
    if (!ok) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return CUDA_SUCCESS;
    }
    atomic_fetch_add(&rt.n_rewritten, 1);
    *handled = 1;
    return r;
}

CUresult tidal__launch(const tidal_launch_req *q)
{
    int handled;
    CUresult r = tidal__launch_or_decline(q, &handled);
    if (handled) return r;
    if (!rt.cu) return CUDA_ERROR_NOT_INITIALIZED; /* no driver: the launch cannot happen */
    return launch_as_given(q);
}

int tidal_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **params, void **extra)
{
    if (!rt.initialized) return CUDA_ERROR_NOT_INITIALIZED;
    tidal_launch_req q = {.f = (CUfunction)f,
                          .grid = {gx, gy, gz},
                          .block = {bx, by, bz},
                          .smem = smem,
                          .stream = (CUstream)stream,
                          .params = params,
                          .extra = extra};
    return (int)tidal__launch(&q);
}
