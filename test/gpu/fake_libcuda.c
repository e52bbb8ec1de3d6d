/* fake_libcuda.c -- a stand-in libcuda.so.1 for exercising tidal_gpu_harness on a machine
 * without a GPU (the harness's plumbing: child processes, module checks, partitions,
 * mask flips, slot checks, reporting). It runs no PTX. "Device" memory is host memory; a
 * launch fills every buffer passed as a pointer parameter with bytes that depend only on
 * the entry name, the parameter index and the offset (so runs are "deterministic"), and, in
 * a module that defines the marker, does the bookkeeping a rewritten kernel does (ABI v5):
 * one exec_count increment per logical block (case b; clones with TIDAL_LAUNCH_EXEC),
 * sm_blocks on the first allowed SM (case b; clones with TIDAL_LAUNCH_HIST; SM 0 and
 * violations + 1 for an empty mask when the launch has dynamic work), nothing for case b
 * of a grid of >= TIDAL_MAX_LOGICAL blocks (the original body), and the slot words an
 * epoch-mode clone leaves (claim and guard with the launch's epoch, next = the tickets,
 * every worker arrived; nothing for a STATIC launch whose workers cover the grid). A JOIN
 * launch while its owner runs moves half of the busiest SM's blocks to the highest SM the
 * mask now allows. A launch stays "running" for FAKE_CUDA_KERNEL_MS (default 2) so that
 * waits, polls and flips happen. A clone launched without room for its protocol words
 * after tidal_launch.sh_off in its dynamic shared memory fails, as the real clone traps.
 * Functions have no static shared memory.
 *
 * FAKE_CUDA_BUG injects one fault in rewritten modules, to see the harness fail:
 *   diff     one output byte differs          exec     one logical block not counted
 *   twice    one logical block counted twice  outside  blocks counted on an SM outside the mask
 *   noviol   an empty mask does not raise violations
 *   slot     a probe slot is left dirty       epoch    an epoch-mode launch leaves the wrong epoch
 *   static   a covering STATIC launch writes its slot
 *   flags    clones count exec_count / sm_blocks without TIDAL_LAUNCH_EXEC / HIST
 *   huge     case b counts a grid of >= 2^24 blocks (as if the protocol had run it)
 *   join     JOIN launches do nothing         hang     the launch never finishes
 *   crash    the process aborts in the launch
 *
 *   cc -shared -fPIC -O1 -I/usr/local/cuda/include -Iabi fake_libcuda.c -o DIR/libcuda.so.1 -lpthread
 *   LD_LIBRARY_PATH=DIR tidal_gpu_harness ORIG TIDAL ...
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tidal_abi.h"

#define MAXA 4096
static struct {
    uint64_t p;
    size_t n;
} allocs[MAXA];
static int nallocs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double busy_until;
static int hanging; /* FAKE_CUDA_BUG=hang: set by a launch of a rewritten kernel */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static const char *bug(void)
{
    const char *b = getenv("FAKE_CUDA_BUG");
    return b ? b : "";
}

typedef struct fmod_s {
    char *text;
    uint64_t ctl;
    uint64_t marker;
} fmod_t;
typedef struct ffun_s {
    fmod_t *m;
    char name[256];
    int nparams;
    int psize[128];
} ffun_t;

CUresult cuInit(unsigned f)
{
    (void)f;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int o)
{
    (void)o;
    *d = 0;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)0x1;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : 232448;
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned f)
{
    static int k;
    (void)f;
    *s = (CUstream)(uintptr_t)(0x100 + k++);
    return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char **s)
{
    (void)r;
    *s = "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char **s)
{
    (void)r;
    *s = "fake libcuda error";
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    void *m = calloc(1, n ? n : 1);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    if (nallocs < MAXA) {
        allocs[nallocs].p = (uint64_t)(uintptr_t)m;
        allocs[nallocs].n = n;
        nallocs++;
    }
    pthread_mutex_unlock(&mu);
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == p) {
            allocs[i] = allocs[--nallocs];
            break;
        }
    pthread_mutex_unlock(&mu);
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "fake GPU");
    return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m)
{
    fmod_t *f = (fmod_t *)m;
    if (f->ctl) cuMemFree_v2(f->ctl);
    if (f->marker) cuMemFree_v2(f->marker);
    free(f->text);
    free(f);
    return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f)
{
    (void)f;
    *p = calloc(1, n);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    (void)st;
    return cuMemcpyHtoD_v2(d, s, n);
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
    memcpy(d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return cuMemcpyDtoH_v2(d, s, n);
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s)
{
    (void)s;
    uint32_t *p = (uint32_t *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++) p[i] = v;
    return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s)
{
    if ((uintptr_t)s == 0x101) return CUDA_SUCCESS; /* the flip stream: copies are instant */
    if (hanging)
        for (;;) {
            struct timespec t = {1, 0};
            nanosleep(&t, 0);
        }
    while (now() < busy_until) {
        struct timespec t = {0, 100000};
        nanosleep(&t, 0);
    }
    return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream s)
{
    if ((uintptr_t)s == 0x101) return CUDA_SUCCESS; /* the flip stream */
    if (hanging) return CUDA_ERROR_NOT_READY;
    return now() < busy_until ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v)
{
    (void)n;
    (void)o;
    (void)v;
    fmod_t *f = calloc(1, sizeof *f);
    f->text = strdup((const char *)img);
    if (!strstr(f->text, ".entry")) return CUDA_ERROR_INVALID_PTX;
    *m = (CUmodule)f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
    fmod_t *m = (fmod_t *)mod;
    char pat[300];
    snprintf(pat, sizeof pat, ".entry %s(", name);
    const char *p = strstr(m->text, pat);
    if (!p) return CUDA_ERROR_NOT_FOUND;
    ffun_t *f = calloc(1, sizeof *f);
    f->m = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    const char *end = strchr(p, ')');
    for (const char *q = strstr(p, ".param"); q && q < end; q = strstr(q + 6, ".param")) {
        int sz = 8;
        const char *eol = strpbrk(q, ",)");
        const char *br = memchr(q, '[', (size_t)(eol - q));
        if (br)
            sz = atoi(br + 1);
        else if (strstr(q, ".u32") && strstr(q, ".u32") < eol)
            sz = 4;
        else if (strstr(q, ".f32") && strstr(q, ".f32") < eol)
            sz = 4;
        else if (strstr(q, ".b32") && strstr(q, ".b32") < eol)
            sz = 4;
        f->psize[f->nparams++] = sz;
    }
    *fn = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *bytes, CUmodule mod, const char *name)
{
    fmod_t *m = (fmod_t *)mod;
    if (!strstr(m->text, name)) return CUDA_ERROR_NOT_FOUND;
    uint64_t *slot = !strcmp(name, TIDAL_CTL_SYMBOL) ? &m->ctl : &m->marker;
    if (!*slot) {
        CUdeviceptr p;
        cuMemAlloc_v2(&p, 8);
        *slot = p;
    }
    *d = *slot;
    /* the marker's size says whether the module has __tidal_ctl (abi/tidal_abi.h) */
    *bytes = !strcmp(name, TIDAL_CTL_SYMBOL)     ? 8
             : strstr(m->text, TIDAL_CTL_SYMBOL) ? TIDAL_MARKER_BYTES_CASE_B
                                                 : TIDAL_MARKER_BYTES;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f;
    (void)a;
    (void)v;
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 48 * 1024 : 0;
    return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int b, size_t s)
{
    (void)f;
    (void)s;
    *n = b >= 512 ? 2 : 8;
    return CUDA_SUCCESS;
}

static size_t alloc_size(uint64_t p)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == p) return allocs[i].n;
    return 0;
}

/* The running owner of the last epoch-mode launch (for JOIN launches). */
static tidal_slot *owner_slot;
static double launch_entry; /* when the current cuLaunchKernel began (filling buffers takes a while) */

static void bookkeeping(tidal_partition *P, const tidal_launch *tl, int clone, uint64_t logical, uint64_t phys,
                        const char *b)
{
    uint32_t *ex = (uint32_t *)(uintptr_t)P->exec_count;
    uint64_t *smb = (uint64_t *)(uintptr_t)P->sm_blocks;
    tidal_slot *slots = (tidal_slot *)((uint8_t *)P + TIDAL_PARTITION_HEADER);
    uint32_t probe_first = 0;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
    probe_first = P->probe_base;
#endif
    if (!clone && logical >= TIDAL_MAX_LOGICAL && strcmp(b, "huge")) return; /* the original body */
    if (clone && (tl->flags & TIDAL_LAUNCH_JOIN)) {
        if (!strcmp(b, "join") || !smb || launch_entry >= busy_until) return; /* the owner has finished */
        tidal_slot *s = &slots[tl->slot];
        if (s != owner_slot || (s->claim >> TIDAL_EPOCH_SHIFT) != tl->epoch) return;
        int src = 0, dst = -1;
        for (int k = 0; k < 256; k++) {
            if (smb[k] > smb[src]) src = k;
            if ((P->mask[k / 64] >> (k % 64)) & 1) dst = k;
        }
        if (dst >= 0 && dst != src && smb[src] > 1) {
            uint64_t n = smb[src] / 2;
            smb[src] -= n;
            smb[dst] += n;
        }
        return;
    }
    const int flagbug = !strcmp(b, "flags");
    const int counted = (tl->flags & TIDAL_LAUNCH_EXEC) || flagbug, hist = (tl->flags & TIDAL_LAUNCH_HIST) || flagbug;
    uint32_t chunk = tl->chunk < 1 ? 1 : tl->chunk > TIDAL_MAX_CHUNK ? TIDAL_MAX_CHUNK : tl->chunk;
    const int is_static = clone && (tl->flags & TIDAL_LAUNCH_STATIC);
    const int dynamic = !is_static || tl->base < logical;
    for (uint64_t i = 0; ex && counted && i < logical; i++) ex[i]++;
    if (ex && counted && !strcmp(b, "exec")) ex[logical / 3]--;
    if (ex && counted && !strcmp(b, "twice")) ex[logical / 2]++;
    int sm = -1;
    for (int s = 0; s < 256 && sm < 0; s++)
        if ((P->mask[s / 64] >> (s % 64)) & 1) sm = s;
    if (sm < 0) {
        sm = 0;
        if (dynamic && strcmp(b, "noviol")) P->violations++;
    }
    if (!strcmp(b, "outside")) sm = 255;
    if (smb && hist) smb[sm] += logical;
    if (clone && !(tl->flags & TIDAL_LAUNCH_PROBE) && (dynamic || !strcmp(b, "static"))) {
        tidal_slot *s = &slots[tl->slot];
        uint64_t need = logical > tl->base ? logical - tl->base : 0;
        uint64_t e = tl->epoch - (!strcmp(b, "epoch") ? 1 : 0);
        s->claim = (e << TIDAL_EPOCH_SHIFT) | (((need + chunk - 1) / chunk) * chunk);
        s->guard = (e << TIDAL_EPOCH_SHIFT) | (phys << TIDAL_GUARD_ARRIVED_SHIFT);
        owner_slot = s;
    }
    if (!strcmp(b, "slot")) slots[probe_first + 1].claim = 7;
}

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream st, void **params, void **extra)
{
    (void)bx;
    (void)by;
    (void)bz;
    (void)st;
    (void)extra;
    ffun_t *f = (ffun_t *)fn;
    launch_entry = now();
    const int rewritten = strstr(f->m->text, TIDAL_MARKER_SYMBOL) != NULL;
    const int clone = strstr(f->name, TIDAL_RESHAPED_SUFFIX) != NULL;
    const char *b = bug();
    if (rewritten && !strcmp(b, "crash")) abort();
    if (rewritten && !strcmp(b, "hang")) hanging = 1;
    char base[256];
    snprintf(base, sizeof base, "%s", f->name);
    char *suf = strstr(base, TIDAL_RESHAPED_SUFFIX);
    if (suf) *suf = 0;
    size_t bl = strlen(base); /* the harness's --sanitize runs the original as NAME__ref */
    if (!rewritten && bl > 5 && !strcmp(base + bl - 5, "__ref")) base[bl - 5] = 0;
    uint64_t h0 = 1469598103934665603ull;
    for (const char *c = base; *c; c++) h0 = (h0 ^ (unsigned char)*c) * 1099511628211ull;
    int nuser = clone ? f->nparams - 1 : f->nparams;
    for (int i = 0; i < nuser; i++) {
        if (f->psize[i] != 8) continue;
        uint64_t p;
        memcpy(&p, params[i], 8);
        size_t n = alloc_size(p);
        uint8_t *m = (uint8_t *)(uintptr_t)p;
        for (size_t k = 0; k < n; k++) m[k] = (uint8_t)((h0 >> ((k + i) % 56)) ^ (k * 131) ^ i);
        if (rewritten && !strcmp(b, "diff") && n) m[n / 2] ^= 1;
    }
    if (rewritten) {
        uint64_t part = 0;
        uint64_t logical = (uint64_t)gx * gy * gz, phys = (uint64_t)gx * gy * gz;
        tidal_launch tl;
        memset(&tl, 0, sizeof tl);
        tl.flags = TIDAL_LAUNCH_PROBE | TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC; /* case b */
        if (clone) {
            memcpy(&tl, params[f->nparams - 1], sizeof tl);
            if ((uint64_t)tl.sh_off + TIDAL_SH_BYTES > smem) return CUDA_ERROR_LAUNCH_FAILED; /* the clone traps */
            part = tl.partition;
            logical = (uint64_t)tl.grid[0] * tl.grid[1] * tl.grid[2];
        }
        if (!part && f->m->ctl) memcpy(&part, (void *)(uintptr_t)f->m->ctl, 8);
        if (part) bookkeeping((tidal_partition *)(uintptr_t)part, &tl, clone, logical, phys, b);
    }
    const char *ms = getenv("FAKE_CUDA_KERNEL_MS");
    busy_until = now() + (ms ? atof(ms) : 2.0) * 1e-3;
    return CUDA_SUCCESS;
}
