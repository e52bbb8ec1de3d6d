/* preload.c — libtidal-preload.so: run any CUDA program's rewritten kernels through
 * libtidal without rebuilding it:  TIDAL_PARTITION=be LD_PRELOAD=libtidal-preload.so prog
 *
 * Programs reach the driver three ways, and each is covered:
 *  - linked against libcuda: the cuLaunchKernel* symbols below come first;
 *  - through cuGetProcAddress (the CUDA runtime, PyTorch): the hook hands out ours for
 *    the launch entry points, and for cuLibraryGetKernel / cuLibraryEnumerateKernels,
 *    whose hooks note every CUkernel made (launch.c tells handle kinds by them);
 *  - through dlopen("libcuda.so.1") + dlsym (the CUDA runtime finding cuGetProcAddress,
 *    Triton's launcher finding cuLaunchKernelEx): dlsym is interposed for those names.
 * Everything else goes to the real driver untouched. The real entry points come from
 * libcuda's own handle with the real dlsym, so no hook ever calls itself.
 * Limitation: dlsym(RTLD_NEXT, ...) is resolved relative to this library, not the caller. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* The entry points a program reaches instead of the driver's: the library's only exports
 * besides tidal.h (built with -fvisibility=hidden). */
#define TIDAL_EXPORT __attribute__((visibility("default")))

#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuLibraryGetKernel
#undef cuLibraryEnumerateKernels

static tidal_cu real;
static CUresult (*real_gpa_v1)(const char *, void **, int, cuuint64_t);
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static int real_ok;

/* The real dlsym (this library interposes it): for the hook below, for the driver table
 * of the hooks, and registered with libtidal for the one tidal_init loads. */
static void *(*real_dlsym)(void *, const char *);

static void find_real_dlsym(void)
{
    if (real_dlsym) return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    real_dlsym = (void *(*)(void *, const char *))p;
    tidal__set_driver_dlsym(real_dlsym);
}

__attribute__((constructor)) static void preload_init(void)
{
    find_real_dlsym();
    /* A lazily loaded module's first launch waits for the kernels already running
     * (../shared/docs/platform.md): load modules eagerly unless the user chose otherwise. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

static void load_real(void)
{
    find_real_dlsym();
    char err[256];
    void *h = NULL;
    if (tidal__cu_load(NULL, real_dlsym, &real, &h, err, sizeof err) != 0) {
        tidal__warn("libtidal-preload: %s", err);
        return;
    }
    real_gpa_v1 = (CUresult(*)(const char *, void **, int, cuuint64_t))real_dlsym(h, "cuGetProcAddress");
    real_ok = 1;
}

static int have_real(void)
{
    pthread_once(&real_once, load_real);
    return real_ok;
}

/* ------------------------------------------------------------------ launch hooks */

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, CUstream s, void **params, void **extra, int ptsz)
{
    if (!have_real()) return CUDA_ERROR_NOT_INITIALIZED;
    tidal_launch_req q = {.f = f,
                          .grid = {gx, gy, gz},
                          .block = {bx, by, bz},
                          .smem = smem,
                          .stream = s,
                          .params = params,
                          .extra = extra,
                          .ptsz = ptsz};
    int handled;
    CUresult r = tidal__launch_or_decline(&q, &handled);
    if (handled) return r;
    if (ptsz && real.LaunchKernel_ptsz)
        r = real.LaunchKernel_ptsz(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    else
        r = real.LaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    if (r != CUDA_SUCCESS) tidal__launch_explain(&q, r);
    return r;
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra, int ptsz)
{
    if (!have_real()) return CUDA_ERROR_NOT_INITIALIZED;
    if (!c) return real.LaunchKernelEx(c, f, params, extra);
    tidal_launch_req q = {.f = f,
                          .grid = {c->gridDimX, c->gridDimY, c->gridDimZ},
                          .block = {c->blockDimX, c->blockDimY, c->blockDimZ},
                          .smem = c->sharedMemBytes,
                          .stream = c->hStream,
                          .params = params,
                          .extra = extra,
                          .ex = c,
                          .ptsz = ptsz};
    int handled;
    CUresult r = tidal__launch_or_decline(&q, &handled);
    if (handled) return r;
    r = ptsz && real.LaunchKernelEx_ptsz ? real.LaunchKernelEx_ptsz(c, f, params, extra)
                                         : real.LaunchKernelEx(c, f, params, extra);
    if (r != CUDA_SUCCESS) tidal__launch_explain(&q, r);
    return r;
}

TIDAL_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 0);
}

TIDAL_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                          unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 1);
}

TIDAL_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    return launch_ex(c, f, params, extra, 0);
}

TIDAL_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    return launch_ex(c, f, params, extra, 1);
}

/* ------------------------------------------------------------------ CUkernel hooks */

/* The launch hooks receive CUkernel handles cast to CUfunction too (CUDA 13's cudart
 * launches <<<>>> kernels so). Noting each CUkernel where it is made lets libtidal tell
 * the two kinds apart without a failing driver call (launch.c). */
TIDAL_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    if (!have_real() || !real.LibraryGetKernel) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real.LibraryGetKernel(k, lib, name);
    if (r == CUDA_SUCCESS && k) tidal__note_kernels(k, 1);
    return r;
}

TIDAL_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *ks, unsigned n, CUlibrary lib)
{
    if (!have_real() || !real.LibraryEnumerateKernels) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real.LibraryEnumerateKernels(ks, n, lib);
    if (r == CUDA_SUCCESS && ks) tidal__note_kernels(ks, n);
    return r;
}

/* ------------------------------------------------------------------ lookup hooks */

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags);

/* Which of our hooks stands for the real entry point *pfn that the driver returned for
 * symbol (the per-thread variant when the driver chose _ptsz). */
static void substitute(const char *symbol, void **pfn)
{
    if (!symbol || !pfn || !*pfn) return;
    if (strcmp(symbol, "cuLaunchKernel") == 0)
        *pfn = *pfn == (void *)real.LaunchKernel_ptsz ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
    else if (strcmp(symbol, "cuLaunchKernelEx") == 0)
        *pfn = *pfn == (void *)real.LaunchKernelEx_ptsz ? (void *)cuLaunchKernelEx_ptsz : (void *)cuLaunchKernelEx;
    else if (strcmp(symbol, "cuGetProcAddress") == 0)
        *pfn = *pfn == (void *)real_gpa_v1 ? (void *)cuGetProcAddress : (void *)cuGetProcAddress_v2;
    else if (strcmp(symbol, "cuLibraryGetKernel") == 0 && real.LibraryGetKernel)
        *pfn = (void *)cuLibraryGetKernel;
    else if (strcmp(symbol, "cuLibraryEnumerateKernels") == 0 && real.LibraryEnumerateKernels)
        *pfn = (void *)cuLibraryEnumerateKernels;
}

TIDAL_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *status)
{
    if (!have_real() || !real.GetProcAddress) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real.GetProcAddress(symbol, pfn, ver, flags, status);
    if (r == CUDA_SUCCESS) substitute(symbol, pfn);
    return r;
}

TIDAL_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
    if (!have_real() || !real_gpa_v1) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real_gpa_v1(symbol, pfn, ver, flags);
    if (r == CUDA_SUCCESS) substitute(symbol, pfn);
    return r;
}

static void *hook_for(const char *name)
{
    static const struct {
        const char *name;
        void *hook;
    } hooks[] = {
        {"cuLaunchKernel", (void *)cuLaunchKernel},
        {"cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz},
        {"cuLaunchKernelEx", (void *)cuLaunchKernelEx},
        {"cuLaunchKernelEx_ptsz", (void *)cuLaunchKernelEx_ptsz},
        {"cuGetProcAddress", (void *)cuGetProcAddress},
        {"cuGetProcAddress_v2", (void *)cuGetProcAddress_v2},
        {"cuLibraryGetKernel", (void *)cuLibraryGetKernel},
        {"cuLibraryEnumerateKernels", (void *)cuLibraryEnumerateKernels},
    };
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
        if (strcmp(name, hooks[i].name) == 0) return hooks[i].hook;
    return NULL;
}

TIDAL_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
{
    find_real_dlsym();
    void *r = real_dlsym(handle, name);
    if (r && name[0] == 'c' && name[1] == 'u') {
        void *h = hook_for(name);
        if (h && have_real()) return h;
    }
    return r;
}
