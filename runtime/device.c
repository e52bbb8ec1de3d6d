/* device.c — libtidal's device: which driver table is used (a unit test's, or libcuda
 * dlopen'ed through cu.c), the context and the device it runs on, libtidal's own streams
 * (control: mask writes; join: flow-in's joiners) and pinned staging, the one lock, and
 * how libtidal's own driver calls run (its context current, capture mode relaxed).
 * init.c drives the steps; every other module reads the state through device.h. */
#define _GNU_SOURCE
#include <string.h>

#include "device.h"
#include "tidal_abi.h"

tidal__device tidal__dev = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const tidal_cu *installed_cu;
static void *(*driver_dlsym)(void *, const char *); /* NULL: dlsym */

void tidal__set_driver(const tidal_cu *cu) { installed_cu = cu; }
void tidal__set_driver_dlsym(void *(*real_dlsym)(void *, const char *)) { driver_dlsym = real_dlsym; }

int tidal__cuda_fail(CUresult r, const char *what)
{
    char b[32];
    return tidal__fail(TIDAL_ERR_CUDA, "%s: %s", what, tidal__cu_errname(tidal__dev.cu, r, b, sizeof b));
}

/* ------------------------------------------------------------------ libtidal's own calls */

CUstreamCaptureMode tidal__capture_relax(void)
{
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    const tidal_cu *cu = tidal__dev.cu;
    if (cu && cu->ThreadExchangeStreamCaptureMode) cu->ThreadExchangeStreamCaptureMode(&m);
    return m;
}

void tidal__capture_restore(CUstreamCaptureMode m)
{
    const tidal_cu *cu = tidal__dev.cu;
    if (cu && cu->ThreadExchangeStreamCaptureMode) cu->ThreadExchangeStreamCaptureMode(&m);
}

/* Driver calls need libtidal's context current on the calling thread; put back whatever
 * the thread had. They also run in relaxed capture mode: a synchronize or query of
 * libtidal's own must not invalidate a graph another stream is capturing. */
tidal__call tidal__ctx_enter(void)
{
    tidal__call c = {NULL, CU_STREAM_CAPTURE_MODE_RELAXED};
    if (!tidal__dev.initialized) return c;
    tidal__dev.cu->CtxGetCurrent(&c.ctx);
    if (c.ctx != tidal__dev.ctx) tidal__dev.cu->CtxSetCurrent(tidal__dev.ctx);
    c.mode = tidal__capture_relax();
    return c;
}

void tidal__ctx_leave(tidal__call c)
{
    if (!tidal__dev.initialized) return;
    tidal__capture_restore(c.mode);
    if (c.ctx != tidal__dev.ctx) tidal__dev.cu->CtxSetCurrent(c.ctx);
}

/* The watcher thread keeps the context current, and has touched the control stream,
 * before the first change: a thread's first driver calls cost ~100 us on the GPU
 * machine, which every tenant paid on its first tidald change (docs/performance.md). */
int tidal__device_adopt(void)
{
    tidal__lock();
    int done = tidal__dev.initialized && tidal__dev.ctx;
    if (done && tidal__dev.cu->CtxSetCurrent(tidal__dev.ctx) == CUDA_SUCCESS)
        tidal__dev.cu->StreamSynchronize(tidal__dev.ctl_stream);
    tidal__unlock();
    return done;
}

/* ------------------------------------------------------------------ init's steps */

int tidal__device_load(void)
{
    if (installed_cu) {
        tidal__dev.cu = installed_cu;
        return TIDAL_OK;
    }
    char err[256];
    if (tidal__cu_load(NULL, driver_dlsym, &tidal__dev.table, NULL, err, sizeof err) != 0)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "%s", err);
    tidal__dev.cu = &tidal__dev.table;
    return TIDAL_OK;
}

int tidal__device_attach(void)
{
    const tidal_cu *cu = tidal__dev.cu;
    CU_TRY(cu->Init(0), "cuInit");
    CUcontext ctx = NULL;
    CU_TRY(cu->CtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (!ctx) {
        CUdevice d;
        CU_TRY(cu->DeviceGet(&d, 0), "cuDeviceGet(0)");
        CU_TRY(cu->DevicePrimaryCtxRetain(&ctx, d), "cuDevicePrimaryCtxRetain");
        CU_TRY(cu->CtxSetCurrent(ctx), "cuCtxSetCurrent");
    }
    tidal__dev.ctx = ctx;
    CU_TRY(cu->CtxGetDevice(&tidal__dev.dev), "cuCtxGetDevice");
    int v = 0;
    CU_TRY(cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, tidal__dev.dev),
           "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    if (v <= 0 || v > TIDAL_MAX_SMS)
        return tidal__fail(TIDAL_ERR_SMS, "device has %d SMs; libtidal handles 1-%d", v, TIDAL_MAX_SMS);
    tidal__dev.nsm = (unsigned)v;
    v = 0;
    if (cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, tidal__dev.dev) == CUDA_SUCCESS)
        tidal__dev.is_mps = v != 0;
    return TIDAL_OK;
}

int tidal__device_open(void)
{
    const tidal_cu *cu = tidal__dev.cu;
    CU_TRY(cu->StreamCreate(&tidal__dev.ctl_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate(control stream)");
    CU_TRY(cu->StreamCreate(&tidal__dev.join_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate(join stream)");
    CU_TRY(cu->MemAllocHost((void **)&tidal__dev.pinned, 4096), "cuMemAllocHost(staging)");
    return TIDAL_OK;
}

int tidal__ctl_write(CUdeviceptr dst, const void *src, size_t n, const char *what)
{
    const tidal_cu *cu = tidal__dev.cu;
    if (n > 4096) return tidal__fail(TIDAL_ERR_INVALID, "%s: %zu bytes through the 4 KiB staging", what, n);
    memcpy(tidal__dev.pinned, src, n);
    CU_TRY(cu->MemcpyHtoDAsync(dst, tidal__dev.pinned, n, tidal__dev.ctl_stream), what);
    CU_TRY(cu->StreamSynchronize(tidal__dev.ctl_stream), "cuStreamSynchronize(control stream)");
    return TIDAL_OK;
}

void tidal__device_mark_ready(void) { tidal__dev.initialized = 1; }

void tidal__device_close(void)
{
    const tidal_cu *cu = tidal__dev.cu;
    if (tidal__dev.pinned) cu->MemFreeHost(tidal__dev.pinned);
    if (tidal__dev.ctl_stream) cu->StreamDestroy(tidal__dev.ctl_stream);
    if (tidal__dev.join_stream) cu->StreamDestroy(tidal__dev.join_stream);
}

void tidal__device_reset(void)
{
    pthread_mutex_t lock = tidal__dev.lock;
    memset(&tidal__dev, 0, sizeof tidal__dev);
    tidal__dev.lock = lock;
}

int tidal_device_sms(unsigned *out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_device_sms: NULL");
    if (!tidal__dev.initialized) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_device_sms before tidal_init");
    *out = tidal__dev.nsm;
    return TIDAL_OK;
}
