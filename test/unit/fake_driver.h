/* fake_driver.h — a fake CUDA driver table for libtidal's unit tests (no GPU): "device
 * memory" is host memory, launches are recorded in `last`, not run. One module "rw" holds a
 * rewritten kernel k (clone k__tidal_reshaped, tidal_launch at offset 16, k__tidal_nparams)
 * and a refused kernel r; module "plain" holds u, not rewritten. kk, kr and ku are CUkernel
 * handles (library kernels, as CUDA 13's cudart launches <<<>>>) of k, r and u. Events
 * complete when fake_running is 0 and time every launch at fake_ms. There is no
 * green-context API until fake_green_on() (below): placement is off, and only streams on
 * all SMs count as placed. The two L2 sides and VMM memory homed on them exist only after
 * fake_l2_on() (below).
 *
 * Where the real driver fails a call, so does the fake, and it counts the failure in
 * fake_errors (the calls in fake_error_log): compute-sanitizer reports every failing call
 * of a program, so libtidal must make none in normal operation. The failures modelled:
 * cuFuncGetParamInfo past the last parameter (INVALID_VALUE), cuFuncGet* on a CUkernel and
 * cuKernelGetFunction on a CUfunction (INVALID_HANDLE), cuModuleGetGlobal and
 * cuModuleGetFunction of a missing name (NOT_FOUND). cuEventQuery's NOT_READY is a status,
 * not an error (the driver documents it as "not actually an error"). Include once per test
 * program. */
#ifndef TIDAL_FAKE_DRIVER_H
#define TIDAL_FAKE_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l2side.h"
#include "runtime_internal.h"
#include "tidal_abi.h"

#define NSM 132
#define FAKE_OCC 4
#define FAKE_OPTIN 232448 /* shared memory per block, opt-in (the H200's) */

typedef struct fake_module {
    int rewritten;
    uint64_t ctl; /* __tidal_ctl */
    uint32_t marker;
    const char *names[4];
    struct fake_fn *fns[4];
    int case_b;     /* rewritten with case b: defines __tidal_ctl, 8-byte marker */
    int no_nparams; /* rewritten by a tidal before NAME__tidal_nparams existed */
} fake_module;

typedef struct fake_fn {
    const char *name;
    fake_module *mod;
    unsigned nparams;
    size_t off[8], size[8];
    int max_dyn_smem; /* MAX_DYNAMIC_SHARED_SIZE_BYTES as set; 0: the default, 48 KiB - static */
    int loaded;
    struct fake_fn *kernel_of; /* non-NULL: a CUkernel, whose CUfunction here is kernel_of */
    int static_smem;           /* SHARED_SIZE_BYTES */
    int cluster;               /* REQUIRED_CLUSTER_WIDTH (.reqnctapercluster; 0: none) */
} fake_fn;

static int fake_errors;          /* failing calls since fake_reset */
static char fake_error_log[512]; /* their names, in order */
static CUresult fake_fail(const char *call, CUresult r)
{
    fake_errors++;
    size_t n = strlen(fake_error_log);
    snprintf(fake_error_log + n, sizeof fake_error_log - n, "%s%s=%d", n ? " " : "", call, (int)r);
    return r;
}
static int is_kernel(const void *h) { return ((const fake_fn *)h)->kernel_of != NULL; }

/* Shared-memory bookkeeping: FuncSetAttribute calls that failed (static + value over
 * FAKE_OPTIN), the smem of the last occupancy query. */
static int fake_setattr_failed;
static size_t fake_occ_smem;
static int fake_max_dyn(const fake_fn *f) { return f->max_dyn_smem ? f->max_dyn_smem : 48 * 1024 - f->static_smem; }

static struct {
    CUfunction f;
    unsigned grid[3], block[3], smem;
    CUstream stream;
    void *params[8];
    unsigned char buf[256];
    size_t bufsize;
    int via_ex, nattrs, calls;
    int gate_held; /* a sample gate wait was queued and its word was below it at launch time */
} last;

/* The sample gate (launch.c): stream waits on a pinned word. fake_waits counts them; the
 * last one's address, value and flags are kept. "Device" pointers of host memory are the
 * host pointers. */
static unsigned fake_waits;
static CUdeviceptr fake_wait_addr;
static cuuint32_t fake_wait_value;
static unsigned fake_wait_flags;
static CUresult f_waitvalue(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned fl)
{
    (void)s;
    fake_waits++;
    fake_wait_addr = a;
    fake_wait_value = v;
    fake_wait_flags = fl;
    return CUDA_SUCCESS;
}
static CUresult f_hostdevptr(CUdeviceptr *d, void *h, unsigned fl)
{
    (void)fl;
    *d = (CUdeviceptr)h;
    return CUDA_SUCCESS;
}
static int fake_gate_below(void)
{
    return fake_wait_addr && (int32_t)(*(volatile uint32_t *)fake_wait_addr - fake_wait_value) < 0;
}

static CUresult f_init(unsigned x)
{
    (void)x;
    return CUDA_SUCCESS;
}
static CUresult f_errname(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_X";
    return CUDA_SUCCESS;
}
static CUcontext the_ctx = (CUcontext)0x1000;
static CUresult f_ctxget(CUcontext *c)
{
    *c = the_ctx;
    return CUDA_SUCCESS;
}
static CUresult f_ctxset(CUcontext c)
{
    the_ctx = c;
    return CUDA_SUCCESS;
}
static CUresult f_ctxdev(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult f_devget(CUdevice *d, int o)
{
    (void)o;
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult f_retain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = the_ctx;
    return CUDA_SUCCESS;
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT                ? NSM
         : a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? FAKE_OPTIN
                                                                      : 0;
    return CUDA_SUCCESS;
}
static int alloc_fail;
/* Stream capture in global mode forbids "unsafe" calls (allocations, synchronizations) on
 * every thread whose capture mode is not relaxed; fake_capture_strict makes the fake
 * enforce it while fake_capturing, counting each violation. */
static int fake_capture_strict, fake_capture_violations;
static CUstreamCaptureMode fake_thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static int fake_capturing;
static int capture_forbids(void)
{
    if (!fake_capture_strict || !fake_capturing || fake_thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return 0;
    fake_capture_violations++;
    return 1;
}
static CUresult f_capmode(CUstreamCaptureMode *m)
{
    CUstreamCaptureMode old = fake_thread_mode;
    fake_thread_mode = *m;
    *m = old;
    return CUDA_SUCCESS;
}
static CUresult f_alloc(CUdeviceptr *p, size_t n)
{
    if (alloc_fail) return fake_fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
    if (capture_forbids()) return fake_fail("cuMemAlloc", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    void *m = calloc(1, n);
    *p = (CUdeviceptr)m;
    return m ? CUDA_SUCCESS : fake_fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
}
static CUresult f_free(CUdeviceptr p)
{
    free((void *)p);
    return CUDA_SUCCESS;
}
static CUresult f_allochost(void **p, size_t n)
{
    if (capture_forbids()) return fake_fail("cuMemAllocHost", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    *p = calloc(1, n);
    return CUDA_SUCCESS;
}
static CUresult f_freehost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}
static int fake_memsets;
static CUresult f_memset(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    memset((void *)p, v, n);
    fake_memsets++;
    return CUDA_SUCCESS;
}
static CUresult f_htod(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    (void)s;
    memcpy((void *)d, h, n);
    return CUDA_SUCCESS;
}
static CUresult f_dtoh(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    (void)s;
    memcpy(h, (void *)d, n);
    return CUDA_SUCCESS;
}
static CUresult f_screate(CUstream *s, unsigned fl)
{
    (void)fl;
    *s = (CUstream)0x5000;
    return CUDA_SUCCESS;
}
static CUresult f_sdestroy(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}
static CUresult f_ssync(CUstream s)
{
    (void)s;
    return capture_forbids() ? fake_fail("cuStreamSynchronize", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) : CUDA_SUCCESS;
}
static fake_fn *fn_named(fake_module *fm, const char *name, size_t len)
{
    for (int i = 0; i < 4 && fm->names[i]; i++)
        if (strlen(fm->names[i]) == len && strncmp(fm->names[i], name, len) == 0) return fm->fns[i];
    return NULL;
}
static unsigned char fake_nparams_bytes[64]; /* where every NAME__tidal_nparams "lives" */
static CUresult f_global(CUdeviceptr *p, size_t *n, CUmodule m, const char *name)
{
    fake_module *fm = (fake_module *)m;
    if (!fm->rewritten) return fake_fail("cuModuleGetGlobal", CUDA_ERROR_NOT_FOUND);
    if (fm->case_b && strcmp(name, TIDAL_CTL_SYMBOL) == 0) {
        *p = (CUdeviceptr)&fm->ctl;
        *n = 8;
        return CUDA_SUCCESS;
    }
    if (strcmp(name, TIDAL_MARKER_SYMBOL) == 0) {
        *p = (CUdeviceptr)&fm->marker;
        *n = fm->case_b ? TIDAL_MARKER_BYTES_CASE_B : TIDAL_MARKER_BYTES;
        return CUDA_SUCCESS;
    }
    /* NAME__tidal_nparams: the size of the clone's parameter list (abi/tidal_abi.h) */
    size_t len = strlen(name), sl = strlen(TIDAL_NPARAMS_SUFFIX);
    if (!fm->no_nparams && len > sl && strcmp(name + len - sl, TIDAL_NPARAMS_SUFFIX) == 0) {
        char clone[128];
        snprintf(clone, sizeof clone, "%.*s%s", (int)(len - sl), name, TIDAL_RESHAPED_SUFFIX);
        fake_fn *c = fn_named(fm, clone, strlen(clone));
        if (c) {
            *p = (CUdeviceptr)fake_nparams_bytes;
            *n = c->nparams;
            return CUDA_SUCCESS;
        }
    }
    return fake_fail("cuModuleGetGlobal", CUDA_ERROR_NOT_FOUND);
}
static CUresult f_getfn(CUfunction *f, CUmodule m, const char *name)
{
    fake_fn *fn = fn_named((fake_module *)m, name, strlen(name));
    if (!fn) return fake_fail("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND);
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}
static CUresult f_fncount(unsigned *n, CUmodule m)
{
    fake_module *fm = (fake_module *)m;
    unsigned c = 0;
    while (c < 4 && fm->names[c]) c++;
    *n = c;
    return CUDA_SUCCESS;
}
static CUresult f_fnenum(CUfunction *fs, unsigned n, CUmodule m)
{
    fake_module *fm = (fake_module *)m;
    for (unsigned i = 0; i < n; i++) fs[i] = (CUfunction)fm->fns[i];
    return CUDA_SUCCESS;
}
/* The cuFunc* queries take a CUfunction only: a CUkernel is an invalid handle there. */
static CUresult f_fnmod(CUmodule *m, CUfunction f)
{
    if (is_kernel(f)) return fake_fail("cuFuncGetModule", CUDA_ERROR_INVALID_HANDLE);
    *m = (CUmodule)((fake_fn *)f)->mod;
    return CUDA_SUCCESS;
}
static CUresult f_fnname(const char **s, CUfunction f)
{
    if (is_kernel(f)) return fake_fail("cuFuncGetName", CUDA_ERROR_INVALID_HANDLE);
    *s = ((fake_fn *)f)->name;
    return CUDA_SUCCESS;
}
static CUresult f_paraminfo(CUfunction f, size_t i, size_t *off, size_t *sz)
{
    fake_fn *ff = (fake_fn *)f;
    if (is_kernel(f)) return fake_fail("cuFuncGetParamInfo", CUDA_ERROR_INVALID_HANDLE);
    if (i >= ff->nparams) return fake_fail("cuFuncGetParamInfo", CUDA_ERROR_INVALID_VALUE);
    *off = ff->off[i];
    *sz = ff->size[i];
    return CUDA_SUCCESS;
}
static CUresult f_fnattr(int *v, CUfunction_attribute a, CUfunction f)
{
    if (is_kernel(f)) return fake_fail("cuFuncGetAttribute", CUDA_ERROR_INVALID_HANDLE);
    const fake_fn *ff = (const fake_fn *)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? fake_max_dyn(ff)
         : a == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES           ? ff->static_smem
         : a == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH      ? ff->cluster
                                                              : 0;
    return CUDA_SUCCESS;
}
/* As the driver: static + dynamic may not pass the opt-in limit. */
static CUresult f_fnsetattr(CUfunction f, CUfunction_attribute a, int v)
{
    if (is_kernel(f)) return fake_fail("cuFuncSetAttribute", CUDA_ERROR_INVALID_HANDLE);
    fake_fn *ff = (fake_fn *)f;
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_SUCCESS;
    if (v < 0 || v + ff->static_smem > FAKE_OPTIN) {
        fake_setattr_failed++;
        return fake_fail("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE);
    }
    ff->max_dyn_smem = v;
    return CUDA_SUCCESS;
}
static CUresult f_fnload(CUfunction f)
{
    if (is_kernel(f)) return fake_fail("cuFuncLoad", CUDA_ERROR_INVALID_HANDLE);
    ((fake_fn *)f)->loaded = 1;
    return CUDA_SUCCESS;
}
static CUresult f_kernelfn(CUfunction *g, CUkernel k)
{
    if (!is_kernel(k)) return fake_fail("cuKernelGetFunction", CUDA_ERROR_INVALID_HANDLE);
    *g = (CUfunction)((fake_fn *)k)->kernel_of;
    return CUDA_SUCCESS;
}
/* Occupancy and launches take both kinds (the driver documents a CUkernel cast to CUfunction). */
static CUresult f_occ(int *occ, CUfunction f, int threads, size_t smem)
{
    fake_fn *ff = (fake_fn *)f;
    if (ff->kernel_of) ff = ff->kernel_of;
    fake_occ_smem = smem;
    *occ = (threads > 1024 || (int)smem > fake_max_dyn(ff)) ? 0 : FAKE_OCC;
    return CUDA_SUCCESS;
}
static void record(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned smem, CUstream s, void **params, void **extra)
{
    memset(&last, 0, sizeof last);
    last.calls = 1;
    last.gate_held = fake_gate_below();
    last.f = f;
    last.grid[0] = gx, last.grid[1] = gy, last.grid[2] = gz;
    last.block[0] = bx, last.block[1] = by, last.block[2] = bz;
    last.smem = smem;
    last.stream = s;
    fake_fn *ff = (fake_fn *)f;
    if (ff->kernel_of) ff = ff->kernel_of;
    if (params)
        for (unsigned i = 0; i < ff->nparams && i < 8; i++) last.params[i] = params[i];
    if (extra) {
        void *buf = NULL;
        size_t n = 0;
        for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) n = *(size_t *)extra[i + 1];
        }
        if (buf && n <= sizeof last.buf) memcpy(last.buf, buf, n);
        last.bufsize = n;
    }
}
/* Runs a launched kernel the fake can run (the L2 probes, fake_l2_on): set by fake_l2_on. */
static void (*fake_run)(CUfunction f, void **params);
/* The same for kernels whose effect depends on the stream's SMs (green.c's probe,
 * fake_green_on). */
static void (*fake_run_on)(CUfunction f, CUstream s, void **params);
/* As the driver, a launch with more dynamic shared memory than the function is allowed
 * fails (it is still recorded). */
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, CUstream s, void **params, void **extra)
{
    record(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    if (fake_run && params) fake_run(f, params);
    if (fake_run_on && params) fake_run_on(f, s, params);
    return (int)smem > fake_max_dyn((fake_fn *)f) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult f_launchex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    record(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->sharedMemBytes,
           c->hStream, params, extra);
    last.via_ex = 1;
    last.nattrs = (int)c->numAttrs;
    return (int)c->sharedMemBytes > fake_max_dyn((fake_fn *)f) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* Events: "running" until fake_finish_all(); capture status from fake_capturing. */
static int fake_running = 1;
static CUresult f_evcreate(CUevent *e, unsigned fl)
{
    (void)fl;
    *e = (CUevent)calloc(1, 8);
    return CUDA_SUCCESS;
}
static CUresult f_evrecord(CUevent e, CUstream s)
{
    (void)e;
    (void)s;
    return CUDA_SUCCESS;
}
static CUresult f_evquery(CUevent e)
{
    (void)e;
    return fake_running ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
static CUresult f_evdestroy(CUevent e)
{
    free(e);
    return CUDA_SUCCESS;
}
/* Duration samples: every timed launch "took" fake_ms. */
static float fake_ms = 0.005f;
static CUresult f_elapsed(float *ms, CUevent a, CUevent b)
{
    (void)a;
    (void)b;
    *ms = fake_ms;
    return CUDA_SUCCESS;
}
static CUresult f_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    *st = fake_capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

/* Capture ids: fake_capture_id while capturing (CUDA 13 gives one); 0 = the driver gives
 * none (old drivers: the query fails). */
static unsigned long long fake_capture_id = 1;
static CUresult f_capinfo(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id)
{
    (void)s;
    if (!fake_capture_id) return fake_fail("cuStreamGetCaptureInfo", CUDA_ERROR_NOT_SUPPORTED);
    *st = fake_capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    *id = fake_capturing ? fake_capture_id : 0;
    return CUDA_SUCCESS;
}

static tidal_cu fake = {
    .EventCreate = f_evcreate,
    .EventRecord = f_evrecord,
    .EventQuery = f_evquery,
    .EventDestroy = f_evdestroy,
    .EventElapsedTime = f_elapsed,
    .StreamIsCapturing = f_capturing,
    .StreamGetCaptureInfo = f_capinfo,
    .Init = f_init,
    .GetErrorName = f_errname,
    .CtxGetCurrent = f_ctxget,
    .CtxSetCurrent = f_ctxset,
    .CtxGetDevice = f_ctxdev,
    .DeviceGet = f_devget,
    .DevicePrimaryCtxRetain = f_retain,
    .DeviceGetAttribute = f_attr,
    .MemAlloc = f_alloc,
    .MemFree = f_free,
    .MemAllocHost = f_allochost,
    .MemFreeHost = f_freehost,
    .MemsetD8Async = f_memset,
    .MemcpyHtoDAsync = f_htod,
    .MemcpyDtoHAsync = f_dtoh,
    .StreamCreate = f_screate,
    .StreamDestroy = f_sdestroy,
    .StreamSynchronize = f_ssync,
    .ModuleGetGlobal = f_global,
    .ModuleGetFunction = f_getfn,
    .ModuleGetFunctionCount = f_fncount,
    .ModuleEnumerateFunctions = f_fnenum,
    .FuncGetModule = f_fnmod,
    .FuncGetName = f_fnname,
    .FuncGetParamInfo = f_paraminfo,
    .FuncGetAttribute = f_fnattr,
    .FuncSetAttribute = f_fnsetattr,
    .FuncLoad = f_fnload,
    .KernelGetFunction = f_kernelfn,
    .OccupancyMaxActiveBlocksPerMultiprocessor = f_occ,
    .LaunchKernel = f_launch,
    .LaunchKernelEx = f_launchex,
    .ThreadExchangeStreamCaptureMode = f_capmode,
    .StreamWaitValue32 = f_waitvalue,
    .MemHostGetDevicePointer = f_hostdevptr,
};

/* Module "rw": kernel k(ptr, int) rewritten (clone with the tidal_launch at offset 16),
 * kernel r refused (no clone). Module "plain": kernel u, not rewritten. */
static fake_fn fk = {"k", NULL, 2, {0, 8}, {8, 4}, 0, 0, NULL, 0, 0};
static fake_fn fkc = {"k__tidal_reshaped", NULL, 3, {0, 8, 16}, {8, 4, TIDAL_LAUNCH_BYTES}, 0, 0, NULL, 0, 0};
static fake_fn fr = {"r", NULL, 1, {0}, {8}, 0, 0, NULL, 0, 0};
static fake_fn fu = {"u", NULL, 1, {0}, {8}, 0, 0, NULL, 0, 0};
static fake_module mrw = {1, 0, 1, {"k", "k__tidal_reshaped", "r", NULL}, {&fk, &fkc, &fr, NULL}, 1, 0};
static fake_module mplain = {0, 0, 0, {"u", NULL}, {&fu, NULL}, 0, 0};
/* CUkernel handles of k, r and u (cuLibraryGetKernel's) */
static fake_fn kk = {.name = "k", .kernel_of = &fk};
static fake_fn kr = {.name = "r", .kernel_of = &fr};
static fake_fn ku = {.name = "u", .kernel_of = &fu};

/* ------------------------------------------------------------------ the L2 (fake_l2_on)
 * Off unless a test calls fake_l2_on (the default fake has no VMM API and no
 * cuModuleLoadData): then the VMM API maps "granules" of host memory, cuModuleLoadData
 * knows the two probe kernels of l2side.c and l2mem.c, and their launches answer as an H200
 * would. SMs with (s / 2) % 3 == 0 are on SM 0's side (SM pairs, like the H200's TPCs);
 * block b of the probe's granule g is homed on fake_l2_home(g, b), by default
 * parity(b & fake_l2_mask) ^ fake_l2_flip(g). cuMemcpyDtoDAsync copies. */
static unsigned fake_l2_mask;
static unsigned fake_l2_flip(unsigned g) { return (g * 7 + g / 3) & 1u; }
static unsigned fake_l2_parity_home(unsigned g, unsigned b)
{
    return (unsigned)__builtin_parity(b & fake_l2_mask) ^ fake_l2_flip(g);
}
static unsigned (*fake_l2_home)(unsigned g, unsigned b) = fake_l2_parity_home;
static unsigned fake_sm_side(unsigned s) { return (s / 2) % 3 == 0 ? 0u : 1u; }
static size_t fake_granularity;               /* cuMemGetAllocationGranularity: 2 MiB */
static int fake_vmm_handles, fake_vmm_mapped; /* live cuMemCreate handles, mapped granules */

static fake_fn fl2side = {"tidal_l2side_probe", NULL, 6, {0}, {0}, 0, 0, NULL, 0, 0};
static fake_fn fl2mem = {"tidal_l2mem_probe", NULL, 8, {0}, {0}, 0, 0, NULL, 0, 0};
static fake_module ml2side = {0, 0, 0, {"tidal_l2side_probe", NULL}, {&fl2side, NULL}, 0, 0};
static fake_module ml2mem = {0, 0, 0, {"tidal_l2mem_probe", NULL}, {&fl2mem, NULL}, 0, 0};

static CUresult f_granularity(size_t *g, const CUmemAllocationProp *p, CUmemAllocationGranularity_flags fl)
{
    (void)p;
    (void)fl;
    *g = fake_granularity;
    return CUDA_SUCCESS;
}
static CUresult f_reserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr, unsigned long long fl)
{
    (void)addr;
    (void)fl;
    void *m = aligned_alloc(align, n);
    *p = (CUdeviceptr)m;
    return m ? CUDA_SUCCESS : fake_fail("cuMemAddressReserve", CUDA_ERROR_OUT_OF_MEMORY);
}
static CUresult f_addrfree(CUdeviceptr p, size_t n)
{
    (void)n;
    free((void *)p);
    return CUDA_SUCCESS;
}
static CUresult f_memcreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *p,
                            unsigned long long fl)
{
    (void)n;
    (void)p;
    (void)fl;
    *h = (CUmemGenericAllocationHandle)++fake_vmm_handles;
    return CUDA_SUCCESS;
}
static CUresult f_memrelease(CUmemGenericAllocationHandle h)
{
    (void)h;
    fake_vmm_handles--;
    return CUDA_SUCCESS;
}
static CUresult f_memmap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long fl)
{
    (void)p;
    (void)n;
    (void)off;
    (void)h;
    (void)fl;
    fake_vmm_mapped++;
    return CUDA_SUCCESS;
}
static CUresult f_memunmap(CUdeviceptr p, size_t n)
{
    (void)p;
    (void)n;
    fake_vmm_mapped--;
    return CUDA_SUCCESS;
}
static CUresult f_setaccess(CUdeviceptr p, size_t n, const CUmemAccessDesc *d, size_t c)
{
    (void)p;
    (void)n;
    (void)d;
    (void)c;
    return CUDA_SUCCESS;
}
static CUresult f_dtod(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memmove((void *)d, (const void *)src, n);
    return CUDA_SUCCESS;
}
static CUresult f_modload(CUmodule *m, const void *image)
{
    if (strstr(image, ".entry tidal_l2side_probe("))
        *m = (CUmodule)&ml2side;
    else if (strstr(image, ".entry tidal_l2mem_probe("))
        *m = (CUmodule)&ml2mem;
    else
        return fake_fail("cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE);
    return CUDA_SUCCESS;
}
static CUresult f_modunload(CUmodule m)
{
    (void)m;
    return CUDA_SUCCESS;
}
/* l2side.c's probe (buf, ctl, k, nsm, zero, spin): each SM's summed latency + 1 at
 * ctl + TIDAL_L2SIDE_CTL_SUM; SM 0's side hits its copy (~305 cycles), the other side pays
 * the trip for half its lines (~390 on average). l2mem.c's (base, ctl, lat, granules,
 * nprobe, ...): the probed block indices at ctl + 16, the latencies of a side-1 timer
 * (~305 on its own side, ~480 across), the timed flag at ctl + 12. */
static void fake_l2_run(CUfunction f, void **params)
{
    if (f == (CUfunction)&fl2side) {
        unsigned char *ctl = (unsigned char *)*(CUdeviceptr *)params[1];
        unsigned k = *(unsigned *)params[2], nsm = *(unsigned *)params[3];
        for (unsigned s = 0; s < nsm; s++) {
            uint64_t v = (uint64_t)(fake_sm_side(s) ? 390 + s % 7 : 305 + s % 5) * k + 1;
            memcpy(ctl + TIDAL_L2SIDE_CTL_SUM + 8 * (size_t)s, &v, 8);
        }
    } else if (f == (CUfunction)&fl2mem) {
        unsigned char *ctl = (unsigned char *)*(CUdeviceptr *)params[1];
        uint16_t *lat = (uint16_t *)*(CUdeviceptr *)params[2];
        unsigned granules = *(unsigned *)params[3], np = *(unsigned *)params[4];
        for (unsigned g = 0; g < granules; g++)
            for (unsigned i = 0; i < np; i++) {
                uint32_t b;
                memcpy(&b, ctl + 16 + 4 * i, 4);
                lat[g * np + i] = (uint16_t)(fake_l2_home(g, b) ? 305 + i % 7 : 480 + i % 5);
            }
        uint32_t one = 1;
        memcpy(ctl + 12, &one, 4);
    }
}

/* The entry points of the L2 part in the table (on), or none of them. */
static void fake_l2_table(int on)
{
    fake.MemGetAllocationGranularity = on ? f_granularity : NULL;
    fake.MemCreate = on ? f_memcreate : NULL;
    fake.MemRelease = on ? f_memrelease : NULL;
    fake.MemAddressReserve = on ? f_reserve : NULL;
    fake.MemAddressFree = on ? f_addrfree : NULL;
    fake.MemMap = on ? f_memmap : NULL;
    fake.MemUnmap = on ? f_memunmap : NULL;
    fake.MemSetAccess = on ? f_setaccess : NULL;
    fake.MemcpyDtoDAsync = on ? f_dtod : NULL;
    fake.ModuleLoadData = on ? f_modload : NULL;
    fake.ModuleUnload = on ? f_modunload : NULL;
    fake_run = on ? fake_l2_run : NULL;
}

/* The fake device homes memory by parity(block & mask) ^ flip(granule). */
static inline void fake_l2_on(unsigned mask) /* inline: not every test program uses it */
{
    fake_l2_mask = mask;
    fake_l2_home = fake_l2_parity_home;
    fake_l2_table(1);
}

/* ---------------------------------------------------------------- green contexts
 * fake_green_on(): the green-context API of a device whose SMs split two ways: with
 * CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING into 66 groups of 2 (group i = SMs
 * 2i, 2i+1), without it into 16 co-schedulable groups of 8 (group j = SMs 8j..8j+7; SMs
 * 128-131 in none). A resource carries its SM set in its padding; descriptors, green
 * contexts and their streams are fake_green_obj records holding one. green.c's %smid probe
 * (cuModuleLoadData of tidal_smid_probe) "runs": it ORs its stream's SMs into its buffer.
 * A green stream runs clusters of at most its groups' size: a larger one fails with
 * CUDA_ERROR_INVALID_CLUSTER_SIZE, as on the H200. cuEventRecord and cuStreamWaitEvent are
 * logged in fake_order (with each launch's stream), so tests see how launches are ordered. */
typedef struct fake_green_obj {
    tidal_smset set;
    unsigned grain; /* SMs per group of the resources it was made of */
    int priority;
} fake_green_obj;
#define FAKE_GREEN_OBJS 256
static fake_green_obj fake_green_objs[FAKE_GREEN_OBJS];
static unsigned fake_green_nobjs, fake_green_ctxs, fake_green_streams;
static fake_fn fsmid = {"tidal_smid_probe", NULL, 2, {0, 8}, {8, 8}, 0, 0, NULL, 0, 0};
static fake_module msmid = {0, 0, 0, {"tidal_smid_probe", NULL}, {&fsmid, NULL}, 0, 0};
typedef struct fake_order_entry {
    char op; /* 'r' cuEventRecord(a = event, b = stream), 'w' cuStreamWaitEvent(a = stream, b = event),
                'l' a launch (a = stream) */
    const void *a, *b;
} fake_order_entry;
static fake_order_entry fake_order[64];
static unsigned fake_norder;
static void fake_order_add(char op, const void *a, const void *b)
{
    if (fake_norder < 64) fake_order[fake_norder++] = (fake_order_entry){op, a, b};
}

static fake_green_obj *fake_green_new(const tidal_smset *set, unsigned grain)
{
    if (fake_green_nobjs == FAKE_GREEN_OBJS) return NULL;
    fake_green_obj *o = &fake_green_objs[fake_green_nobjs++];
    o->set = *set;
    o->grain = grain;
    o->priority = 0;
    return o;
}
/* The green stream s's record, or NULL (another stream). */
static fake_green_obj *fake_green_stream(CUstream s)
{
    const fake_green_obj *o = (const fake_green_obj *)s;
    return o >= fake_green_objs && o < fake_green_objs + fake_green_nobjs ? (fake_green_obj *)o : NULL;
}
static void res_set(CUdevResource *r, const tidal_smset *set, unsigned grain)
{
    memset(r, 0, sizeof *r);
    r->type = CU_DEV_RESOURCE_TYPE_SM;
    r->sm.smCount = tidal_smset_count(set);
    memcpy(r->_internal_padding, set, sizeof *set);
    memcpy(r->_internal_padding + sizeof *set, &grain, sizeof grain);
}
static CUresult f_devres(CUdevice d, CUdevResource *r, CUdevResourceType t)
{
    (void)d;
    if (t != CU_DEV_RESOURCE_TYPE_SM) return fake_fail("cuDeviceGetDevResource", CUDA_ERROR_INVALID_VALUE);
    tidal_smset all;
    memset(&all, 0, sizeof all);
    for (unsigned i = 0; i < NSM; i++) all.bits[i >> 6] |= 1ull << (i & 63);
    res_set(r, &all, 1);
    return CUDA_SUCCESS;
}
static CUresult f_split(CUdevResource *res, unsigned *n, const CUdevResource *in, CUdevResource *rest, unsigned fl,
                        unsigned min)
{
    (void)in;
    (void)rest;
    const unsigned grain = (fl & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) ? 2 : 8;
    if (min > grain) return fake_fail("cuDevSmResourceSplitByCount", CUDA_ERROR_INVALID_VALUE);
    unsigned groups = grain == 2 ? NSM / 2 : 16;
    if (*n < groups) groups = *n;
    for (unsigned g = 0; g < groups; g++) {
        tidal_smset set;
        memset(&set, 0, sizeof set);
        for (unsigned k = 0; k < grain; k++) set.bits[(g * grain + k) >> 6] |= 1ull << ((g * grain + k) & 63);
        res_set(&res[g], &set, grain);
    }
    *n = groups;
    return CUDA_SUCCESS;
}
static CUresult f_gendesc(CUdevResourceDesc *d, CUdevResource *r, unsigned n)
{
    tidal_smset set;
    unsigned grain = 0;
    memset(&set, 0, sizeof set);
    for (unsigned i = 0; i < n; i++) {
        tidal_smset one;
        unsigned g;
        memcpy(&one, r[i]._internal_padding, sizeof one);
        memcpy(&g, r[i]._internal_padding + sizeof one, sizeof g);
        if (grain && g != grain)
            return fake_fail("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
        grain = g;
        for (int w = 0; w < TIDAL_SMSET_WORDS; w++) set.bits[w] |= one.bits[w];
    }
    fake_green_obj *o = fake_green_new(&set, grain);
    if (!o) return fake_fail("cuDevResourceGenerateDesc", CUDA_ERROR_OUT_OF_MEMORY);
    *d = (CUdevResourceDesc)o;
    return CUDA_SUCCESS;
}
static CUresult f_greencreate(CUgreenCtx *g, CUdevResourceDesc d, CUdevice dev, unsigned fl)
{
    (void)dev;
    (void)fl;
    const fake_green_obj *o = (const fake_green_obj *)d;
    fake_green_obj *c = fake_green_new(&o->set, o->grain);
    if (!c) return fake_fail("cuGreenCtxCreate", CUDA_ERROR_OUT_OF_MEMORY);
    fake_green_ctxs++;
    *g = (CUgreenCtx)c;
    return CUDA_SUCCESS;
}
static CUresult f_greendestroy(CUgreenCtx g)
{
    (void)g;
    fake_green_ctxs--;
    return CUDA_SUCCESS;
}
static CUresult f_greenstream(CUstream *s, CUgreenCtx g, unsigned fl, int prio)
{
    (void)fl;
    const fake_green_obj *c = (const fake_green_obj *)g;
    fake_green_obj *o = fake_green_new(&c->set, c->grain);
    if (!o) return fake_fail("cuGreenCtxStreamCreate", CUDA_ERROR_OUT_OF_MEMORY);
    o->priority = prio;
    fake_green_streams++;
    *s = (CUstream)o;
    return CUDA_SUCCESS;
}
static CUresult f_sdestroy_green(CUstream s)
{
    if (fake_green_stream(s)) fake_green_streams--;
    return CUDA_SUCCESS;
}
static CUresult f_screate_prio(CUstream *s, unsigned fl, int prio)
{
    (void)prio;
    return f_screate(s, fl);
}
static CUresult f_modload_green(CUmodule *m, const void *image)
{
    if (!strstr(image, ".entry tidal_smid_probe(")) return fake_fail("cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE);
    *m = (CUmodule)&msmid;
    return CUDA_SUCCESS;
}
static void fake_green_run(CUfunction f, CUstream s, void **params)
{
    fake_order_add('l', s, NULL);
    const fake_green_obj *o = fake_green_stream(s);
    if (f != (CUfunction)&fsmid || !o) return;
    uint32_t *out = (uint32_t *)*(CUdeviceptr *)params[0];
    for (unsigned i = 0; i < NSM; i++)
        if ((o->set.bits[i >> 6] >> (i & 63)) & 1) out[i >> 5] |= 1u << (i & 31);
}
static CUresult f_evrecord_green(CUevent e, CUstream s)
{
    fake_order_add('r', e, s);
    return CUDA_SUCCESS;
}
static CUresult f_waitevent(CUstream s, CUevent e, unsigned fl)
{
    (void)fl;
    fake_order_add('w', s, e);
    return CUDA_SUCCESS;
}
static unsigned fake_cluster_of(const CUlaunchConfig *c)
{
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            return c->attrs[i].value.clusterDim.x * c->attrs[i].value.clusterDim.y * c->attrs[i].value.clusterDim.z;
    return 1;
}
static CUresult f_launchex_green(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    CUresult r = f_launchex(c, f, params, extra);
    fake_order_add('l', c->hStream, NULL);
    const fake_green_obj *o = fake_green_stream(c->hStream);
    fake_fn *ff = (fake_fn *)f;
    if (ff->kernel_of) ff = ff->kernel_of;
    unsigned cl = fake_cluster_of(c);
    if (cl < (unsigned)ff->cluster) cl = (unsigned)ff->cluster;
    if (r == CUDA_SUCCESS && o && cl > o->grain) r = CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return r;
}
static CUresult f_launch_green(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
    CUresult r = f_launch(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    const fake_green_obj *o = fake_green_stream(s);
    fake_fn *ff = (fake_fn *)f;
    if (ff->kernel_of) ff = ff->kernel_of;
    if (r == CUDA_SUCCESS && o && (unsigned)ff->cluster > o->grain) r = CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return r;
}

/* The green-context API in the table (on), or none of it. */
static void fake_green_table(int on)
{
    fake.DeviceGetDevResource = on ? f_devres : NULL;
    fake.DevSmResourceSplitByCount = on ? f_split : NULL;
    fake.DevResourceGenerateDesc = on ? f_gendesc : NULL;
    fake.GreenCtxCreate = on ? f_greencreate : NULL;
    fake.GreenCtxDestroy = on ? f_greendestroy : NULL;
    fake.GreenCtxStreamCreate = on ? f_greenstream : NULL;
    fake.StreamCreateWithPriority = on ? f_screate_prio : NULL;
    fake.StreamWaitEvent = on ? f_waitevent : NULL;
    fake.StreamDestroy = on ? f_sdestroy_green : f_sdestroy;
    fake.EventRecord = on ? f_evrecord_green : f_evrecord;
    fake.LaunchKernel = on ? f_launch_green : f_launch;
    fake.LaunchKernelEx = on ? f_launchex_green : f_launchex;
    if (on) fake.ModuleLoadData = f_modload_green;
    if (on) fake.ModuleUnload = f_modunload;
    fake_run_on = on ? fake_green_run : NULL;
    fake_green_nobjs = fake_green_ctxs = fake_green_streams = 0;
    fake_norder = 0;
}

static inline void fake_green_on(void) { fake_green_table(1); }

static void fake_reset(void)
{
    fk.mod = fkc.mod = fr.mod = &mrw;
    fu.mod = &mplain;
    mrw.ctl = 0;
    mrw.case_b = 1;
    fk.max_dyn_smem = fkc.max_dyn_smem = 0;
    fk.static_smem = fkc.static_smem = 0;
    fake_setattr_failed = 0;
    fake_occ_smem = 0;
    alloc_fail = 0;
    fake_running = 1;
    fake_capturing = 0;
    fake_capture_strict = fake_capture_violations = 0;
    fake_thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    fake_capture_id = 1;
    fake_memsets = 0;
    mrw.no_nparams = 0;
    kk.kernel_of = &fk;
    kr.kernel_of = &fr;
    ku.kernel_of = &fu;
    fake_errors = 0;
    fake_error_log[0] = '\0';
    fake_ms = 0.005f;
    fake_waits = 0;
    fake_wait_addr = 0;
    fake_wait_value = 0;
    fake_wait_flags = ~0u;
    memset(&last, 0, sizeof last);
    /* the L2 off again: no VMM API, no cuModuleLoadData, no kernels run */
    fake_l2_table(0);
    fake_green_table(0);
    fake_granularity = (size_t)2 << 20;
    fake_vmm_handles = fake_vmm_mapped = 0;
    fl2side.mod = &ml2side;
    fl2mem.mod = &ml2mem;
    fl2side.max_dyn_smem = fl2mem.max_dyn_smem = 0;
}

/* A test with libtidal initialized on the fake (cmocka setup / teardown). */
static inline int fake_setup(void **state)
{
    (void)state;
    fake_reset();
    unsetenv("TIDAL_PARTITION");
    setenv("TIDAL_NO_DAEMON", "1", 1);
    tidal__set_driver(&fake);
    return tidal_init(0) == TIDAL_OK ? 0 : -1;
}

static inline int fake_teardown(void **state)
{
    (void)state;
    tidal_shutdown();
    tidal__set_driver(NULL);
    return 0;
}

#endif
