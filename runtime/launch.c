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
 * grids the clone cannot take) is launched exactly as given. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rt_state.h"

/* ------------------------------------------------------------------ function table */

static size_t fn_hash(CUfunction f, unsigned cap)
{
    uint64_t x = (uint64_t)(uintptr_t)f;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)(x & (cap - 1));
}

static rt_fn *fn_slot(CUfunction f)
{
    if (!rt.fns) return NULL;
    for (size_t i = fn_hash(f, rt.fn_cap);; i = (i + 1) & (rt.fn_cap - 1)) {
        if (rt.fns[i].f == f || rt.fns[i].f == NULL) return &rt.fns[i];
    }
}

static int fn_grow(void)
{
    unsigned cap = rt.fn_cap ? rt.fn_cap * 2 : 256;
    rt_fn *old = rt.fns;
    unsigned oldcap = rt.fn_cap;
    rt.fns = calloc(cap, sizeof *rt.fns);
    if (!rt.fns) {
        rt.fns = old;
        return -1;
    }
    rt.fn_cap = cap;
    for (unsigned i = 0; i < oldcap; i++)
        if (old[i].f) *fn_slot(old[i].f) = old[i];
    free(old);
    return 0;
}

static unsigned count_params(CUfunction f)
{
    unsigned n = 0;
    size_t off, sz;
    while (n < 4096 && rt.cu->FuncGetParamInfo(f, n, &off, &sz) == CUDA_SUCCESS) n++;
    return n;
}

/* Launch entry points also take CUkernel handles (library kernels, CUDA 12+): the cudart
 * of CUDA 13 launches <<<>>> kernels that way. Map one to this context's CUfunction. */
static CUfunction as_function(CUfunction f)
{
    CUmodule m;
    if (rt.cu->FuncGetModule(&m, f) == CUDA_SUCCESS) return f;
    CUfunction g;
    if (rt.cu->KernelGetFunction && rt.cu->KernelGetFunction(&g, (CUkernel)f) == CUDA_SUCCESS) return g;
    return f;
}

/* Classify f on first sight: which module, rewritten or not, its clone. */
static void fn_classify(rt_fn *e)
{
    e->kind = FN_UNKNOWN;
    CUmodule mod;
    CUfunction fn = as_function(e->f);
    e->fn = fn;
    if (rt.cu->FuncGetModule(&mod, fn) != CUDA_SUCCESS) return;
    rt_module *m = rt_module_get(mod);
    if (!m || !m->rewritten) return;
    const char *name = NULL;
    if (rt.cu->FuncGetName(&name, fn) != CUDA_SUCCESS || !name) return;
    size_t n = strlen(name), sl = strlen(TIDAL_RESHAPED_SUFFIX);
    if (n > sl && strcmp(name + n - sl, TIDAL_RESHAPED_SUFFIX) == 0) {
        e->kind = FN_CLONE;   /* launched directly by someone who knows the ABI */
        return;
    }
    /* First launch from this module: its __tidal_ctl follows the default partition, so
     * launches that bypass libtidal run case b there. */
    if (!m->ctl && rt.default_part) rt_module_set_ctl(m, rt.default_part);
    char *cname = malloc(n + sl + 1);
    if (!cname) return;
    memcpy(cname, name, n);
    memcpy(cname + n, TIDAL_RESHAPED_SUFFIX, sl + 1);
    CUfunction clone;
    CUresult r = rt.cu->ModuleGetFunction(&clone, mod, cname);
    free(cname);
    if (r != CUDA_SUCCESS) {
        e->kind = FN_REFUSED;   /* the pass left this kernel as it was (its report says why) */
        tidal__log("%s: not rewritten (refused by the pass); launched unchanged", name);
        return;
    }
    e->nparams = count_params(fn);
    e->poff = calloc(e->nparams + 1, sizeof *e->poff);
    e->psize = calloc(e->nparams + 1, sizeof *e->psize);
    if (!e->poff || !e->psize) return;   /* FN_UNKNOWN: launched as given */
    for (unsigned i = 0; i < e->nparams; i++) rt.cu->FuncGetParamInfo(fn, i, &e->poff[i], &e->psize[i]);
    size_t off = 0, sz = 0;
    if (rt.cu->FuncGetParamInfo(clone, e->nparams, &off, &sz) != CUDA_SUCCESS || sz != sizeof(tidal_launch) ||
        count_params(clone) != e->nparams + 1) {
        e->kind = FN_REFUSED;
        tidal__warn("%s: its clone's parameters do not match the ABI (%zu-byte last parameter); launched unchanged",
                    name, sz);
        return;
    }
    e->launch_off = off;
    e->clone = clone;
    e->kind = FN_REWRITTEN;
    tidal__log("%s: rewritten, %u parameters, tidal_launch at offset %zu", name, e->nparams, off);
}

static rt_fn *fn_lookup(CUfunction f)
{
    rt_fn *e = fn_slot(f);
    if (e && e->f == f) return e;
    if (!rt.fns || 2 * (rt.fn_count + 1) > rt.fn_cap) {
        if (fn_grow() != 0) return NULL;
    }
    e = fn_slot(f);
    memset(e, 0, sizeof *e);
    e->f = f;
    rt.fn_count++;
    fn_classify(e);
    return e;
}

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
        return rt.cu->LaunchKernel_ptsz(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1],
                                        q->block[2], q->smem, q->stream, q->params, q->extra);
    return rt.cu->LaunchKernel(q->f, q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2],
                               q->smem, rt_norm_stream(q->stream, q->ptsz), q->params, q->extra);
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

/* The clone must be allowed the dynamic shared memory the original was given. */
static int mirror_smem(rt_fn *e, unsigned smem)
{
    if (smem <= 48 * 1024 || (int)smem <= e->smem_limit) return 0;
    int v = 0;
    if (rt.cu->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, e->fn) != CUDA_SUCCESS) return -1;
    if (rt.cu->FuncSetAttribute(e->clone, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v) != CUDA_SUCCESS) return -1;
    e->smem_limit = v;
    return 0;
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

static int build_args(clone_args *a, const rt_fn *e, const tidal_launch_req *q, tidal_launch *tl)
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
    if (!q->extra) {   /* a kernel without parameters */
        if (e->nparams != 0) return -1;
        a->params = a->pbuf;
        a->params[0] = tl;
        return 0;
    }
    void *src = NULL;
    size_t srcsize = 0;
    int have_size = 0;
    for (unsigned i = 0; q->extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (q->extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) src = q->extra[i + 1];
        else if (q->extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            srcsize = *(size_t *)q->extra[i + 1];
            have_size = 1;
        } else
            return -1;   /* an option this code does not know: launch as given */
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

/* Decide under the lock; launch outside it. */
typedef struct plan {
    int reshape;
    struct tidal_part *part;
    CUfunction clone;
    unsigned workers;
    tidal_launch tl;
    rt_fn e;   /* copy of the entry (nparams, launch_off) */
} plan;

static void make_plan(const tidal_launch_req *q, plan *pl)
{
    pl->reshape = 0;
    rt_fn *e = fn_lookup(q->f);
    if (!e) {
        atomic_fetch_add(&rt.n_unknown, 1);
        return;
    }
    if (e->kind == FN_UNKNOWN || e->kind == FN_CLONE) {
        atomic_fetch_add(&rt.n_unknown, 1);
        return;
    }
    if (e->kind == FN_REFUSED) {
        atomic_fetch_add(&rt.n_refused, 1);
        return;
    }
    if (q->ex && ex_needs_original(q->ex)) {
        atomic_fetch_add(&rt.n_refused, 1);
        return;
    }
    struct tidal_part *p = rt_stream_partition(rt_norm_stream(q->stream, q->ptsz));
    uint64_t logical = (uint64_t)q->grid[0] * q->grid[1] * q->grid[2];
    int threads = (int)(q->block[0] * q->block[1] * q->block[2]);
    if (!p || logical == 0 || logical > 0x7fffffffu || mirror_smem(e, q->smem) != 0) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    int occ = occupancy(e, threads, q->smem);
    if (occ <= 0) {
        atomic_fetch_add(&rt.n_unmasked, 1);
        return;
    }
    uint64_t workers = (uint64_t)occ * rt.nsm;
    if (workers > logical) workers = logical;
    unsigned allowed = tidal_smset_count(&p->mask);
    uint64_t per_round = (uint64_t)occ * (allowed ? allowed : 1);
    uint64_t chunk = logical / (per_round * 8);
    if (chunk < 1) chunk = 1;
    if (chunk > rt.max_chunk) chunk = rt.max_chunk;
    pl->reshape = 1;
    pl->clone = e->clone;
    pl->workers = (unsigned)workers;
    pl->tl.partition = (uint64_t)p->dev;
    pl->tl.grid[0] = q->grid[0];
    pl->tl.grid[1] = q->grid[1];
    pl->tl.grid[2] = q->grid[2];
    pl->tl.chunk = (uint32_t)chunk;
    pl->tl.key = ++rt.next_key | (1ull << 62);   /* never a %gridid (small numbers) */
    pl->tl.flags = 0;
    pl->part = p;
    pl->e = *e;
    atomic_fetch_add(&rt.n_rewritten, 1);
}

/* ------------------------------------------------------------------ flow-in */

/* Keep what a joining launch needs: the clone's parameter buffer (built from
 * kernelParams with the original's offsets, or the extra buffer as passed) and an event
 * that tells whether the launch is still running. Not while the stream is being captured:
 * an event record would become a node of the user's graph. */
static void remember(const tidal_launch_req *q, const plan *pl, const clone_args *a, CUstream s)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (rt.cu->StreamIsCapturing(s, &cs) != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE) return;
    rt_inflight rec;
    memset(&rec, 0, sizeof rec);
    rec.bufsize = pl->e.launch_off + sizeof(tidal_launch);
    rec.buf = calloc(1, rec.bufsize);
    if (!rec.buf) return;
    if (q->params) {
        for (unsigned i = 0; i < pl->e.nparams; i++)
            if (pl->e.poff[i] + pl->e.psize[i] <= pl->e.launch_off)
                memcpy(rec.buf + pl->e.poff[i], q->params[i], pl->e.psize[i]);
    } else if (a->bufp) {
        memcpy(rec.buf, a->bufp, pl->e.launch_off);
    }
    memcpy(rec.buf + pl->e.launch_off, &pl->tl, sizeof pl->tl);
    rec.key = pl->tl.key;
    rec.clone = pl->clone;
    rec.workers = pl->workers;
    rec.block[0] = q->block[0];
    rec.block[1] = q->block[1];
    rec.block[2] = q->block[2];
    rec.smem = q->smem;
    rec.launch_off = pl->e.launch_off;
    pthread_mutex_lock(&rt.lock);
    if (rt.initialized) rt_inflight_add(pl->part, &rec, s);
    else free(rec.buf);
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

/* p was given SMs: every launch of p still running gets joiners, as many workers as it
 * started with; those the hardware places on SMs outside the mask leave at once. */
void rt_inflight_grow(struct tidal_part *p)
{
    for (unsigned i = 0; i < TIDAL_INFLIGHT; i++) {
        rt_inflight *r = &p->inflight[i];
        if (!r->used) continue;
        CUresult q = rt.cu->EventQuery(r->done);
        if (q != CUDA_ERROR_NOT_READY) {   /* finished (or failed): nothing to join */
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
        CUresult lr = rt.cu->LaunchKernel(r->clone, r->workers, 1, 1, r->block[0], r->block[1], r->block[2], r->smem,
                                          rt.join_stream, NULL, extra);
        if (lr == CUDA_SUCCESS) atomic_fetch_add(&rt.n_joins, 1);
        else tidal__log("joiners for launch %llx: %d", (unsigned long long)r->key, (int)lr);
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
    if (build_args(&a, &pl->e, q, &pl->tl) != 0) {
        free_args(&a);
        return CUDA_SUCCESS;
    }
    *ok = 1;
    CUresult r;
    CUstream s = rt_norm_stream(q->stream, q->ptsz);
    if (q->ex) {
        CUlaunchConfig c = *q->ex;
        c.gridDimX = pl->workers;
        c.gridDimY = 1;
        c.gridDimZ = 1;
        c.hStream = s;
        r = rt.cu->LaunchKernelEx(&c, pl->clone, a.params, a.params ? NULL : a.extra);
    } else {
        r = rt.cu->LaunchKernel(pl->clone, pl->workers, 1, 1, q->block[0], q->block[1], q->block[2], q->smem, s,
                                a.params, a.params ? NULL : (a.bufp ? a.extra : NULL));
    }
    if (r == CUDA_SUCCESS && rt.flow_in) remember(q, pl, &a, s);
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
    if (!pl.reshape) return CUDA_SUCCESS;
    int ok;
    CUresult r = launch_plan(q, &pl, &ok);
    if (!ok) {
        atomic_fetch_sub(&rt.n_rewritten, 1);
        atomic_fetch_add(&rt.n_unmasked, 1);
        return CUDA_SUCCESS;
    }
    *handled = 1;
    return r;
}

CUresult tidal__launch(const tidal_launch_req *q)
{
    int handled;
    CUresult r = tidal__launch_or_decline(q, &handled);
    if (handled) return r;
    if (!rt.cu) return CUDA_ERROR_NOT_INITIALIZED;   /* no driver: the launch cannot happen */
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
